/* libFuzzer target: the scenario → C configuration path. The front end
 * (python/rtshield/engine.py, _build_config) fills an rtsim_config from a
 * scenario and asks rtsim_config_error() before rtsim_create(); this target
 * starts from a configuration shaped as the front end fills it (a critical
 * periodic task, the driver, piecewise flows; an edge NIC, a DMA ring with
 * the receive path, or the multiqueue NIC) and lets the fuzzer overwrite any
 * field of it with edge values (0, 1, -1, the type's limits, NaN, infinity,
 * arbitrary bytes).
 *
 * Findings (abort, or a sanitizer report):
 *   - a refusal that does not name the bad field: the message must read
 *     "<field>: <reason>" (what the front end prints after the file name);
 *   - a configuration accepted by rtsim_config_error() that rtsim_create()
 *     then refuses (the front end would fail with no line naming the field);
 *     sizes are kept to what fits in memory, so a NULL is not "memory short";
 *   - a run that fails (rtsim_run_until() != 0, rtsim_error() set) or does
 *     not conserve frames: offered = delivered + dropped + in flight, in the
 *     totals and summed over the flows; offered equal to the flows' sum.
 * The run is short: at most 1 ms of simulated time, 1024 bins and about
 * 2·10^4 events. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtsim/rtsim.h"

#include "fuzz_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An integer value: small, an edge of the types, or arbitrary. */
static uint64_t any_int(reader *r)
{
    static const uint64_t edges[] = {0u, 1u, 2u, 3u, 4u, 7u, 8u, 9u, 16u, 255u, 256u, 65535u, 65536u,
                                     0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, 0x100000000u,
                                     (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, UINT64_MAX,
                                     (uint64_t)-1000, 1000u, 1000000u, 1000000000u};
    const uint8_t sel = u8(r);
    switch (sel & 3u) {
    case 0: return sel >> 2;
    case 1: return edges[(sel >> 2) % (sizeof edges / sizeof edges[0])];
    case 2: return ubytes(r, 3);
    default: return ubytes(r, 8);
    }
}

static double any_double(reader *r)
{
    static const double edges[] = {0.0, 1.0, -1.0, 0.5, 1e-12, 1e3, 1e5, 1e6, 1e9, 1e12, 1e300, -0.0};
    const uint8_t sel = u8(r);
    switch (sel & 3u) {
    case 0: return (double)(sel >> 2) * 1000.0;
    case 1: return edges[(sel >> 2) % (sizeof edges / sizeof edges[0])];
    case 2:
        switch ((sel >> 2) % 3u) {
        case 0: return NAN;
        case 1: return INFINITY;
        default: return -INFINITY;
        }
    default: {
        const uint64_t bits = ubytes(r, 8);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    }
}

/* Fields the fuzzer may overwrite: offset, width, kind, and for arrays the
 * element count and stride. */
typedef enum { K_U32, K_I64, K_U64, K_F64 } kind;
typedef struct field {
    size_t off;
    kind k;
    unsigned n;     /* array elements (1: a scalar) */
    size_t stride;
} field;

#define F(member, kd) {offsetof(rtsim_config, member), kd, 1u, 0u}
#define A(member, kd, count, st) {offsetof(rtsim_config, member), kd, count, st}
#define T(member, kd) A(tasks[0].member, kd, RTSIM_MAX_TASKS, sizeof(rtsim_task_cfg))
#define FL(member, kd) A(flows[0].member, kd, RTSIM_MAX_FLOWS, sizeof(rtsim_flow_cfg))
#define S(member, kd) A(sources[0].member, kd, RTSIM_MAX_SOURCES, sizeof(rtsim_source_cfg))
#define Q(member, kd) A(nic_queues[0].member, kd, RTSIM_MAX_NIC_QUEUES, sizeof(rtsim_nic_queue_cfg))

static const field fields[] = {
    F(duration_ns, K_U64), F(bin_ns, K_U64), F(seed, K_U64), F(n_cores, K_U32), F(tick_ns, K_I64),
    F(time_slicing, K_U32), F(nic_kind, K_U32), F(nic_core, K_U32), F(ring, K_U32), F(queue_capacity, K_U32),
    F(n_sources, K_U32), S(isr_per_packet_ns, K_I64), S(min_interarrival_ns, K_I64), S(burst, K_U32),
    S(isr_only, K_U32),
    F(costs.isr_entry_exit_ns, K_I64), F(costs.isr_per_packet_ns, K_I64), F(costs.driver_per_packet_ns, K_I64),
    F(costs.tick_isr_ns, K_I64), F(costs.timer_isr_ns, K_I64), F(costs.mitig_isr_ns, K_I64),
    F(costs.mitig_driver_ns, K_I64), F(costs.mitig_report_ns, K_I64), F(costs.mitig_poll_ns, K_I64),
    A(costs.path_ns, K_I64, RTSIM_PATH_COUNT, sizeof(int64_t)),
    A(costs.path_q_ns, K_I64, RTSIM_PATH_COUNT * 4, sizeof(int64_t)),
    F(costs.invalidate_eager_ns, K_I64), F(costs.invalidate_deferred_ns, K_I64), F(costs.poll_batch_ns, K_I64),
    F(costs.poll_per_packet_ns, K_I64), F(costs.isr_rx_batch_ns, K_I64),
    F(n_tasks, K_U32), T(kind, K_U32), T(priority, K_U32), T(core, K_U32), T(critical, K_U32),
    T(period_ns, K_I64), T(work_ns, K_I64), T(offset_ns, K_I64), T(flow, K_U32), T(mailbox, K_U32),
    T(masks_rx, K_U32),
    F(n_flows, K_U32), FL(pattern, K_U32), FL(size, K_U32), FL(rate_pps, K_F64),
    FL(start_ns, K_I64), FL(source, K_U32),
    FL(n_rates, K_U32), FL(poisson, K_U32), FL(rates_pps[0], K_F64), FL(rates_pps[1], K_F64),
    FL(rates_pps[63], K_F64), FL(rate_t_ns[0], K_I64), FL(rate_t_ns[1], K_I64), FL(rate_t_ns[63], K_I64),
    FL(proto, K_U32), FL(dst_port, K_U32), FL(src_port, K_U32), FL(src_addr, K_U32), FL(vlan, K_U32),
    FL(vlan_pcp, K_U32), FL(unbound, K_U32), FL(prio, K_U32), FL(capacity, K_U32), FL(server_period_ns, K_I64),
    FL(queue_limit, K_U32), FL(nic_queue, K_U32), FL(trace_period_ns, K_I64),
    F(mitigation.kind, K_U32), F(mitigation.also, K_U32), F(mitigation.slice_ns, K_I64),
    F(mitigation.capacity, K_U32), F(mitigation.block_below, K_F64), F(mitigation.unblock_above, K_F64),
    F(mitigation.sleep_ns, K_I64), F(mitigation.min_interarrival_ns, K_I64), F(mitigation.burst, K_U32),
    F(mitigation.period_ns, K_I64), F(mitigation.window_ns, K_I64), F(mitigation.bursty_lazy, K_U32),
    F(mitigation.budget_charge_isr, K_U32), F(mitigation.one_enable_bit, K_U32), F(exact_arrivals, K_U32),
    F(rx.enabled, K_U32), F(rx.nbufs, K_U32), F(rx.recycle_threshold, K_U32), F(rx.short_circuit, K_U32),
    F(rx.eager_invalidate, K_U32), F(rx.global_capacity, K_U32), F(rx.global_period_ns, K_I64),
    F(n_nic_queues, K_U32), Q(size, K_U32), Q(t_abs_ns, K_I64), Q(t_pack_ns, K_I64), Q(frames, K_U32),
    F(detect_slice_ns, K_I64), F(detect_irq_threshold, K_U32), F(detect_fill_high, K_U32),
    F(detect_fill_low, K_U32),
    /* Added later: at the end, so that the seeds' field indices stay. */
    F(costs.isr_queue_full_ns, K_I64), F(costs.driver_wake_ns, K_I64), F(costs.driver_handover_ns, K_I64),
};

/* Sizes that allocate memory in rtsim_create(): kept where memory suffices,
 * so that a NULL from rtsim_create() means a refusal the check missed. */
static void bound_sizes(rtsim_config *c)
{
    if (c->queue_capacity > 70000u) c->queue_capacity %= 70000u;
    if (c->ring > 70000u) c->ring %= 70000u;
    if (c->rx.nbufs > 70000u) c->rx.nbufs %= 70000u;
    for (unsigned i = 0; i < RTSIM_MAX_TASKS; i++) {
        if (c->tasks[i].mailbox > 70000u) c->tasks[i].mailbox %= 70000u;
    }
    c->trace_capacity = 0u;
}

/* The front end's shape (engine.py _build_config, a platform preset's costs). */
static void base(rtsim_config *c, unsigned which)
{
    memset(c, 0, sizeof *c);
    c->duration_ns = 1000000u;
    c->bin_ns = 250000u;
    c->seed = 1u;
    c->n_cores = 1u;
    c->tick_ns = 100000;
    c->time_slicing = 1u;
    c->queue_capacity = 16u;
    c->costs.isr_entry_exit_ns = 500;
    c->costs.isr_per_packet_ns = 1000;
    c->costs.driver_per_packet_ns = 4000;
    c->costs.tick_isr_ns = 300;
    c->costs.timer_isr_ns = 300;
    c->n_tasks = 2u;
    c->tasks[0] = (rtsim_task_cfg){.kind = RTSIM_TASK_PERIODIC, .priority = 5u, .critical = 1u,
                                   .period_ns = 100000, .work_ns = 30000};
    c->tasks[1] = (rtsim_task_cfg){.kind = RTSIM_TASK_DRIVER, .priority = 3u};
    c->n_flows = 2u;
    for (unsigned i = 0; i < 2u; i++) {
        rtsim_flow_cfg *f = &c->flows[i];
        f->pattern = RTSIM_PAT_PIECEWISE;
        f->size = 64u;
        f->n_rates = 2u;
        f->rate_t_ns[0] = 0;
        f->rates_pps[0] = i ? 1000.0 : 20000.0;
        f->rate_t_ns[1] = 500000;
        f->rates_pps[1] = i ? 1000.0 : 200000.0;
        f->proto = i ? RTSIM_PROTO_UDP : RTSIM_PROTO_TCP;
        f->dst_port = 502u + i;
        f->src_port = 40000u;
        f->src_addr = 0xC0000264u;
        f->prio = i ? 9u : 1u;
        f->nic_queue = RTSIM_NIC_UNMAPPED;
    }
    switch (which % 3u) {
    case 0:
        c->nic_kind = RTSIM_NIC_EDGE;
        break;
    case 1:
        c->nic_kind = RTSIM_NIC_DMA_RING;
        c->ring = 16u;
        c->rx.enabled = 1u;
        c->rx.nbufs = 32u;
        c->rx.recycle_threshold = 0xFFFFFFFFu;
        c->rx.short_circuit = 1u;
        for (unsigned p = 0; p < RTSIM_PATH_COUNT; p++) c->costs.path_ns[p] = 1120;
        c->costs.invalidate_deferred_ns = 2780;
        break;
    default:
        c->nic_kind = RTSIM_NIC_MULTIQUEUE;
        c->ring = 16u;
        c->n_nic_queues = 2u;
        c->nic_queues[0] = (rtsim_nic_queue_cfg){8u, 50000, 10000, 4u};
        c->nic_queues[1] = (rtsim_nic_queue_cfg){4u, 0, 0, 0u};
        c->flows[0].nic_queue = 0u;
        c->flows[1].nic_queue = 1u;
        break;
    }
    c->mitigation.kind = (which / 3u) % (RTSIM_MIT_COUNTDOWN + 1u);
    c->mitigation.slice_ns = 100000;
    c->mitigation.capacity = 8u;
    c->mitigation.block_below = 0.1;
    c->mitigation.unblock_above = 0.3;
    c->mitigation.sleep_ns = 10000;
    c->mitigation.min_interarrival_ns = 20000;
    c->mitigation.burst = 4u;
    c->mitigation.period_ns = 100000;
    c->mitigation.window_ns = 20000;
}

/* "<field>: <reason>": lower-case field paths (several joined by ", " or
 * "/"), a colon, a space, a reason, one line. */
static bool names_a_field(const char *msg)
{
    const char *colon = strchr(msg, ':');
    if (colon == NULL || colon == msg || colon[1] != ' ' || colon[2] == '\0') return false;
    for (const char *p = msg; p < colon; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == ' ' || *p == ',' || *p == '/')) {
            return false;
        }
    }
    return strchr(msg, '\n') == NULL;
}

