/* Log-scale histogram bins: exact below 64 ns, then 64 sub-buckets per
 * octave (1.6 % resolution), integer arithmetic only. */
#include "rtsim/rtsim.h"

static uint32_t floor_log2(uint64_t v)
{
    uint32_t r = 0;
    while (v >>= 1) r++;
    return r;
}

uint32_t rtsim_hist_index(uint64_t v)
{
    if (v < 64) return (uint32_t)v;
    uint32_t o = floor_log2(v) - 5; /* v >= 64: o >= 1 */
    uint64_t i = (uint64_t)o * 64 + ((v >> (o - 1)) - 64);
    return i >= RTSIM_HIST_BINS ? RTSIM_HIST_BINS - 1 : (uint32_t)i;
}

uint64_t rtsim_hist_lower_ns(uint32_t i)
{
    if (i < 64) return i;
    uint32_t o = i / 64;
    uint64_t sub = i % 64;
    return (64 + sub) << (o - 1);
}
