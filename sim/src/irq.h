/* The simulated interrupt controller (irq.c): libshield's port on this
 * device, and an interrupt's entry and exit. Private to the simulator. */
#ifndef RTSIM_IRQ_H
#define RTSIM_IRQ_H

#include "sim.h"

/* Set up the controller and its port, and hand the shield its lines (before hook_init()). */
void irq_setup(rtsim *s);
/* After hook_init(): the timer lines' dispatch order, pure polling's timer. */
void irq_start(rtsim *s);

/* Core c takes the lowest pending enabled line of `ready` (not zero): the
 * running task is preempted, the handler's cost charged up to c->isr_end. */
void start_isr(rtsim *s, sim_core *c, uint32_t ready, uint64_t now);
/* Core c takes a pending enabled interrupt, if any: true when it did. */
static inline bool irq_take(rtsim *s, sim_core *c, uint64_t now)
{
    const uint32_t ready = c->pending & c->enabled;
    if (!ready) return false;
    start_isr(s, c, ready, now);
    return true;
}
/* The ISR running on core c reaches c->isr_end. Returns the line whose
 * handler ended (the scheduler's turn after LINE_TICK), or SIM_NO_ISR when
 * the handler goes on (the receive path's next frame). */
int isr_done(rtsim *s, sim_core *c, uint64_t now);
/* EV_TIMER: see irq.c. False when the timer was cancelled. */
bool irq_timer(rtsim *s, uint32_t timer, uint32_t gen, uint64_t now);

/* A masks_rx task's job starts running (it masks the RX lines: the
 * application's enable bit) or ends (it unmasks them). */
void mask_begin(rtsim *s, sim_task *t);
void mask_end(rtsim *s, sim_task *t);

#endif
