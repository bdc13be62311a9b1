/* Burst Mitigation (Danicki et al. §2.2): capacity per slice, the line off
 * until the next slice, re-enable by the timer (vectors/burst_mit.toml), and
 * the 2x double burst. */
#include "rts_test.h"
#include "rts_test_host.h"
#include "rtshield/rts_burst_mit.h"

enum { EV_RX, EV_TIMER };

typedef struct {
    RTS_ACTION_ROW;
    uint32_t count_after;
    rts_time_ns slice_start_after;
} burst_mit_row;

static void step(rts_burst_mit *m, const burst_mit_row *r)
{
    rts_action a = r->ev == EV_RX ? rts_burst_mit_on_rx_isr(m, r->now)
                                  : rts_burst_mit_on_timer_isr(m, r->now);
    CHECK_ACTION(a, r);
    CHECK_EQ(m->count, r->count_after);
    CHECK_EQ(m->slice_start, r->slice_start_after);
}

static const uint32_t OFF = RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER;

typedef struct {
    RTS_VECTOR_TABLE(burst_mit_row, rts_burst_mit);
    rts_time_ns slice_ns;
    uint32_t capacity;
    bool aligned;
} burst_mit_table;

#include "vectors_burst_mit.h"

/* `m` configured as the table says, then its rows. */
static void run(const burst_mit_table *t)
{
    rts_burst_mit m;
    const rts_burst_mit_cfg cfg = {.slice_ns = t->slice_ns, .capacity = t->capacity, .aligned = t->aligned};
    CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_OK);
    RTS_RUN_VECTORS(&m, t, step);
}

/* Danicki §2.2: capacity packets at the end of one slice and capacity at the
 * start of the next are all accepted: up to 2x capacity in a short time. */
static void test_double_burst(void)
{
    for (int aligned = 0; aligned < 2; aligned++) {
        ROW(aligned ? "aligned" : "paper");
        const uint32_t cap = 600;
        const rts_time_ns slice = 20000000; /* 20 ms */
        rts_burst_mit m;
        const rts_burst_mit_cfg cfg = {.slice_ns = slice, .capacity = cap, .aligned = aligned != 0};
        CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_OK);
        CHECK_EQ(rts_burst_mit_on_rx_isr(&m, 0).flags, RTS_ACT_NONE); /* slice [0, 20 ms) */
        /* Burst 1: the rest of the capacity, 1 us apart, ending at the slice end. */
        uint32_t accepted = 0;
        rts_time_ns t = slice - (cap - 1) * 1000u;
        rts_action a = {0, 0};
        for (uint32_t i = 0; i < cap - 1; i++, t += 1000u) {
            a = rts_burst_mit_on_rx_isr(&m, t);
            CHECK((a.flags & RTS_ACT_DROP) == 0u);
            accepted++;
        }
        CHECK_EQ(a.flags, OFF);
        CHECK_EQ(a.timer_at, slice);
        CHECK_EQ(rts_burst_mit_on_timer_isr(&m, slice).flags, RTS_ACT_ENABLE_LINE);
        /* Burst 2 at the start of the next slice. */
        t = slice;
        for (uint32_t i = 0; i < cap; i++, t += 1000u) {
            a = rts_burst_mit_on_rx_isr(&m, t);
            CHECK((a.flags & RTS_ACT_DROP) == 0u);
            accepted++;
        }
        CHECK_EQ(a.flags, OFF);
        /* 2 cap - 1 packets within 1.2 ms, against cap per 20 ms nominal. */
        CHECK_EQ(accepted, 2u * cap - 1u);
        CHECK(t - (slice - (cap - 1) * 1000u) < slice / 10u);
        /* One more arrival (latched) is dropped. */
        CHECK((rts_burst_mit_on_rx_isr(&m, t).flags & RTS_ACT_DROP) != 0u);
    }
}

/* Property: random arrivals with the line modelled; an arrival while the line
 * is off is lost. No slice accepts more than capacity, and no window of one
 * slice length accepts more than 2 x capacity. */
