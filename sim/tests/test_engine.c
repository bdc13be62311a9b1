/* Small scenarios with hand-computed outcomes: the simulated clock, event
 * ordering ties, preemption, round robin, lost interrupts, lateness. */
#include <string.h>

#include "event_queue.h"
#include "sim_test_util.h"

static void test_event_order_ties(void)
{
    sim_event_queue q;
    CHECK(evq_init(&q, 8));
    evq_push(&q, 5, 2, 10, 0, 0);
    evq_push(&q, 5, 1, 11, 0, 0);
    evq_push(&q, 5, 2, 12, 0, 0);
    evq_push(&q, 3, 9, 13, 0, 0);
    evq_push(&q, 5, 1, 14, 0, 0);
    const uint32_t want[] = {13, 11, 14, 10, 12};
    for (int i = 0; i < 5; i++) {
        sim_event e;
        CHECK(evq_pop(&q, &e));
        CHECK_EQ(e.type, want[i]);
    }
    sim_event e;
    CHECK(!evq_pop(&q, &e));
    evq_free(&q);
}

static void test_lone_periodic_exact_cycles(void)
{
    rtsim_config c = base(100 * MS);
    add_periodic(&c, 3, 10 * MS, 3 * MS);
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats st = task_stats(s, 0);
    CHECK_EQ(st.jobs, 10);
    CHECK_EQ(st.misses, 0);
    CHECK_EQ(st.max_response_ns, 3 * MS);
    CHECK_EQ(st.cycle_min_ns, 10 * MS);
    CHECK_EQ(st.cycle_max_ns, 10 * MS);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0], 30 * MS);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_IDLE], 70 * MS);
    static uint64_t h[RTSIM_HIST_BINS];
    rtsim_hist_cycle(s, h, RTSIM_HIST_BINS);
    CHECK_EQ(h[rtsim_hist_index(10 * MS)], 9);
    rtsim_destroy(s);
}

static void test_tick_cost_stretches_work(void)
{
    /* Ticks at 1, 2, 3 ms each cost 10 us: the 3 ms job ends at 3.03 ms. */
    rtsim_config c = base(10 * MS);
    c.tick_ns = 1 * MS;
    c.costs.isr_entry_exit_ns = 4 * US;
    c.costs.tick_isr_ns = 6 * US;
    add_periodic(&c, 3, 10 * MS, 3 * MS);
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats st = task_stats(s, 0);
    CHECK_EQ(st.max_response_ns, 3 * MS + 30 * US);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TICK], 9 * 10 * US);
    rtsim_destroy(s);
}

static void test_preemption(void)
{
    rtsim_config c = base(20 * MS);
    add_periodic(&c, 1, 10 * MS, 5 * MS);
    add_periodic(&c, 2, 10 * MS, 2 * MS);
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats lo = task_stats(s, 0);
    rtsim_task_stats hi = task_stats(s, 1);
    CHECK_EQ(hi.max_response_ns, 2 * MS);
    CHECK_EQ(lo.max_response_ns, 7 * MS);
    rtsim_destroy(s);
}

/* Two equal tasks of 3 ms, a tick every ms costing nothing. Round robin
 * happens on the tick only, and only with time slicing on. With one packet
 * at 0.5 ms whose ISR (10 us) does all the work, the interrupt's return does
 * not rotate: slicing on, A 0-1 (less 10 us), B 1-2, A 2-3, B 3-4, A 4-5,
 * B 5-6 (done), A 6-6.01; off (or no tick): A ends at 3.01, B at 6.01. */
static void test_round_robin(void)
{
    const struct {
        const char *name;
        uint32_t slicing, packet;
        int64_t tick;
        int64_t a_resp, b_resp;
    } rows[] = {
        {"time slicing on", 1, 0, 1 * MS, 5 * MS, 6 * MS},
        {"time slicing off", 0, 0, 1 * MS, 3 * MS, 6 * MS},
        {"interrupt return mid-slice, slicing on", 1, 1, 1 * MS, 6 * MS + 10 * US, 6 * MS},
        {"interrupt return, slicing off", 0, 1, 1 * MS, 3 * MS + 10 * US, 6 * MS + 10 * US},
        {"interrupt return, slicing on, no tick", 1, 1, 0, 3 * MS + 10 * US, 6 * MS + 10 * US},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_config c = base(10 * MS);
        c.tick_ns = rows[i].tick;
        c.costs.isr_entry_exit_ns = 0;
        c.time_slicing = rows[i].slicing;
        add_periodic(&c, 2, 10 * MS, 3 * MS);
        add_periodic(&c, 2, 10 * MS, 3 * MS);
        if (rows[i].packet) {
            c.n_sources = 1;
            c.sources[0].isr_per_packet_ns = 10 * US;
            c.sources[0].isr_only = 1;
            add_two_rate_flow(&c, 2000, 600 * US, 0); /* first gap 0.5 ms */
        }
        rtsim *s;
        rtsim_bin t = run_totals(&c, &s);
        CHECK_EQ(t.delivered, rows[i].packet);
        rtsim_task_stats a = task_stats(s, 0);
        rtsim_task_stats b = task_stats(s, 1);
        CHECK_EQ(a.max_response_ns, rows[i].a_resp);
        CHECK_EQ(b.max_response_ns, rows[i].b_resp);
        rtsim_destroy(s);
    }
}

