/* The receive path of Behnke et al. in the engine: real frames classified
 * by libshield, flow queues, recycling and short circuit, priority
 * inheritance, flow servers, the global limit with its polling task,
 * sockets and workers; conservation of every frame. */
#include "sim_test_util.h"

#include "sim.h"


/* The receive-path device (rx_base) with its network task, task 0, at priority 1. */
static rtsim_config rx_device(uint64_t duration_ns)
{
    rtsim_config c = rx_base(duration_ns);
    add_driver(&c, 1);
    return c;
}

static int add_udp(rtsim_config *c, double pps, uint32_t port, uint32_t prio)
{
    int i = add_udp_flow(c, RTSIM_PAT_CONSTANT, pps, port);
    c->flows[i].prio = prio;
    return i;
}

/* offered = delivered + dropped + in flight, overall and per flow. */
static void check_conservation(rtsim *s, const rtsim_config *c)
{
    rtsim_bin t;
    rtsim_totals(s, &t);
    uint64_t dropped = 0;
    for (int r = 0; r < RTSIM_DROP_COUNT; r++)
        dropped += t.dropped[r];
    CHECK_EQ(t.offered, t.delivered + dropped + rtsim_in_flight(s));
    for (uint32_t i = 0; i < c->n_flows; i++) {
        rtsim_flow_stats fs;
        CHECK_EQ(rtsim_flow_stats_get(s, i, &fs), 0);
        uint64_t by = 0;
        for (int r = 0; r < RTSIM_DROP_COUNT; r++)
            by += fs.drops[r];
        CHECK_EQ(fs.dropped, by);
    }
    CHECK_EQ(rts_flow_queue_check(&s->hk.shield.rx.fq), RTS_OK);
    /* Every buffer is posted, filled, queued or held: none lost. */
    uint64_t in_nic = 0;
    for (uint32_t q = 0; q < RTSIM_MAX_NIC_QUEUES; q++)
        in_nic += s->nicq[q].len;
    CHECK_EQ(s->posted.len + s->filled.len + in_nic,
             rts_flow_queue_count(&s->hk.shield.rx.fq, RTS_BUF_RING) + rts_flow_queue_count(&s->hk.shield.rx.fq, RTS_BUF_ISR));
}

/* Run `c` to its end, check that every frame is conserved, and return flow
 * `i`'s statistics. */
static rtsim_flow_stats run_conserved(rtsim_config *c, uint32_t i)
{
    rtsim *s;
    run(c, &s);
    const rtsim_flow_stats fs = flow_stats(s, i);
    check_conservation(s, c);
    rtsim_destroy(s);
    return fs;
}

/* A high-priority flow alone: every frame delivered, through the worker,
 * the network task raised to its priority and back. */
static void test_hp_alone(void)
{
    rtsim_config c = rx_device(100 * MS);
    int hp = add_udp(&c, 1000, 502, 5);
    add_worker(&c, 5, (uint32_t)hp, 16, 10 * US);
    rtsim *s;
    run(&c, &s);
    rtsim_flow_stats fs = flow_stats(s, 0);
    CHECK_EQ(fs.offered, 99); /* one every ms from 1 ms on */
    CHECK_EQ(fs.delivered, fs.offered);
    CHECK_EQ(fs.processed, fs.offered);
    rtsim_rx_stats rs = rx_stats(s);
    CHECK_EQ(rs.path_count[RTSIM_PATH_PRIO_RAISE], fs.offered); /* each raises the idle task */
    CHECK(rs.prio_changes >= 2 * fs.offered);                   /* raised, then lowered */
    CHECK_EQ(s->task[0].prio, 1);
    check_conservation(s, &c);
    rtsim_destroy(s);
}

/* A low-priority flood with the network task starved by a busy
 * medium-priority task: the ring runs low, the flood is short-circuited,
 * the high-priority flow still gets through by recycling. */
