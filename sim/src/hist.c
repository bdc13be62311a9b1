/* Log-scale histogram bins: exact below RTSIM_HIST_SUB ns, then
 * RTSIM_HIST_SUB bins per octave (0.1 % resolution), integer arithmetic only. */
#include "rtsim/rtsim.h"

#include <stddef.h>

/* v > 0 (GCC and Clang builtin: one bit scan instead of a loop per bit). */
static uint32_t floor_log2(uint64_t v)
{
    return 63u - (uint32_t)__builtin_clzll(v);
}

uint32_t rtsim_hist_index(uint64_t v)
{
    if (v < RTSIM_HIST_SUB) return (uint32_t)v;
    uint32_t o = floor_log2(v) - 9; /* v >= 1024: o >= 1 */
    uint64_t i = (uint64_t)o * RTSIM_HIST_SUB + ((v >> (o - 1)) - RTSIM_HIST_SUB);
    return i >= RTSIM_HIST_BINS ? RTSIM_HIST_BINS - 1 : (uint32_t)i;
}

uint64_t rtsim_hist_lower_ns(uint32_t i)
{
    if (i < RTSIM_HIST_SUB) return i;
    uint32_t o = i / RTSIM_HIST_SUB;
    uint64_t sub = i % RTSIM_HIST_SUB;
    return (RTSIM_HIST_SUB + sub) << (o - 1);
}

size_t rtsim_hist_edges_ns(uint32_t lo, uint64_t *out, size_t n)
{
    if (out == NULL) return 0;
    for (size_t k = 0; k < n; k++)
        out[k] = rtsim_hist_lower_ns(lo + (uint32_t)k);
    return n;
}
