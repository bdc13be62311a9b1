/* The engine alone on one scenario: reads the rtsim_config that
 * bench/engine_cost.sh had rtshield.engine build from a scenario file (raw
 * bytes of the struct, same build), runs it bin by bin with
 * rtsim_run_until() and rtsim_take_bins() as engine.py does, and prints the
 * events, packets and the best CPU time of `repeat` runs. Under callgrind
 * (repeat 1) its instruction count is the engine's, without Python. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rtsim/rtsim.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: engine_cost CONFIG.bin [REPEAT]\n");
        return 2;
    }
    static rtsim_config c;
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL || fread(&c, sizeof c, 1, f) != 1) {
        fprintf(stderr, "engine_cost: cannot read %s as an rtsim_config\n", argv[1]);
        return 2;
    }
    fclose(f);
    const int repeat = argc > 2 ? atoi(argv[2]) : 1;
    static rtsim_bin bins[RTSIM_BIN_RING];
    double best = -1.0;
    rtsim_bin tot = {0};
    unsigned long long events = 0, batched = 0;
    for (int r = 0; r < repeat; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        rtsim *s = rtsim_create(&c);
        if (s == NULL) {
            fprintf(stderr, "engine_cost: %s\n", rtsim_config_error(&c));
            return 1;
        }
        for (uint64_t t = c.bin_ns;; t += c.bin_ns) {
            if (t > c.duration_ns) t = c.duration_ns;
            if (rtsim_run_until(s, t) != 0) {
                fprintf(stderr, "engine_cost: %s\n", rtsim_error(s));
                return 1;
            }
            rtsim_take_bins(s, bins, RTSIM_BIN_RING);
            if (t == c.duration_ns) break;
        }
        rtsim_totals(s, &tot);
        events = rtsim_events(s);
        batched = rtsim_arrivals_batched(s);
        rtsim_destroy(s);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        const double d = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        if (best < 0.0 || d < best) best = d;
    }
    printf("packets %llu events %llu batched %llu cpu_s %.4f\n", (unsigned long long)tot.offered,
           events, batched, best);
    return 0;
}
