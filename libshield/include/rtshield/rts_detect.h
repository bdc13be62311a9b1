/**
 * @file rts_detect.h
 * @brief Overload detection metrics (Danicki et al. §2.1).
 *
 * Three metrics, each a small caller-owned struct:
 * - lateness monitor (rts_detect_lateness_mon): per cycle of a periodic task, the
 *   earliness (target minus finish, ns) and the lateness as a fraction of the
 *   target duration in ppm (1 000 000 ppm = 100 % = the cycle took twice its
 *   target); counts of cycles and misses, the worst single-cycle lateness, and
 *   the accumulated lateness of a bin (sum of the cycle latenesses), which the
 *   paper's device reported and cleared every second;
 * - interrupt counter per time slice (rts_detect_irq_count): count in the current
 *   slice, the last complete slice's count, and a threshold crossing flag;
 * - queue fill watermarks (rts_detect_fill_wm): overload set when the fill reaches the
 *   high water mark, cleared when it falls to the low water mark (hysteresis).
 *
 * Integer arithmetic only, so the monitors run on the target.
 */
#ifndef RTSHIELD_RTS_DETECT_H
#define RTSHIELD_RTS_DETECT_H

#include "rtshield/rts_types.h"

/* ------------------------------------------------------- lateness monitor */

/** Lateness scale: RTS_PPM_ONE = 100 % of the target duration;
 *  lateness_ppm / RTS_PPM_PER_PERCENT = percent. */
enum { RTS_PPM_PER_PERCENT = 10000, RTS_PPM_ONE = 1000000 };

/** Result of one cycle. */
typedef struct rts_detect_cycle_result {
    int64_t earliness_ns;  /**< target - finish: positive early, negative late */
    uint64_t lateness_ppm; /**< (finish - target) / (target - start) in ppm; 0 if on time */
    bool miss;             /**< finish > target */
} rts_detect_cycle_result;

/** Accumulated values of one bin (between two rts_detect_lateness_mon_take_bin()). */
typedef struct rts_detect_lateness_bin {
    uint64_t cycles;           /**< cycles that ended in the bin */
    uint64_t misses;           /**< of which finished after their target */
    uint64_t lateness_sum_ppm; /**< sum of the cycles' lateness (saturating) */
    uint64_t lateness_max_ppm; /**< worst single cycle of the bin */
} rts_detect_lateness_bin;

/** Lateness/earliness monitor of one periodic task. */
typedef struct rts_detect_lateness_mon {
    uint64_t cycles;            /**< all cycles */
    uint64_t misses;            /**< all misses */
    uint64_t lateness_max_ppm;  /**< worst single cycle */
    uint64_t lateness_sum_ppm;  /**< sum over all cycles (saturating) */
    int64_t earliness_min_ns;   /**< smallest earliness seen (INT64_MAX before any cycle) */
    uint64_t bin_max_ppm;       /**< worst accumulated lateness of a taken bin */
    rts_detect_lateness_bin bin;       /**< the bin being accumulated */
} rts_detect_lateness_mon;

/** Initialise (all counters zero). Context: any. Cost: O(1).
 *  @retval RTS_OK @retval RTS_EINVAL `m` NULL */
rts_err rts_detect_lateness_mon_init(rts_detect_lateness_mon *m);

/**
 * Pure computation of one cycle's metrics, without recording them.
 * `target` is the absolute time the cycle should have finished by; its target
 * duration is target - start. Context: any. O(1), no loop.
 * @return the metrics; all zero if target <= start (no target duration).
 *         lateness_ppm saturates at UINT64_MAX.
 */
rts_detect_cycle_result rts_detect_cycle_eval(rts_time_ns start, rts_time_ns target, rts_time_ns finish);

/**
 * Record one cycle (rts_detect_cycle_eval() plus the totals and the current bin).
 * Context: task or ISR; not reentrant on the same monitor. O(1).
 * @return the cycle's metrics (as rts_detect_cycle_eval()).
 */
