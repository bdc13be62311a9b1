/**
 * @file rts_mitigation.h
 * @brief The hook points shared by the four Danicki et al. mitigations.
 *
 * Danicki et al., "Detecting and Mitigating Network Packet Overloads on
 * Real-Time Devices in IoT Systems", §2.2, describe four mitigations that act
 * at different places of a receive path built from an RX interrupt, a packet
 * queue, a network driver task and a periodic critical task. Every mitigation
 * exposes the same hook names with the same arguments; each implements only
 * the hooks it needs (the table lists them). A caller that supports all four
 * calls, at each point, the hook of the mitigation that is configured.
 *
 * | hook point (context)                         | call                                   | used by |
 * |----------------------------------------------|----------------------------------------|---------|
 * | RX ISR prologue, with the tick time (ISR)    | `rts_<m>_on_rx_isr(m, now)`            | burst |
 * | RX ISR enqueue failed, queue full (ISR)      | `rts_<m>_on_enqueue_fail_isr(m, now)`  | queue |
 * | RX ISR epilogue, measured ISR work (ISR)     | `rts_<m>_on_isr_work_isr(m, now, work)`| budget (only when configured to charge ISR time) |
 * | driver loop, before taking a packet (task)   | `rts_<m>_driver_poll(m, now)`          | hysteresis, budget |
 * | driver loop, after each packet (task)        | `rts_<m>_on_packet_done(m, now, work, fill)` | budget, queue |
 * | critical task, end of each cycle (task)      | `rts_<m>_on_cycle_end(m, now, earliness)`    | hysteresis, budget |
 * | the mitigation's timer expired (ISR)         | `rts_<m>_on_timer_isr(m, now)`         | burst |
 *
 * Every hook except driver_poll returns an rts_action, which the caller
 * performs (e.g. with rts_port_apply()). driver_poll returns an
 * rts_driver_poll: whether the driver may take the next packet, and if not,
 * how long to sleep before polling again.
 */
#ifndef RTSHIELD_RTS_MITIGATION_H
#define RTSHIELD_RTS_MITIGATION_H

#include "rtshield/rts_types.h"

/** What the network driver task does next (result of `rts_<m>_driver_poll`). */
typedef struct rts_driver_poll {
    /** Actions to perform before anything else (e.g. DISABLE_LINE on the
     *  poll that blocks, ENABLE_LINE on the poll that unblocks). */
    rts_action act;
    /** true: take and process the next packet. false: do not touch the queue. */
    bool run;
    /** When run is false: sleep this long, then poll again (a sleep loop, as
     *  in Danicki §2.2 Hysteresis). 0 with run false means "block until the
     *  mitigation signals RTS_ACT_RESUME_DRIVER" (Budget). 0 when run is true. */
    rts_time_ns sleep_ns;
} rts_driver_poll;

#endif /* RTSHIELD_RTS_MITIGATION_H */
