/* libFuzzer target: the multiqueue NIC's configuration and moderation
 * (rts_nic_*, Behnke et al. §7) from arbitrary configuration and event
 * streams, and the §7.3.2 parameter checks (rts_nic_params_*) on arbitrary
 * values. Time advances as a simulator's would: before each event at `now`
 * every timer due by then fires (rts_nic_moderation_next_expiry() / rts_nic_moderation_expire()).
 *
 * Findings (abort, or a sanitizer report):
 *   - a running timer (absolute or packet) set to expire before `now`: a
 *     deadline in the past (time additions must saturate, never wrap);
 *   - a timer running on an empty queue, a queue holding more than its size
 *     allows ever allowed, an interrupt announcing nothing;
 *   - interrupts not bounded: more interrupts than frames stored, or the
 *     timer loop needing more rounds than there are queues;
 *   - frames not conserved: offered != stored + dropped (full) + unregistered,
 *     or stored != announced + waiting + discarded at release;
 *   - a rejected configuration call that changed the NIC;
 *   - the parameter checks disagreeing with the §7.3.2 formulas evaluated
 *     here in 128-bit arithmetic (saturating products, the bounds' bits). */
#include <stdlib.h>
#include <string.h>

#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_nic_moderation.h"
#include "rtshield/rts_nic_params.h"

#include "fuzz_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A time: small, moderate, arbitrary, or near the top of the type. */
static rts_time_ns any_time(reader *r)
{
    const uint8_t sel = u8(r);
    switch (sel & 3u) {
    case 0: return sel >> 2;                   /* 0..63 ns */
    case 1: return ubytes(r, 3);                  /* up to 16 ms */
    case 2: return ubytes(r, 8);                  /* anything */
    default: return UINT64_MAX - ubytes(r, 2);    /* near the top */
    }
}

static const unsigned protos[] = {RTS_PROTO_UDP, RTS_PROTO_TCP, RTS_NIC_PROTO_ICMP, RTS_NIC_PROTO_NONTRANSPORT, 2u, 255u};

static unsigned any_proto(reader *r) { return protos[u8(r) % (sizeof protos / sizeof protos[0])]; }

/* A port from a small set (so that frames hit the map) or arbitrary. */
static unsigned any_port(reader *r)
{
    const uint8_t sel = u8(r);
    return sel < 200u ? 1000u + sel % 8u : (unsigned)ubytes(r, 3);
}

static rts_nic_moderation nic;
static uint64_t offered, stored, full, unregistered, announced, discarded, irqs;
static rts_time_ns now;

static uint64_t waiting(void)
{
    uint64_t w = 0;
    for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) {
        if (nic.q[q].active) w += nic.q[q].count;
    }
    return w;
}

static void check_state(void)
{
    must(offered == stored + full + unregistered);
    must(stored == announced + waiting() + discarded);
    must(irqs <= stored);
    for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) {
        const rts_nic_moderation_queue *Q = &nic.q[q];
        if (!Q->active) continue;
        /* A running timer is never in the past, and only runs for a frame. */
        if (Q->abs_at != 0u) must(Q->abs_at >= now && Q->count > 0u);
        if (Q->pack_at != 0u) must(Q->pack_at >= now && Q->count > 0u);
    }
    const rts_time_ns next = rts_nic_moderation_next_expiry(&nic);
    must(next == 0u || next >= now);
}

/* Fire every timer due by `t`, earliest first, as the simulator does. */
static void advance(rts_time_ns t)
{
    now = t;
    for (unsigned round = 0;; round++) {
        const rts_time_ns e = rts_nic_moderation_next_expiry(&nic);
        if (e == 0u || e > now) break;
        must(round <= RTS_NIC_MAX_QUEUES); /* each round fires at least one queue */
        uint64_t before[RTS_NIC_MAX_QUEUES];
        for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) before[q] = nic.q[q].count;
        const uint32_t mask = rts_nic_moderation_expire(&nic, e);
        must(mask != 0u);
        for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) {
            if (!(mask & (1u << q))) continue;
            must(nic.q[q].announced == before[q] && before[q] > 0u && nic.q[q].count == 0u);
            announced += before[q];
            irqs++;
        }
    }
}

/* What callers can observe: active queues, used map entries, counters.
 * (An inactive slot's stale fields are nobody's business.) */
