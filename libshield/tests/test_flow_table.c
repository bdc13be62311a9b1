/* flow table: bind/setopt/unbind like the socket calls (Behnke §5.6),
 * lookup precedence, per-flow deferrable servers (exhaustion and
 * replenishment, Behnke §5.5). */
#include <string.h>

#include "rts_test.h"
#include "rts_test_flows.h"

static void test_special_flows(void)
{
    rts_flow_table t;
    memset(&t, 0xA5, sizeof t); /* storage as the caller hands it over: anything */
    rts_flow_table_init(&t, 0);
    ROW("every flow after init");
    for (unsigned i = 0; i < RTS_FLOW_MAX; i++) {
        const rts_flow *f = &t.flows[i];
        const bool special = i < RTS_FLOW_FIRST_USER;
        const bool arp_icmp = i == RTS_FLOW_ARP || i == RTS_FLOW_ICMP;
        CHECK_EQ(f->in_use, special);
        CHECK_EQ(f->proto, 0);
        CHECK_EQ(f->local_port, 0);
        CHECK_EQ(f->src_addr, 0u);
        CHECK_EQ(f->queue_limit, RTS_POOL_MAX_BUFS);
        CHECK_EQ(f->period, 0u);
        CHECK_EQ(f->admitted, 0u);
        CHECK_EQ(f->limited_drops, 0u);
        if (!arp_icmp) {
            CHECK_EQ(f->prio, 0);
            CHECK_EQ(f->capacity, 0u);
            CHECK_EQ(f->server_period, 0u);
            CHECK_EQ(f->limited, 0);
        }
    }
    CHECK_EQ(t.flows[RTS_FLOW_ARP].capacity, RTS_FLOW_ARP_CAPACITY);
    CHECK_EQ(t.flows[RTS_FLOW_ARP].server_period, RTS_FLOW_ARP_PERIOD_NS);
    CHECK_EQ(t.flows[RTS_FLOW_ICMP].capacity, RTS_FLOW_ICMP_CAPACITY);
    CHECK_EQ(t.flows[RTS_FLOW_ICMP].server_period, RTS_FLOW_ICMP_PERIOD_NS);
    CHECK_EQ(t.flows[RTS_FLOW_ICMP].limited, RTS_FLOW_ICMP_CAPACITY > 0);
    ROW("special flows");
    CHECK_EQ(rts_flow_table_prio(&t, RTS_FLOW_ARP), RTS_FLOW_ARP_PRIO);
    CHECK_EQ(rts_flow_table_prio(&t, RTS_FLOW_ICMP), RTS_FLOW_ICMP_PRIO);
    CHECK_EQ(rts_flow_table_prio(&t, RTS_FLOW_BACKGROUND), 0);
    CHECK_EQ(t.flows[RTS_FLOW_BACKGROUND].limited, 0);
    CHECK_EQ(t.flows[RTS_FLOW_ARP].limited, RTS_FLOW_ARP_CAPACITY > 0);
    CHECK_EQ(rts_flow_table_unbind(&t, RTS_FLOW_ARP), RTS_ENOENT);
    CHECK_EQ(rts_flow_table_setopt(&t, RTS_FLOW_ARP, RTS_FLOWOPT_PRIORITY, 7, 0), RTS_OK);
    CHECK_EQ(rts_flow_table_prio(&t, RTS_FLOW_ARP), 7);
    CHECK_EQ(rts_flow_table_setopt(&t, RTS_FLOW_ARP, RTS_FLOWOPT_SOURCE_ADDR, 1, 0), RTS_EINVAL);
}

