/* Small scenarios with hand-computed outcomes: the simulated clock, event
 * ordering ties, preemption, round robin, lost interrupts, lateness. */
#include <string.h>

#include "event_queue.h"
#include "rts_test.h"
#include "rtsim/rtsim.h"

#define MS 1000000LL
#define US 1000LL

static rtsim_config base(uint64_t duration_ns)
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

static int add_periodic(rtsim_config *c, uint32_t prio, int64_t period, int64_t work)
{
    rtsim_task_cfg *t = &c->tasks[c->n_tasks];
    t->kind = RTSIM_TASK_PERIODIC;
    t->priority = prio;
    t->period_ns = period;
    t->work_ns = work;
    return (int)c->n_tasks++;
}

static int add_driver(rtsim_config *c, uint32_t prio)
{
    rtsim_task_cfg *t = &c->tasks[c->n_tasks];
    t->kind = RTSIM_TASK_DRIVER;
    t->priority = prio;
    return (int)c->n_tasks++;
}

static void run(rtsim_config *c, rtsim **out)
{
    *out = rtsim_create(c);
    CHECK(*out != NULL);
    if (*out == NULL) {
        fprintf(stderr, "config: %s\n", rtsim_config_error(c));
        exit(1);
    }
    CHECK_EQ(rtsim_run_until(*out, c->duration_ns), 0);
}

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
    rtsim_task_stats st;
    rtsim_task_stats_get(s, 0, &st);
    CHECK_EQ(st.jobs, 10);
    CHECK_EQ(st.misses, 0);
    CHECK_EQ(st.max_response_ns, 3 * MS);
    CHECK_EQ(st.cycle_min_ns, 10 * MS);
    CHECK_EQ(st.cycle_max_ns, 10 * MS);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_TASK0], 30 * MS);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_IDLE], 70 * MS);
    uint64_t h[RTSIM_HIST_BINS];
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
    rtsim_task_stats st;
    rtsim_task_stats_get(s, 0, &st);
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
    rtsim_task_stats lo, hi;
    rtsim_task_stats_get(s, 0, &lo);
    rtsim_task_stats_get(s, 1, &hi);
    CHECK_EQ(hi.max_response_ns, 2 * MS);
    CHECK_EQ(lo.max_response_ns, 7 * MS);
    rtsim_destroy(s);
}

static void test_round_robin(void)
{
    const struct {
        const char *name;
        uint32_t slicing;
        int64_t a_resp, b_resp;
    } rows[] = {
        {"time slicing on", 1, 5 * MS, 6 * MS},
        {"time slicing off", 0, 3 * MS, 6 * MS},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rtsim_config c = base(10 * MS);
        c.tick_ns = 1 * MS;
        c.costs.isr_entry_exit_ns = 0;
        c.time_slicing = rows[i].slicing;
        add_periodic(&c, 2, 10 * MS, 3 * MS);
        add_periodic(&c, 2, 10 * MS, 3 * MS);
        rtsim *s;
        run(&c, &s);
        rtsim_task_stats a, b;
        rtsim_task_stats_get(s, 0, &a);
        rtsim_task_stats_get(s, 1, &b);
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
    run(&c, &s);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.cycles, 6);
    CHECK_EQ(t.misses, 6);
    CHECK_EQ((long long)(t.lateness_pct * 1000 + 0.5), 300000);
    CHECK_EQ((long long)(t.lateness_max_pct * 1000 + 0.5), 50000);
    rtsim_task_stats st;
    rtsim_task_stats_get(s, 0, &st);
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
    c.n_flows = 1;
    c.flows[0].pattern = RTSIM_PAT_CONSTANT;
    c.flows[0].rate_pps = 250000;
    rtsim *s;
    run(&c, &s);
    rtsim_bin t;
    rtsim_totals(s, &t);
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

static void test_queue_and_driver(void)
{
    /* 10 kpps for 10 ms, ISR 5 us, driver 20 us: the driver keeps up and
     * every packet's latency is ISR + driver = 25 us. */
    rtsim_config c = base(10 * MS);
    c.costs.isr_entry_exit_ns = 1 * US;
    c.costs.isr_per_packet_ns = 4 * US;
    c.costs.driver_per_packet_ns = 20 * US;
    add_driver(&c, 1);
    c.n_flows = 1;
    c.flows[0].pattern = RTSIM_PAT_CONSTANT;
    c.flows[0].rate_pps = 10000;
    rtsim *s;
    run(&c, &s);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.offered, 99);
    CHECK_EQ(t.received, 99);
    CHECK_EQ(t.processed, 99);
    rtsim_flow_stats f;
    rtsim_flow_stats_get(s, 0, &f);
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
    c.n_flows = 1;
    c.flows[0].pattern = RTSIM_PAT_CONSTANT;
    c.flows[0].rate_pps = 10000;
    rtsim *s;
    run(&c, &s);
    rtsim_bin t;
    rtsim_totals(s, &t);
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
    c.n_flows = 1;
    c.flows[0].pattern = RTSIM_PAT_POISSON;
    c.flows[0].rate_pps = 50000;
    rtsim_bin b1[8], b2[8];
    rtsim *s;
    run(&c, &s);
    size_t n1 = rtsim_take_bins(s, b1, 8);
    rtsim_destroy(s);
    s = rtsim_create(&c);
    for (int k = 1; k <= 5; k++) rtsim_run_until(s, (uint64_t)k * 7 * MS);
    rtsim_run_until(s, c.duration_ns);
    size_t n2 = rtsim_take_bins(s, b2, 8);
    rtsim_destroy(s);
    CHECK_EQ(n1, 5);
    CHECK_EQ(n2, 5);
    CHECK(memcmp(b1, b2, sizeof b1[0] * 5) == 0);
    CHECK_EQ(b1[3].t_start_ns, 30 * MS);
    uint64_t sum = 0;
    for (int i = 0; i < 5; i++) sum += b1[i].offered;
    CHECK(sum > 2000 && sum < 3000); /* 50 kpps for 50 ms */
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
    RTS_RUN(test_bad_config);
    return rts_test_end();
}