static void test_random_arrivals_bounded(void)
{
    static rts_time_ns acc_times[20000];
    for (int aligned = 0; aligned < 2; aligned++) {
        ROW(aligned ? "aligned" : "paper");
        const uint32_t cap = 7;
        const rts_time_ns slice = 10000;
        rts_burst_mit m;
        const rts_burst_mit_cfg cfg = {.slice_ns = slice, .capacity = cap, .aligned = aligned != 0};
        rts_burst_mit_init(&m, &cfg);
        uint32_t seed = 12345u;
        rts_time_ns t = 0, timer_at = 0;
        bool line_on = true, timer_armed = false;
        size_t n = 0;
        uint32_t in_slice = 0;
        rts_time_ns cur_slice = UINT64_MAX;
        while (n < sizeof acc_times / sizeof acc_times[0] - 1 && t < 50000000u) {
            seed = seed * 1103515245u + 12345u;
            t += (seed >> 16) % 900u + 1u;
            if (timer_armed && timer_at <= t) {
                rts_action ta = rts_burst_mit_on_timer_isr(&m, timer_at);
                timer_armed = false;
                if (ta.flags & RTS_ACT_ENABLE_LINE) line_on = true;
            }
            if (!line_on) continue;
            rts_action a = rts_burst_mit_on_rx_isr(&m, t);
            CHECK((a.flags & RTS_ACT_DROP) == 0u); /* the line was on: never over */
            if (m.slice_start != cur_slice) {
                cur_slice = m.slice_start;
                in_slice = 0;
            }
            in_slice++;
            CHECK(in_slice <= cap);
            acc_times[n++] = t;
            if (a.flags & RTS_ACT_DISABLE_LINE) line_on = false;
            if (a.flags & RTS_ACT_ARM_TIMER) {
                timer_armed = true;
                timer_at = a.timer_at;
            }
        }
        CHECK(n > 1000);
        size_t lo = 0, worst = 0;
        for (size_t hi = 0; hi < n; hi++) {
            while (acc_times[hi] - acc_times[lo] >= slice) lo++;
            if (hi - lo + 1 > worst) worst = hi - lo + 1;
        }
        CHECK(worst <= 2u * cap);
        CHECK(worst > cap); /* the 2x case does occur under this traffic */
    }
}

/* The returned actions performed through the port and the irq gate. */
static void test_through_port(void)
{
    rts_test_host h;
    rts_test_host_init(&h, 4);
    const rts_port_target tgt = {.line = 4, .timer = 2, .timer_line = 10};
    rts_burst_mit m;
    const rts_burst_mit_cfg cfg = {.slice_ns = 1000, .capacity = 2, .aligned = false};
    rts_burst_mit_init(&m, &cfg);
    CHECK_EQ(rts_test_host_apply(&h, tgt, rts_burst_mit_on_rx_isr(&m, 10)), 0);
    CHECK(h.hw.enabled[4]);
    CHECK_EQ(rts_test_host_apply(&h, tgt, rts_burst_mit_on_rx_isr(&m, 20)), 0);
    CHECK(!h.hw.enabled[4]);
    CHECK(h.hw.timer_armed[2]);
    CHECK_EQ(h.hw.timer_at[2], 1010);
    rts_test_host_apply(&h, tgt, rts_burst_mit_on_timer_isr(&m, 1010));
    CHECK(h.hw.enabled[4]);
}

static void test_init_and_defaults(void)
{
    rts_burst_mit m;
    rts_burst_mit_cfg cfg;
    rts_burst_mit_cfg_default(&cfg);
    CHECK_EQ(cfg.slice_ns, 20000000);
    CHECK_EQ(cfg.capacity, 600);
    CHECK(!cfg.aligned);
    CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_OK);
    CHECK_EQ(rts_burst_mit_init(NULL, &cfg), RTS_EINVAL);
    CHECK_EQ(rts_burst_mit_init(&m, NULL), RTS_EINVAL);
    cfg.capacity = 0;
    CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_EINVAL);
    cfg.capacity = 1;
    cfg.slice_ns = 0;
    CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_EINVAL);
    /* Capacity 1: every accepted packet closes its slice. */
    cfg.slice_ns = 100;
    CHECK_EQ(rts_burst_mit_init(&m, &cfg), RTS_OK);
    CHECK_EQ(rts_burst_mit_on_rx_isr(&m, 5).flags, OFF);
    /* Timer before any disable does nothing. */
    rts_burst_mit_init(&m, &cfg);
    CHECK_EQ(rts_burst_mit_on_timer_isr(&m, 1000).flags, RTS_ACT_NONE);
    /* Re-enable time saturates at the end of time. */
    CHECK_EQ(rts_burst_mit_on_rx_isr(&m, UINT64_MAX - 10).timer_at, UINT64_MAX);
}

int main(void)
{
    RTS_RUN_TABLE(run, vec_burst_mit_paper_slices);   /* slices drift with the traffic */
    RTS_RUN_TABLE(run, vec_burst_mit_aligned_slices); /* slices on the grid of the first ISR */
    RTS_RUN(test_double_burst);
    RTS_RUN(test_random_arrivals_bounded);
    RTS_RUN(test_through_port);
    RTS_RUN(test_init_and_defaults);
    return rts_test_end();
}
