/* Private to libshield (not for applications): time arithmetic that
 * saturates at the end of time instead of wrapping, so a deadline computed
 * late in a long run, or from a hostile configuration, never lands in the
 * past. Every addition of times in libshield goes through these. */
#ifndef RTSHIELD_SRC_RTS_TIME_H
#define RTSHIELD_SRC_RTS_TIME_H

#include "rtshield/rts_types.h"

/* a + b, or UINT64_MAX when it would wrap. */
static inline rts_time_ns rts_time_add(rts_time_ns a, rts_time_ns b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* a * b, or UINT64_MAX when it would wrap. */
static inline rts_time_ns rts_time_mul(rts_time_ns a, rts_time_ns b)
{
    return a != 0u && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

#endif
