/* costs.isr_queue_full: an edge RX interrupt that finds the driver's queue
 * full costs isr_queue_full_ns of work instead of isr_per_packet_ns (the
 * enqueue fails before anything is copied); 0 keeps isr_per_packet_ns. */
#include "sim_test_util.h"

/* 99 packets in 100 ms at 1 000 pkt/s (at 1, 2, ..., 99 ms); the driver (priority 1) never runs
 * under an always-ready task of priority 2, so the 16-packet queue fills
 * with the first 16 and the other 83 find it full. */
static uint64_t isr_cpu(int64_t full_ns, rtsim_bin *t)
{
    rtsim_config c = base(100 * MS);
    c.costs.isr_per_packet_ns = 5 * US;
    c.costs.isr_queue_full_ns = full_ns;
    add_driver(&c, 1);
    add_task(&c, RTSIM_TASK_BACKGROUND, 2, 0, 0);
    add_flow(&c, RTSIM_PAT_CONSTANT, 1000.0);
    rtsim *s;
    run(&c, &s);
    rtsim_totals(s, t);
    uint64_t cpu = t->cpu_ns[RTSIM_CTX_ISR_RX];
    rtsim_destroy(s);
    return cpu;
}

static void test_full_queue_costs_less(void)
{
    rtsim_bin t;
    uint64_t cpu = isr_cpu(1 * US, &t);
    CHECK_EQ(t.isr_runs, 99);
    CHECK_EQ(t.processed, 0);
    CHECK_EQ(t.dropped[RTSIM_DROP_QUEUE_FULL], 83);
    /* 16 x (1 entry/exit + 5) + 83 x (1 + 1) */
    CHECK_EQ(cpu, (uint64_t)(16 * 6 + 83 * 2) * US);
}

static void test_zero_keeps_the_packet_cost(void)
{
    rtsim_bin t;
    CHECK_EQ(isr_cpu(0, &t), (uint64_t)99 * 6 * US);
    CHECK_EQ(t.dropped[RTSIM_DROP_QUEUE_FULL], 83);
}

int main(void)
{
    RTS_RUN(test_full_queue_costs_less);
    RTS_RUN(test_zero_keeps_the_packet_cost);
    return rts_test_end();
}