rts_detect_cycle_result rts_detect_lateness_mon_cycle(rts_detect_lateness_mon *m, rts_time_ns start, rts_time_ns target,
                                        rts_time_ns finish);

/**
 * Close the current bin: copy it to `*out` (may be NULL), update the worst
 * bin, and start a new empty bin. Call it every bin period (the paper: once a
 * second). Context: any; serialise with rts_detect_lateness_mon_cycle(). O(1).
 * @retval RTS_OK @retval RTS_EINVAL `m` NULL
 */
rts_err rts_detect_lateness_mon_take_bin(rts_detect_lateness_mon *m, rts_detect_lateness_bin *out);

/* ---------------------------------------------- interrupt count per slice */

/** Interrupt counter over fixed, aligned time slices. */
typedef struct rts_detect_irq_count {
    rts_time_ns slice_ns;    /**< slice length */
    uint32_t threshold;      /**< crossing when count > threshold */
    rts_time_ns slice_start; /**< start of the current slice (origin + k * slice_ns) */
    uint32_t count;          /**< interrupts in the current slice (saturating) */
    uint32_t last;           /**< interrupts in the slice just before the current one */
    bool over;               /**< the current slice crossed the threshold */
    bool last_over;          /**< the previous slice crossed it */
    uint64_t total;          /**< all interrupts counted */
    uint64_t slices_over;    /**< slices that crossed the threshold */
} rts_detect_irq_count;

/**
 * Initialise with slices origin + k * slice_ns. Context: any. Cost: O(1).
 * @retval RTS_OK @retval RTS_EINVAL `c` NULL or slice_ns 0
 */
rts_err rts_detect_irq_count_init(rts_detect_irq_count *c, rts_time_ns slice_ns, uint32_t threshold, rts_time_ns origin);

/**
 * Roll over to the slice containing `now` without counting. Slices skipped
 * without interrupts make `last` 0. Times before the current slice are
 * treated as inside it. Context: any. O(1) (one division).
 */
void rts_detect_irq_count_advance(rts_detect_irq_count *c, rts_time_ns now);

/**
 * Count one interrupt at `now` (rolling over first). Context: ISR. O(1).
 * @return true exactly when this interrupt made the current slice's count
 *         cross the threshold (count becomes threshold + 1).
 */
bool rts_detect_irq_count_on_irq_isr(rts_detect_irq_count *c, rts_time_ns now);

/* ------------------------------------------------- queue fill watermarks */

/** Change reported by rts_detect_fill_wm_update(). */
typedef enum rts_detect_wm_change {
    RTS_WM_UNCHANGED = 0, /**< overload flag unchanged */
    RTS_WM_OVERLOAD = 1,  /**< fill reached the high mark: overload set */
    RTS_WM_CLEARED = 2    /**< fill fell to the low mark: overload cleared */
} rts_detect_wm_change;

/** Queue fill watermarks with hysteresis. */
typedef struct rts_detect_fill_wm {
    uint32_t high;      /**< overload set when fill >= high */
    uint32_t low;       /**< overload cleared when fill <= low; low < high */
    bool overload;      /**< current state */
    uint32_t max_fill;  /**< largest fill seen */
    uint64_t episodes;  /**< times overload was set */
} rts_detect_fill_wm;

/**
 * Initialise. Context: any. Cost: O(1).
 * @retval RTS_OK @retval RTS_EINVAL `w` NULL, high 0, or low >= high
 */
rts_err rts_detect_fill_wm_init(rts_detect_fill_wm *w, uint32_t high, uint32_t low);

/** Report the current fill level (after an enqueue or a dequeue).
 *  Context: ISR or task. O(1).
 *  @return the change of the overload flag. */
rts_detect_wm_change rts_detect_fill_wm_update(rts_detect_fill_wm *w, uint32_t fill);

#endif /* RTSHIELD_RTS_DETECT_H */