static void test_bind_errors(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    uint8_t id;
    ROW("bad protocol");
    CHECK_EQ(rts_flow_table_bind(&t, 1, 80, 0, &id), RTS_EINVAL);
    ROW("port 0");
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 0, 0, &id), RTS_EINVAL);
    ROW("port > 65535");
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 70000, 0, &id), RTS_EINVAL);
    ROW("bind, then the same again");
    id = rts_test_bind(&t, RTS_PROTO_UDP, 80, 0);
    CHECK_EQ(id, RTS_FLOW_FIRST_USER);
    uint8_t id2;
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 80, 0, &id2), RTS_EEXIST);
    ROW("same port, other protocol or source is another flow");
    rts_test_bind(&t, RTS_PROTO_TCP, 80, 0);
    rts_test_bind(&t, RTS_PROTO_UDP, 80, 5);
    ROW("table full");
    unsigned bound = 3;
    while (rts_flow_table_bind(&t, RTS_PROTO_UDP, 1000 + bound, 0, &id2) == RTS_OK) bound++;
    CHECK_EQ(bound, RTS_FLOW_MAX - RTS_FLOW_FIRST_USER);
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 9999, 0, &id2), RTS_EFULL);
    ROW("unbind frees a slot, which is reused");
    CHECK_EQ(rts_flow_table_unbind(&t, id), RTS_OK);
    CHECK_EQ(rts_flow_table_unbind(&t, id), RTS_ENOENT);
    id2 = rts_test_bind(&t, RTS_PROTO_UDP, 9999, 0);
    CHECK_EQ(id2, id);
    ROW("setopt errors");
    CHECK_EQ(rts_flow_table_setopt(&t, RTS_FLOW_MAX, RTS_FLOWOPT_PRIORITY, 1, 0), RTS_ENOENT);
    CHECK_EQ(rts_flow_table_setopt(&t, id2, RTS_FLOWOPT_PRIORITY, RTS_FLOW_PRIO_LEVELS, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_table_setopt(&t, id2, RTS_FLOWOPT_QUEUE_LIMIT, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_table_setopt(&t, id2, RTS_FLOWOPT_QUEUE_LIMIT, RTS_POOL_MAX_BUFS + 1, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_table_setopt(&t, id2, 99, 1, 0), RTS_EINVAL);
}

static void test_lookup_precedence(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    const uint8_t any = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0);
    const uint8_t exact = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0x0A000005u);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000005u), exact);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000006u), any);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 502, 0x0A000005u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 503, 0), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_unbind(&t, any), RTS_OK);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000006u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000005u), exact);
}

/* The linear scan the O(1) index replaced: the reference for the lookup. */
static uint8_t ref_lookup(const rts_flow_table *t, unsigned proto, unsigned port, uint32_t src)
{
    uint8_t wildcard = RTS_FLOW_DEFAULT;
    for (unsigned i = RTS_FLOW_FIRST_USER; i < RTS_FLOW_MAX; i++) {
        const rts_flow *f = &t->flows[i];
        if (!f->in_use || f->proto != proto || f->local_port != port) continue;
        if (f->src_addr == src && src != 0u) return (uint8_t)i;
        if (f->src_addr == 0u && wildcard == RTS_FLOW_DEFAULT) wildcard = (uint8_t)i;
    }
    return wildcard;
}

static void test_source_specific_and_any(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    ROW("several sources on one port, then the any-source flow");
    const uint8_t s1 = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0x0A000001u);
    const uint8_t s2 = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0x0A000002u);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000003u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0u), RTS_FLOW_DEFAULT);
    const uint8_t any = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0u);
    const uint8_t s3 = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0x0A000003u);
    CHECK_EQ(t.n_specific, 3);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000001u), s1);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000002u), s2);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000003u), s3);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000004u), any);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0u), any);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 502, 0x0A000001u), RTS_FLOW_DEFAULT);
    ROW("a source moved by setopt onto another flow's: the lower id wins, the other takes over");
    CHECK_EQ(rts_flow_table_setopt(&t, s3, RTS_FLOWOPT_SOURCE_ADDR, 0x0A000001u, 0), RTS_OK);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000001u), s1 < s3 ? s1 : s3);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000003u), any);
    CHECK_EQ(rts_flow_table_unbind(&t, s1), RTS_OK);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000001u), s3);
    ROW("a source cleared by setopt: the flow becomes an any-source flow after the first");
    CHECK_EQ(rts_flow_table_setopt(&t, s2, RTS_FLOWOPT_SOURCE_ADDR, 0u, 0), RTS_OK);
    CHECK_EQ(t.n_specific, 1);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000002u), s2 < any ? s2 : any);
    CHECK_EQ(rts_flow_table_unbind(&t, any), RTS_OK);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000007u), s2);
    ROW("out-of-range arguments find nothing");
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP + 256u, 502, 0u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 502u + 65536u, 0u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, 0u, 0u, 0u), RTS_FLOW_DEFAULT);
}

static void test_unbind_rebind(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    const uint8_t a = rts_test_bind(&t, RTS_PROTO_TCP, 80, 0);
    const uint8_t b = rts_test_bind(&t, RTS_PROTO_TCP, 81, 0);
    for (int round = 0; round < 50; round++) {
        ROW("unbind: the port goes to the default flow, the others stay");
        CHECK_EQ(rts_flow_table_unbind(&t, a), RTS_OK);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 80, 1u), RTS_FLOW_DEFAULT);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 81, 1u), b);
        ROW("rebind: the same slot, found again");
        CHECK_EQ(rts_test_bind(&t, RTS_PROTO_TCP, 80, 0), a);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 80, 1u), a);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 81, 1u), b);
    }
}

