/* Private to libshield (not for applications): the flow table's O(1)
 * lookup and its admission fast path, inline so that the receive path's
 * ISR makes no call for them. The index is built by flow_table.c
 * (rts_flow_table_init(), bind, unbind, SOURCE_ADDR); this header only
 * reads it. */
#ifndef RTSHIELD_SRC_FLOW_LOOKUP_H
#define RTSHIELD_SRC_FLOW_LOOKUP_H

#include "rtshield/rts_flow_table.h"

#if RTS_FLOW_INDEX_SLOTS == 16
#define RTS_FLOW_INDEX_SHIFT 28u
#elif RTS_FLOW_INDEX_SLOTS == 32
#define RTS_FLOW_INDEX_SHIFT 27u
#elif RTS_FLOW_INDEX_SLOTS == 64
#define RTS_FLOW_INDEX_SHIFT 26u
#elif RTS_FLOW_INDEX_SLOTS == 128
#define RTS_FLOW_INDEX_SHIFT 25u
#else
#define RTS_FLOW_INDEX_SHIFT 24u
#endif
#define RTS_FLOW_INDEX_MASK ((unsigned)RTS_FLOW_INDEX_SLOTS - 1u)
#define RTS_FLOW_KEY_MASK 0x00FFFFFFu

/* Key of (proto, port): proto 1..255 and port < 65536 (callers check), so
 * a key is never 0, the mark of an empty slot. */
static inline uint32_t rts_flow_table_key(unsigned proto, unsigned port)
{
    return ((uint32_t)proto << 16) | (uint32_t)port;
}

/* Home slot of (key, src) under multiplier `mult` (multiplicative hashing:
 * the top bits of the product). */
static inline unsigned rts_flow_table_home(uint32_t key, uint32_t src, uint32_t mult)
{
    return (unsigned)(((key ^ src) * mult) >> RTS_FLOW_INDEX_SHIFT);
}

/* Flow id bound to exactly (key, src), or `none`. At most probe_max + 1
 * slots; an empty slot ends the probe early. */
static inline unsigned rts_flow_table_find(const rts_flow_table *t, uint32_t key, uint32_t src, unsigned none)
{
    const unsigned h = rts_flow_table_home(key, src, t->mult);
    for (unsigned n = 0u;; n++) {
        const rts_flow_slot *s = &t->index[(h + n) & RTS_FLOW_INDEX_MASK];
        const uint32_t k = s->key;
        /* An empty slot (key 0) never matches: every bound key has proto >= 1. */
        if ((k & RTS_FLOW_KEY_MASK) == key && s->src == src) return k >> 24;
        if (k == 0u || n >= t->probe_max) return none;
    }
}

#if RTS_CONFIG_RX_INLINE
/* rts_flow_table_find(t, key, 0, RTS_FLOW_DEFAULT) for a table without
 * source-specific flows (n_specific 0), where every slot's src is 0 (the
 * index is rebuilt with n_specific: flow_table.c), so the src compare can
 * go; the home slot is read without the wrap mask (h < RTS_FLOW_INDEX_SLOTS). */
static inline unsigned rts_flow_table_find_any(const rts_flow_table *t, uint32_t key)
{
    const unsigned h = rts_flow_table_home(key, 0u, t->mult);
    uint32_t k = t->index[h].key;
    if ((k & RTS_FLOW_KEY_MASK) == key) return k >> 24;
    for (unsigned n = 1u; k != 0u && n <= t->probe_max; n++) {
        k = t->index[(h + n) & RTS_FLOW_INDEX_MASK].key;
        if ((k & RTS_FLOW_KEY_MASK) == key) return k >> 24;
    }
    return RTS_FLOW_DEFAULT;
}
#endif

/* rts_flow_table_lookup_isr() for a checked proto (1..255) and port (< 65536). */
static inline uint8_t rts_flow_table_lookup_inline(const rts_flow_table *t, unsigned proto, unsigned port,
                                             uint32_t src)
{
    const uint32_t key = rts_flow_table_key(proto, port);
#if RTS_CONFIG_RX_INLINE /* the speed build; the size build keeps one probe loop */
    if (t->n_specific == 0u) return (uint8_t)rts_flow_table_find_any(t, key);
#endif
    if (src != 0u && t->n_specific != 0u) {
        const unsigned id = rts_flow_table_find(t, key, src, RTS_FLOW_NONE);
        if (id != RTS_FLOW_NONE) return (uint8_t)id;
    }
    return (uint8_t)rts_flow_table_find(t, key, 0u, RTS_FLOW_DEFAULT);
}

/* rts_flow_table_admit_isr() for a valid id (f is &t->flows[id]), without a
 * call for an unlimited flow (the common case). */
static inline bool rts_flow_table_admit_inline(rts_flow_table *t, rts_flow *f, unsigned id, rts_time_ns now)
{
    if (!f->limited) {
        f->admitted++;
        return true;
    }
    return rts_flow_table_admit_isr(t, id, now);
}

#endif