static void test_lateness_accounting(void)
{
    /* W = 15 ms, P = 10 ms alone: every cycle is 50 % late and the next one
     * starts at once; cycles end at 15, 30, ..., 90 ms. */
    rtsim_config c = base(100 * MS);
    add_periodic(&c, 1, 10 * MS, 15 * MS);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.cycles, 6);
    CHECK_EQ(t.misses, 6);
    CHECK_EQ((long long)(t.lateness_pct * 1000 + 0.5), 300000);
    CHECK_EQ((long long)(t.lateness_max_pct * 1000 + 0.5), 50000);
    rtsim_task_stats st = task_stats(s, 0);
    CHECK_EQ(st.cycle_min_ns, 15 * MS);
    rtsim_destroy(s);
}

static void test_lost_interrupts(void)
{
    /* A packet every 4 us, an RX ISR of 10 us: the line latches one arrival
     * while the handler runs; the others are lost. 1 ms: 250 arrivals. */
    rtsim_config c = base(1 * MS);
    c.costs.isr_entry_exit_ns = 2 * US;
    c.costs.isr_per_packet_ns = 8 * US;
    c.queue_capacity = 1000;
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 250000);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.offered, 249); /* arrivals at 4, 8, ..., 996 us */
    CHECK_EQ(t.irq_raised, t.offered);
    /* ISRs back to back from 4 us: they end at 14, 24, ..., 994 us. */
    CHECK_EQ(t.isr_runs, 100);
    CHECK_EQ(t.received, 99);
    CHECK_EQ(t.irq_lost + t.isr_runs + 1, t.offered); /* one latched at the end */
    CHECK_EQ(t.dropped[RTSIM_DROP_IRQ_OVERRUN], t.irq_lost);
    CHECK_EQ(t.processed, 0); /* the driver never gets the CPU */
    rtsim_destroy(s);
}

/* The device of the latency tests: its ISR costs 5 us a packet (1 us entry and
 * exit, 4 us per packet), its driver 20 us. */
static rtsim_config isr5_driver20(uint64_t duration_ns)
{
    rtsim_config c = base(duration_ns);
    c.costs.isr_entry_exit_ns = 1 * US;
    c.costs.isr_per_packet_ns = 4 * US;
    c.costs.driver_per_packet_ns = 20 * US;
    return c;
}

static void test_queue_and_driver(void)
{
    /* 10 kpps for 10 ms, ISR 5 us, driver 20 us: the driver keeps up and
     * every packet's latency is ISR + driver = 25 us. */
    rtsim_config c = isr5_driver20(10 * MS);
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 10000);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.offered, 99);
    CHECK_EQ(t.received, 99);
    CHECK_EQ(t.processed, 99);
    rtsim_flow_stats f = flow_stats(s, 0);
    CHECK_EQ(f.latency_max_ns, 25 * US);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_RX], 99 * 5 * US);
    rtsim_destroy(s);
}

static void test_queue_full_drops(void)
{
    /* The driver has lower priority than a task that never sleeps in the
     * first 5 ms: the queue of 16 fills and later packets are dropped. */
    rtsim_config c = base(5 * MS);
    add_driver(&c, 1);
    add_periodic(&c, 2, 10 * MS, 8 * MS);
    add_flow(&c, RTSIM_PAT_CONSTANT, 10000);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.received, t.offered);
    CHECK_EQ(t.received - t.dropped[RTSIM_DROP_QUEUE_FULL], 16);
    rtsim_destroy(s);
}

