/* Recorded traces as traffic sources (rtsim_flow_trace, RTSIM_PAT_TRACE):
 * frames arrive at their times, loop, are classified by their own bytes,
 * and bad hand-overs are refused with a message. */
#include "sim_test_util.h"

/* An Ethernet + IPv4 + UDP frame to `dport` (60 bytes). */
static void udp_frame(uint8_t *f, uint16_t dport)
{
    memset(f, 0, 60);
    f[12] = 0x08; /* IPv4 */
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    ip[3] = 28; /* total length */
    ip[8] = 64;
    ip[9] = 17; /* UDP */
    ip[12] = 192, ip[13] = 0, ip[14] = 2, ip[15] = 100;
    ip[16] = 192, ip[17] = 0, ip[18] = 2, ip[19] = 1;
    uint8_t *udp = ip + 20;
    udp[0] = 0x9c, udp[1] = 0x40;
    udp[2] = (uint8_t)(dport >> 8), udp[3] = (uint8_t)dport;
    udp[5] = 8;
}

/* One multiqueue NIC queue (unmoderated) mapped to UDP port 502, one trace
 * flow bound to it. */
static rtsim_config mq(uint64_t duration, int64_t period)
{
    rtsim_config c = base(duration);
    c.nic_kind = RTSIM_NIC_MULTIQUEUE;
    c.n_nic_queues = 1;
    c.nic_queues[0].size = 64;
    add_driver(&c, 1);
    int f = add_udp_flow(&c, RTSIM_PAT_TRACE, 0, 502);
    c.flows[f].nic_queue = 0;
    c.flows[f].trace_period_ns = period;
    return c;
}

/* Four frames: three to 502, one to port 9 (no map entry). */
static const int64_t T4[4] = {0, 1 * MS, 2 * MS, 3 * MS};
static const uint32_t L4[4] = {60, 60, 60, 60};

static void frames4(uint8_t *b)
{
    udp_frame(b, 502);
    udp_frame(b + 60, 9);
    udp_frame(b + 120, 502);
    udp_frame(b + 180, 502);
}

/* Create the simulation, give flow 0 the four frames (copied) and run it to its end. */
static rtsim *run_frames4(const rtsim_config *c)
{
    rtsim *s = make(c);
    uint8_t b[240];
    frames4(b);
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) == NULL);
    CHECK_EQ(rtsim_run_until(s, c->duration_ns), 0);
    return s;
}

static void test_one_pass_and_classification(void)
{
    rtsim_config c = mq(100 * MS, 0);
    rtsim *s = run_frames4(&c);
    rtsim_flow_stats fs = flow_stats(s, 0);
    CHECK_EQ(fs.offered, 4);
    CHECK_EQ(fs.drops[RTSIM_DROP_NIC_UNREGISTERED], 1); /* read from the frame's own port */
    CHECK_EQ(fs.received, 3);
    CHECK_EQ(fs.delivered, 3);
    rtsim_destroy(s);
}

static void test_loop_and_start(void)
{
    rtsim_config c = mq(100 * MS, 10 * MS); /* a pass every 10 ms */
    c.flows[0].start_ns = 5 * MS;
    rtsim *s = run_frames4(&c);
    rtsim_bin t;
    rtsim_totals(s, &t);
    /* passes start at 5, 15, ..., 95 ms: 10 passes; the last one's frames at
     * 95..98 ms all fall before 100 ms */
    CHECK_EQ(t.offered, 40);
    rtsim_destroy(s);
}

static void test_refusals(void)
{
    rtsim_config c = mq(100 * MS, 2 * MS);
    rtsim *s = make(&c);
    uint8_t b[240];
    frames4(b);
    const uint32_t short_len[4] = {60, 10, 60, 60};
    const int64_t back[4] = {0, 2 * MS, 1 * MS, 3 * MS};
    CHECK(rtsim_flow_trace(s, 1, 4, T4, L4, b, sizeof b) != NULL);     /* no such flow */
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) != NULL);     /* times >= the period */
    CHECK(rtsim_flow_trace(s, 0, 4, back, L4, b, sizeof b) != NULL);   /* time goes back */
    CHECK(rtsim_flow_trace(s, 0, 4, T4, short_len, b, 190) != NULL);   /* a runt frame */
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, 200) != NULL);          /* lengths != bytes */
    CHECK(rtsim_flow_trace(s, 0, RTSIM_TRACE_MAX_FRAMES + 1u, T4, L4, b, sizeof b) != NULL);
    CHECK(rtsim_flow_trace(s, 0, 0, T4, L4, b, 0) != NULL);            /* no frame */
    rtsim_destroy(s);
    /* not before a started run, not twice */
    rtsim_config d = mq(100 * MS, 0);
    s = make(&d);
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) == NULL);
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) != NULL);
    rtsim_destroy(s);
    s = make(&d);
    CHECK_EQ(rtsim_run_until(s, 1 * MS), 0);
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) != NULL);
    rtsim_destroy(s);
    /* a generated flow takes no trace */
    rtsim_config g = base(10 * MS);
    add_driver(&g, 1);
    add_flow(&g, RTSIM_PAT_CONSTANT, 100);
    s = make(&g);
    CHECK(rtsim_flow_trace(s, 0, 4, T4, L4, b, sizeof b) != NULL);
    rtsim_destroy(s);
}

/* Without a hand-over a trace flow sends nothing. */
static void test_no_trace_no_arrivals(void)
{
    rtsim_config c = mq(50 * MS, 0);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.offered, 0);
    rtsim_destroy(s);
}

/* The receive path reads the replayed bytes: frames to an unbound port are
 * processed and dropped (no socket), those to the bound one delivered. */
static void test_receive_path_reads_the_bytes(void)
{
    rtsim_config c = rx_base(100 * MS);
    add_driver(&c, 1);
    add_udp_flow(&c, RTSIM_PAT_TRACE, 0, 502);
    rtsim *s = run_frames4(&c);
    rtsim_flow_stats fs = flow_stats(s, 0);
    CHECK_EQ(fs.offered, 4);
    CHECK_EQ(fs.delivered, 3);
    CHECK_EQ(fs.delivered + fs.dropped + rtsim_in_flight(s), fs.offered);
    rtsim_destroy(s);
}

int main(void)
{
    RTS_RUN(test_one_pass_and_classification);
    RTS_RUN(test_loop_and_start);
    RTS_RUN(test_refusals);
    RTS_RUN(test_no_trace_no_arrivals);
    RTS_RUN(test_receive_path_reads_the_bytes);
    return rts_test_end();
}
