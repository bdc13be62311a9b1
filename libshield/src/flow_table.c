/* Receive flows and their per-flow deferrable servers (Behnke et al.
 * Definition 1, §5.5, §5.6). */
#include "rtshield/rts_flow_table.h"

#include "flow_lookup.h"
#include "rts_compiler.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_RX_PATH

RTS_STATIC_ASSERT(RTS_FLOW_MAX <= 255, "flow ids are one byte in the index slots");

/* ---- per-flow deferrable server ---------------------------------------
 * Budget in packets (each packet one unit of work, Behnke §5.5), full at the
 * start of each server period, one unit per admitted packet. */

static rts_time_ns server_period(const rts_flow *f)
{
    return f->server_period != 0u ? f->server_period : f->period;
}

static void server_restart(rts_flow *f, rts_time_ns now)
{
    const rts_time_ns p = server_period(f);
    f->limited = (f->capacity != 0u && p != 0u) ? 1u : 0u;
    if (f->limited) {
        (void)rts_dserver_init(&f->server, f->capacity, p, now);
    }
}

/* One unit of a limited flow's server, the admission counted: the rest of
 * rts_flow_table_admit_isr(). */
static bool server_take(rts_flow *f)
{
    if (f->server.remaining == 0u) {
        f->limited_drops++;
        return false;
    }
    f->server.remaining--;
    f->admitted++;
    return true;
}

/* A server period has ended: replenish (rts_dserver_update()), then take.
 * Out of line, so that the common case saves no registers for the call. */
RTS_NOINLINE static bool server_take_after_update(rts_flow *f, rts_time_ns now)
{
    rts_dserver_update(&f->server, now);
    return server_take(f);
}

/* ---- table -------------------------------------------------------------- */

static void flow_clear(rts_flow *f)
{
    *f = (rts_flow){.queue_limit = (uint16_t)RTS_POOL_MAX_BUFS}; /* every other field 0: unbound */
}

/* A cleared special flow gets its priority and server (Behnke §5.6). */
static void special(rts_flow *f, unsigned prio, uint32_t capacity, rts_time_ns period, rts_time_ns now)
{
    f->prio = (uint8_t)prio;
    f->capacity = capacity;
    f->server_period = period;
    server_restart(f, now);
}

/* ---- lookup index (flow_lookup.h reads it) -------------------------------
 * Rebuilt from the flows at every change, in task context: for each of a
 * few odd multipliers, place every bound user flow by linear probing (in
 * flow-id order, so for equal keys the lowest id is kept, as the linear
 * scan it replaces did) and keep the multiplier with the shortest longest
 * probe. With at least RTS_FLOW_MAX slots every flow finds a slot. */

static const uint32_t hash_mults[] = {0x9E3779B1u, 0x85EBCA77u, 0xC2B2AE3Du, 0x27D4EB2Fu,
                                      0x165667B1u, 0xFD7046C5u, 0xB55A4F09u, 0x7FEB352Du};

static unsigned index_place(rts_flow_table *t, uint32_t mult)
{
    for (unsigned i = 0; i < RTS_FLOW_INDEX_SLOTS; i++) {
        t->index[i].key = 0u;
        t->index[i].src = 0u;
    }
    unsigned longest = 0u;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) {
        const rts_flow *f = &t->flows[i];
        if (!f->in_use) continue;
        const uint32_t key = rts_flow_table_key(f->proto, f->local_port);
        const unsigned h = rts_flow_table_home(key, f->src_addr, mult);
        for (unsigned n = 0u; n < RTS_FLOW_INDEX_SLOTS; n++) {
            rts_flow_slot *s = &t->index[(h + n) & RTS_FLOW_INDEX_MASK];
            if (s->key == 0u) {
                s->key = key | ((uint32_t)i << 24);
                s->src = f->src_addr;
                if (n > longest) longest = n;
                break;
            }
            if ((s->key & RTS_FLOW_KEY_MASK) == key && s->src == f->src_addr) break; /* lower id kept */
        }
    }
    return longest;
}

static void index_rebuild(rts_flow_table *t)
{
    unsigned n_specific = 0u;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) {
        if (t->flows[i].in_use && t->flows[i].src_addr != 0u) n_specific++;
    }
    const unsigned n_mults = (unsigned)(sizeof hash_mults / sizeof hash_mults[0]);
    unsigned best = 0u, last = 0u;
    unsigned best_len = index_place(t, hash_mults[0]);
    for (unsigned k = 1u; k < n_mults && best_len > 0u; k++) {
        const unsigned len = index_place(t, hash_mults[k]);
        last = k;
        if (len < best_len) {
            best = k;
            best_len = len;
        }
    }
    if (last != best) (void)index_place(t, hash_mults[best]);
    t->mult = hash_mults[best];
    t->probe_max = (uint8_t)best_len;
    t->n_specific = (uint8_t)n_specific;
}

