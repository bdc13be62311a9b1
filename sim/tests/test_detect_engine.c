/* libshield's detectors fed by the live device (Danicki §2.1): the
 * critical task's late cycles, RX interrupts per slice, RX queue fill
 * watermarks; an overload timeline of when each fired. */
#include "sim_test_util.h"

#include "rtshield/rts_detect.h"

/* A flood that starts at 50 ms: 90 000 pkt/s, 5 us of ISR per packet,
 * against a critical task of 6 ms per 10 ms. */
static rtsim_config flood(void)
{
    rtsim_config c = flood_device(&(flood_spec){
        .duration_ns = 200 * MS, .queue_capacity = 64,
        .costs = {.isr_entry_exit_ns = 1 * US, .isr_per_packet_ns = 4 * US,
                  .driver_per_packet_ns = 5 * US},
        .critical = {.priority = 3, .period_ns = 10 * MS, .work_ns = 6 * MS},
        .driver_priority = 2, .pps = 90000});
    c.bin_ns = 50 * MS;
    c.flows[0].start_ns = 50 * MS;
    return c;
}

static void test_timeline(void)
{
    rtsim_config c = flood();
    c.detect_slice_ns = 1 * MS;
    c.detect_irq_threshold = 10;
    c.detect_fill_high = 32;
    c.detect_fill_low = 4;
    c.trace_capacity = 1u << 20;
    rtsim *s;
    run(&c, &s);
    uint64_t first[RTSIM_DET_COUNT], count[RTSIM_DET_COUNT];
    rtsim_detect_get(s, first, count);
    /* 90 interrupts per 1 ms slice from 50 ms on: every slice crosses 10. */
    CHECK(count[RTSIM_DET_IRQ] >= 140 && count[RTSIM_DET_IRQ] <= 150);
    CHECK(first[RTSIM_DET_IRQ] >= 50 * MS && first[RTSIM_DET_IRQ] < 52 * MS);
    CHECK(count[RTSIM_DET_LATE] > 0);
    CHECK(first[RTSIM_DET_LATE] > 50 * MS);
    CHECK(count[RTSIM_DET_FILL] >= 1);
    CHECK(first[RTSIM_DET_FILL] > 50 * MS);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.detected[RTSIM_DET_LATE], t.misses);
    CHECK_EQ(t.detected[RTSIM_DET_IRQ], count[RTSIM_DET_IRQ]);
    /* The first bin (0..50 ms) is quiet. */
    rtsim_bin b[8];
    size_t n = rtsim_take_bins(s, b, 8);
    CHECK_EQ(n, 4);
    CHECK_EQ(b[0].detected[RTSIM_DET_IRQ] + b[0].detected[RTSIM_DET_LATE] + b[0].detected[RTSIM_DET_FILL], 0);
    CHECK(b[1].detected[RTSIM_DET_IRQ] > 0);
    /* Each firing is traced at its time. */
    rtsim_trace_rec *tr = calloc(1u << 20, sizeof *tr);
    size_t m = rtsim_take_trace(s, tr, 1u << 20);
    uint64_t traced = 0, at = UINT64_MAX;
    for (size_t i = 0; i < m; i++)
        if (tr[i].kind == RTSIM_TR_DETECT && tr[i].arg == RTSIM_DET_IRQ) {
            traced++;
            if (tr[i].t_ns < at) at = tr[i].t_ns;
        }
    CHECK_EQ(traced, count[RTSIM_DET_IRQ]);
    CHECK_EQ(at, first[RTSIM_DET_IRQ]);
    free(tr);
    rtsim_destroy(s);
}

/* Detection off: the interrupt and fill detectors never fire; lateness is
 * always watched. */
static void test_off(void)
{
    rtsim_config c = flood();
    rtsim *s;
    run(&c, &s);
    uint64_t first[RTSIM_DET_COUNT], count[RTSIM_DET_COUNT];
    rtsim_detect_get(s, first, count);
    CHECK_EQ(count[RTSIM_DET_IRQ], 0);
    CHECK_EQ(count[RTSIM_DET_FILL], 0);
    CHECK(first[RTSIM_DET_IRQ] == UINT64_MAX);
    CHECK(count[RTSIM_DET_LATE] > 0);
    rtsim_destroy(s);
}

/* Cycle lateness: the engine's is libshield's rts_detect_cycle_eval() in percent
 * (whole ppm), for the cycles that end and for one still running at the end. */
static void test_lateness_is_libshield_s(void)
{
    rtsim_config c = flood();
    const int64_t P = 10 * MS + 7; /* most latenesses are not whole ppm of it */
    c.tasks[0].period_ns = P;
    c.trace_capacity = 1u << 20;
    rtsim *s;
    run(&c, &s);
    rtsim_trace_rec *tr = calloc(1u << 20, sizeof *tr);
    size_t m = rtsim_take_trace(s, tr, 1u << 20);
    double sum = 0.0, max = 0.0;
    uint64_t late = 0, inexact = 0;
    for (size_t i = 0; i < m; i++) {
        if (tr[i].kind != RTSIM_TR_CYCLE_END || tr[i].arg != 0) continue;
        const uint64_t target = tr[i].t_ns + (uint64_t)tr[i].value; /* value: earliness */
        const rts_detect_cycle_result r =
            rts_detect_cycle_eval(target - (uint64_t)P, target, tr[i].t_ns);
        const double pct = (double)r.lateness_ppm / 1e4;
        sum += pct;
        if (pct > max) max = pct;
        late += r.miss;
        if (tr[i].value < 0 && pct != (double)-tr[i].value * 100.0 / (double)P) inexact++;
    }
    free(tr);
    const rtsim_task_stats ts = task_stats(s, 0);
    CHECK(late > 10);
    CHECK(inexact > 0); /* the rounding to whole ppm is exercised */
    CHECK_EQ(ts.misses, late);
    CHECK(ts.lateness_sum_pct == sum);
    CHECK(ts.lateness_max_pct == max);
    rtsim_destroy(s);

    /* A cycle that never ends: late from its deadline P to the end of the run. */
    rtsim_config st = base(50 * MS);
    add_critical(&st, 1, P, 1000 * MS);
    run(&st, &s);
    const rts_detect_cycle_result r = rts_detect_cycle_eval(0, (uint64_t)P, 50 * MS);
    const rtsim_task_stats us = task_stats(s, 0);
    CHECK_EQ(us.misses, (uint64_t)(50 * MS - P) / (uint64_t)P + 1u);
    CHECK(us.lateness_sum_pct == (double)r.lateness_ppm / 1e4);
    CHECK(us.lateness_max_pct == us.lateness_sum_pct);
    CHECK(us.lateness_sum_pct != (double)(50 * MS - P) * 100.0 / (double)P);
    rtsim_destroy(s);
}

static void test_config(void)
{
    rtsim_config c = flood();
    c.detect_fill_high = 8;
    c.detect_fill_low = 8;
    CHECK(refused_naming(&c, "detect.fill_low"));
    c.detect_fill_low = 2;
    c.detect_slice_ns = -1;
    CHECK(refused_naming(&c, "detect.slice"));
}

int main(void)
{
    RTS_RUN(test_timeline);
    RTS_RUN(test_off);
    RTS_RUN(test_lateness_is_libshield_s);
    RTS_RUN(test_config);
    return rts_test_end();
}
