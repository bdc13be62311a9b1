/* Memory of one simulation against its simulated length: a flood scenario
 * (Poisson 100 kpps on an edge NIC, tick, critical task, driver, worker,
 * trace off) run for argv[1] simulated seconds in 1 s bins, taking the bins
 * every second as engine.py does. Prints events, packets and peak RSS (KiB).
 * Used by bench/sim_memory.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "rtsim/rtsim.h"
#include "sim_test_util.h"

int main(int argc, char **argv)
{
    uint64_t secs = argc > 1 ? strtoull(argv[1], NULL, 10) : 10;
    rtsim_config c;
    memset(&c, 0, sizeof c);
    c.duration_ns = secs * 1000000000ull;
    c.bin_ns = 1000000000ull;
    c.seed = 3;
    c.n_cores = 1;
    c.tick_ns = 1000000;
    c.time_slicing = 1;
    c.queue_capacity = 500;
    c.costs.isr_entry_exit_ns = 2000;
    c.costs.isr_per_packet_ns = 5000;
    c.costs.driver_per_packet_ns = 3000;
    c.costs.tick_isr_ns = 3000;
    int crit = add_periodic(&c, 3, 10000000, 4000000);
    c.tasks[crit].critical = 1;
    add_driver(&c, 2);
    add_worker(&c, 1, 0, 64, 2000);
    add_flow(&c, RTSIM_PAT_POISSON, 100000);
    rtsim *s = rtsim_create(&c);
    if (s == NULL) {
        fprintf(stderr, "sim_memory: %s\n", rtsim_config_error(&c));
        return 1;
    }
    static rtsim_bin bins[16];
    for (uint64_t t = 1; t <= secs; t++) {
        if (rtsim_run_until(s, t * c.bin_ns) != 0) return 1;
        rtsim_take_bins(s, bins, 16);
    }
    rtsim_bin tot;
    rtsim_totals(s, &tot);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%llu s: %llu events, %llu packets, peak RSS %ld KiB\n", (unsigned long long)secs,
           (unsigned long long)rtsim_events(s), (unsigned long long)tot.offered, ru.ru_maxrss);
    rtsim_destroy(s);
    return 0;
}
