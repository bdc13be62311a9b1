/* Eager/deferred receive driver (Behnke et al. §5.3.2, Figures 7 and 8). */
#include "rtshield/rts_rx_driver.h"

#include "classify_flow.h"
#include "flow_queue_ops.h"
#include "rts_bits.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_RX_PATH

rts_err rts_rx_driver_init(rts_rx_driver *rx, const rts_port *port, unsigned nbufs, unsigned ring_size,
                    unsigned task_base_prio, uint32_t global_capacity, rts_time_ns global_period,
                    rts_time_ns now)
{
    const unsigned threshold = (unsigned)(((uint32_t)ring_size * RTS_RX_RECYCLE_THRESHOLD_256) / 256u);
    rts_err e = rts_flow_queue_init(&rx->fq, nbufs, ring_size, threshold);
    if (e != RTS_OK) return e;
    e = rts_global_limit_init(&rx->glim, global_capacity, global_period, now);
    if (e != RTS_OK) return e;
    rts_flow_table_init(&rx->flows, now);
    rts_prio_inherit_init(&rx->pi, task_base_prio);
    rx->port = port;
    rx->short_circuit = 1u;
    rx->pad[0] = rx->pad[1] = rx->pad[2] = 0u;
    for (unsigned i = 0; i < RTS_RX_OUTCOMES; i++) rx->outcomes[i] = 0u;
    rx->recycled = 0u;
    rx->harvested = 0u;
    return RTS_OK;
}

/* Field by field, not one compound literal: for that GCC 12 zeroes the first
 * 16 bytes and then overwrites 8 of them, one instruction more per frame. */
static void result_clear(rts_rx_result *res)
{
    res->outcome = RTS_RX_QUEUED;
    res->flow = RTS_FLOW_NONE;
    res->prio = 0u;
    res->recycled_flow = RTS_FLOW_NONE;
    res->repost = RTS_BUF_NONE;
    res->pad = 0u;
    res->flags = RTS_ACT_NONE;
    res->task_prio = 0u;
    res->timer_at = 0u;
}

/* RTS_CONFIG_RX_INLINE (rts_opts.h): the eager half's steps and the
 * classifier's flow-only parse inlined into both entry points, one call
 * per frame (GCC and Clang; other compilers may or may not inline); or
 * called, for the smaller build. */
#if RTS_CONFIG_RX_INLINE && defined(__GNUC__)
#define RX_INLINE inline __attribute__((always_inline))
#elif RTS_CONFIG_RX_INLINE
#define RX_INLINE inline
#else
#define RX_INLINE
#endif
#if RTS_CONFIG_RX_INLINE
#define RX_CLASSIFY(t, frame, len) rts_classify_flow_inline((t), (frame), (len))
#define RX_PUSH rts_flow_queue_push_inline
#else
#define RX_CLASSIFY(t, frame, len) rts_classifier_classify_isr((t), (frame), (len), NULL)
#define RX_PUSH rts_flow_queue_push_from
#endif

/* Clear the result, apply the global limit, then take the buffer. False
 * when the caller must return. The only checks are of the caller's
 * arguments (buf) and the limiter's decision. The take (RING -> ISR,
 * rts_flow_queue_rx_take_isr()) is folded into place(): the buffer either
 * ends QUEUED (one move RING -> QUEUED) or goes straight back to the ring
 * (RING -> ISR -> RING, no net change), and nothing can look at the pool
 * between the two. */
static RX_INLINE bool admit_and_take(rts_rx_driver *rx, unsigned buf, rts_time_ns now, rts_rx_result *res,
                                      rts_err *err)
{
    result_clear(res);
    if (buf >= rx->fq.nbufs || rx->fq.state[buf] != RTS_BUF_RING) {
        *err = RTS_EINVAL;
        return false;
    }
    if (rx->glim.capacity != 0u) { /* no global limit: nothing to decide (rts_global_limit_admit_isr) */
        rts_action act;
        if (!rts_global_limit_admit_isr(&rx->glim, now, &act)) {
            res->outcome = RTS_RX_GLOBAL_LIMIT;
            res->task_prio = rx->pi.current;
            rx->outcomes[RTS_RX_GLOBAL_LIMIT]++;
            *err = RTS_OK;
            return false;
        }
        res->flags |= act.flags;
        res->timer_at = act.timer_at;
    }
    rx->harvested++;
    return true;
}

/* True when path (c) would take `buf` itself: rts_flow_queue_recycle_lowest_isr()
 * takes the head of the lowest-id flow of the lowest level. */
static bool recycle_takes(const rts_flow_queue *fq, int level, unsigned buf)
{
    return fq->q[rts_flow_queue_first(fq->level_flows[level])].head == buf;
}

/* Figure 8 from "classified" on, for ring buffer `buf` (still counted in
 * the ring: see admit_and_take()) of flow `flow` (f = its entry);
 * flow < RTS_FLOW_MAX and
 * prio < RTS_FLOW_PRIO_LEVELS (the callers guarantee both). */
