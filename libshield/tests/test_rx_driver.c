/* rx driver: the three paths of Behnke Figure 8 (short circuit, flow limit,
 * recycling), inheritance through the driver, header-only then full cache
 * invalidation, global limit, NIC descriptors (§9), and buffer conservation
 * between ring, pool, queues and task across random sequences. */
#include "rts_frames.h"
#include "rts_port_posix.h"
#include "rts_test.h"
#include "rts_test_flows.h"
#include "rtshield/rts_rx_driver.h"

static rts_rx_driver rx;
static rts_port port;
static rts_posix_port hw;
static uint8_t hp, lp;

enum { HP_PRIO = 10, LP_PRIO = 2, BASE = 1, NBUFS = 16, RING = 8 };

static void setup(uint32_t gcap, rts_time_ns gperiod)
{
    rts_posix_port_init(&port, &hw);
    CHECK_EQ(rts_rx_driver_init(&rx, &port, NBUFS, RING, BASE, gcap, gperiod, 0), RTS_OK);
    CHECK_EQ(rx.fq.ring_threshold, RING / 2);
    hp = rts_test_bind_udp_prio(&rx.flows, 502, HP_PRIO);
    lp = rts_test_bind_udp_prio(&rx.flows, 600, LP_PRIO);
}

static rts_rx_result eager(unsigned buf, uint16_t dport, rts_time_ns now)
{
    uint8_t fr[128];
    size_t n = rts_fr_udp(fr, 0x0A000009u, dport, 10);
    rts_rx_result r;
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, buf, fr, n, now, &r), RTS_OK);
    return r;
}

/* What an arrival should give: its outcome, the buffer to re-post, the flow a
 * buffer was recycled from, and the LP buffers queued afterwards. */
typedef struct {
    uint8_t outcome;
    uint16_t repost;
    uint8_t recycled_flow;
    unsigned lp_queued;
} rx_expect;

/* A UDP frame to `dport` on `buf` at `now`, checked against `e` and followed
 * by the flow queues' own consistency check. */
static rts_rx_result arrive(unsigned buf, uint16_t dport, rts_time_ns now, rx_expect e)
{
    const rts_rx_result r = eager(buf, dport, now);
    CHECK_EQ(r.outcome, e.outcome);
    CHECK_EQ(r.repost, e.repost);
    CHECK_EQ(r.recycled_flow, e.recycled_flow);
    CHECK_EQ(rts_flow_queue_flow_count(&rx.fq, lp), e.lp_queued);
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    return r;
}

static void test_queue_inherit_process(void)
{
    setup(0, 0);
    rts_rx_result r = eager(0, 600, 10);
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(r.flow, lp);
    CHECK_EQ(r.repost, RTS_BUF_NONE);
    CHECK_EQ(r.flags, RTS_ACT_RESCHEDULE);
    CHECK_EQ(r.task_prio, LP_PRIO);
    r = eager(1, 502, 20);
    CHECK_EQ(r.flags, RTS_ACT_RESCHEDULE);
    CHECK_EQ(r.task_prio, HP_PRIO);
    r = eager(2, 600, 30); /* no raise for a lower packet */
    CHECK_EQ(r.flags, 0);
    CHECK_EQ(r.task_prio, HP_PRIO);
    rts_rx_job job;
    rts_prio_inherit_change c;
    CHECK_EQ(rts_rx_driver_task_next(&rx, &job, &c), RTS_OK);
    CHECK_EQ(job.buf, 1);
    CHECK_EQ(job.prio, HP_PRIO);
    uint16_t fresh;
    CHECK_EQ(rts_rx_driver_task_refill(&rx, &fresh), RTS_OK);
    CHECK_EQ(fresh, RING); /* the first spare buffer */
    CHECK_EQ(rts_rx_driver_task_complete(&rx, job.prio), RTS_PRIO_INHERIT_LOWERED);
    CHECK_EQ(rts_prio_inherit_current(&rx.pi), LP_PRIO);
    CHECK_EQ(rts_rx_driver_buf_free(&rx, job.buf), RTS_OK);
    CHECK_EQ(rts_rx_driver_buf_free(&rx, job.buf), RTS_EINVAL);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(rts_rx_driver_task_next(&rx, &job, &c), RTS_OK);
        CHECK_EQ(job.flow, lp);
        CHECK_EQ(rts_rx_driver_task_complete(&rx, job.prio), i == 0 ? RTS_PRIO_INHERIT_UNCHANGED : RTS_PRIO_INHERIT_LOWERED);
    }
    CHECK_EQ(rts_prio_inherit_current(&rx.pi), BASE);
    CHECK_EQ(rts_rx_driver_task_next(&rx, &job, &c), RTS_EEMPTY);
    CHECK_EQ(c, RTS_PRIO_INHERIT_UNCHANGED);
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
}

