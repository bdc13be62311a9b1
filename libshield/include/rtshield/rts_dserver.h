/**
 * @file rts_dserver.h
 * @brief Deferrable server (Behnke et al. §2.4): budget e per period p.
 *
 * A server with budget e serves aperiodic jobs; served work consumes the
 * budget, and the budget is restored to e at every period boundary. Periods
 * are aligned to a start time: [start + k p, start + (k+1) p). Unused budget
 * is not carried over. Advancing over many periods is O(1).
 *
 * Units: the budget and the costs share one unit, chosen by the caller (ns of
 * CPU time, or packets when each packet is one standard-sized job as in
 * Behnke §5.5); periods and times are ns.
 *
 * rts_dserver_dbf() is the paper's worst-case demand of the server in any
 * interval of length Δ, d(Δ) = e (⌈Δ/p⌉ + 1): one extra budget because a
 * job may use e just before a boundary and another e just after it.
 */
#ifndef RTSHIELD_RTS_DSERVER_H
#define RTSHIELD_RTS_DSERVER_H

#include "rtshield/rts_types.h"

/** State of one deferrable server. 40 bytes. */
typedef struct rts_dserver {
    uint64_t budget;          /**< e: budget per period */
    rts_time_ns period_ns;    /**< p */
    rts_time_ns period_start; /**< start of the current period */
    uint64_t remaining;       /**< budget left in the current period */
    uint64_t overruns;        /**< consumptions larger than the remaining budget */
} rts_dserver;

/**
 * Initialise: full budget, first period [start, start + p).
 * Context: any. Cost: O(1).
 * @retval RTS_OK
 * @retval RTS_EINVAL `s` NULL or period_ns 0
 */
rts_err rts_dserver_init(rts_dserver *s, uint64_t budget, rts_time_ns period_ns, rts_time_ns start);

/**
 * Move to the period containing `now`, replenishing the budget if a boundary
 * was crossed (once, however many periods passed). A `now` before the current
 * period's start changes nothing. Context: any. O(1).
 */
void rts_dserver_update(rts_dserver *s, rts_time_ns now);

/**
 * Whether a job of `cost` can be served at `now` (after update): cost <= remaining.
 * Context: any. O(1).
 */
bool rts_dserver_can_serve(rts_dserver *s, rts_time_ns now, uint64_t cost);

/**
 * Consume `used` at `now` (after update). If `used` exceeds the remaining
 * budget the remaining budget becomes 0 and the overrun is counted.
 * Context: any. O(1).
 * @retval RTS_OK the budget covered `used`
 * @retval RTS_ELIMIT it did not (budget now 0)
 * @retval RTS_EINVAL `s` NULL
 */
rts_err rts_dserver_consume(rts_dserver *s, rts_time_ns now, uint64_t used);

/** Remaining budget at `now` (after update). Context: any. O(1). */
uint64_t rts_dserver_remaining(rts_dserver *s, rts_time_ns now);

/** Start of the period after the one containing `now` (the next
 *  replenishment). Context: any. O(1). */
rts_time_ns rts_dserver_next_replenish(rts_dserver *s, rts_time_ns now);

/**
 * Demand bound of a deferrable server (Behnke §2.4): the most service it can
 * give in any interval of length `delta_ns`, d(Δ) = e · (⌈Δ/p⌉ + 1).
 * Pure; usable from Python. Choices: d(0) = 0 (an empty interval holds no
 * demand) and e = 0 gives 0; otherwise p = 0 or an overflowing product gives
 * UINT64_MAX (unbounded).
 * The bound is not clipped to Δ. Context: any. O(1).
 */
uint64_t rts_dserver_dbf(uint64_t budget, uint64_t period_ns, uint64_t delta_ns);

#endif /* RTSHIELD_RTS_DSERVER_H */