static void test_flood_recycle_short_circuit(void)
{
    rtsim_config c = rx_device(200 * MS);
    int hp = add_udp(&c, 500, 502, 6);
    add_udp(&c, 50000, 9, 0);
    add_worker(&c, 6, (uint32_t)hp, 16, 10 * US);
    add_task(&c, RTSIM_TASK_BACKGROUND, 3, 0, 0); /* medium priority: keeps LP from the CPU */
    rtsim *s;
    run(&c, &s);
    rtsim_flow_stats hs = flow_stats(s, 0);
    rtsim_flow_stats ls = flow_stats(s, 1);
    CHECK(hs.offered > 90);
    CHECK_EQ(hs.dropped, 0);
    CHECK(hs.offered - hs.delivered <= 1); /* at most the one in flight */
    CHECK(ls.drops[RTSIM_DROP_SHORT_CIRCUIT] > 0);
    CHECK(ls.drops[RTSIM_DROP_RECYCLED] > 0); /* HP arrivals took LP buffers */
    CHECK_EQ(ls.delivered, 0);                /* LP never runs above the background task */
    check_conservation(s, &c);
    rtsim_destroy(s);
}

/* Short circuit off: the flood's frames are queued and their oldest
 * buffers recycled instead (Behnke Fig. 9, footnote 1). */
static void test_short_circuit_off(void)
{
    rtsim_config c = rx_device(50 * MS);
    c.rx.short_circuit = 0;
    add_udp(&c, 50000, 9, 0);
    add_task(&c, RTSIM_TASK_BACKGROUND, 3, 0, 0);
    const rtsim_flow_stats ls = run_conserved(&c, 0);
    CHECK_EQ(ls.drops[RTSIM_DROP_SHORT_CIRCUIT], 0);
    CHECK(ls.drops[RTSIM_DROP_RECYCLED] > 0);
}

/* A flow server of 1 packet per ms refuses the rest (path (b)). */
static void test_flow_server(void)
{
    rtsim_config c = rx_device(100 * MS);
    int hp = add_udp(&c, 5000, 502, 5);
    c.flows[hp].capacity = 1;
    c.flows[hp].server_period_ns = 1 * MS;
    const rtsim_flow_stats fs = run_conserved(&c, 0);
    CHECK(fs.delivered >= 99 && fs.delivered <= 101);
    CHECK(fs.drops[RTSIM_DROP_FLOW_SERVER] >= 390);
}

/* Frames for a port nobody bound are processed, then dropped. */
static void test_no_socket(void)
{
    rtsim_config c = rx_device(10 * MS);
    int f = add_udp(&c, 1000, 7777, 0);
    c.flows[f].unbound = 1;
    const rtsim_flow_stats fs = run_conserved(&c, 0);
    CHECK_EQ(fs.processed, 9);
    CHECK_EQ(fs.drops[RTSIM_DROP_NO_SOCKET], 9);
}

/* The global limit: over 5 packets per ms the RX line goes off and the
 * polling task harvests once per period; the mode is measured. */
static void test_global_limit_polling(void)
{
    rtsim_config c = rx_device(100 * MS);
    c.rx.global_capacity = 5;
    c.rx.global_period_ns = 1 * MS;
    c.costs.poll_batch_ns = 2 * US;
    c.costs.poll_per_packet_ns = 100;
    add_task(&c, RTSIM_TASK_POLLING, 2, 0, 0);
    add_udp(&c, 20000, 9, 0);
    rtsim *s;
    run(&c, &s);
    rtsim_rx_stats rs = rx_stats(s);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK(rs.to_poll >= 1);
    CHECK(rs.polls > 50);
    CHECK(t.polling_ns > 50 * MS);
    CHECK(t.received <= 5 * 101); /* at most the capacity per period */
    CHECK(t.dropped[RTSIM_DROP_RING_FULL] > 0);
    check_conservation(s, &c);
    rtsim_destroy(s);
}

/* The edge NIC with the receive path: one interrupt per frame, the ISR
 * writes each frame into a posted buffer. */
static void test_edge_nic(void)
{
    rtsim_config c = rx_device(10 * MS);
    c.nic_kind = RTSIM_NIC_EDGE;
    int hp = add_udp(&c, 2000, 502, 4);
    add_worker(&c, 4, (uint32_t)hp, 16, 5 * US);
    rtsim *s;
    run(&c, &s);
    rtsim_flow_stats fs = flow_stats(s, 0);
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(fs.delivered, 19);
    CHECK_EQ(t.isr_runs, 19);
    check_conservation(s, &c);
    rtsim_destroy(s);
}

