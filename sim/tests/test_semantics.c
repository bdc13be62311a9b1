/* Review of the engine against ARCHITECTURE.md "The simulator": one small
 * scenario per semantic rule with a hand-computed clock, and conservation
 * invariants (packets, CPU time) over random scenarios. The invariant test
 * reads the engine's internal state (sim.h) to count what is still in
 * flight when the run ends. */
#include <string.h>

#include "sim.h"
#include "sim_test_util.h"

/* Trace records of one kind, in order, into out[0..max). */
static size_t trace_of(rtsim *s, uint32_t kind, rtsim_trace_rec *out, size_t max)
{
    static rtsim_trace_rec all[4096];
    size_t n = rtsim_take_trace(s, all, 4096), k = 0;
    for (size_t i = 0; i < n && k < max; i++)
        if (all[i].kind == kind) out[k++] = all[i];
    return k;
}

/* A preempted task resumes with its remaining work: low task W = 3 ms, high
 * task P = 1 ms W = 100 us, tick every 1 ms costing 1 + 9 us (the tick comes
 * before the release at equal time). First job: low runs 0.1-1, 1.11-2,
 * 2.11-3 and 3.11-3.43 ms. From 10 ms on a tick comes with each release:
 * 10.11-11, 11.11-12, 12.11-13, 13.11-13.44: response 3.44 ms. Exactly 3 ms
 * of CPU per job. */
static void test_preempted_work_resumes(void)
{
    rtsim_config c = base(100 * MS);
    c.tick_ns = 1 * MS;
    c.costs.tick_isr_ns = 9 * US;
    add_periodic(&c, 1, 10 * MS, 3 * MS);
    add_periodic(&c, 2, 1 * MS, 100 * US);
    rtsim *s = make(&c);
    CHECK_EQ(rtsim_run_until(s, 2500 * US), 0);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0], 900 * US + 890 * US + 390 * US);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TICK], 2 * 10 * US);
    CHECK_EQ(rtsim_run_until(s, 1 * MS), 0); /* earlier than now: nothing happens */
    CHECK_EQ(rtsim_now(s), 2500 * US);
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0], 900 * US + 890 * US + 390 * US);
    CHECK_EQ(rtsim_run_until(s, c.duration_ns), 0);
    rtsim_task_stats lo = task_stats(s, 0);
    rtsim_task_stats hi = task_stats(s, 1);
    CHECK_EQ(lo.max_response_ns, 3440 * US);
    CHECK_EQ(lo.jobs, 10);
    CHECK_EQ(lo.cpu_ns, 10 * 3 * MS); /* no work lost or counted twice */
    CHECK_EQ(hi.jobs, 100);
    CHECK_EQ(hi.cpu_ns, 100 * 100 * US);
    CHECK_EQ(hi.max_response_ns, 110 * US); /* tick first, then the job */
    rtsim_destroy(s);
}

/* Interrupts are not nested and each charges entry/exit plus its body: a
 * packet arriving with the tick at 1 ms waits for the tick handler (tick:
 * 2 + 8 us, RX: 2 + 5 us). */
static void test_isr_not_nested_costs_charged(void)
{
    rtsim_config c = base(1500 * US);
    c.tick_ns = 1 * MS;
    c.costs.isr_entry_exit_ns = 2 * US;
    c.costs.tick_isr_ns = 8 * US;
    c.costs.isr_per_packet_ns = 5 * US;
    c.trace_capacity = 4096;
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 1000); /* one arrival, at 1 ms */
    rtsim *s;
    run(&c, &s);
    rtsim_trace_rec all[64], st[8], en[8];
    size_t n = rtsim_take_trace(s, all, 64), ns = 0, ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].kind == RTSIM_TR_ISR_START && ns < 8) st[ns++] = all[i];
        if (all[i].kind == RTSIM_TR_ISR_END && ne < 8) en[ne++] = all[i];
    }
    CHECK_EQ(ns, 2);
    CHECK_EQ(ne, 2);
    CHECK_EQ(st[0].arg, LINE_TICK);
    CHECK_EQ(st[0].t_ns, 1 * MS);
    CHECK_EQ(en[0].t_ns, 1 * MS + 10 * US);
    CHECK_EQ(st[1].arg, LINE_RX);
    CHECK_EQ(st[1].t_ns, 1 * MS + 10 * US); /* after the tick ends, not inside it */
    CHECK_EQ(en[1].t_ns, 1 * MS + 17 * US);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TICK], 10 * US);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_RX], 7 * US);
    rtsim_flow_stats f = flow_stats(s, 0);
    CHECK_EQ(f.latency_max_ns, 17 * US + 1 * US); /* waited, ISR, driver */
    rtsim_destroy(s);
}

