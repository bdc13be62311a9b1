/* Admission bounds of the protections: the most interrupts (or packets) each
 * lets through in any window of delta ns, the arrival curves rtshield
 * analyze takes the minimum of with the traffic's (docs/analysis.md,
 * "Arrival curves"). Tables of exact values and edge cases, then random runs
 * of the limiters whose admissions, counted in every window that starts at an
 * admission, never exceed the bound. */
#include "rts_port_posix.h"
#include "rts_test.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_global_limit.h"
#include "rtshield/rts_nic_moderation.h"
#include "rtshield/rts_strict.h"

typedef uint64_t (*bound2)(uint32_t n, rts_time_ns period, rts_time_ns delta);

typedef struct {
    const char *name;
    uint32_t n;
    rts_time_ns period, delta;
    uint64_t expect;
} per_window_row;

static void test_per_window_tables(void)
{
    static const per_window_row rows[] = {
        {"empty window", 4, 10, 0, 0},
        {"one instant: n at the end of a stretch, n at the start of the next", 4, 10, 1, 8},
        {"one period", 4, 10, 10, 8},
        {"a period and 1 ns", 4, 10, 11, 12},
        {"three periods", 4, 10, 30, 16},
        {"no burst", 0, 10, 100, 0},
        {"period 0: unbounded", 4, 0, 5, UINT64_MAX},
        {"saturates", 2, 1, UINT64_MAX, UINT64_MAX},
    };
    static const bound2 fns[] = {rts_bursty_max_irqs, rts_burst_mit_max_packets,
                                 rts_global_limit_max_packets};
    for (unsigned f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            ROW(rows[i].name);
            CHECK(fns[f](rows[i].n, rows[i].period, rows[i].delta) == rows[i].expect);
        }
    }
}

static void test_spacing_tables(void)
{
    CHECK(rts_strict_max_irqs(250, 0) == 0);
    CHECK(rts_strict_max_irqs(250, 1) == 1);
    CHECK(rts_strict_max_irqs(250, 250) == 1);
    CHECK(rts_strict_max_irqs(250, 251) == 2);
    CHECK(rts_strict_max_irqs(250, 1000) == 4);
    CHECK(rts_strict_max_irqs(0, 1) == UINT64_MAX);
    CHECK(rts_strict_max_irqs(1, UINT64_MAX) == UINT64_MAX);
    /* countdown: a window of tick * initial */
    CHECK(rts_countdown_max_irqs(10, 25, 0) == 0);
    CHECK(rts_countdown_max_irqs(10, 25, 250) == 1);
    CHECK(rts_countdown_max_irqs(10, 25, 251) == 2);
    CHECK(rts_countdown_max_irqs(10, 0, 5) == UINT64_MAX);
    CHECK(rts_countdown_max_irqs(0, 3, 5) == UINT64_MAX);
    CHECK(rts_countdown_max_irqs(UINT32_MAX, UINT32_MAX, UINT64_MAX) == 2u);
    /* NIC moderation: the shorter of the timers that are on */
    CHECK(rts_nic_moderation_max_irqs(30, 20, 0, 0) == 0);
    CHECK(rts_nic_moderation_max_irqs(30, 20, 0, 20) == 1);
    CHECK(rts_nic_moderation_max_irqs(30, 20, 0, 21) == 2);
    CHECK(rts_nic_moderation_max_irqs(10, 20, 0, 21) == 3);
    CHECK(rts_nic_moderation_max_irqs(0, 20, 0, 40) == 2);
    CHECK(rts_nic_moderation_max_irqs(30, 0, 0, 40) == 2);
    CHECK(rts_nic_moderation_max_irqs(0, 0, 0, 40) == UINT64_MAX);
    CHECK(rts_nic_moderation_max_irqs(30, 20, 4, 40) == UINT64_MAX);
}

/* ------------------------------------------------------- random runs */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define RUNS 200
#define ARRIVALS 500

/* Every window that starts at an admission, of lengths around multiples of
 * `unit`: the admissions in it never exceed `bound(delta)`. */
typedef uint64_t (*curve)(const void *arg, rts_time_ns delta);

