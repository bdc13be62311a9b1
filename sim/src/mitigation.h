/* The mitigation adapter: calls into libshield at the hooks a real driver
 * uses (RX ISR, enqueue failure, driver per packet, queue empty, critical
 * task report, timer interrupt, suspended driver's sleep loop) and performs
 * the returned actions through the port. It holds no mitigation logic of its
 * own. Private to the simulator. */
#ifndef RTSIM_MITIGATION_H
#define RTSIM_MITIGATION_H

#include <stdbool.h>
#include <stdint.h>

#include "rtsim/rtsim.h"

struct rtsim;

typedef struct sim_mitigation {
    uint32_t kind;
} sim_mitigation;

/* NULL when the mitigation part of `cfg` is valid, else a message. */
const char *mit_config_error(const rtsim_config *cfg);
void mit_init(struct rtsim *s, uint64_t now);
/* RX ISR, once per packet it handles, before the enqueue.
 * Returns false when the packet must be dropped. */
bool mit_on_rx_packet(struct rtsim *s, uint64_t now);
/* RX ISR: the enqueue failed because the queue is full. */
void mit_on_enqueue_fail(struct rtsim *s, uint64_t now);
/* Driver: one packet processed, `work_ns` of driver CPU time. */
void mit_on_driver_packet(struct rtsim *s, uint64_t now, uint64_t work_ns);
/* Driver: the RX queue is empty after a packet. */
void mit_on_queue_empty(struct rtsim *s, uint64_t now);
/* Critical task: a cycle ended with `earliness_ns` (negative = late). */
void mit_on_cycle_end(struct rtsim *s, uint64_t now, int64_t earliness_ns, uint64_t period_ns);
/* Mitigation timer `timer` interrupt handler. */
void mit_on_timer(struct rtsim *s, uint64_t now, unsigned timer);
/* One iteration of the suspended driver's sleep loop. */
void mit_on_poll(struct rtsim *s, uint64_t now);
/* True when the critical task reports to the mitigation (cooperative). */
bool mit_wants_report(const struct rtsim *s);

#endif
