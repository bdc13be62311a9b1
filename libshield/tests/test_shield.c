/* rts_shield: the one driver entry point. Configuration and init errors;
 * every interrupt-level protection through the hooks, alone and combined
 * (the RX line is re-enabled only when its last holder releases it); the
 * receive path with hand-built Ethernet/IPv4/UDP frames (queueing,
 * inheritance, short circuit, flow server, queue full, global limit and
 * polling, task side, short circuit off, and the recycling rule after a
 * run-time priority change); countdown filter; detection; performing the
 * decisions through a recording port. */
#include <string.h>

#include "rts_port_posix.h"
#include "rts_test.h"
#include "rtshield/rts_shield.h"

static rts_shield sh;

/* ------------------------------------------------------------ helpers */

typedef struct {
    uint8_t source;
    uint8_t timer;
    uint32_t flags;
    rts_time_ns at;
} op_exp;

static void check_ops(const rts_shield_dec *d, unsigned n, const op_exp *ops)
{
    CHECK_EQ(d->n_ops, n);
    for (unsigned i = 0; i < n && i < d->n_ops; i++) {
        CHECK_EQ(d->ops[i].source, ops[i].source);
        CHECK_EQ(d->ops[i].timer, ops[i].timer);
        CHECK_EQ(d->ops[i].act.flags, ops[i].flags);
        CHECK_EQ(d->ops[i].act.timer_at, ops[i].at);
    }
}

enum { DIS = RTS_ACT_DISABLE_LINE, EN = RTS_ACT_ENABLE_LINE, ARM = RTS_ACT_ARM_TIMER };
enum { T_MIT = RTS_SHIELD_TIMER_MIT, T_POLL = RTS_SHIELD_TIMER_POLL, T_S0 = RTS_SHIELD_TIMER_STRICT0 };

/* A configuration with valid parameters for every protection in `prot`. */
static rts_shield_cfg valid_cfg(uint32_t prot)
{
    rts_shield_cfg c;
    rts_shield_cfg_default(&c);
    c.protections = prot;
    c.burst.slice_ns = 1000;
    c.burst.capacity = 2;
    c.hyst.block_below_ns = 100;
    c.hyst.unblock_above_ns = 500;
    c.hyst.sleep_ns = 50;
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) {
        c.strict_t_min[k] = 100u * (k + 1u);
        c.bursty_burst[k] = 1;
    }
    c.bursty_period = 1000;
    c.countdown_tick_ns = 10;
    c.countdown_initial = 10;
    c.nbufs = 16;
    c.ring_size = 8;
    c.task_base_prio = 1;
    return c;
}

/* ------------------------------------------------ configuration, init */

static void test_cfg_defaults(void)
{
    rts_shield_cfg c;
    memset(&c, 0xA5, sizeof c);
    rts_shield_cfg_default(&c);
    CHECK_EQ(c.protections, 0);
    CHECK_EQ(c.n_sources, 1);
    CHECK_EQ(c.burst.slice_ns, RTS_BURST_MIT_SLICE_NS_DEFAULT);
    CHECK_EQ(c.burst.capacity, RTS_BURST_MIT_CAPACITY_DEFAULT);
    CHECK_EQ(c.burst.aligned, RTS_BURST_MIT_ALIGNED_DEFAULT);
    CHECK_EQ(c.budget.initial_budget_ns, 0);
    CHECK_EQ(c.budget.charge_isr, RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT);
    CHECK_EQ(c.budget.carry_overdraft, RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT);
    CHECK(c.hyst.sleep_ns > 0);
    CHECK(c.hyst.block_below_ns <= c.hyst.unblock_above_ns);
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) {
        CHECK_EQ(c.strict_t_min[k], 0);
        CHECK_EQ(c.bursty_burst[k], 0);
    }
    CHECK_EQ(c.bursty_mode, RTS_BURSTY_TIMER_PERIODIC);
    CHECK_EQ(c.countdown_tick_ns, 1);
    CHECK_EQ(c.recycle_threshold, RTS_SHIELD_THRESHOLD_DEFAULT);
    CHECK_EQ(c.short_circuit, 1);
    CHECK_EQ(c.global_capacity, 0);
    CHECK_EQ(c.detect_slice_ns, 0);
    CHECK_EQ(c.detect_fill_high, 0);

    ROW("the defaults initialise a shield that protects nothing");
    rts_shield_dec d;
    CHECK_EQ(rts_shield_init(&sh, &c, 0, &d), RTS_OK);
    CHECK_EQ(d.flags, 0);
    CHECK_EQ(d.n_ops, 0);
    CHECK_EQ(rts_shield_hooks(&sh), 0);
    CHECK_EQ(rts_shield_task_prio(&sh), 0);
    CHECK_EQ(rts_shield_waiting(&sh), 0);
    CHECK(rts_shield_rx_irq_isr(&sh, 0, 10, &d));
    CHECK_EQ(d.n_ops, 0);
    CHECK(rts_shield_rx_packet_isr(&sh, 10, &d));
    CHECK_EQ(d.flags, 0);
    rts_time_ns sleep = 99;
    CHECK(rts_shield_task_poll(&sh, 10, &sleep, &d));
    CHECK_EQ(sleep, 0);
    ROW("receive-path hooks refuse when the receive path is off");
    uint8_t fr[64] = {0};
    rts_shield_rx rx;
    CHECK_EQ(rts_shield_rx_frame_isr(&sh, 0, fr, sizeof fr, 0, 0, 10, 10, &rx, &d), RTS_EINVAL);
    rts_rx_job job;
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_EINVAL);
    CHECK_EQ(rts_shield_poll_begin(&sh, 10), 0);
    rts_shield_poll_end(&sh, 10, &d);
    CHECK_EQ(d.n_ops, 0);
    const rts_shield_flow f = {RTS_PROTO_UDP, 502, 0, 3, 0, 0, 0};
    uint8_t id;
    CHECK_EQ(rts_shield_bind(&sh, &f, 0, &id), RTS_EINVAL);
    uint16_t refill = 0;
    CHECK_EQ(rts_shield_task_done(&sh, NULL, 10, 5, 0, &refill, &d), RTS_OK);
    CHECK_EQ(refill, RTS_BUF_NONE);
}

/* The configuration changes of the init-error table, each applied to
 * valid_cfg(): one function a change. */
typedef void cfg_tweak(rts_shield_cfg *c);
static void sources_0(rts_shield_cfg *c) { c->n_sources = 0; }
static void sources_max(rts_shield_cfg *c) { c->n_sources = RTS_SHIELD_MAX_SOURCES; }
static void sources_over(rts_shield_cfg *c) { c->n_sources = RTS_SHIELD_MAX_SOURCES + 1u; }
static void sources_2(rts_shield_cfg *c) { c->n_sources = 2; }
static void burst_cap_0(rts_shield_cfg *c) { c->burst.capacity = 0; }
static void hyst_inverted(rts_shield_cfg *c) { c->hyst.block_below_ns = 600; }
static void strict_tmin_0(rts_shield_cfg *c)
{
    c->n_sources = 2;
    c->strict_t_min[1] = 0;
}
static void bursty_burst_0(rts_shield_cfg *c) { c->bursty_burst[0] = 0; }
static void bursty_period_0(rts_shield_cfg *c) { c->bursty_period = 0; }
static void countdown_tick_0(rts_shield_cfg *c) { c->countdown_tick_ns = 0; }
static void nbufs_0(rts_shield_cfg *c) { c->nbufs = 0; }
static void base_prio_over(rts_shield_cfg *c) { c->task_base_prio = RTS_FLOW_PRIO_LEVELS; }
static void short_circuit_2(rts_shield_cfg *c) { c->short_circuit = 2; }
static void global_no_period(rts_shield_cfg *c) { c->global_capacity = 5; }
static void threshold_over(rts_shield_cfg *c) { c->recycle_threshold = c->ring_size + 1u; }
static void threshold_2(rts_shield_cfg *c) { c->recycle_threshold = 2; }
static void fill_low_eq_high(rts_shield_cfg *c)
{
    c->detect_fill_high = 3;
    c->detect_fill_low = 3;
}
static void detect_on(rts_shield_cfg *c)
{
    c->detect_slice_ns = 1000;
    c->detect_fill_high = 3;
    c->detect_fill_low = 1;
}

typedef struct {
    const char *name;
    uint32_t prot;
    cfg_tweak *tweak; /* NULL: valid_cfg(prot) as it is */
    rts_err expect;
} init_row;

