/* Regression tests for what the fuzz target of the scenario → C
 * configuration path (libshield/tests/fuzz/fuzz_sim_config.c) found:
 * rtsim_config_error() must refuse, with the field named, every
 * configuration rtsim_create() or the engine cannot take, must not read past
 * the configuration's arrays, and a flood at any accepted rate must run. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "sim_test_util.h"

static bool refused_with(const rtsim_config *c, const char *prefix)
{
    const char *e = rtsim_config_error(c);
    if (e == NULL || strncmp(e, prefix, strlen(prefix)) != 0) {
        fprintf(stderr, "  expected \"%s...\", got \"%s\"\n", prefix, e ? e : "(accepted)");
        return false;
    }
    return rtsim_create(c) == NULL;
}

/* A multiqueue NIC device as the fuzz target's base: two mapped flows. */
static rtsim_config mq_base(void)
{
    rtsim_config c = base(1 * MS);
    c.nic_kind = RTSIM_NIC_MULTIQUEUE;
    c.n_nic_queues = 2;
    c.nic_queues[0] = (rtsim_nic_queue_cfg){8, 50 * US, 10 * US, 4};
    c.nic_queues[1] = (rtsim_nic_queue_cfg){4, 0, 0, 0};
    add_critical(&c, 5, 100 * US, 30 * US);
    add_driver(&c, 3);
    for (uint32_t i = 0; i < 2; i++) {
        int f = add_flow(&c, RTSIM_PAT_CONSTANT, 1000);
        c.flows[f].proto = i ? RTSIM_PROTO_UDP : RTSIM_PROTO_TCP;
        c.flows[f].dst_port = 502 + i;
        c.flows[f].nic_queue = i;
    }
    return c;
}

/* The counts are checked before any loop reads tasks[] or flows[] (an index
 * of 8 read past flows[7]: UBSan's bounds check in the sanitized build). */
static void test_counts_checked_first(void)
{
    rtsim_config c = mq_base();
    c.n_flows = RTSIM_MAX_FLOWS + 1;
    CHECK(refused_with(&c, "flows: at most 8"));
    c = base(1 * MS);
    c.n_flows = RTSIM_MAX_FLOWS + 1;
    c.flows[0].nic_queue = RTSIM_NIC_UNMAPPED;
    CHECK(refused_with(&c, "flows: at most 8"));
    c = base(1 * MS);
    c.n_tasks = RTSIM_MAX_TASKS + 1;
    CHECK(refused_with(&c, "tasks: at most 8"));
}

/* rts_nic_moderation_queue_add() refuses a frame threshold above the queue's size. */
static void test_nic_frames_above_size(void)
{
    rtsim_config c = mq_base();
    CHECK(rtsim_config_error(&c) == NULL);
    c.nic_queues[1].frames = 5; /* size 4 */
    CHECK(refused_with(&c, "nic.queues.frames"));
    c.nic_queues[1].frames = 4;
    CHECK(rtsim_config_error(&c) == NULL);
}

/* The distribution map's key is a port 1..65535 for TCP and UDP. */
static void test_nic_mapped_port(void)
{
    rtsim_config c = mq_base();
    c.flows[1].dst_port = 0;
    CHECK(refused_with(&c, "flows.dst_port"));
    c.flows[1].dst_port = 65536 + 502; /* would alias port 502 */
    CHECK(refused_with(&c, "flows.dst_port"));
    c.flows[1].dst_port = 0;
    c.flows[1].proto = RTSIM_PROTO_ICMP; /* portless: port 0 is its key */
    CHECK(rtsim_config_error(&c) == NULL);
}

static void test_unknown_protocol(void)
{
    rtsim_config c = mq_base();
    c.flows[1].proto = RTSIM_PROTO_RAW + 1;
    CHECK(refused_with(&c, "flows.protocol"));
}

/* Costs are added to the clock: each is at most RTSIM_COST_MAX_S. */
static void test_cost_bound(void)
{
    rtsim_config c = mq_base();
    c.costs.isr_entry_exit_ns = INT64_MAX;
    CHECK(refused_with(&c, "costs"));
    c = mq_base();
    c.costs.path_q_ns[RTSIM_PATH_RECYCLE][3] = (int64_t)RTSIM_COST_MAX_S * 1000000000 + 1;
    CHECK(refused_with(&c, "costs"));
    c = mq_base();
    c.costs.tick_isr_ns = (int64_t)RTSIM_COST_MAX_S * 1000000000;
    CHECK(rtsim_config_error(&c) == NULL);
    c = base(1 * MS);
    add_driver(&c, 1);
    c.n_sources = 1;
    c.sources[0].isr_per_packet_ns = INT64_MAX - 100;
    CHECK(refused_with(&c, "sources"));
}

/* Hysteresis shares are converted to permille: one far above 1 (or NaN)
 * is refused before the conversion (it was undefined behaviour). */
static void test_hysteresis_share_range(void)
{
    rtsim_config c = mq_base();
    c.mitigation.kind = RTSIM_MIT_HYSTERESIS;
    c.mitigation.block_below = 0.1;
    c.mitigation.unblock_above = 0.3;
    c.mitigation.sleep_ns = 10 * US;
    CHECK(rtsim_config_error(&c) == NULL);
    c.mitigation.block_below = 1e12;
    CHECK(refused_with(&c, "mitigation.block_below"));
    c.mitigation.block_below = NAN;
    CHECK(refused_with(&c, "mitigation.block_below"));
}

/* A flood of more than 900 000 frames runs to its end without an engine error,
 * and every frame is delivered, dropped or still in flight; returns its totals. */
