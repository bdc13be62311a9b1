/**
 * @file rts_rx_driver.h
 * @brief The receive driver split into an eager half (ISR) and a deferred
 *        half (network task) over the flow table, flow queues, priority
 *        inheritance and global limiter (Behnke et al. §5.3.2, Figures 7, 8).
 *
 * Eager half, per harvested descriptor (rts_rx_driver_eager_isr()):
 *   global limit → take the buffer from the ring → invalidate the header
 *   cache lines (port hook) → classify → (a) short circuit when the ring is
 *   low and the packet is of the lowest queued priority → (b) reject when
 *   the flow's server is exhausted → enqueue → raise the task priority when
 *   needed → (c) when the ring is low, recycle the lowest-priority queued
 *   buffer.
 * The unified design of §9 (rts_rx_driver_eager_desc_isr()) takes the flow and
 * priority from a NIC descriptor and skips classification and the header
 * invalidation.
 *
 * Deferred half, in the network task at its inherited priority:
 *   rts_rx_driver_task_next() → rts_rx_driver_task_invalidate() (rest of the frame) →
 *   rts_rx_driver_task_refill() (a spare buffer for the ring) → protocol processing
 *   → rts_rx_driver_task_complete() (lower the priority when possible) →
 *   rts_rx_driver_buf_free() when the stack no longer holds the buffer.
 *
 * Buffers handed back in `repost` must be re-posted to the RX ring by the
 * port; only their header lines were read, so only those need invalidating.
 *
 * Concurrency: the state is not lock-free. The task-side calls (task_*,
 * buf_free, poll_*, flow registration) must run with the RX interrupt masked
 * (taskENTER_CRITICAL(), irq_lock()); each is O(1) (registration
 * O(RTS_FLOW_MAX)), so the masked section is short. Protocol processing and
 * rts_rx_driver_task_invalidate() run unmasked.
 */
#ifndef RTSHIELD_RTS_RX_DRIVER_H
#define RTSHIELD_RTS_RX_DRIVER_H

#include "rtshield/rts_classifier.h"
#include "rtshield/rts_flow_queue.h"
#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_global_limit.h"
#include "rtshield/rts_port.h"
#include "rtshield/rts_prio_inherit.h"

/** What the eager half did with a packet. */
typedef enum rts_rx_outcome {
    RTS_RX_QUEUED = 0,        /**< in its flow queue */
    RTS_RX_SHORT_CIRCUIT = 1, /**< path (a): ring low, lowest priority: recycled at once */
    RTS_RX_FLOW_LIMIT = 2,    /**< path (b): the flow's server is exhausted */
    RTS_RX_QUEUE_FULL = 3,    /**< the flow's queue is at its limit */
    RTS_RX_GLOBAL_LIMIT = 4,  /**< over the global capacity: left in the ring, stop harvesting */
    RTS_RX_OUTCOMES = 5
} rts_rx_outcome;

/** Result of one eager call. */
typedef struct rts_rx_result {
    uint8_t outcome;   /**< rts_rx_outcome */
    uint8_t flow;      /**< the packet's flow (RTS_FLOW_NONE for GLOBAL_LIMIT) */
    uint8_t prio;      /**< its priority */
    uint8_t recycled_flow; /**< flow of the buffer recycled by path (c), else RTS_FLOW_NONE */
    uint16_t repost;   /**< buffer to re-post to the ring, or RTS_BUF_NONE */
    uint16_t pad;
    uint32_t flags;    /**< rts_act_flag: RESCHEDULE when the task priority rose
                            (set it to task_prio and yield on ISR exit);
                            DISABLE_LINE | ARM_TIMER when the global limit
                            switched to polling */
    uint32_t task_prio; /**< the network task's priority after the call */
    rts_time_ns timer_at; /**< polling timer expiry when ARM_TIMER is set */
} rts_rx_result;

/** A packet handed to the network task. */
typedef struct rts_rx_job {
    uint16_t buf;  /**< buffer id */
    uint8_t flow;  /**< flow id */
    uint8_t prio;  /**< priority it was queued at (pass to rts_rx_driver_task_complete()) */
} rts_rx_job;

/** The whole receive path state, in caller storage. Configure flows through
 *  `flows` (rts_flow_table_bind(), rts_flow_table_setopt()). */
typedef struct rts_rx_driver {
    rts_flow_table flows;
    rts_flow_queue fq;
    rts_prio_inherit pi;
    rts_global_limit glim;
    const rts_port *port;          /**< cache hooks; may be NULL */
    uint8_t short_circuit;         /**< 1 (rts_rx_driver_init()): path (a) on; 0: a lowest-priority
                                        arrival at a low ring is queued and the oldest buffer of
                                        the lowest level recycled, never the arrival itself
                                        (Behnke Fig. 9, footnote 1) */
    uint8_t pad[3];
    uint32_t outcomes[RTS_RX_OUTCOMES]; /**< packets per rts_rx_outcome */
    uint32_t recycled;             /**< buffers recycled by path (c) */
    uint32_t harvested;            /**< eager calls that took a buffer */
} rts_rx_driver;