static rtsim_bin bins[64];

/* The edits of the current input, printed with a finding. */
static char edits_log[1024];
static size_t edits_len;

static void finding(const char *what)
{
    fprintf(stderr, "%s\nedits (field offset[index] = value): %s\n", what, edits_log);
    abort();
}

static void run(const rtsim_config *c)
{
    rtsim *s = rtsim_create(c);
    if (s == NULL) {
        finding("rtsim_config_error() accepted a configuration rtsim_create() refuses");
    }
    /* At most 1 ms, 1024 bins, and 4000 bins between two rtsim_take_bins()
     * (the bin ring holds RTSIM_BIN_RING), as the front end's chunks do. */
    uint64_t end = c->duration_ns < 1000000u ? c->duration_ns : 1000000u;
    if (c->bin_ns < end / 1024u) end = c->bin_ns * 1024u;
    const uint64_t step = c->bin_ns <= 2u ? c->bin_ns * 4000u : 10000u;
    for (uint64_t t = 0; t < end && rtsim_events(s) < 20000u;) {
        t = end - t > step ? t + step : end;
        if (rtsim_run_until(s, t) != 0) {
            fprintf(stderr, "run failed: %s\n", rtsim_error(s) ? rtsim_error(s) : "?");
            finding("rtsim_run_until() failed");
        }
        while (rtsim_take_bins(s, bins, sizeof bins / sizeof bins[0]) > 0) {
        }
    }
    must(rtsim_error(s) == NULL);
    rtsim_bin tot;
    rtsim_totals(s, &tot);
    uint64_t dropped = 0;
    for (unsigned d = 0; d < RTSIM_DROP_COUNT; d++) dropped += tot.dropped[d];
    const uint64_t in_flight = rtsim_in_flight(s);
    must(tot.offered == tot.delivered + dropped + in_flight);
    uint64_t f_off = 0, f_del = 0, f_drop = 0;
    for (uint32_t i = 0; i < c->n_flows; i++) {
        rtsim_flow_stats fs;
        must(rtsim_flow_stats_get(s, i, &fs) == 0);
        uint64_t by_reason = 0;
        for (unsigned d = 0; d < RTSIM_DROP_COUNT; d++) by_reason += fs.drops[d];
        must(by_reason == fs.dropped);
        f_off += fs.offered;
        f_del += fs.delivered;
        f_drop += fs.dropped;
    }
    must(f_off == tot.offered && f_del == tot.delivered && f_drop == dropped);
    rtsim_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    static rtsim_config c;
    base(&c, u8(&r));
    const unsigned edits = u8(&r) % 16u;
    edits_len = 0;
    edits_log[0] = '\0';
    for (unsigned e = 0; e < edits && r.n > 0; e++) {
        const field *f = &fields[u8(&r) % (sizeof fields / sizeof fields[0])];
        const unsigned idx = f->n > 1u ? u8(&r) % f->n : 0u;
        uint8_t *p = (uint8_t *)&c + f->off + idx * f->stride;
        char one[96];
        if (f->k == K_F64) {
            const double d = any_double(&r);
            memcpy(p, &d, sizeof d);
            snprintf(one, sizeof one, "%zu[%u]=%g ", f->off, idx, d);
        } else if (f->k == K_U32) {
            const uint32_t v = (uint32_t)any_int(&r);
            memcpy(p, &v, sizeof v);
            snprintf(one, sizeof one, "%zu[%u]=%u ", f->off, idx, v);
        } else {
            const uint64_t v = any_int(&r);
            memcpy(p, &v, sizeof v);
            snprintf(one, sizeof one, "%zu[%u]=%lld ", f->off, idx, (long long)v);
        }
        const size_t n = strlen(one);
        if (edits_len + n < sizeof edits_log) {
            memcpy(edits_log + edits_len, one, n + 1u);
            edits_len += n;
        }
    }
    bound_sizes(&c);
    const char *err = rtsim_config_error(&c);
    if (err != NULL) {
        if (!names_a_field(err)) {
            fprintf(stderr, "refused without naming the field: \"%s\"\n", err);
            abort();
        }
        must(rtsim_create(&c) == NULL);
        return 0;
    }
    run(&c);
    return 0;
}
