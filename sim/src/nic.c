/* The NICs: the edge-triggered NIC (one frame latched behind its RX line,
 * optionally behind libshield's countdown filter), the DMA ring (with the
 * receive path: posted buffers the NIC writes frames into), and the
 * multiqueue NIC (its queues, distribution map and interrupt moderation are
 * libshield's rts_nic_moderation). A frame that reaches a NIC asserts the
 * RX line, waits in the NIC, or is dropped with its reason. */
#include "nic.h"

#include "measure.h"

#include "rtshield/rts_classifier.h"

#include <string.h>

/* The multiqueue NIC's distribution map keys (Behnke §7.3): protocol and
 * destination port; portless frames use port 0. */
unsigned nic_proto(const rtsim_flow_cfg *f)
{
    switch (f->proto) {
    case RTSIM_PROTO_TCP: return RTS_PROTO_TCP;
    case RTSIM_PROTO_UDP: return RTS_PROTO_UDP;
    case RTSIM_PROTO_ICMP: return RTS_NIC_PROTO_ICMP;
    default: return RTS_NIC_PROTO_NONTRANSPORT;
    }
}

unsigned nic_port(const rtsim_flow_cfg *f)
{
    return f->proto == RTSIM_PROTO_TCP || f->proto == RTSIM_PROTO_UDP ? (f->dst_port & 0xFFFFu) : 0u;
}

/* The NIC (or the edge ISR) writes flow `p->flow`'s frame into buffer p->buf. */
void dma_write(rtsim *s, const sim_pkt *p)
{
    uint32_t len = s->tmpl_len[p->flow];
    const uint8_t *src = s->tmpl + (size_t)p->flow * RTSIM_FRAME_MAX;
    if (s->trace_src[p->flow].n) src = trace_frame(&s->trace_src[p->flow], p->frame, &len);
    memcpy(s->bufmem + (size_t)p->buf * RTSIM_FRAME_MAX, src, len < 128u ? len : 128u);
}

/* Length of the frame packet `p` carries. */
uint32_t pkt_len(const rtsim *s, const sim_pkt *p)
{
    uint32_t len = s->tmpl_len[p->flow];
    if (s->trace_src[p->flow].n) (void)trace_frame(&s->trace_src[p->flow], p->frame, &len);
    return len;
}

/* The edge NIC asserts the RX line for packet `p`: latched once when the
 * line is pending already or disabled, further assertions lost. */
static void raise_rx(rtsim *s, sim_core *c, sim_pkt p)
{
    const uint32_t src = s->cfg.flows[p.flow].source;
    const uint32_t bit = 1u << (LINE_RX + src);
    s->cur_bin.irq_raised++;
    if (c->pending & bit) {
        s->cur_bin.irq_lost++;
        count_drop(s, &p, (c->enabled & bit) ? RTSIM_DROP_IRQ_OVERRUN : RTSIM_DROP_LINE_DISABLED);
    } else {
        c->pending |= bit;
        c->latched[src] = p;
    }
}

/* The ring's RX line (DMA ring, multiqueue): raised for the frames it holds;
 * raised again while pending it is coalesced (the ISR takes them anyway). */
static void raise_ring_rx(rtsim *s, sim_core *c)
{
    const uint32_t bit = 1u << LINE_RX;
    s->cur_bin.irq_raised++;
    if (c->pending & bit) s->cur_bin.irq_lost++;
    c->pending |= bit;
}

/* Queue `q` interrupts: its waiting descriptors are announced to the host
 * (Table 1's base/next-base swap) and the RX line is raised. */
static void nic_announce(rtsim *s, unsigned q)
{
    sim_core *c = rx_core(s);
    sim_fifo *host = s->cfg.rx.enabled ? &s->filled : &s->ring;
    while (s->nicq[q].len > 0) {
        sim_pkt p = fifo_pop(&s->nicq[q]);
        if (!fifo_push(host, p)) {
            count_drop(s, &p, RTSIM_DROP_RING_FULL); /* the host has not taken the last batches */
            if (p.buf != RTS_BUF_NONE) {
                sim_pkt e = {0, 0, p.buf, 0, 0, 0};
                (void)fifo_push(&s->posted, e);
            }
        }
    }
    raise_ring_rx(s, c);
}

/* Arm the NIC model's next timer event (the earliest queue expiry). A
 * pending EV_NIC at or before the expiry does (firing early, it finds
 * nothing expired and re-arms), so frames that restart a packet timer add
 * no events. Only an expiry earlier than every pending EV_NIC adds one; the
 * later ones stay and fire early in their turn. Each queue's timer
 * deadlines only move later, so pending events that get ever earlier come
 * from different timers: at most two per queue, plus one for an expiry
 * already due (SIM_NIC_PENDING), and a flood at any rate fits the heap. */
