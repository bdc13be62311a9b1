/* The network driver's receive side below its task: the RX interrupt
 * handler (the driver queue: every frame the ISR finds is queued for the
 * network task; or libshield's receive path, one frame per step, each
 * costed by the path libshield took) and the polling task's harvest (the
 * global limit's polling mode). The network task's own loop is the
 * scheduler's (sched.c). */
#include "rx.h"

#include "measure.h"
#include "nic.h"

/* The RX ISR of source `src` starts on core c (`polled`: as the poll
 * timer's handler, pure polling): what it will handle, and its cost beyond
 * entry and exit. With the receive path, its prologue only: each frame is
 * a step of its own (rx_isr_step()), costed by the path libshield took. */
int64_t rx_isr_begin(rtsim *s, sim_core *c, uint32_t src, bool polled)
{
    const rtsim_costs *k = &s->cfg.costs;
    s->cur_bin.isr_runs++;
    if (s->masking_jobs) s->mst.mask_violations++; /* inside a task's critical section */
    int64_t cost = k->isr_rx_batch_ns;
    c->isr_source = src;
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        c->isr_pkt = c->latched[src];
        c->isr_npkts = 1;
    } else {
        /* With an input task the handler only wakes it: the task takes the frames. */
        c->isr_npkts = s->cfg.rx.enabled || s->input >= 0 ? 0 : s->ring.len;
    }
    if (s->cfg.rx.enabled) {
        c->rx_step = false;
        c->rx_stop = false;
        return cost;
    }
    int64_t per =
        s->cfg.n_sources ? s->cfg.sources[src].isr_per_packet_ns : k->isr_per_packet_ns;
    /* The queue's state when the handler runs decides its work: a full
     * queue refuses the packet before it is copied (costs.isr_queue_full). */
    if (!s->cfg.n_sources && s->cfg.nic_kind == RTSIM_NIC_EDGE && k->isr_queue_full_ns > 0 &&
        s->rxq.len == s->rxq.cap)
        per = k->isr_queue_full_ns;
    cost += (int64_t)c->isr_npkts *
            (per + ((hook_mask(&s->hk) & RTS_SHIELD_HOOK_RX_ISR) ? k->mitig_isr_ns : 0));
    if (polled) cost += k->timer_isr_ns; /* the poll: t_expire + t_poll + t_work (§5.2) */
    return cost;
}

/* The RX ISR's prologue: libshield admits the interrupt or not. */
static bool rx_admitted(rtsim *s, const sim_core *c, uint64_t now)
{
    const bool ok = hook_rx_irq(&s->hk, now, c->isr_start, c->isr_source);
    detect_seen(s, now);
    return ok;
}

/* The driver queue's RX ISR (receive path off), at its end: the packets it
 * took enter the driver queue (an interrupt-level source's are delivered
 * in the handler) and the network task is woken. */
static void rx_isr_done(rtsim *s, sim_core *c, uint64_t now)
{
    uint32_t n = c->isr_npkts;
    if ((hook_mask(&s->hk) & RTS_SHIELD_CALL_RX_IRQ) && !rx_admitted(s, c, now)) {
        /* Not admitted (a limiter found its line should have been off). */
        if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
            count_drop(s, &c->isr_pkt, RTSIM_DROP_MITIGATION);
            s->mst.drops++;
        }
        return;
    }
    if (s->input >= 0) {
        task_ready(s, &s->task[s->input]); /* the stock driver's input task takes the ring */
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        sim_pkt p;
        if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
            p = c->isr_pkt;
        } else {
            if (s->ring.len == 0) break;
            p = fifo_pop(&s->ring);
        }
        s->cur_bin.received++;
        s->flow_st[p.flow].received++;
        if ((hook_mask(&s->hk) & RTS_SHIELD_CALL_RX_PACKET) && !hook_rx_packet(&s->hk, now, c->isr_start)) {
            count_drop(s, &p, RTSIM_DROP_MITIGATION);
            s->mst.drops++;
            continue;
        }
        if (s->cfg.n_sources && s->cfg.sources[c->isr_source].isr_only) {
            deliver(s, &p, now); /* an interrupt-level task: done in the handler */
            continue;
        }
        rx_to_queue(s, p, now);
    }
}

/* A received frame into the driver queue (dropped as queue_full when it is
 * full), the driver woken: the RX ISR's, or the input task's, last step. */
void rx_to_queue(rtsim *s, sim_pkt p, uint64_t now)
{
    if (!fifo_push(&s->rxq, p)) {
        count_drop(s, &p, RTSIM_DROP_QUEUE_FULL);
        hook_queue_full(&s->hk, now);
        return;
    }
    if (hook_mask(&s->hk) & RTS_SHIELD_CALL_FILL) {
        hook_fill(&s->hk, s->rxq.len);
        detect_seen(s, now);
    }
    if (s->driver >= 0) {
        sim_task *d = &s->task[s->driver];
        if (!d->suspended) task_ready(s, d);
    }
}

