/* Regehr & Duongsaa's schedulers in the engine: the strict limiter's
 * re-enable at the timer's expiry (the full 4 kHz), the lazy bursty timer,
 * Budget Mitigation charging the ISR, and the pure-polling mode
 * (docs/decisions/regehr.md). Costs are the ATmega103L's Table 2 at 4 MHz
 * (one cycle = 250 ns). */
#include "sim_test_util.h"

#define CYC 250LL /* ns per cycle at 4 MHz */

/* One isr_only source with no work (Regehr §6.2), a background task that
 * measures the CPU left over, a negligible critical task. */
static rtsim_config mote(uint64_t duration_ns, double hz, uint32_t kind)
{
    rtsim_config c = base(duration_ns);
    c.nic_kind = RTSIM_NIC_EDGE;
    c.costs.isr_entry_exit_ns = 79 * CYC; /* t_int = t_expire */
    c.costs.isr_per_packet_ns = 0;
    c.costs.mitig_isr_ns = 10 * CYC;      /* t_flip + t_setup */
    c.costs.timer_isr_ns = 5 * CYC;       /* t_flip */
    add_periodic(&c, 2, 1000 * MS, 1 * US);
    add_driver(&c, 1);
    add_task(&c, RTSIM_TASK_BACKGROUND, 0, 0, 0);
    c.n_sources = 1;
    c.sources[0].isr_only = 1;
    add_flow(&c, RTSIM_PAT_CONSTANT, hz);
    c.mitigation.kind = kind;
    return c;
}

/* mote() under Regehr & Duongsaa's strict limiter of 250 us minimum
 * interarrival (at most 4 kHz), the limit of every strict test here. */
static rtsim_config strict_mote(uint64_t duration_ns, double hz)
{
    rtsim_config c = mote(duration_ns, hz, RTSIM_MIT_STRICT);
    c.mitigation.min_interarrival_ns = 250 * US;
    return c;
}

static void test_strict_admits_the_full_rate(void)
{
    /* 16 kHz offered, 250 us minimum interarrival: exactly 4 kHz admitted
     * (the line is off for one interarrival time, then the pending request
     * goes first). With the re-enable at the end of the 21 us timer handler
     * it was 1 / 271 us = 3.69 kHz. */
    rtsim_config c = strict_mote(1000 * MS, 16000);
    rtsim_mitigation_stats m;
    rtsim_bin t = run_mitigation(&c, &m);
    CHECK(t.isr_runs >= 3999 && t.isr_runs <= 4000);
    /* each admitted interrupt costs t_int + t_flip + t_setup, each timer t_expire + t_flip */
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_RX], t.isr_runs * 89 * CYC);
    CHECK(m.timer_fires + 1 >= t.isr_runs && m.timer_fires <= t.isr_runs);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TIMER], m.timer_fires * 84 * CYC);

    /* offered exactly at the limit: nothing is lost */
    c.flows[0].rate_pps = 4000;
    t = run_totals(&c, NULL);
    CHECK_EQ(t.delivered, t.offered);
    CHECK_EQ(t.irq_lost, 0);
}

static void test_strict_never_admits_two_within_t_min(void)
{
    /* Two admissions are never closer than t_min: the trace's RX ISR starts. */
    rtsim_config c = strict_mote(50 * MS, 16000);
    c.trace_capacity = 100000;
    rtsim *s;
    run(&c, &s);
    static rtsim_trace_rec tr[100000];
    const size_t n = rtsim_take_trace(s, tr, 100000);
    uint64_t last = 0, starts = 0;
    int64_t min_gap = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (tr[i].kind != RTSIM_TR_ISR_START || tr[i].arg < 9) continue; /* RX lines only */
        if (starts++ && (int64_t)(tr[i].t_ns - last) < min_gap) min_gap = (int64_t)(tr[i].t_ns - last);
        last = tr[i].t_ns;
    }
    CHECK(starts >= 199);
    CHECK_EQ(min_gap, 250 * US);
    rtsim_destroy(s);
}

