/* Helpers shared by the simulator's C tests: a minimal one-core
 * configuration, adding tasks, and creating + running a simulation. */
#ifndef SIM_TEST_UTIL_H
#define SIM_TEST_UTIL_H

#include <stdbool.h>
#include <string.h>

#include "rts_test.h"
#include "rtsim/rtsim.h"

#define MS 1000000LL
#define US 1000LL

/* One core, one bin, a 16-packet RX queue, 1 us ISR entry/exit and driver. */
static inline rtsim_config base(uint64_t duration_ns)
{
    rtsim_config c;
    memset(&c, 0, sizeof c);
    c.duration_ns = duration_ns;
    c.bin_ns = duration_ns;
    c.seed = 1;
    c.n_cores = 1;
    c.queue_capacity = 16;
    c.costs.driver_per_packet_ns = 1 * US;
    c.costs.isr_entry_exit_ns = 1 * US;
    return c;
}

/* A Zynq-like device with Behnke et al.'s receive path: a DMA ring of 16
 * posted buffers out of a pool of 32, ISR costs per execution path (the
 * zynq7000-freertos-tcp preset's numbers: 0.5 us entry/exit, 1.12 us per
 * frame, 1.5 us with a priority raise, 1.25 us with recycling; 2.78 us of
 * deferred invalidation and 7.9 us of protocol processing per packet). */
static inline rtsim_config rx_base(uint64_t duration_ns)
{
    rtsim_config c = base(duration_ns);
    c.nic_kind = RTSIM_NIC_DMA_RING;
    c.ring = 16;
    c.rx.enabled = 1;
    c.rx.nbufs = 32;
    c.rx.recycle_threshold = 0xFFFFFFFFu;
    c.rx.short_circuit = 1;
    c.costs.isr_entry_exit_ns = 500;
    for (int p = 0; p < RTSIM_PATH_COUNT; p++)
        c.costs.path_ns[p] = 1120;
    c.costs.path_ns[RTSIM_PATH_PRIO_RAISE] = 1500;
    c.costs.path_ns[RTSIM_PATH_RECYCLE] = 1250;
    c.costs.invalidate_deferred_ns = 2780;
    c.costs.driver_per_packet_ns = 7900;
    return c;
}

/* Append a task; returns its index. */
static inline int add_task(rtsim_config *c, uint32_t kind, uint32_t prio, int64_t period,
                           int64_t work)
{
    rtsim_task_cfg *t = &c->tasks[c->n_tasks];
    t->kind = kind;
    t->priority = prio;
    t->period_ns = period;
    t->work_ns = work;
    return (int)c->n_tasks++;
}

static inline int add_periodic(rtsim_config *c, uint32_t prio, int64_t period, int64_t work)
{
    return add_task(c, RTSIM_TASK_PERIODIC, prio, period, work);
}

/* Append the critical task: a periodic task whose cycles the measurements
 * and the mitigations watch; returns its index. */
static inline int add_critical(rtsim_config *c, uint32_t prio, int64_t period, int64_t work)
{
    int t = add_periodic(c, prio, period, work);
    c->tasks[t].critical = 1;
    return t;
}

static inline int add_driver(rtsim_config *c, uint32_t prio)
{
    return add_task(c, RTSIM_TASK_DRIVER, prio, 0, 0);
}

/* Append a worker task of `prio` that takes flow `flow`'s packets from a mailbox
 * of `mailbox` and works `work` ns on each; returns its index. */
static inline int add_worker(rtsim_config *c, uint32_t prio, uint32_t flow, uint32_t mailbox,
                             int64_t work)
{
    int w = add_task(c, RTSIM_TASK_WORKER, prio, 0, work);
    c->tasks[w].flow = flow;
    c->tasks[w].mailbox = mailbox;
    return w;
}

/* Append a flow of `pattern` at `rate_pps` (constant, poisson); returns its index. */
static inline int add_flow(rtsim_config *c, uint32_t pattern, double rate_pps)
{
    rtsim_flow_cfg *f = &c->flows[c->n_flows];
    f->pattern = pattern;
    f->rate_pps = rate_pps;
    return (int)c->n_flows++;
}

/* A flow of `r0` pkt/s until `change_ns`, then of `r1` (piecewise, evenly
 * spaced arrivals). */
static inline rtsim_flow_cfg two_rate_flow(double r0, int64_t change_ns, double r1)
{
    rtsim_flow_cfg f;
    memset(&f, 0, sizeof f);
    f.pattern = RTSIM_PAT_PIECEWISE;
    f.n_rates = 2;
    f.rates_pps[0] = r0;
    f.rates_pps[1] = r1;
    f.rate_t_ns[1] = change_ns;
    return f;
}

/* Append two_rate_flow(r0, change_ns, r1); returns its index. */
static inline int add_two_rate_flow(rtsim_config *c, double r0, int64_t change_ns, double r1)
{
    c->flows[c->n_flows] = two_rate_flow(r0, change_ns, r1);
    return (int)c->n_flows++;
}

/* What differs between the devices of flood_device(), written with designated
 * initialisers at each call; a field left out is 0. */
