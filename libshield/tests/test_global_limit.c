/* global limiter: entry into polling when the capacity is reached in a
 * period, exit when a period starts below capacity (Behnke §5.5). */
#include "rts_test.h"
#include "rtshield/rts_global_limit.h"

typedef enum { PKT, POLL_BEGIN, POLL_END } gl_op;

typedef struct {
    const char *name;
    gl_op op;
    rts_time_ns t;
    int admitted;          /* PKT: expected admit; POLL_BEGIN: expected budget */
    uint32_t flags;
    rts_time_ns timer_at;
    unsigned mode_after;
} gl_row;

static void step(rts_global_limit *g, const gl_row *r)
{
    rts_action a = {0, 0};
    switch (r->op) {
    case PKT: CHECK_EQ(rts_global_limit_admit_isr(g, r->t, &a), r->admitted); break;
    case POLL_BEGIN: CHECK_EQ(rts_global_limit_poll_begin(g, r->t), r->admitted); break;
    case POLL_END: a = rts_global_limit_poll_end(g, r->t); break;
    }
    CHECK_ACTION(a, r);
    CHECK_EQ(rts_global_limit_mode_of(g), r->mode_after);
}

static void test_poll_entry_and_exit(void)
{
    /* Capacity 3 per 1 ms, first period at 0. */
    static const gl_row rows[] = {
        {"1st", PKT, 100, 1, 0, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"2nd", PKT, 200, 1, 0, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"3rd reaches capacity: taken, line off, timer at 1 ms", PKT, 300, 1,
         RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER, 1000000, RTS_GLOBAL_LIMIT_POLL},
        {"4th in the same ISR loop: refused", PKT, 310, 0, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"poll at 1 ms: budget 3", POLL_BEGIN, 1000000, 3, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"harvest 1", PKT, 1000100, 1, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"harvest 2", PKT, 1000200, 1, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"harvest 3 (no line action in poll mode)", PKT, 1000300, 1, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"harvest 4 refused", PKT, 1000400, 0, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"capacity reached immediately: stay polling", POLL_END, 1000500, 0, RTS_ACT_ARM_TIMER, 2000000,
         RTS_GLOBAL_LIMIT_POLL},
        {"poll at 2 ms", POLL_BEGIN, 2000000, 3, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"harvest only 1", PKT, 2000100, 1, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"below capacity: back to interrupts", POLL_END, 2000200, 0, RTS_ACT_ENABLE_LINE, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"2nd of period 2 by interrupt", PKT, 2500000, 1, 0, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"3rd of period 2: polling again, timer at 3 ms", PKT, 2600000, 1,
         RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER, 3000000, RTS_GLOBAL_LIMIT_POLL},
        {"late poll at 5.5 ms rolls to period 5", POLL_BEGIN, 5500000, 3, 0, 0, RTS_GLOBAL_LIMIT_POLL},
        {"nothing harvested: interrupts", POLL_END, 5500100, 0, RTS_ACT_ENABLE_LINE, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"poll_begin outside polling mode: budget 0", POLL_BEGIN, 5600000, 0, 0, 0, RTS_GLOBAL_LIMIT_IRQ},
        {"poll_end outside polling mode: nothing", POLL_END, 5600000, 0, 0, 0, RTS_GLOBAL_LIMIT_IRQ},
    };
    rts_global_limit g;
    CHECK_EQ(rts_global_limit_init(&g, 3, 1000000, 0), RTS_OK);
    RTS_RUN_ROWS(&g, rows, step);
    CHECK_EQ(g.to_poll, 2);
    CHECK_EQ(g.to_irq, 2);
    CHECK_EQ(g.refused, 2);
}

static void test_unlimited_and_errors(void)
{
    rts_global_limit g;
    CHECK_EQ(rts_global_limit_init(&g, 3, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_global_limit_init(&g, 0, 0, 0), RTS_OK);
    rts_action a;
    for (int i = 0; i < 1000; i++) {
        CHECK(rts_global_limit_admit_isr(&g, (rts_time_ns)i, &a));
        CHECK_EQ(a.flags, 0);
    }
    CHECK_EQ(rts_global_limit_mode_of(&g), RTS_GLOBAL_LIMIT_IRQ);
}

/* A period that reaches past the end of the time range (e.g. UINT64_MAX for
 * "one period, never replenished") must not wrap: the capacity still holds
 * and the timer saturates at UINT64_MAX instead of firing at once. */
static void test_period_past_end_of_time(void)
{
    static const struct {
        const char *name;
        rts_time_ns start, period;
    } rows[] = {
        {"period UINT64_MAX from t = 5", 5u, UINT64_MAX},
        {"period 2^63 from t = 2^63", (rts_time_ns)1 << 63, (rts_time_ns)1 << 63},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_global_limit g;
        rts_action a;
        const rts_time_ns t = rows[i].start;
        CHECK_EQ(rts_global_limit_init(&g, 2, rows[i].period, t), RTS_OK);
        CHECK(rts_global_limit_admit_isr(&g, t + 1u, &a));
        CHECK(rts_global_limit_admit_isr(&g, t + 2u, &a));
        CHECK_EQ(a.flags, RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER);
        CHECK_EQ(a.timer_at, UINT64_MAX);
        CHECK(!rts_global_limit_admit_isr(&g, t + 3u, &a));
        CHECK_EQ(rts_global_limit_poll_begin(&g, t + 4u), 0u);
        a = rts_global_limit_poll_end(&g, t + 5u);
        CHECK_EQ(a.flags, RTS_ACT_ARM_TIMER);
        CHECK_EQ(a.timer_at, UINT64_MAX);
        CHECK_EQ(g.refused, 1);
    }
}

static void test_null_state(void)
{
    ROW("init with NULL state");
    CHECK_EQ(rts_global_limit_init(NULL, 3, 1000, 0), RTS_EINVAL);
}

int main(void)
{
    RTS_RUN(test_poll_entry_and_exit);
    RTS_RUN(test_unlimited_and_errors);
    RTS_RUN(test_period_past_end_of_time);
    RTS_RUN(test_null_state);
    return rts_test_end();
}