/* Periodic cycles: late → the next cycle starts at once; early → sleep to
 * the next period; cycle time = time between consecutive cycle ends. P = 10,
 * W = 4 ms with a higher task taking 8 ms once at 0 (offset 0, P 100 ms):
 * cycle 1 ends at 12 (20 % late, next starts at 12, deadline 22), cycle 2 at
 * 16 (early: sleeps to 22), cycle 3 at 26 (early) ... cycle times 4, 10. */
static void test_periodic_late_then_early(void)
{
    rtsim_config c = base(40 * MS);
    add_critical(&c, 1, 10 * MS, 4 * MS);
    add_periodic(&c, 2, 100 * MS, 8 * MS);
    c.trace_capacity = 4096;
    rtsim *s;
    run(&c, &s);
    rtsim_trace_rec ends[8];
    size_t n = trace_of(s, RTSIM_TR_CYCLE_END, ends, 8);
    const int64_t want_t[] = {8 * MS, 12 * MS, 16 * MS, 26 * MS, 36 * MS};
    const int64_t want_early[] = {92 * MS, -2 * MS, 6 * MS, 6 * MS, 6 * MS};
    const int32_t want_task[] = {1, 0, 0, 0, 0};
    CHECK_EQ(n, 5);
    for (size_t i = 0; i < n && i < 5; i++) {
        CHECK_EQ(ends[i].t_ns, want_t[i]);
        CHECK_EQ(ends[i].value, want_early[i]);
        CHECK_EQ(ends[i].arg, want_task[i]);
    }
    rtsim_task_stats st = task_stats(s, 0);
    CHECK_EQ(st.jobs, 4);
    CHECK_EQ(st.misses, 1);
    CHECK_EQ(st.cycle_min_ns, 4 * MS);
    CHECK_EQ(st.cycle_max_ns, 10 * MS);
    CHECK_EQ((long long)(st.lateness_max_pct * 1000 + 0.5), 20000);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cycles, 4); /* only the critical task's cycles */
    CHECK_EQ(t.misses, 1);
    rtsim_destroy(s);
}

/* DMA ring of 4 descriptors, ISR 100 us whatever it moves, a packet every
 * 10 us. ISR 1 (10-110) moves the packet of 10; arrivals 20-40 fill the ring,
 * 50-100 are dropped. ISR 2 (110-210) moves 3; 120-200 dropped. ISR 3
 * (210-310) moves 1; 240-300 dropped. At 301 us: 30 offered, 22 dropped,
 * 4 received, 4 in the ring. */
static void test_dma_ring_full(void)
{
    rtsim_config c = base(1 * MS);
    c.nic_kind = RTSIM_NIC_DMA_RING;
    c.ring = 4;
    c.costs.isr_entry_exit_ns = 100 * US;
    c.queue_capacity = 1000;
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 100000);
    rtsim *s = make(&c);
    CHECK_EQ(rtsim_run_until(s, 301 * US), 0);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.offered, 30);
    CHECK_EQ(t.dropped[RTSIM_DROP_RING_FULL], 22);
    CHECK_EQ(t.received, 4);
    CHECK_EQ(t.isr_runs, 3);
    CHECK_EQ(s->ring.len, 4);
    rtsim_destroy(s);
}

