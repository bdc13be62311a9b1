/* driver_wake: the network task pays one wake-up when it is switched in for
 * a new packet; the packets it then finds queued behind that one share it
 * (a batch), and a preset that does not set it changes nothing. */
#include "sim_test_util.h"

/* A driver (priority 1) fed 1000 pkt/s; with `busy`, a periodic task above
 * it holds the core 5 ms of every 10 ms, so packets queue behind it.
 * Returns the driver's CPU time; *jobs: the packets it finished. */
static uint64_t driver_cpu(int64_t wake_ns, int busy, uint64_t *jobs)
{
    rtsim_config c = base(200 * MS);
    c.costs.driver_wake_ns = wake_ns;
    if (busy) add_periodic(&c, 5, 10 * MS, 5 * MS);
    int d = add_driver(&c, 1);
    add_flow(&c, RTSIM_PAT_CONSTANT, 1000);
    rtsim *s;
    run(&c, &s);
    rtsim_task_stats st;
    CHECK_EQ(rtsim_task_stats_get(s, (uint32_t)d, &st), 0);
    *jobs = st.jobs;
    rtsim_destroy(s);
    return st.cpu_ns;
}

static void test_one_wake_per_isolated_packet(void)
{
    uint64_t n0, n1;
    const uint64_t a = driver_cpu(0, 0, &n0);
    const uint64_t b = driver_cpu(3 * US, 0, &n1);
    CHECK(n0 > 150);
    CHECK_EQ(n0, n1);
    CHECK_EQ(a, n0 * (1 * US));             /* no wake cost: driver_per_packet alone */
    CHECK_EQ(b, n1 * (1 * US + 3 * US));    /* 1 ms apart: every packet wakes the task */
}

static void test_queued_packets_share_a_wake(void)
{
    uint64_t n0, n1;
    const uint64_t a = driver_cpu(0, 1, &n0);
    const uint64_t b = driver_cpu(3 * US, 1, &n1);
    CHECK_EQ(n0, n1);
    CHECK_EQ(a, n0 * (1 * US));
    /* whole wake-ups only, fewer than packets: the ~5 packets queued behind
     * each 5 ms job are taken after one wake-up */
    const uint64_t extra = b - a;
    CHECK_EQ(extra % (3 * US), 0);
    const uint64_t wakes = extra / (3 * US);
    CHECK(wakes >= n1 / 2 && wakes + n1 / 4 <= n1);
}

static void test_negative_refused(void)
{
    CHECK_NEGATIVE_COST_REFUSED(driver_wake_ns);
}

int main(void)
{
    RTS_RUN(test_one_wake_per_isolated_packet);
    RTS_RUN(test_queued_packets_share_a_wake);
    RTS_RUN(test_negative_refused);
    return rts_test_end();
}