/* The RX ISR on core c ends (its last step, with the receive path). */
void rx_isr_end(rtsim *s, sim_core *c, uint64_t now)
{
    if (!s->cfg.rx.enabled) rx_isr_done(s, c, now);
    if (hook_mask(&s->hk) & RTS_SHIELD_CALL_RX_DONE) hook_rx_isr_done(&s->hk, now, now - c->isr_start);
}

static const rtsim_drop shield_drop[RTS_SHIELD_DROP_REASONS] = {
    RTSIM_DROP_MITIGATION,    /* NONE (unused) */
    RTSIM_DROP_MITIGATION,    /* LIMITER */
    RTSIM_DROP_SHORT_CIRCUIT, /* SHORT_CIRCUIT */
    RTSIM_DROP_FLOW_SERVER,   /* FLOW_SERVER */
    RTSIM_DROP_QUEUE_FULL,    /* QUEUE_FULL */
    RTSIM_DROP_GLOBAL_LIMIT   /* GLOBAL_LIMIT */
};

/* Quantiles of the per-path distributions as fractions of 2^32. */
static const uint64_t path_q_at[6] = {0u, 3865470566u, 4252017623u, 4290672329u, 4294537799u,
                                      4294967296u};

/* The ISR's work for one frame on `path`: the platform's constant, or a
 * draw from its quantiles (piecewise linear, integer arithmetic only so the
 * same seed gives the same durations everywhere). */
static uint64_t path_cost(rtsim *s, unsigned path)
{
    const rtsim_costs *k = &s->cfg.costs;
    const int64_t *q = k->path_q_ns[path];
    if (q[3] == 0) return (uint64_t)k->path_ns[path];
    const uint64_t v[6] = {(uint64_t)k->path_ns[path], (uint64_t)q[0], (uint64_t)q[1], (uint64_t)q[2],
                           (uint64_t)q[3], (uint64_t)q[3]};
    const uint64_t u = prng_next(&s->cost_rng) >> 32;
    unsigned i = 0;
    while (i < 4 && u >= path_q_at[i + 1])
        i++;
    return v[i] + (v[i + 1] - v[i]) * (u - path_q_at[i]) / (path_q_at[i + 1] - path_q_at[i]);
}

/*
 * The eager half for one filled descriptor `p` (the RX ISR or the polling
 * task, at `now`; `entry` is when the ISR started, for the tick time Burst
 * Mitigation reads). One libshield call decides; this records what it
 * decided and returns the CPU time of the path it took. *stop: the global
 * limit ends the harvest. *left: the descriptor stays in the ring.
 */
static uint64_t rx_frame(rtsim *s, uint64_t now, uint64_t entry, sim_pkt p, bool *stop, bool *left)
{
    const rtsim_costs *k = &s->cfg.costs;
    *stop = *left = false;
    s->bufpkt[p.buf] = p;
    rts_shield_rx rx;
    uint32_t f;
    unsigned drop;
    const uint8_t *frame = s->bufmem + (size_t)p.buf * RTSIM_FRAME_MAX;
    if (!hook_rx_frame(&s->hk, now, entry, p.buf, frame, pkt_len(s, &p), &rx, &f, &drop)) {
        fail(s, "libshield refused a ring buffer"); /* a simulator bug, never ignored */
        return 0;
    }
    if (s->cfg.rx.global_capacity) acct_rx_mode(s, now);
    if (hook_mask(&s->hk) & RTS_SHIELD_CALL_FILL) detect_seen(s, now); /* only the fill can fire here */
    if (f & RTS_SHIELD_F_STOP) *stop = true;
    if ((f & RTS_SHIELD_F_DROP) && drop == RTS_SHIELD_DROP_GLOBAL_LIMIT &&
        s->cfg.nic_kind != RTSIM_NIC_EDGE) {
        *left = true; /* over the global capacity: it waits in the ring */
        return 0;
    }
    s->cur_bin.received++;
    s->flow_st[p.flow].received++;
    unsigned path;
    if (f & RTS_SHIELD_F_DROP) {
        path = drop == RTS_SHIELD_DROP_SHORT_CIRCUIT ? RTSIM_PATH_SHORT_CIRCUIT : RTSIM_PATH_REJECTED;
        if (drop == RTS_SHIELD_DROP_LIMITER) s->mst.drops++;
        count_drop(s, &p, shield_drop[drop]);
        /* Its buffer goes back to the ring (libshield reposted it, or kept it posted). */
        sim_pkt e = {0, 0, p.buf, 0, 0, 0};
        if (!fifo_push(&s->posted, e)) fail(s, "posted buffers overflow");
    } else {
        path = (f & RTS_SHIELD_F_RECYCLED) ? RTSIM_PATH_RECYCLE
               : rx.raised                 ? RTSIM_PATH_PRIO_RAISE
                                           : RTSIM_PATH_REGULAR;
        if (f & RTS_SHIELD_F_RECYCLED) {
            /* (c): a queued lower-priority packet loses its buffer to the ring. */
            sim_pkt v = s->bufpkt[rx.repost];
            count_drop(s, &v, RTSIM_DROP_RECYCLED);
            sim_pkt e = {0, 0, rx.repost, 0, 0, 0};
            if (!fifo_push(&s->posted, e)) fail(s, "posted buffers overflow");
        }
        if (s->driver >= 0) {
            sim_task *dt = &s->task[s->driver];
            if (!dt->suspended) task_ready(s, dt);
        }
    }
    uint64_t cost = path_cost(s, path);
    if (s->cfg.rx.eager_invalidate) cost += (uint64_t)k->invalidate_eager_ns;
    if (hook_mask(&s->hk) & RTS_SHIELD_HOOK_RX_ISR) cost += (uint64_t)k->mitig_isr_ns;
    s->rxst.path_count[path]++;
    s->rxst.path_ns[path] += cost;
    s->path_hist[(size_t)path * RTSIM_HIST_BINS + rtsim_hist_index(cost)]++;
    return cost;
}