/* The line is disabled: the first arrival latches the pending bit, later
 * ones are lost and counted; enabling the line runs the latched one. Strict
 * limiter with a 1 ms minimum interarrival: a packet every 100 us from 0.1 ms
 * to 0.95 ms (the limiter disables the line after the first ISR) → at most
 * one latched packet runs when the timer re-enables the line at 1.1 ms. */
static void test_disabled_line_latches_once(void)
{
    rtsim_config c = base(1200 * US);
    c.costs.isr_per_packet_ns = 4 * US;
    c.costs.timer_isr_ns = 3 * US;
    c.queue_capacity = 1000;
    c.mitigation.kind = RTSIM_MIT_STRICT;
    c.mitigation.min_interarrival_ns = 1 * MS;
    add_driver(&c, 1);
    add_two_rate_flow(&c, 10000, 950 * US, 0);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.offered, 9);  /* 0.1 .. 0.9 ms */
    CHECK_EQ(t.isr_runs, 2); /* the first, then the latched one at 1.1 ms */
    CHECK_EQ(t.received, 2);
    CHECK_EQ(t.irq_lost, 7); /* 0.3 .. 0.9 ms: the bit was already set */
    CHECK_EQ(t.dropped[RTSIM_DROP_LINE_DISABLED], 7);
    /* The timer is an interrupt with its own cost: 1 + 3 us at 1.1 ms. */
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TIMER], 4 * US);
    rtsim_mitigation_stats m = mitigation_stats(s);
    CHECK_EQ(m.timer_fires, 1);
    rtsim_destroy(s);
}

/* A rate change takes effect at its change point: a gap drawn at the old
 * rate does not reach into the new interval (docs/model.md "Traffic"). */
static void test_rate_change_point(void)
{
    const struct {
        const char *name;
        double r0, r1;
        int64_t change;
        uint32_t poisson;
        uint64_t first_after; /* first arrival after the change */
    } rows[] = {
        {"slow to fast", 10, 100000, 1 * MS, 0, 1 * MS + 10 * US},
        {"fast to off", 2000, 0, 600 * US, 0, UINT64_MAX},
        {"on the change point", 2000, 1000, 1 * MS, 0, 1 * MS},
        {"poisson slow to fast", 10, 1e6, 1 * MS, 1, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_flow_cfg f = two_rate_flow(rows[i].r0, rows[i].change, rows[i].r1);
        f.poisson = rows[i].poisson;
        sim_flow_gen g;
        flow_gen_init(&g, &f, 7, 0);
        uint64_t t = flow_next_after(&g, 0);
        while (t != UINT64_MAX && t < (uint64_t)rows[i].change)
            t = flow_next_after(&g, t);
        if (rows[i].poisson)
            CHECK(t >= (uint64_t)rows[i].change && t < (uint64_t)rows[i].change + 50 * US);
        else
            CHECK_EQ(t, rows[i].first_after);
    }
}

/* Skipping arrivals by whole repeats (flow_skip_before) gives exactly what
 * walking them one by one gives: the same count, the same first arrival at
 * or after the limit, and the same generator state (so every arrival after
 * it is the same too), for evenly spaced rates with and without a carried
 * fraction, across rate changes, and for Poisson arrivals. */
static void test_skip_equals_walk(void)
{
    const struct {
        const char *name;
        uint32_t pattern, poisson;
        double rate;
    } rows[] = {
        {"constant, whole gap", RTSIM_PAT_CONSTANT, 0, 100000},
        {"constant, fractional gap", RTSIM_PAT_CONSTANT, 0, 130000},
        {"constant, irrational gap", RTSIM_PAT_CONSTANT, 0, 77777.7},
        {"constant, gap just under 2^13 ns", RTSIM_PAT_CONSTANT, 0, 1e9 / 8191.7},
        {"constant, gap below 2 ns", RTSIM_PAT_CONSTANT, 0, 7e8},
        {"piecewise", RTSIM_PAT_PIECEWISE, 0, 0},
        {"piecewise poisson", RTSIM_PAT_PIECEWISE, 1, 0},
        {"poisson", RTSIM_PAT_POISSON, 0, 90000},
    };
    sim_prng r = {11};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_flow_cfg f;
        memset(&f, 0, sizeof f);
        f.pattern = rows[i].pattern;
        f.poisson = rows[i].poisson;
        f.rate_pps = rows[i].rate;
        f.n_rates = 3;
        f.rates_pps[0] = 60000;
        f.rates_pps[1] = 140000;
        f.rates_pps[2] = 33333;
        f.rate_t_ns[1] = 7 * MS + 1;
        f.rate_t_ns[2] = 20 * MS;
        sim_flow_gen walk, skip;
        flow_gen_init(&walk, &f, 5, 0);
        flow_gen_init(&skip, &f, 5, 0);
        uint64_t tw = flow_next_after(&walk, 0), ts = flow_next_after(&skip, 0);
        uint64_t skipped = 0;
        for (int k = 0; k < 400 && tw < 100 * MS; k++) {
            /* A limit from just past the arrival to a few ms later. */
            const uint64_t span = rows[i].rate > 1e7 ? 50 * US : 5 * MS; /* walks stay short */
            const uint64_t limit = tw + 1 + prng_next(&r) % span;
            uint64_t n = 0;
            while (tw < limit) {
                n++;
                tw = flow_next_after(&walk, tw);
            }
            uint64_t m = 0;
            ts = flow_skip_before(&skip, ts, limit, &m);
            CHECK_EQ(ts, tw);
            CHECK_EQ(m, n);
            CHECK(skip.frac == walk.frac);
            CHECK_EQ(skip.rng.s, walk.rng.s);
            skipped += m;
            /* and one arrival by the ordinary step */
            tw = flow_next_after(&walk, tw);
            ts = flow_next_after(&skip, ts);
            CHECK_EQ(ts, tw);
        }
        CHECK(skipped > 1000);
    }
}