static void test_bins_and_determinism(void)
{
    rtsim_config c = base(50 * MS);
    c.bin_ns = 10 * MS;
    c.tick_ns = 1 * MS;
    c.time_slicing = 1;
    add_periodic(&c, 2, 10 * MS, 4 * MS);
    add_driver(&c, 2);
    add_flow(&c, RTSIM_PAT_POISSON, 50000);
    rtsim_bin b1[8], b2[8];
    rtsim *s;
    run(&c, &s);
    size_t n1 = rtsim_take_bins(s, b1, 8);
    rtsim_destroy(s);
    s = rtsim_create(&c);
    for (int k = 1; k <= 5; k++)
        rtsim_run_until(s, (uint64_t)k * 7 * MS);
    rtsim_run_until(s, c.duration_ns);
    size_t n2 = rtsim_take_bins(s, b2, 8);
    rtsim_destroy(s);
    CHECK_EQ(n1, 5);
    CHECK_EQ(n2, 5);
    CHECK(memcmp(b1, b2, sizeof b1[0] * 5) == 0);
    CHECK_EQ(b1[3].t_start_ns, 30 * MS);
    uint64_t sum = 0;
    for (int i = 0; i < 5; i++)
        sum += b1[i].offered;
    CHECK(sum > 2000 && sum < 3000); /* 50 kpps for 50 ms */
}

static void test_two_cores_and_background(void)
{
    /* An RX flood on core 0 (ISR 8 us at 100 kpps = 80 %) does not touch the
     * periodic task pinned to core 1; the background task on core 0 gets
     * what the ISRs and the driver leave. */
    rtsim_config c = base(100 * MS);
    c.n_cores = 2;
    c.costs.isr_entry_exit_ns = 2 * US;
    c.costs.isr_per_packet_ns = 6 * US;
    c.costs.driver_per_packet_ns = 1 * US;
    c.queue_capacity = 1000;
    int p = add_periodic(&c, 5, 10 * MS, 3 * MS);
    c.tasks[p].core = 1;
    add_driver(&c, 2);
    rtsim_task_cfg *bg = &c.tasks[c.n_tasks++];
    bg->kind = RTSIM_TASK_BACKGROUND;
    bg->priority = 0;
    add_flow(&c, RTSIM_PAT_CONSTANT, 100000);
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats st = task_stats(s, (uint32_t)p);
    CHECK_EQ(st.max_response_ns, 3 * MS);
    CHECK_EQ(st.jobs, 10);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_IDLE_CORE1], 70 * MS);
    /* core 0: 9999 packets x (8 + 1) us; the rest is background, never idle */
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_IDLE], 0);
    uint64_t busy = t.cpu_ns[RTSIM_CTX_ISR_RX] + t.cpu_ns[RTSIM_CTX_TASK0 + 1];
    CHECK(busy >= 9998 * 9 * US && busy <= 10000 * 9 * US);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0 + 2] + busy, 100 * MS);
    rtsim_destroy(s);
}

static void test_worker_receives_its_flow(void)
{
    /* Driver 20 us, then the flow's worker 30 us per message at a priority
     * between the driver and idle: 10 kpps, so each packet is done before
     * the next arrives; latency = ISR 5 + driver 20 + worker 30 us. A second
     * run with a 2-message mailbox and a slow worker (150 us) drops. */
    const struct {
        const char *name;
        int64_t work;
        uint64_t delivered, mailbox_drops, lat_max;
    } rows[] = {
        {"worker keeps up", 30 * US, 99, 0, 55 * US},
        {"worker too slow", 150 * US, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_config c = isr5_driver20(10 * MS);
        add_driver(&c, 3);
        add_worker(&c, 2, 0, 2, rows[i].work);
        add_flow(&c, RTSIM_PAT_CONSTANT, 10000);
        rtsim *s;
        rtsim_bin t = run_totals(&c, &s);
        rtsim_flow_stats f = flow_stats(s, 0);
        CHECK_EQ(t.processed, 99);
        if (rows[i].mailbox_drops == 0) {
            CHECK_EQ(t.delivered, rows[i].delivered);
            CHECK_EQ(t.dropped[RTSIM_DROP_MAILBOX_FULL], 0);
            CHECK_EQ(f.latency_max_ns, rows[i].lat_max);
        } else {
            /* 150 us per message against 100 us between them: the mailbox
             * fills and about a third of the messages are dropped. */
            CHECK(t.dropped[RTSIM_DROP_MAILBOX_FULL] > 25);
            CHECK(t.delivered + t.dropped[RTSIM_DROP_MAILBOX_FULL] + 3 >= 99);
            CHECK(t.delivered + t.dropped[RTSIM_DROP_MAILBOX_FULL] <= 99);
        }
        rtsim_destroy(s);
    }
}

static void test_driver_on_another_core(void)
{
    /* The NIC interrupts core 0; the driver runs on core 1 and is woken
     * there at once: latency = ISR 5 us + driver 20 us, and core 0 stays
     * free for its periodic task. */
    rtsim_config c = isr5_driver20(10 * MS);
    c.n_cores = 2;
    int d = add_driver(&c, 1);
    c.tasks[d].core = 1;
    add_periodic(&c, 1, 10 * MS, 1 * MS);
    add_flow(&c, RTSIM_PAT_CONSTANT, 10000);
    rtsim *s;
    run(&c, &s);
    rtsim_flow_stats f = flow_stats(s, 0);
    CHECK_EQ(f.delivered, 99);
    CHECK_EQ(f.latency_max_ns, 25 * US);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0 + (uint32_t)d], 99 * 20 * US);
    rtsim_destroy(s);
}