static void test_short_circuit_and_recycling(void)
{
    setup(0, 0);
    /* Four LP packets: ring 8 -> 4, not below the threshold 4. */
    for (unsigned b = 0; b < 4; b++) CHECK_EQ(eager(b, 600, b).outcome, RTS_RX_QUEUED);
    CHECK(!rts_flow_queue_ring_low(&rx.fq));
    ROW("5th LP: ring low and lowest priority -> short circuit (a)");
    rts_rx_result r = arrive(4, 600, 5, (rx_expect){RTS_RX_SHORT_CIRCUIT, 4, RTS_FLOW_NONE, 4});
    CHECK_EQ(rx.fq.state[4], RTS_BUF_RING);
    ROW("background (prio 0) is below every queued packet: short circuit");
    uint8_t fr[128];
    rts_frame_spec frag = {.ip_proto = 17, .dport = 502, .frag = 0x2000};
    size_t n = rts_fr_ipv4(fr, &frag);
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, 5, fr, n, 6, &r), RTS_OK);
    CHECK_EQ(r.flow, RTS_FLOW_BACKGROUND);
    CHECK_EQ(r.outcome, RTS_RX_SHORT_CIRCUIT);
    ROW("HP while the ring is low: queued, and the oldest LP buffer recycled (c)");
    arrive(6, 502, 7, (rx_expect){RTS_RX_QUEUED, 0, lp, 3});
    CHECK_EQ(rx.fq.state[0], RTS_BUF_RING);
    CHECK_EQ(rts_flow_queue_flow_count(&rx.fq, hp), 1);
    CHECK_EQ(rx.recycled, 1);
    CHECK_EQ(rx.outcomes[RTS_RX_SHORT_CIRCUIT], 2);
    ROW("another HP: an HP is queued but LP is lowest: recycle LP again");
    r = eager(7, 502, 8);
    CHECK_EQ(r.repost, 1);
    ROW("with only HP left, an HP arrival at the lowest level is short-circuited");
    r = eager(0, 502, 9);
    CHECK_EQ(r.repost, 2);
    r = eager(1, 502, 10);
    CHECK_EQ(r.repost, 3);
    CHECK_EQ(rts_flow_queue_lowest_prio(&rx.fq), HP_PRIO);
    r = eager(2, 502, 11);
    CHECK_EQ(r.outcome, RTS_RX_SHORT_CIRCUIT);
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    ROW("ring low but queues empty: nothing to recycle, the packet is queued");
    setup(0, 0);
    for (unsigned b = 0; b < 5; b++) {
        CHECK_EQ(eager(b, 502, b).outcome, RTS_RX_QUEUED);
        rts_rx_job job;
        CHECK_EQ(rts_rx_driver_task_next(&rx, &job, NULL), RTS_OK); /* the stack keeps them */
    }
    CHECK(rts_flow_queue_ring_low(&rx.fq));
    r = eager(5, 600, 6);
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(r.repost, RTS_BUF_NONE);
}

/* Regression: a flow whose priority was raised at run time still has its
 * queued buffers filed at the old level until its next packet; that packet
 * moves the whole flow to the new level. Path (c) must then not recycle a
 * buffer of the packet's own priority (it judged "lower" before the push). */