/* Bad configurations are refused with a message naming the key. */
static void test_config_errors(void)
{
    rtsim_config c = rx_device(10 * MS);
    add_udp(&c, 100, 502, 5);
    add_udp(&c, 100, 502, 3);
    CHECK(refused_naming(&c, "bound twice"));
    c.flows[1].dst_port = 503;
    CHECK(rtsim_config_error(&c) == NULL);
    CHECK_REFUSED_AT(c, c.flows[1].prio, 40, "flows.priority");
    CHECK_REFUSED_AT(c, c.flows[1].capacity, 2, "server_period");
    c.rx.global_capacity = 3;
    CHECK(refused_naming(&c, "polling task"));
    int poll = add_task(&c, RTSIM_TASK_POLLING, 2, 0, 0);
    CHECK(refused_naming(&c, "global_period"));
    c.rx.global_period_ns = MS;
    CHECK(rtsim_config_error(&c) == NULL);
    c.tasks[poll].kind = RTSIM_TASK_BACKGROUND;
    c.rx.global_capacity = 0;
    CHECK_REFUSED_AT(c, c.ring, 40, "nic.ring");
    /* the network task's priority is a flow priority level */
    CHECK_REFUSED_AT(c, c.tasks[0].priority, 40, "driver.priority");
    CHECK_REFUSED_AT(c, c.flows[1].dst_port, 0, "dst_port");
    CHECK_REFUSED_AT(c, c.flows[1].queue_limit, 70000, "flows.queue");
    CHECK(rtsim_config_error(&c) == NULL);
    /* more bound flows than libshield's flow table holds */
    for (uint32_t i = c.n_flows; i < RTSIM_MAX_FLOWS; i++)
        add_udp(&c, 100, 600 + i, 1);
    if (RTS_FLOW_MAX - RTS_FLOW_FIRST_USER >= RTSIM_MAX_FLOWS)
        CHECK(rtsim_config_error(&c) == NULL); /* the default table holds every flow */
    else
        CHECK(refused_naming(&c, "RTS_FLOW_MAX"));
}

/* The multiqueue NIC of Behnke §7 with Table 2's moderation: queue 0
 * unmoderated, queues 1-3 coalesced by their timers; a flood to a port in
 * no map entry is dropped in the NIC before any interrupt. `rx`: the
 * receive path behind it, else the driver queue of their §8.3. */
static void multiqueue(uint32_t rx)
{
    rtsim_config c = rx ? rx_base(2000 * MS) : base(2000 * MS);
    c.nic_kind = RTSIM_NIC_MULTIQUEUE;
    c.ring = 64; /* posted buffers: enough for every queue's coalesced batch */
    c.rx.nbufs = 128;
    c.queue_capacity = 512;
    c.n_nic_queues = 4;
    const int64_t abs_ms[4] = {0, 30, 40, 80}, pack_ms[4] = {0, 20, 30, 70};
    for (uint32_t q = 0; q < 4; q++) {
        c.nic_queues[q].size = 128;
        c.nic_queues[q].t_abs_ns = abs_ms[q] * MS;
        c.nic_queues[q].t_pack_ns = pack_ms[q] * MS;
    }
    add_driver(&c, 1);
    const double pps[4] = {50, 100, 150, 200};
    for (uint32_t q = 0; q < 4; q++) {
        int f = add_udp(&c, pps[q], 502 + q, 5 - q);
        c.flows[f].proto = RTSIM_PROTO_TCP;
        c.flows[f].nic_queue = q;
        int w = add_worker(&c, 5 - q, (uint32_t)f, 16, 20 * US);
        /* A whole coalesced batch fits (queue 3: 80 ms at 200 pkt/s); with the
         * receive path the network task inherits the worker's priority and
         * hands over the batch before the worker runs. */
        c.tasks[w].mailbox = 64;
    }
    int flood = add_udp(&c, 5000, 9, 0);
    c.flows[flood].nic_queue = RTSIM_NIC_UNMAPPED;
    c.flows[flood].unbound = 1;
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    rtsim_flow_stats fs[5];
    for (uint32_t i = 0; i < 5; i++)
        rtsim_flow_stats_get(s, i, &fs[i]);
    CHECK_EQ(fs[4].drops[RTSIM_DROP_NIC_UNREGISTERED], fs[4].offered);
    CHECK_EQ(fs[4].received, 0);
    for (uint32_t q = 0; q < 4; q++)
        CHECK(fs[q].offered - fs[q].delivered <= 20); /* the last batches may still wait */
    CHECK(fs[0].latency_max_ns < 1 * MS);             /* unmoderated: at once */
    CHECK(fs[3].latency_max_ns > 20 * MS);            /* coalesced up to its timers */
    CHECK(fs[3].latency_max_ns <= 81 * MS);
    /* Fewer interrupts than packets: queues 1-3 coalesce. */
    uint64_t registered = fs[0].received + fs[1].received + fs[2].received + fs[3].received;
    CHECK(t.irq_raised < registered);
    CHECK(t.irq_raised > fs[0].received);
    if (rx) check_conservation(s, &c);
    rtsim_destroy(s);
}

