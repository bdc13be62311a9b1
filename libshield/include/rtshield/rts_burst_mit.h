/**
 * @file rts_burst_mit.h
 * @brief Burst Mitigation (Danicki et al. §2.2): a packet capacity per time slice.
 *
 * Time is split into slices of fixed length; each slice accepts at most
 * `capacity` packets. The RX ISR passes the OS tick time at its entry; when
 * at least one slice length has passed since the start of the current slice,
 * a new slice starts (at that tick time by default, as in the paper, or on
 * the grid of slice boundaries when `aligned` is set). The packet that brings
 * the count to `capacity` is accepted and the RX line is disabled until the
 * start of the next slice.
 *
 * Who re-enables: the paper's ISR cannot run while its line is off, so the
 * disabling call also returns RTS_ACT_ARM_TIMER at the earliest start of the
 * next slice (current slice start + slice length). rts_burst_mit_on_timer_isr()
 * at that time returns RTS_ACT_ENABLE_LINE. A port without a spare timer may
 * call rts_burst_mit_on_timer_isr() from its tick hook instead: it re-enables
 * only once the re-enable time has been reached.
 *
 * Worst case: capacity packets at the end of one slice and capacity more at
 * the start of the next are both accepted: 2 x capacity within a short
 * interval (Danicki §2.2), whichever slice start rule is used.
 *
 * Hooks (see rts_mitigation.h): on_rx_isr at ISR entry, on_timer_isr at timer
 * expiry (or on the tick). Cost of each: O(1), no loop.
 */
#ifndef RTSHIELD_RTS_BURST_MIT_H
#define RTSHIELD_RTS_BURST_MIT_H

#include "rtshield/rts_mitigation.h"
#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** Configuration of a Burst Mitigation. */
typedef struct rts_burst_mit_cfg {
    rts_time_ns slice_ns; /**< slice length (> 0); the study used 20 ms */
    uint32_t capacity;    /**< packets accepted per slice (> 0); the study used 600 */
    /** false (paper): a new slice starts at the tick time of the first ISR
     *  after the old slice has run out. true: slices lie on the grid
     *  origin + k * slice_ns, origin being the first ISR's tick time. */
    bool aligned;
} rts_burst_mit_cfg;

/** State of a Burst Mitigation. Treat as opaque; read the counters. */
typedef struct rts_burst_mit {
    rts_burst_mit_cfg cfg;
    rts_time_ns slice_start; /**< start of the current slice */
    rts_time_ns reenable_at; /**< when line_off: start of the next slice */
    uint32_t count;          /**< packets accepted in the current slice */
    bool started;            /**< a first slice has been started */
    bool line_off;           /**< this mitigation holds the RX line disabled */
    uint64_t accepted;       /**< packets accepted (all slices) */
    uint64_t dropped;        /**< ISR runs while over capacity (latched arrivals) */
    uint64_t slices;         /**< slices started */
    uint64_t disables;       /**< times the line was disabled */
} rts_burst_mit;

/** Fill `cfg` with the defaults of rts_opts.h (RTS_BURST_MIT_*_DEFAULT).
 *  Context: any. Cost: O(1). */
void rts_burst_mit_cfg_default(rts_burst_mit_cfg *cfg);

/**
 * Initialise `m` with `cfg` (copied). No slice is started until the first ISR.
 * Context: task, before the RX interrupt is enabled.
 * @retval RTS_OK
 * @retval RTS_EINVAL `m` or `cfg` NULL, slice_ns == 0 or capacity == 0
 */
rts_err rts_burst_mit_init(rts_burst_mit *m, const rts_burst_mit_cfg *cfg);

/**
 * RX ISR prologue: count the packet whose interrupt is being handled.
 * `now` is the OS tick time read at ISR entry.
 * Context: ISR. Cost: O(1), a few compares and one division when `aligned`.
 * @return RTS_ACT_NONE: accept the packet;
 *         RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER (timer_at = next slice
 *         start): accept this packet, which filled the slice, and disable the
 *         line; RTS_ACT_DROP | RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER: the
 *         slice was already full (an arrival latched while disabling): drop it.
 */
rts_action rts_burst_mit_on_rx_isr(rts_burst_mit *m, rts_time_ns now);

/**
 * Timer expiry (or tick hook): re-enable the line when the next slice may start.
 * Context: ISR. Cost: O(1).
 * @return RTS_ACT_ENABLE_LINE if the line was held off and now >= the
 *         re-enable time; RTS_ACT_NONE otherwise (early call, or line not held).
 */
rts_action rts_burst_mit_on_timer_isr(rts_burst_mit *m, rts_time_ns now);

/**
 * Admission bound (Danicki §2.2): the most packets a Burst Mitigation with
 * `capacity` per slice accepts in any window of `delta_ns`, when its slices
 * are at least `slice_ns` long in real time: capacity · (⌈Δ / slice⌉ + 1)
 * (the paper's "up to twice as large" for a short window). A slice starts at
 * the ISR's clock reading, so with a clock of resolution r the real slice
 * can be r shorter than configured: pass slice_ns − r. The arrival curve
 * η⁺(Δ) of what the mitigation lets through.
 * Pure; usable from Python. Choices: 0 for Δ = 0 or capacity 0; slice 0
 * gives UINT64_MAX (unbounded). Context: any. Cost: O(1), one 64-bit division.
 */
uint64_t rts_burst_mit_max_packets(uint32_t capacity, rts_time_ns slice_ns, rts_time_ns delta_ns);

#endif /* RTSHIELD_RTS_BURST_MIT_H */
