/* Binary min-heap of events ordered by (time, priority, sequence). */
#include "event_queue.h"

#include <stdlib.h>

bool evq_before(const sim_event *a, const sim_event *b)
{
    if (a->t != b->t) return a->t < b->t;
    if (a->prio != b->prio) return a->prio < b->prio;
    return a->seq < b->seq;
}

bool evq_init(sim_event_queue *q, size_t cap)
{
    q->heap = calloc(cap, sizeof *q->heap);
    q->len = 0;
    q->cap = cap;
    q->next_seq = 0;
    return q->heap != NULL;
}

void evq_free(sim_event_queue *q)
{
    free(q->heap);
    q->heap = NULL;
    q->len = q->cap = 0;
}

bool evq_push(sim_event_queue *q, uint64_t t, uint32_t prio, uint32_t type, uint32_t arg,
              uint32_t gen)
{
    if (q->len == q->cap) return false;
    sim_event e = {t, prio, type, q->next_seq++, arg, gen};
    size_t i = q->len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!evq_before(&e, &q->heap[parent])) break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return true;
}

const sim_event *evq_peek(const sim_event_queue *q)
{
    return q->len ? &q->heap[0] : NULL;
}

bool evq_pop(sim_event_queue *q, sim_event *out)
{
    if (q->len == 0) return false;
    *out = q->heap[0];
    sim_event last = q->heap[--q->len];
    size_t i = 0;
    size_t n = q->len;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n) break;
        size_t c = l;
        if (l + 1 < n && evq_before(&q->heap[l + 1], &q->heap[l])) c = l + 1;
        if (!evq_before(&q->heap[c], &last)) break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n) q->heap[i] = last;
    return true;
}

/* Sift heap[i] down to its place among heap[0..n). */
static void sift_down(sim_event *heap, size_t n, size_t i)
{
    const sim_event e = heap[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n) break;
        size_t c = l;
        if (l + 1 < n && evq_before(&heap[l + 1], &heap[l])) c = l + 1;
        if (!evq_before(&heap[c], &e)) break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = e;
}

size_t evq_remove_if(sim_event_queue *q, bool (*drop)(const sim_event *e, void *ctx), void *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < q->len; i++)
        if (!drop(&q->heap[i], ctx)) q->heap[n++] = q->heap[i];
    const size_t removed = q->len - n;
    q->len = n;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(q->heap, n, i);
    return removed;
}
