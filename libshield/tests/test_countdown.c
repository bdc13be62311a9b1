/* Countdown filter (Regehr & Duongsaa §3.4): tables of (time, event) ->
 * expected action, next zero time and counters (vectors/countdown.toml). */
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
} countdown_row;

static void step(rts_countdown *c, const countdown_row *r)
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

typedef struct {
    RTS_VECTOR_TABLE(countdown_row, rts_countdown);
    uint32_t tick_ns, initial;
} countdown_table;

#include "vectors_countdown.h"

/* The filter the tables run on. */
static rts_countdown cd;

/* `cd` initialised with the table's `tick_ns` and `initial`, then its rows;
 * every arrival row counts in its arrivals. */
static void run(const countdown_table *t)
{
    rts_countdown *c = &cd;
    CHECK_EQ(rts_countdown_init(c, t->tick_ns, t->initial), RTS_OK);
    CHECK(rts_countdown_next_event_at(c) == NEVER);
    RTS_RUN_VECTORS(c, t, step);
    ROW("after the last row");
    uint32_t arrivals = 0;
    for (size_t i = 0; i < t->n; i++) arrivals += t->rows[i].ev == ARR;
    CHECK_EQ(c->arrivals, arrivals);
}

static void test_arrival_at_zero(void)
{
    /* Arrival at exactly the instant the counter reaches zero, each table
     * its own case. */
    run(&vec_countdown_no_latch);
    run(&vec_countdown_with_latch);
    run(&vec_countdown_zero_first);
}

static void test_reconfigure(void)
{
    run(&vec_countdown_reconfigure);
    CHECK_EQ(rts_countdown_configure(&cd, 0, 4, 400), RTS_EINVAL);
    CHECK_EQ(cd.tick_ns, 3);
    CHECK_EQ(rts_countdown_init(&cd, 0, 4), RTS_EINVAL);
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
    RTS_RUN_TABLE(run, vec_countdown_basic);
    RTS_RUN(test_arrival_at_zero);
    RTS_RUN(test_reconfigure);
    RTS_RUN(test_late_host);
    return rts_test_end();
}
