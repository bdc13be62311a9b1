/* The CPU scheduler and the tasks' jobs (sched.c). Private to the
 * simulator. */
#ifndef RTSIM_SCHED_H
#define RTSIM_SCHED_H

#include "sim.h"

/* Give core c to whatever should run now: a pending enabled interrupt,
 * else the highest-priority ready task (round robin among equals). */
void kick(rtsim *s, sim_core *c, uint64_t now);
/* When the activity running on core c ends (SIM_INF: never, or idle). The
 * event loop asks for every core at every event: inline. */
static inline uint64_t core_done(const rtsim *s, const sim_core *c)
{
    if (c->isr_line != SIM_NO_ISR) return c->isr_end;
    if (c->cur < 0) return SIM_INF;
    const sim_task *t = &s->task[c->cur];
    return t->remaining == SIM_INF ? SIM_INF : c->seg_start + t->remaining;
}
/* The running task's job on core c ends at `now`. */
void task_done(rtsim *s, sim_core *c, uint64_t now);
/* EV_POLL: the network task sleeping in its loop (a mitigation suspended
 * it with a sleep time) wakes for one iteration. */
void driver_sleep_end(rtsim *s, sim_task *t, uint64_t now);
/* The tick interrupt's handler on core c ended: with time slicing, a
 * ready task of the running one's priority gets the core at the next pass. */
void tick_isr_done(rtsim *s, sim_core *c);
/* What the network driver does itself when the shield decides so: the
 * operations the hooks are handed (hooks.h), with the simulator as ctx. */
extern const sim_driver_ops driver_ops;

#endif