static void test_init_errors(void)
{
    static const init_row rows[] = {
        {"no protection", 0, NULL, RTS_OK},
        {"every protection but strict", RTS_SHIELD_PROT_ALL & ~(uint32_t)RTS_SHIELD_STRICT & ~(uint32_t)RTS_SHIELD_BURST,
         NULL, RTS_OK},
        {"unknown protection bit", 1u << 8, NULL, RTS_EINVAL},
        {"unknown protection bit beside a known one", RTS_SHIELD_BURST | (1u << 31), NULL, RTS_EINVAL},
        {"n_sources 0", 0, sources_0, RTS_EINVAL},
        {"n_sources above RTS_SHIELD_MAX_SOURCES", RTS_SHIELD_STRICT, sources_over, RTS_EINVAL},
        {"RTS_SHIELD_MAX_SOURCES sources, strict", RTS_SHIELD_STRICT, sources_max, RTS_OK},
        {"RTS_SHIELD_MAX_SOURCES sources, bursty", RTS_SHIELD_BURSTY, sources_max, RTS_OK},
        {"several sources, no protection", 0, sources_2, RTS_OK},
        {"several sources with burst", RTS_SHIELD_BURST, sources_2, RTS_EINVAL},
        {"several sources with hysteresis", RTS_SHIELD_HYSTERESIS, sources_2, RTS_EINVAL},
        {"several sources with strict and queue", RTS_SHIELD_STRICT | RTS_SHIELD_QUEUE, sources_2, RTS_EINVAL},
        {"several sources with the receive path", RTS_SHIELD_RX_PATH, sources_2, RTS_EINVAL},
        {"strict and bursty together", RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY, NULL, RTS_EINVAL},
        {"strict and countdown together", RTS_SHIELD_STRICT | RTS_SHIELD_COUNTDOWN, NULL, RTS_EINVAL},
        {"burst and bursty share the mitigation timer", RTS_SHIELD_BURST | RTS_SHIELD_BURSTY, NULL, RTS_EINVAL},
        {"burst capacity 0", RTS_SHIELD_BURST, burst_cap_0, RTS_EINVAL},
        {"hysteresis block above unblock", RTS_SHIELD_HYSTERESIS, hyst_inverted, RTS_EINVAL},
        {"strict t_min 0 on the second source", RTS_SHIELD_STRICT, strict_tmin_0, RTS_EINVAL},
        {"bursty burst 0", RTS_SHIELD_BURSTY, bursty_burst_0, RTS_EINVAL},
        {"bursty period 0", RTS_SHIELD_BURSTY, bursty_period_0, RTS_EINVAL},
        {"countdown tick 0", RTS_SHIELD_COUNTDOWN, countdown_tick_0, RTS_EINVAL},
        {"receive path without buffers", RTS_SHIELD_RX_PATH, nbufs_0, RTS_EINVAL},
        {"receive path, base priority out of range", RTS_SHIELD_RX_PATH, base_prio_over, RTS_EINVAL},
        {"receive path, short_circuit 2", RTS_SHIELD_RX_PATH, short_circuit_2, RTS_EINVAL},
        {"receive path, global capacity without period", RTS_SHIELD_RX_PATH, global_no_period, RTS_EINVAL},
        {"receive path, threshold above the ring", RTS_SHIELD_RX_PATH, threshold_over, RTS_EINVAL},
        {"receive path, threshold 2", RTS_SHIELD_RX_PATH, threshold_2, RTS_OK},
        {"fill watermarks low == high", 0, fill_low_eq_high, RTS_EINVAL},
        {"detection on", 0, detect_on, RTS_OK},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_shield_cfg c = valid_cfg(rows[i].prot);
        if (rows[i].tweak != NULL) rows[i].tweak(&c);
        rts_shield_dec d;
        CHECK_EQ(rts_shield_init(&sh, &c, 0, &d), rows[i].expect);
        if (rows[i].tweak == threshold_2) CHECK_EQ(sh.rx.fq.ring_threshold, 2);
        if (rows[i].tweak == detect_on) CHECK_EQ(sh.detect.on, 3);
    }
    ROW("default threshold: half the ring");
    rts_shield_cfg c = valid_cfg(RTS_SHIELD_RX_PATH);
    rts_shield_dec d;
    CHECK_EQ(rts_shield_init(&sh, &c, 0, &d), RTS_OK);
    CHECK_EQ(sh.rx.fq.ring_threshold, c.ring_size * RTS_RX_RECYCLE_THRESHOLD_256 / 256u);
    CHECK_EQ(sh.rx.short_circuit, 1);
    CHECK_EQ(rts_shield_task_prio(&sh), 1);
    ROW("NULL arguments");
    CHECK_EQ(rts_shield_init(NULL, &c, 0, &d), RTS_EINVAL);
    CHECK_EQ(rts_shield_init(&sh, NULL, 0, &d), RTS_EINVAL);
    CHECK_EQ(rts_shield_init(&sh, &c, 0, NULL), RTS_EINVAL);
}

static void test_hooks(void)
{
    static const struct {
        const char *name;
        uint32_t prot;
        uint32_t hooks;
    } rows[] = {
        {"none", 0, 0},
        {"burst", RTS_SHIELD_BURST, RTS_SHIELD_HOOK_RX_ISR},
        {"strict", RTS_SHIELD_STRICT, RTS_SHIELD_HOOK_RX_ISR},
        {"bursty", RTS_SHIELD_BURSTY, RTS_SHIELD_HOOK_RX_ISR},
        {"hysteresis", RTS_SHIELD_HYSTERESIS, RTS_SHIELD_HOOK_TASK | RTS_SHIELD_HOOK_REPORT},
        {"budget", RTS_SHIELD_BUDGET, RTS_SHIELD_HOOK_TASK | RTS_SHIELD_HOOK_REPORT},
        {"queue", RTS_SHIELD_QUEUE, RTS_SHIELD_HOOK_TASK},
        {"countdown (hardware)", RTS_SHIELD_COUNTDOWN, 0},
        {"receive path", RTS_SHIELD_RX_PATH, 0},
        {"burst + queue", RTS_SHIELD_BURST | RTS_SHIELD_QUEUE, RTS_SHIELD_HOOK_RX_ISR | RTS_SHIELD_HOOK_TASK},
        {"burst + hysteresis + budget", RTS_SHIELD_BURST | RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET,
         RTS_SHIELD_HOOK_RX_ISR | RTS_SHIELD_HOOK_TASK | RTS_SHIELD_HOOK_REPORT},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_shield_cfg c = valid_cfg(rows[i].prot);
        rts_shield_dec d;
        CHECK_EQ(rts_shield_init(&sh, &c, 0, &d), RTS_OK);
        const uint32_t groups = RTS_SHIELD_HOOK_RX_ISR | RTS_SHIELD_HOOK_TASK | RTS_SHIELD_HOOK_REPORT;
        CHECK_EQ(rts_shield_hooks(&sh) & groups, rows[i].hooks);
    }
}

/* ------------------------------------------- interrupt-level protections */

enum { EV_IRQ, EV_PKT, EV_QFULL, EV_TIMER, EV_POLL, EV_DONE, EV_CYCLE };
enum { ANY = 99 };

typedef struct {
    const char *name;
    int ev;
    rts_time_ns now;
    int64_t arg;   /* IRQ: source; TIMER: timer; DONE: queue fill; CYCLE: earliness; POLL: expected sleep */
    int64_t work;  /* DONE: work_ns */
    int ret;       /* IRQ, PKT, POLL: expected bool; TIMER: expected rts_err; ANY: not checked */
    uint32_t flags; /* expected dec.flags */
    uint8_t drop;
    uint8_t n_ops;
    op_exp ops[3];
    uint32_t holds; /* line_holds[0] after the row */
} ev_row;

static void run_events(const ev_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ev_row *r = &rows[i];
        ROW(r->name);
        rts_shield_dec d;
        memset(&d, 0xEE, sizeof d); /* the hooks must clear it */
        int ret = ANY;
        rts_time_ns sleep = 0;
        switch (r->ev) {
        case EV_IRQ: ret = rts_shield_rx_irq_isr(&sh, (unsigned)r->arg, r->now, &d); break;
        case EV_PKT: ret = rts_shield_rx_packet_isr(&sh, r->now, &d); break;
        case EV_QFULL: rts_shield_rx_queue_full_isr(&sh, r->now, &d); break;
        case EV_TIMER: ret = rts_shield_timer_isr(&sh, (unsigned)r->arg, r->now, &d); break;
        case EV_POLL:
            ret = rts_shield_task_poll(&sh, r->now, &sleep, &d);
            CHECK_EQ(sleep, r->arg);
            break;
        case EV_DONE:
            CHECK_EQ(rts_shield_task_done(&sh, NULL, r->now, (rts_time_ns)r->work, (uint32_t)r->arg, NULL, &d),
                     RTS_OK);
            break;
        default: {
            const rts_time_ns target = (rts_time_ns)((int64_t)r->now + r->arg);
            rts_detect_cycle_result c = rts_shield_cycle_end(&sh, 0, target, r->now, &d);
            CHECK_EQ(c.earliness_ns, r->arg);
            CHECK_EQ(c.miss, r->arg < 0);
            break;
        }
        }
        if (r->ret != ANY) CHECK_EQ(ret, r->ret);
        CHECK_EQ(d.flags, r->flags);
        CHECK_EQ(d.drop, r->drop);
        check_ops(&d, r->n_ops, r->ops);
        CHECK_EQ(sh.line_holds[0], r->holds);
    }
}

static void init_with(const rts_shield_cfg *c, uint32_t exp_flags, unsigned n_ops, const op_exp *ops)
{
    rts_shield_dec d;
    CHECK_EQ(rts_shield_init(&sh, c, 0, &d), RTS_OK);
    CHECK_EQ(d.flags, exp_flags);
    check_ops(&d, n_ops, ops);
}

#define B RTS_SHIELD_BURST
#define H RTS_SHIELD_HYSTERESIS
#define Q RTS_SHIELD_QUEUE
#define G RTS_SHIELD_BUDGET
#define NOOP {{0, 0, 0, 0}}

