/**
 * @file rts_global_limit.h
 * @brief Global receive limit with an interrupt-to-polling switch
 *        (Behnke et al. §5.5).
 *
 * Every packet the driver harvests counts against a capacity per period
 * (periods are aligned to the `now` given to rts_global_limit_init()). In interrupt
 * mode, the packet that reaches the capacity is still taken, then the RX
 * interrupt is disabled and a timer armed at the next period start: the
 * driver continues as a polling task. At each period start the polling task
 * harvests at most `capacity` packets; if it took fewer (the capacity was not
 * immediately reached), the driver returns to interrupt mode. Meanwhile the
 * descriptor ring fills and the NIC drops what does not fit.
 *
 * The same admit call is used in both modes; it is `_isr` because the
 * interrupt-mode driver calls it, and equally valid from the polling task.
 */
#ifndef RTSHIELD_RTS_GLOBAL_LIMIT_H
#define RTSHIELD_RTS_GLOBAL_LIMIT_H

#include "rtshield/rts_types.h"

/** Driver mode. */
typedef enum rts_global_limit_mode {
    RTS_GLOBAL_LIMIT_IRQ = 0,  /**< the RX interrupt drives the eager driver */
    RTS_GLOBAL_LIMIT_POLL = 1  /**< the RX interrupt is off; a task polls once per period */
} rts_global_limit_mode;

/** Global limiter state. */
typedef struct rts_global_limit {
    uint32_t capacity;         /**< packets per period; 0 = unlimited */
    uint32_t count;            /**< packets taken in the current period */
    rts_time_ns period;        /**< period (ns) */
    rts_time_ns period_start;  /**< start of the current period */
    uint8_t mode;              /**< rts_global_limit_mode */
    uint8_t pad[3];
    uint32_t to_poll;          /**< switches to polling so far */
    uint32_t to_irq;           /**< switches back to interrupts so far */
    uint32_t refused;          /**< admit calls refused (over capacity) */
} rts_global_limit;

/**
 * Initialise in interrupt mode, the first period starting at `now`.
 * Context: task. Cost: O(1).
 * @param capacity packets per period, 0 for no limit
 * @param period period in ns (>= 1 when capacity > 0)
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `g` is NULL, or capacity > 0 with period 0
 *
 * A period reaching past UINT64_MAX ns (e.g. UINT64_MAX: one period that is
 * never replenished) is allowed; the timer then saturates at UINT64_MAX.
 */
rts_err rts_global_limit_init(rts_global_limit *g, uint32_t capacity, rts_time_ns period, rts_time_ns now);

/**
 * Count one harvested packet.
 * Context: ISR (interrupt mode) or the polling task. Cost: O(1), one
 * division when periods have passed.
 * @param[out] act in interrupt mode, when this packet reaches the capacity:
 *        RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER at the next period start
 *        (the timer wakes the polling task); otherwise no flags
 * @return true: take the packet; false: over capacity in this period, leave
 *         it in the ring and stop harvesting
 */
bool rts_global_limit_admit_isr(rts_global_limit *g, rts_time_ns now, rts_action *act);

/**
 * The polling task woke at a period start: roll the period.
 * Context: polling task. Cost: O(1).
 * @return packets it may harvest now (the capacity; 0 when not polling)
 */
uint32_t rts_global_limit_poll_begin(rts_global_limit *g, rts_time_ns now);

/**
 * The polling task has harvested what the ring held (calling
 * rts_global_limit_admit_isr() per packet). If it stayed below the capacity, return
 * to interrupt mode (RTS_ACT_ENABLE_LINE); else stay polling
 * (RTS_ACT_ARM_TIMER at the next period start).
 * Context: polling task. Cost: O(1).
 */
rts_action rts_global_limit_poll_end(rts_global_limit *g, rts_time_ns now);

/** The current mode (rts_global_limit_mode). Context: any. Cost: O(1). */
unsigned rts_global_limit_mode_of(const rts_global_limit *g);

/**
 * Admission bound (Behnke §5.5): the most packets a global limit of
 * `capacity` per `period_ns` lets the driver take (by interrupt and by
 * polling together) in any window of `delta_ns`: capacity · (⌈Δ / period⌉
 * + 1), a full period's capacity at the end of one period and another at the
 * start of the next. The limit's arrival curve η⁺(Δ).
 * Pure; usable from Python. Choices: 0 for Δ = 0 or capacity 0 (which, at
 * run time, means no limit: the caller must not read it as a bound); period
 * 0 gives UINT64_MAX (unbounded). Context: any. Cost: O(1), one 64-bit
 * division.
 */
uint64_t rts_global_limit_max_packets(uint32_t capacity, rts_time_ns period_ns, rts_time_ns delta_ns);

#endif /* RTSHIELD_RTS_GLOBAL_LIMIT_H */
