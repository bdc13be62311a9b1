/* Differentiated flow queues over a closed buffer pool (Behnke et al. §5.3). */
#include "rtshield/rts_flow_queue.h"

#include "flow_queue_ops.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_RX_PATH

RTS_STATIC_ASSERT(RTS_FLOW_MAX <= 8 * sizeof(rts_flow_set), "one rts_flow_set per priority level");
RTS_STATIC_ASSERT(RTS_FLOW_PRIO_LEVELS <= 32, "one uint32_t of priority levels");
RTS_STATIC_ASSERT(RTS_POOL_MAX_BUFS < RTS_BUF_NONE, "buffer ids must not collide with RTS_BUF_NONE");

static void set_state(rts_flow_queue *fq, unsigned buf, rts_buf_state to)
{
    fq->n_state[fq->state[buf]]--;
    fq->state[buf] = (uint8_t)to;
    fq->n_state[to]++;
}

static bool in_state(const rts_flow_queue *fq, unsigned buf, rts_buf_state s)
{
    return buf < fq->nbufs && fq->state[buf] == (uint8_t)s;
}

rts_err rts_flow_queue_init(rts_flow_queue *fq, unsigned nbufs, unsigned ring_size, unsigned threshold)
{
    if (nbufs > RTS_POOL_MAX_BUFS || ring_size == 0u || ring_size > nbufs || threshold > ring_size) {
        return RTS_EINVAL;
    }
    fq->nbufs = (uint16_t)nbufs;
    fq->ring_size = (uint16_t)ring_size;
    fq->ring_threshold = (uint16_t)threshold;
    fq->pad = 0u;
    for (unsigned s = 0; s < 5u; s++) fq->n_state[s] = 0u;
    fq->level_mask = 0u;
    for (unsigned l = 0; l < RTS_FLOW_PRIO_LEVELS; l++) {
        fq->level_flows[l] = 0u;
        fq->rr_last[l] = 0u;
    }
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        fq->q[f].head = RTS_BUF_NONE;
        fq->q[f].tail = RTS_BUF_NONE;
        fq->q[f].count = 0u;
        fq->q[f].level = 0u;
        fq->q[f].pad = 0u;
    }
    fq->pool_head = RTS_BUF_NONE;
    for (unsigned b = nbufs; b-- > 0u;) {
        fq->owner[b] = 0u;
        if (b < ring_size) {
            fq->state[b] = RTS_BUF_RING;
            fq->next[b] = RTS_BUF_NONE;
        } else {
            fq->state[b] = RTS_BUF_POOL;
            fq->next[b] = fq->pool_head;
            fq->pool_head = (uint16_t)b;
        }
        fq->n_state[fq->state[b]]++;
    }
    return RTS_OK;
}

rts_err rts_flow_queue_set_threshold(rts_flow_queue *fq, unsigned threshold)
{
    if (threshold > fq->ring_size) {
        return RTS_EINVAL;
    }
    fq->ring_threshold = (uint16_t)threshold;
    return RTS_OK;
}

rts_err rts_flow_queue_rx_take_isr(rts_flow_queue *fq, unsigned buf)
{
    if (!in_state(fq, buf, RTS_BUF_RING)) {
        return RTS_EINVAL;
    }
    set_state(fq, buf, RTS_BUF_ISR);
    return RTS_OK;
}

rts_err rts_flow_queue_push_isr(rts_flow_queue *fq, unsigned buf, unsigned flow, unsigned prio, unsigned limit)
{
    if (!in_state(fq, buf, RTS_BUF_ISR) || flow >= RTS_FLOW_MAX || prio >= RTS_FLOW_PRIO_LEVELS) {
        return RTS_EINVAL;
    }
    return rts_flow_queue_push_from(fq, buf, flow, prio, limit, RTS_BUF_ISR);
}

rts_err rts_flow_queue_push_from(rts_flow_queue *fq, unsigned buf, unsigned flow, unsigned prio, unsigned limit,
                         rts_buf_state from)
{
    return rts_flow_queue_push_inline(fq, buf, flow, prio, limit, from);
}

rts_err rts_flow_queue_repost_isr(rts_flow_queue *fq, unsigned buf)
{
    if (!in_state(fq, buf, RTS_BUF_ISR)) {
        return RTS_EINVAL;
    }
    set_state(fq, buf, RTS_BUF_RING);
    return RTS_OK;
}

/* Unlink the head of `flow`'s FIFO. */
static uint16_t pop_head(rts_flow_queue *fq, unsigned flow)
{
    rts_flow_queue_flow *q = &fq->q[flow];
    RTS_ASSERT(q->count > 0u && q->head != RTS_BUF_NONE,
               "flow queue: the level masks name a flow whose queue is empty");
    const uint16_t b = q->head;
    q->head = fq->next[b];
    fq->next[b] = RTS_BUF_NONE;
    q->count--;
    if (q->count == 0u) {
        q->head = RTS_BUF_NONE;
        q->tail = RTS_BUF_NONE;
        rts_flow_queue_level_remove(fq, flow);
    }
    return b;
}

rts_err rts_flow_queue_recycle_lowest_isr(rts_flow_queue *fq, uint16_t *buf, uint8_t *flow)
{
    if (fq->level_mask == 0u) {
        return RTS_EEMPTY;
    }
    if (fq->n_state[RTS_BUF_RING] + fq->n_state[RTS_BUF_ISR] >= fq->ring_size) {
        return RTS_EFULL;
    }
    const unsigned level = rts_bits_lsb32(fq->level_mask);
    const unsigned f = rts_flow_queue_first(fq->level_flows[level]);
    const uint16_t b = pop_head(fq, f);
    set_state(fq, b, RTS_BUF_RING);
    *buf = b;
    if (flow != NULL) *flow = (uint8_t)f;
    return RTS_OK;
}

