/* Multiqueue NIC with per-queue interrupt moderation (Behnke et al. §7). */
#include "rtshield/rts_nic_moderation.h"

#include "rts_time.h"

#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_NIC

void rts_nic_moderation_init(rts_nic_moderation *nic)
{
    *nic = (rts_nic_moderation){0}; /* every queue and map entry free, counters at 0 */
}

static bool params_ok(unsigned size, unsigned frames)
{
    return size >= 1u && size <= 0xFFFFu && frames <= size;
}

static bool queue_ok(const rts_nic_moderation *nic, unsigned qid)
{
    return qid < RTS_NIC_MAX_QUEUES && nic->q[qid].active;
}

rts_err rts_nic_moderation_queue_add(rts_nic_moderation *nic, unsigned size, rts_time_ns t_abs, rts_time_ns t_pack, unsigned frames,
                          unsigned flow, unsigned prio, uint8_t *qid)
{
    if (!params_ok(size, frames) || flow > 0xFFu || prio > 0xFFu || qid == NULL) {
        return RTS_EINVAL;
    }
    for (unsigned i = 0; i < RTS_NIC_MAX_QUEUES; i++) {
        rts_nic_moderation_queue *q = &nic->q[i];
        if (q->active) continue;
        /* Empty, timers stopped, counters at 0. */
        *q = (rts_nic_moderation_queue){.active = 1u,
                                        .flow = (uint8_t)flow,
                                        .prio = (uint8_t)prio,
                                        .size = (uint16_t)size,
                                        .frames = (uint16_t)frames,
                                        .t_abs = t_abs,
                                        .t_pack = t_pack};
        *qid = (uint8_t)i;
        return RTS_OK;
    }
    return RTS_EFULL;
}

rts_err rts_nic_moderation_queue_config(rts_nic_moderation *nic, unsigned qid, unsigned size, rts_time_ns t_abs, rts_time_ns t_pack,
                             unsigned frames)
{
    if (!queue_ok(nic, qid)) return RTS_ENOENT;
    if (!params_ok(size, frames)) return RTS_EINVAL;
    rts_nic_moderation_queue *q = &nic->q[qid];
    q->size = (uint16_t)size;
    q->t_abs = t_abs;
    q->t_pack = t_pack;
    q->frames = (uint16_t)frames;
    return RTS_OK;
}

rts_err rts_nic_moderation_queue_release(rts_nic_moderation *nic, unsigned qid)
{
    if (!queue_ok(nic, qid)) return RTS_ENOENT;
    for (unsigned i = 0; i < RTS_NIC_MAP_MAX; i++) {
        if (nic->map[i].used && nic->map[i].queue == qid) nic->map[i].used = 0u;
    }
    rts_nic_moderation_queue *q = &nic->q[qid];
    q->dropped += q->count;
    q->count = 0u;
    q->abs_at = 0u;
    q->pack_at = 0u;
    q->active = 0u;
    return RTS_OK;
}

static int map_find(const rts_nic_moderation *nic, unsigned proto, unsigned port)
{
    for (unsigned i = 0; i < RTS_NIC_MAP_MAX; i++) {
        const rts_nic_moderation_map_entry *m = &nic->map[i];
        if (m->used && m->proto == proto && m->port == port) return (int)i;
    }
    return -1;
}

static bool portless(unsigned proto)
{
    return proto == RTS_NIC_PROTO_NONTRANSPORT || proto == RTS_NIC_PROTO_ICMP;
}

static bool map_key_ok(unsigned proto, unsigned port)
{
    if (portless(proto)) return port == 0u;
    return (proto == RTS_PROTO_TCP || proto == RTS_PROTO_UDP) && port >= 1u && port <= 0xFFFFu;
}

rts_err rts_nic_moderation_map_add(rts_nic_moderation *nic, unsigned proto, unsigned port, unsigned qid)
{
    if (!map_key_ok(proto, port)) return RTS_EINVAL;
    if (!queue_ok(nic, qid)) return RTS_ENOENT;
    if (map_find(nic, proto, port) >= 0) return RTS_EEXIST;
    for (unsigned i = 0; i < RTS_NIC_MAP_MAX; i++) {
        rts_nic_moderation_map_entry *m = &nic->map[i];
        if (m->used) continue;
        *m = (rts_nic_moderation_map_entry){
            .used = 1u, .proto = (uint8_t)proto, .queue = (uint8_t)qid, .port = (uint16_t)port};
        return RTS_OK;
    }
    return RTS_EFULL;
}

rts_err rts_nic_moderation_map_remove(rts_nic_moderation *nic, unsigned proto, unsigned port)
{
    const int i = map_find(nic, proto, port);
    if (i < 0) return RTS_ENOENT;
    nic->map[i].used = 0u;
    return RTS_OK;
}

rts_err rts_nic_moderation_bind(rts_nic_moderation *nic, unsigned proto, unsigned port, unsigned size, rts_time_ns t_abs,
                     rts_time_ns t_pack, unsigned frames, unsigned flow, unsigned prio, uint8_t *qid)
{
    if (!map_key_ok(proto, port)) return RTS_EINVAL;
    if (map_find(nic, proto, port) >= 0) return RTS_EEXIST;
    uint8_t q;
    rts_err e = rts_nic_moderation_queue_add(nic, size, t_abs, t_pack, frames, flow, prio, &q);
    if (e != RTS_OK) return e;
    e = rts_nic_moderation_map_add(nic, proto, port, q);
    if (e != RTS_OK) {
        (void)rts_nic_moderation_queue_release(nic, q);
        return e;
    }
    *qid = q;
    return RTS_OK;
}