static void test_trace_of_one_packet(void)
{
    /* 1 kpps for 1.5 ms: one packet at 1 ms; ISR 5 us, driver 20 us. */
    rtsim_config c = isr5_driver20(1500 * US);
    c.trace_capacity = 64;
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 1000);
    rtsim *s;
    run(&c, &s);
    rtsim_trace_rec r[16];
    size_t n = rtsim_take_trace(s, r, 16);
    const struct {
        uint64_t t;
        uint32_t kind;
        int32_t arg;
        int64_t value;
    } want[] = {
        {0, RTSIM_TR_LINE, 9, 1}, /* the driver enables its RX line */
        {1 * MS, RTSIM_TR_ARRIVAL, 0, 0},
        {1 * MS, RTSIM_TR_ISR_START, 9, 0},
        {1 * MS + 5 * US, RTSIM_TR_ISR_END, 9, 0},
        {1 * MS + 5 * US, RTSIM_TR_RUN, 0, 0},
        {1 * MS + 25 * US, RTSIM_TR_DELIVER, 0, 25 * US},
        {1 * MS + 25 * US, RTSIM_TR_RUN, -1, 0},
    };
    CHECK_EQ(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n && i < sizeof want / sizeof want[0]; i++) {
        CHECK_EQ(r[i].t_ns, want[i].t);
        CHECK_EQ(r[i].kind, want[i].kind);
        CHECK_EQ(r[i].arg, want[i].arg);
        CHECK_EQ(r[i].value, want[i].value);
    }
    CHECK_EQ(rtsim_trace_lost(s), 0);
    rtsim_destroy(s);
    c.trace_capacity = 2;
    run(&c, &s);
    CHECK_EQ(rtsim_take_trace(s, r, 16), 2);
    CHECK_EQ(rtsim_trace_lost(s), 5);
    rtsim_destroy(s);
}

static void test_histogram_bins(void)
{
    /* Exact below 1024 ns; then every bin holds [lower(i), lower(i+1)) and
     * is at most 0.1 % wide. */
    const uint64_t vals[] = {0,    1,    1023,     1024,      1025,      2047,
                             2048, 9999, 10000000, 123456789, 1ull << 44};
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        uint32_t i = rtsim_hist_index(vals[k]);
        CHECK(rtsim_hist_lower_ns(i) <= vals[k]);
        CHECK(rtsim_hist_lower_ns(i + 1) > vals[k]);
        if (vals[k] < 1024) CHECK_EQ(rtsim_hist_lower_ns(i), vals[k]);
        uint64_t w = rtsim_hist_lower_ns(i + 1) - rtsim_hist_lower_ns(i);
        CHECK(w * 1000 <= vals[k] + 1000);
    }
    CHECK_EQ(rtsim_hist_index(1ull << 50), RTSIM_HIST_BINS - 1);
    /* Every value maps to the bin whose edges bracket it, across octaves. */
    for (uint64_t v = 1000; v < (1ull << 40); v = v * 3 + 7) {
        const uint32_t i = rtsim_hist_index(v);
        CHECK(rtsim_hist_lower_ns(i) <= v && v < rtsim_hist_lower_ns(i + 1));
    }
    /* The edges of a range in one call are the edges bin by bin. */
    static uint64_t edges[3000];
    CHECK_EQ(rtsim_hist_edges_ns(900, edges, 3000), 3000);
    for (uint32_t k = 0; k < 3000; k++)
        CHECK_EQ(edges[k], rtsim_hist_lower_ns(900 + k));
    CHECK_EQ(rtsim_hist_edges_ns(0, NULL, 5), 0);
}

/* rtsim_create() sizes the bin ring by the run's bins and allocates latency
 * histograms for the configured flows only; what callers read must be what
 * full-size ones gave. */
