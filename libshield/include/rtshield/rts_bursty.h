/**
 * @file rts_bursty.h
 * @brief Bursty interrupt limiter with one periodic timer shared by several
 *        sources (Regehr & Duongsaa, "Preventing Interrupt Overload",
 *        §3.3, §3.5, §5.2).
 *
 * Each source (interrupt line) has a burst size N and a counter. The ISR
 * prologue of a source calls rts_bursty_on_irq_isr(): the counter is
 * incremented and, when it reaches N, the line is disabled. A periodic timer
 * (its frequency is the burst arrival rate) calls rts_bursty_on_tick_isr():
 * every counter is cleared and every line the limiter disabled is re-enabled.
 * One timer serves up to RTS_BURSTY_MAX_SOURCES sources.
 *
 * Timer modes:
 * - RTS_BURSTY_TIMER_PERIODIC: the timer interrupt is always enabled and
 *   every tick runs.
 * - RTS_BURSTY_TIMER_LAZY (the §3.3 optimisation): the timer keeps running
 *   but its interrupt stays disabled while every counter is below its
 *   threshold. The source that reaches its threshold clears the timer
 *   interrupt's pending bit and then enables the timer interrupt
 *   (RTS_ACT_CLEAR_TIMER_PENDING, RTS_ACT_ENABLE_TIMER_IRQ); a tick that
 *   finds no source over its threshold disables the timer interrupt again.
 *   Counters are cleared only by ticks that run, so during underload a
 *   counter sums arrivals over many periods (see docs/decisions/limiters.md).
 *
 * The timer: ticks fall at t0 + k*period (k >= 1), t0 being the time given
 * to rts_bursty_start(). The limiter asks for each tick with
 * RTS_ACT_ARM_TIMER at the next phase point, so a port with one-shot timers
 * gets a periodic timer; a port whose hardware timer is free-running at that
 * phase may ignore the re-arm.
 *
 * Real-time model (§5.2), per source: the interrupt with
 * C = N(t_int + t_work + t_count) + t_flip and T = period, release jitter
 * T - C (a burst just before a tick and one just after: up to 2N
 * interrupts in a short window); the timer with
 * C = t_expire + t_clear + t_flip, T = period.
 *
 * Cost: rts_bursty_on_irq_isr() is O(1), no loop. rts_bursty_on_tick_isr()
 * loops once over the registered sources (at most RTS_BURSTY_MAX_SOURCES
 * iterations). Finding the next phase point is an addition when the tick
 * runs within a period of its due time; it takes one 64-bit division when
 * phase points were missed (a late tick, or in lazy mode the arrival that
 * enables the timer interrupt after a long underload).
 * rts_bursty_on_tick_apply_isr() adds at most RTS_BURSTY_MAX_SOURCES + 1
 * calls of rts_port_apply().
 */
#ifndef RTSHIELD_RTS_BURSTY_H
#define RTSHIELD_RTS_BURSTY_H

#include "rtshield/rts_opts.h"
#include "rtshield/rts_port.h"
#include "rtshield/rts_types.h"

/** How the shared timer's interrupt is managed. */
typedef enum rts_bursty_mode {
    RTS_BURSTY_TIMER_PERIODIC = 0, /**< timer interrupt always enabled */
    RTS_BURSTY_TIMER_LAZY = 1      /**< timer interrupt enabled only while a source is over threshold (§3.3) */
} rts_bursty_mode;

/** One source slot: 16 bytes. */
typedef struct rts_bursty_source {
    uint32_t burst;    /**< burst size N (>= 1); 0 = slot unused */
    uint32_t count;    /**< arrivals since the last tick that ran */
    uint32_t admitted; /**< interrupts admitted (handler ran) */
    uint32_t disables; /**< times the limiter disabled this line */
} rts_bursty_source;

/** A bursty limiter: one shared periodic timer and its sources. Read the
 *  counters directly; write the fields only through the functions. */
typedef struct rts_bursty {
    rts_time_ns period_ns;    /**< timer period = 1 / burst arrival rate, ns */
    rts_time_ns t0;           /**< phase origin: ticks at t0 + k*period */
    rts_time_ns next_tick;    /**< the phase point last asked for */
    rts_bursty_mode mode;     /**< periodic or lazy timer interrupt */
    uint32_t n_sources;       /**< registered sources: ids 0..n_sources-1 */
    uint32_t disabled_mask;   /**< bit i: the limiter holds source i's line off */
    bool timer_irq_on;        /**< the limiter has the timer interrupt enabled */
    uint32_t ticks;           /**< ticks that ran */
    uint32_t timer_enables;   /**< lazy mode: times the timer interrupt was enabled */
    uint32_t port_errors;     /**< arrivals on a line the limiter holds off; bad source ids */
    rts_bursty_source src[RTS_BURSTY_MAX_SOURCES];
} rts_bursty;

