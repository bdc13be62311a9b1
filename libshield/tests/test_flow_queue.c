/* flow queues: O(1) highest/lowest lookup under every insertion order,
 * recycling of the lowest priority, round robin among equal priorities,
 * state checks, and buffer conservation across random operation sequences. */
#include "rts_test.h"
#include "rtshield/rts_flow_queue.h"

static rts_flow_queue fq;

/* Push buffer `buf` (taken from the ring) into `flow` at `prio`. */
static rts_err push(unsigned buf, unsigned flow, unsigned prio)
{
    rts_err e = rts_flow_queue_rx_take_isr(&fq, buf);
    if (e != RTS_OK) return e;
    return rts_flow_queue_push_isr(&fq, buf, flow, prio, 100);
}

static void next_perm(unsigned *a, unsigned n)
{
    /* Lexicographic next permutation (caller runs n! times). */
    unsigned i = n - 1;
    while (i > 0 && a[i - 1] >= a[i]) i--;
    if (i == 0) return;
    unsigned j = n - 1;
    while (a[j] <= a[i - 1]) j--;
    unsigned t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (unsigned l = i, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
}

/* Five flows at priorities {0, 7, 13, 21, 31}: after each insertion of every
 * one of the 120 orders, highest/lowest equal the max/min inserted so far;
 * popping yields strictly descending priority; recycling ascending. */
static void test_highest_lowest_every_order(void)
{
    static const unsigned prios[5] = {0, 7, 13, 21, 31};
    unsigned order[5] = {0, 1, 2, 3, 4};
    for (int perm = 0; perm < 120; perm++) {
        ROW("permutation");
        CHECK_EQ(rts_flow_queue_init(&fq, 16, 16, 0), RTS_OK);
        CHECK_EQ(rts_flow_queue_highest_prio(&fq), -1);
        CHECK_EQ(rts_flow_queue_lowest_prio(&fq), -1);
        int hi = -1, lo = 99;
        for (unsigned k = 0; k < 5; k++) {
            unsigned f = order[k];
            CHECK_EQ(push(k, 4 + f, prios[f]), RTS_OK);
            if ((int)prios[f] > hi) hi = (int)prios[f];
            if ((int)prios[f] < lo) lo = (int)prios[f];
            CHECK_EQ(rts_flow_queue_highest_prio(&fq), hi);
            CHECK_EQ(rts_flow_queue_lowest_prio(&fq), lo);
        }
        CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
        if (perm % 2 == 0) {
            for (int k = 4; k >= 0; k--) {
                uint16_t b;
                uint8_t fl, p;
                CHECK_EQ(rts_flow_queue_pop_highest(&fq, &b, &fl, &p), RTS_OK);
                CHECK_EQ(p, prios[k]);
                CHECK_EQ(fl, 4 + k);
            }
        } else {
            /* Make room in the ring so recycling is possible. */
            for (unsigned k = 0; k < 5; k++) {
                uint16_t b;
                uint8_t fl;
                CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
                CHECK_EQ(fl, 4 + k);
                CHECK_EQ(fq.state[b], RTS_BUF_RING);
            }
        }
        CHECK_EQ(rts_flow_queue_highest_prio(&fq), -1);
        CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
        next_perm(order, 5);
    }
}

static void test_fifo_and_round_robin(void)
{
    CHECK_EQ(rts_flow_queue_init(&fq, 32, 32, 0), RTS_OK);
    /* Flows 5 and 6 share priority 4; flow 7 is above. */
    CHECK_EQ(push(0, 5, 4), RTS_OK);
    CHECK_EQ(push(1, 5, 4), RTS_OK);
    CHECK_EQ(push(2, 6, 4), RTS_OK);
    CHECK_EQ(push(3, 6, 4), RTS_OK);
    CHECK_EQ(push(4, 7, 9), RTS_OK);
    static const uint16_t expect_buf[5] = {4, 0, 2, 1, 3};
    for (int i = 0; i < 5; i++) {
        uint16_t b;
        uint8_t fl, p;
        CHECK_EQ(rts_flow_queue_pop_highest(&fq, &b, &fl, &p), RTS_OK);
        CHECK_EQ(b, expect_buf[i]);
    }
    uint16_t b;
    CHECK_EQ(rts_flow_queue_pop_highest(&fq, &b, NULL, NULL), RTS_EEMPTY);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
}

static void test_recycle_picks_lowest_oldest(void)
{
    CHECK_EQ(rts_flow_queue_init(&fq, 16, 8, 4), RTS_OK);
    CHECK_EQ(push(0, 9, 6), RTS_OK);
    CHECK_EQ(push(1, 5, 2), RTS_OK); /* lowest flow, oldest */
    CHECK_EQ(push(2, 5, 2), RTS_OK);
    CHECK_EQ(push(3, 8, 3), RTS_OK);
    CHECK(!rts_flow_queue_ring_low(&fq)); /* 4 left in the ring, threshold 4 */
    CHECK_EQ(push(4, 9, 6), RTS_OK);
    CHECK(rts_flow_queue_ring_low(&fq));
    uint16_t b;
    uint8_t fl;
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
    CHECK_EQ(b, 1);
    CHECK_EQ(fl, 5);
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
    CHECK_EQ(b, 2);
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
    CHECK_EQ(b, 3);
    CHECK_EQ(fl, 8);
    CHECK_EQ(rts_flow_queue_lowest_prio(&fq), 6);
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
    ROW("ring full: nothing to recycle for");
    CHECK_EQ(rts_flow_queue_init(&fq, 4, 2, 1), RTS_OK);
    CHECK_EQ(push(0, 4, 1), RTS_OK);
    uint16_t r;
    CHECK_EQ(rts_flow_queue_refill(&fq, &r), RTS_OK); /* ring back to 2 of 2 */
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_EFULL);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
}