static uint32_t windows_over(const rts_time_ns *at, uint32_t n, rts_time_ns unit, curve bound,
                             const void *arg)
{
    static const uint32_t eighths[] = {1, 4, 8, 9, 12, 16, 17, 24, 40};
    uint32_t over = 0;
    for (unsigned w = 0; w < sizeof eighths / sizeof eighths[0]; w++) {
        const rts_time_ns delta = unit * eighths[w] / 8u + (w % 2u);
        for (uint32_t i = 0, j = 0; i < n; i++) {
            if (j < i) j = i;
            while (j < n && at[j] - at[i] < delta) j++;
            if (delta > 0u && (uint64_t)(j - i) > bound(arg, delta)) over++;
        }
    }
    return over;
}

static uint64_t strict_curve(const void *arg, rts_time_ns d)
{
    return rts_strict_max_irqs(*(const rts_time_ns *)arg, d);
}

static void test_strict_runs(void)
{
    static rts_time_ns at[ARRIVALS];
    for (int run = 0; run < RUNS; run++) {
        rts_posix_port hw;
        rts_port port;
        rts_posix_port_init(&port, &hw);
        rts_strict s;
        rts_time_ns t_min = 1u + rnd(3000);
        rts_strict_init(&s, t_min);
        hw.enabled[0] = true;
        const rts_port_target tgt = {0, 0, 9};
        uint32_t n = 0;
        rts_time_ns t = rnd(100);
        for (int i = 0; i < ARRIVALS; i++) {
            t += rnd(4) == 0 ? 0u : rnd((uint32_t)t_min * 2u);
            if (hw.timer_armed[0] && hw.timer_at[0] <= t) {
                const rts_time_ns e = hw.timer_at[0];
                hw.timer_armed[0] = false;
                rts_port_apply(&port, NULL, tgt, rts_strict_on_timer_isr(&s, e));
                if (hw.enabled[0] && hw.pending[0]) { /* the latched arrival runs at the re-enable */
                    hw.pending[0] = false;
                    if (rts_port_apply(&port, NULL, tgt, rts_strict_on_irq_isr(&s, e)) & RTS_ACT_DELIVER)
                        at[n++] = e;
                }
            }
            if (hw.enabled[0]) {
                if (rts_port_apply(&port, NULL, tgt, rts_strict_on_irq_isr(&s, t)) & RTS_ACT_DELIVER)
                    at[n++] = t;
            } else {
                hw.pending[0] = true;
            }
        }
        CHECK(n > 1);
        CHECK_EQ(windows_over(at, n, t_min, strict_curve, &t_min), 0);
    }
}

typedef struct {
    uint32_t burst;
    rts_time_ns period;
    rts_time_ns late; /* bursty: the longest a tick's handler ends after its tick */
} burst_arg;

static uint64_t bursty_curve(const void *arg, rts_time_ns d)
{
    const burst_arg *a = arg;
    return rts_bursty_max_irqs(a->burst, a->period, d + a->late);
}

static void test_bursty_runs(void)
{
    static rts_time_ns at[ARRIVALS + 8];
    for (int run = 0; run < RUNS; run++) {
        rts_posix_port hw;
        rts_port port;
        rts_posix_port_init(&port, &hw);
        rts_bursty b;
        burst_arg a = {1u + rnd(5), 100u + rnd(4000), 0u};
        const bool on_time = rnd(2) == 0; /* else the handler ends up to half a period late */
        a.late = on_time ? 0u : a.period / 2u;
        const rts_bursty_mode mode = rnd(2) ? RTS_BURSTY_TIMER_LAZY : RTS_BURSTY_TIMER_PERIODIC;
        rts_bursty_init(&b, a.period, mode);
        rts_bursty_add_source(&b, a.burst, NULL);
        rts_port_target tgt[1] = {{0, 0, 9}};
        hw.enabled[0] = true;
        rts_time_ns t = rnd(1000);
        rts_port_apply(&port, NULL, tgt[0], rts_bursty_start(&b, t));
        uint32_t n = 0;
        rts_time_ns late = 0; /* the tick's handler ends this long after the tick */
        bool drawn = false;
        for (int i = 0; i < ARRIVALS; i++) {
            t += rnd(3) == 0 ? 0u : rnd((uint32_t)a.period / 2u + 1u);
            while (hw.timer_armed[0] && hw.timer_at[0] <= t) {
                if (!drawn) {
                    late = a.late ? rnd((uint32_t)a.late) : 0u;
                    drawn = true;
                }
                const rts_time_ns e = hw.timer_at[0] + late;
                if (e > t) break; /* still running: the counter is cleared later */
                drawn = false;
                hw.timer_armed[0] = false;
                rts_bursty_on_tick_apply_isr(&b, e, &port, NULL, tgt);
                if (hw.enabled[0] && hw.pending[0]) {
                    hw.pending[0] = false;
                    if (rts_port_apply(&port, NULL, tgt[0], rts_bursty_on_irq_isr(&b, 0, e)) &
                        RTS_ACT_DELIVER)
                        at[n++] = e;
                }
            }
            if (hw.enabled[0]) {
                if (rts_port_apply(&port, NULL, tgt[0], rts_bursty_on_irq_isr(&b, 0, t)) &
                    RTS_ACT_DELIVER)
                    at[n++] = t;
            } else {
                hw.pending[0] = true;
            }
        }
        ROW(mode == RTS_BURSTY_TIMER_LAZY ? "lazy" : "periodic");
        CHECK(n > 1);
        CHECK_EQ(windows_over(at, n, a.period, bursty_curve, &a), 0);
    }
}

