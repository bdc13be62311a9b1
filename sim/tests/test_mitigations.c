/* Each mitigation wired into the engine: the interrupt rate or the CPU
 * share it promises, measured on small scenarios. The decisions themselves
 * are libshield's (tested there); these tests check the hook points. */
#include <string.h>

#include "rts_test.h"
#include "rtsim/rtsim.h"

#define MS 1000000LL
#define US 1000LL

static rtsim_config flood(uint64_t duration_ns, double pps, uint32_t mitigation)
{
    rtsim_config c;
    memset(&c, 0, sizeof c);
    c.duration_ns = duration_ns;
    c.bin_ns = duration_ns;
    c.n_cores = 1;
    c.tick_ns = 1 * MS;
    c.time_slicing = 1;
    c.queue_capacity = 100;
    c.costs.isr_entry_exit_ns = 2 * US;
    c.costs.isr_per_packet_ns = 3 * US;
    c.costs.driver_per_packet_ns = 10 * US;
    c.costs.timer_isr_ns = 1 * US;
    c.n_tasks = 2;
    c.tasks[0].kind = RTSIM_TASK_PERIODIC;
    c.tasks[0].critical = 1;
    c.tasks[0].priority = 3;
    c.tasks[0].period_ns = 10 * MS;
    c.tasks[0].work_ns = 4 * MS;
    c.tasks[1].kind = RTSIM_TASK_DRIVER;
    c.tasks[1].priority = 2;
    c.n_flows = 1;
    c.flows[0].pattern = RTSIM_PAT_CONSTANT;
    c.flows[0].rate_pps = pps;
    c.mitigation.kind = mitigation;
    return c;
}

static rtsim *run(const rtsim_config *c, rtsim_bin *tot)
{
    rtsim *s = rtsim_create(c);
    if (s == NULL) {
        fprintf(stderr, "config: %s\n", rtsim_config_error(c));
        exit(1);
    }
    CHECK_EQ(rtsim_run_until(s, c->duration_ns), 0);
    rtsim_totals(s, tot);
    return s;
}

static void test_strict_limits_the_interrupt_rate(void)
{
    /* 100 kpps against a minimum interarrival of 100 us: at most 10 kHz. */
    rtsim_config c = flood(100 * MS, 100000, RTSIM_MIT_STRICT);
    c.mitigation.min_interarrival_ns = 100 * US;
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    CHECK(t.isr_runs <= 1001);
    CHECK(t.isr_runs >= 900);
    rtsim_mitigation_stats m;
    rtsim_mitigation_stats_get(s, &m);
    CHECK(m.timer_fires >= t.isr_runs - 1);
    CHECK_EQ(t.cycles, 10);
    CHECK_EQ(t.misses, 0);
    rtsim_destroy(s);
}

static void test_bursty_limits_each_period(void)
{
    /* 5 interrupts per 1 ms period. */
    rtsim_config c = flood(50 * MS, 100000, RTSIM_MIT_BURSTY);
    c.mitigation.burst = 5;
    c.mitigation.period_ns = 1 * MS;
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    CHECK(t.isr_runs <= 5 * 51);
    CHECK(t.isr_runs >= 5 * 49);
    rtsim_destroy(s);
}

static void test_countdown_one_delivery_per_window(void)
{
    rtsim_config c = flood(20 * MS, 100000, RTSIM_MIT_COUNTDOWN);
    c.mitigation.window_ns = 200 * US;
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    CHECK(t.isr_runs <= 101);
    CHECK(t.isr_runs >= 95);
    CHECK(t.dropped[RTSIM_DROP_MITIGATION] > t.offered / 2);
    rtsim_destroy(s);
}

static void test_burst_caps_each_slice(void)
{
    rtsim_config c = flood(100 * MS, 100000, RTSIM_MIT_BURST);
    c.mitigation.slice_ns = 20 * MS;
    c.mitigation.capacity = 100;
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    /* five slices of 100 (the paper's slice restarts at the first ISR after it ran out) */
    CHECK(t.received <= 5 * 100 + 2);
    CHECK(t.received >= 4 * 100);
    CHECK(t.rx_disabled_ns > 50 * MS);
    rtsim_destroy(s);
}

static void test_queue_mitigation_turns_the_line_off_when_full(void)
{
    /* 60 kpps: ISR 5 us + driver 10 us per packet and a 40 % critical task
     * cannot keep up; the queue fills, the line goes off until it drains. */
    rtsim_config c = flood(200 * MS, 60000, RTSIM_MIT_QUEUE);
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    rtsim_mitigation_stats m;
    rtsim_mitigation_stats_get(s, &m);
    CHECK(m.line_disables > 10);
    CHECK(m.line_enables + 1 >= m.line_disables);
    CHECK(t.rx_disabled_ns > 0);
    CHECK_EQ(t.misses, 0);
    /* at most one failed enqueue per disable: the line is off right after */
    CHECK(t.dropped[RTSIM_DROP_QUEUE_FULL] <= m.line_disables);
    rtsim_destroy(s);
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
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    rtsim_mitigation_stats m;
    rtsim_mitigation_stats_get(s, &m);
    CHECK(m.line_disables >= 1);
    CHECK(t.rx_disabled_ns > 100 * MS);
    rtsim_destroy(s);
    c.mitigation.kind = RTSIM_MIT_NONE;
    rtsim_bin t0;
    s = run(&c, &t0);
    CHECK(t.lateness_pct < t0.lateness_pct);
    rtsim_destroy(s);
}

static void test_budget_suspends_the_driver(void)
{
    rtsim_config c = flood(200 * MS, 60000, RTSIM_MIT_BUDGET);
    c.tasks[0].priority = 2;
    rtsim_bin t;
    rtsim *s = run(&c, &t);
    rtsim_mitigation_stats m;
    rtsim_mitigation_stats_get(s, &m);
    CHECK(m.suspends >= 1);
    CHECK(m.resumes >= 1);
    /* no budget before the first report: nothing received before 4 ms */
    CHECK(t.rx_disabled_ns >= 4 * MS);
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
    RTS_RUN(test_unknown_mitigation_rejected);
    return rts_test_end();
}