/* One step of the receive path's RX ISR: the prologue once, then one frame
 * per step. Returns true when the ISR goes on (c->isr_end moved). */
bool rx_isr_step(rtsim *s, sim_core *c, uint64_t now)
{
    const bool edge = s->cfg.nic_kind == RTSIM_NIC_EDGE;
    if (!c->rx_step) {
        c->rx_step = true;
        if ((hook_mask(&s->hk) & RTS_SHIELD_CALL_RX_IRQ) && !rx_admitted(s, c, now)) {
            if (edge) {
                count_drop(s, &c->isr_pkt, RTSIM_DROP_MITIGATION);
                s->mst.drops++;
            }
            return false;
        }
    }
    if (c->rx_stop) return false;
    sim_pkt p;
    if (edge) {
        if (c->isr_npkts == 0) return false;
        c->isr_npkts = 0;
        p = c->isr_pkt;
        if (s->posted.len == 0) {
            /* No buffer posted for the GPIO bridge's frame. */
            s->cur_bin.received++;
            s->flow_st[p.flow].received++;
            count_drop(s, &p, RTSIM_DROP_RING_FULL);
            return false;
        }
        p.buf = fifo_pop(&s->posted).buf;
        dma_write(s, &p);
    } else {
        if (s->filled.len == 0) {
            c->pending &= ~(1u << LINE_RX); /* every announced descriptor was taken */
            return false;
        }
        p = fifo_pop(&s->filled);
    }
    bool stop, left;
    const uint64_t cost = rx_frame(s, now, c->isr_start, p, &stop, &left);
    if (left) {
        fifo_unpop(&s->filled, p);
        return false;
    }
    c->rx_stop = stop;
    c->isr_end = now + cost;
    return true;
}

/* The polling task's harvest at a period start: up to the capacity, as
 * many frames as the ring holds. Returns its CPU time. */
uint64_t rx_poll_harvest(rtsim *s, uint64_t now)
{
    const rtsim_costs *k = &s->cfg.costs;
    uint32_t quota = hook_poll_begin(&s->hk, now);
    uint64_t cost = (uint64_t)k->poll_batch_ns;
    sim_core *c = rx_core(s);
    const uint32_t bit = 1u << LINE_RX;
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        /* The edge NIC has no ring: the polling task reads the one frame
         * latched behind the disabled line (its status register). */
        if (quota > 0 && (c->pending & bit)) {
            sim_pkt p = c->latched[0];
            c->pending &= ~bit;
            if (s->posted.len == 0) {
                s->cur_bin.received++;
                s->flow_st[p.flow].received++;
                count_drop(s, &p, RTSIM_DROP_RING_FULL);
            } else {
                p.buf = fifo_pop(&s->posted).buf;
                dma_write(s, &p);
                bool stop, left;
                cost += rx_frame(s, now, now, p, &stop, &left) + (uint64_t)k->poll_per_packet_ns;
            }
        }
        s->rxst.polls++;
        s->rxst.poll_ns += cost;
        return cost;
    }
    while (quota > 0 && s->filled.len > 0) {
        sim_pkt p = fifo_pop(&s->filled);
        bool stop, left;
        const uint64_t c = rx_frame(s, now, now, p, &stop, &left);
        if (left) {
            fifo_unpop(&s->filled, p);
            break;
        }
        cost += c + (uint64_t)k->poll_per_packet_ns;
        quota--;
        if (stop) break;
    }
    if (s->filled.len == 0) c->pending &= ~bit;
    s->rxst.polls++;
    s->rxst.poll_ns += cost;
    return cost;
}