/* ----------------------------------------------------------- invariants */

static int64_t rnd_in(sim_prng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(prng_next(r) % (uint64_t)(hi - lo + 1));
}

static rtsim_config random_config(sim_prng *r)
{
    rtsim_config c = base((uint64_t)rnd_in(r, 5, 30) * MS);
    c.bin_ns = (uint64_t)rnd_in(r, 300, 4000) * US + (uint64_t)rnd_in(r, 0, 999);
    c.seed = prng_next(r);
    c.n_cores = (uint32_t)rnd_in(r, 1, 2);
    c.tick_ns = rnd_in(r, 0, 3) * 250 * US;
    c.time_slicing = (uint32_t)rnd_in(r, 0, 1);
    c.nic_kind = (uint32_t)rnd_in(r, 0, 1);
    c.nic_core = (uint32_t)rnd_in(r, 0, (int64_t)c.n_cores - 1);
    c.ring = (uint32_t)rnd_in(r, 1, 32);
    c.queue_capacity = (uint32_t)rnd_in(r, 1, 32);
    rtsim_costs *k = &c.costs;
    k->isr_entry_exit_ns = rnd_in(r, 1, 3000);
    k->isr_per_packet_ns = rnd_in(r, 0, 5000);
    k->driver_per_packet_ns = rnd_in(r, 1, 20000);
    k->tick_isr_ns = rnd_in(r, 0, 5000);
    k->timer_isr_ns = rnd_in(r, 0, 3000);
    k->mitig_isr_ns = rnd_in(r, 0, 500);
    k->mitig_driver_ns = rnd_in(r, 0, 500);
    k->mitig_report_ns = rnd_in(r, 0, 500);
    k->mitig_poll_ns = rnd_in(r, 0, 2000);
    int p = add_task(&c, RTSIM_TASK_PERIODIC, (uint32_t)rnd_in(r, 1, 4), rnd_in(r, 1, 10) * MS, 0);
    c.tasks[p].work_ns = rnd_in(r, 1, c.tasks[p].period_ns * 12 / 10);
    c.tasks[p].critical = 1;
    c.tasks[p].offset_ns = rnd_in(r, 0, 2) * 333 * US;
    c.tasks[p].core = (uint32_t)rnd_in(r, 0, (int64_t)c.n_cores - 1);
    int d = add_task(&c, RTSIM_TASK_DRIVER, (uint32_t)rnd_in(r, 1, 4), 0, 0);
    c.tasks[d].core = (uint32_t)rnd_in(r, 0, (int64_t)c.n_cores - 1);
    if (rnd_in(r, 0, 1)) {
        int b = add_task(&c, RTSIM_TASK_BACKGROUND, 0, 0, 0);
        c.tasks[b].core = (uint32_t)rnd_in(r, 0, (int64_t)c.n_cores - 1);
    }
    if (rnd_in(r, 0, 1)) {
        int p2 = add_task(&c, RTSIM_TASK_PERIODIC, (uint32_t)rnd_in(r, 1, 4), 2 * MS, 0);
        c.tasks[p2].work_ns = rnd_in(r, 1, 1500) * US;
    }
    c.n_flows = (uint32_t)rnd_in(r, 1, 3);
    for (uint32_t i = 0; i < c.n_flows; i++) {
        rtsim_flow_cfg *f = &c.flows[i];
        f->pattern = rnd_in(r, 0, 1) ? RTSIM_PAT_POISSON : RTSIM_PAT_CONSTANT;
        f->rate_pps = (double)rnd_in(r, 1000, 300000);
        f->start_ns = rnd_in(r, 0, 2) * MS;
    }
    if (rnd_in(r, 0, 2) == 0) {
        int w =
            add_task(&c, RTSIM_TASK_WORKER, (uint32_t)rnd_in(r, 0, 4), 0, rnd_in(r, 1, 30) * US);
        c.tasks[w].flow = 0;
        c.tasks[w].mailbox = (uint32_t)rnd_in(r, 1, 8);
        c.tasks[w].core = (uint32_t)rnd_in(r, 0, (int64_t)c.n_cores - 1);
    }
    rtsim_mitigation_cfg *m = &c.mitigation;
    m->kind = (uint32_t)rnd_in(r, 0, 7);
    m->slice_ns = rnd_in(r, 1, 4) * 250 * US;
    m->capacity = (uint32_t)rnd_in(r, 1, 50);
    m->block_below = 0.1 * (double)rnd_in(r, 0, 3);
    m->unblock_above = m->block_below + 0.1 * (double)rnd_in(r, 0, 5);
    m->sleep_ns = rnd_in(r, 50, 2000) * US;
    m->min_interarrival_ns = rnd_in(r, 5, 200) * US;
    m->burst = (uint32_t)rnd_in(r, 1, 20);
    m->period_ns = rnd_in(r, 1, 10) * 250 * US;
    m->window_ns = rnd_in(r, 5, 200) * US;
    if (m->kind == RTSIM_MIT_COUNTDOWN) c.nic_kind = RTSIM_NIC_EDGE;
    return c;
}