rts_err rts_nic_moderation_unbind(rts_nic_moderation *nic, unsigned proto, unsigned port)
{
    const int i = map_find(nic, proto, port);
    if (i < 0) return RTS_ENOENT;
    const unsigned qid = nic->map[i].queue;
    nic->map[i].used = 0u;
    for (unsigned k = 0; k < RTS_NIC_MAP_MAX; k++) {
        if (nic->map[k].used && nic->map[k].queue == qid) return RTS_OK;
    }
    return rts_nic_moderation_queue_release(nic, qid);
}

/* Interrupt: announce the waiting descriptors, stop the timers. */
static uint16_t fire(rts_nic_moderation_queue *q)
{
    q->announced = q->count;
    q->count = 0u;
    q->abs_at = 0u;
    q->pack_at = 0u;
    q->irqs++;
    return q->announced;
}

int rts_nic_moderation_lookup(const rts_nic_moderation *nic, unsigned proto, unsigned port)
{
    const int i = map_find(nic, proto, portless(proto) ? 0u : port);
    return i < 0 ? -1 : (int)nic->map[i].queue;
}

void rts_nic_moderation_rx(rts_nic_moderation *nic, unsigned proto, unsigned port, rts_time_ns now, rts_nic_moderation_rx_result *r)
{
    *r = (rts_nic_moderation_rx_result){.outcome = RTS_NIC_UNREGISTERED};
    const int i = map_find(nic, proto, portless(proto) ? 0u : port);
    if (i < 0) {
        nic->unregistered++;
        return;
    }
    const unsigned qid = nic->map[i].queue;
    rts_nic_moderation_queue *q = &nic->q[qid];
    r->queue = (uint8_t)qid;
    if (q->count >= q->size) {
        q->dropped++;
        r->outcome = RTS_NIC_QUEUE_FULL;
        return;
    }
    r->outcome = RTS_NIC_STORED;
    q->stored++;
    if (q->count == 0u && q->t_abs != 0u) {
        q->abs_at = rts_time_add(now, q->t_abs);
    }
    q->count++;
    if (q->t_pack != 0u) {
        q->pack_at = rts_time_add(now, q->t_pack);
    }
    const bool unmoderated = q->t_abs == 0u && q->t_pack == 0u && q->frames == 0u;
    if (unmoderated || (q->frames != 0u && q->count >= q->frames)) {
        r->irq = 1u;
        r->announced = fire(q);
    }
}

static rts_time_ns queue_expiry(const rts_nic_moderation_queue *q)
{
    if (q->abs_at == 0u) return q->pack_at;
    if (q->pack_at == 0u) return q->abs_at;
    return q->abs_at < q->pack_at ? q->abs_at : q->pack_at;
}

rts_time_ns rts_nic_moderation_next_expiry(const rts_nic_moderation *nic)
{
    rts_time_ns best = 0u;
    for (unsigned i = 0; i < RTS_NIC_MAX_QUEUES; i++) {
        if (!nic->q[i].active) continue;
        const rts_time_ns e = queue_expiry(&nic->q[i]);
        if (e != 0u && (best == 0u || e < best)) best = e;
    }
    return best;
}

uint32_t rts_nic_moderation_expire(rts_nic_moderation *nic, rts_time_ns now)
{
    uint32_t mask = 0u;
    for (unsigned i = 0; i < RTS_NIC_MAX_QUEUES; i++) {
        rts_nic_moderation_queue *q = &nic->q[i];
        if (!q->active) continue;
        const rts_time_ns e = queue_expiry(q);
        if (e != 0u && e <= now) {
            (void)fire(q);
            mask |= 1u << i;
        }
    }
    return mask;
}

rts_err rts_nic_moderation_describe(const rts_nic_moderation *nic, unsigned qid, rts_nic_moderation_desc *d)
{
    if (!queue_ok(nic, qid)) return RTS_ENOENT;
    const rts_nic_moderation_queue *q = &nic->q[qid];
    *d = (rts_nic_moderation_desc){.queue = (uint8_t)qid, .flow = q->flow, .prio = q->prio};
    return RTS_OK;
}

unsigned rts_nic_moderation_queue_count(const rts_nic_moderation *nic)
{
    unsigned n = 0u;
    for (unsigned i = 0; i < RTS_NIC_MAX_QUEUES; i++) n += nic->q[i].active;
    return n;
}

uint32_t rts_nic_moderation_memory_bytes(uint32_t m)
{
    return m * 30u + 14u;
}


uint64_t rts_nic_moderation_max_irqs(rts_time_ns t_abs, rts_time_ns t_pack, uint32_t frames,
                                     rts_time_ns delta_ns)
{
    if (delta_ns == 0u) {
        return 0u;
    }
    if (frames != 0u) {
        return UINT64_MAX; /* a frame threshold interrupts as fast as frames arrive */
    }
    /* the shorter of the timers that are on; both off (0): every frame interrupts */
    const rts_time_ns gap = t_abs == 0u ? t_pack : (t_pack == 0u || t_abs < t_pack ? t_abs : t_pack);
    return rts_time_ceil_div(delta_ns, gap);
}

#else /* RTS_CONFIG_NIC == 0: compiled out (rts_opts.h) */
typedef int rts_nic_moderation_compiled_out; /* ISO C: a translation unit declares something */
#endif
