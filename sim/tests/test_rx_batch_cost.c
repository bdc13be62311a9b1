/* isr_rx_batch: the RX ISR's body is charged once per interrupt (one batch),
 * on top of entry/exit and the per-descriptor work; the tick is not. */
#include "sim_test_util.h"

static uint64_t isr_rx_ns(int64_t batch_ns, int64_t t_abs_ns, uint64_t *irqs, uint64_t *pkts,
                          uint64_t *tick_ns)
{
    rtsim_config c = base(1000 * MS);
    c.tick_ns = 1 * MS;
    c.costs.tick_isr_ns = 3 * US;
    c.costs.isr_per_packet_ns = 1 * US;
    c.costs.isr_rx_batch_ns = batch_ns;
    c.queue_capacity = 256;
    c.nic_kind = RTSIM_NIC_MULTIQUEUE;
    c.n_nic_queues = 1;
    c.nic_queues[0].size = 128;
    c.nic_queues[0].t_abs_ns = t_abs_ns;
    add_driver(&c, 1);
    int f = add_udp_flow(&c, RTSIM_PAT_CONSTANT, 1000, 9);
    c.flows[f].unbound = 1;
    c.flows[f].nic_queue = 0;
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    *irqs = t.isr_runs;
    *pkts = t.received;
    *tick_ns = t.cpu_ns[RTSIM_CTX_ISR_TICK];
    rtsim_destroy(s);
    return t.cpu_ns[RTSIM_CTX_ISR_RX];
}

static void test_charged_per_interrupt(void)
{
    uint64_t irqs, pkts, tick0, tick1;
    /* unmoderated: one interrupt per packet */
    uint64_t a = isr_rx_ns(0, 0, &irqs, &pkts, &tick0);
    CHECK_EQ(irqs, pkts);
    CHECK_EQ(a, irqs * (1 * US + 1 * US));
    uint64_t b = isr_rx_ns(18 * US, 0, &irqs, &pkts, &tick1);
    CHECK_EQ(b, irqs * (1 * US + 18 * US + 1 * US));
    CHECK_EQ(tick0, tick1); /* the tick ISR does not pay it */
    /* moderated (absolute timer 10 ms: ten packets per interrupt) */
    uint64_t m = isr_rx_ns(18 * US, 10 * MS, &irqs, &pkts, &tick1);
    CHECK(irqs * 9 < pkts && pkts <= irqs * 11);
    CHECK_EQ(m, irqs * (1 * US + 18 * US) + pkts * 1 * US);
}

static void test_negative_refused(void)
{
    CHECK_NEGATIVE_COST_REFUSED(isr_rx_batch_ns);
}

int main(void)
{
    RTS_RUN(test_charged_per_interrupt);
    RTS_RUN(test_negative_refused);
    return rts_test_end();
}
