/* Eager/deferred receive driver (Behnke et al. §5.3.2, Figures 7 and 8). */
#include "rtshield/rts_rx_driver.h"

#include "rts_bits.h"

rts_err rts_rx_init(rts_rx_driver *rx, const rts_port *port, unsigned nbufs, unsigned ring_size,
                    unsigned task_base_prio, uint32_t global_capacity, rts_time_ns global_period,
                    rts_time_ns now)
{
    const unsigned threshold = (unsigned)(((uint32_t)ring_size * RTS_RX_RECYCLE_THRESHOLD_256) / 256u);
    rts_err e = rts_fq_init(&rx->fq, nbufs, ring_size, threshold);
    if (e != RTS_OK) return e;
    e = rts_glim_init(&rx->glim, global_capacity, global_period, now);
    if (e != RTS_OK) return e;
    rts_flow_table_init(&rx->flows, now);
    rts_pi_init(&rx->pi, task_base_prio);
    rx->port = port;
    rx->short_circuit = 1u;
    rx->pad[0] = rx->pad[1] = rx->pad[2] = 0u;
    for (unsigned i = 0; i < RTS_RX_OUTCOMES; i++) rx->outcomes[i] = 0u;
    rx->recycled = 0u;
    rx->harvested = 0u;
    return RTS_OK;
}

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

/* Global limit, then take the buffer. False when the caller must return. */
static bool admit_and_take(rts_rx_driver *rx, unsigned buf, rts_time_ns now, rts_rx_result *res, rts_err *err)
{
    *err = RTS_OK;
    if (buf >= rx->fq.nbufs || rx->fq.state[buf] != RTS_BUF_RING) {
        *err = RTS_EINVAL;
        return false;
    }
    rts_action act;
    if (!rts_glim_admit_isr(&rx->glim, now, &act)) {
        res->outcome = RTS_RX_GLOBAL_LIMIT;
        res->task_prio = rts_pi_current(&rx->pi);
        rx->outcomes[RTS_RX_GLOBAL_LIMIT]++;
        return false;
    }
    res->flags |= act.flags;
    res->timer_at = act.timer_at;
    (void)rts_fq_rx_take_isr(&rx->fq, buf);
    rx->harvested++;
    return true;
}

/* True when path (c) would take `buf` itself: rts_fq_recycle_lowest_isr()
 * takes the head of the lowest-id flow of the lowest level. */
static bool recycle_takes(const rts_flow_queue *fq, int level, unsigned buf)
{
    return fq->q[rts_bits_lsb64(fq->level_flows[level])].head == buf;
}

/* Figure 8 from "classified" on. */
static void place(rts_rx_driver *rx, unsigned buf, unsigned flow, unsigned prio, rts_time_ns now,
                  rts_rx_result *res)
{
    res->flow = (uint8_t)flow;
    res->prio = (uint8_t)prio;
    const bool low = rts_fq_ring_low(&rx->fq);
    const int lowest = rts_fq_lowest_prio(&rx->fq);
    rts_rx_outcome out = RTS_RX_QUEUED;
    if (rx->short_circuit && low && lowest >= 0 && (int)prio <= lowest) {
        out = RTS_RX_SHORT_CIRCUIT; /* (a) */
    } else if (!rts_flow_admit_isr(&rx->flows, flow, now)) {
        out = RTS_RX_FLOW_LIMIT; /* (b) */
    } else if (rts_fq_push_isr(&rx->fq, buf, flow, prio, rx->flows.flows[flow].queue_limit) != RTS_OK) {
        out = RTS_RX_QUEUE_FULL;
    }
    res->outcome = (uint8_t)out;
    rx->outcomes[out]++;
    if (out != RTS_RX_QUEUED) {
        (void)rts_fq_repost_isr(&rx->fq, buf);
        res->repost = (uint16_t)buf;
    } else {
        if (rts_pi_on_enqueue_isr(&rx->pi, prio) == RTS_PI_RAISED) {
            res->flags |= RTS_ACT_RESCHEDULE;
        }
        /* (c): recycle only a buffer of strictly lower priority than this
         * packet, judged after the push (a flow whose priority was raised
         * has moved to its new level with it). Without the short circuit
         * the lowest level may be the packet's own: its oldest buffer goes,
         * but never the packet just queued (that would be the short circuit). */
        const int lowest_now = rts_fq_lowest_prio(&rx->fq);
        if (low && lowest_now >= 0 &&
            (lowest_now < (int)prio || (!rx->short_circuit && !recycle_takes(&rx->fq, lowest_now, buf)))) {
            uint16_t victim;
            uint8_t vflow;
            if (rts_fq_recycle_lowest_isr(&rx->fq, &victim, &vflow) == RTS_OK) {
                res->repost = victim;
                res->recycled_flow = vflow;
                rx->recycled++;
            }
        }
    }
    res->task_prio = rts_pi_current(&rx->pi);
}

