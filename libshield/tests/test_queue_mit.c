/* Queue Mitigation (Danicki et al. §2.2): a failed enqueue drops the packet
 * and disables RX; the driver re-enables once, after the queue is empty. */
#include "rts_test.h"
#include "rtshield/rts_queue_mit.h"

enum { OP_FAIL, OP_DONE, OP_DRAINED };

typedef struct {
    const char *name;
    int op;
    uint32_t fill; /* OP_DONE */
    uint32_t flags;
    bool line_off;
} queue_row;

static void test_full_empty_reenable(void)
{
    static const queue_row rows[] = {
        {"packet done, line on: nothing", OP_DONE, 3, RTS_ACT_NONE, false},
        {"drained while on: nothing", OP_DRAINED, 0, RTS_ACT_NONE, false},
        {"enqueue fails: drop + disable", OP_FAIL, 0, RTS_ACT_DROP | RTS_ACT_DISABLE_LINE, true},
        {"latched arrival fails again: drop only", OP_FAIL, 0, RTS_ACT_DROP, true},
        {"driver: 2 left", OP_DONE, 2, RTS_ACT_NONE, true},
        {"driver: 1 left", OP_DONE, 1, RTS_ACT_NONE, true},
        {"driver: empty: re-enable", OP_DONE, 0, RTS_ACT_ENABLE_LINE, false},
        {"driver: empty again: once only", OP_DONE, 0, RTS_ACT_NONE, false},
        {"drained call: once only", OP_DRAINED, 0, RTS_ACT_NONE, false},
        {"full again", OP_FAIL, 0, RTS_ACT_DROP | RTS_ACT_DISABLE_LINE, true},
        {"explicit drained call re-enables", OP_DRAINED, 0, RTS_ACT_ENABLE_LINE, false},
        {"and only once", OP_DRAINED, 0, RTS_ACT_NONE, false},
    };
    rts_queue_mit m;
    CHECK_EQ(rts_queue_mit_init(&m), RTS_OK);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_action a = rows[i].op == OP_FAIL   ? rts_queue_mit_on_enqueue_fail_isr(&m, i)
                       : rows[i].op == OP_DONE ? rts_queue_mit_on_packet_done(&m, i, 50, rows[i].fill)
                                               : rts_queue_mit_on_drained(&m, i);
        CHECK_EQ(a.flags, rows[i].flags);
        CHECK_EQ(m.line_off, rows[i].line_off);
    }
    CHECK_EQ(m.drops, 3);
    CHECK_EQ(m.disables, 2);
    CHECK_EQ(m.enables, 2);
    CHECK_EQ(rts_queue_mit_init(NULL), RTS_EINVAL);
}

/* Property: a queue of 5 fed by random arrivals and drained by a slower
 * driver. Every disable is matched by exactly one enable, which comes only
 * when the queue is empty; while disabled no packet enters. */
static void test_random_queue(void)
{
    const uint32_t cap = 5;
    uint32_t fill = 0, seed = 99u;
    bool line_on = true;
    rts_queue_mit m;
    rts_queue_mit_init(&m);
    uint64_t enqueued = 0, processed = 0, lost_while_off = 0;
    for (rts_time_ns t = 0; t < 200000; t++) {
        seed = seed * 1664525u + 1013904223u;
        const uint32_t r = seed >> 24;
        if (r < 100u) { /* arrival */
            if (!line_on) {
                lost_while_off++;
            } else if (fill < cap) {
                fill++;
                enqueued++;
            } else {
                rts_action a = rts_queue_mit_on_enqueue_fail_isr(&m, t);
                CHECK(a.flags & RTS_ACT_DROP);
                CHECK(a.flags & RTS_ACT_DISABLE_LINE); /* the line was on */
                line_on = false;
            }
        }
        if (r >= 150u && r < 220u && fill > 0u) { /* driver finishes a packet */
            fill--;
            processed++;
            rts_action a = rts_queue_mit_on_packet_done(&m, t, 10, fill);
            if (a.flags & RTS_ACT_ENABLE_LINE) {
                CHECK(!line_on);
                CHECK_EQ(fill, 0);
                line_on = true;
            }
        }
        CHECK_EQ(m.line_off, !line_on);
        CHECK(m.enables == m.disables || m.enables + 1 == m.disables);
    }
    CHECK(m.disables > 10);
    CHECK(lost_while_off > 0);
    CHECK_EQ(enqueued, processed + fill);
}

int main(void)
{
    RTS_RUN(test_full_empty_reenable);
    RTS_RUN(test_random_queue);
    return rts_test_end();
}