static void test_multiqueue_driver_queue(void)
{
    multiqueue(0);
}

static void test_multiqueue_rx_path(void)
{
    multiqueue(1);
}

/* A per-path duration distribution (Behnke Fig. 10's quantile bars): the
 * drawn ISR durations follow the given quantiles, the same seed gives the
 * same draws. */
static uint64_t *path_hist_of(uint64_t seed)
{
    rtsim_config c = rx_device(10000 * MS);
    c.seed = seed;
    const int64_t q[4] = {2000, 3000, 5000, 9000};
    for (int i = 0; i < 4; i++)
        c.costs.path_q_ns[RTSIM_PATH_PRIO_RAISE][i] = q[i];
    int hp = add_udp(&c, 1000, 502, 5);
    add_worker(&c, 5, (uint32_t)hp, 16, 10 * US);
    rtsim *s;
    run(&c, &s);
    uint64_t *h = calloc(RTSIM_HIST_BINS, sizeof *h);
    CHECK_EQ(rtsim_hist_path(s, RTSIM_PATH_PRIO_RAISE, h, RTSIM_HIST_BINS), RTSIM_HIST_BINS);
    rtsim_destroy(s);
    return h;
}

static void test_path_distribution(void)
{
    uint64_t *h = path_hist_of(1), *h2 = path_hist_of(1), *h3 = path_hist_of(2);
    uint64_t n = 0, below2000 = 0, below1500 = 0, above9000 = 0;
    for (uint32_t i = 0; i < RTSIM_HIST_BINS; i++) {
        n += h[i];
        if (rtsim_hist_lower_ns(i) < 1500) below1500 += h[i];
        if (rtsim_hist_lower_ns(i + 1) <= 2000) below2000 += h[i];
        if (rtsim_hist_lower_ns(i) > 9000) above9000 += h[i];
    }
    CHECK_EQ(n, 9999);
    CHECK_EQ(below1500, 0);
    CHECK_EQ(above9000, 0);
    CHECK(below2000 > 8800 && below2000 < 9100); /* 90 % at 2 us */
    CHECK(memcmp(h, h2, RTSIM_HIST_BINS * sizeof *h) == 0);
    CHECK(memcmp(h, h3, RTSIM_HIST_BINS * sizeof *h) != 0);
    free(h);
    free(h2);
    free(h3);
}

/* Edge NIC with the global limit: in polling mode the frame latched behind
 * the disabled line is harvested by the polling task, never lost. */
static void test_edge_global_limit(void)
{
    rtsim_config c = rx_base(5 * MS);
    c.nic_kind = RTSIM_NIC_EDGE;
    c.ring = 1;
    c.rx.nbufs = 2;
    c.rx.global_capacity = 1;
    c.rx.global_period_ns = 100 * US;
    for (int p = 0; p < RTSIM_PATH_COUNT; p++)
        c.costs.path_ns[p] = 300;
    add_driver(&c, 0);
    add_task(&c, RTSIM_TASK_POLLING, 0, 0, 0);
    add_udp(&c, 50000, 9, 0);
    rtsim *s;
    run(&c, &s);
    rtsim_rx_stats rs = rx_stats(s);
    CHECK(rs.polls > 10);
    check_conservation(s, &c);
    rtsim_destroy(s);
}

int main(void)
{
    RTS_RUN(test_edge_global_limit);
    RTS_RUN(test_path_distribution);
    RTS_RUN(test_multiqueue_driver_queue);
    RTS_RUN(test_multiqueue_rx_path);
    RTS_RUN(test_hp_alone);
    RTS_RUN(test_flood_recycle_short_circuit);
    RTS_RUN(test_short_circuit_off);
    RTS_RUN(test_flow_server);
    RTS_RUN(test_no_socket);
    RTS_RUN(test_global_limit_polling);
    RTS_RUN(test_edge_nic);
    RTS_RUN(test_config_errors);
    return rts_test_end();
}