rts_err rts_rx_eager_isr(rts_rx_driver *rx, unsigned buf, const uint8_t *frame, size_t len, rts_time_ns now,
                         rts_rx_result *res)
{
    result_clear(res);
    rts_err err;
    if (!admit_and_take(rx, buf, now, res, &err)) {
        return err;
    }
    if (rx->port != NULL && rx->port->cache_invalidate != NULL && frame != NULL) {
        rx->port->cache_invalidate(rx->port->ctx, frame, len < RTS_RX_HDR_BYTES ? len : RTS_RX_HDR_BYTES);
    }
    const uint8_t flow = rts_classify_isr(&rx->flows, frame, len, NULL);
    place(rx, buf, flow, rx->flows.flows[flow].prio, now, res);
    return RTS_OK;
}

rts_err rts_rx_eager_desc_isr(rts_rx_driver *rx, unsigned buf, unsigned flow, unsigned prio, rts_time_ns now,
                              rts_rx_result *res)
{
    result_clear(res);
    rts_err err;
    if (!admit_and_take(rx, buf, now, res, &err)) {
        return err;
    }
    if (flow >= RTS_FLOW_MAX) flow = RTS_FLOW_DEFAULT;
    if (prio >= RTS_FLOW_PRIO_LEVELS) prio = RTS_FLOW_PRIO_LEVELS - 1u;
    place(rx, buf, flow, prio, now, res);
    return RTS_OK;
}

rts_err rts_rx_task_next(rts_rx_driver *rx, rts_rx_job *job, rts_pi_change *change)
{
    uint16_t b;
    uint8_t f, p;
    rts_pi_change c = RTS_PI_UNCHANGED;
    rts_err e = rts_fq_pop_highest(&rx->fq, &b, &f, &p);
    if (e == RTS_OK) {
        (void)rts_pi_on_start(&rx->pi, p);
        job->buf = b;
        job->flow = f;
        job->prio = p;
    } else {
        c = rts_pi_recompute(&rx->pi, -1);
    }
    if (change != NULL) *change = c;
    return e;
}

void rts_rx_task_invalidate(const rts_rx_driver *rx, const uint8_t *frame, size_t len)
{
    if (rx->port == NULL || rx->port->cache_invalidate == NULL || frame == NULL || len <= RTS_RX_HDR_BYTES) {
        return;
    }
    rx->port->cache_invalidate(rx->port->ctx, frame + RTS_RX_HDR_BYTES, len - RTS_RX_HDR_BYTES);
}

rts_err rts_rx_task_refill(rts_rx_driver *rx, uint16_t *buf)
{
    return rts_fq_refill(&rx->fq, buf);
}

rts_pi_change rts_rx_task_complete(rts_rx_driver *rx, unsigned prio)
{
    return rts_pi_on_complete(&rx->pi, prio, rts_fq_highest_prio(&rx->fq));
}

rts_err rts_rx_buf_free(rts_rx_driver *rx, unsigned buf)
{
    return rts_fq_release(&rx->fq, buf);
}

uint32_t rts_rx_poll_begin(rts_rx_driver *rx, rts_time_ns now)
{
    return rts_glim_poll_begin(&rx->glim, now);
}

rts_action rts_rx_poll_end(rts_rx_driver *rx, rts_time_ns now)
{
    return rts_glim_poll_end(&rx->glim, now);
}
