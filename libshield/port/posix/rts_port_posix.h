/**
 * @file rts_port_posix.h
 * @brief The POSIX port: an in-memory interrupt controller and timer bank.
 *
 * Used by the unit tests and the simulator. It records what libshield asked
 * for (enable bits, pending bits, armed timers) so a test can assert on it;
 * a host program drives time and fires the recorded timers itself.
 */
#ifndef RTSHIELD_RTS_PORT_POSIX_H
#define RTSHIELD_RTS_PORT_POSIX_H

#include "rtshield/rts_port.h"

#define RTS_POSIX_MAX_LINES 32
#define RTS_POSIX_MAX_TIMERS 16

typedef struct rts_posix_port {
    bool enabled[RTS_POSIX_MAX_LINES];
    bool pending[RTS_POSIX_MAX_LINES];
    bool timer_armed[RTS_POSIX_MAX_TIMERS];
    rts_time_ns timer_at[RTS_POSIX_MAX_TIMERS];
    uint32_t enable_writes;   /**< hardware enable-bit writes seen */
    uint32_t pending_clears;  /**< pending-bit clears seen */
    uint32_t cache_invalidated_bytes;
} rts_posix_port;

/** Fill `port` with hooks that act on `state` (zeroed by this call). */
void rts_posix_port_init(rts_port *port, rts_posix_port *state);

#endif