static void nic_schedule(rtsim *s)
{
    const rts_time_ns next = rts_nic_moderation_next_expiry(&s->nic);
    if (next == 0 || next >= s->cfg.duration_ns) return;
    const uint64_t at = next < s->now ? s->now : next;
    if (s->nic_npend > 0 && s->nic_pend[s->nic_npend - 1] <= at) return;
    if (s->nic_npend == SIM_NIC_PENDING) {
        fail(s, "NIC timer events beyond two per queue");
        return;
    }
    s->nic_pend[s->nic_npend++] = at;
    push_event(s, at, EV_NIC, EV_NIC, 0, 0);
}

/* The distribution map's keys of a recorded frame: libshield's classifier
 * reads its real bytes (a malformed or portless frame has port 0). */
static void trace_keys(const rtsim *s, const sim_pkt *p, unsigned *proto, unsigned *port)
{
    uint32_t len;
    const uint8_t *fr = trace_frame(&s->trace_src[p->flow], p->frame, &len);
    rts_classifier_info ci;
    (void)rts_classifier_parse_isr(fr, len, &ci);
    switch (ci.kind) {
    case RTS_CLASSIFIER_TCP: *proto = RTS_PROTO_TCP; break;
    case RTS_CLASSIFIER_UDP: *proto = RTS_PROTO_UDP; break;
    case RTS_CLASSIFIER_ICMP: *proto = RTS_NIC_PROTO_ICMP; break;
    default: *proto = RTS_NIC_PROTO_NONTRANSPORT; break;
    }
    *port = ci.kind == RTS_CLASSIFIER_TCP || ci.kind == RTS_CLASSIFIER_UDP ? ci.local_port : 0u;
}

/* A frame reaches the multiqueue NIC: libshield's rts_nic_moderation_rx() decides. */
static void nic_arrival(rtsim *s, sim_pkt p, uint64_t now)
{
    const rtsim_flow_cfg *f = &s->cfg.flows[p.flow];
    unsigned proto = nic_proto(f), port = nic_port(f);
    if (s->trace_src[p.flow].n) trace_keys(s, &p, &proto, &port);
    if (s->cfg.rx.enabled && s->posted.len == 0 && rts_nic_moderation_lookup(&s->nic, proto, port) >= 0) {
        count_drop(s, &p, RTSIM_DROP_RING_FULL); /* mapped, but no buffer to DMA into */
        return;
    }
    rts_nic_moderation_rx_result r;
    rts_nic_moderation_rx(&s->nic, proto, port, now, &r);
    if (r.outcome == RTS_NIC_UNREGISTERED) {
        count_drop(s, &p, RTSIM_DROP_NIC_UNREGISTERED);
        return;
    }
    if (r.outcome == RTS_NIC_QUEUE_FULL) {
        count_drop(s, &p, RTSIM_DROP_NIC_QUEUE_FULL);
        return;
    }
    if (s->cfg.rx.enabled) {
        p.buf = fifo_pop(&s->posted).buf;
        dma_write(s, &p);
    }
    if (!fifo_push(&s->nicq[r.queue], p)) fail(s, "NIC queue overflow"); /* rts_nic_moderation bounds it */
    if (r.irq) nic_announce(s, r.queue);
    nic_schedule(s);
}

/* Descriptors the host side holds for the multiqueue NIC: each queue's
 * size twice (the batch being taken and the next, Table 1's two bases). */
uint32_t nic_host_slots(const rtsim_config *cfg)
{
    uint32_t n = 0;
    for (uint32_t q = 0; q < cfg->n_nic_queues && q < RTSIM_MAX_NIC_QUEUES; q++)
        n += 2u * cfg->nic_queues[q].size;
    return n;
}

/* The multiqueue NIC: its queues in order (queue q has id q) and the map. */
bool nic_setup(rtsim *s)
{
    const rtsim_config *c = &s->cfg;
    rts_nic_moderation_init(&s->nic);
    for (uint32_t q = 0; q < c->n_nic_queues; q++) {
        const rtsim_nic_queue_cfg *n = &c->nic_queues[q];
        uint8_t qid;
        if (rts_nic_moderation_queue_add(&s->nic, n->size, (rts_time_ns)n->t_abs_ns, (rts_time_ns)n->t_pack_ns,
                              n->frames, 0u, 0u, &qid) != RTS_OK ||
            qid != q || !fifo_init(&s->nicq[q], n->size))
            return false;
    }
    for (uint32_t i = 0; i < c->n_flows; i++) {
        const rtsim_flow_cfg *f = &c->flows[i];
        if (f->nic_queue == RTSIM_NIC_UNMAPPED) continue;
        const rts_err e = rts_nic_moderation_map_add(&s->nic, nic_proto(f), nic_port(f), f->nic_queue);
        if (e != RTS_OK && e != RTS_EEXIST) return false;
    }
    return true;
}

