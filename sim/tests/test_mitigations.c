/* Each mitigation wired into the engine: the interrupt rate or the CPU
 * share it promises, measured on small scenarios. The decisions themselves
 * are libshield's (tested there); these tests check the hook points. */
#include "sim_test_util.h"

/* One core, a tick every ms with time slicing, a critical task of 4 ms per
 * 10 ms above the driver, a queue of 100, ISR 5 us and driver 10 us a packet,
 * and one constant flood of `pps` under `mitigation`. */
static rtsim_config flood(uint64_t duration_ns, double pps, uint32_t mitigation)
{
    rtsim_config c = flood_device(&(flood_spec){
        .duration_ns = duration_ns, .tick_ns = 1 * MS, .queue_capacity = 100,
        .costs = {.isr_entry_exit_ns = 2 * US, .isr_per_packet_ns = 3 * US,
                  .driver_per_packet_ns = 10 * US, .timer_isr_ns = 1 * US},
        .critical = {.priority = 3, .period_ns = 10 * MS, .work_ns = 4 * MS},
        .driver_priority = 2, .pps = pps});
    c.seed = 0;
    c.time_slicing = 1;
    c.mitigation.kind = mitigation;
    return c;
}

static void test_strict_limits_the_interrupt_rate(void)
{
    /* 100 kpps against a minimum interarrival of 100 us: at most 10 kHz. */
    rtsim_config c = flood(100 * MS, 100000, RTSIM_MIT_STRICT);
    c.mitigation.min_interarrival_ns = 100 * US;
    rtsim_mitigation_stats m;
    rtsim_bin t = run_mitigation(&c, &m);
    CHECK(t.isr_runs <= 1001);
    CHECK(t.isr_runs >= 900);
    CHECK(m.timer_fires >= t.isr_runs - 1);
    CHECK_EQ(t.cycles, 10);
    CHECK_EQ(t.misses, 0);
}

static void test_bursty_limits_each_period(void)
{
    /* 5 interrupts per 1 ms period. */
    rtsim_config c = flood(50 * MS, 100000, RTSIM_MIT_BURSTY);
    c.mitigation.burst = 5;
    c.mitigation.period_ns = 1 * MS;
    rtsim_bin t = run_totals(&c, NULL);
    CHECK(t.isr_runs <= 5 * 51);
    CHECK(t.isr_runs >= 5 * 49);
}

static void test_countdown_one_delivery_per_window(void)
{
    rtsim_config c = flood(20 * MS, 100000, RTSIM_MIT_COUNTDOWN);
    c.mitigation.window_ns = 200 * US;
    rtsim_bin t = run_totals(&c, NULL);
    CHECK(t.isr_runs <= 101);
    CHECK(t.isr_runs >= 95);
    CHECK(t.dropped[RTSIM_DROP_MITIGATION] > t.offered / 2);
}

static void test_burst_caps_each_slice(void)
{
    rtsim_config c = flood(100 * MS, 100000, RTSIM_MIT_BURST);
    c.mitigation.slice_ns = 20 * MS;
    c.mitigation.capacity = 100;
    rtsim_bin t = run_totals(&c, NULL);
    /* five slices of 100 (the paper's slice restarts at the first ISR after it ran out) */
    CHECK(t.received <= 5 * 100 + 2);
    CHECK(t.received >= 4 * 100);
    CHECK(t.rx_disabled_ns > 50 * MS);
}

static void test_queue_mitigation_turns_the_line_off_when_full(void)
{
    /* 60 kpps: ISR 5 us + driver 10 us per packet and a 40 % critical task
     * cannot keep up; the queue fills, the line goes off until it drains. */
    rtsim_config c = flood(200 * MS, 60000, RTSIM_MIT_QUEUE);
    rtsim_mitigation_stats m;
    rtsim_bin t = run_mitigation(&c, &m);
    CHECK(m.line_disables > 10);
    CHECK(m.line_enables + 1 >= m.line_disables);
    CHECK(t.rx_disabled_ns > 0);
    CHECK_EQ(t.misses, 0);
    /* at most one failed enqueue per disable: the line is off right after */
    CHECK(t.dropped[RTSIM_DROP_QUEUE_FULL] <= m.line_disables);
}

static void test_hysteresis_blocks_the_driver_on_low_earliness(void)
{
    /* Equal priorities and a saturated driver: round robin halves the
     * critical task's CPU, its earliness drops below 10 %, the driver blocks
     * and sleeps; the critical task recovers, and the cycle repeats. */
    rtsim_config c = flood(500 * MS, 40000, RTSIM_MIT_HYSTERESIS);
    c.tasks[0].priority = 2;
    c.tasks[0].work_ns = 4500 * US;
    c.mitigation.block_below = 0.10;
    c.mitigation.unblock_above = 0.50;
    c.mitigation.sleep_ns = 1 * MS;
    c.costs.mitig_poll_ns = 2 * US;
    rtsim_mitigation_stats m;
    rtsim_bin t = run_mitigation(&c, &m);
    CHECK(m.line_disables >= 1);
    CHECK(t.rx_disabled_ns > 100 * MS);
    c.mitigation.kind = RTSIM_MIT_NONE;
    rtsim_bin t0 = run_totals(&c, NULL);
    CHECK(t.lateness_pct < t0.lateness_pct);
}