static void test_recycle_after_priority_raise(void)
{
    setup(0, 0);
    CHECK_EQ(rts_flow_queue_set_threshold(&rx.fq, 5), RTS_OK);
    for (unsigned b = 0; b < 3; b++) {
        CHECK_EQ(eager(b, 600, 10 + b).outcome, RTS_RX_QUEUED);
        CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    }
    CHECK(!rts_flow_queue_ring_low(&rx.fq));
    CHECK_EQ(rts_flow_table_setopt(&rx.flows, lp, RTS_FLOWOPT_PRIORITY, 12, 20), RTS_OK);
    CHECK_EQ(rts_flow_queue_lowest_prio(&rx.fq), LP_PRIO); /* filed at the old level */
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    ROW("LP (now 12) at a low ring: queued, nothing of priority 12 recycled");
    rts_rx_result r = arrive(3, 600, 30, (rx_expect){RTS_RX_QUEUED, RTS_BUF_NONE, RTS_FLOW_NONE, 4});
    CHECK_EQ(r.prio, 12);
    CHECK_EQ(r.flags, RTS_ACT_RESCHEDULE);
    CHECK_EQ(r.task_prio, 12);
    CHECK_EQ(rx.fq.q[lp].level, 12);
    CHECK_EQ(rx.recycled, 0);
    ROW("HP (10) is now below LP: short circuit, no recycling of LP");
    arrive(4, 502, 40, (rx_expect){RTS_RX_SHORT_CIRCUIT, 4, RTS_FLOW_NONE, 4});
    ROW("a strictly lower flow queued: its buffer is the one recycled");
    setup(0, 0);
    CHECK_EQ(rts_flow_queue_set_threshold(&rx.fq, 5), RTS_OK);
    uint8_t fr[128];
    rts_frame_spec frag = {.ip_proto = 17, .dport = 600, .frag = 0x2000};
    size_t n = rts_fr_ipv4(fr, &frag); /* background flow, priority 0 */
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, 0, fr, n, 5, &r), RTS_OK);
    CHECK_EQ(r.flow, RTS_FLOW_BACKGROUND);
    CHECK_EQ(eager(1, 600, 10).outcome, RTS_RX_QUEUED);
    CHECK_EQ(eager(2, 600, 11).outcome, RTS_RX_QUEUED);
    CHECK_EQ(rts_flow_table_setopt(&rx.flows, lp, RTS_FLOWOPT_PRIORITY, 12, 20), RTS_OK);
    arrive(3, 600, 30, (rx_expect){RTS_RX_QUEUED, 0, RTS_FLOW_BACKGROUND, 3});
}

/* Short circuit off (Behnke Figure 9, footnote 1): the lowest-priority
 * arrival at a low ring is queued and the oldest buffer of its level is
 * recycled, but never the arrival itself. */
static void test_short_circuit_off(void)
{
    setup(0, 0);
    rx.short_circuit = 0;
    for (unsigned b = 0; b < 4; b++) CHECK_EQ(eager(b, 600, b).outcome, RTS_RX_QUEUED);
    ROW("5th LP at the low ring: queued, oldest LP recycled");
    arrive(4, 600, 5, (rx_expect){RTS_RX_QUEUED, 0, lp, 4});
    CHECK_EQ(rx.outcomes[RTS_RX_SHORT_CIRCUIT], 0);
    ROW("queues empty at a low ring (the stack holds the buffers): the arrival stays queued");
    setup(0, 0);
    rx.short_circuit = 0;
    rts_rx_job job;
    for (unsigned b = 0; b < 5; b++) {
        arrive(b, 502, b, (rx_expect){RTS_RX_QUEUED, RTS_BUF_NONE, RTS_FLOW_NONE, 0});
        CHECK_EQ(rts_rx_driver_task_next(&rx, &job, NULL), RTS_OK);
        CHECK_EQ(job.buf, b);
        CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
    }
    CHECK(rts_flow_queue_ring_low(&rx.fq));
    arrive(5, 600, 10, (rx_expect){RTS_RX_QUEUED, RTS_BUF_NONE, RTS_FLOW_NONE, 1});
    ROW("the next LP: its own older buffer is recycled");
    arrive(6, 600, 11, (rx_expect){RTS_RX_QUEUED, 5, lp, 1});
}

static void test_flow_limit_path_b(void)
{
    setup(0, 0);
    CHECK_EQ(rts_flow_table_setopt(&rx.flows, hp, RTS_FLOWOPT_CAPACITY, 2, 0), RTS_OK);
    CHECK_EQ(rts_flow_table_setopt(&rx.flows, hp, RTS_FLOWOPT_PERIOD_NS, 1000000, 0), RTS_OK);
    CHECK_EQ(eager(0, 502, 100).outcome, RTS_RX_QUEUED);
    CHECK_EQ(eager(1, 502, 200).outcome, RTS_RX_QUEUED);
    rts_rx_result r = eager(2, 502, 300);
    CHECK_EQ(r.outcome, RTS_RX_FLOW_LIMIT);
    CHECK_EQ(r.repost, 2);
    CHECK_EQ(r.flags, 0);
    CHECK_EQ(eager(2, 502, 1000000).outcome, RTS_RX_QUEUED); /* replenished */
    ROW("queue limit");
    CHECK_EQ(rts_flow_queue_set_threshold(&rx.fq, 0), RTS_OK); /* no recycling here */
    CHECK_EQ(rts_flow_table_setopt(&rx.flows, lp, RTS_FLOWOPT_QUEUE_LIMIT, 1, 0), RTS_OK);
    CHECK_EQ(eager(3, 600, 1000001).outcome, RTS_RX_QUEUED);
    r = eager(4, 600, 1000002);
    CHECK_EQ(r.outcome, RTS_RX_QUEUE_FULL);
    CHECK_EQ(r.repost, 4);
    CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
}

