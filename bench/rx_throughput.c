/* Engine throughput on the receive path of Behnke et al.: two UDP flows
 * (a high-priority one with its worker, a low-priority flood) through
 * libshield's early demultiplexing, flow queues and priority inheritance
 * at 100 000 pkt/s in all, on a Zynq-like device with a medium-priority
 * background task. Prints simulated packets per wall second.
 * Usage: rx_throughput [simulated seconds, default 10] */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtsim/rtsim.h"
#include "sim_test_util.h"

int main(int argc, char **argv)
{
    const double secs = argc > 1 ? atof(argv[1]) : 10.0;
    /* the Zynq-like device of the simulator's receive-path tests, with a larger ring and
     * pool, a 1 ms tick with time slicing, and 1 s bins */
    rtsim_config c = rx_base((uint64_t)(secs * 1e9));
    c.bin_ns = 1000000000u;
    c.tick_ns = 1000000;
    c.time_slicing = 1;
    c.ring = 64;
    c.rx.nbufs = 128;
    c.costs.tick_isr_ns = 1000;
    /* tasks: network task, HP worker, medium-priority background */
    add_driver(&c, 1);
    add_worker(&c, 6, 0, 16, 10000);
    add_task(&c, RTSIM_TASK_BACKGROUND, 3, 0, 0);
    /* flows: HP 1 000 pkt/s to port 502, LP flood 99 000 pkt/s to port 9 */
    c.n_flows = 2;
    for (int i = 0; i < 2; i++) {
        rtsim_flow_cfg *f = &c.flows[i];
        f->pattern = RTSIM_PAT_CONSTANT;
        f->proto = RTSIM_PROTO_UDP;
        f->size = 60;
    }
    c.flows[0].rate_pps = 1000;
    c.flows[0].dst_port = 502;
    c.flows[0].prio = 6;
    c.flows[1].rate_pps = 99000;
    c.flows[1].dst_port = 9;
    c.flows[1].prio = 0;
    const char *err = rtsim_config_error(&c);
    if (err) {
        fprintf(stderr, "config: %s\n", err);
        return 2;
    }
    double best = 1e30;
    rtsim_bin t;
    rtsim_bin *bins = calloc(64, sizeof *bins);
    for (int rep = 0; rep < 3; rep++) {
        rtsim *s = rtsim_create(&c);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (uint64_t at = c.bin_ns; ; at += c.bin_ns) {
            if (at > c.duration_ns) at = c.duration_ns;
            if (rtsim_run_until(s, at) != 0) return 1;
            while (rtsim_take_bins(s, bins, 64) == 64) {
            }
            if (at == c.duration_ns) break;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        const double wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        if (wall < best) best = wall;
        rtsim_totals(s, &t);
        rtsim_destroy(s);
    }
    printf("rx path, 2 flows, 100 000 pkt/s: %.0f s simulated, %llu packets, best wall %.3f s, "
           "%.2f M simulated pkt/s (received %llu, delivered %llu)\n",
           secs, (unsigned long long)t.offered, best, (double)t.offered / best / 1e6,
           (unsigned long long)t.received, (unsigned long long)t.delivered);
    free(bins);
    return 0;
}
