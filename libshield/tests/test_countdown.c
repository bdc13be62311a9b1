/* Countdown filter (Regehr & Duongsaa §3.4): tables of (time, event) ->
 * expected action, next zero time and counters. */
#include "rts_test.h"
#include "rtshield/rts_countdown.h"

enum { ARR, ZERO, CONF };
#define NEVER UINT64_MAX
#define DLV RTS_ACT_DELIVER
#define LATCH RTS_ACT_ARM_TIMER

typedef struct {
    const char *name;
    int ev;
    rts_time_ns now;
    uint32_t tick_ns, initial; /* CONF rows only */
    uint32_t flags;
    rts_time_ns timer_at;
    rts_time_ns next;
    uint32_t delivered, latches, lost;
} cd_row;

static void step(rts_countdown *c, const cd_row *r)
{
    rts_action a = {RTS_ACT_NONE, 0};
    if (r->ev == ARR) {
        a = rts_countdown_on_arrival_isr(c, r->now);
    } else if (r->ev == ZERO) {
        a = rts_countdown_on_zero_isr(c, r->now);
    } else {
        CHECK_EQ(rts_countdown_configure(c, r->tick_ns, r->initial, r->now), RTS_OK);
    }
    CHECK_ACTION(a, r);
    CHECK(rts_countdown_next_event_at(c) == r->next);
    CHECK_EQ(c->delivered, r->delivered);
    CHECK_EQ(c->latches, r->latches);
    CHECK_EQ(c->lost, r->lost);
}

/* `c` initialised with `tick_ns` and `initial`, then the `n` rows at `rows`;
 * every arrival row counts in c->arrivals. */
static void run(rts_countdown *c, uint32_t tick_ns, uint32_t initial, const cd_row *rows, size_t n)
{
    CHECK_EQ(rts_countdown_init(c, tick_ns, initial), RTS_OK);
    CHECK(rts_countdown_next_event_at(c) == NEVER);
    RTS_RUN_ROWS_N(c, rows, n, step);
    ROW("after the last row");
    uint32_t arrivals = 0;
    for (size_t i = 0; i < n; i++) arrivals += rows[i].ev == ARR;
    CHECK_EQ(c->arrivals, arrivals);
}

static void test_basic(void)
{
    /* tick 10 ns, initial 100: window 1000 ns. */
    static const cd_row rows[] = {
        {"idle arrival delivered, counter loaded", ARR, 500, 0, 0, DLV, 0, 1500, 1, 0, 0},
        {"arrival while counting is latched", ARR, 700, 0, 0, LATCH, 1500, 1500, 1, 1, 0},
        {"a second one is lost", ARR, 800, 0, 0, RTS_ACT_DROP, 0, 1500, 1, 1, 1},
        {"a third one is lost", ARR, 900, 0, 0, RTS_ACT_DROP, 0, 1500, 1, 1, 2},
        {"zero called early: nothing", ZERO, 1499, 0, 0, RTS_ACT_NONE, 0, 1500, 1, 1, 2},
        {"zero with a latch: one delivery, counter restarts", ZERO, 1500, 0, 0, DLV, 0, 2500, 2, 1, 2},
        {"zero again with nothing latched: counter stops", ZERO, 2500, 0, 0, RTS_ACT_NONE, 0, NEVER, 2, 1, 2},
        {"idle arrival later", ARR, 4000, 0, 0, DLV, 0, 5000, 3, 1, 2},
        {"no call at 5000 (nothing latched): next arrival finds it idle", ARR, 5200, 0, 0, DLV, 0, 6200, 4, 1, 2},
    };
    rts_countdown c;
    run(&c, 10, 100, RTS_ROWS(rows));
    CHECK_EQ(c.arrivals, 6);
}