/* Packets the engine still holds at the end, by stage. */
typedef struct {
    uint64_t nic;     /* latched on a pending line, in a running RX ISR, in the ring, in a filter */
    uint64_t rxq;     /* in the RX queue or in the driver's hands */
    uint64_t workers; /* in mailboxes or in a worker's hands */
} in_flight;

static in_flight count_in_flight(const rtsim *s)
{
    in_flight f = {0, 0, 0};
    const sim_core *c = &s->core[s->cfg.nic_core];
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        for (uint32_t k = 0; k < rx_sources(s); k++)
            if (c->pending & (1u << (LINE_RX + k))) f.nic++;
        if (c->isr_line >= LINE_RX) f.nic++;
        if ((s->hk.shield.cfg.protections & RTS_SHIELD_COUNTDOWN) && s->hk.shield.countdown.latched)
            f.nic++;
    } else {
        f.nic = s->ring.len;
    }
    f.rxq = s->rxq.len;
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        const sim_task *t = &s->task[i];
        if (t->cfg->kind == RTSIM_TASK_DRIVER && t->has_packet) f.rxq++;
        if (t->cfg->kind == RTSIM_TASK_WORKER)
            f.workers += t->mailbox.len + (t->has_packet ? 1 : 0);
    }
    return f;
}

