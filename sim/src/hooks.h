/* The driver's hooks into libshield: the receive path's and the
 * protections' glue to rts_shield. Each hook is one call into libshield's
 * entry point (rtshield/rts_shield.h) at the place a real driver calls it,
 * followed by performing the returned decision: port operations through the
 * port the engine handed over (the simulated interrupt controller, irq.c),
 * then what the driver does itself through the driver operations the engine
 * handed over (suspend or resume the network task, its priority, the
 * polling task). No protection logic lives here, and nothing here reads
 * the engine's state: the hooks see this struct only (sim.h embeds it).
 * Private to the simulator. */
#ifndef RTSIM_HOOKS_H
#define RTSIM_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include "rtshield/rts_shield.h"
#include "rtsim/rtsim.h"

/* What the driver does itself when a decision says so (RTS_SHIELD_F_*):
 * the scheduler's operations on its tasks (sched.c), called with `ctx`. */
typedef struct sim_driver_ops {
    void (*suspend)(void *ctx, uint64_t now);                 /* F_SUSPEND: stop the network task */
    void (*resume)(void *ctx, uint64_t now);                  /* F_RESUME */
    void (*set_prio)(void *ctx, uint64_t now, unsigned prio); /* F_PRIO: priority inheritance */
    void (*poll_wake)(void *ctx, uint64_t now);               /* F_POLL: the polling task's period */
} sim_driver_ops;

typedef struct sim_hooks {
    /* Set by the engine before hook_init(): */
    const rts_port *port;       /* the simulated interrupt controller */
    rts_irq_gate *gate;         /* the two enable bits' gate; NULL: one enable bit (Regehr §4) */
    rts_shield_map smap;        /* the shield's lines and timers on this device */
    const sim_driver_ops *ops;  /* the driver's own operations */
    void *ctx;                  /* their argument */
    /* Set by hook_init(): */
    rts_shield shield;             /* every protection: libshield's one entry point */
    uint32_t mask;                 /* rts_shield_hooks(): the hook costs to charge, the calls to make */
    uint64_t tick_ns;              /* the OS tick the RX ISR reads (1: no tick) */
    int sflow_owner[RTS_FLOW_MAX]; /* scenario flow that bound each libshield flow, or -1 */
} sim_hooks;

/* ---- configuration and set-up */

/* NULL when the protection part of `cfg` is valid, else a message naming the key. */
const char *hook_config_error(const rtsim_config *cfg);
/* True when scenario flow `f` binds a socket (a TCP or UDP flow with one). */
bool hook_binds(const rtsim_flow_cfg *f);
/* Build the shield of `cfg` and initialise it at `now` (port, gate, smap,
 * ops and ctx already set). False when libshield refuses it. */
bool hook_init(sim_hooks *h, const rtsim_config *cfg, uint64_t now);
/* Bind every receiving socket of `cfg` in the shield (receive path). */
bool hook_bind_flows(sim_hooks *h, const rtsim_config *cfg);

/* RTS_SHIELD_HOOK_* and RTS_SHIELD_CALL_* of the configured protections:
 * which hook costs to charge, which hooks to call. */
static inline uint32_t hook_mask(const sim_hooks *h)
{
    return h->mask;
}

/* ---- performing a decision */

uint32_t hook_perform_all(sim_hooks *h, uint64_t now, const rts_shield_dec *d);
/* Perform a decision: port operations, then the driver's own operations.
 * Returns its flags. */
static inline uint32_t hook_perform(sim_hooks *h, uint64_t now, const rts_shield_dec *d)
{
    /* Nothing for the port or the tasks (a drop is the caller's): the common case. */
    if (d->n_ops == 0u && (d->flags & ~(uint32_t)RTS_SHIELD_F_DROP) == 0u) return d->flags;
    return hook_perform_all(h, now, d);
}

/* ---- the hooks, where a driver calls them. The caller records what the
 * detectors found afterwards (measure.h, detect_seen()). */

/* RX ISR prologue of `source` (`isr_entry`: when the handler started).
 * False when the interrupt is not admitted. */
bool hook_rx_irq(sim_hooks *h, uint64_t now, uint64_t isr_entry, uint32_t source);
/* Countdown filter in front of the interrupt controller. */
static inline bool hook_is_filter(const sim_hooks *h)
{
    return (h->shield.cfg.protections & RTS_SHIELD_COUNTDOWN) != 0u;
}
/* 0 lost, 1 deliver this arrival, 2 deliver the latched one (this one
 * latched), 3 latched; *zero_at: when to call hook_filter_zero (UINT64_MAX: none). */