static rtsim_bin check_flood_runs(rtsim_config *c)
{
    rtsim *s;
    run(c, &s);
    CHECK(rtsim_error(s) == NULL);
    rtsim_bin t;
    rtsim_totals(s, &t);
    uint64_t dropped = 0;
    for (unsigned d = 0; d < RTSIM_DROP_COUNT; d++) dropped += t.dropped[d];
    CHECK(t.offered > 900000);
    CHECK_EQ(t.offered, t.delivered + dropped + rtsim_in_flight(s));
    rtsim_destroy(s);
    return t;
}

/* A flood at 1e9 frames/s (the front end's largest rate) on a queue whose
 * packet timer restarts with every frame: one pending NIC event, not one per
 * frame, so the event heap never overflows; frames are conserved. */
static void test_multiqueue_flood_runs(void)
{
    rtsim_config c = mq_base();
    c.flows[0].rate_pps = 1e9;
    c.queue_capacity = 64;
    CHECK(check_flood_runs(&c).irq_raised > 0);
}

/* A packet timer of 1 ns on the second queue under a flood of 1e9 frames/s,
 * while the first queue's timers run: each time the second queue refilled,
 * its earlier expiry superseded the pending NIC event, which stayed in the
 * heap, and the first queue's expiry was pushed again when the early event
 * fired; the superseded events piled up until the heap overflowed ("event
 * heap overflow", found by the campaign of 26 November 2026). */
static void test_multiqueue_superseded_timers(void)
{
    rtsim_config c = mq_base();
    c.flows[0].rate_pps = 20000;
    c.flows[1].rate_pps = 1e9;
    c.nic_queues[1].t_pack_ns = 1;
    check_flood_runs(&c);
}

/* A flood of 1e12 frames/s (a frame every nanosecond) through the receive
 * path with Burst Mitigation and no ISR entry cost: the mitigation re-armed
 * its slice timer for the same expiry at every frame, each re-arm left the
 * cancelled timer event in the heap, and 640 of them overflowed it ("event
 * heap overflow", found by the campaign of 26 November 2026). */
static void test_rearmed_timer_flood(void)
{
    rtsim_config c = rx_base(1 * MS);
    c.costs.isr_entry_exit_ns = 0;
    c.costs.isr_per_packet_ns = 1000;
    c.costs.path_ns[RTSIM_PATH_REJECTED] = 6;
    c.mitigation.kind = RTSIM_MIT_BURST;
    c.mitigation.slice_ns = 100 * US;
    c.mitigation.capacity = 8;
    c.tick_ns = 100 * US;
    add_critical(&c, 5, 100 * US, 30 * US);
    add_driver(&c, 3);
    int f = add_flow(&c, RTSIM_PAT_CONSTANT, 1e12);
    c.flows[f].proto = RTSIM_PROTO_TCP;
    c.flows[f].dst_port = 502;
    check_flood_runs(&c);
}

/* Every cost is refused below zero, not only the ones listed by name: a
 * negative deferred invalidation made the driver finish a packet before it
 * arrived, and its latency wrapped to 2^64 - 7548 ns (found by the campaign
 * of 26 November 2026, through an ASan report). */
static void test_every_cost_non_negative(void)
{
    rtsim_config c = rx_base(1 * MS);
    CHECK(rtsim_config_error(&c) == NULL);
    c.costs.invalidate_deferred_ns = -13168;
    CHECK(refused_with(&c, "costs: must not be negative"));
    c = rx_base(1 * MS);
    c.costs.path_ns[RTSIM_PATH_RECYCLE] = -1;
    CHECK(refused_with(&c, "costs: must not be negative"));
    c = rx_base(1 * MS);
    c.costs.path_q_ns[RTSIM_PATH_REGULAR][3] = -1;
    CHECK(refused_with(&c, "costs: must not be negative"));
}

/* A rate that is not a number is refused, not run: NaN passed the "not
 * negative" check (every comparison with it is false), and an infinite rate
 * in a Poisson schedule drew gaps of 0 ns, so time stood still (the fuzz
 * smoke's input regress-infinite-poisson-rate ran for over 100 s). */
static void test_rates_finite(void)
{
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (unsigned i = 0; i < 3; i++) {
        rtsim_config c = base(1 * MS);
        add_critical(&c, 5, 100 * US, 30 * US);
        add_driver(&c, 3);
        int f = add_flow(&c, RTSIM_PAT_CONSTANT, 1000);
        CHECK(rtsim_config_error(&c) == NULL);
        c.flows[f].rate_pps = bad[i];
        CHECK(refused_with(&c, "flows: rates must be finite"));
        c.flows[f].rate_pps = 1000;
        c.flows[f].pattern = RTSIM_PAT_PIECEWISE;
        c.flows[f].poisson = 1;
        c.flows[f].n_rates = 2;
        c.flows[f].rate_t_ns[0] = 0;
        c.flows[f].rates_pps[0] = 1000;
        c.flows[f].rate_t_ns[1] = 500 * US;
        c.flows[f].rates_pps[1] = 2000;
        CHECK(rtsim_config_error(&c) == NULL);
        c.flows[f].rates_pps[1] = bad[i];
        CHECK(refused_with(&c, "flows.rates: must be finite"));
    }
}

int main(void)
{
    RTS_RUN(test_counts_checked_first);
    RTS_RUN(test_nic_frames_above_size);
    RTS_RUN(test_nic_mapped_port);
    RTS_RUN(test_unknown_protocol);
    RTS_RUN(test_cost_bound);
    RTS_RUN(test_hysteresis_share_range);
    RTS_RUN(test_multiqueue_flood_runs);
    RTS_RUN(test_multiqueue_superseded_timers);
    RTS_RUN(test_rearmed_timer_flood);
    RTS_RUN(test_every_cost_non_negative);
    RTS_RUN(test_rates_finite);
    return rts_test_end();
}
