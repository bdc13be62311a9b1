/**
 * @file rts_prio_inherit.h
 * @brief Priority inheritance of the network task (Behnke et al. §5.4).
 *
 * The network task runs at P = max(P(f) : a packet of f is waiting (W) or in
 * process (E)), and at its own base priority when there is none. The
 * priority is raised on enqueue only when the packet's flow is above the
 * current priority, and lowered on completion only when nothing waiting or
 * in process needs the current one. Each call reports the change so the port
 * sets the RTOS task priority (vTaskPrioritySet, k_thread_priority_set) only
 * then.
 *
 * The waiting set lives in the flow queues: callers pass
 * rts_flow_queue_highest_prio() (-1 when empty). The in-process set is counted here,
 * per priority level, with a bitmap for the O(1) maximum.
 *
 * Priorities: 0 lowest, RTS_FLOW_PRIO_LEVELS-1 highest.
 */
#ifndef RTSHIELD_RTS_PRIO_INHERIT_H
#define RTSHIELD_RTS_PRIO_INHERIT_H

#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** What a call did to the network task's priority. */
typedef enum rts_prio_inherit_change {
    RTS_PRIO_INHERIT_UNCHANGED = 0,
    RTS_PRIO_INHERIT_RAISED = 1,  /**< set the task priority to rts_prio_inherit_current() (and yield on ISR exit) */
    RTS_PRIO_INHERIT_LOWERED = 2  /**< set the task priority to rts_prio_inherit_current() */
} rts_prio_inherit_change;

/** Inheritance state of one network task. */
typedef struct rts_prio_inherit {
    uint8_t base;     /**< the task's own priority */
    uint8_t current;  /**< the priority it runs at now */
    uint16_t pad;
    uint32_t inproc_mask;                  /**< levels with packets in process */
    uint16_t inproc[RTS_FLOW_PRIO_LEVELS]; /**< packets in process per level */
    uint32_t raises;  /**< RAISED results so far */
    uint32_t lowers;  /**< LOWERED results so far */
} rts_prio_inherit;

/** Initialise with the task's base priority (clamped to the top level).
 *  Context: task. Cost: O(RTS_FLOW_PRIO_LEVELS). */
void rts_prio_inherit_init(rts_prio_inherit *pi, unsigned base);

/** A packet of priority `prio` was queued (W grows). Raises iff prio > current.
 *  Context: ISR. Cost: O(1), no loop.
 *  @return RTS_PRIO_INHERIT_RAISED (set the task priority, yield on ISR exit) or
 *          RTS_PRIO_INHERIT_UNCHANGED (also for prio out of range) */
rts_prio_inherit_change rts_prio_inherit_on_enqueue_isr(rts_prio_inherit *pi, unsigned prio);

/** The task took a packet of priority `prio` from the queues (W → E). The
 *  maximum is unchanged, so no change is reported. Context: task. Cost: O(1).
 *  @retval RTS_EINVAL prio out of range  @retval RTS_EFULL counter saturated */
rts_err rts_prio_inherit_on_start(rts_prio_inherit *pi, unsigned prio);

/**
 * The task finished a packet of priority `prio` (E shrinks). Recomputes the
 * maximum from `highest_waiting` (rts_flow_queue_highest_prio(), -1 when none) and
 * the packets still in process; lowers only when that maximum is below the
 * current priority. (It raises only if a caller skipped an enqueue report.)
 * Context: task. Cost: O(1).
 * @return RTS_PRIO_INHERIT_LOWERED, RTS_PRIO_INHERIT_RAISED or RTS_PRIO_INHERIT_UNCHANGED
 */
rts_prio_inherit_change rts_prio_inherit_on_complete(rts_prio_inherit *pi, unsigned prio, int highest_waiting);

/** Recompute without a completion (after buffers were recycled, or when the
 *  task finds the queues empty). Context: any. Cost: O(1).
 *  @return RTS_PRIO_INHERIT_LOWERED, RTS_PRIO_INHERIT_RAISED or RTS_PRIO_INHERIT_UNCHANGED */
rts_prio_inherit_change rts_prio_inherit_recompute(rts_prio_inherit *pi, int highest_waiting);

/** The priority the network task must run at. Context: any. Cost: O(1). */
unsigned rts_prio_inherit_current(const rts_prio_inherit *pi);

#endif /* RTSHIELD_RTS_PRIO_INHERIT_H */