static void test_sized_by_configuration(void)
{
    /* 7 bins, none taken until the end: all 7 are there, in order. */
    rtsim_config c = base(7 * MS);
    c.bin_ns = 1 * MS;
    rtsim *s = rtsim_create(&c);
    CHECK(s != NULL);
    CHECK_EQ(rtsim_run_until(s, c.duration_ns), 0);
    rtsim_bin b[16];
    CHECK_EQ(rtsim_take_bins(s, b, 16), 7);
    for (int i = 0; i < 7; i++)
        CHECK_EQ(b[i].t_start_ns, (uint64_t)i * MS);
    rtsim_destroy(s);
    /* Partial bin at the end (7.5 ms in 1 ms bins: 8 bins), taken in two
     * chunks. */
    c = base(7 * MS + 500 * US);
    c.bin_ns = 1 * MS;
    s = rtsim_create(&c);
    CHECK_EQ(rtsim_run_until(s, 3 * MS + 1), 0);
    CHECK_EQ(rtsim_take_bins(s, b, 16), 3);
    CHECK_EQ(rtsim_run_until(s, c.duration_ns), 0);
    CHECK_EQ(rtsim_take_bins(s, b, 16), 5);
    CHECK_EQ(b[4].t_start_ns, 7 * MS);
    rtsim_destroy(s);
    /* More bins than the ring holds, never taken: the run still stops at
     * the ring's size, RTSIM_BIN_RING. */
    c = base((RTSIM_BIN_RING + 10) * US);
    c.bin_ns = 1 * US;
    s = rtsim_create(&c);
    CHECK_EQ(rtsim_run_until(s, c.duration_ns), -1);
    CHECK(rtsim_error(s) != NULL);
    CHECK_EQ(rtsim_take_bins(s, b, 1), 1);
    CHECK_EQ(b[0].t_start_ns, 0);
    rtsim_destroy(s);

    /* Histograms read in full: every bin written (the caller's junk
     * overwritten), the counts all there. */
    static uint64_t h[RTSIM_HIST_BINS];
    c = isr5_driver20(10 * MS);
    add_periodic(&c, 3, 1 * MS, 100 * US);
    add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 10000);
    add_flow(&c, RTSIM_PAT_CONSTANT, 1000);
    run(&c, &s);
    for (uint32_t f = 0; f < 2; f++) {
        memset(h, 0xA5, sizeof h);
        CHECK_EQ(rtsim_hist_latency(s, f, h, RTSIM_HIST_BINS), RTSIM_HIST_BINS);
        rtsim_flow_stats fs;
        rtsim_flow_stats_get(s, f, &fs);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < RTSIM_HIST_BINS; i++)
            sum += h[i];
        CHECK(fs.delivered > 0);
        CHECK_EQ(sum, fs.delivered);
        CHECK(h[rtsim_hist_index(fs.latency_max_ns)] > 0);
    }
    CHECK_EQ(rtsim_hist_latency(s, 2, h, RTSIM_HIST_BINS), 0); /* no such flow */
    memset(h, 0xA5, sizeof h);
    CHECK_EQ(rtsim_hist_cycle(s, h, RTSIM_HIST_BINS), RTSIM_HIST_BINS);
    rtsim_task_stats st;
    rtsim_task_stats_get(s, 0, &st);
    uint64_t cycles = 0;
    for (uint32_t i = 0; i < RTSIM_HIST_BINS; i++)
        cycles += h[i];
    CHECK_EQ(cycles, st.jobs - 1); /* a cycle time between two finishes */
    rtsim_destroy(s);
}

static void test_bad_config(void)
{
    rtsim_config c = base(10 * MS);
    c.n_cores = 0;
    CHECK(rtsim_config_error(&c) != NULL);
    CHECK(rtsim_create(&c) == NULL);
    c = base(10 * MS);
    c.n_flows = 1;
    c.flows[0].rate_pps = 1;
    CHECK(rtsim_config_error(&c) != NULL); /* traffic without a driver */
}

int main(void)
{
    RTS_RUN(test_event_order_ties);
    RTS_RUN(test_lone_periodic_exact_cycles);
    RTS_RUN(test_tick_cost_stretches_work);
    RTS_RUN(test_preemption);
    RTS_RUN(test_round_robin);
    RTS_RUN(test_lateness_accounting);
    RTS_RUN(test_lost_interrupts);
    RTS_RUN(test_queue_and_driver);
    RTS_RUN(test_queue_full_drops);
    RTS_RUN(test_bins_and_determinism);
    RTS_RUN(test_two_cores_and_background);
    RTS_RUN(test_worker_receives_its_flow);
    RTS_RUN(test_driver_on_another_core);
    RTS_RUN(test_trace_of_one_packet);
    RTS_RUN(test_histogram_bins);
    RTS_RUN(test_sized_by_configuration);
    RTS_RUN(test_bad_config);
    return rts_test_end();
}
