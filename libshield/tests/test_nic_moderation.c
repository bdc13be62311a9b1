/* NIC moderation (Behnke §7): interrupts by packet timer, by absolute
 * timer and by frame threshold (vectors/nic_moderation.toml); unregistered
 * frames dropped before any interrupt; queue-full drops; queues added and released at run time;
 * descriptors carry flow and priority (§9); memory m·30 B + 14 B. */
#include "rts_test.h"
#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_nic_moderation.h"

static rts_nic_moderation nic;

typedef enum { RX, TICK } nic_op;

typedef struct {
    const char *name;
    nic_op op;
    rts_time_ns t;
    int irq;            /* RX: irq now; TICK: interrupt mask */
    int announced;      /* descriptors announced by that interrupt */
    rts_time_ns next;   /* rts_nic_moderation_next_expiry() afterwards */
} nic_moderation_row;

static void step(uint8_t q, const nic_moderation_row *r)
{
    if (r->op == RX) {
        rts_nic_moderation_rx_result rx;
        rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 502, r->t, &rx);
        CHECK_EQ(rx.outcome, RTS_NIC_STORED);
        CHECK_EQ(rx.queue, q);
        CHECK_EQ(rx.irq, r->irq);
        if (rx.irq) CHECK_EQ(rx.announced, r->announced);
    } else {
        CHECK_EQ(rts_nic_moderation_next_expiry(&nic) <= r->t, r->irq != 0);
        uint32_t mask = rts_nic_moderation_expire(&nic, r->t);
        CHECK_EQ(mask, (uint32_t)r->irq << q);
        if (mask) CHECK_EQ(nic.q[q].announced, r->announced);
    }
    CHECK_EQ(rts_nic_moderation_next_expiry(&nic), r->next);
}

typedef struct {
    RTS_VECTOR_TABLE(nic_moderation_row, rts_nic_moderation);
    unsigned size;
    rts_time_ns t_abs, t_pack;
    unsigned frames;
} nic_moderation_table;

#include "vectors_nic_moderation.h"

/* A fresh NIC with one queue for UDP 502 (flow 5, priority 3) configured as
 * the table says (size, t_abs, t_pack, frames; 0: off), then the table's
 * rows; returns the queue. */
static uint8_t run(const nic_moderation_table *t)
{
    rts_nic_moderation_init(&nic);
    uint8_t q = RTS_NIC_MAX_QUEUES;
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_PROTO_UDP, 502, t->size, t->t_abs, t->t_pack, t->frames, 5, 3, &q),
             RTS_OK);
    RTS_RUN_ROWS_N(q, t->rows, t->n, step);
    return q;
}

static void test_packet_timer(void)
{
    const uint8_t q = run(&vec_nic_moderation_packet_timer);
    CHECK_EQ(nic.q[q].irqs, 2);
}

static void test_frame_threshold_and_full(void)
{
    const uint8_t q = run(&vec_nic_moderation_frame_threshold);
    ROW("full queue drops");
    CHECK_EQ(rts_nic_moderation_queue_config(&nic, q, 2, 5000000, 0, 0), RTS_OK); /* shrink: 1 waiting, size 2 */
    rts_nic_moderation_rx_result r;
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 502, 40, &r);
    CHECK_EQ(r.outcome, RTS_NIC_STORED);
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 502, 50, &r);
    CHECK_EQ(r.outcome, RTS_NIC_QUEUE_FULL);
    CHECK_EQ(nic.q[q].dropped, 1);
    ROW("unmoderated queue: one interrupt per frame");
    uint8_t arp;
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_NIC_PROTO_NONTRANSPORT, 0, 8, 0, 0, 0, RTS_FLOW_ARP, 1, &arp), RTS_OK);
    for (int i = 0; i < 3; i++) {
        rts_nic_moderation_rx(&nic, RTS_NIC_PROTO_NONTRANSPORT, 1234 /* ignored */, 60, &r);
        CHECK_EQ(r.outcome, RTS_NIC_STORED);
        CHECK_EQ(r.queue, arp);
        CHECK_EQ(r.irq, 1);
        CHECK_EQ(r.announced, 1);
    }
    ROW("ICMP has its own queue and flow id");
    uint8_t icmp;
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_NIC_PROTO_ICMP, 0, 8, 0, 0, 0, RTS_FLOW_ICMP, 1, &icmp), RTS_OK);
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_NIC_PROTO_ICMP, 5, 8, 0, 0, 0, RTS_FLOW_ICMP, 1, &icmp), RTS_EINVAL);
    rts_nic_moderation_rx(&nic, RTS_NIC_PROTO_ICMP, 0, 70, &r);
    CHECK_EQ(r.queue, icmp);
    rts_nic_moderation_desc d;
    CHECK_EQ(rts_nic_moderation_describe(&nic, icmp, &d), RTS_OK);
    CHECK_EQ(d.flow, RTS_FLOW_ICMP);
    CHECK_EQ(rts_nic_moderation_describe(&nic, arp, &d), RTS_OK);
    CHECK_EQ(d.flow, RTS_FLOW_ARP);
}