rts_err rts_flow_queue_pop_highest(rts_flow_queue *fq, uint16_t *buf, uint8_t *flow, uint8_t *prio)
{
    if (fq->level_mask == 0u) {
        return RTS_EEMPTY;
    }
    const unsigned level = rts_bits_msb32(fq->level_mask);
    const rts_flow_set flows = fq->level_flows[level];
    /* Round robin: the next non-empty flow after the one served last. */
    const unsigned last = fq->rr_last[level];
    const rts_flow_set after =
        last >= RTS_FLOW_MAX - 1u ? 0u : flows & ~((rts_flow_queue_bit(last) << 1) - 1u);
    const unsigned f = rts_flow_queue_first(after != 0u ? after : flows);
    fq->rr_last[level] = (uint8_t)f;
    const uint16_t b = pop_head(fq, f);
    set_state(fq, b, RTS_BUF_TASK);
    *buf = b;
    if (flow != NULL) *flow = (uint8_t)f;
    if (prio != NULL) *prio = (uint8_t)level;
    return RTS_OK;
}

rts_err rts_flow_queue_refill(rts_flow_queue *fq, uint16_t *buf)
{
    if (fq->n_state[RTS_BUF_RING] + fq->n_state[RTS_BUF_ISR] >= fq->ring_size) {
        return RTS_EFULL;
    }
    if (fq->pool_head == RTS_BUF_NONE) {
        return RTS_EEMPTY;
    }
    const uint16_t b = fq->pool_head;
    fq->pool_head = fq->next[b];
    fq->next[b] = RTS_BUF_NONE;
    set_state(fq, b, RTS_BUF_RING);
    *buf = b;
    return RTS_OK;
}

rts_err rts_flow_queue_release(rts_flow_queue *fq, unsigned buf)
{
    if (!in_state(fq, buf, RTS_BUF_TASK)) {
        return RTS_EINVAL;
    }
    fq->next[buf] = fq->pool_head;
    fq->pool_head = (uint16_t)buf;
    set_state(fq, buf, RTS_BUF_POOL);
    return RTS_OK;
}

bool rts_flow_queue_ring_low(const rts_flow_queue *fq)
{
    return fq->n_state[RTS_BUF_RING] < fq->ring_threshold;
}

int rts_flow_queue_highest_prio(const rts_flow_queue *fq)
{
    return fq->level_mask == 0u ? -1 : (int)rts_bits_msb32(fq->level_mask);
}

int rts_flow_queue_lowest_prio(const rts_flow_queue *fq)
{
    return rts_flow_queue_lowest_inline(fq);
}

unsigned rts_flow_queue_flow_count(const rts_flow_queue *fq, unsigned flow)
{
    return flow < RTS_FLOW_MAX ? fq->q[flow].count : 0u;
}

unsigned rts_flow_queue_count(const rts_flow_queue *fq, unsigned s)
{
    return s < 5u ? fq->n_state[s] : 0u;
}

rts_err rts_flow_queue_check(const rts_flow_queue *fq)
{
    /* Every buffer in one state, counted in n_state (so they sum to nbufs). */
    unsigned counted[5] = {0u, 0u, 0u, 0u, 0u};
    for (unsigned b = 0; b < fq->nbufs; b++) {
        if (fq->state[b] >= 5u) return RTS_EINVAL;
        counted[fq->state[b]]++;
    }
    for (unsigned s = 0; s < 5u; s++) {
        if (counted[s] != fq->n_state[s]) return RTS_EINVAL;
    }
    if (fq->n_state[RTS_BUF_RING] + fq->n_state[RTS_BUF_ISR] > fq->ring_size) {
        return RTS_EINVAL;
    }
    /* Walk the spare list: bounded by nbufs steps, only POOL buffers. */
    unsigned steps = 0u;
    for (uint16_t b = fq->pool_head; b != RTS_BUF_NONE; b = fq->next[b]) {
        if (b >= fq->nbufs || fq->state[b] != RTS_BUF_POOL || ++steps > fq->nbufs) return RTS_EINVAL;
    }
    if (steps != fq->n_state[RTS_BUF_POOL]) return RTS_EINVAL;
    /* Walk each FIFO. */
    unsigned queued = 0u;
    uint32_t mask = 0u;
    rts_flow_set lf[RTS_FLOW_PRIO_LEVELS];
    for (unsigned l = 0; l < RTS_FLOW_PRIO_LEVELS; l++) lf[l] = 0u;
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        const rts_flow_queue_flow *q = &fq->q[f];
        unsigned n = 0u;
        uint16_t last = RTS_BUF_NONE;
        for (uint16_t b = q->head; b != RTS_BUF_NONE; b = fq->next[b]) {
            if (b >= fq->nbufs || fq->state[b] != RTS_BUF_QUEUED || fq->owner[b] != f || ++n > fq->nbufs) {
                return RTS_EINVAL;
            }
            last = b;
        }
        if (n != q->count || last != q->tail) return RTS_EINVAL;
        if (n > 0u) {
            if (q->level >= RTS_FLOW_PRIO_LEVELS) return RTS_EINVAL;
            lf[q->level] |= rts_flow_queue_bit(f);
            mask |= 1u << q->level;
        }
        queued += n;
    }
    if (queued != fq->n_state[RTS_BUF_QUEUED] || mask != fq->level_mask) return RTS_EINVAL;
    for (unsigned l = 0; l < RTS_FLOW_PRIO_LEVELS; l++) {
        if (lf[l] != fq->level_flows[l]) return RTS_EINVAL;
    }
    return RTS_OK;
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_flow_queue_compiled_out; /* ISO C: a translation unit declares something */
#endif