static void test_cache_hooks(void)
{
    setup(0, 0);
    uint8_t fr[600];
    size_t n = rts_fr_udp(fr, 1, 502, 500);
    rts_rx_result r;
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, 0, fr, n, 1, &r), RTS_OK);
    CHECK_EQ(hw.cache_invalidated_bytes, RTS_RX_HDR_BYTES);
    rts_rx_driver_task_invalidate(&rx, fr, n);
    CHECK_EQ(hw.cache_invalidated_bytes, n);
    ROW("short frame: header invalidation bounded by len");
    hw.cache_invalidated_bytes = 0;
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, 1, fr, 60, 2, &r), RTS_OK);
    CHECK_EQ(hw.cache_invalidated_bytes, 60);
    rts_rx_driver_task_invalidate(&rx, fr, 60);
    CHECK_EQ(hw.cache_invalidated_bytes, 60);
    ROW("descriptor path: no classification, no invalidation (Behnke §9)");
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rx, 2, lp, 7, 3, &r), RTS_OK);
    CHECK_EQ(hw.cache_invalidated_bytes, 60);
    CHECK_EQ(r.flow, lp);
    CHECK_EQ(r.prio, 7);
    CHECK_EQ(r.task_prio, HP_PRIO); /* the HP packets still wait */
    CHECK_EQ(r.flags, 0);
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rx, 3, 200, 99, 4, &r), RTS_OK);
    CHECK_EQ(r.flow, RTS_FLOW_DEFAULT);
    CHECK_EQ(r.prio, RTS_FLOW_PRIO_LEVELS - 1);
    CHECK_EQ(r.flags, RTS_ACT_RESCHEDULE);
    CHECK_EQ(r.task_prio, RTS_FLOW_PRIO_LEVELS - 1);
    ROW("a buffer not in the ring is refused, nothing changes");
    CHECK_EQ(rts_rx_driver_eager_isr(&rx, 0, fr, n, 5, &r), RTS_EINVAL);
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rx, NBUFS, lp, 1, 5, &r), RTS_EINVAL);
    CHECK_EQ(rx.harvested, 4);
}

static void test_global_limit_polling(void)
{
    setup(3, 1000000);
    CHECK_EQ(eager(0, 600, 10).flags, RTS_ACT_RESCHEDULE);
    CHECK_EQ(eager(1, 600, 20).flags, 0);
    rts_rx_result r = eager(2, 600, 30);
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(r.flags, RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER);
    CHECK_EQ(r.timer_at, 1000000);
    r = eager(3, 600, 40);
    CHECK_EQ(r.outcome, RTS_RX_GLOBAL_LIMIT);
    CHECK_EQ(rx.fq.state[3], RTS_BUF_RING); /* left in the ring */
    CHECK_EQ(rts_rx_driver_poll_begin(&rx, 1000000), 3);
    CHECK_EQ(eager(3, 600, 1000010).outcome, RTS_RX_QUEUED);
    rts_action a = rts_rx_driver_poll_end(&rx, 1000020);
    CHECK_EQ(a.flags, RTS_ACT_ENABLE_LINE);
    CHECK_EQ(rts_global_limit_mode_of(&rx.glim), RTS_GLOBAL_LIMIT_IRQ);
    CHECK_EQ(rx.outcomes[RTS_RX_GLOBAL_LIMIT], 1);
}

static uint32_t rng = 0xC0FFEEu;
static uint32_t rnd(uint32_t n)
{
    return rts_test_rnd(&rng, n);
}

/* The port's own view: which buffers it has posted to the ring and which
 * the stack holds. After every step the driver's view must agree, and the
 * total must stay NBUFS: nothing lost, nothing duplicated. */