static void test_arrival_at_zero(void)
{
    /* Arrival at exactly the instant the counter reaches zero: the zero is
     * handled first, whichever the host calls first. */
    static const cd_row no_latch[] = {
        {"deliver at 0", ARR, 0, 0, 0, DLV, 0, 100, 1, 0, 0},
        {"arrival at the zero, before on_zero: counter at zero, delivered", ARR, 100, 0, 0, DLV, 0, 200, 2, 0, 0},
        {"on_zero for the old zero: counter running again, nothing", ZERO, 100, 0, 0, RTS_ACT_NONE, 0, 200, 2, 0, 0},
    };
    static const cd_row with_latch[] = {
        {"deliver at 0", ARR, 0, 0, 0, DLV, 0, 100, 1, 0, 0},
        {"latch", ARR, 50, 0, 0, LATCH, 100, 100, 1, 1, 0},
        {"arrival at the zero, before on_zero: latched one delivered, this one latched", ARR, 100, 0, 0,
         DLV | LATCH, 200, 200, 2, 2, 0},
        {"on_zero for the old zero: nothing more", ZERO, 100, 0, 0, RTS_ACT_NONE, 0, 200, 2, 2, 0},
        {"next zero delivers the new latch", ZERO, 200, 0, 0, DLV, 0, 300, 3, 2, 0},
    };
    static const cd_row zero_first[] = {
        {"deliver at 0", ARR, 0, 0, 0, DLV, 0, 100, 1, 0, 0},
        {"latch", ARR, 50, 0, 0, LATCH, 100, 100, 1, 1, 0},
        {"on_zero first", ZERO, 100, 0, 0, DLV, 0, 200, 2, 1, 0},
        {"arrival at the same instant: latched", ARR, 100, 0, 0, LATCH, 200, 200, 2, 2, 0},
        {"late zero call (latency) delivers it", ZERO, 230, 0, 0, DLV, 0, 300, 3, 2, 0},
    };
    rts_countdown c;
    CASE("nothing latched");
    run(&c, 1, 100, RTS_ROWS(no_latch));
    CASE("one latched");
    run(&c, 1, 100, RTS_ROWS(with_latch));
    CASE("on_zero called first");
    run(&c, 1, 100, RTS_ROWS(zero_first));
}

static void test_reconfigure(void)
{
    static const cd_row rows[] = {
        {"deliver at 0: tick 10, initial 10, zero at 100", ARR, 0, 0, 0, DLV, 0, 100, 1, 0, 0},
        {"latch", ARR, 20, 0, 0, LATCH, 100, 100, 1, 1, 0},
        /* at 35 the counter holds ceil(65 / 10) = 7; at 20 ns a tick: 140 */
        {"slower countdown while counting", CONF, 35, 20, 5, RTS_ACT_NONE, 0, 175, 1, 1, 0},
        {"old zero time passes: nothing", ZERO, 100, 0, 0, RTS_ACT_NONE, 0, 175, 1, 1, 0},
        {"new zero delivers; reload uses the new initial 5 x 20", ZERO, 175, 0, 0, DLV, 0, 275, 2, 1, 0},
        {"faster while counting, value exact: 100 / 20 = 5 -> 5 x 2", CONF, 175, 2, 5, RTS_ACT_NONE, 0, 185, 2, 1, 0},
        {"counter stops at 185", ZERO, 185, 0, 0, RTS_ACT_NONE, 0, NEVER, 2, 1, 0},
        {"initial 0: pass-through", CONF, 200, 2, 0, RTS_ACT_NONE, 0, NEVER, 2, 1, 0},
        {"every arrival delivered", ARR, 201, 0, 0, DLV, 0, NEVER, 3, 1, 0},
        {"every arrival delivered", ARR, 201, 0, 0, DLV, 0, NEVER, 4, 1, 0},
        {"back to a window of 30", CONF, 300, 3, 10, RTS_ACT_NONE, 0, NEVER, 4, 1, 0},
        {"deliver", ARR, 300, 0, 0, DLV, 0, 330, 5, 1, 0},
        {"latch", ARR, 310, 0, 0, LATCH, 330, 330, 5, 2, 0},
        {"initial 0 while a latch waits: latch kept, counter runs out", CONF, 320, 3, 0, RTS_ACT_NONE, 0, 332, 5, 2, 0},
        {"latched delivered, no reload", ZERO, 332, 0, 0, DLV, 0, NEVER, 6, 2, 0},
    };
    rts_countdown c;
    run(&c, 10, 10, RTS_ROWS(rows));
    CHECK_EQ(rts_countdown_configure(&c, 0, 4, 400), RTS_EINVAL);
    CHECK_EQ(c.tick_ns, 3);
    CHECK_EQ(rts_countdown_init(&c, 0, 4), RTS_EINVAL);
    CHECK_EQ(rts_countdown_init(NULL, 1, 4), RTS_EINVAL);
}

static void test_late_host(void)
{
    /* A host that skips the zero call by more than a window: the next
     * arrival catches up (documented: one DELIVER flag, two deliveries). */
    rts_countdown c;
    rts_countdown_init(&c, 1, 100);
    CHECK_EQ(rts_countdown_on_arrival_isr(&c, 0).flags, DLV);
    CHECK_EQ(rts_countdown_on_arrival_isr(&c, 10).flags, LATCH);
    CHECK_EQ(rts_countdown_on_arrival_isr(&c, 250).flags, DLV);
    CHECK_EQ(c.delivered, 3);
    CHECK(rts_countdown_next_event_at(&c) == 350);
}

int main(void)
{
    RTS_RUN(test_basic);
    RTS_RUN(test_arrival_at_zero);
    RTS_RUN(test_reconfigure);
    RTS_RUN(test_late_host);
    return rts_test_end();
}
