/* driver_handover: the network task pays it for a packet it hands to a
 * worker's mailbox, not for a packet without a socket (looked up, dropped). */
#include "sim_test_util.h"

/* Two flows of 500 pkt/s: flow 0 to a worker's socket, flow 1 to no socket.
 * Returns the driver's CPU time; *to_worker and *dropped: the packets. */
static uint64_t driver_cpu(int64_t handover_ns, uint64_t *to_worker, uint64_t *dropped)
{
    rtsim_config c = base(100 * MS);
    c.costs.driver_handover_ns = handover_ns;
    int d = add_driver(&c, 3);
    add_worker(&c, 2, 0, 16, 10 * US);
    add_flow(&c, RTSIM_PAT_CONSTANT, 500);
    int f = add_flow(&c, RTSIM_PAT_CONSTANT, 500);
    c.flows[f].unbound = 1;
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats st;
    CHECK_EQ(rtsim_task_stats_get(s, (uint32_t)d, &st), 0);
    rtsim_flow_stats f0, f1;
    CHECK_EQ(rtsim_flow_stats_get(s, 0, &f0), 0);
    CHECK_EQ(rtsim_flow_stats_get(s, 1, &f1), 0);
    *to_worker = f0.processed;
    *dropped = f1.processed;
    rtsim_destroy(s);
    return st.cpu_ns;
}

static void test_only_handed_over_packets_pay(void)
{
    uint64_t w0, d0, w1, d1;
    const uint64_t a = driver_cpu(0, &w0, &d0);
    const uint64_t b = driver_cpu(3 * US, &w1, &d1);
    CHECK(w0 > 40 && d0 > 40);
    CHECK_EQ(w0, w1);
    CHECK_EQ(d0, d1);
    CHECK_EQ(a, (w0 + d0) * (1 * US));
    CHECK_EQ(b, a + w1 * (3 * US)); /* the dropped packets cost only the lookup */
}

static void test_negative_refused(void)
{
    CHECK_NEGATIVE_COST_REFUSED(driver_handover_ns);
}

int main(void)
{
    RTS_RUN(test_only_handed_over_packets_pay);
    RTS_RUN(test_negative_refused);
    return rts_test_end();
}