static void test_conservation_random(void)
{
    sim_prng r = {20261122};
    static rtsim_bin bins[RTSIM_BIN_RING];
    int runs = 0, with_drops = 0, per_kind[8] = {0}, per_nic[2] = {0};
    for (int iter = 0; iter < 300; iter++) {
        rtsim_config c = random_config(&r);
        if (rtsim_config_error(&c) != NULL) continue;
        char name[64];
        snprintf(name, sizeof name, "scenario %d (mitigation %u, nic %u)", iter, c.mitigation.kind,
                 c.nic_kind);
        ROW(name);
        rtsim *s = make(&c);
        runs++;
        per_kind[c.mitigation.kind]++;
        per_nic[c.nic_kind]++;
        /* Stop twice at odd times to check the partial state too. */
        const uint64_t stops[] = {c.duration_ns / 3 + 7, c.duration_ns};
        uint64_t cpu_all = 0;
        for (int k = 0; k < 2; k++) {
            CHECK_EQ(rtsim_run_until(s, stops[k]), 0);
            rtsim_bin t;
            rtsim_totals(s, &t);
            in_flight f = count_in_flight(s);
            const uint64_t *d = t.dropped;
            const bool per_packet = c.mitigation.kind == RTSIM_MIT_BURST;
            uint64_t mit_before = per_packet ? 0 : d[RTSIM_DROP_MITIGATION];
            uint64_t mit_after = per_packet ? d[RTSIM_DROP_MITIGATION] : 0;
            /* NIC: offered = received + lost at the line + ring full +
             * refused before reception + still in the NIC. */
            CHECK_EQ(t.offered, t.received + d[RTSIM_DROP_LINE_DISABLED] +
                                    d[RTSIM_DROP_IRQ_OVERRUN] + d[RTSIM_DROP_RING_FULL] +
                                    mit_before + f.nic);
            if (c.nic_kind == RTSIM_NIC_EDGE)
                CHECK_EQ(t.irq_lost, d[RTSIM_DROP_LINE_DISABLED] + d[RTSIM_DROP_IRQ_OVERRUN]);
            /* Driver: received = processed + queue full + dropped in the ISR
             * + queued or in the driver's hands. */
            CHECK_EQ(t.received, t.processed + d[RTSIM_DROP_QUEUE_FULL] + mit_after + f.rxq);
            /* Delivery: processed = delivered + mailbox full + with workers. */
            CHECK_EQ(t.processed, t.delivered + d[RTSIM_DROP_MAILBOX_FULL] + f.workers);
            uint64_t fo = 0, fd = 0, fx = 0, dsum = 0;
            for (uint32_t i = 0; i < c.n_flows; i++) {
                rtsim_flow_stats fs = flow_stats(s, i);
                fo += fs.offered;
                fd += fs.delivered;
                fx += fs.dropped;
            }
            for (int i = 0; i < RTSIM_DROP_COUNT; i++)
                dsum += d[i];
            CHECK_EQ(fo, t.offered);
            CHECK_EQ(fd, t.delivered);
            CHECK_EQ(fx, dsum);
            /* The totals' per-flow counts are the flows' own. */
            for (uint32_t i = 0; i < c.n_flows; i++) {
                rtsim_flow_stats fs = flow_stats(s, i);
                CHECK_EQ(t.flow_offered[i], fs.offered);
                CHECK_EQ(t.flow_delivered[i], fs.delivered);
            }
            /* CPU: every core's contexts add up to the elapsed time. */
            uint64_t cpu = 0;
            for (int i = 0; i < RTSIM_CTX_COUNT; i++)
                cpu += t.cpu_ns[i];
            CHECK_EQ(cpu, c.n_cores * stops[k]); /* mid-run too */
            if (t.offered > 0 && dsum > 0) with_drops += k;
        }
        /* Bins partition time: each bin's CPU = its length x cores. */
        size_t nb = rtsim_take_bins(s, bins, RTSIM_BIN_RING);
        CHECK_EQ(nb, (c.duration_ns + c.bin_ns - 1) / c.bin_ns);
        for (size_t i = 0; i < nb; i++) {
            uint64_t end = i + 1 < nb ? bins[i + 1].t_start_ns : c.duration_ns;
            CHECK_EQ(bins[i].t_start_ns, i * c.bin_ns);
            uint64_t cpu = 0;
            for (int j = 0; j < RTSIM_CTX_COUNT; j++)
                cpu += bins[i].cpu_ns[j];
            CHECK_EQ(cpu, (end - bins[i].t_start_ns) * c.n_cores);
            cpu_all += cpu;
            /* Each bin's packets, split by flow, add up to the bin's. */
            uint64_t bo = 0, bd = 0;
            for (uint32_t j = 0; j < RTSIM_MAX_FLOWS; j++) {
                bo += bins[i].flow_offered[j];
                bd += bins[i].flow_delivered[j];
            }
            CHECK_EQ(bo, bins[i].offered);
            CHECK_EQ(bd, bins[i].delivered);
        }
        CHECK_EQ(cpu_all, c.n_cores * c.duration_ns);
        rtsim_destroy(s);
    }
    ROW("conservation: enough scenarios ran");
    CHECK(runs >= 200);
    CHECK(with_drops >= 20); /* the invariants were exercised with losses */
    for (int k = 0; k < 8; k++)
        CHECK(per_kind[k] >= 10); /* every mitigation */
    CHECK(per_nic[0] >= 50 && per_nic[1] >= 50);
}