typedef struct {
    unsigned proto;
    uint32_t port, src;
} flow_key;

/* Bind every user flow of an empty table `t`, the i-th with key(i) into ids[i];
 * returns their number (`row` names the binds in failures). */
static unsigned fill_table(rts_flow_table *t, uint8_t *ids, flow_key (*key)(unsigned i),
                           const char *row)
{
    rts_flow_table_init(t, 0);
    const unsigned n = RTS_FLOW_MAX - RTS_FLOW_FIRST_USER;
    for (unsigned i = 0; i < n; i++) {
        ROW(row);
        const flow_key k = key(i);
        ids[i] = rts_test_bind(t, k.proto, k.port, k.src);
    }
    return n;
}

/* Both protocols, every third flow bound to one source, the others to any. */
static flow_key mixed_key(unsigned i)
{
    const unsigned proto = i % 2 ? RTS_PROTO_TCP : RTS_PROTO_UDP;
    return (flow_key){proto, 1000u + i, i % 3 ? 0u : 0x0A000000u + i};
}

static void test_table_full(void)
{
    rts_flow_table t;
    uint8_t ids[RTS_FLOW_MAX];
    const unsigned n = fill_table(&t, ids, mixed_key, "filling the table");
    uint8_t extra;
    ROW("full");
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 9, 0, &extra), RTS_EFULL);
    CHECK(t.probe_max < RTS_FLOW_INDEX_SLOTS);
    for (unsigned i = 0; i < n; i++) {
        ROW("every flow of a full table is found");
        const unsigned proto = i % 2 ? RTS_PROTO_TCP : RTS_PROTO_UDP;
        const uint32_t src = i % 3 ? 0x0B000001u : 0x0A000000u + i;
        CHECK_EQ(rts_flow_table_lookup_isr(&t, proto, 1000u + i, src), ids[i]);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, proto, 2000u + i, src), RTS_FLOW_DEFAULT);
    }
    ROW("a freed slot is bound again and found");
    CHECK_EQ(rts_flow_table_unbind(&t, ids[3]), RTS_OK);
    extra = rts_test_bind(&t, RTS_PROTO_UDP, 9, 0);
    CHECK_EQ(extra, ids[3]);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 9, 5u), extra);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_TCP, 1003, 5u), RTS_FLOW_DEFAULT);
}

/* Keys whose (key ^ source) is equal hash to the same slot under every
 * multiplier: the index must probe past all of them, and a lookup of an
 * unbound key with that hash must stop after probe_max + 1 slots. */
static flow_key colliding_key(unsigned i)
{
    return (flow_key){RTS_PROTO_UDP, i ? 0x100u ^ i : 0x180u, i ? i : 0x80u};
}

static void test_forced_collisions(void)
{
    rts_flow_table t;
    uint8_t ids[RTS_FLOW_MAX];
    const unsigned n = fill_table(&t, ids, colliding_key, "colliding binds");
    CHECK_EQ(t.probe_max, n - 1u);
    for (unsigned i = 0; i < n; i++) {
        ROW("each colliding flow is found");
        const flow_key k = colliding_key(i);
        CHECK_EQ(rts_flow_table_lookup_isr(&t, k.proto, k.port, k.src), ids[i]);
    }
    ROW("an unbound key of the same hash: default");
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 0x100u ^ 0x40u, 0x40u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 0x100u, 0u), RTS_FLOW_DEFAULT);
    ROW("after unbinding most of them the probes shrink");
    for (unsigned i = 1; i < n; i++) CHECK_EQ(rts_flow_table_unbind(&t, ids[i]), RTS_OK);
    CHECK_EQ(t.probe_max, 0);
    CHECK_EQ(rts_flow_table_lookup_isr(&t, RTS_PROTO_UDP, 0x180u, 0x80u), ids[0]);
}

/* Random bind / unbind / source changes over a few ports and sources, so
 * that keys collide and repeat; after every step each possible lookup
 * agrees with the linear scan. */