static bool same_observable(const rts_nic_moderation *a, const rts_nic_moderation *b)
{
    for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) {
        if (a->q[q].active != b->q[q].active) return false;
        if (a->q[q].active && memcmp(&a->q[q], &b->q[q], sizeof a->q[q]) != 0) return false;
    }
    for (unsigned i = 0; i < RTS_NIC_MAP_MAX; i++) {
        const rts_nic_moderation_map_entry *x = &a->map[i], *y = &b->map[i];
        if (x->used != y->used) return false;
        if (x->used && (x->proto != y->proto || x->port != y->port || x->queue != y->queue)) return false;
    }
    return a->unregistered == b->unregistered;
}

/* After a configuration call: a queue that was released discarded its
 * waiting frames (counted as dropped); any other queue kept them. */
static void config_accounting(const rts_nic_moderation *before)
{
    for (unsigned q = 0; q < RTS_NIC_MAX_QUEUES; q++) {
        const rts_nic_moderation_queue *b = &before->q[q], *a = &nic.q[q];
        if (!b->active) continue;
        if (!a->active) {
            must(a->dropped == b->dropped + b->count && a->count == 0u && a->abs_at == 0u && a->pack_at == 0u);
            discarded += b->count;
        } else {
            must(a->count == b->count && a->abs_at == b->abs_at && a->pack_at == b->pack_at);
        }
    }
}

static void run_nic(reader *r)
{
    rts_nic_moderation_init(&nic);
    offered = stored = full = unregistered = announced = discarded = irqs = 0;
    now = any_time(r) >> (u8(r) % 64u);
    unsigned steps = 0;
    while (r->n > 0 && steps++ < 256u) {
        const uint8_t op = u8(r);
        static rts_nic_moderation before;
        if (op % 10u < 6u) memcpy(&before, &nic, sizeof before);
        rts_err e = RTS_OK;
        switch (op % 10u) {
        case 0: {
            const unsigned proto = any_proto(r), port = any_port(r);
            const unsigned sz = (unsigned)ubytes(r, 2) % 80u, frames = u8(r) % 90u;
            const rts_time_ns t_abs = any_time(r), t_pack = any_time(r);
            uint8_t qid = 0xFF;
            e = rts_nic_moderation_bind(&nic, proto, port, sz, t_abs, t_pack, frames, u8(r), u8(r), &qid);
            if (e == RTS_OK) must(qid < RTS_NIC_MAX_QUEUES && nic.q[qid].active && rts_nic_moderation_lookup(&nic, proto, port) == qid);
            break;
        }
        case 1:
            e = rts_nic_moderation_unbind(&nic, any_proto(r), any_port(r));
            break;
        case 2: {
            const unsigned qid = u8(r) % (RTS_NIC_MAX_QUEUES + 2u);
            const unsigned sz = (unsigned)ubytes(r, 3) % 70000u, frames = u8(r) % 90u;
            const rts_time_ns t_abs = any_time(r), t_pack = any_time(r);
            e = rts_nic_moderation_queue_config(&nic, qid, sz, t_abs, t_pack, frames);
            break;
        }
        case 3: {
            const unsigned qid = u8(r) % (RTS_NIC_MAX_QUEUES + 2u);
            e = rts_nic_moderation_queue_release(&nic, qid);
            if (e == RTS_OK) must(!nic.q[qid].active);
            break;
        }
        case 4: {
            const unsigned proto = any_proto(r), port = any_port(r), qid = u8(r) % (RTS_NIC_MAX_QUEUES + 2u);
            e = (op & 0x10u) ? rts_nic_moderation_map_remove(&nic, proto, port) : rts_nic_moderation_map_add(&nic, proto, port, qid);
            break;
        }
        case 5: {
            /* queue_add leaves a queue no frame reaches until mapped */
            uint8_t qid;
            e = rts_nic_moderation_queue_add(&nic, (unsigned)ubytes(r, 2) % 80u, any_time(r), any_time(r), u8(r) % 90u, u8(r), u8(r), &qid);
            break;
        }
        default: {
            /* frames: time advances by a small, large or huge step */
            const uint8_t sel = u8(r);
            const rts_time_ns dt = (sel & 0x80u) ? any_time(r) : (rts_time_ns)(sel & 0x7Fu) * 100u;
            advance(dt > UINT64_MAX - now ? UINT64_MAX : now + dt);
            const unsigned burst = 1u + u8(r) % 8u;
            const unsigned proto = any_proto(r), port = any_port(r);
            for (unsigned k = 0; k < burst; k++) {
                rts_nic_moderation_rx_result res;
                const int q = rts_nic_moderation_lookup(&nic, proto, port);
                const uint64_t had = q >= 0 ? nic.q[q].count : 0u;
                rts_nic_moderation_rx(&nic, proto, port, now, &res);
                offered++;
                must(res.outcome <= RTS_NIC_QUEUE_FULL);
                if (res.outcome == RTS_NIC_UNREGISTERED) {
                    must(q < 0 && !res.irq);
                    unregistered++;
                    continue;
                }
                must(q >= 0 && res.queue == (unsigned)q);
                if (res.outcome == RTS_NIC_QUEUE_FULL) {
                    must(!res.irq && had >= nic.q[q].size);
                    full++;
                    continue;
                }
                stored++;
                if (res.irq) {
                    must(res.announced == had + 1u && nic.q[q].count == 0u);
                    announced += res.announced;
                    irqs++;
                } else {
                    must(nic.q[q].count == had + 1u);
                }
                rts_nic_moderation_desc d;
                must(rts_nic_moderation_describe(&nic, (unsigned)q, &d) == RTS_OK && d.queue == (unsigned)q);
            }
            break;
        }
        }
        if (op % 10u < 6u) {
            if (e != RTS_OK) must(same_observable(&before, &nic));
            config_accounting(&before);
        }
        check_state();
    }
}