static void test_state_errors_and_limits(void)
{
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 4, 2), RTS_OK);
    CHECK_EQ(fq.state[3], RTS_BUF_RING);
    CHECK_EQ(fq.state[4], RTS_BUF_POOL);
    ROW("take a pool buffer from the ring");
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 4), RTS_EINVAL);
    ROW("push without take");
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 0, 4, 1, 10), RTS_EINVAL);
    ROW("out-of-range buffer, flow, priority");
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 8), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 0), RTS_OK);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 0, RTS_FLOW_MAX, 1, 10), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 0, 4, RTS_FLOW_PRIO_LEVELS, 10), RTS_EINVAL);
    ROW("queue limit");
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 0, 4, 1, 1), RTS_OK);
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 1), RTS_OK);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 1, 4, 1, 1), RTS_EFULL);
    CHECK_EQ(fq.state[1], RTS_BUF_ISR);
    CHECK_EQ(rts_flow_queue_repost_isr(&fq, 1), RTS_OK);
    CHECK_EQ(rts_flow_queue_repost_isr(&fq, 1), RTS_EINVAL);
    ROW("release a buffer the task does not hold");
    CHECK_EQ(rts_flow_queue_release(&fq, 0), RTS_EINVAL);
    ROW("priority change of a non-empty flow moves it");
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 1), RTS_OK);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 1, 4, 5, 10), RTS_OK);
    CHECK_EQ(rts_flow_queue_highest_prio(&fq), 5);
    CHECK_EQ(rts_flow_queue_lowest_prio(&fq), 5);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    ROW("init errors");
    CHECK_EQ(rts_flow_queue_init(&fq, RTS_POOL_MAX_BUFS + 1, 4, 2), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 9, 2), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 4, 5), RTS_EINVAL);
}

/* xorshift: deterministic pseudo-random operation sequences. */
static uint32_t rng = 0x12345678u;
static uint32_t rnd(uint32_t n)
{
    return rts_test_rnd(&rng, n);
}

enum { N = 24, R = 12 };

/* The model of where each buffer is, for the conservation test. */
static uint8_t where[N];

/* A call on buffer `buf` that moves it from state `from` to `to` returned `e`:
 * it must succeed exactly when the model has `buf` in `from`. */
static void moved(const char *call, unsigned buf, rts_err e, uint8_t from, uint8_t to)
{
    ROW(call);
    CHECK_EQ(e == RTS_OK, buf < N && where[buf] == from);
    if (e == RTS_OK) where[buf] = to;
}

