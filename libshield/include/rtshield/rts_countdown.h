/**
 * @file rts_countdown.h
 * @brief Countdown filter: the hardware interrupt scheduler of
 *        Regehr & Duongsaa, "Preventing Interrupt Overload", §3.4 and §5.2.
 *
 * A counter is decremented at a fixed rate. An arrival with the counter at
 * zero is delivered to the CPU and reloads the counter with its initial
 * value. An arrival while the counter is running is latched; further ones
 * are lost (one latch, no queue). When the counter reaches zero with an
 * arrival latched, that arrival is delivered then and the counter reloads.
 * Deliveries are therefore at least one window (initial value x tick) apart.
 *
 * The filter models hardware that sits in front of the interrupt
 * controller; in libshield it is a deterministic model driven with time
 * passed in (the simulator, a test, or an FPGA reference model). The host
 * asks rts_countdown_next_event_at() when the counter next reaches zero and
 * calls rts_countdown_on_zero_isr() then. Every call first brings the
 * filter up to `now`, so a host that calls late, or an arrival at exactly
 * the instant the counter reaches zero, gives the same result as calling
 * on time: the zero is handled before the arrival.
 *
 * Real-time model (§5.2): one periodic task with T = window and
 * C = t_int + t_work. Software cost of the hardware: zero.
 *
 * Cost: every function is O(1), no loop; rts_countdown_configure() does one
 * 64-bit division. State: 40 bytes (64-bit host).
 */
#ifndef RTSHIELD_RTS_COUNTDOWN_H
#define RTSHIELD_RTS_COUNTDOWN_H

#include "rtshield/rts_types.h"

/** A countdown filter for one interrupt line. Read the counters directly;
 *  write the fields only through the functions. */
typedef struct rts_countdown {
    rts_time_ns zero_at;  /**< when the running counter reaches zero */
    uint32_t tick_ns;     /**< countdown period: the counter loses 1 every tick_ns ns */
    uint32_t initial;     /**< value loaded on a delivery; 0 = pass everything */
    bool running;         /**< counter above zero */
    bool latched;         /**< an arrival waits for the counter to reach zero */
    uint32_t arrivals;    /**< arrivals seen */
    uint32_t delivered;   /**< interrupts delivered to the CPU */
    uint32_t latches;     /**< arrivals latched (each later delivered) */
    uint32_t lost;        /**< arrivals lost on a full latch */
} rts_countdown;

/**
 * Initialise an idle filter (counter at zero, nothing latched).
 * Context: task.
 * @param tick_ns countdown period in ns (1 / countdown frequency), >= 1
 * @param initial value loaded into the counter on a delivery; the window is
 *                initial * tick_ns; 0 passes every arrival
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `c` NULL or `tick_ns` 0 (`c` untouched)
 */
rts_err rts_countdown_init(rts_countdown *c, uint32_t tick_ns, uint32_t initial);

/**
 * Change the countdown rate and the initial value at time `now`, as the
 * software of §3.4 may. The initial value is a reload register: it applies
 * from the next load. A running counter keeps its current value,
 * ceil((zero_at - now) / old tick_ns), and counts it down at the new rate
 * from `now`. A latched arrival stays latched.
 * Context: task or ISR, serialised with the filter's other calls.
 * Cost: O(1), one 64-bit division.
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `c` NULL or `tick_ns` 0 (nothing changed)
 */
rts_err rts_countdown_configure(rts_countdown *c, uint32_t tick_ns, uint32_t initial, rts_time_ns now);

/**
 * An interrupt arrives at the filter at time `now`.
 * Context: the host's model of the interrupt line (or the line's ISR in a
 * software emulation). Cost: O(1), no loop.
 * @return DELIVER when the counter is at zero (it reloads) — also when a
 *         latched arrival is delivered because the counter reached zero at
 *         or before `now` (the new arrival is then latched);
 *         ARM_TIMER at the zero time when this arrival is latched (the
 *         host calls rts_countdown_on_zero_isr() then);
 *         DROP when the latch is already full (the arrival is lost).
 *         A host that missed the zero time by more than a whole window gets
 *         one DELIVER for two deliveries (the latched one and this one);
 *         `delivered` counts both. Calling at next_event_at() avoids it.
 */
rts_action rts_countdown_on_arrival_isr(rts_countdown *c, rts_time_ns now);

/**
 * The counter reaches zero: call at rts_countdown_next_event_at().
 * Context: the host's countdown event (or a timer ISR). Cost: O(1), no loop.
 * @return DELIVER when a latched arrival is delivered (the counter reloads,
 *         and ARM_TIMER is not set: nothing is latched any more); NONE when
 *         nothing was latched (the counter stops at zero) or when called
 *         before the zero time.
 */
rts_action rts_countdown_on_zero_isr(rts_countdown *c, rts_time_ns now);

/**
 * When the running counter reaches zero; UINT64_MAX when it is idle.
 * Calling rts_countdown_on_zero_isr() then is required when an arrival is
 * latched, optional otherwise (every call catches up).
 * Context: any. Cost: O(1).
 */
rts_time_ns rts_countdown_next_event_at(const rts_countdown *c);

/**
 * Admission bound (§5.2): the most interrupts a countdown filter delivers in
 * any window of `delta_ns`, ⌈Δ / (initial · tick_ns)⌉ (deliveries are at
 * least one window apart). The filter's arrival curve η⁺(Δ).
 * Pure; usable from Python. Choices: 0 for Δ = 0; `initial` or `tick_ns` 0
 * (the filter passes every arrival) gives UINT64_MAX (unbounded).
 * Context: any. Cost: O(1), one 64-bit division.
 */
uint64_t rts_countdown_max_irqs(uint32_t tick_ns, uint32_t initial, rts_time_ns delta_ns);

#endif /* RTSHIELD_RTS_COUNTDOWN_H */
