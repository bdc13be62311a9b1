/* Traffic generators: when does the next packet of a flow arrive.
 * Private to the simulator. Deterministic: integer time, a PRNG of our own
 * (splitmix64) and a logarithm built from IEEE-exact operations only, so the
 * same seed gives the same arrivals on every platform. */
#ifndef RTSIM_TRAFFIC_H
#define RTSIM_TRAFFIC_H

#include <stdint.h>

#include "rtsim/rtsim.h"

typedef struct sim_prng {
    uint64_t s;
} sim_prng;

uint64_t prng_next(sim_prng *p);
/* Uniform in (0, 1]. */
double prng_unit(sim_prng *p);
/* Natural logarithm of x > 0 from frexp-free bit manipulation and a series. */
double det_log(double x);

typedef struct sim_flow_gen {
    const rtsim_flow_cfg *cfg;
    sim_prng rng;
    double frac;            /* fractional ns carried between gaps */
    uint32_t seg;           /* piecewise: current segment (time only moves forward) */
    /* The rate interval last looked up: for t in [seg_lo, seg_hi) the rate is
     * seg_rate and the next change is seg_hi (empty while seg_lo > seg_hi). */
    uint64_t seg_lo, seg_hi;
    double seg_rate;
    double seg_gap; /* 1e9 / seg_rate: the evenly spaced patterns' gap, ns */
    int exponential; /* Poisson gaps (pattern poisson, or piecewise with poisson) */
} sim_flow_gen;

void flow_gen_init(sim_flow_gen *g, const rtsim_flow_cfg *cfg, uint64_t seed, uint32_t index);
/* Instantaneous rate at time t, packets/s. */
double flow_rate_at(const sim_flow_gen *g, uint64_t t);
/* Time of the first arrival at or after `t` following an arrival (or the
 * start) at `t`; UINT64_MAX when the flow never sends again. */
uint64_t flow_next_after(sim_flow_gen *g, uint64_t t);

/* The arrivals from `next` (an arrival time) up to, not including, `limit`:
 * adds their number to *count and returns the first arrival at or after
 * `limit`, with the generator left exactly as calling flow_next_after() from
 * each of them in turn would leave it. Within a rate interval of an evenly
 * spaced pattern the steps are counted in closed form (exact integer
 * arithmetic on the gap's last place, after at most one step that puts the
 * carried fraction on that grid); Poisson arrivals and interval changes are
 * walked (the same draws as one event each). */
uint64_t flow_skip_before(sim_flow_gen *g, uint64_t next, uint64_t limit, uint64_t *count);

#endif