/* A call that hands out a buffer (`out`) returned `e`: when it succeeded, the
 * model must have had `out` in `from`; it is now in `to`. */
static void handed_out(const char *call, rts_err e, uint16_t out, uint8_t from, uint8_t to)
{
    ROW(call);
    if (e != RTS_OK) return;
    CHECK_EQ(where[out], from);
    where[out] = to;
}

/* Conservation: an independent model of where each buffer is, compared with
 * the component after every operation, plus rts_flow_queue_check(). */
static void test_conservation_random(void)
{
    for (int seed = 0; seed < 50; seed++) {
        ROW("random sequence");
        CHECK_EQ(rts_flow_queue_init(&fq, N, R, R / 2), RTS_OK);
        for (int b = 0; b < N; b++) where[b] = b < R ? RTS_BUF_RING : RTS_BUF_POOL;
        for (int step = 0; step < 2000; step++) {
            unsigned buf = rnd(N + 2); /* sometimes out of range */
            uint16_t out = RTS_BUF_NONE;
            uint8_t fl, p;
            rts_err e;
            switch (rnd(7)) {
            case 0:
                moved("rx_take", buf, rts_flow_queue_rx_take_isr(&fq, buf), RTS_BUF_RING, RTS_BUF_ISR);
                break;
            case 1:
                ROW("push");
                e = rts_flow_queue_push_isr(&fq, buf, 4 + rnd(6), rnd(4), 3);
                if (e == RTS_OK) where[buf] = RTS_BUF_QUEUED;
                else CHECK(e == RTS_EFULL || !(buf < N && where[buf] == RTS_BUF_ISR));
                break;
            case 2:
                moved("repost", buf, rts_flow_queue_repost_isr(&fq, buf), RTS_BUF_ISR, RTS_BUF_RING);
                break;
            case 3:
                e = rts_flow_queue_recycle_lowest_isr(&fq, &out, &fl);
                handed_out("recycle_lowest", e, out, RTS_BUF_QUEUED, RTS_BUF_RING);
                break;
            case 4:
                e = rts_flow_queue_pop_highest(&fq, &out, &fl, &p);
                handed_out("pop_highest", e, out, RTS_BUF_QUEUED, RTS_BUF_TASK);
                break;
            case 5:
                e = rts_flow_queue_refill(&fq, &out);
                handed_out("refill", e, out, RTS_BUF_POOL, RTS_BUF_RING);
                break;
            default:
                moved("release", buf, rts_flow_queue_release(&fq, buf), RTS_BUF_TASK, RTS_BUF_POOL);
                break;
            }
            ROW("random sequence");
            unsigned counts[5] = {0, 0, 0, 0, 0};
            for (int b = 0; b < N; b++) {
                CHECK_EQ(fq.state[b], where[b]);
                counts[where[b]]++;
            }
            for (unsigned s = 0; s < 5; s++) CHECK_EQ(rts_flow_queue_count(&fq, s), counts[s]);
            CHECK_EQ(counts[0] + counts[1] + counts[2] + counts[3] + counts[4], N);
            CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
            if (rts_test_failed_checks) return;
        }
    }
}

static void test_check_detects_corruption(void)
{
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 4, 2), RTS_OK);
    CHECK_EQ(push(0, 4, 1), RTS_OK);
    CHECK_EQ(push(1, 4, 1), RTS_OK);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    ROW("a buffer duplicated into the spare list");
    fq.state[1] = RTS_BUF_POOL;
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_EINVAL);
    fq.state[1] = RTS_BUF_QUEUED;
    ROW("a lost link");
    fq.next[0] = RTS_BUF_NONE;
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_EINVAL);
    fq.next[0] = 1;
    ROW("a stale bitmap");
    fq.level_mask |= 1u << 3;
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_EINVAL);
    fq.level_mask &= ~(1u << 3);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
}

int main(void)
{
    RTS_RUN(test_highest_lowest_every_order);
    RTS_RUN(test_fifo_and_round_robin);
    RTS_RUN(test_recycle_picks_lowest_oldest);
    RTS_RUN(test_state_errors_and_limits);
    RTS_RUN(test_conservation_random);
    RTS_RUN(test_check_detects_corruption);
    return rts_test_end();
}
