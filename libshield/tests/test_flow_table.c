/* flow table: bind/setopt/unbind like the socket calls (Behnke §5.6),
 * lookup precedence, per-flow deferrable servers (exhaustion and
 * replenishment, Behnke §5.5). */
#include "rts_test.h"
#include "rtshield/rts_flow_table.h"

static void test_special_flows(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    CHECK_EQ(rts_flow_prio(&t, RTS_FLOW_ARP), RTS_FLOW_ARP_PRIO);
    CHECK_EQ(rts_flow_prio(&t, RTS_FLOW_ICMP), RTS_FLOW_ICMP_PRIO);
    CHECK_EQ(rts_flow_prio(&t, RTS_FLOW_BACKGROUND), 0);
    CHECK_EQ(t.flows[RTS_FLOW_BACKGROUND].limited, 0);
    CHECK_EQ(t.flows[RTS_FLOW_ARP].limited, RTS_FLOW_ARP_CAPACITY > 0);
    CHECK_EQ(rts_flow_unbind(&t, RTS_FLOW_ARP), RTS_ENOENT);
    CHECK_EQ(rts_flow_setopt(&t, RTS_FLOW_ARP, RTS_FLOWOPT_PRIORITY, 7, 0), RTS_OK);
    CHECK_EQ(rts_flow_prio(&t, RTS_FLOW_ARP), 7);
    CHECK_EQ(rts_flow_setopt(&t, RTS_FLOW_ARP, RTS_FLOWOPT_SOURCE_ADDR, 1, 0), RTS_EINVAL);
}

static void test_bind_errors(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    uint8_t id;
    ROW("bad protocol");
    CHECK_EQ(rts_flow_bind(&t, 1, 80, 0, &id), RTS_EINVAL);
    ROW("port 0");
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 0, 0, &id), RTS_EINVAL);
    ROW("port > 65535");
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 70000, 0, &id), RTS_EINVAL);
    ROW("bind, then the same again");
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 80, 0, &id), RTS_OK);
    CHECK_EQ(id, RTS_FLOW_FIRST_USER);
    uint8_t id2;
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 80, 0, &id2), RTS_EEXIST);
    ROW("same port, other protocol or source is another flow");
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_TCP, 80, 0, &id2), RTS_OK);
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 80, 5, &id2), RTS_OK);
    ROW("table full");
    unsigned bound = 3;
    while (rts_flow_bind(&t, RTS_PROTO_UDP, 1000 + bound, 0, &id2) == RTS_OK) bound++;
    CHECK_EQ(bound, RTS_FLOW_MAX - RTS_FLOW_FIRST_USER);
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 9999, 0, &id2), RTS_EFULL);
    ROW("unbind frees a slot, which is reused");
    CHECK_EQ(rts_flow_unbind(&t, id), RTS_OK);
    CHECK_EQ(rts_flow_unbind(&t, id), RTS_ENOENT);
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 9999, 0, &id2), RTS_OK);
    CHECK_EQ(id2, id);
    ROW("setopt errors");
    CHECK_EQ(rts_flow_setopt(&t, RTS_FLOW_MAX, RTS_FLOWOPT_PRIORITY, 1, 0), RTS_ENOENT);
    CHECK_EQ(rts_flow_setopt(&t, id2, RTS_FLOWOPT_PRIORITY, RTS_FLOW_PRIO_LEVELS, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_setopt(&t, id2, RTS_FLOWOPT_QUEUE_LIMIT, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_setopt(&t, id2, RTS_FLOWOPT_QUEUE_LIMIT, RTS_POOL_MAX_BUFS + 1, 0), RTS_EINVAL);
    CHECK_EQ(rts_flow_setopt(&t, id2, 99, 1, 0), RTS_EINVAL);
}

static void test_lookup_precedence(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    uint8_t any, exact;
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 502, 0, &any), RTS_OK);
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 502, 0x0A000005u, &exact), RTS_OK);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000005u), exact);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000006u), any);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_TCP, 502, 0x0A000005u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_UDP, 503, 0), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_unbind(&t, any), RTS_OK);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000006u), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_flow_lookup_isr(&t, RTS_PROTO_UDP, 502, 0x0A000005u), exact);
}

typedef struct {
    const char *name;
    rts_time_ns t;
    bool admitted;
} srv_row;

/* Capacity 3 per 10 ms server period: exhaustion, replenishment at period
 * boundaries (not 10 ms after the first packet), no carry-over of budget. */
static void test_server_exhaustion_and_replenishment(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 1000);
    uint8_t id;
    CHECK_EQ(rts_flow_bind(&t, RTS_PROTO_UDP, 502, 0, &id), RTS_OK);
    CHECK(rts_flow_admit_isr(&t, id, 1000)); /* no server yet: unlimited */
    CHECK_EQ(rts_flow_setopt(&t, id, RTS_FLOWOPT_CAPACITY, 3, 1000), RTS_OK);
    CHECK(rts_flow_admit_isr(&t, id, 1000)); /* still unlimited: no period */
    CHECK_EQ(rts_flow_setopt(&t, id, RTS_FLOWOPT_PERIOD_NS, 10000000, 1000), RTS_OK);
    const srv_row rows[] = {
        {"1st in period 0", 2000, true},
        {"2nd", 3000, true},
        {"3rd", 9000000, true},
        {"4th: exhausted", 9500000, false},
        {"still exhausted just before the boundary", 10000999, false},
        {"boundary 10.001 ms: replenished", 10001000, true},
        {"2nd in period 1", 10001001, true},
        {"3rd in period 1", 15000000, true},
        {"4th in period 1: exhausted", 20000000, false},
        {"idle periods do not accumulate budget: period 5", 50001000, true},
        {"", 50001001, true},
        {"", 50001002, true},
        {"exhausted again", 50001003, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        CHECK_EQ(rts_flow_admit_isr(&t, id, rows[i].t), rows[i].admitted);
    }
    CHECK_EQ(t.flows[id].limited_drops, 4);
    ROW("explicit server period overrides tP");
    CHECK_EQ(rts_flow_setopt(&t, id, RTS_FLOWOPT_SERVER_PERIOD_NS, 1000, 60000000), RTS_OK);
    CHECK(rts_flow_admit_isr(&t, id, 60000000));
    CHECK(rts_flow_admit_isr(&t, id, 60000000));
    CHECK(rts_flow_admit_isr(&t, id, 60000000));
    CHECK(!rts_flow_admit_isr(&t, id, 60000999));
    CHECK(rts_flow_admit_isr(&t, id, 60001000));
    ROW("capacity 0 removes the server");
    CHECK_EQ(rts_flow_setopt(&t, id, RTS_FLOWOPT_CAPACITY, 0, 0), RTS_OK);
    for (int i = 0; i < 100; i++) CHECK(rts_flow_admit_isr(&t, id, 60001000));
    ROW("bad id never admits");
    CHECK(!rts_flow_admit_isr(&t, RTS_FLOW_MAX, 0));
}

int main(void)
{
    RTS_RUN(test_special_flows);
    RTS_RUN(test_bind_errors);
    RTS_RUN(test_lookup_precedence);
    RTS_RUN(test_server_exhaustion_and_replenishment);
    return rts_test_end();
}
