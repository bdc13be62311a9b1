/* The command line of the callgrind drivers (limiter_cost.c, rx_isr_cost.c):
 *   PROGRAM SCENARIO N
 * N the number of decisions or packets to run. */
#ifndef RTS_BENCH_COST_ARGS_H
#define RTS_BENCH_COST_ARGS_H

#include <stdio.h>
#include <stdlib.h>

/* N, with the scenario's name in *scenario; for any other command line (or
 * N not a positive number), `usage` on stderr and exit status 2. */
static long cost_args(int argc, char **argv, const char *usage, const char **scenario)
{
    const long n = argc == 3 ? atol(argv[2]) : 0;
    if (n <= 0) {
        fprintf(stderr, "usage: %s\n", usage);
        exit(2);
    }
    *scenario = argv[1];
    return n;
}

#endif
