/* Private to libshield (not for applications): the flow queues' O(1)
 * moves as inline functions, shared by flow_queue.c (the checked public
 * calls) and rx_driver.c (the eager half, whose callers have already
 * established what these functions would check: the buffer's state, the
 * flow id and the priority), so that the receive path's ISR makes no call
 * and no check twice. */
#ifndef RTSHIELD_SRC_FLOW_QUEUE_OPS_H
#define RTSHIELD_SRC_FLOW_QUEUE_OPS_H

#include "rtshield/rts_flow_queue.h"

#include "rts_bits.h"

/* Flow `flow`'s bit in an rts_flow_set (flow < RTS_FLOW_MAX). */
static inline rts_flow_set rts_flow_queue_bit(unsigned flow)
{
    return (rts_flow_set)1u << flow;
}

/* Lowest flow id in a non-empty rts_flow_set. */
static inline unsigned rts_flow_queue_first(rts_flow_set flows)
{
#if RTS_FLOW_MAX <= 32
    return rts_bits_lsb32(flows);
#else
    return rts_bits_lsb64(flows);
#endif
}

/* Move `buf` from state `from` (which it is in) to `to`. */
static inline void rts_flow_queue_move(rts_flow_queue *fq, unsigned buf, rts_buf_state from, rts_buf_state to)
{
    RTS_ASSERT(buf < fq->nbufs && fq->state[buf] == (uint8_t)from && fq->n_state[from] > 0u,
               "flow queue: a buffer moved from a state it is not in");
    fq->n_state[from]--;
    fq->state[buf] = (uint8_t)to;
    fq->n_state[to]++;
}

static inline void rts_flow_queue_level_add(rts_flow_queue *fq, unsigned flow, unsigned level)
{
    fq->q[flow].level = (uint8_t)level;
    fq->level_flows[level] |= rts_flow_queue_bit(flow);
    fq->level_mask |= 1u << level;
}

static inline void rts_flow_queue_level_remove(rts_flow_queue *fq, unsigned flow)
{
    const unsigned level = fq->q[flow].level;
    fq->level_flows[level] &= ~rts_flow_queue_bit(flow);
    if (fq->level_flows[level] == 0u) {
        fq->level_mask &= ~(1u << level);
    }
}

/* Lowest non-empty priority, -1 when every queue is empty. */
static inline int rts_flow_queue_lowest_inline(const rts_flow_queue *fq)
{
    return fq->level_mask == 0u ? -1 : (int)rts_bits_lsb32(fq->level_mask);
}

/* rts_flow_queue_push_inline(), out of line in flow_queue.c (the size build's
 * receive path calls it instead of inlining a copy). */
rts_err rts_flow_queue_push_from(rts_flow_queue *fq, unsigned buf, unsigned flow, unsigned prio, unsigned limit,
                         rts_buf_state from);

/* `from` -> QUEUED for a buffer in state `from` (ISR; or RING when the
 * eager half takes and queues it in one move), flow < RTS_FLOW_MAX and
 * prio < RTS_FLOW_PRIO_LEVELS (the caller guarantees all three).
 * RTS_EFULL when the flow already holds `limit` buffers (nothing changed). */
static inline rts_err rts_flow_queue_push_inline(rts_flow_queue *fq, unsigned buf, unsigned flow, unsigned prio,
                                         unsigned limit, rts_buf_state from)
{
    RTS_ASSERT(flow < RTS_FLOW_MAX && prio < RTS_FLOW_PRIO_LEVELS,
               "flow queue: push with a flow or priority the caller did not check");
    rts_flow_queue_flow *q = &fq->q[flow];
    if (q->count >= limit) {
        return RTS_EFULL;
    }
    fq->next[buf] = RTS_BUF_NONE;
    fq->owner[buf] = (uint8_t)flow;
    if (q->count == 0u) {
        q->head = (uint16_t)buf;
        rts_flow_queue_level_add(fq, flow, prio);
    } else {
        fq->next[q->tail] = (uint16_t)buf;
        if (q->level != prio) {
            rts_flow_queue_level_remove(fq, flow);
            rts_flow_queue_level_add(fq, flow, prio);
        }
    }
    q->tail = (uint16_t)buf;
    q->count++;
    rts_flow_queue_move(fq, buf, from, RTS_BUF_QUEUED);
    return RTS_OK;
}

#endif