static void test_lookup_matches_scan(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    uint32_t rng = 99u;
    unsigned disagreements = 0u, steps = 0u;
    for (int step = 0; step < 3000; step++) {
        rng = rng * 1664525u + 1013904223u;
        const unsigned r = rng >> 8;
        const unsigned proto = (r & 1u) ? RTS_PROTO_TCP : RTS_PROTO_UDP;
        const unsigned port = 1u + ((r >> 1) % 5u);
        const uint32_t src = (r >> 4) % 4u; /* 0 = any */
        uint8_t id;
        switch ((r >> 8) % 4u) {
        case 0:
        case 1:
            (void)rts_flow_table_bind(&t, proto, port, src, &id);
            break;
        case 2:
            (void)rts_flow_table_unbind(&t, RTS_FLOW_FIRST_USER + (r >> 12) % (RTS_FLOW_MAX - RTS_FLOW_FIRST_USER));
            break;
        default:
            (void)rts_flow_table_setopt(&t, RTS_FLOW_FIRST_USER + (r >> 12) % (RTS_FLOW_MAX - RTS_FLOW_FIRST_USER),
                                  RTS_FLOWOPT_SOURCE_ADDR, src, 0);
            break;
        }
        for (unsigned p = 0; p < 2; p++) {
            for (unsigned q = 1; q <= 5u; q++) {
                for (uint32_t a = 0; a < 5u; a++) {
                    const unsigned pr = p ? RTS_PROTO_TCP : RTS_PROTO_UDP;
                    if (rts_flow_table_lookup_isr(&t, pr, q, a) != ref_lookup(&t, pr, q, a)) disagreements++;
                    steps++;
                }
            }
        }
    }
    ROW("random table histories");
    CHECK_EQ(disagreements, 0);
    CHECK(steps == 3000u * 50u);
}

typedef struct {
    const char *name;
    rts_time_ns t;
    bool admitted;
} flow_table_row;

typedef struct {
    RTS_VECTOR_TABLE(flow_table_row, rts_flow_table);
    rts_time_ns setup_at;
    uint32_t capacity;
    rts_time_ns period_ns;
} flow_table_table;

#include "vectors_flow_table.h"

/* Exhaustion, replenishment at period boundaries, no carry-over of budget
 * (vectors/flow_table.toml), then the server period and capacity options. */
static void test_server_exhaustion_and_replenishment(void)
{
    const flow_table_table *v = &vec_flow_table_server_exhaustion_and_replenishment;
    rts_flow_table t;
    rts_flow_table_init(&t, v->setup_at);
    const uint8_t id = rts_test_bind(&t, RTS_PROTO_UDP, 502, 0);
    CHECK(rts_flow_table_admit_isr(&t, id, v->setup_at)); /* no server yet: unlimited */
    CHECK_EQ(rts_flow_table_setopt(&t, id, RTS_FLOWOPT_CAPACITY, v->capacity, v->setup_at), RTS_OK);
    CHECK(rts_flow_table_admit_isr(&t, id, v->setup_at)); /* still unlimited: no period */
    CHECK_EQ(rts_flow_table_setopt(&t, id, RTS_FLOWOPT_PERIOD_NS, v->period_ns, v->setup_at), RTS_OK);
    for (size_t i = 0; i < v->n; i++) {
        ROW(v->rows[i].name);
        CHECK_EQ(rts_flow_table_admit_isr(&t, id, v->rows[i].t), v->rows[i].admitted);
    }
    CHECK_EQ(t.flows[id].limited_drops, 4);
    ROW("explicit server period overrides tP");
    CHECK_EQ(rts_flow_table_setopt(&t, id, RTS_FLOWOPT_SERVER_PERIOD_NS, 1000, 60000000), RTS_OK);
    CHECK(rts_flow_table_admit_isr(&t, id, 60000000));
    CHECK(rts_flow_table_admit_isr(&t, id, 60000000));
    CHECK(rts_flow_table_admit_isr(&t, id, 60000000));
    CHECK(!rts_flow_table_admit_isr(&t, id, 60000999));
    CHECK(rts_flow_table_admit_isr(&t, id, 60001000));
    ROW("capacity 0 removes the server");
    CHECK_EQ(rts_flow_table_setopt(&t, id, RTS_FLOWOPT_CAPACITY, 0, 0), RTS_OK);
    for (int i = 0; i < 100; i++) CHECK(rts_flow_table_admit_isr(&t, id, 60001000));
    ROW("bad id never admits");
    CHECK(!rts_flow_table_admit_isr(&t, RTS_FLOW_MAX, 0));
}

int main(void)
{
    RTS_RUN(test_special_flows);
    RTS_RUN(test_bind_errors);
    RTS_RUN(test_lookup_precedence);
    RTS_RUN(test_source_specific_and_any);
    RTS_RUN(test_unbind_rebind);
    RTS_RUN(test_table_full);
    RTS_RUN(test_forced_collisions);
    RTS_RUN(test_lookup_matches_scan);
    RTS_RUN(test_server_exhaustion_and_replenishment);
    return rts_test_end();
}
