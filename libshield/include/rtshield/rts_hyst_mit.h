/**
 * @file rts_hyst_mit.h
 * @brief Hysteresis Mitigation (Danicki et al. §2.2): block networking on low earliness.
 *
 * The critical task reports its earliness at the end of every cycle (time left
 * until its target, negative when late). The report only records the value;
 * the decision is taken in the network driver task, as in the paper: each
 * time round its loop the driver calls rts_hyst_mit_driver_poll(). When the
 * latest earliness is below the block threshold the driver stops taking
 * packets, the RX line is disabled, and the driver sleeps in a loop of fixed
 * sleeps; once the latest earliness is above the unblock threshold the line is
 * re-enabled and processing resumes. Because the check runs in the driver, an
 * interrupt flood that starves the driver also stops the mitigation from
 * blocking: that is the weakness Danicki §3 observed, and it is kept.
 *
 * Thresholds are in ns or, with rts_hyst_mit_cfg_permille(), in per-mille of
 * the period; the study blocked below 10 % earliness (90 % of the allowable
 * time used) and unblocked above 50 %.
 *
 * Hooks (see rts_mitigation.h): on_cycle_end at the critical task's cycle end,
 * driver_poll in the driver loop before each packet. Cost: O(1).
 */
#ifndef RTSHIELD_RTS_HYST_MIT_H
#define RTSHIELD_RTS_HYST_MIT_H

#include "rtshield/rts_mitigation.h"
#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** Configuration of a Hysteresis Mitigation. */
typedef struct rts_hyst_mit_cfg {
    int64_t block_below_ns;   /**< block when earliness < this */
    int64_t unblock_above_ns; /**< unblock when earliness > this; >= block_below_ns */
    rts_time_ns sleep_ns;     /**< the blocked driver's sleep per loop iteration (> 0) */
} rts_hyst_mit_cfg;

/** State of a Hysteresis Mitigation. */
typedef struct rts_hyst_mit {
    rts_hyst_mit_cfg cfg;
    int64_t earliness_ns;  /**< latest reported earliness */
    bool have_report;      /**< at least one report since init */
    bool blocked;          /**< the driver is blocked and the line held off */
    uint64_t reports;      /**< cycle-end reports received */
    uint64_t blocks;       /**< transitions to blocked */
    uint64_t unblocks;     /**< transitions back to running */
} rts_hyst_mit;

/**
 * Fill `cfg` from thresholds in per-mille of the critical period.
 * E.g. period 10 ms, block 100 ‰, unblock 500 ‰ → block below 1 ms, unblock
 * above 5 ms. Context: any. Cost: O(1), two 64-bit divisions by 1000.
 * @retval RTS_OK
 * @retval RTS_EINVAL `cfg` NULL, period 0 or over 2^53 ns, block > unblock,
 *         unblock > 1000, or sleep_ns 0
 */
rts_err rts_hyst_mit_cfg_permille(rts_hyst_mit_cfg *cfg, rts_time_ns period_ns, uint32_t block_permille,
                                  uint32_t unblock_permille, rts_time_ns sleep_ns);

/**
 * Initialise: not blocked, no report yet (the driver runs until the first
 * report says otherwise). Context: task.
 * @retval RTS_OK
 * @retval RTS_EINVAL NULL argument, block_below_ns > unblock_above_ns, sleep_ns 0
 */
rts_err rts_hyst_mit_init(rts_hyst_mit *m, const rts_hyst_mit_cfg *cfg);

/**
 * Critical task's cycle end: record `earliness_ns` (target minus finish time,
 * negative when late). Takes no decision. Context: task (the critical task).
 * Cost: O(1).
 * @return always RTS_ACT_NONE (uniform hook signature).
 */
rts_action rts_hyst_mit_on_cycle_end(rts_hyst_mit *m, rts_time_ns now, int64_t earliness_ns);

/**
 * Driver loop, before taking the next packet: apply the thresholds to the
 * latest report. Context: the network driver task. Cost: O(1).
 * @return run = true, act NONE: process the next packet;
 *         run = true, act ENABLE_LINE: just unblocked (earliness > unblock);
 *         run = false, act DISABLE_LINE, sleep_ns: just blocked (earliness < block);
 *         run = false, act NONE, sleep_ns: still blocked, sleep and poll again.
 */
rts_driver_poll rts_hyst_mit_driver_poll(rts_hyst_mit *m, rts_time_ns now);

#endif /* RTSHIELD_RTS_HYST_MIT_H */