static void test_burst_alone(void)
{
    static const ev_row rows[] = {
        {"pkt 1 starts the slice at 10", EV_PKT, 10, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"pkt 2 fills the slice: line off until 1010", EV_PKT, 20, 0, 0, 1, 0, 0, 1, {{0, T_MIT, DIS | ARM, 1010}}, B},
        {"pkt 3 latched: dropped, LIMITER, no second disable", EV_PKT, 30, 0, 0, 0, RTS_SHIELD_F_DROP,
         RTS_SHIELD_DROP_LIMITER, 1, {{0, T_MIT, ARM, 1010}}, B},
        {"mitigation timer early: nothing", EV_TIMER, 1009, T_MIT, 0, RTS_OK, 0, 0, 0, NOOP, B},
        {"mitigation timer: line back on", EV_TIMER, 1010, T_MIT, 0, RTS_OK, 0, 0, 1, {{0, T_MIT, EN, 0}}, 0},
        {"second expiry: nothing", EV_TIMER, 1020, T_MIT, 0, RTS_OK, 0, 0, 0, NOOP, 0},
        {"poll timer without receive path: nothing", EV_TIMER, 1030, T_POLL, 0, RTS_OK, 0, 0, 0, NOOP, 0},
        {"strict timer without strict: nothing", EV_TIMER, 1030, T_S0, 0, RTS_OK, 0, 0, 0, NOOP, 0},
        {"unknown timer", EV_TIMER, 1030, RTS_SHIELD_TIMERS, 0, RTS_EINVAL, 0, 0, 0, NOOP, 0},
        {"next slice: accepted", EV_PKT, 1100, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"driver queue full, no queue mitigation: drop only", EV_QFULL, 1110, 0, 0, ANY, RTS_SHIELD_F_DROP,
         RTS_SHIELD_DROP_QUEUE_FULL, 0, NOOP, 0},
        {"irq entry: burst is per frame, nothing here", EV_IRQ, 1120, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"task poll: runs", EV_POLL, 1130, 0, 0, 1, 0, 0, 0, NOOP, 0},
    };
    rts_shield_cfg c = valid_cfg(B);
    init_with(&c, 0, 0, NULL);
    run_events(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_LIMITER], 1);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_QUEUE_FULL], 1);
    CHECK_EQ(sh.burst.disables, 1);
}

/* Danicki §4: Hysteresis with Burst. Whichever holds the line last
 * re-enables it; the other's release emits nothing. */
static void test_burst_and_hysteresis(void)
{
    static const ev_row burst_first[] = {
        {"pkt 1", EV_PKT, 10, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"pkt 2 fills: burst disables", EV_PKT, 20, 0, 0, 1, 0, 0, 1, {{0, T_MIT, DIS | ARM, 1010}}, B},
        {"critical task: earliness 50 (< 100)", EV_CYCLE, 5000, 50, 0, ANY, 0, 0, 0, NOOP, B},
        {"task poll: hysteresis blocks, line already off: no op", EV_POLL, 40, 50, 0, 0, 0, 0, 0, NOOP, B | H},
        {"burst timer: burst releases, hysteresis holds: no enable", EV_TIMER, 1010, T_MIT, 0, RTS_OK, 0, 0, 0,
         NOOP, H},
        {"task poll: still blocked", EV_POLL, 1020, 50, 0, 0, 0, 0, 0, NOOP, H},
        {"critical task: earliness 600 (> 500)", EV_CYCLE, 6000, 600, 0, ANY, 0, 0, 0, NOOP, H},
        {"task poll: hysteresis, the last holder, enables", EV_POLL, 1100, 0, 0, 1, 0, 0, 1, {{0, T_MIT, EN, 0}}, 0},
    };
    rts_shield_cfg c = valid_cfg(B | H);
    init_with(&c, 0, 0, NULL);
    run_events(burst_first, sizeof burst_first / sizeof burst_first[0]);

    static const ev_row hyst_first[] = {
        {"critical task: earliness 50", EV_CYCLE, 5000, 50, 0, ANY, 0, 0, 0, NOOP, 0},
        {"task poll: hysteresis blocks and disables", EV_POLL, 10, 50, 0, 0, 0, 0, 1, {{0, T_MIT, DIS, 0}}, H},
        {"pkt 1 (latched before the disable)", EV_PKT, 20, 0, 0, 1, 0, 0, 0, NOOP, H},
        {"pkt 2 fills: only the slice timer is armed", EV_PKT, 30, 0, 0, 1, 0, 0, 1, {{0, T_MIT, ARM, 1020}}, H | B},
        {"critical task: earliness 600", EV_CYCLE, 6000, 600, 0, ANY, 0, 0, 0, NOOP, H | B},
        {"task poll: hysteresis releases, burst holds: no enable", EV_POLL, 500, 0, 0, 1, 0, 0, 0, NOOP, B},
        {"burst timer: the last holder enables", EV_TIMER, 1020, T_MIT, 0, RTS_OK, 0, 0, 1, {{0, T_MIT, EN, 0}}, 0},
    };
    init_with(&c, 0, 0, NULL);
    run_events(hyst_first, sizeof hyst_first / sizeof hyst_first[0]);
}

static void test_burst_and_queue(void)
{
    static const ev_row rows[] = {
        {"pkt 1", EV_PKT, 10, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"pkt 2 fills: burst disables", EV_PKT, 20, 0, 0, 1, 0, 0, 1, {{0, T_MIT, DIS | ARM, 1010}}, B},
        {"driver queue full: queue takes a hold, no second disable", EV_QFULL, 25, 0, 0, ANY, RTS_SHIELD_F_DROP,
         RTS_SHIELD_DROP_QUEUE_FULL, 0, NOOP, B | Q},
        {"burst timer: queue still holds", EV_TIMER, 1010, T_MIT, 0, RTS_OK, 0, 0, 0, NOOP, Q},
        {"packet done, 3 left", EV_DONE, 1100, 3, 10, ANY, 0, 0, 0, NOOP, Q},
        {"packet done, queue empty: enable", EV_DONE, 1200, 0, 10, ANY, 0, 0, 1, {{0, T_MIT, EN, 0}}, 0},
        {"queue full again: queue disables", EV_QFULL, 1300, 0, 0, ANY, RTS_SHIELD_F_DROP, RTS_SHIELD_DROP_QUEUE_FULL,
         1, {{0, T_MIT, DIS, 0}}, Q},
        {"pkt in a new slice", EV_PKT, 1400, 0, 0, 1, 0, 0, 0, NOOP, Q},
        {"pkt fills it: timer only", EV_PKT, 1410, 0, 0, 1, 0, 0, 1, {{0, T_MIT, ARM, 2400}}, Q | B},
        {"queue drains first: burst holds", EV_DONE, 1500, 0, 10, ANY, 0, 0, 0, NOOP, B},
        {"burst timer: enable", EV_TIMER, 2400, T_MIT, 0, RTS_OK, 0, 0, 1, {{0, T_MIT, EN, 0}}, 0},
    };
    rts_shield_cfg c = valid_cfg(B | Q);
    init_with(&c, 0, 0, NULL);
    run_events(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_QUEUE_FULL], 2);
    CHECK_EQ(sh.driver_fill, 0);
}

static void test_budget(void)
{
    static const ev_row rows[] = {
        {"task poll before any report: wait", EV_POLL, 10, 0, 0, 0, 0, 0, 0, NOOP, G},
        {"report 500: resume, enable", EV_CYCLE, 2000, 500, 0, ANY, RTS_SHIELD_F_RESUME, 0, 1, {{0, T_MIT, EN, 0}}, 0},
        {"task poll: runs", EV_POLL, 2010, 0, 0, 1, 0, 0, 0, NOOP, 0},
        {"packet of 200: budget left", EV_DONE, 2020, 0, 200, ANY, 0, 0, 0, NOOP, 0},
        {"packet of 400: exhausted, suspend, disable", EV_DONE, 2030, 0, 400, ANY, RTS_SHIELD_F_SUSPEND, 0, 1,
         {{0, T_MIT, DIS, 0}}, G},
        {"task poll: wait for resume", EV_POLL, 2040, 0, 0, 0, 0, 0, 0, NOOP, G},
        {"late report: stays suspended", EV_CYCLE, 4000, -10, 0, ANY, 0, 0, 0, NOOP, G},
        {"report 300: resume", EV_CYCLE, 6000, 300, 0, ANY, RTS_SHIELD_F_RESUME, 0, 1, {{0, T_MIT, EN, 0}}, 0},
    };
    rts_shield_cfg c = valid_cfg(G);
    static const op_exp off[] = {{0, T_MIT, DIS, 0}};
    ROW("init: no budget before the first report");
    init_with(&c, RTS_SHIELD_F_SUSPEND, 1, off);
    CHECK_EQ(sh.line_holds[0], G);
    CHECK_EQ(sh.task_holds, G);
    run_events(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.task_holds, 0);
    ROW("init with a budget: nothing to do");
    c.budget.initial_budget_ns = 1000;
    init_with(&c, 0, 0, NULL);
    CHECK_EQ(sh.line_holds[0], 0);
}

/* Budget charging the ISR (rts_shield_rx_isr_done_isr): off by default, a
 * no-op; with charge_isr the ISR's time spends the budget and may suspend. */
static void test_budget_charges_isr(void)
{
    rts_shield_cfg c = valid_cfg(G);
    c.budget.initial_budget_ns = 1000;
    init_with(&c, 0, 0, NULL);
    CHECK(!(rts_shield_hooks(&sh) & RTS_SHIELD_CALL_RX_DONE));
    rts_shield_dec d;
    rts_shield_rx_isr_done_isr(&sh, 10, 5000, &d);
    CHECK_EQ(d.flags, 0);
    CHECK_EQ(d.n_ops, 0);
    CHECK_EQ(sh.task_holds, 0);
    c.budget.charge_isr = true;
    init_with(&c, 0, 0, NULL);
    CHECK(rts_shield_hooks(&sh) & RTS_SHIELD_CALL_RX_DONE);
    rts_shield_rx_isr_done_isr(&sh, 10, 400, &d); /* 600 left */
    CHECK_EQ(d.flags, 0);
    rts_shield_rx_isr_done_isr(&sh, 20, 600, &d); /* exhausted */
    CHECK_EQ(d.flags, RTS_SHIELD_F_SUSPEND);
    CHECK_EQ(d.n_ops, 1);
    CHECK_EQ(sh.line_holds[0], G);
    CHECK_EQ(sh.task_holds, G);
}

