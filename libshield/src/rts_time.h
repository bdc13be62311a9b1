/* Private to libshield (not for applications): time arithmetic that
 * saturates at the end of time instead of wrapping, so a deadline computed
 * late in a long run, or from a hostile configuration, never lands in the
 * past. Every addition of times in libshield goes through these. */
#ifndef RTSHIELD_SRC_RTS_TIME_H
#define RTSHIELD_SRC_RTS_TIME_H

#include "rtshield/rts_types.h"

/* With GCC and Clang the overflow is read from the operation itself (the
 * carry of an add, the high half of a multiply): the same result as the
 * portable tests below, without a 64-bit division on a 32-bit core. */

/* a + b, or UINT64_MAX when it would wrap. */
static inline rts_time_ns rts_time_add(rts_time_ns a, rts_time_ns b)
{
#if defined(__GNUC__)
    rts_time_ns r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
#else
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
#endif
}

/* a * b, or UINT64_MAX when it would wrap. */
static inline rts_time_ns rts_time_mul(rts_time_ns a, rts_time_ns b)
{
#if defined(__GNUC__)
    rts_time_ns r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
#else
    return a != 0u && b > UINT64_MAX / a ? UINT64_MAX : a * b;
#endif
}

/* ceil(a / b): how many windows of length b a span of a reaches (0 for a
 * = 0); UINT64_MAX for b = 0 (no bound). The admission bounds of the
 * protections (rts_strict_max_irqs() and its kind) are built on it. */
static inline uint64_t rts_time_ceil_div(rts_time_ns a, rts_time_ns b)
{
    if (b == 0u) {
        return UINT64_MAX;
    }
    return a / b + (a % b != 0u ? 1u : 0u);
}

/* n * (ceil(delta / period) + 1), saturating: at most n in each window of
 * a limit that restarts at instants at least one period apart (a bursty
 * limiter's tick, a Burst Mitigation slice, a global limit's period): a
 * window of delta meets at most ceil(delta / period) + 1 of them. 0 for
 * delta 0 or n 0; UINT64_MAX for period 0 (no bound). */
static inline uint64_t rts_time_per_window(uint64_t n, rts_time_ns period, rts_time_ns delta)
{
    if (delta == 0u || n == 0u) {
        return 0u;
    }
    return rts_time_mul(n, rts_time_add(rts_time_ceil_div(delta, period), 1u));
}

#endif
