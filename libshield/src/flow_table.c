/* Receive flows and their per-flow deferrable servers (Behnke et al.
 * Definition 1, §5.5, §5.6). */
#include "rtshield/rts_flow_table.h"

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

static bool server_consume(rts_flow *f, rts_time_ns now)
{
    if (!f->limited) {
        return true;
    }
    if (!rts_dserver_can_serve(&f->server, now, 1u)) {
        return false;
    }
    return rts_dserver_consume(&f->server, now, 1u) == RTS_OK;
}

/* ---- table -------------------------------------------------------------- */

static void flow_clear(rts_flow *f)
{
    f->in_use = 0u;
    f->proto = 0u;
    f->prio = 0u;
    f->limited = 0u;
    f->local_port = 0u;
    f->queue_limit = (uint16_t)RTS_POOL_MAX_BUFS;
    f->src_addr = 0u;
    f->capacity = 0u;
    f->period = 0u;
    f->server_period = 0u;
    f->server.budget = 0u;
    f->server.period_ns = 0u;
    f->server.period_start = 0u;
    f->server.remaining = 0u;
    f->server.overruns = 0u;
    f->admitted = 0u;
    f->limited_drops = 0u;
}

static void special(rts_flow *f, unsigned prio, uint32_t capacity, rts_time_ns period, rts_time_ns now)
{
    flow_clear(f);
    f->in_use = 1u;
    f->prio = (uint8_t)prio;
    f->capacity = capacity;
    f->server_period = period;
    server_restart(f, now);
}

void rts_flow_table_init(rts_flow_table *t, rts_time_ns now)
{
    for (unsigned i = 0; i < RTS_FLOW_MAX; i++) {
        flow_clear(&t->flows[i]);
    }
    special(&t->flows[RTS_FLOW_ARP], RTS_FLOW_ARP_PRIO, RTS_FLOW_ARP_CAPACITY, RTS_FLOW_ARP_PERIOD_NS, now);
    special(&t->flows[RTS_FLOW_ICMP], RTS_FLOW_ICMP_PRIO, RTS_FLOW_ICMP_CAPACITY, RTS_FLOW_ICMP_PERIOD_NS,
            now);
    special(&t->flows[RTS_FLOW_BACKGROUND], 0u, 0u, 0u, now);
    special(&t->flows[RTS_FLOW_DEFAULT], 0u, 0u, 0u, now);
}

rts_err rts_flow_bind(rts_flow_table *t, unsigned proto, unsigned local_port, uint32_t src_addr,
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
    *id = (uint8_t)free_slot;
    return RTS_OK;
}

rts_err rts_flow_setopt(rts_flow_table *t, unsigned id, unsigned opt, uint64_t value, rts_time_ns now)
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
        server_restart(f, now);
        return RTS_OK;
    case RTS_FLOWOPT_CAPACITY:
        if (value > 0xFFFFFFFFu) return RTS_EINVAL;
        f->capacity = (uint32_t)value;
        server_restart(f, now);
        return RTS_OK;
    case RTS_FLOWOPT_SERVER_PERIOD_NS:
        f->server_period = value;
        server_restart(f, now);
        return RTS_OK;
    case RTS_FLOWOPT_SOURCE_ADDR:
        if (id < RTS_FLOW_FIRST_USER || value > 0xFFFFFFFFu) return RTS_EINVAL;
        f->src_addr = (uint32_t)value;
        return RTS_OK;
    case RTS_FLOWOPT_QUEUE_LIMIT:
        if (value == 0u || value > RTS_POOL_MAX_BUFS) return RTS_EINVAL;
        f->queue_limit = (uint16_t)value;
        return RTS_OK;
    default:
        return RTS_EINVAL;
    }
}

rts_err rts_flow_unbind(rts_flow_table *t, unsigned id)
{
    if (id < RTS_FLOW_FIRST_USER || id >= RTS_FLOW_MAX || !t->flows[id].in_use) {
        return RTS_ENOENT;
    }
    flow_clear(&t->flows[id]);
    return RTS_OK;
}

uint8_t rts_flow_lookup_isr(const rts_flow_table *t, unsigned proto, unsigned local_port, uint32_t src_addr)
{
    uint8_t wildcard = RTS_FLOW_DEFAULT;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) {
        const rts_flow *f = &t->flows[i];
        if (!f->in_use || f->proto != proto || f->local_port != local_port) {
            continue;
        }
        if (f->src_addr == src_addr && src_addr != 0u) {
            return (uint8_t)i;
        }
        if (f->src_addr == 0u && wildcard == RTS_FLOW_DEFAULT) {
            wildcard = (uint8_t)i;
        }
    }
    return wildcard;
}

bool rts_flow_admit_isr(rts_flow_table *t, unsigned id, rts_time_ns now)
{
    if (id >= RTS_FLOW_MAX) {
        return false;
    }
    rts_flow *f = &t->flows[id];
    if (server_consume(f, now)) {
        f->admitted++;
        return true;
    }
    f->limited_drops++;
    return false;
}

unsigned rts_flow_prio(const rts_flow_table *t, unsigned id)
{
    return id < RTS_FLOW_MAX ? t->flows[id].prio : 0u;
}