static void test_lazy_bursty_timer(void)
{
    /* 260 Hz against N = 4 per 1 ms: the periodic timer ticks 1000 times a
     * second, the lazy one only after a burst's fourth interrupt (and once
     * more to turn itself off). Both admit every interrupt. */
    rtsim_config c = mote(1000 * MS, 260, RTSIM_MIT_BURSTY);
    c.costs.mitig_isr_ns = 12 * CYC; /* t_count */
    c.costs.timer_isr_ns = 10 * CYC; /* t_clear + t_flip */
    c.mitigation.burst = 4;
    c.mitigation.period_ns = 1 * MS;
    rtsim_mitigation_stats mp, ml;
    rtsim_bin periodic = run_mitigation(&c, &mp);
    c.mitigation.bursty_lazy = 1;
    rtsim_bin lazy = run_mitigation(&c, &ml);
    CHECK(mp.timer_fires >= 999);
    CHECK(ml.timer_fires <= 2 * (260 / 4 + 1));
    CHECK(ml.timer_fires >= 260 / 4 - 1);
    CHECK(periodic.delivered + 1 >= periodic.offered); /* the last may still be pending at the end */
    CHECK_EQ(lazy.delivered, periodic.delivered);
    CHECK_EQ(lazy.dropped[RTSIM_DROP_LINE_DISABLED], 0);
    CHECK(lazy.cpu_ns[RTSIM_CTX_ISR_TIMER] * 5 < periodic.cpu_ns[RTSIM_CTX_ISR_TIMER]);
    /* under a flood both hold the average: 4 per ms */
    c.flows[0].rate_pps = 16000;
    lazy = run_totals(&c, NULL);
    CHECK(lazy.isr_runs >= 3990 && lazy.isr_runs <= 4004);
}

static void test_budget_charges_the_isr(void)
{
    /* A 60 kpps flood whose ISR costs 5 us: charged to the budget too, it
     * suspends the driver earlier, so fewer packets are taken. */
    rtsim_config c = flood_device(&(flood_spec){
        .duration_ns = 200 * MS, .tick_ns = 1 * MS, .queue_capacity = 100,
        .costs = {.isr_entry_exit_ns = 2 * US, .isr_per_packet_ns = 3 * US,
                  .driver_per_packet_ns = 10 * US},
        .critical = {.priority = 2, .period_ns = 10 * MS, .work_ns = 4 * MS},
        .driver_priority = 2, .pps = 60000});
    c.mitigation.kind = RTSIM_MIT_BUDGET;
    rtsim_bin off = run_totals(&c, NULL);
    c.mitigation.budget_charge_isr = 1;
    rtsim_mitigation_stats m;
    rtsim_bin on = run_mitigation(&c, &m);
    CHECK(m.suspends >= 1);
    CHECK(on.received < off.received);
    CHECK(on.rx_disabled_ns > off.rx_disabled_ns);
}