static void test_conservation_random(void)
{
    static const uint16_t ports[4] = {502, 600, 7, 9};
    uint32_t seen[RTS_RX_OUTCOMES] = {0}, recycled = 0;
    for (int seed = 0; seed < 30; seed++) {
        setup(seed % 2 ? 5 : 0, 200000);
        rts_time_ns poll_at = 0;
        CHECK_EQ(rts_flow_table_setopt(&rx.flows, hp, RTS_FLOWOPT_CAPACITY, 2, 0), RTS_OK);
        CHECK_EQ(rts_flow_table_setopt(&rx.flows, hp, RTS_FLOWOPT_PERIOD_NS, 300000, 0), RTS_OK);
        CHECK_EQ(rts_flow_table_setopt(&rx.flows, lp, RTS_FLOWOPT_QUEUE_LIMIT, 4, 0), RTS_OK);
        bool posted[NBUFS] = {false}, held[NBUFS] = {false};
        uint8_t held_prio[NBUFS] = {0};
        for (int b = 0; b < RING; b++) posted[b] = true;
        rts_time_ns now = 0;
        for (int step = 0; step < 3000; step++) {
            now += rnd(20000);
            if (rts_global_limit_mode_of(&rx.glim) == RTS_GLOBAL_LIMIT_POLL && now >= poll_at) {
                /* The polling task: its harvest is the ISR's below. */
                (void)rts_rx_driver_poll_begin(&rx, now);
                rts_action a = rts_rx_driver_poll_end(&rx, now);
                if (a.flags & RTS_ACT_ARM_TIMER) poll_at = a.timer_at;
            }
            unsigned op = rnd(10);
            if (op < 5) {
                /* DMA filled some posted buffer; the ISR harvests it. */
                unsigned b = rnd(NBUFS);
                if (!posted[b]) continue;
                uint8_t fr[128];
                size_t n = rts_fr_udp(fr, 1, ports[rnd(4)], 4);
                rts_rx_result r;
                CHECK_EQ(rts_rx_driver_eager_isr(&rx, b, fr, n, now, &r), RTS_OK);
                if (r.flags & RTS_ACT_ARM_TIMER) poll_at = r.timer_at;
                if (r.outcome == RTS_RX_GLOBAL_LIMIT) continue;
                posted[b] = false;
                if (r.repost != RTS_BUF_NONE) {
                    CHECK(!posted[r.repost]);
                    posted[r.repost] = true;
                }
            } else if (op < 7) {
                rts_rx_job job;
                if (rts_rx_driver_task_next(&rx, &job, NULL) == RTS_OK) {
                    CHECK(!held[job.buf] && !posted[job.buf]);
                    held[job.buf] = true;
                    held_prio[job.buf] = job.prio;
                    uint16_t fresh;
                    if (rts_rx_driver_task_refill(&rx, &fresh) == RTS_OK) {
                        CHECK(!posted[fresh] && !held[fresh]);
                        posted[fresh] = true;
                    }
                }
            } else {
                unsigned b = rnd(NBUFS);
                if (!held[b]) continue;
                (void)rts_rx_driver_task_complete(&rx, held_prio[b]);
                CHECK_EQ(rts_rx_driver_buf_free(&rx, b), RTS_OK);
                held[b] = false;
                uint16_t fresh;
                if (rts_rx_driver_task_refill(&rx, &fresh) == RTS_OK) posted[fresh] = true;
            }
            unsigned n_posted = 0, n_held = 0;
            for (int b = 0; b < NBUFS; b++) {
                CHECK_EQ(posted[b], rx.fq.state[b] == RTS_BUF_RING);
                CHECK_EQ(held[b], rx.fq.state[b] == RTS_BUF_TASK);
                n_posted += posted[b];
                n_held += held[b];
            }
            CHECK_EQ(n_posted + n_held + rts_flow_queue_count(&rx.fq, RTS_BUF_QUEUED) + rts_flow_queue_count(&rx.fq, RTS_BUF_POOL),
                     NBUFS);
            CHECK_EQ(rts_flow_queue_count(&rx.fq, RTS_BUF_ISR), 0);
            CHECK_EQ(rts_flow_queue_check(&rx.fq), RTS_OK);
            if (rts_test_failed_checks) return;
        }
        for (int o = 0; o < RTS_RX_OUTCOMES; o++) seen[o] += rx.outcomes[o];
        recycled += rx.recycled;
    }
    /* The sequences exercised every path. */
    for (int o = 0; o < RTS_RX_OUTCOMES; o++) {
        if (seen[o] == 0) fprintf(stderr, "outcome %d never seen\n", o);
        CHECK(seen[o] > 0);
    }
    CHECK(recycled > 0);
}

int main(void)
{
    RTS_RUN(test_queue_inherit_process);
    RTS_RUN(test_short_circuit_and_recycling);
    RTS_RUN(test_recycle_after_priority_raise);
    RTS_RUN(test_short_circuit_off);
    RTS_RUN(test_flow_limit_path_b);
    RTS_RUN(test_cache_hooks);
    RTS_RUN(test_global_limit_polling);
    RTS_RUN(test_conservation_random);
    return rts_test_end();
}
