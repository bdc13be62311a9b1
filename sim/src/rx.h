/* The RX interrupt handler and the polling task's harvest (rx.c). Private
 * to the simulator. */
#ifndef RTSIM_RX_H
#define RTSIM_RX_H

#include "sim.h"

/* The RX ISR of source `src` starts on core c: returns its cost beyond
 * entry and exit (with the receive path, its prologue's). */
int64_t rx_isr_begin(rtsim *s, sim_core *c, uint32_t src, bool polled);
/* Receive path: the RX ISR's next step on core c. True when it goes on
 * (one more frame, c->isr_end moved), false when the ISR ends. */
bool rx_isr_step(rtsim *s, sim_core *c, uint64_t now);
/* The RX ISR on core c ends. */
void rx_isr_end(rtsim *s, sim_core *c, uint64_t now);
/* A received frame into the driver queue (queue_full when it is full), the
 * driver woken. */
void rx_to_queue(rtsim *s, sim_pkt p, uint64_t now);
/* The polling task's harvest at a period start: returns its CPU time. */
uint64_t rx_poll_harvest(rtsim *s, uint64_t now);

#endif