static void test_polling(void)
{
    /* Pure polling every 250 us (Regehr §5.2): the line is never enabled;
     * each poll costs t_expire + t_poll, plus the handler when a request
     * waits; one request per poll; the added latency is below one period. */
    rtsim_config c = mote(1000 * MS, 0, RTSIM_MIT_POLLING);
    c.costs.timer_isr_ns = 4 * CYC; /* t_poll */
    c.sources[0].isr_per_packet_ns = 250 * CYC; /* Figure 2's 250 cycles of work */
    c.mitigation.period_ns = 250 * US;
    c.n_flows = 0;
    rtsim *s;
    rtsim_bin idle = run_totals(&c, NULL);
    CHECK_EQ(idle.cpu_ns[RTSIM_CTX_ISR_TIMER], 3999 * 83 * CYC); /* polls at 250 us .. 999.75 ms */
    CHECK_EQ(idle.isr_runs, 0);

    add_flow(&c, RTSIM_PAT_CONSTANT, 3000);
    rtsim_bin t = run_totals(&c, &s);
    rtsim_flow_stats f = flow_stats(s, 0);
    rtsim_destroy(s);
    CHECK(t.delivered + 1 >= t.offered);
    CHECK_EQ(t.isr_runs, t.delivered);
    /* a poll that finds work costs t_expire + t_poll + t_work */
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_RX], t.isr_runs * (79 + 4 + 250) * CYC);
    CHECK_EQ(t.cpu_ns[RTSIM_CTX_ISR_TIMER], (3999 - t.isr_runs) * 83 * CYC);
    CHECK(f.latency_max_ns <= (250 + 84) * US); /* a period, then the handler */

    c.flows[0].rate_pps = 16000; /* one request per poll */
    t = run_totals(&c, NULL);
    CHECK(t.delivered >= 3998 && t.delivered <= 4000);
    CHECK(t.dropped[RTSIM_DROP_LINE_DISABLED] >= 11990);
}

static void test_enable_bits(void)
{
    /* A task masks the line for 300 us of every 2 ms (mutual exclusion with
     * the handler) under a strict-limited 16 kHz flood. Two enable bits:
     * the handler never runs inside the critical section. One shared bit
     * (Regehr §4): the limiter's timer re-enables the masked line, and the
     * task's unmask re-enables a line the limiter holds off, which the
     * limiter then refuses. */
    rtsim_config c = strict_mote(1000 * MS, 16000);
    const int t = add_periodic(&c, 1, 2 * MS, 300 * US);
    c.tasks[t].masks_rx = 1;
    rtsim *s;
    run(&c, &s);
    rtsim_mitigation_stats two = mitigation_stats(s);
    rtsim_bin t2;
    rtsim_totals(s, &t2);
    rtsim_destroy(s);
    CHECK_EQ(two.mask_violations, 0);
    CHECK_EQ(two.drops, 0);
    CHECK(t2.isr_runs < 4000); /* the masked 300 us of each 2 ms cost admissions */
    c.mitigation.one_enable_bit = 1;
    run(&c, &s);
    rtsim_mitigation_stats one = mitigation_stats(s);
    rtsim_destroy(s);
    CHECK(one.mask_violations >= 400); /* about one per 2 ms job */
    CHECK(one.drops >= 400);
    c.tasks[t].kind = RTSIM_TASK_BACKGROUND; /* only periodic tasks mask */
    CHECK(rtsim_config_error(&c) != NULL);
}

static void test_option_errors(void)
{
    rtsim_config c = strict_mote(10 * MS, 1000);
    CHECK(rtsim_config_error(&c) == NULL);
    c.mitigation.bursty_lazy = 1; /* the lazy timer is the bursty limiter's */
    CHECK(rtsim_config_error(&c) != NULL);
    c.mitigation.bursty_lazy = 0;
    c.mitigation.budget_charge_isr = 1; /* needs Budget Mitigation */
    CHECK(rtsim_config_error(&c) != NULL);
    c = mote(10 * MS, 1000, RTSIM_MIT_POLLING);
    CHECK(rtsim_config_error(&c) != NULL); /* no period */
    c.mitigation.period_ns = 250 * US;
    CHECK(rtsim_config_error(&c) == NULL);
    c.mitigation.kind = RTSIM_MIT_POLLING + 1;
    CHECK(rtsim_config_error(&c) != NULL);
}

int main(void)
{
    RTS_RUN(test_strict_admits_the_full_rate);
    RTS_RUN(test_strict_never_admits_two_within_t_min);
    RTS_RUN(test_lazy_bursty_timer);
    RTS_RUN(test_budget_charges_the_isr);
    RTS_RUN(test_polling);
    RTS_RUN(test_enable_bits);
    RTS_RUN(test_option_errors);
    return rts_test_end();
}
