/* The driver's hooks into libshield. Each is one call into libshield's
 * entry point (rtshield/rts_shield.h) at the place a real driver calls it,
 * followed by performing the returned decision through the simulated port.
 * No protection logic lives here: the simulator models the device.
 * Private to the simulator. */
#ifndef RTSIM_HOOKS_H
#define RTSIM_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "rtshield/rts_shield.h"
#include "rtsim/rtsim.h"

struct rtsim;

/* NULL when the protection part of `cfg` is valid, else a message naming the key. */
const char *hook_config_error(const rtsim_config *cfg);
/* True when scenario flow `f` binds a socket (a TCP or UDP flow with one). */
bool hook_binds(const rtsim_flow_cfg *f);
/* Bind every receiving socket in the shield (receive path). */
bool hook_bind_flows(struct rtsim *s);
/* Build the shield from the configuration and initialise it at `now`. */
bool hook_init(struct rtsim *s, uint64_t now);
/* Perform a decision: port operations, then what the driver does itself
 * (suspend/resume the network task, its priority, the polling task). */
uint32_t hook_perform_all(struct rtsim *s, uint64_t now, const rts_shield_dec *d);
static inline uint32_t hook_perform(struct rtsim *s, uint64_t now, const rts_shield_dec *d)
{
    /* Nothing for the port or the tasks (a drop is the caller's): the common case. */
    if (d->n_ops == 0u && (d->flags & ~(uint32_t)RTS_SHIELD_F_DROP) == 0u) return d->flags;
    return hook_perform_all(s, now, d);
}
/* RX ISR prologue of `source` (`isr_entry`: when the handler started).
 * False when the interrupt is not admitted. */
bool hook_rx_irq(struct rtsim *s, uint64_t now, uint64_t isr_entry, uint32_t source);
/* Countdown filter in front of the interrupt controller. */
bool hook_is_filter(const struct rtsim *s);
/* 0 lost, 1 deliver this arrival, 2 deliver the latched one (this one
 * latched), 3 latched; *zero_at: when to call hook_filter_zero (SIM_INF none). */
int hook_filter_arrival(struct rtsim *s, uint64_t now, uint64_t *zero_at);
bool hook_filter_zero(struct rtsim *s, uint64_t now);
/* RX ISR, per packet, driver queue (receive path off). False: drop it. */
bool hook_rx_packet(struct rtsim *s, uint64_t now, uint64_t isr_entry);
/* RX ISR: a frame entered the driver queue, now `fill` deep (detection). */
void hook_fill(struct rtsim *s, uint64_t now, uint32_t fill);
/* RX ISR: the driver queue was full. */
void hook_queue_full(struct rtsim *s, uint64_t now);
/* Network task before taking a packet. False: *sleep_ns (0: wait for a resume). */
bool hook_task_poll(struct rtsim *s, uint64_t now, uint64_t *sleep_ns);
/* Network task finished a packet (receive path off). */
void hook_task_done(struct rtsim *s, uint64_t now, uint64_t work_ns, uint32_t fill);
/* Critical task ended a cycle started at `start` with deadline `target`. */
void hook_cycle_end(struct rtsim *s, uint64_t now, uint64_t start, uint64_t target);
/* RX ISR exit after `isr_ns` of CPU time (Budget Mitigation charging the ISR). */
void hook_rx_isr_done(struct rtsim *s, uint64_t now, uint64_t isr_ns);
/* True when shield timer `timer`'s handler re-enables its line at the expiry
 * itself (the strict limiter: the line is off for exactly one interarrival
 * time, Regehr & Duongsaa §5.2; docs/decisions/regehr.md). The engine then
 * calls hook_timer() at the expiry and charges the handler afterwards,
 * after any RX interrupt the re-enable let in. */
bool hook_timer_at_expiry(const struct rtsim *s, unsigned timer);
/* Shield timer `timer` interrupt handler. */
void hook_timer(struct rtsim *s, uint64_t now, unsigned timer);
/* RTS_SHIELD_HOOK_* of the configured protections (which hook costs to charge). */
#define hook_mask(s) ((s)->hooks)

#endif