/* Budget and Queue both hold the line; only Budget suspends the task. */
static void test_budget_and_queue(void)
{
    static const ev_row rows[] = {
        {"report 100", EV_CYCLE, 1000, 100, 0, ANY, 0, 0, 0, NOOP, 0},
        {"queue full: queue disables", EV_QFULL, 1010, 0, 0, ANY, RTS_SHIELD_F_DROP, RTS_SHIELD_DROP_QUEUE_FULL, 1,
         {{0, T_MIT, DIS, 0}}, Q},
        {"packet of 150, 2 left: budget suspends, line held already", EV_DONE, 1020, 2, 150, ANY,
         RTS_SHIELD_F_SUSPEND, 0, 0, NOOP, Q | G},
        {"packet done, queue empty: queue releases, budget holds", EV_DONE, 1030, 0, 10, ANY, 0, 0, 0, NOOP, G},
        {"report 100: budget resumes and enables", EV_CYCLE, 3000, 100, 0, ANY, RTS_SHIELD_F_RESUME, 0, 1,
         {{0, T_MIT, EN, 0}}, 0},
    };
    rts_shield_cfg c = valid_cfg(G | Q);
    c.budget.initial_budget_ns = 1000;
    init_with(&c, 0, 0, NULL);
    run_events(rows, sizeof rows / sizeof rows[0]);
}

static void test_strict_per_source(void)
{
    static const ev_row rows[] = {
        {"source 1: admitted, its line and timer", EV_IRQ, 10, 1, 0, 1, 0, 0, 1, {{1, T_S0 + 1, DIS | ARM, 210}}, 0},
        {"source 1 again (port failed): dropped", EV_IRQ, 20, 1, 0, 0, RTS_SHIELD_F_DROP, RTS_SHIELD_DROP_LIMITER, 0,
         NOOP, 0},
        {"source 0: admitted, timer STRICT0", EV_IRQ, 30, 0, 0, 1, 0, 0, 1, {{0, T_S0, DIS | ARM, 130}}, RTS_SHIELD_STRICT},
        {"source 1's timer: its line back", EV_TIMER, 210, T_S0 + 1, 0, RTS_OK, 0, 0, 1, {{1, T_S0 + 1, EN, 0}},
         RTS_SHIELD_STRICT},
        {"source 0's timer early: re-armed at its expiry", EV_TIMER, 120, T_S0, 0, RTS_OK, 0, 0, 1,
         {{0, T_S0, ARM, 130}}, RTS_SHIELD_STRICT},
        {"source 0's timer: line back", EV_TIMER, 130, T_S0, 0, RTS_OK, 0, 0, 1, {{0, T_S0, EN, 0}}, 0},
        {"a source beyond n_sources: admitted untouched", EV_IRQ, 140, 3, 0, 1, 0, 0, 0, NOOP, 0},
        {"timer of a source beyond n_sources: nothing", EV_TIMER, 150, T_S0 + 3, 0, RTS_OK, 0, 0, 0, NOOP, 0},
    };
    rts_shield_cfg c = valid_cfg(RTS_SHIELD_STRICT);
    c.n_sources = 2;
    c.strict_t_min[0] = 100;
    c.strict_t_min[1] = 200;
    init_with(&c, 0, 0, NULL);
    run_events(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.line_holds[1], 0);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_LIMITER], 1);
    CHECK_EQ(sh.strict[1].port_errors, 1);
}

static void test_bursty_tick(void)
{
    rts_shield_cfg c = valid_cfg(RTS_SHIELD_BURSTY);
    c.n_sources = RTS_SHIELD_MAX_SOURCES;
    static const op_exp start[] = {
        {0, T_MIT, ARM | RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_ENABLE_TIMER_IRQ, 1000}};
    ROW("init starts the shared timer");
    init_with(&c, 0, 1, start);
    rts_shield_dec d;
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) {
        ROW("every source reaches its burst of 1");
        CHECK(rts_shield_rx_irq_isr(&sh, k, 10 + k, &d));
        const op_exp off = {(uint8_t)k, T_MIT, DIS, 0};
        check_ops(&d, 1, &off);
        CHECK_EQ(sh.line_holds[k], RTS_SHIELD_BURSTY);
    }
    ROW("an arrival on a held line: dropped");
    CHECK(!rts_shield_rx_irq_isr(&sh, 0, 20, &d));
    CHECK_EQ(d.flags, RTS_SHIELD_F_DROP);
    CHECK_EQ(d.drop, RTS_SHIELD_DROP_LIMITER);
    CHECK_EQ(d.n_ops, 0);
    ROW("tick: the timer, then one enable per held source");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_MIT, 1000, &d), RTS_OK);
    op_exp tick[RTS_SHIELD_MAX_OPS];
    tick[0] = (op_exp){0, T_MIT, ARM, 2000};
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) tick[1 + k] = (op_exp){(uint8_t)k, T_MIT, EN, 0};
    check_ops(&d, 1 + RTS_SHIELD_MAX_SOURCES, tick);
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) CHECK_EQ(sh.line_holds[k], 0);
    ROW("only the held source is enabled at the next tick");
    const unsigned last = RTS_SHIELD_MAX_SOURCES - 1u;
    CHECK(rts_shield_rx_irq_isr(&sh, last, 1500, &d));
    CHECK_EQ(rts_shield_timer_isr(&sh, T_MIT, 2000, &d), RTS_OK);
    const op_exp tick2[] = {{0, T_MIT, ARM, 3000}, {(uint8_t)last, T_MIT, EN, 0}};
    check_ops(&d, 2, tick2);
    ROW("tick with nothing held: the timer only");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_MIT, 3000, &d), RTS_OK);
    check_ops(&d, 1, (const op_exp[]){{0, T_MIT, ARM, 4000}});
}

static void test_countdown(void)
{
    rts_shield_cfg c = valid_cfg(RTS_SHIELD_COUNTDOWN); /* window 10 x 10 ns */
    init_with(&c, 0, 0, NULL);
    static const struct {
        const char *name;
        rts_time_ns now;
        uint32_t flags;
        rts_time_ns zero_at;
    } rows[] = {
        {"idle: delivered, no zero call needed", 0, RTS_SHIELD_F_DELIVER, UINT64_MAX},
        {"counter running: latched until 100", 10, RTS_SHIELD_F_LATCHED, 100},
        {"latch full: dropped", 20, RTS_SHIELD_F_DROP, UINT64_MAX},
        {"after the zero: the latched one delivered, this one latched", 150,
         RTS_SHIELD_F_DELIVER | RTS_SHIELD_F_LATCHED, 200},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_shield_dec d;
        rts_time_ns zero_at = 0;
        rts_shield_filter_arrival_isr(&sh, rows[i].now, &zero_at, &d);
        CHECK_EQ(d.flags, rows[i].flags);
        CHECK_EQ(zero_at, rows[i].zero_at);
        CHECK_EQ(d.n_ops, 0);
        CHECK_EQ(d.drop, rows[i].flags & RTS_SHIELD_F_DROP ? RTS_SHIELD_DROP_LIMITER : RTS_SHIELD_DROP_NONE);
    }
    ROW("zero with the arrival latched: deliver");
    CHECK(rts_shield_filter_zero_isr(&sh, 200));
    ROW("zero with nothing latched: nothing");
    CHECK(!rts_shield_filter_zero_isr(&sh, 300));
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_LIMITER], 1);
    ROW("without the countdown filter every arrival is delivered");
    c = valid_cfg(0);
    init_with(&c, 0, 0, NULL);
    for (rts_time_ns t = 0; t < 3; t++) {
        rts_shield_dec d;
        rts_time_ns zero_at = 0;
        rts_shield_filter_arrival_isr(&sh, t, &zero_at, &d);
        CHECK_EQ(d.flags, RTS_SHIELD_F_DELIVER);
        CHECK_EQ(zero_at, UINT64_MAX);
    }
    CHECK(!rts_shield_filter_zero_isr(&sh, 10));
}

/* ------------------------------------------------------------ detection */

enum { DET_CYCLE, DET_IRQ, DET_FILL };

/* One event on a shield with detection on: a cycle end, an RX interrupt or a
 * task pass reporting the driver queue's fill. */
typedef struct {
    const char *name;
    int ev;
    rts_time_ns now;           /* CYCLE: its end */
    rts_time_ns start, target; /* CYCLE */
    int64_t earliness;         /* CYCLE: expected */
    uint32_t fill;             /* FILL */
    uint64_t count;            /* the event's own counter afterwards: late cycles,
                                  threshold crossings or fill overloads */
} detect_row;

/* Slices of 1 µs with threshold 2 interrupts; fill watermarks 3 and 1. */
static const detect_row detect_rows[] = {
    {"early cycle", DET_CYCLE, .start = 0, .target = 1000, .now = 900, .earliness = 100, .count = 0},
    {"on time exactly", DET_CYCLE, .start = 1000, .target = 2000, .now = 2000, .earliness = 0, .count = 0},
    {"late cycle", DET_CYCLE, .start = 2000, .target = 3000, .now = 3500, .earliness = -500, .count = 1},
    {"early again", DET_CYCLE, .start = 3500, .target = 4500, .now = 4000, .earliness = 500, .count = 1},
    {"late again", DET_CYCLE, .start = 4500, .target = 5500, .now = 5501, .earliness = -1, .count = 2},
    {"irq 1 of slice 0", DET_IRQ, .now = 100, .count = 0},
    {"irq 2", DET_IRQ, .now = 200, .count = 0},
    {"irq 3 crosses the threshold 2", DET_IRQ, .now = 300, .count = 1},
    {"irq 4: same slice, no second crossing", DET_IRQ, .now = 400, .count = 1},
    {"slice 1: irq 1", DET_IRQ, .now = 1100, .count = 1},
    {"slice 1: irq 2", DET_IRQ, .now = 1200, .count = 1},
    {"slice 1: irq 3 crosses", DET_IRQ, .now = 1300, .count = 2},
    {"fill 2", DET_FILL, .now = 2000, .fill = 2, .count = 0},
    {"fill 3 reaches high", DET_FILL, .now = 2000, .fill = 3, .count = 1},
    {"fill 4 still overloaded", DET_FILL, .now = 2000, .fill = 4, .count = 1},
    {"fill 2 between the marks", DET_FILL, .now = 2000, .fill = 2, .count = 1},
    {"fill 1 clears", DET_FILL, .now = 2000, .fill = 1, .count = 1},
    {"fill 3 again", DET_FILL, .now = 2000, .fill = 3, .count = 2},
};