static void test_unregistered_and_runtime_reconfiguration(void)
{
    rts_nic_moderation_init(&nic);
    rts_nic_moderation_rx_result r;
    ROW("nothing registered: every frame dropped, no interrupt");
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 502, 0, &r);
    CHECK_EQ(r.outcome, RTS_NIC_UNREGISTERED);
    CHECK_EQ(r.irq, 0);
    CHECK_EQ(nic.unregistered, 1);
    CHECK_EQ(rts_nic_moderation_next_expiry(&nic), 0);
    ROW("bind two sockets: two queues");
    uint8_t qa, qb;
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_PROTO_UDP, 502, 16, 1000, 0, 0, 4, 9, &qa), RTS_OK);
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_PROTO_TCP, 80, 16, 2000, 0, 0, 5, 2, &qb), RTS_OK);
    CHECK_EQ(rts_nic_moderation_bind(&nic, RTS_PROTO_TCP, 80, 16, 2000, 0, 0, 5, 2, &qb), RTS_EEXIST);
    CHECK_EQ(rts_nic_moderation_queue_count(&nic), 2);
    rts_nic_moderation_rx(&nic, RTS_PROTO_TCP, 80, 10, &r);
    CHECK_EQ(r.queue, qb);
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 80, 10, &r);
    CHECK_EQ(r.outcome, RTS_NIC_UNREGISTERED);
    ROW("descriptor carries flow and priority");
    rts_nic_moderation_desc d;
    CHECK_EQ(rts_nic_moderation_describe(&nic, qb, &d), RTS_OK);
    CHECK_EQ(d.flow, 5);
    CHECK_EQ(d.prio, 2);
    CHECK_EQ(d.queue, qb);
    ROW("a second port shares queue qa; unbinding one keeps the queue");
    CHECK_EQ(rts_nic_moderation_map_add(&nic, RTS_PROTO_UDP, 503, qa), RTS_OK);
    CHECK_EQ(rts_nic_moderation_unbind(&nic, RTS_PROTO_UDP, 502), RTS_OK);
    CHECK_EQ(rts_nic_moderation_queue_count(&nic), 2);
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 502, 20, &r);
    CHECK_EQ(r.outcome, RTS_NIC_UNREGISTERED);
    rts_nic_moderation_rx(&nic, RTS_PROTO_UDP, 503, 20, &r);
    CHECK_EQ(r.queue, qa);
    CHECK_EQ(rts_nic_moderation_unbind(&nic, RTS_PROTO_UDP, 503), RTS_OK);
    CHECK_EQ(rts_nic_moderation_queue_count(&nic), 1);
    CHECK_EQ(nic.q[qa].dropped, 1); /* its waiting descriptor went with it */
    ROW("released queue's timer no longer counts");
    CHECK_EQ(rts_nic_moderation_next_expiry(&nic), 2010);
    ROW("reconfigure a live queue");
    CHECK_EQ(rts_nic_moderation_queue_config(&nic, qb, 16, 0, 0, 1), RTS_OK);
    rts_nic_moderation_rx(&nic, RTS_PROTO_TCP, 80, 30, &r);
    CHECK_EQ(r.irq, 1);
    CHECK_EQ(r.announced, 2);
    ROW("errors");
    CHECK_EQ(rts_nic_moderation_queue_config(&nic, qa, 16, 0, 0, 1), RTS_ENOENT);
    CHECK_EQ(rts_nic_moderation_queue_config(&nic, qb, 0, 0, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_nic_moderation_queue_config(&nic, qb, 4, 0, 0, 5), RTS_EINVAL);
    CHECK_EQ(rts_nic_moderation_queue_release(&nic, RTS_NIC_MAX_QUEUES), RTS_ENOENT);
    CHECK_EQ(rts_nic_moderation_unbind(&nic, RTS_PROTO_UDP, 502), RTS_ENOENT);
    CHECK_EQ(rts_nic_moderation_map_add(&nic, RTS_PROTO_UDP, 0, qb), RTS_EINVAL);
    CHECK_EQ(rts_nic_moderation_map_add(&nic, 99, 7, qb), RTS_EINVAL);
    CHECK_EQ(rts_nic_moderation_map_add(&nic, RTS_PROTO_UDP, 7, qa), RTS_ENOENT);
    ROW("all queues in use");
    uint8_t q;
    unsigned added = 1;
    while (rts_nic_moderation_bind(&nic, RTS_PROTO_UDP, 1000 + added, 4, 0, 0, 0, 1, 1, &q) == RTS_OK) added++;
    CHECK_EQ(added, RTS_NIC_MAX_QUEUES);
    CHECK_EQ(rts_nic_moderation_queue_add(&nic, 4, 0, 0, 0, 1, 1, &q), RTS_EFULL);
}

static void test_memory(void)
{
    CHECK_EQ(rts_nic_moderation_memory_bytes(0), 14);
    CHECK_EQ(rts_nic_moderation_memory_bytes(1), 44);
    CHECK_EQ(rts_nic_moderation_memory_bytes(4), 134);
}

int main(void)
{
    RTS_RUN(test_packet_timer);
    RTS_RUN_TABLE(run, vec_nic_moderation_absolute_timer);
    RTS_RUN(test_frame_threshold_and_full);
    RTS_RUN(test_unregistered_and_runtime_reconfiguration);
    RTS_RUN(test_memory);
    return rts_test_end();
}