/**
 * Initialise a limiter with no sources, its timer not started.
 * Context: task.
 * @param b         limiter storage
 * @param period_ns timer period in ns (the inverse of the burst arrival rate), >= 1
 * @param mode      RTS_BURSTY_TIMER_PERIODIC or RTS_BURSTY_TIMER_LAZY
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `b` NULL, `period_ns` 0 or an unknown mode (`b` untouched)
 */
rts_err rts_bursty_init(rts_bursty *b, rts_time_ns period_ns, rts_bursty_mode mode);

/**
 * Register a source with burst size `burst`; its id is the next free index.
 * Context: task, before the source's line is enabled.
 * @param id_out receives the source id (may be NULL)
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `b` NULL or `burst` 0
 * @retval RTS_EFULL  RTS_BURSTY_MAX_SOURCES sources already registered
 */
rts_err rts_bursty_add_source(rts_bursty *b, uint32_t burst, uint32_t *id_out);

/**
 * Change a source's burst size. The counter is kept: the new size applies
 * from the next arrival (a counter already at or above it disables the line
 * on that arrival).
 * Context: task or ISR, serialised with the limiter's other calls. Cost: O(1), no loop.
 * @retval RTS_OK     done
 * @retval RTS_EINVAL `b` NULL or `burst` 0
 * @retval RTS_ENOENT `id` is not a registered source
 */
rts_err rts_bursty_set_burst(rts_bursty *b, uint32_t id, uint32_t burst);

/**
 * Start (or restart with a new phase) the shared timer at time `now`: the
 * first tick falls at now + period.
 * Context: task, or the timer ISR. Cost: O(1), no loop.
 * @return ARM_TIMER at now + period, with CLEAR_TIMER_PENDING and
 *         ENABLE_TIMER_IRQ in periodic mode (a stale expiry must not run a
 *         tick at once), or DISABLE_TIMER_IRQ in lazy mode (the interrupt is enabled by the
 *         first source over threshold; in lazy mode ENABLE_TIMER_IRQ is
 *         added, after CLEAR_TIMER_PENDING, if a line is held off).
 *         Apply it with any source's rts_port_target (all share the timer).
 */
rts_action rts_bursty_start(rts_bursty *b, rts_time_ns now);

/**
 * ISR prologue of source `id` at time `now`: counts the arrival.
 * Context: the source's ISR. Cost: O(1), no loop.
 * @return DELIVER when the interrupt is admitted; with DISABLE_LINE when the
 *         counter reaches the burst size; in lazy mode, when this is the
 *         first line held off since the timer interrupt was disabled, also
 *         ARM_TIMER (next phase point after `now`), CLEAR_TIMER_PENDING and
 *         ENABLE_TIMER_IRQ (rts_port_apply() performs them in that order).
 *         An arrival on a line the limiter already holds off means the port
 *         failed to disable it: DROP | DISABLE_LINE, counted in `port_errors`.
 *         A bad `id` returns DELIVER alone (the limiter cannot guard an
 *         unknown line) and counts in `port_errors`.
 */
rts_action rts_bursty_on_irq_isr(rts_bursty *b, uint32_t id, rts_time_ns now);

/**
 * A tick of the shared timer at time `now`: clears every counter and
 * re-enables every line the limiter held off.
 * Context: the timer ISR. Cost: one pass over the registered sources
 * (<= RTS_BURSTY_MAX_SOURCES iterations); one 64-bit division only when
 * phase points were missed.
 * @param reenable_out receives the bitmask of source ids whose line must be
 *        re-enabled (RTS_ACT_ENABLE_LINE with that source's target); may be NULL
 * @return the timer's action: ARM_TIMER at the next phase point after `now`,
 *         plus DISABLE_TIMER_IRQ in lazy mode when no source was over its
 *         threshold at this tick.
 */
rts_action rts_bursty_on_tick_isr(rts_bursty *b, rts_time_ns now, uint32_t *reenable_out);

/**
 * rts_bursty_on_tick_isr() performed through the port: the timer action
 * with `targets[0]`, then ENABLE_LINE for each re-enabled source `i` with
 * `targets[i]` (line enables go through `gate`, which may be NULL).
 * Context: the timer ISR. Cost: rts_bursty_on_tick_isr() plus at most
 * RTS_BURSTY_MAX_SOURCES + 1 calls of rts_port_apply().
 * @param targets one entry per registered source, indexed by source id, and
 *        at least one entry: the timer action always uses `targets[0]`
 * @return the bitmask of re-enabled sources
 */
uint32_t rts_bursty_on_tick_apply_isr(rts_bursty *b, rts_time_ns now, const rts_port *port,
                                      rts_irq_gate *gate, const rts_port_target *targets);