typedef struct {
    uint64_t cycles, late, crossings, overloads;
} detect_counts;

static detect_counts detect_counts_of(const rts_shield *s)
{
    return (detect_counts){s->detect.lateness.cycles, s->detect.late_cycles, s->detect.irq_crossings,
                           s->detect.fill_overloads};
}

/* The row's event, its own checks, and the counters: the event's own one as
 * the row says (a cycle end also counts one cycle), the others unmoved. */
static void detect_step(rts_shield *s, const detect_row *r)
{
    detect_counts want = detect_counts_of(s);
    rts_shield_dec d;
    switch (r->ev) {
    case DET_CYCLE: {
        const rts_detect_cycle_result c = rts_shield_cycle_end(s, r->start, r->target, r->now, &d);
        CHECK_EQ(c.earliness_ns, r->earliness);
        CHECK_EQ(d.flags, 0);
        CHECK_EQ(d.n_ops, 0);
        want.cycles++;
        want.late = r->count;
        break;
    }
    case DET_IRQ:
        CHECK(rts_shield_rx_irq_isr(s, 0, r->now, &d));
        want.crossings = r->count;
        break;
    default:
        CHECK_EQ(rts_shield_task_done(s, NULL, r->now, 10, r->fill, NULL, &d), RTS_OK);
        CHECK_EQ(s->driver_fill, r->fill);
        want.overloads = r->count;
    }
    const detect_counts got = detect_counts_of(s);
    CHECK_EQ(got.cycles, want.cycles);
    CHECK_EQ(got.late, want.late);
    CHECK_EQ(got.crossings, want.crossings);
    CHECK_EQ(got.overloads, want.overloads);
}

static void test_detection(void)
{
    rts_shield_cfg c = valid_cfg(0);
    c.detect_slice_ns = 1000;
    c.detect_irq_threshold = 2;
    c.detect_fill_high = 3;
    c.detect_fill_low = 1;
    init_with(&c, 0, 0, NULL);
    RTS_RUN_ROWS(&sh, detect_rows, detect_step);
    ROW("cycles counted");
    CHECK_EQ(sh.detect.lateness.cycles, 5);
    ROW("no detection configured: nothing counted");
    c = valid_cfg(0);
    init_with(&c, 0, 0, NULL);
    rts_shield_dec d;
    for (rts_time_ns t = 0; t < 10; t++) CHECK(rts_shield_rx_irq_isr(&sh, 0, t, &d));
    CHECK_EQ(rts_shield_task_done(&sh, NULL, 20, 10, 100, NULL, &d), RTS_OK);
    CHECK_EQ(sh.detect.irq_crossings, 0);
    CHECK_EQ(sh.detect.fill_overloads, 0);
}

/* --------------------------------------------------------- receive path */

enum { NBUFS = 16, RING = 8, BASE = 1, HP_PRIO = 10, LP_PRIO = 2, X_PRIO = 5 };
enum { F_HP = RTS_FLOW_FIRST_USER, F_LP = RTS_FLOW_FIRST_USER + 1, F_X = RTS_FLOW_FIRST_USER + 2 };
enum { P_HP = 502, P_LP = 600, P_X = 700 };
enum { NO = RTS_FLOW_NONE, NB = RTS_BUF_NONE, NOUT = RTS_RX_OUTCOMES };

/* An Ethernet II / IPv4 / UDP frame to `dport`, 4 payload bytes, padded to
 * the 60-byte Ethernet minimum. */
static size_t udp_frame(uint8_t *f, uint16_t dport)
{
    static const uint8_t hdr[14 + 20 + 8] = {
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01,             /* destination MAC */
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02,             /* source MAC */
        0x08, 0x00,                                     /* EtherType IPv4 */
        0x45, 0x00, 0x00, 32,                           /* v4, IHL 5, total length 32 */
        0x12, 0x34, 0x00, 0x00,                         /* id, no fragment */
        64, 17, 0x00, 0x00,                             /* TTL, UDP, checksum */
        10, 0, 0, 9,                                    /* source 10.0.0.9 */
        10, 0, 0, 1,                                    /* destination 10.0.0.1 */
        0x9C, 0x40, 0x00, 0x00,                         /* source port 40000, destination port */
        0x00, 12, 0x00, 0x00,                           /* UDP length 12, checksum */
    };
    memset(f, 0, 60);
    memcpy(f, hdr, sizeof hdr);
    f[36] = (uint8_t)(dport >> 8);
    f[37] = (uint8_t)dport;
    return 60;
}

static rts_shield_cfg rx_cfg(uint32_t prot)
{
    rts_shield_cfg c;
    rts_shield_cfg_default(&c);
    c.protections = RTS_SHIELD_RX_PATH | prot;
    c.nbufs = NBUFS;
    c.ring_size = RING;
    c.task_base_prio = BASE;
    c.burst.slice_ns = 1000;
    c.burst.capacity = 2;
    return c;
}

static void rx_start(const rts_shield_cfg *c)
{
    rts_shield_dec d;
    CHECK_EQ(rts_shield_init(&sh, c, 0, &d), RTS_OK);
    CHECK_EQ(d.n_ops, 0);
    const rts_shield_flow hp = {RTS_PROTO_UDP, P_HP, 0, HP_PRIO, 0, 0, 0};
    const rts_shield_flow lp = {RTS_PROTO_UDP, P_LP, 0, LP_PRIO, 0, 0, 0};
    uint8_t id = 0;
    CHECK_EQ(rts_shield_bind(&sh, &hp, 0, &id), RTS_OK);
    CHECK_EQ(id, F_HP);
    CHECK_EQ(rts_shield_bind(&sh, &lp, 0, &id), RTS_OK);
    CHECK_EQ(id, F_LP);
    CHECK_EQ(rts_shield_task_prio(&sh), BASE);
}

static void bind_x(uint32_t capacity, rts_time_ns period, uint32_t queue_limit, uint32_t prio)
{
    const rts_shield_flow x = {RTS_PROTO_UDP, P_X, 0, prio, capacity, period, queue_limit};
    uint8_t id = 0;
    CHECK_EQ(rts_shield_bind(&sh, &x, 0, &id), RTS_OK);
    CHECK_EQ(id, F_X);
}

typedef struct {
    const char *name;
    unsigned buf;
    uint16_t dport;
    rts_time_ns now;
    uint8_t outcome;
    uint8_t flow;
    uint32_t flags;
    uint8_t drop;
    uint16_t repost;
    uint8_t recycled;
    unsigned task_prio;
    uint8_t n_ops;
    op_exp op;
} frame_row;

static void run_frames(const frame_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const frame_row *r = &rows[i];
        ROW(r->name);
        uint8_t fr[64];
        const size_t len = udp_frame(fr, r->dport);
        rts_shield_rx rx;
        rts_shield_dec d;
        memset(&d, 0xEE, sizeof d);
        CHECK_EQ(rts_shield_rx_frame_isr(&sh, r->buf, fr, len, 0, 0, r->now, r->now, &rx, &d), RTS_OK);
        CHECK_EQ(rx.outcome, r->outcome);
        CHECK_EQ(rx.flow, r->flow);
        CHECK_EQ(d.flags, r->flags);
        CHECK_EQ(d.drop, r->drop);
        CHECK_EQ(rx.repost, r->repost);
        CHECK_EQ(rx.recycled_flow, r->recycled);
        CHECK_EQ(rts_shield_task_prio(&sh), r->task_prio);
        if (r->flags & RTS_SHIELD_F_PRIO) {
            CHECK_EQ(d.task_prio, r->task_prio);
            CHECK_EQ(rx.raised, 1);
        }
        check_ops(&d, r->n_ops, &r->op);
        if (rx.repost != RTS_BUF_NONE) CHECK_EQ(sh.rx.fq.state[rx.repost], RTS_BUF_RING);
        CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
        CHECK_EQ(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_ISR), 0);
    }
}

#define RAISE (RTS_SHIELD_F_PRIO | RTS_SHIELD_F_RESCHEDULE)
#define DROP RTS_SHIELD_F_DROP
#define RECY RTS_SHIELD_F_RECYCLED
#define NOP1 {0, 0, 0, 0}

/* Four LP frames into buffers 0 to 3, 10 ns apart: each queued, the first
 * raises the task to LP; the ring goes from 8 to 4. */