void rts_flow_table_init(rts_flow_table *t, rts_time_ns now)
{
    for (unsigned i = 0; i < RTS_FLOW_MAX; i++) {
        flow_clear(&t->flows[i]);
        t->flows[i].in_use = i < RTS_FLOW_FIRST_USER ? 1u : 0u; /* special flows: always bound */
    }
    special(&t->flows[RTS_FLOW_ARP], RTS_FLOW_ARP_PRIO, RTS_FLOW_ARP_CAPACITY, RTS_FLOW_ARP_PERIOD_NS, now);
    special(&t->flows[RTS_FLOW_ICMP], RTS_FLOW_ICMP_PRIO, RTS_FLOW_ICMP_CAPACITY, RTS_FLOW_ICMP_PERIOD_NS,
            now);
    /* The background and default flows stay as cleared: priority 0, unlimited. */
    t->pad[0] = t->pad[1] = 0u;
    index_rebuild(t);
}

rts_err rts_flow_table_bind(rts_flow_table *t, unsigned proto, unsigned local_port, uint32_t src_addr,
                      uint8_t *id)
{
    if ((proto != RTS_PROTO_TCP && proto != RTS_PROTO_UDP) || local_port == 0u || local_port > 0xFFFFu ||
        id == NULL) {
        return RTS_EINVAL;
    }
    unsigned free_slot = RTS_FLOW_MAX;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) {
        const rts_flow *f = &t->flows[i];
        if (!f->in_use) {
            if (free_slot == RTS_FLOW_MAX) free_slot = i;
            continue;
        }
        if (f->proto == proto && f->local_port == local_port && f->src_addr == src_addr) {
            return RTS_EEXIST;
        }
    }
    if (free_slot == RTS_FLOW_MAX) {
        return RTS_EFULL;
    }
    rts_flow *f = &t->flows[free_slot];
    flow_clear(f);
    f->in_use = 1u;
    f->proto = (uint8_t)proto;
    f->local_port = (uint16_t)local_port;
    f->src_addr = src_addr;
    index_rebuild(t);
    *id = (uint8_t)free_slot;
    return RTS_OK;
}

rts_err rts_flow_table_setopt(rts_flow_table *t, unsigned id, unsigned opt, uint64_t value, rts_time_ns now)
{
    if (id >= RTS_FLOW_MAX || !t->flows[id].in_use) {
        return RTS_ENOENT;
    }
    rts_flow *f = &t->flows[id];
    switch (opt) {
    case RTS_FLOWOPT_PRIORITY:
        if (value >= RTS_FLOW_PRIO_LEVELS) return RTS_EINVAL;
        f->prio = (uint8_t)value;
        return RTS_OK;
    case RTS_FLOWOPT_PERIOD_NS:
        f->period = value;
        break;
    case RTS_FLOWOPT_CAPACITY:
        if (value > 0xFFFFFFFFu) return RTS_EINVAL;
        f->capacity = (uint32_t)value;
        break;
    case RTS_FLOWOPT_SERVER_PERIOD_NS:
        f->server_period = value;
        break;
    case RTS_FLOWOPT_SOURCE_ADDR:
        if (id < RTS_FLOW_FIRST_USER || value > 0xFFFFFFFFu) return RTS_EINVAL;
        f->src_addr = (uint32_t)value;
        index_rebuild(t);
        return RTS_OK;
    case RTS_FLOWOPT_QUEUE_LIMIT:
        if (value == 0u || value > RTS_POOL_MAX_BUFS) return RTS_EINVAL;
        f->queue_limit = (uint16_t)value;
        return RTS_OK;
    default:
        return RTS_EINVAL;
    }
    server_restart(f, now); /* the period, capacity or server period changed */
    return RTS_OK;
}

rts_err rts_flow_table_unbind(rts_flow_table *t, unsigned id)
{
    if (id < RTS_FLOW_FIRST_USER || id >= RTS_FLOW_MAX || !t->flows[id].in_use) {
        return RTS_ENOENT;
    }
    flow_clear(&t->flows[id]);
    index_rebuild(t);
    return RTS_OK;
}

uint8_t rts_flow_table_lookup_isr(const rts_flow_table *t, unsigned proto, unsigned local_port, uint32_t src_addr)
{
    if (proto == 0u || proto > 0xFFu || local_port > 0xFFFFu) {
        return RTS_FLOW_DEFAULT; /* no flow is bound there (and key 0 marks an empty slot) */
    }
    return rts_flow_table_lookup_inline(t, proto, local_port, src_addr);
}

/* rts_dserver_can_serve(1) then rts_dserver_consume(1) in one step (the
 * consumption cannot fail after the check), and the replenishment call
 * only when a server period has ended. */
bool rts_flow_table_admit_isr(rts_flow_table *t, unsigned id, rts_time_ns now)
{
    if (id >= RTS_FLOW_MAX) {
        return false;
    }
    rts_flow *f = &t->flows[id];
    if (f->limited) {
        /* A period has ended (or time ran backwards: the update ignores that). */
        if (now - f->server.period_start >= f->server.period_ns) {
            return server_take_after_update(f, now);
        }
        if (f->server.remaining == 0u) {
            f->limited_drops++;
            return false;
        }
        f->server.remaining--;
    }
    f->admitted++; /* both paths (server_take() after an update) */
    return true;
}

unsigned rts_flow_table_prio(const rts_flow_table *t, unsigned id)
{
    return id < RTS_FLOW_MAX ? t->flows[id].prio : 0u;
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_flow_table_compiled_out; /* ISO C: a translation unit declares something */
#endif
