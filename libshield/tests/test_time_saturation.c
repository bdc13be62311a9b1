/* Every deadline a component computes saturates at the end of time instead
 * of wrapping into the past (a long run, or a hostile configuration). */
#include "rts_test.h"

#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_nic_moderation.h"
#include "rtshield/rts_strict.h"

static const rts_time_ns LATE = UINT64_MAX - 1000u;

static void test_strict(void)
{
    rts_strict s;
    CHECK_EQ(rts_strict_init(&s, 1000000u), RTS_OK);
    rts_action a = rts_strict_on_irq_isr(&s, LATE);
    CHECK(a.flags & RTS_ACT_ARM_TIMER);
    CHECK(a.timer_at == UINT64_MAX);
    CHECK(a.timer_at >= LATE);
}

static void test_bursty(void)
{
    rts_bursty b;
    CHECK_EQ(rts_bursty_init(&b, 1000000u, RTS_BURSTY_TIMER_PERIODIC), RTS_OK);
    uint32_t id;
    CHECK_EQ(rts_bursty_add_source(&b, 2u, &id), RTS_OK);
    rts_action a = rts_bursty_start(&b, LATE);
    CHECK(a.timer_at == UINT64_MAX);
    /* A tick long after the start: the next phase point does not wrap. */
    CHECK_EQ(rts_bursty_init(&b, UINT64_MAX / 3u, RTS_BURSTY_TIMER_PERIODIC), RTS_OK);
    CHECK_EQ(rts_bursty_add_source(&b, 2u, &id), RTS_OK);
    (void)rts_bursty_start(&b, 0u);
    uint32_t re = 0u;
    a = rts_bursty_on_tick_isr(&b, UINT64_MAX - 5u, &re);
    CHECK(a.flags & RTS_ACT_ARM_TIMER);
    CHECK(a.timer_at >= UINT64_MAX - 5u);
}

static void test_countdown(void)
{
    rts_countdown c;
    CHECK_EQ(rts_countdown_init(&c, 1000u, 1000u), RTS_OK);
    rts_action a = rts_countdown_on_arrival_isr(&c, LATE);
    CHECK(a.flags & RTS_ACT_DELIVER);
    CHECK(rts_countdown_next_event_at(&c) == UINT64_MAX);
    /* A latched arrival and its zero near the end of time. */
    a = rts_countdown_on_arrival_isr(&c, LATE + 1u);
    CHECK(a.timer_at == UINT64_MAX || !(a.flags & RTS_ACT_ARM_TIMER));
    CHECK_EQ(rts_countdown_configure(&c, 7u, 3u, LATE + 2u), RTS_OK);
    CHECK(rts_countdown_next_event_at(&c) >= LATE);
}

static void test_nic(void)
{
    rts_nic_moderation nic;
    rts_nic_moderation_init(&nic);
    uint8_t q;
    CHECK_EQ(rts_nic_moderation_bind(&nic, 17u, 502u, 8u, UINT64_MAX / 2u, UINT64_MAX / 2u, 0u, 4u, 1u, &q), RTS_OK);
    rts_nic_moderation_rx_result r;
    rts_nic_moderation_rx(&nic, 17u, 502u, LATE, &r);
    CHECK_EQ(r.outcome, RTS_NIC_STORED);
    CHECK_EQ(r.irq, 0u);
    const rts_time_ns e = rts_nic_moderation_next_expiry(&nic);
    CHECK(e == UINT64_MAX);
    /* Not expired by any earlier time: the deadline did not wrap. */
    CHECK_EQ(rts_nic_moderation_expire(&nic, LATE + 500u), 0u);
}

int main(void)
{
    RTS_RUN(test_strict);
    RTS_RUN(test_bursty);
    RTS_RUN(test_countdown);
    RTS_RUN(test_nic);
    return rts_test_end();
}