static const frame_row four_lp[] = {
    {"LP 1: queued, task raised to LP", 0, P_LP, 10, RTS_RX_QUEUED, F_LP, RAISE, 0, NB, NO, LP_PRIO, 0, NOP1},
    {"LP 2", 1, P_LP, 20, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
    {"LP 3", 2, P_LP, 30, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
    {"LP 4", 3, P_LP, 40, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
};

static void test_rx_bind(void)
{
    rts_shield_cfg c = rx_cfg(0);
    rx_start(&c);
    static const struct {
        const char *name;
        rts_shield_flow f;
        rts_err expect;
    } rows[] = {
        {"priority out of range", {RTS_PROTO_UDP, 700, 0, RTS_FLOW_PRIO_LEVELS, 0, 0, 0}, RTS_EINVAL},
        {"capacity without server period", {RTS_PROTO_UDP, 700, 0, 3, 4, 0, 0}, RTS_EINVAL},
        {"queue limit above the pool", {RTS_PROTO_UDP, 700, 0, 3, 0, 0, RTS_POOL_MAX_BUFS + 1}, RTS_EINVAL},
        {"port 0", {RTS_PROTO_UDP, 0, 0, 3, 0, 0, 0}, RTS_EINVAL},
        {"not TCP or UDP", {1, 700, 0, 3, 0, 0, 0}, RTS_EINVAL},
        {"duplicate of the HP flow", {RTS_PROTO_UDP, P_HP, 0, 3, 0, 0, 0}, RTS_EEXIST},
        {"same port, TCP: a new flow", {RTS_PROTO_TCP, P_HP, 0, 3, 0, 0, 0}, RTS_OK},
        {"same port, one source: a new flow", {RTS_PROTO_UDP, P_HP, 0x0A000009u, 3, 2, 1000000, 4}, RTS_OK},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        uint8_t id = 0xAA;
        CHECK_EQ(rts_shield_bind(&sh, &rows[i].f, 0, &id), rows[i].expect);
        if (rows[i].expect != RTS_OK) CHECK_EQ(id, 0xAA);
    }
    ROW("the bound flow carries its options");
    const rts_flow *f = &sh.rx.flows.flows[F_X + 1];
    CHECK_EQ(f->src_addr, 0x0A000009u);
    CHECK_EQ(f->prio, 3);
    CHECK_EQ(f->capacity, 2);
    CHECK_EQ(f->queue_limit, 4);
    CHECK_EQ(f->limited, 1);
    ROW("failed binds left no flow behind");
    unsigned used = 0;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) used += sh.rx.flows.flows[i].in_use;
    CHECK_EQ(used, 4);
    ROW("NULL arguments");
    uint8_t id;
    CHECK_EQ(rts_shield_bind(&sh, NULL, 0, &id), RTS_EINVAL);
    CHECK_EQ(rts_shield_bind(&sh, &rows[0].f, 0, NULL), RTS_EINVAL);
}

static void test_rx_queue_prio_short_circuit(void)
{
    static const frame_row rows[] = {
        {"LP 5: ring low, lowest priority: short circuit (a)", 4, P_LP, 50, RTS_RX_SHORT_CIRCUIT, F_LP, DROP,
         RTS_SHIELD_DROP_SHORT_CIRCUIT, 4, NO, LP_PRIO, 0, NOP1},
        {"unbound port (default flow, prio 0): short circuit", 4, 9999, 60, RTS_RX_SHORT_CIRCUIT, RTS_FLOW_DEFAULT,
         DROP, RTS_SHIELD_DROP_SHORT_CIRCUIT, 4, NO, LP_PRIO, 0, NOP1},
        {"HP at the low ring: queued, raised, oldest LP recycled (c)", 5, P_HP, 70, RTS_RX_QUEUED, F_HP,
         RAISE | RECY, 0, 0, F_LP, HP_PRIO, 0, NOP1},
        {"HP again: next LP recycled", 6, P_HP, 80, RTS_RX_QUEUED, F_HP, RECY, 0, 1, F_LP, HP_PRIO, 0, NOP1},
        {"LP below the HP: short circuit", 7, P_LP, 90, RTS_RX_SHORT_CIRCUIT, F_LP, DROP,
         RTS_SHIELD_DROP_SHORT_CIRCUIT, 7, NO, HP_PRIO, 0, NOP1},
    };
    rts_shield_cfg c = rx_cfg(0);
    rx_start(&c);
    run_frames(four_lp, 4); /* ring 4: at the threshold, not below */
    run_frames(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_SHORT_CIRCUIT], 3);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_LP), 2);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_HP), 2);
    CHECK_EQ(rts_shield_waiting(&sh), 4);
    ROW("a buffer not in the ring is refused and nothing changes");
    uint8_t fr[64];
    const size_t len = udp_frame(fr, P_LP);
    rts_shield_rx rx;
    rts_shield_dec d;
    const uint32_t harvested = sh.rx.harvested;
    CHECK_EQ(rts_shield_rx_frame_isr(&sh, 5, fr, len, 0, 0, 100, 100, &rx, &d), RTS_EINVAL);
    CHECK_EQ(rts_shield_rx_frame_isr(&sh, NBUFS, fr, len, 0, 0, 100, 100, &rx, &d), RTS_EINVAL);
    CHECK_EQ(sh.rx.harvested, harvested);
    CHECK_EQ(d.flags, 0);
    ROW("descriptor path (frame NULL): flow and priority from the descriptor");
    CHECK_EQ(rts_shield_rx_frame_isr(&sh, 0, NULL, 0, F_X, 20, 110, 110, &rx, &d), RTS_OK);
    CHECK_EQ(rx.outcome, RTS_RX_QUEUED);
    CHECK_EQ(rx.flow, F_X);
    CHECK_EQ(rx.prio, 20);
    CHECK_EQ(d.flags & RTS_SHIELD_F_PRIO, RTS_SHIELD_F_PRIO);
    CHECK_EQ(d.task_prio, 20);
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
}

static void test_rx_flow_server(void)
{
    static const frame_row rows[] = {
        {"X: queued", 0, P_X, 100, RTS_RX_QUEUED, F_X, RAISE, 0, NB, NO, X_PRIO, 0, NOP1},
        {"X: server exhausted, rejected (b)", 1, P_X, 200, RTS_RX_FLOW_LIMIT, F_X, DROP, RTS_SHIELD_DROP_FLOW_SERVER,
         1, NO, X_PRIO, 0, NOP1},
        {"X: next server period, queued", 1, P_X, 1000100, RTS_RX_QUEUED, F_X, 0, 0, NB, NO, X_PRIO, 0, NOP1},
    };
    rts_shield_cfg c = rx_cfg(0);
    rx_start(&c);
    bind_x(1, 1000000, 0, X_PRIO);
    run_frames(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_FLOW_SERVER], 1);
    CHECK_EQ(sh.rx.outcomes[RTS_RX_FLOW_LIMIT], 1);
}

static void test_rx_queue_full_queue_mitigation(void)
{
    static const frame_row rows[] = {
        {"X: queued", 0, P_X, 10, RTS_RX_QUEUED, F_X, RAISE, 0, NB, NO, X_PRIO, 0, NOP1},
        {"X: its queue is full, queue mitigation disables", 1, P_X, 20, RTS_RX_QUEUE_FULL, F_X, DROP,
         RTS_SHIELD_DROP_QUEUE_FULL, 1, NO, X_PRIO, 1, {0, T_MIT, DIS, 0}},
        {"X again (latched): dropped, no second disable", 1, P_X, 30, RTS_RX_QUEUE_FULL, F_X, DROP,
         RTS_SHIELD_DROP_QUEUE_FULL, 1, NO, X_PRIO, 0, NOP1},
    };
    rts_shield_cfg c = rx_cfg(RTS_SHIELD_QUEUE);
    rx_start(&c);
    bind_x(0, 0, 1, X_PRIO);
    run_frames(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.line_holds[0], RTS_SHIELD_QUEUE);
    ROW("the task drains the queues: line back on, priority back to base");
    rts_rx_job job;
    rts_shield_dec d;
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
    CHECK_EQ(job.buf, 0);
    CHECK_EQ(job.flow, F_X);
    CHECK_EQ(job.prio, X_PRIO);
    uint16_t refill = 0;
    CHECK_EQ(rts_shield_task_done(&sh, &job, 40, 10, 99, &refill, &d), RTS_OK);
    CHECK_EQ(d.flags, RTS_SHIELD_F_PRIO);
    CHECK_EQ(d.task_prio, BASE);
    check_ops(&d, 1, (const op_exp[]){{0, T_MIT, EN, 0}});
    CHECK_EQ(refill, 0);
    CHECK_EQ(sh.line_holds[0], 0);
    CHECK_EQ(sh.driver_fill, 0); /* the flow queues' fill, not the argument */
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
}

static void test_rx_burst(void)
{
    static const frame_row rows[] = {
        {"frame 1", 0, P_LP, 10, RTS_RX_QUEUED, F_LP, RAISE, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"frame 2 fills the slice: line off", 1, P_LP, 20, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 1,
         {0, T_MIT, DIS | ARM, 1010}},
        {"frame 3 (latched): dropped by burst, its buffer to re-post", 2, P_LP, 30, NOUT, NO, DROP,
         RTS_SHIELD_DROP_LIMITER, 2, NO, LP_PRIO, 1, {0, T_MIT, ARM, 1010}},
    };
    rts_shield_cfg c = rx_cfg(RTS_SHIELD_BURST);
    rx_start(&c);
    run_frames(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.rx.harvested, 2);
    CHECK_EQ(sh.rx.fq.state[2], RTS_BUF_RING);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_LIMITER], 1);
}