typedef struct {
    uint32_t tick, initial;
} cd_arg;

static uint64_t countdown_curve(const void *arg, rts_time_ns d)
{
    const cd_arg *a = arg;
    return rts_countdown_max_irqs(a->tick, a->initial, d);
}

static void test_countdown_runs(void)
{
    static rts_time_ns at[ARRIVALS * 2];
    for (int run = 0; run < RUNS; run++) {
        rts_countdown c;
        const cd_arg a = {1u + rnd(40), 1u + rnd(100)};
        rts_countdown_init(&c, a.tick, a.initial);
        const uint32_t w = a.tick * a.initial;
        rts_time_ns t = rnd(100);
        uint32_t n = 0;
        for (int i = 0; i < ARRIVALS; i++) {
            t += rnd(3) == 0 ? 0u : rnd(2u * w + 1u);
            const rts_time_ns z = rts_countdown_next_event_at(&c);
            if (c.latched && z <= t && (rts_countdown_on_zero_isr(&c, z).flags & RTS_ACT_DELIVER))
                at[n++] = z;
            if (rts_countdown_on_arrival_isr(&c, t).flags & RTS_ACT_DELIVER) at[n++] = t;
        }
        CHECK(n > 1);
        CHECK_EQ(windows_over(at, n, w, countdown_curve, &a), 0);
    }
}

static uint64_t burst_mit_curve(const void *arg, rts_time_ns d)
{
    const burst_arg *a = arg;
    return rts_burst_mit_max_packets(a->burst, a->period, d);
}

static void test_burst_mit_runs(void)
{
    static rts_time_ns at[ARRIVALS];
    for (int run = 0; run < RUNS; run++) {
        rts_burst_mit m;
        rts_burst_mit_cfg cfg;
        rts_burst_mit_cfg_default(&cfg);
        const burst_arg a = {1u + rnd(6), 100u + rnd(3000), 0u};
        cfg.slice_ns = a.period;
        cfg.capacity = a.burst;
        cfg.aligned = rnd(2) == 0;
        rts_burst_mit_init(&m, &cfg);
        rts_time_ns t = rnd(100);
        uint32_t n = 0;
        bool off = false;
        for (int i = 0; i < ARRIVALS; i++) {
            t += rnd(3) == 0 ? 0u : rnd((uint32_t)a.period / 3u + 1u);
            if (off && t >= m.reenable_at) { /* the re-enable timer, then the arrival */
                const rts_action r = rts_burst_mit_on_timer_isr(&m, m.reenable_at);
                off = !(r.flags & RTS_ACT_ENABLE_LINE);
            }
            if (off) continue; /* the line is off: lost or latched, never accepted */
            const rts_action r = rts_burst_mit_on_rx_isr(&m, t);
            if (!(r.flags & RTS_ACT_DROP)) at[n++] = t;
            if (r.flags & RTS_ACT_DISABLE_LINE) off = true;
        }
        CHECK(n > 1);
        CHECK_EQ(windows_over(at, n, a.period, burst_mit_curve, &a), 0);
    }
}

int main(void)
{
    RTS_RUN(test_per_window_tables);
    RTS_RUN(test_spacing_tables);
    RTS_RUN(test_strict_runs);
    RTS_RUN(test_bursty_runs);
    RTS_RUN(test_countdown_runs);
    RTS_RUN(test_burst_mit_runs);
    return rts_test_end();
}