/**
 * Initialise the receive path: the special flows, `nbufs` buffers of which
 * the first `ring_size` are in the ring (the port posts buffers
 * 0..ring_size-1), a recycle threshold of ring_size ·
 * RTS_RX_RECYCLE_THRESHOLD_256 / 256, the network task at `task_base_prio`,
 * and the global limiter (capacity 0 = none).
 * Context: task, before the RX interrupt is enabled. Cost: O(nbufs + RTS_FLOW_MAX).
 * @retval RTS_OK  @retval RTS_EINVAL bad sizes (see rts_flow_queue_init()) or global limiter period
 */
rts_err rts_rx_driver_init(rts_rx_driver *rx, const rts_port *port, unsigned nbufs, unsigned ring_size,
                    unsigned task_base_prio, uint32_t global_capacity, rts_time_ns global_period,
                    rts_time_ns now);

/**
 * Eager half for one filled descriptor holding buffer `buf` with the frame
 * `frame[0..len)`.
 * Context: ISR (or the polling task). Cost: bounded: one header cache hook,
 * the classifier with its O(1) flow lookup (one hash, a slot or two),
 * O(1) queue and inheritance work; no loop over the flows.
 * @param[out] res what happened and what the port must do
 * @retval RTS_OK see res->outcome
 * @retval RTS_EINVAL buf is not a ring buffer (nothing changed)
 */
rts_err rts_rx_driver_eager_isr(rts_rx_driver *rx, unsigned buf, const uint8_t *frame, size_t len, rts_time_ns now,
                         rts_rx_result *res);

/**
 * Eager half for a descriptor that already carries the flow id and priority
 * (the unified NIC of Behnke §9): no classification, no header invalidation.
 * A flow id out of range is treated as RTS_FLOW_DEFAULT; the priority is
 * clamped to the top level.
 * Context: ISR (or the polling task). Cost: O(1).
 * @retval RTS_OK see res->outcome  @retval RTS_EINVAL buf is not a ring buffer
 */
rts_err rts_rx_driver_eager_desc_isr(rts_rx_driver *rx, unsigned buf, unsigned flow, unsigned prio, rts_time_ns now,
                              rts_rx_result *res);

/**
 * Deferred half: take the highest-priority waiting packet. When nothing is
 * waiting, the inherited priority is recomputed (it may drop to the base).
 * Context: network task. Cost: O(1).
 * @param[out] job the packet
 * @param[out] change what happened to the task priority (may be NULL)
 * @retval RTS_OK job filled  @retval RTS_EEMPTY nothing waiting
 */
rts_err rts_rx_driver_task_next(rts_rx_driver *rx, rts_rx_job *job, rts_prio_inherit_change *change);

/** Deferred half: invalidate the rest of the frame (beyond the header lines
 *  the eager half invalidated) through the port's cache hook.
 *  Context: network task. Cost: one hook call. */
void rts_rx_driver_task_invalidate(const rts_rx_driver *rx, const uint8_t *frame, size_t len);

/**
 * Deferred half: a spare buffer to post to the ring in place of the one
 * taken (the port invalidates it and writes its descriptor).
 * Context: network task. Cost: O(1).
 * @retval RTS_OK *buf to post  @retval RTS_EFULL ring full  @retval RTS_EEMPTY no spare buffer
 */
rts_err rts_rx_driver_task_refill(rts_rx_driver *rx, uint16_t *buf);

/**
 * Deferred half: processing of a packet of priority `prio` has finished.
 * Context: network task. Cost: O(1).
 * @return RTS_PRIO_INHERIT_LOWERED when the port must lower the task priority to
 *         rts_prio_inherit_current(&rx->pi)
 */
rts_prio_inherit_change rts_rx_driver_task_complete(rts_rx_driver *rx, unsigned prio);

/** The stack no longer holds `buf` (delivered and consumed, or dropped):
 *  back to the spare pool. Context: task. Cost: O(1).
 *  @retval RTS_EINVAL buf was not handed out by rts_rx_driver_task_next() */
rts_err rts_rx_driver_buf_free(rts_rx_driver *rx, unsigned buf);

/** Polling task woke at a period start: packets it may harvest (pass each to
 *  rts_rx_driver_eager_isr()). Context: polling task. */
uint32_t rts_rx_driver_poll_begin(rts_rx_driver *rx, rts_time_ns now);

/** Polling task done harvesting: RTS_ACT_ENABLE_LINE back to interrupts, or
 *  RTS_ACT_ARM_TIMER for the next poll. Context: polling task. */
rts_action rts_rx_driver_poll_end(rts_rx_driver *rx, rts_time_ns now);

#endif /* RTSHIELD_RTS_RX_DRIVER_H */