static void test_rx_global_limit(void)
{
    static const frame_row irq_mode[] = {
        {"1 of 3", 0, P_LP, 10, RTS_RX_QUEUED, F_LP, RAISE, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"2 of 3", 1, P_LP, 20, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"3 of 3 reaches the capacity: line off, poll timer, stop", 2, P_LP, 30, RTS_RX_QUEUED, F_LP,
         RTS_SHIELD_F_STOP, 0, NB, NO, LP_PRIO, 1, {0, T_POLL, DIS | ARM, 1000000}},
        {"over the capacity: left in the ring, stop", 3, P_LP, 40, RTS_RX_GLOBAL_LIMIT, NO,
         DROP | RTS_SHIELD_F_STOP, RTS_SHIELD_DROP_GLOBAL_LIMIT, NB, NO, LP_PRIO, 0, NOP1},
    };
    static const frame_row poll1[] = {
        {"poll 1: 1 of 3", 3, P_LP, 1000010, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"poll 1: 2 of 3", 4, P_LP, 1000020, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"poll 1: 3 of 3, already polling: no op", 5, P_LP, 1000030, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0,
         NOP1},
    };
    rts_shield_cfg c = rx_cfg(0);
    c.global_capacity = 3;
    c.global_period = 1000000;
    c.recycle_threshold = 0; /* no recycling here */
    rx_start(&c);
    rts_shield_dec d;
    ROW("poll timer while in interrupt mode: nothing");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_POLL, 5, &d), RTS_OK);
    CHECK_EQ(d.flags, 0);
    run_frames(irq_mode, sizeof irq_mode / sizeof irq_mode[0]);
    CHECK_EQ(sh.rx.fq.state[3], RTS_BUF_RING);
    CHECK_EQ(sh.line_holds[0], RTS_SHIELD_RX_PATH);
    ROW("poll timer: wake the polling task");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_POLL, 1000000, &d), RTS_OK);
    CHECK_EQ(d.flags, RTS_SHIELD_F_POLL);
    CHECK_EQ(d.n_ops, 0);
    CHECK_EQ(rts_shield_poll_begin(&sh, 1000000), 3);
    run_frames(poll1, sizeof poll1 / sizeof poll1[0]);
    ROW("poll 1 took the whole capacity: stay polling");
    rts_shield_poll_end(&sh, 1000040, &d);
    check_ops(&d, 1, (const op_exp[]){{0, T_POLL, ARM, 2000000}});
    CHECK_EQ(sh.line_holds[0], RTS_SHIELD_RX_PATH);
    ROW("poll 2: below capacity: back to interrupts");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_POLL, 2000000, &d), RTS_OK);
    CHECK_EQ(d.flags, RTS_SHIELD_F_POLL);
    CHECK_EQ(rts_shield_poll_begin(&sh, 2000000), 3);
    static const frame_row poll2[] = {
        {"poll 2: 1 of 3", 6, P_LP, 2000010, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
    };
    run_frames(poll2, 1);
    rts_shield_poll_end(&sh, 2000020, &d);
    check_ops(&d, 1, (const op_exp[]){{0, T_POLL, EN, 0}});
    CHECK_EQ(sh.line_holds[0], 0);
    CHECK_EQ(rts_global_limit_mode_of(&sh.rx.glim), RTS_GLOBAL_LIMIT_IRQ);
    ROW("interrupt mode: the poll timer does nothing, poll_begin gives 0");
    CHECK_EQ(rts_shield_timer_isr(&sh, T_POLL, 2000030, &d), RTS_OK);
    CHECK_EQ(d.flags, 0);
    CHECK_EQ(rts_shield_poll_begin(&sh, 2000030), 0);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_GLOBAL_LIMIT], 1);
}

static void test_rx_task_side(void)
{
    static const frame_row rows[] = {
        {"LP", 0, P_LP, 10, RTS_RX_QUEUED, F_LP, RAISE, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"HP", 1, P_HP, 20, RTS_RX_QUEUED, F_HP, RAISE, 0, NB, NO, HP_PRIO, 0, NOP1},
    };
    rts_shield_cfg c = rx_cfg(0);
    rx_start(&c);
    run_frames(rows, sizeof rows / sizeof rows[0]);
    rts_rx_job job;
    rts_shield_dec d;
    uint16_t refill = 0;
    ROW("HP first");
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
    CHECK_EQ(job.buf, 1);
    CHECK_EQ(job.flow, F_HP);
    CHECK_EQ(job.prio, HP_PRIO);
    CHECK_EQ(d.flags, 0);
    CHECK_EQ(rts_shield_waiting(&sh), 1);
    ROW("HP done: inheritance lowers to LP, buffer back, refill posts it");
    CHECK_EQ(rts_shield_task_done(&sh, &job, 30, 10, 0, &refill, &d), RTS_OK);
    CHECK_EQ(d.flags, RTS_SHIELD_F_PRIO);
    CHECK_EQ(d.task_prio, LP_PRIO);
    CHECK_EQ(rts_shield_task_prio(&sh), LP_PRIO);
    CHECK_EQ(refill, 1); /* the freed buffer is the first spare */
    CHECK_EQ(sh.rx.fq.state[1], RTS_BUF_RING);
    CHECK_EQ(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_RING), RING - 1);
    CHECK_EQ(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_POOL), NBUFS - RING);
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
    ROW("done twice: refused");
    CHECK_EQ(rts_shield_task_done(&sh, &job, 31, 10, 0, &refill, &d), RTS_EINVAL);
    CHECK_EQ(refill, RTS_BUF_NONE);
    CHECK_EQ(rts_shield_task_done(&sh, NULL, 31, 10, 0, &refill, &d), RTS_EINVAL);
    ROW("LP done: back to the base priority");
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
    CHECK_EQ(job.buf, 0);
    CHECK_EQ(rts_shield_task_done(&sh, &job, 40, 10, 0, &refill, &d), RTS_OK);
    CHECK_EQ(d.flags, RTS_SHIELD_F_PRIO);
    CHECK_EQ(d.task_prio, BASE);
    CHECK_EQ(refill, 0);
    CHECK_EQ(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_RING), RING);
    ROW("nothing waiting");
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_EEMPTY);
    CHECK_EQ(d.flags, 0);
    ROW("ring full: the freed buffer stays spare");
    run_frames(rows, 1);
    CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
    CHECK_EQ(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_RING), RING - 1);
    /* A spare goes to the ring at once (the stack still holds job.buf). */
    uint16_t b;
    CHECK_EQ(rts_flow_queue_refill(&sh.rx.fq, &b), RTS_OK);
    CHECK_EQ(rts_shield_task_done(&sh, &job, 50, 10, 0, &refill, &d), RTS_OK);
    CHECK_EQ(refill, RTS_BUF_NONE);
    CHECK_EQ(sh.rx.fq.state[job.buf], RTS_BUF_POOL);
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
}

/* Short circuit off (Behnke Figure 9, footnote 1): the lowest-priority
 * arrival at a low ring is queued and the oldest buffer of its level
 * recycled, never the arrival itself. */
static void test_rx_short_circuit_off(void)
{
    static const frame_row rows[] = {
        {"LP 5 at the low ring: queued, oldest LP recycled", 4, P_LP, 50, RTS_RX_QUEUED, F_LP, RECY, 0, 0, F_LP,
         LP_PRIO, 0, NOP1},
        {"LP 6: the next oldest", 5, P_LP, 60, RTS_RX_QUEUED, F_LP, RECY, 0, 1, F_LP, LP_PRIO, 0, NOP1},
        {"HP: queued, LP recycled", 6, P_HP, 70, RTS_RX_QUEUED, F_HP, RAISE | RECY, 0, 2, F_LP, HP_PRIO, 0, NOP1},
    };
    rts_shield_cfg c = rx_cfg(0);
    c.short_circuit = 0;
    rx_start(&c);
    CHECK_EQ(sh.rx.short_circuit, 0);
    run_frames(four_lp, 4);
    run_frames(rows, sizeof rows / sizeof rows[0]);
    CHECK_EQ(sh.rx.outcomes[RTS_RX_SHORT_CIRCUIT], 0);
    CHECK_EQ(sh.drops[RTS_SHIELD_DROP_SHORT_CIRCUIT], 0);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_LP), 3);
    CHECK_EQ(sh.rx.recycled, 3);

    ROW("queues empty, ring low (the stack holds the buffers): the arrival stays queued");
    rx_start(&c);
    rts_shield_dec d;
    rts_rx_job job;
    for (unsigned b = 0; b < 5; b++) {
        const frame_row hp = {"HP taken by the task", b, P_HP, 10 + b, RTS_RX_QUEUED, F_HP, b == 0 ? RAISE : 0u, 0,
                              NB, NO, HP_PRIO, 0, NOP1};
        run_frames(&hp, 1);
        CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
    }
    CHECK(rts_flow_queue_ring_low(&sh.rx.fq));
    static const frame_row alone[] = {
        {"LP alone at a low ring: queued, not recycled", 5, P_LP, 100, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, HP_PRIO, 0,
         NOP1},
        {"LP again: its own older buffer is recycled", 6, P_LP, 110, RTS_RX_QUEUED, F_LP, RECY, 0, 5, F_LP, HP_PRIO,
         0, NOP1},
    };
    run_frames(alone, sizeof alone / sizeof alone[0]);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_LP), 1);
    CHECK_EQ(rts_shield_waiting(&sh), 1);
}

/* Regression: after a flow's priority was raised at run time, its queued
 * buffers are still filed at the old level until its next packet moves
 * the flow. That arrival must not recycle a buffer of its own (new)
 * priority: path (c) recycles strictly lower priorities only. */
static void test_rx_recycle_after_priority_raise(void)
{
    rts_shield_cfg c = rx_cfg(0);
    c.recycle_threshold = 5;
    rx_start(&c);
    run_frames(four_lp, 3); /* ring 5: not low */
    ROW("setsockopt: LP's priority raised to 12");
    CHECK_EQ(rts_flow_table_setopt(&sh.rx.flows, F_LP, RTS_FLOWOPT_PRIORITY, 12, 35), RTS_OK);
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
    CHECK_EQ(rts_flow_queue_lowest_prio(&sh.rx.fq), LP_PRIO); /* still filed at the old level */
    static const frame_row after[] = {
        {"LP at the low ring: the flow moves to 12, nothing of 12 recycled", 3, P_LP, 40, RTS_RX_QUEUED, F_LP, RAISE,
         0, NB, NO, 12, 0, NOP1},
        {"LP again: now the lowest level, short circuit", 4, P_LP, 50, RTS_RX_SHORT_CIRCUIT, F_LP, DROP,
         RTS_SHIELD_DROP_SHORT_CIRCUIT, 4, NO, 12, 0, NOP1},
    };
    run_frames(after, sizeof after / sizeof after[0]);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_LP), 4);
    CHECK_EQ(sh.rx.fq.q[F_LP].level, 12);
    CHECK_EQ(sh.rx.recycled, 0);

    ROW("with a lower flow queued, that flow's buffer is the one recycled");
    rx_start(&c);
    bind_x(0, 0, 0, 1);
    static const frame_row mixed[] = {
        {"X (prio 1)", 0, P_X, 10, RTS_RX_QUEUED, F_X, 0, 0, NB, NO, BASE, 0, NOP1},
        {"LP 1", 1, P_LP, 20, RTS_RX_QUEUED, F_LP, RAISE, 0, NB, NO, LP_PRIO, 0, NOP1},
        {"LP 2: ring 5", 2, P_LP, 30, RTS_RX_QUEUED, F_LP, 0, 0, NB, NO, LP_PRIO, 0, NOP1},
    };
    run_frames(mixed, sizeof mixed / sizeof mixed[0]);
    CHECK_EQ(rts_flow_table_setopt(&sh.rx.flows, F_LP, RTS_FLOWOPT_PRIORITY, 12, 35), RTS_OK);
    CHECK_EQ(rts_flow_queue_check(&sh.rx.fq), RTS_OK);
    static const frame_row mixed_after[] = {
        {"LP at the low ring: X's buffer recycled, not LP's", 3, P_LP, 40, RTS_RX_QUEUED, F_LP, RAISE | RECY, 0, 0,
         F_X, 12, 0, NOP1},
    };
    run_frames(mixed_after, 1);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_LP), 3);
    CHECK_EQ(rts_flow_queue_flow_count(&sh.rx.fq, F_X), 0);
}

