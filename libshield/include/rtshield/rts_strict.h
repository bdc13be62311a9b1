/**
 * @file rts_strict.h
 * @brief Strict interrupt limiter: a minimum interarrival time
 *        (Regehr & Duongsaa, "Preventing Interrupt Overload", §3.2, §5.2).
 *
 * The ISR prologue of the guarded line calls rts_strict_on_irq_isr(): the
 * interrupt is admitted, the line is disabled and a one-shot timer is armed
 * `t_min_ns` in the future. The timer's ISR calls rts_strict_on_timer_isr(),
 * which re-enables the line. Two admitted interrupts are therefore at least
 * `t_min_ns` apart, and the timer cannot be set while it is already set.
 *
 * Decisions are returned as an rts_action; rts_port_apply() performs them
 * and hands back RTS_ACT_DELIVER (run the handler body) or RTS_ACT_DROP
 * (return from the ISR without handling the device).
 *
 * Real-time model (§5.2): two periodic tasks with T = t_min, the interrupt
 * with C = t_int + t_flip + t_setup + t_work and the timer with
 * C = t_expire + t_flip.
 *
 * Cost: every function is O(1): no loop, a handful of loads and stores and
 * one 64-bit addition. State: 32 bytes per limiter (64-bit host).
 */
#ifndef RTSHIELD_RTS_STRICT_H
#define RTSHIELD_RTS_STRICT_H

#include "rtshield/rts_types.h"

/** One strict limiter guards one interrupt line with one one-shot timer.
 *  Read the counters directly; write the fields only through the functions. */
typedef struct rts_strict {
    rts_time_ns t_min_ns;  /**< minimum interarrival time, ns (>= 1) */
    rts_time_ns timer_at;  /**< expiry of the armed timer (valid when armed) */
    bool armed;            /**< line disabled by us, timer armed */
    uint32_t admitted;     /**< interrupts admitted (handler ran) */
    uint32_t expiries;     /**< timer expiries that re-enabled the line */
    uint32_t port_errors;  /**< interrupts seen while the line should have been
                                disabled, and early or spurious timer expiries */
} rts_strict;

/**
 * Initialise a limiter with the line enabled and no timer armed.
 * Context: task (before the line is enabled).
 * @param s        limiter storage
 * @param t_min_ns minimum interarrival time in ns, >= 1
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `s` is NULL or `t_min_ns` is 0 (`s` untouched)
 */
rts_err rts_strict_init(rts_strict *s, rts_time_ns t_min_ns);

/**
 * Change the minimum interarrival time. An armed timer keeps its expiry;
 * the new value applies from the next admitted interrupt.
 * Context: task or ISR, serialised with the limiter's other calls. Cost: O(1), no loop.
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `s` is NULL or `t_min_ns` is 0 (nothing changed)
 */
rts_err rts_strict_set_t_min(rts_strict *s, rts_time_ns t_min_ns);

/**
 * ISR prologue of the guarded line, at time `now`.
 * Context: the line's ISR. Cost: O(1), no loop.
 * @return DELIVER | DISABLE_LINE | ARM_TIMER (timer_at = now + t_min) when
 *         the interrupt is admitted. If the timer is still armed the line
 *         should have been disabled: the port failed. The interrupt is then
 *         not admitted, the timer is left as it is (never re-armed) and
 *         DROP | DISABLE_LINE is returned; `port_errors` counts it.
 */
rts_action rts_strict_on_irq_isr(rts_strict *s, rts_time_ns now);

/**
 * Expiry of the limiter's one-shot timer, at time `now`.
 * Context: the timer's ISR. Cost: O(1), no loop.
 * @return ENABLE_LINE when the timer was armed and `now` >= its expiry.
 *         An expiry before `timer_at` (the port fired early) returns
 *         ARM_TIMER at the original expiry, so the minimum interarrival
 *         time still holds; an expiry with no timer armed returns nothing
 *         (RTS_ACT_NONE). Both count in `port_errors`.
 */
rts_action rts_strict_on_timer_isr(rts_strict *s, rts_time_ns now);

/**
 * Admission bound (§5.2): the most interrupts a strict limiter with minimum
 * interarrival `t_min_ns` admits in any window of `delta_ns`, ⌈Δ / t_min⌉
 * (two admissions are at least t_min apart). This is the limiter's arrival
 * curve η⁺(Δ); what the CPU sees is at most the smaller of it and the
 * traffic's (rtshield analyze, docs/analysis.md "Arrival curves").
 * Pure; usable from Python. Choices: 0 for Δ = 0; t_min 0 (no limit) gives
 * UINT64_MAX (unbounded). Context: any. Cost: O(1), one 64-bit division.
 */
uint64_t rts_strict_max_irqs(rts_time_ns t_min_ns, rts_time_ns delta_ns);

#endif /* RTSHIELD_RTS_STRICT_H */