static void test_budget_suspends_the_driver(void)
{
    rtsim_config c = flood(200 * MS, 60000, RTSIM_MIT_BUDGET);
    c.tasks[0].priority = 2;
    rtsim_mitigation_stats m;
    rtsim_bin t = run_mitigation(&c, &m);
    CHECK(m.suspends >= 1);
    CHECK(m.resumes >= 1);
    /* no budget before the first report: nothing received before 4 ms */
    CHECK(t.rx_disabled_ns >= 4 * MS);
}

static rtsim_config two_sources(uint32_t mitigation)
{
    rtsim_config c = flood(100 * MS, 100000, mitigation);
    c.queue_capacity = 1000;
    c.tasks[0].work_ns = 1 * MS;
    c.costs.driver_per_packet_ns = 1 * US;
    c.n_sources = 2;
    c.sources[0].isr_per_packet_ns = 3 * US;
    c.sources[1].isr_per_packet_ns = 5 * US;
    c.n_flows = 2;
    c.flows[1] = c.flows[0];
    c.flows[1].source = 1;
    return c;
}

static void test_bursty_shared_timer_two_sources(void)
{
    /* Regehr & Duongsaa §3.5: one 1 ms timer, bursts of 3 and 2. */
    rtsim_config c = two_sources(RTSIM_MIT_BURSTY);
    c.mitigation.period_ns = 1 * MS;
    c.sources[0].burst = 3;
    c.sources[1].burst = 2;
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    const rtsim_flow_stats f0 = flow_stats(s, 0), f1 = flow_stats(s, 1);
    CHECK(f0.delivered >= 3 * 99 && f0.delivered <= 3 * 101);
    CHECK(f1.delivered >= 2 * 99 && f1.delivered <= 2 * 101);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_RX], (f0.delivered * 5 + f1.delivered * 7) * US);
    rtsim_destroy(s);
}

static void test_strict_per_source(void)
{
    rtsim_config c = two_sources(RTSIM_MIT_STRICT);
    c.sources[0].min_interarrival_ns = 100 * US;
    c.sources[1].min_interarrival_ns = 250 * US;
    rtsim *s;
    run(&c, &s);
    const rtsim_flow_stats f0 = flow_stats(s, 0), f1 = flow_stats(s, 1);
    CHECK(f0.delivered >= 900 && f0.delivered <= 1001);
    CHECK(f1.delivered >= 360 && f1.delivered <= 401);
    rtsim_destroy(s);
    c.mitigation.kind = RTSIM_MIT_QUEUE;
    CHECK(rtsim_config_error(&c) != NULL); /* Danicki mitigations: one source */
    c.mitigation.kind = RTSIM_MIT_NONE;
    c.flows[1].source = 2;
    CHECK(rtsim_config_error(&c) != NULL);
}

static void test_interrupt_level_task(void)
{
    /* A 1 kHz interrupt-level task of 200 us on source 0 (higher interrupt
     * priority) and a strict-limited flood on source 1: the task's events
     * wait at most one flood ISR (5 us), so their response is <= 205 us.
     * No driver: source 0's events never reach a queue. */
    rtsim_config c = two_sources(RTSIM_MIT_STRICT);
    c.n_tasks = 2;
    c.tasks[1].kind = RTSIM_TASK_BACKGROUND;
    c.sources[0].isr_only = 1;
    c.sources[0].isr_per_packet_ns = 200 * US;
    c.sources[0].min_interarrival_ns = 1; /* the periodic source is not limited in practice */
    c.sources[1].isr_only = 1;
    c.sources[1].min_interarrival_ns = 50 * US;
    c.flows[0].rate_pps = 1000;
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    const rtsim_flow_stats f0 = flow_stats(s, 0);
    CHECK_EQ(f0.delivered, 99);
    CHECK(f0.latency_max_ns > 200 * US);
    CHECK(f0.latency_max_ns <= 205 * US);
    CHECK_EQ(t.processed, 0);
    rtsim_destroy(s);
}

static void test_unknown_mitigation_rejected(void)
{
    rtsim_config c = flood(10 * MS, 1000, 99);
    CHECK(rtsim_config_error(&c) != NULL);
    c = flood(10 * MS, 1000, RTSIM_MIT_STRICT);
    CHECK(rtsim_config_error(&c) != NULL); /* no min_interarrival */
}

int main(void)
{
    RTS_RUN(test_strict_limits_the_interrupt_rate);
    RTS_RUN(test_bursty_limits_each_period);
    RTS_RUN(test_countdown_one_delivery_per_window);
    RTS_RUN(test_burst_caps_each_slice);
    RTS_RUN(test_queue_mitigation_turns_the_line_off_when_full);
    RTS_RUN(test_hysteresis_blocks_the_driver_on_low_earliness);
    RTS_RUN(test_budget_suspends_the_driver);
    RTS_RUN(test_bursty_shared_timer_two_sources);
    RTS_RUN(test_strict_per_source);
    RTS_RUN(test_interrupt_level_task);
    RTS_RUN(test_unknown_mitigation_rejected);
    return rts_test_end();
}
