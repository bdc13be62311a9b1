/**
 * @file rts_queue_mit.h
 * @brief Queue Mitigation (Danicki et al. §2.2): a full RX queue turns the RX interrupt off.
 *
 * When the RX ISR fails to enqueue a packet because the queue is full, the
 * packet is dropped and the RX line is disabled. The driver re-enables the
 * line once it has processed every queued packet: it reports the queue's
 * fill level after each packet (rts_queue_mit_on_packet_done()) or calls
 * rts_queue_mit_on_drained() when it finds the queue empty. The line is
 * re-enabled exactly once per disable.
 *
 * Hooks (see rts_mitigation.h): on_enqueue_fail_isr in the ISR, on_packet_done
 * in the driver loop. Cost of each: O(1).
 */
#ifndef RTSHIELD_RTS_QUEUE_MIT_H
#define RTSHIELD_RTS_QUEUE_MIT_H

#include "rtshield/rts_mitigation.h"
#include "rtshield/rts_types.h"

/** State of a Queue Mitigation. */
typedef struct rts_queue_mit {
    bool line_off;      /**< this mitigation holds the RX line disabled */
    uint64_t drops;     /**< packets dropped on enqueue failure */
    uint64_t disables;  /**< times the line was disabled */
    uint64_t enables;   /**< times the line was re-enabled */
} rts_queue_mit;

/** Initialise: line not held. Context: task.
 *  @retval RTS_OK @retval RTS_EINVAL `m` NULL */
rts_err rts_queue_mit_init(rts_queue_mit *m);

/**
 * RX ISR: the enqueue of the current packet failed (queue full).
 * Context: ISR. O(1).
 * @return RTS_ACT_DROP | RTS_ACT_DISABLE_LINE on the first failure;
 *         RTS_ACT_DROP on further failures while the line is held off
 *         (arrivals latched before the disable took effect).
 */
rts_action rts_queue_mit_on_enqueue_fail_isr(rts_queue_mit *m, rts_time_ns now);

/**
 * Driver loop, after each packet: `queue_fill` is the number of packets still
 * queued. `work_ns` is unused (uniform hook signature). Context: driver task. O(1).
 * @return RTS_ACT_ENABLE_LINE when the line is held off and queue_fill is 0
 *         (once per disable); RTS_ACT_NONE otherwise.
 */
rts_action rts_queue_mit_on_packet_done(rts_queue_mit *m, rts_time_ns now, rts_time_ns work_ns,
                                        uint32_t queue_fill);

/**
 * Driver found the queue empty: same as on_packet_done with fill 0.
 * Context: driver task. O(1).
 * @return RTS_ACT_ENABLE_LINE once per disable; RTS_ACT_NONE otherwise.
 */
rts_action rts_queue_mit_on_drained(rts_queue_mit *m, rts_time_ns now);

#endif /* RTSHIELD_RTS_QUEUE_MIT_H */
