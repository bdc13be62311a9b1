/**
 * @file rts_budget_mit.h
 * @brief Budget Mitigation (Danicki et al. §2.2): the critical task's earliness is the driver's budget.
 *
 * At the end of every cycle the critical task reports its earliness; it
 * replaces the network driver's budget. The driver measures the work of each
 * packet and charges it. When the budget reaches zero or below, networking is
 * suspended (RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE) until the next
 * report; a positive report resumes it (RTS_ACT_RESUME_DRIVER |
 * RTS_ACT_ENABLE_LINE), a report of zero or less keeps it suspended.
 *
 * Only driver time is charged by default: the paper did not time the ISR
 * (Danicki §4 names this as one reason the budget underestimates the network
 * load). Set `charge_isr` to also charge the ISR work passed to
 * rts_budget_mit_on_isr_work_isr().
 *
 * Exhaustion in the middle of a packet: the packet in progress completes (its
 * work is known only afterwards). The overdraft (work beyond the budget) is
 * discarded by default, since each report replaces the budget; with
 * `carry_overdraft` it is subtracted from the next report's budget.
 *
 * The paper runs the driver at the critical task's priority so that it can
 * spend its budget and then yield; that is the scheduler's business, not this
 * component's.
 *
 * Hooks (see rts_mitigation.h): on_cycle_end, driver_poll, on_packet_done,
 * on_isr_work_isr. Cost of each: O(1).
 */
#ifndef RTSHIELD_RTS_BUDGET_MIT_H
#define RTSHIELD_RTS_BUDGET_MIT_H

#include "rtshield/rts_mitigation.h"
#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** Configuration of a Budget Mitigation. */
typedef struct rts_budget_mit_cfg {
    /** Budget before the first report (ns, may be 0: suspended until the
     *  first report; negative values are treated as 0). */
    int64_t initial_budget_ns;
    bool charge_isr;      /**< also charge ISR work (default RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT) */
    bool carry_overdraft; /**< subtract the overdraft from the next budget (default RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT) */
} rts_budget_mit_cfg;

/** State of a Budget Mitigation. */
typedef struct rts_budget_mit {
    rts_budget_mit_cfg cfg;
    int64_t budget_ns;     /**< remaining budget; <= 0 while suspended */
    int64_t debt_ns;       /**< overdraft waiting to be subtracted (carry_overdraft only) */
    bool suspended;        /**< networking suspended until a positive report */
    uint64_t reports;      /**< cycle-end reports */
    uint64_t suspensions;  /**< transitions to suspended */
    uint64_t resumptions;  /**< transitions back to running */
    uint64_t charged_ns;   /**< total work charged (driver, plus ISR if configured) */
    uint64_t overdraft_ns; /**< total work charged beyond the budget */
} rts_budget_mit;

/** Fill `cfg` with the defaults: initial budget 0, and the rts_opts.h
 *  defaults for charge_isr and carry_overdraft. Context: any. Cost: O(1). */
void rts_budget_mit_cfg_default(rts_budget_mit_cfg *cfg);

/**
 * Initialise with cfg->initial_budget_ns; suspended if it is <= 0.
 * Context: task, before networking starts. The caller should start with the
 * line disabled and the driver waiting when rts_budget_mit_driver_poll() says so.
 * @retval RTS_OK
 * @retval RTS_EINVAL NULL argument
 */
rts_err rts_budget_mit_init(rts_budget_mit *m, const rts_budget_mit_cfg *cfg);

/**
 * Critical task's cycle end: `earliness_ns` (target minus finish, negative
 * when late) becomes the new budget (minus the carried overdraft if
 * configured). Context: task (the critical task). Cost: O(1).
 * @return RTS_ACT_RESUME_DRIVER | RTS_ACT_ENABLE_LINE when suspended and the
 *         new budget is positive; RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE
 *         when running and the new budget is <= 0; RTS_ACT_NONE otherwise.
 */
rts_action rts_budget_mit_on_cycle_end(rts_budget_mit *m, rts_time_ns now, int64_t earliness_ns);

/**
 * Driver loop, before taking the next packet. Context: driver task. O(1).
 * @return run = true when not suspended; run = false, sleep_ns = 0 (wait for
 *         RTS_ACT_RESUME_DRIVER from a cycle-end report) when suspended.
 *         act is always NONE (the transitions are returned by the other hooks).
 */
rts_driver_poll rts_budget_mit_driver_poll(const rts_budget_mit *m, rts_time_ns now);

/**
 * Driver loop, after each packet: charge its measured work `work_ns`.
 * `queue_fill` is unused (uniform hook signature). Context: driver task. O(1).
 * @return RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE when this charge
 *         depleted the budget (<= 0); RTS_ACT_NONE otherwise (also when
 *         already suspended: the extra work counts as overdraft).
 */
rts_action rts_budget_mit_on_packet_done(rts_budget_mit *m, rts_time_ns now, rts_time_ns work_ns,
                                         uint32_t queue_fill);

/**
 * RX ISR epilogue: charge the ISR's measured work when cfg.charge_isr is set;
 * no effect otherwise. Context: ISR. O(1).
 * @return as rts_budget_mit_on_packet_done().
 */
rts_action rts_budget_mit_on_isr_work_isr(rts_budget_mit *m, rts_time_ns now, rts_time_ns work_ns);

#endif /* RTSHIELD_RTS_BUDGET_MIT_H */
