/* End to end: a driver loop built only from the public receive-path API, as
 * a port would write it (descriptor ring as a FIFO of posted buffers, one
 * ISR call per filled descriptor, a network task that needs 5 µs per
 * packet). A low-priority UDP flood at 1 packet/µs must not cost the
 * high-priority flow a single packet (Behnke §5: requirement 1.1/1.2), the
 * flood must be shed by short circuits and recycling, and no buffer may be
 * lost or duplicated. */
#include "rts_frames.h"
#include "rts_test.h"
#include "rts_test_flows.h"
#include "rtshield/rts_rx_driver.h"

enum { NBUFS = 32, RING = 16, TASK_NS = 5000, HP_EVERY_US = 100, RUN_US = 20000 };

static rts_rx_driver rx;
static uint16_t ring[NBUFS]; /* posted buffers in DMA order */
static unsigned ring_head, ring_len;

static void post(uint16_t b)
{
    ring[(ring_head + ring_len) % NBUFS] = b;
    ring_len++;
}

static void test_hp_flow_survives_lp_flood(void)
{
    CHECK_EQ(rts_rx_driver_init(&rx, NULL, NBUFS, RING, 1, 0, 0, 0), RTS_OK);
    ring_head = ring_len = 0;
    for (uint16_t b = 0; b < RING; b++) post(b);
    const uint8_t hp = rts_test_bind_udp_prio(&rx.flows, 502, 20);
    rts_test_bind_udp_prio(&rx.flows, 600, 3); /* the flood's flow */

    uint8_t hp_frame[64], lp_frame[64];
    const size_t hp_len = rts_fr_udp(hp_frame, 0x0A000002u, 502, 4);
    const size_t lp_len = rts_fr_udp(lp_frame, 0x0A000003u, 600, 4);
    unsigned hp_sent = 0, hp_done = 0, lp_sent = 0, lp_done = 0, nic_drops = 0, max_prio = 0;
    bool busy = false;
    rts_rx_job cur = {0, 0, 0};
    rts_time_ns busy_until = 0;

    for (unsigned us = 0; us < RUN_US; us++) {
        const rts_time_ns now = (rts_time_ns)us * 1000u;
        /* Arrivals: the flood every µs, the HP flow every 100 µs. */
        for (int k = 0; k < (us % HP_EVERY_US == 50 ? 2 : 1); k++) {
            const bool is_hp = k == 1;
            is_hp ? hp_sent++ : lp_sent++;
            if (ring_len == 0) {
                nic_drops++; /* the NIC finds no posted buffer */
                CHECK(!is_hp);
                continue;
            }
            const uint16_t b = ring[ring_head];
            ring_head = (ring_head + 1) % NBUFS;
            ring_len--;
            rts_rx_result r;
            CHECK_EQ(rts_rx_driver_eager_isr(&rx, b, is_hp ? hp_frame : lp_frame, is_hp ? hp_len : lp_len, now, &r),
                     RTS_OK);
            if (is_hp) CHECK_EQ(r.outcome, RTS_RX_QUEUED);
            if (r.repost != RTS_BUF_NONE) post(r.repost);
            if (r.task_prio > max_prio) max_prio = r.task_prio;
        }
        /* The network task. */
        if (busy && now >= busy_until) {
            cur.flow == hp ? hp_done++ : lp_done++;
            (void)rts_rx_driver_task_complete(&rx, cur.prio);
            CHECK_EQ(rts_rx_driver_buf_free(&rx, cur.buf), RTS_OK);
            uint16_t fresh;
            if (rts_rx_driver_task_refill(&rx, &fresh) == RTS_OK) post(fresh);
            busy = false;
        }
        if (!busy && rts_rx_driver_task_next(&rx, &cur, NULL) == RTS_OK) {
            uint16_t fresh;
            if (rts_rx_driver_task_refill(&rx, &fresh) == RTS_OK) post(fresh);
            busy = true;
            busy_until = now + TASK_NS;
        }
        CHECK_EQ(ring_len, rts_flow_queue_count(&rx.fq, RTS_BUF_RING));
    }
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    const unsigned hp_waiting = rts_flow_queue_flow_count(&rx.fq, hp) + (busy && cur.flow == hp);
    printf("  hp sent %u done %u waiting %u; lp sent %u done %u; short circuits %u, recycled %u, nic drops %u\n",
           hp_sent, hp_done, hp_waiting, lp_sent, lp_done, rx.outcomes[RTS_RX_SHORT_CIRCUIT], rx.recycled,
           nic_drops);
    CHECK_EQ(hp_done + hp_waiting, hp_sent); /* not one HP packet lost */
    CHECK(hp_waiting <= 1);
    CHECK_EQ(max_prio, 20);
    CHECK(rx.outcomes[RTS_RX_SHORT_CIRCUIT] > lp_sent / 2); /* the flood is shed early */
    CHECK(lp_done > 0);                                     /* but still served in the gaps */
    CHECK(lp_done + hp_done <= RUN_US * 1000u / TASK_NS);
}

int main(void)
{
    RTS_RUN(test_hp_flow_survives_lp_flood);
    return rts_test_end();
}