int hook_filter_arrival(sim_hooks *h, uint64_t now, uint64_t *zero_at);
bool hook_filter_zero(sim_hooks *h, uint64_t now);
/* An arrival is latched behind the countdown filter (it is in the device). */
static inline bool hook_filter_latched(const sim_hooks *h)
{
    return hook_is_filter(h) && h->shield.countdown.latched;
}
/* RX ISR, per packet, driver queue (receive path off). False: drop it. */
bool hook_rx_packet(sim_hooks *h, uint64_t now, uint64_t isr_entry);
/* RX ISR: a frame entered the driver queue, now `fill` deep (detection). */
void hook_fill(sim_hooks *h, uint32_t fill);
/* RX ISR: the driver queue was full. */
void hook_queue_full(sim_hooks *h, uint64_t now);
/* RX ISR or polling task, receive path: buffer `buf` holds a filled
 * descriptor's frame[0..len); libshield classifies it, queues or drops it,
 * and the decision is performed. *flags: its RTS_SHIELD_F_*, *drop: its
 * rts_shield_drop, *rx: the receive path's outcome. False when libshield
 * refused the buffer (a simulator bug). */
bool hook_rx_frame(sim_hooks *h, uint64_t now, uint64_t isr_entry, unsigned buf,
                   const uint8_t *frame, uint32_t len, rts_shield_rx *rx, uint32_t *flags,
                   unsigned *drop);
/* Network task before taking a packet. False: *sleep_ns (0: wait for a resume). */
bool hook_task_poll(sim_hooks *h, uint64_t now, uint64_t *sleep_ns);
/* Network task takes the highest-priority waiting frame (receive path).
 * False: none waits. */
bool hook_task_next(sim_hooks *h, uint64_t now, rts_rx_job *job);
/* Network task finished a packet (receive path off). */
void hook_task_done(sim_hooks *h, uint64_t now, uint64_t work_ns, uint32_t fill);
/* Network task finished frame `job` after `work_ns` (receive path): its
 * buffer is freed, *refill is a spare buffer to post (RTS_BUF_NONE: none).
 * False when libshield refused the buffer handed back (a simulator bug). */
bool hook_rx_task_done(sim_hooks *h, uint64_t now, const rts_rx_job *job, uint64_t work_ns,
                       uint16_t *refill);
/* Polling task at a period start: how many frames it may harvest. */
uint32_t hook_poll_begin(sim_hooks *h, uint64_t now);
/* Polling task done harvesting (back to interrupts, or stay polling). */
void hook_poll_end(sim_hooks *h, uint64_t now);
/* True while the global limit keeps the receive path in polling mode. */
static inline bool hook_polling_mode(const sim_hooks *h)
{
    return rts_global_limit_mode_of(&h->shield.rx.glim) == RTS_GLOBAL_LIMIT_POLL;
}
/* Frames the receive path holds for the network task. */
static inline uint32_t hook_waiting(const sim_hooks *h)
{
    return rts_shield_waiting(&h->shield);
}
/* The scenario flow bound to libshield flow `sflow`, or -1 (none, or a
 * flow the stack consumes itself). */
static inline int hook_flow_owner(const sim_hooks *h, unsigned sflow)
{
    return sflow >= RTS_FLOW_FIRST_USER && sflow < RTS_FLOW_MAX ? h->sflow_owner[sflow] : -1;
}
/* Critical task ended a cycle started at `start` with deadline `target`. */
void hook_cycle_end(sim_hooks *h, uint64_t now, uint64_t start, uint64_t target);
/* RX ISR exit after `isr_ns` of CPU time (Budget Mitigation charging the ISR). */
void hook_rx_isr_done(sim_hooks *h, uint64_t now, uint64_t isr_ns);
/* True when shield timer `timer`'s handler re-enables its line at the expiry
 * itself (the strict limiter: the line is off for exactly one interarrival
 * time, Regehr & Duongsaa §5.2; docs/decisions/regehr.md). The engine then
 * calls hook_timer() at the expiry and charges the handler afterwards,
 * after any RX interrupt the re-enable let in. */
bool hook_timer_at_expiry(const sim_hooks *h, unsigned timer);
/* Shield timer `timer` interrupt handler. */
void hook_timer(sim_hooks *h, uint64_t now, unsigned timer);
/* The detectors' counters (late cycles, interrupt crossings, fill
 * overloads: rtsim_detector order). */
static inline void hook_detected(const sim_hooks *h, uint64_t v[RTSIM_DET_COUNT])
{
    v[0] = h->shield.detect.late_cycles;
    v[1] = h->shield.detect.irq_crossings;
    v[2] = h->shield.detect.fill_overloads;
}

#endif