/* §7.3.2 in 128-bit arithmetic, saturated at the top of the time type. */
static rts_time_ns sat(unsigned __int128 v) { return v > UINT64_MAX ? UINT64_MAX : (rts_time_ns)v; }

static void run_params(reader *r)
{
    const rts_time_ns t_net = any_time(r);
    const unsigned m = 1u + u8(r) % 6u;
    rts_nic_params_queue q[6];
    uint64_t sum = 0;
    for (unsigned i = 0; i < m; i++) {
        q[i].n_q = (uint32_t)((u8(r) & 1u) ? ubytes(r, 4) : u8(r) % 4u);
        q[i].pad = 0u;
        q[i].t_p = any_time(r);
        q[i].t_d = any_time(r);
        q[i].t_abs = any_time(r);
        q[i].t_pack = any_time(r);
        sum += q[i].n_q;
    }
    const rts_time_ns wcpd = rts_nic_params_wcpd(t_net, sum);
    must(wcpd == sat((unsigned __int128)t_net * sum));
    uint32_t all = 0;
    unsigned first = m;
    for (unsigned i = 0; i < m; i++) {
        const rts_time_ns tqf = rts_nic_params_t_qf(q[i].n_q, q[i].t_p);
        must(tqf == sat((unsigned __int128)q[i].n_q * q[i].t_p));
        const rts_time_ns hi = q[i].t_d > tqf ? q[i].t_d : tqf;
        const rts_time_ns amax = rts_nic_params_t_abs_max(q[i].t_d, tqf, wcpd);
        must(amax == (hi > wcpd ? hi - wcpd : 0u));
        const uint32_t v = rts_nic_params_check(t_net, sum, q[i].n_q, q[i].t_p, q[i].t_d, q[i].t_abs, q[i].t_pack);
        must((v & ~0x1Fu) == 0u);
        must(((v & RTS_NIC_V_SIZE) != 0u) == (q[i].n_q == 0u));
        if (v == 0u) {
            /* every bound holds: t_P <= t_pack <= t_abs <= max(t_d, t_qf) - WCPD */
            must(q[i].t_p <= q[i].t_pack && q[i].t_pack <= q[i].t_abs && q[i].t_abs <= amax && hi > wcpd);
        }
        if (q[i].t_pack < q[i].t_p) must(v & RTS_NIC_V_TPACK_LOW);
        if (hi <= wcpd) must(v & RTS_NIC_V_NO_WINDOW);
        all |= v;
        if (v != 0u && first == m) first = i;
    }
    unsigned bad = 99;
    must(rts_nic_params_validate(q, m, t_net, &bad) == all && bad == first);
    must(rts_nic_params_validate(NULL, m, t_net, NULL) == RTS_NIC_V_SIZE);
    must(rts_nic_params_validate(q, 0, t_net, NULL) == RTS_NIC_V_SIZE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    if (size > 0 && (data[0] & 0xC0u) == 0xC0u) {
        r.p++;
        r.n--;
        run_params(&r);
    } else {
        run_nic(&r);
    }
    return 0;
}
