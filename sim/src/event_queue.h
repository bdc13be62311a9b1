/* The event queue: a binary min-heap ordered by (time, priority, sequence).
 * Private to the simulator. Ties in time are broken by the event kind's
 * priority, then by insertion order, so runs are deterministic. */
#ifndef RTSIM_EVENT_QUEUE_H
#define RTSIM_EVENT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_event {
    uint64_t t;    /* ns */
    uint32_t prio; /* lower runs first at equal time */
    uint32_t type; /* engine event type */
    uint64_t seq;  /* insertion order */
    uint32_t arg;  /* type-specific: flow, task, timer, core */
    uint32_t gen;  /* generation, to recognise cancelled timers */
} sim_event;

typedef struct sim_event_queue {
    sim_event *heap;
    size_t len;
    size_t cap;
    uint64_t next_seq;
} sim_event_queue;

/* Allocate room for `cap` events. Returns false when memory is short. */
bool evq_init(sim_event_queue *q, size_t cap);
void evq_free(sim_event_queue *q);
/* Insert; returns false when the queue is full (the caller reports it). */
bool evq_push(sim_event_queue *q, uint64_t t, uint32_t prio, uint32_t type, uint32_t arg,
              uint32_t gen);
/* The earliest event, or NULL when empty. */
const sim_event *evq_peek(const sim_event_queue *q);
/* Remove the earliest event into *out; returns false when empty. */
bool evq_pop(sim_event_queue *q, sim_event *out);
/* Remove every event for which drop() is true; the others keep their order
 * (their sequence numbers are kept). Returns how many were removed. */
size_t evq_remove_if(sim_event_queue *q, bool (*drop)(const sim_event *e, void *ctx), void *ctx);
/* True when a is ordered before b. */
bool evq_before(const sim_event *a, const sim_event *b);

#endif
