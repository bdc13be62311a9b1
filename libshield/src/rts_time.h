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

#endif