/* A frame reaches the NIC: it asserts the RX line (edge, through the
 * countdown filter when there is one), is written into the DMA ring (with
 * the receive path, into the next posted buffer), or goes to the multiqueue
 * NIC's moderation; or it is dropped. */
void nic_receive(rtsim *s, sim_pkt p, uint64_t now)
{
    sim_core *c = rx_core(s);
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        if (!hook_is_filter(&s->hk)) {
            raise_rx(s, c, p);
        } else {
            /* A hardware filter in front of the interrupt controller. */
            uint64_t zero_at;
            switch (hook_filter_arrival(&s->hk, now, &zero_at)) {
            case 0:
                count_drop(s, &p, RTSIM_DROP_MITIGATION);
                s->mst.drops++;
                break;
            case 1:
                raise_rx(s, c, p);
                break;
            case 2:
                raise_rx(s, c, c->filter_pkt);
                c->filter_pkt = p;
                break;
            default:
                c->filter_pkt = p;
                break;
            }
            if (zero_at != SIM_INF) push_event(s, zero_at, EV_FILTER, EV_FILTER, 0, 0);
        }
    } else if (s->cfg.nic_kind == RTSIM_NIC_MULTIQUEUE) {
        nic_arrival(s, p, now);
    } else if (s->cfg.rx.enabled) {
        /* DMA into the next posted buffer of the descriptor ring. */
        if (s->posted.len == 0) {
            count_drop(s, &p, RTSIM_DROP_RING_FULL);
        } else {
            p.buf = fifo_pop(&s->posted).buf;
            dma_write(s, &p);
            if (!fifo_push(&s->filled, p)) fail(s, "descriptor ring overflow");
            if (!s->cfg.rx_on_tick) raise_ring_rx(s, c);
        }
    } else {
        if (!fifo_push(&s->ring, p)) {
            count_drop(s, &p, RTSIM_DROP_RING_FULL);
        } else if (!s->cfg.rx_on_tick) {
            raise_ring_rx(s, c);
        }
    }
}

/* The tick, with cfg.rx_on_tick: the RX interrupt for the frames the DMA
 * ring holds now (the FreeRTOS POSIX port's tick hook is its RX interrupt);
 * the tick's own handler runs first (its line is the higher). */
void nic_tick(rtsim *s)
{
    if (!s->cfg.rx_on_tick || (s->cfg.rx.enabled ? s->filled.len : s->ring.len) == 0) return;
    raise_ring_rx(s, rx_core(s));
}

/* True when an arrival of flow f now would find the device exactly as the
 * last one left it and be dropped changing nothing but counters (the edge
 * NIC's line already pending, or behind a disabled line; a full DMA ring):
 * *why its drop reason, *irq whether it asserts the line (lost_arrivals()). */
bool nic_drops_next(const rtsim *s, uint32_t f, rtsim_drop *why, bool *irq)
{
    const sim_core *c = &s->core[s->cfg.nic_core];
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        const uint32_t bit = 1u << (LINE_RX + s->cfg.flows[f].source);
        if (hook_is_filter(&s->hk) || !(c->pending & bit)) return false;
        *why = (c->enabled & bit) ? RTSIM_DROP_IRQ_OVERRUN : RTSIM_DROP_LINE_DISABLED;
        *irq = true;
    } else if (s->cfg.nic_kind == RTSIM_NIC_MULTIQUEUE) {
        return false;
    } else if (s->cfg.rx.enabled ? s->posted.len == 0 : s->ring.len == s->ring.cap) {
        *why = RTSIM_DROP_RING_FULL;
        *irq = false;
    } else {
        return false;
    }
    return true;
}

/* The multiqueue NIC's timers at `now`: the queues whose timer expired
 * interrupt. True when one did (the scheduler's turn). */
bool nic_expire(rtsim *s, uint64_t now)
{
    s->nic_npend--; /* the earliest pending one */
    const uint32_t mask = rts_nic_moderation_expire(&s->nic, now);
    for (unsigned q = 0; q < RTSIM_MAX_NIC_QUEUES; q++)
        if (mask & (1u << q)) nic_announce(s, q);
    nic_schedule(s);
    return mask != 0;
}

/* The countdown filter's count reached zero: the arrival latched behind it
 * asserts the line (when libshield says so). */
void nic_filter_zero(rtsim *s, uint64_t now)
{
    sim_core *c = rx_core(s);
    if (hook_filter_zero(&s->hk, now)) raise_rx(s, c, c->filter_pkt);
}