typedef struct {
    uint64_t duration_ns;
    int64_t tick_ns; /* 0: no tick */
    uint32_t queue_capacity;
    rtsim_costs costs; /* all of them: base()'s 1 us defaults do not apply */
    struct {
        uint32_t priority;
        int64_t period_ns, work_ns;
    } critical;
    uint32_t driver_priority;
    double pps;
} flood_spec;

/* A device under one constant flood: base(f->duration_ns) with f's tick, RX
 * queue and costs, the critical task, the driver, and one constant flow of
 * f->pps. */
static inline rtsim_config flood_device(const flood_spec *f)
{
    rtsim_config c = base(f->duration_ns);
    c.tick_ns = f->tick_ns;
    c.queue_capacity = f->queue_capacity;
    c.costs = f->costs;
    add_critical(&c, f->critical.priority, f->critical.period_ns, f->critical.work_ns);
    add_driver(&c, f->driver_priority);
    add_flow(&c, RTSIM_PAT_CONSTANT, f->pps);
    return c;
}

/* The configuration check refuses `c` with a message that names `key`. */
static inline bool refused_naming(const rtsim_config *c, const char *key)
{
    const char *e = rtsim_config_error(c);
    return e != NULL && strstr(e, key) != NULL;
}

/* With `lvalue` (a field of configuration `c`) set to `bad`, the configuration
 * check refuses `c` naming `key`; the field gets its old value back. */
#define CHECK_REFUSED_AT(c, lvalue, bad, key)                                                      \
    do {                                                                                           \
        const __typeof__(lvalue) old_ = (lvalue);                                                  \
        (lvalue) = (bad);                                                                          \
        CHECK(refused_naming(&(c), key));                                                          \
        (lvalue) = old_;                                                                           \
    } while (0)

/* A negative `field` of the costs (c.costs.field = -1) on a device with a driver
 * is refused by the configuration check (rtsim_config_error returns a message). */
#define CHECK_NEGATIVE_COST_REFUSED(field)                                                         \
    do {                                                                                           \
        rtsim_config nc_ = base(10 * MS);                                                          \
        add_driver(&nc_, 1);                                                                       \
        nc_.costs.field = -1;                                                                      \
        CHECK(rtsim_config_error(&nc_) != NULL);                                                   \
    } while (0)

/* Append a flow of 60-byte UDP frames to `port` (`pattern` and `rate_pps` as for
 * add_flow); returns its index. */
static inline int add_udp_flow(rtsim_config *c, uint32_t pattern, double rate_pps, uint32_t port)
{
    int i = add_flow(c, pattern, rate_pps);
    c->flows[i].proto = RTSIM_PROTO_UDP;
    c->flows[i].dst_port = port;
    c->flows[i].size = 60;
    return i;
}

/* Create the simulation; a configuration error ends the test program. */
static inline rtsim *make(const rtsim_config *c)
{
    rtsim *s = rtsim_create(c);
    if (s == NULL) {
        fprintf(stderr, "config: %s\n", rtsim_config_error(c));
        exit(1);
    }
    return s;
}

/* Create the simulation and run it to its end. */
static inline void run(rtsim_config *c, rtsim **out)
{
    *out = make(c);
    CHECK_EQ(rtsim_run_until(*out, c->duration_ns), 0);
}

/* Create the simulation, run it to its end and return its totals. The simulation
 * is kept in *out (the caller reads more of it, then destroys it), or destroyed
 * when out is NULL. */
static inline rtsim_bin run_totals(rtsim_config *c, rtsim **out)
{
    rtsim *s;
    run(c, &s);
    rtsim_bin t;
    rtsim_totals(s, &t);
    if (out != NULL)
        *out = s;
    else
        rtsim_destroy(s);
    return t;
}

/* The statistics of flow `i` (which must exist). */
static inline rtsim_flow_stats flow_stats(const rtsim *s, uint32_t i)
{
    rtsim_flow_stats fs;
    memset(&fs, 0, sizeof fs);
    CHECK_EQ(rtsim_flow_stats_get(s, i, &fs), 0);
    return fs;
}

/* The statistics of task `i` (which must exist). */
static inline rtsim_task_stats task_stats(const rtsim *s, uint32_t i)
{
    rtsim_task_stats ts;
    memset(&ts, 0, sizeof ts);
    CHECK_EQ(rtsim_task_stats_get(s, i, &ts), 0);
    return ts;
}

/* The mitigation's statistics. */
static inline rtsim_mitigation_stats mitigation_stats(const rtsim *s)
{
    rtsim_mitigation_stats ms;
    memset(&ms, 0, sizeof ms);
    rtsim_mitigation_stats_get(s, &ms);
    return ms;
}

/* Run `c` to its end and destroy the simulation: its totals, and the mitigation's
 * statistics in *m. */
static inline rtsim_bin run_mitigation(rtsim_config *c, rtsim_mitigation_stats *m)
{
    rtsim *s;
    rtsim_bin t = run_totals(c, &s);
    *m = mitigation_stats(s);
    rtsim_destroy(s);
    return t;
}

/* The receive path's statistics. */
static inline rtsim_rx_stats rx_stats(const rtsim *s)
{
    rtsim_rx_stats rs;
    rtsim_rx_stats_get(s, &rs);
    return rs;
}

#endif