static RX_INLINE void place(rts_rx_driver *rx, unsigned buf, unsigned flow, rts_flow *f, unsigned prio,
                            rts_time_ns now, rts_rx_result *res)
{
    rts_flow_queue *fq = &rx->fq;
    res->flow = (uint8_t)flow;
    res->prio = (uint8_t)prio;
    /* rts_flow_queue_ring_low() once `buf` has left the ring: fewer than the
     * threshold posted without it. */
    const bool low = fq->n_state[RTS_BUF_RING] <= fq->ring_threshold;
    rts_rx_outcome out = RTS_RX_QUEUED;
    if (low && rx->short_circuit && (int)prio <= rts_flow_queue_lowest_inline(fq)) {
        out = RTS_RX_SHORT_CIRCUIT; /* (a); an empty set of queues has lowest -1 */
    } else if (!rts_flow_table_admit_inline(&rx->flows, f, flow, now)) {
        out = RTS_RX_FLOW_LIMIT; /* (b) */
    } else if (RX_PUSH(fq, buf, flow, prio, f->queue_limit, RTS_BUF_RING) != RTS_OK) {
        out = RTS_RX_QUEUE_FULL;
    }
    res->outcome = (uint8_t)out;
    rx->outcomes[out]++;
    if (out != RTS_RX_QUEUED) {
        res->repost = (uint16_t)buf; /* back to the ring (rts_flow_queue_repost_isr()): it never left */
    } else {
        if (prio > rx->pi.current) {
            /* rts_prio_inherit_on_enqueue_isr() inline: inherit the packet's
             * priority (prio < RTS_FLOW_PRIO_LEVELS). */
            rx->pi.current = (uint8_t)prio;
            rx->pi.raises++;
            res->flags |= RTS_ACT_RESCHEDULE;
        }
        /* (c): recycle only a buffer of strictly lower priority than this
         * packet, judged after the push (a flow whose priority was raised
         * has moved to its new level with it). Without the short circuit
         * the lowest level may be the packet's own: its oldest buffer goes,
         * but never the packet just queued (that would be the short circuit).
         * The queues are not empty: the packet was just queued. */
        if (low) {
            const int lowest_now = rts_flow_queue_lowest_inline(fq);
            if (lowest_now < (int)prio || (!rx->short_circuit && !recycle_takes(fq, lowest_now, buf))) {
                uint16_t victim;
                uint8_t vflow;
                if (rts_flow_queue_recycle_lowest_isr(fq, &victim, &vflow) == RTS_OK) {
                    res->repost = victim;
                    res->recycled_flow = vflow;
                    rx->recycled++;
                }
            }
        }
    }
    res->task_prio = rx->pi.current;
}

rts_err rts_rx_driver_eager_isr(rts_rx_driver *rx, unsigned buf, const uint8_t *frame, size_t len, rts_time_ns now,
                         rts_rx_result *res)
{
    rts_err err;
    if (!admit_and_take(rx, buf, now, res, &err)) {
        return err;
    }
    unsigned flow = RTS_FLOW_DEFAULT; /* no frame: what the classifier gives a NULL frame */
    if (frame != NULL) {
        const rts_port *port = rx->port;
        if (port != NULL && port->cache_invalidate != NULL) {
            port->cache_invalidate(port->ctx, frame, len < RTS_RX_HDR_BYTES ? len : RTS_RX_HDR_BYTES);
        }
        flow = RX_CLASSIFY(&rx->flows, frame, len);
    }
    rts_flow *f = &rx->flows.flows[flow]; /* addressed once: priority, admission, queue limit */
    place(rx, buf, flow, f, f->prio, now, res);
    return RTS_OK;
}

rts_err rts_rx_driver_eager_desc_isr(rts_rx_driver *rx, unsigned buf, unsigned flow, unsigned prio, rts_time_ns now,
                              rts_rx_result *res)
{
    rts_err err;
    if (!admit_and_take(rx, buf, now, res, &err)) {
        return err;
    }
    if (flow >= RTS_FLOW_MAX) flow = RTS_FLOW_DEFAULT;
    if (prio >= RTS_FLOW_PRIO_LEVELS) prio = RTS_FLOW_PRIO_LEVELS - 1u;
    place(rx, buf, flow, &rx->flows.flows[flow], prio, now, res);
    return RTS_OK;
}

rts_err rts_rx_driver_task_next(rts_rx_driver *rx, rts_rx_job *job, rts_prio_inherit_change *change)
{
    uint16_t b;
    uint8_t f, p;
    rts_prio_inherit_change c = RTS_PRIO_INHERIT_UNCHANGED;
    rts_err e = rts_flow_queue_pop_highest(&rx->fq, &b, &f, &p);
    if (e == RTS_OK) {
        (void)rts_prio_inherit_on_start(&rx->pi, p);
        job->buf = b;
        job->flow = f;
        job->prio = p;
    } else {
        c = rts_prio_inherit_recompute(&rx->pi, -1);
    }
    if (change != NULL) *change = c;
    return e;
}

void rts_rx_driver_task_invalidate(const rts_rx_driver *rx, const uint8_t *frame, size_t len)
{
    if (rx->port == NULL || rx->port->cache_invalidate == NULL || frame == NULL || len <= RTS_RX_HDR_BYTES) {
        return;
    }
    rx->port->cache_invalidate(rx->port->ctx, frame + RTS_RX_HDR_BYTES, len - RTS_RX_HDR_BYTES);
}

rts_err rts_rx_driver_task_refill(rts_rx_driver *rx, uint16_t *buf)
{
    return rts_flow_queue_refill(&rx->fq, buf);
}

rts_prio_inherit_change rts_rx_driver_task_complete(rts_rx_driver *rx, unsigned prio)
{
    return rts_prio_inherit_on_complete(&rx->pi, prio, rts_flow_queue_highest_prio(&rx->fq));
}

rts_err rts_rx_driver_buf_free(rts_rx_driver *rx, unsigned buf)
{
    return rts_flow_queue_release(&rx->fq, buf);
}

uint32_t rts_rx_driver_poll_begin(rts_rx_driver *rx, rts_time_ns now)
{
    return rts_global_limit_poll_begin(&rx->glim, now);
}

rts_action rts_rx_driver_poll_end(rts_rx_driver *rx, rts_time_ns now)
{
    return rts_global_limit_poll_end(&rx->glim, now);
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_rx_driver_compiled_out; /* ISO C: a translation unit declares something */
#endif