/* The countdown filter sits in front of the edge NIC's line; with the DMA
 * ring it would never be called, so the configuration is refused. */
static void test_countdown_needs_edge_nic(void)
{
    rtsim_config c = base(1 * MS);
    c.nic_kind = RTSIM_NIC_DMA_RING;
    c.ring = 8;
    c.mitigation.kind = RTSIM_MIT_COUNTDOWN;
    c.mitigation.window_ns = 10 * US;
    add_driver(&c, 1);
    const char *e = rtsim_config_error(&c);
    CHECK(e != NULL && strncmp(e, "mitigation.kind", 15) == 0);
    c.nic_kind = RTSIM_NIC_EDGE;
    CHECK(rtsim_config_error(&c) == NULL);
}

/* With RX sources, each source's own ISR cost is the one that must be
 * positive (costs.isr_per_packet is not used then). */
static void test_source_isr_cost_checked(void)
{
    const struct {
        const char *name;
        int64_t entry, global, source;
        int ok;
    } rows[] = {
        {"source cost only", 0, 0, 5 * US, 1},
        {"zero-cost source, global cost unused", 0, 5 * US, 0, 0},
        {"entry cost alone", 1 * US, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_config c = base(1 * MS);
        c.costs.isr_entry_exit_ns = rows[i].entry;
        c.costs.isr_per_packet_ns = rows[i].global;
        c.n_sources = 1;
        c.sources[0].isr_per_packet_ns = rows[i].source;
        add_driver(&c, 1);
        c.n_flows = 1;
        c.flows[0].rate_pps = 1000;
        const char *e = rtsim_config_error(&c);
        if (rows[i].ok)
            CHECK(e == NULL);
        else
            CHECK(e != NULL && strncmp(e, "sources:", 8) == 0);
    }
}

int main(void)
{
    RTS_RUN(test_preempted_work_resumes);
    RTS_RUN(test_isr_not_nested_costs_charged);
    RTS_RUN(test_periodic_late_then_early);
    RTS_RUN(test_dma_ring_full);
    RTS_RUN(test_disabled_line_latches_once);
    RTS_RUN(test_rate_change_point);
    RTS_RUN(test_skip_equals_walk);
    RTS_RUN(test_conservation_random);
    RTS_RUN(test_countdown_needs_edge_nic);
    RTS_RUN(test_source_isr_cost_checked);
    return rts_test_end();
}