/**
 * Admission bound (§5.2): the most interrupts one source of a bursty limiter
 * with `burst` per timer period `period_ns` admits in any window of
 * `delta_ns`: burst · (⌈Δ / period⌉ + 1). The counter admits at most `burst`
 * between two clearings; clearings one period apart (a lazy timer clears
 * less often, never more) leave at most ⌈Δ / period⌉ + 1 such stretches in a
 * window of Δ: `burst` at the end of one and `burst` at the start of the
 * next is the back-to-back case of §5.2. The tick's handler clears the
 * counters at its end: when that end can come up to J after its tick (the
 * handler waits for another interrupt, then runs), two clearings can be
 * period − J apart, and the bound of a window Δ is this function at Δ + J.
 * The limiter's arrival curve η⁺(Δ).
 * Pure; usable from Python. Choices: 0 for Δ = 0 or burst 0; period 0 gives
 * UINT64_MAX (unbounded). Context: any. Cost: O(1), one 64-bit division.
 */
uint64_t rts_bursty_max_irqs(uint32_t burst, rts_time_ns period_ns, rts_time_ns delta_ns);

/**
 * Rate helper (§3.5): burst sizes of sources sharing one timer. Each
 * source's maximum rate is rounded up to a multiple of the timer frequency:
 * burst[i] = ceil(rates_hz[i] / timer_hz), and the maximum average rate it
 * then admits is burst[i] * timer_hz. Example: 324, 200, 754 Hz on 110 Hz
 * give bursts 3, 2, 7 and rates 330, 220, 770 Hz.
 * Context: any (no state). Cost: O(n), one division per source.
 * @param rates_hz     n maximum arrival rates, Hz, each >= 1
 * @param n            number of sources, >= 1
 * @param timer_hz     timer frequency, Hz, >= 1
 * @param bursts_out   n burst sizes (written only on success)
 * @param max_rates_out n resulting max average rates, Hz (may be NULL;
 *                     written only on success)
 * @retval RTS_OK     done
 * @retval RTS_EINVAL a NULL array, n or timer_hz 0, a rate 0, or a
 *                    resulting rate above UINT32_MAX Hz
 */
rts_err rts_bursty_burst_sizes(const uint32_t *rates_hz, uint32_t n, uint32_t timer_hz,
                               uint32_t *bursts_out, uint32_t *max_rates_out);

/**
 * Rate rounding (§3.5) for a timer given as a period: the burst that lets a
 * source reach `rate_hz` when its counter is cleared every `period_ns`,
 * burst = ceil(rate_hz * period_ns / 1 s) (at least 1). It equals
 * rts_bursty_burst_sizes() when the period is a whole number of Hz, and
 * covers periods such as 3 ms that are not. The same rounding gives the
 * budget of a deferrable server (rts_dserver.h) that must serve `rate_hz`
 * packets per second with replenishment period `period_ns` (Behnke §5.6):
 * rtshield design uses it for both.
 * Context: any (no state). Cost: O(1), one 64-bit division.
 * @param rate_hz    maximum arrival rate, Hz, >= 1
 * @param period_ns  timer period, ns, >= 1
 * @param burst_out  the burst size (written only on success)
 * @retval RTS_OK     done
 * @retval RTS_EINVAL a NULL pointer, a rate or period 0, or a burst above
 *                    UINT32_MAX
 */
rts_err rts_bursty_burst_for_period(uint32_t rate_hz, rts_time_ns period_ns, uint32_t *burst_out);

/**
 * Rate helper (§3.5): propose a shared timer frequency. The rule: the lowest
 * frequency at which every source's burst (as rts_bursty_burst_sizes()
 * computes it) is at most `max_burst`; the lowest, because each tick costs
 * t_expire + t_clear + t_flip while `max_burst` bounds how long one burst
 * may delay other work.
 * - With `candidates_hz` NULL (or `n_candidates` 0) every integer frequency
 *   is allowed, and the answer is ceil(max(rates_hz) / max_burst).
 * - Otherwise the lowest of the `n_candidates` frequencies (in any order)
 *   that satisfies the rule, e.g. what the hardware timer can produce.
 * Context: any (no state). Cost: O(n + n_candidates), one division.
 * @param timer_hz_out receives the frequency (written only on success)
 * @retval RTS_OK     done
 * @retval RTS_EINVAL a NULL array, n or max_burst 0, a rate 0, or a
 *                    candidate 0
 * @retval RTS_ENOENT no candidate satisfies the rule
 */
rts_err rts_bursty_pick_timer_hz(const uint32_t *rates_hz, uint32_t n, uint32_t max_burst,
                                 const uint32_t *candidates_hz, uint32_t n_candidates,
                                 uint32_t *timer_hz_out);

#endif /* RTSHIELD_RTS_BURSTY_H */
