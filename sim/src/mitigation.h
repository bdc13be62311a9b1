/* The mitigation adapter: calls into libshield at the hooks a real driver
 * uses (RX ISR, enqueue failure, driver per packet, queue empty, critical
 * task report, timer interrupt, suspended driver's sleep loop) and performs
 * the returned actions through the port. It holds no mitigation logic of its
 * own. Private to the simulator. */
#ifndef RTSIM_MITIGATION_H
#define RTSIM_MITIGATION_H

#include <stdbool.h>
#include <stdint.h>

#include "rtshield/rts_budget_mit.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_hyst_mit.h"
#include "rtshield/rts_queue_mit.h"
#include "rtshield/rts_strict.h"
#include "rtsim/rtsim.h"

struct rtsim;

/* The libshield state of the configured mitigation (one of them). */
typedef struct sim_mitigation {
    uint32_t kind;
    union {
        rts_burst_mit burst;
        rts_hyst_mit hyst;
        rts_budget_mit budget;
        rts_queue_mit queue;
        rts_strict strict;
        rts_bursty bursty;
        rts_countdown countdown;
    } u;
    uint32_t bursty_id;      /* the RX line's source id in the bursty limiter */
} sim_mitigation;

/* NULL when the mitigation part of `cfg` is valid, else a message. */
const char *mit_config_error(const rtsim_config *cfg);
void mit_init(struct rtsim *s, uint64_t now);
/* RX ISR prologue, once per interrupt (`isr_entry`: when it started).
 * Returns false when the interrupt is not admitted (its packets stay). */
bool mit_on_rx_irq(struct rtsim *s, uint64_t now, uint64_t isr_entry);
/* True when the mitigation is a filter in front of the interrupt controller
 * (the countdown filter): arrivals go through mit_filter_arrival(). */
bool mit_is_filter(const struct rtsim *s);
/* Countdown filter: an arrival at `now`. Returns 0 (lost), 1 (deliver this
 * arrival's interrupt now), 2 (deliver the latched one now; this one is
 * latched) or 3 (this one is latched). *zero_at is the time the host must
 * call mit_filter_zero() (UINT64_MAX: none). */
int mit_filter_arrival(struct rtsim *s, uint64_t now, uint64_t *zero_at);
/* Countdown filter: the counter reached zero. True: deliver the latched one. */
bool mit_filter_zero(struct rtsim *s, uint64_t now);
/* RX ISR, once per packet it handles, before the enqueue; `isr_entry` is
 * when the handler started. Returns false when the packet must be dropped. */
bool mit_on_rx_packet(struct rtsim *s, uint64_t now, uint64_t isr_entry);
/* RX ISR: the enqueue failed because the queue is full. */
void mit_on_enqueue_fail(struct rtsim *s, uint64_t now);
/* Driver loop, before taking a packet: may the driver run? When not,
 * *sleep_ns says how long it sleeps before polling again (0: it waits for a
 * resume from another hook). */
bool mit_driver_poll(struct rtsim *s, uint64_t now, uint64_t *sleep_ns);
/* Driver: one packet processed, `work_ns` of driver CPU time, `fill`
 * packets still queued. */
void mit_on_packet_done(struct rtsim *s, uint64_t now, uint64_t work_ns, uint32_t fill);
/* Critical task: a cycle ended with `earliness_ns` (negative = late). */
void mit_on_cycle_end(struct rtsim *s, uint64_t now, int64_t earliness_ns, uint64_t period_ns);
/* Mitigation timer `timer` interrupt handler. */
void mit_on_timer(struct rtsim *s, uint64_t now, unsigned timer);
/* True when the mitigation has a hook in the RX ISR (its cost is charged). */
bool mit_hooks_isr(const struct rtsim *s);
/* True when the mitigation has a hook in the driver loop (its cost is charged). */
bool mit_hooks_driver(const struct rtsim *s);
/* True when the critical task reports to the mitigation (cooperative). */
bool mit_wants_report(const struct rtsim *s);

#endif
