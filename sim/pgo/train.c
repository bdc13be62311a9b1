/* The training run of the profile-guided build (CMake option RTS_PGO): one
 * run of a Danicki-like device under a pyramid flood, through the same
 * rtsim_* calls rtshield.engine makes, so that GCC learns which branches of
 * the engine and of libshield are hot. Its numbers are chosen to exercise
 * the paths (a queue that fills, a line disabled and enabled again, a
 * critical task preempted), not taken from a preset; they change only how
 * the library is compiled, never what it computes. */
#include <stdio.h>
#include <string.h>

#include "rtsim/rtsim.h"

int main(void)
{
    static rtsim_config c;
    memset(&c, 0, sizeof c);
    c.duration_ns = 32000000000ull; /* 31 one-second steps, then one of silence */
    c.bin_ns = 1000000000ull;
    c.seed = 1;
    c.n_cores = 2;
    c.tick_ns = 1000000;
    c.time_slicing = 1;
    c.queue_capacity = 500;
    c.costs.isr_entry_exit_ns = 2000;
    c.costs.isr_per_packet_ns = 7000;
    c.costs.isr_queue_full_ns = 7000;
    c.costs.driver_per_packet_ns = 11000;
    c.costs.tick_isr_ns = 3000;
    c.costs.timer_isr_ns = 1000;
    c.costs.mitig_isr_ns = 200;
    c.costs.mitig_driver_ns = 200;
    c.costs.mitig_report_ns = 500;
    c.costs.mitig_poll_ns = 2000;
    c.n_tasks = 2;
    c.tasks[0].priority = 3; /* the critical task: 4 ms of work every 10 ms */
    c.tasks[0].critical = 1;
    c.tasks[0].period_ns = 10000000;
    c.tasks[0].work_ns = 4000000;
    c.tasks[1].kind = RTSIM_TASK_DRIVER;
    c.tasks[1].priority = 2;
    c.n_flows = 1;
    rtsim_flow_cfg *f = &c.flows[0];
    f->pattern = RTSIM_PAT_PIECEWISE; /* 0 to 150 000 packets/s and back, 10 000 a step */
    f->size = 60;
    f->dst_port = 80;
    f->src_port = 40000;
    f->src_addr = 0xC0000264u; /* 192.0.2.100 */
    f->nic_queue = RTSIM_NIC_UNMAPPED;
    f->n_rates = 31;
    for (uint32_t i = 0; i < f->n_rates; i++) {
        const uint32_t up = i <= 15 ? i : 30 - i;
        f->rates_pps[i] = 10000.0 * (double)up;
        f->rate_t_ns[i] = (int64_t)i * 1000000000;
    }
    c.mitigation.kind = RTSIM_MIT_QUEUE;

    rtsim *s = rtsim_create(&c);
    if (s == NULL) {
        fprintf(stderr, "rts_pgo_train: %s\n", rtsim_config_error(&c));
        return 1;
    }
    static rtsim_bin bins[RTSIM_BIN_RING];
    for (uint64_t t = c.bin_ns;; t += c.bin_ns) {
        if (t > c.duration_ns) t = c.duration_ns;
        if (rtsim_run_until(s, t) != 0) {
            fprintf(stderr, "rts_pgo_train: %s\n", rtsim_error(s));
            rtsim_destroy(s);
            return 1;
        }
        rtsim_take_bins(s, bins, RTSIM_BIN_RING);
        if (t == c.duration_ns) break;
    }
    rtsim_bin tot;
    rtsim_totals(s, &tot);
    rtsim_destroy(s);
    printf("rts_pgo_train: %llu packets offered\n", (unsigned long long)tot.offered);
    return tot.offered > 0 ? 0 : 1;
}
