/* A host for the limiters' through-the-port tests: the POSIX port's in-memory
 * interrupt controller and timers, and the irq gate, with one RX line enabled
 * by the application as a driver would (gate first, then the hardware bit). */
#ifndef RTS_TEST_HOST_H
#define RTS_TEST_HOST_H

#include "rts_port_posix.h"
#include "rtshield/rts_irq_gate.h"

typedef struct {
    rts_port port;
    rts_posix_port hw;
    rts_irq_gate gate;
} rts_test_host;

static inline void rts_test_host_init(rts_test_host *h, unsigned line)
{
    rts_posix_port_init(&h->port, &h->hw);
    rts_irq_gate_init(&h->gate);
    if (rts_irq_gate_app_set(&h->gate, line, true) == RTS_GATE_ENABLED) {
        h->port.irq_set_enabled(h->port.ctx, line, true);
    }
}

/* Perform the action `a` on the host's line and timer `tgt`, through the gate. */
static inline uint32_t rts_test_host_apply(rts_test_host *h, rts_port_target tgt, rts_action a)
{
    return rts_port_apply(&h->port, &h->gate, tgt, a);
}

#endif
