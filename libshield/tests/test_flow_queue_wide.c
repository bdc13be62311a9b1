/* flow queues built with more than 32 flows (RTS_FLOW_MAX 40), where a set
 * of flows (rts_flow_set) is 64 bits wide: round robin, recycling, priority
 * moves and the invariant check across the boundary between the two words,
 * and buffer conservation over random sequences on flows either side of it.
 * test_flow_queue.c tests the default build (16 flows, one 32-bit word);
 * this file compiles the component itself at the wider size. */
#define RTS_FLOW_MAX 40
#include "rts_test.h"
#include "rtshield/rts_flow_queue.h"

#include "../src/flow_queue.c"

RTS_STATIC_ASSERT(sizeof(rts_flow_set) == 8, "40 flows need a 64-bit set");

static rts_flow_queue fq;

/* Push buffer `buf` (taken from the ring) into `flow` at `prio`. */
static rts_err push(unsigned buf, unsigned flow, unsigned prio)
{
    rts_err e = rts_flow_queue_rx_take_isr(&fq, buf);
    if (e != RTS_OK) return e;
    return rts_flow_queue_push_isr(&fq, buf, flow, prio, 100);
}

/* Flows 30, 31, 32, 33 and 39 at one priority, two buffers each: served
 * round robin in flow order, across the word boundary and back. */
static void test_round_robin_across_words(void)
{
    static const unsigned flows[5] = {30, 31, 32, 33, 39};
    CHECK_EQ(rts_flow_queue_init(&fq, 16, 16, 0), RTS_OK);
    for (unsigned k = 0; k < 10; k++) CHECK_EQ(push(k, flows[k % 5], 5), RTS_OK);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    for (unsigned k = 0; k < 10; k++) {
        uint16_t b;
        uint8_t fl, p;
        CHECK_EQ(rts_flow_queue_pop_highest(&fq, &b, &fl, &p), RTS_OK);
        CHECK_EQ(fl, flows[k % 5]);
        CHECK_EQ(b, k);
        CHECK_EQ(p, 5);
    }
    CHECK_EQ(rts_flow_queue_highest_prio(&fq), -1);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
}

/* Recycling takes the lowest level's lowest flow id, in either word. */
static void test_recycle_across_words(void)
{
    static const uint8_t flow[4] = {39, 33, 31, 36}, prio[4] = {2, 2, 3, 1};
    static const uint8_t expect_flow[4] = {36, 33, 39, 31};
    CHECK_EQ(rts_flow_queue_init(&fq, 16, 8, 4), RTS_OK);
    for (unsigned k = 0; k < 4; k++) CHECK_EQ(push(k, flow[k], prio[k]), RTS_OK);
    for (unsigned k = 0; k < 4; k++) {
        uint16_t b;
        uint8_t fl;
        CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, &fl), RTS_OK);
        CHECK_EQ(fl, expect_flow[k]);
        CHECK_EQ(fq.state[b], RTS_BUF_RING);
        CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    }
    uint16_t b;
    CHECK_EQ(rts_flow_queue_recycle_lowest_isr(&fq, &b, NULL), RTS_EEMPTY);
}

/* A flow in the upper word moves level with its priority; the last flow id
 * is accepted and the one past it refused; the check sees a stale bit in the
 * upper word. */
static void test_upper_word_moves_and_limits(void)
{
    CHECK_EQ(rts_flow_queue_init(&fq, 8, 8, 0), RTS_OK);
    CHECK_EQ(push(0, 35, 1), RTS_OK);
    CHECK_EQ(push(1, 35, 7), RTS_OK);
    CHECK_EQ(rts_flow_queue_lowest_prio(&fq), 7);
    CHECK_EQ(rts_flow_queue_highest_prio(&fq), 7);
    CHECK_EQ(fq.level_flows[1], 0u);
    CHECK_EQ(fq.level_flows[7], (rts_flow_set)1u << 35);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    ROW("the last flow id and the one past it");
    CHECK_EQ(rts_flow_queue_rx_take_isr(&fq, 2), RTS_OK);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 2, RTS_FLOW_MAX, 1, 10), RTS_EINVAL);
    CHECK_EQ(rts_flow_queue_push_isr(&fq, 2, RTS_FLOW_MAX - 1, 1, 10), RTS_OK);
    CHECK_EQ(rts_flow_queue_lowest_prio(&fq), 1);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
    ROW("a stale bit in the upper word");
    fq.level_flows[7] |= (rts_flow_set)1u << 37;
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_EINVAL);
    fq.level_flows[7] &= ~((rts_flow_set)1u << 37);
    CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
}

/* Random pushes, pops, recycles and releases on flows 28..39, checked after
 * every step (rts_flow_queue_check() walks each FIFO and rebuilds the sets). */
static void test_check_random_across_words(void)
{
    uint32_t rng = 0x9E3779B9u;
    enum { N = 24, R = 12 };
    CHECK_EQ(rts_flow_queue_init(&fq, N, R, R / 2), RTS_OK);
    unsigned queued = 0;
    for (int step = 0; step < 20000; step++) {
        const unsigned buf = rts_test_rnd(&rng, N);
        uint16_t out;
        switch (rts_test_rnd(&rng, 4)) {
        case 0:
            if (push(buf, 28 + rts_test_rnd(&rng, 12), rts_test_rnd(&rng, 4)) == RTS_OK) queued++;
            else if (fq.state[buf] == RTS_BUF_ISR) CHECK_EQ(rts_flow_queue_repost_isr(&fq, buf), RTS_OK);
            break;
        case 1:
            if (rts_flow_queue_pop_highest(&fq, &out, NULL, NULL) == RTS_OK) queued--;
            break;
        case 2:
            if (rts_flow_queue_recycle_lowest_isr(&fq, &out, NULL) == RTS_OK) queued--;
            break;
        default:
            if (rts_flow_queue_release(&fq, buf) == RTS_OK) (void)rts_flow_queue_refill(&fq, &out);
            break;
        }
        CHECK_EQ(rts_flow_queue_count(&fq, RTS_BUF_QUEUED), queued);
        CHECK_EQ(rts_flow_queue_check(&fq), RTS_OK);
        if (rts_test_failed_checks) return;
    }
    CHECK(queued > 0u);
}

int main(void)
{
    RTS_RUN(test_round_robin_across_words);
    RTS_RUN(test_recycle_across_words);
    RTS_RUN(test_upper_word_moves_and_limits);
    RTS_RUN(test_check_random_across_words);
    return rts_test_end();
}