static void test_rx_fill_watermarks(void)
{
    rts_shield_cfg c = rx_cfg(0);
    c.detect_fill_high = 3;
    c.detect_fill_low = 1;
    rx_start(&c);
    static const frame_row rows[] = {
        {"fill 1", 0, P_HP, 10, RTS_RX_QUEUED, F_HP, RAISE, 0, NB, NO, HP_PRIO, 0, NOP1},
        {"fill 2", 1, P_HP, 20, RTS_RX_QUEUED, F_HP, 0, 0, NB, NO, HP_PRIO, 0, NOP1},
        {"fill 3: overload", 2, P_HP, 30, RTS_RX_QUEUED, F_HP, 0, 0, NB, NO, HP_PRIO, 0, NOP1},
    };
    run_frames(rows, 2);
    CHECK_EQ(sh.detect.fill_overloads, 0);
    run_frames(rows + 2, 1);
    CHECK_EQ(sh.detect.fill_overloads, 1);
    ROW("the task drains to 1: cleared");
    rts_rx_job job;
    rts_shield_dec d;
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(rts_shield_task_next(&sh, &job, &d), RTS_OK);
        CHECK_EQ(rts_shield_task_done(&sh, &job, 40, 10, 0, NULL, &d), RTS_OK);
    }
    CHECK(!sh.detect.fill.overload);
}

/* --------------------------------------------------- rts_shield_apply */

typedef struct {
    char what; /* E/D line enable/disable, P clear pending, A arm, C cancel */
    unsigned id;
    rts_time_ns at;
} rec_call;

static rec_call calls[32];
static unsigned n_calls;

static void rec(char what, unsigned id, rts_time_ns at)
{
    if (n_calls < sizeof calls / sizeof calls[0]) calls[n_calls++] = (rec_call){what, id, at};
}
static void rec_enable(void *ctx, unsigned line, bool on)
{
    (void)ctx;
    rec(on ? 'E' : 'D', line, 0);
}
static void rec_pending(void *ctx, unsigned line)
{
    (void)ctx;
    rec('P', line, 0);
}
static void rec_arm(void *ctx, unsigned timer, rts_time_ns at)
{
    (void)ctx;
    rec('A', timer, at);
}
static void rec_cancel(void *ctx, unsigned timer)
{
    (void)ctx;
    rec('C', timer, 0);
}

static void check_calls(const rec_call *exp, unsigned n)
{
    CHECK_EQ(n_calls, n);
    for (unsigned i = 0; i < n && i < n_calls; i++) {
        CHECK_EQ(calls[i].what, exp[i].what);
        CHECK_EQ(calls[i].id, exp[i].id);
        CHECK_EQ(calls[i].at, exp[i].at);
    }
    n_calls = 0;
}

static void test_apply(void)
{
    const rts_port port = {NULL, rec_enable, rec_pending, rec_arm, rec_cancel, NULL};
    rts_shield_map map;
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) map.rx_line[k] = 5u + k;
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        map.timer_hw[t] = 10u + t;
        map.timer_line[t] = 20u + t;
    }
    n_calls = 0;

    ROW("hand-built decision, no gate: ops in order, bad ops skipped");
    rts_shield_dec d;
    memset(&d, 0, sizeof d);
    d.flags = RTS_SHIELD_F_DROP | RTS_SHIELD_F_PRIO;
    d.n_ops = 5;
    d.ops[0] = (rts_shield_op){0, T_MIT, 0, {DIS | ARM, 500}};
    d.ops[1] = (rts_shield_op){1, T_S0 + 1, 0, {EN, 0}};
    d.ops[2] = (rts_shield_op){RTS_SHIELD_MAX_SOURCES, T_MIT, 0, {DIS, 0}};
    d.ops[3] = (rts_shield_op){0, RTS_SHIELD_TIMERS, 0, {DIS, 0}};
    d.ops[4] = (rts_shield_op){0, T_POLL, 0,
                               {RTS_ACT_CANCEL_TIMER | RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_DISABLE_TIMER_IRQ, 0}};
    CHECK_EQ(rts_shield_apply(&port, NULL, &map, &d), RTS_SHIELD_F_DROP | RTS_SHIELD_F_PRIO);
    const rec_call e1[] = {{'D', 5, 0}, {'A', 10, 500}, {'E', 6, 0}, {'C', 11, 0}, {'P', 21, 0}, {'D', 21, 0}};
    check_calls(e1, 6);

    ROW("a hook's decision performed: burst fills, the line goes off, the slice timer armed");
    rts_shield_cfg c = valid_cfg(RTS_SHIELD_BURST);
    init_with(&c, 0, 0, NULL);
    CHECK(rts_shield_rx_packet_isr(&sh, 10, &d));
    CHECK(rts_shield_rx_packet_isr(&sh, 20, &d));
    CHECK_EQ(rts_shield_apply(&port, NULL, &map, &d), 0);
    const rec_call e2[] = {{'D', 5, 0}, {'A', 10, 1010}};
    check_calls(e2, 2);
    CHECK(!rts_shield_rx_packet_isr(&sh, 30, &d));
    CHECK_EQ(rts_shield_apply(&port, NULL, &map, &d), RTS_SHIELD_F_DROP);
    check_calls((const rec_call[]){{'A', 10, 1010}}, 1);

    ROW("through the gate: hardware written only when the combined state changes");
    rts_irq_gate gate;
    rts_irq_gate_init(&gate);
    CHECK_EQ(rts_irq_gate_app_set(&gate, 5, true), RTS_GATE_ENABLED);
    rts_shield_dec off, on;
    memset(&off, 0, sizeof off);
    memset(&on, 0, sizeof on);
    off.n_ops = on.n_ops = 1;
    off.ops[0] = (rts_shield_op){0, T_MIT, 0, {DIS, 0}};
    on.ops[0] = (rts_shield_op){0, T_MIT, 0, {EN, 0}};
    rts_shield_apply(&port, &gate, &map, &off);
    check_calls((const rec_call[]){{'D', 5, 0}}, 1);
    rts_shield_apply(&port, &gate, &map, &off);
    check_calls(NULL, 0);
    rts_shield_apply(&port, &gate, &map, &on);
    check_calls((const rec_call[]){{'E', 5, 0}}, 1);
    CHECK(rts_irq_gate_enabled(&gate, 5));
    ROW("the application masked the line: the shield's enable leaves it masked");
    CHECK_EQ(rts_irq_gate_app_set(&gate, 5, false), RTS_GATE_DISABLED);
    rts_shield_apply(&port, &gate, &map, &off);
    rts_shield_apply(&port, &gate, &map, &on);
    check_calls(NULL, 0);
    CHECK(!rts_irq_gate_enabled(&gate, 5));

    ROW("the POSIX port records the result");
    rts_port pp;
    rts_posix_port hw;
    rts_posix_port_init(&pp, &hw);
    hw.enabled[5] = true;
    rts_shield_apply(&pp, NULL, &map, &off);
    CHECK(!hw.enabled[5]);
    d.n_ops = 1;
    d.ops[0] = (rts_shield_op){0, T_POLL, 0, {ARM, 777}};
    rts_shield_apply(&pp, NULL, &map, &d);
    CHECK(hw.timer_armed[11]);
    CHECK_EQ(hw.timer_at[11], 777);
}

int main(void)
{
    RTS_RUN(test_cfg_defaults);
    RTS_RUN(test_init_errors);
    RTS_RUN(test_hooks);
    RTS_RUN(test_burst_alone);
    RTS_RUN(test_burst_and_hysteresis);
    RTS_RUN(test_burst_and_queue);
    RTS_RUN(test_budget);
    RTS_RUN(test_budget_charges_isr);
    RTS_RUN(test_budget_and_queue);
    RTS_RUN(test_strict_per_source);
    RTS_RUN(test_bursty_tick);
    RTS_RUN(test_countdown);
    RTS_RUN(test_detection);
    RTS_RUN(test_rx_bind);
    RTS_RUN(test_rx_queue_prio_short_circuit);
    RTS_RUN(test_rx_flow_server);
    RTS_RUN(test_rx_queue_full_queue_mitigation);
    RTS_RUN(test_rx_burst);
    RTS_RUN(test_rx_global_limit);
    RTS_RUN(test_rx_task_side);
    RTS_RUN(test_rx_short_circuit_off);
    RTS_RUN(test_rx_recycle_after_priority_raise);
    RTS_RUN(test_rx_fill_watermarks);
    RTS_RUN(test_apply);
    return rts_test_end();
}
