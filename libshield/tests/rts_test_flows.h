/* Flow-table set-up for tests: bind a flow, check that the table took it,
 * and hand back its id. */
#ifndef RTS_TEST_FLOWS_H
#define RTS_TEST_FLOWS_H

#include "rts_test.h"
#include "rtshield/rts_flow_table.h"

/* Bind (proto, port, src) in `t` and check that it succeeds; returns the new
 * flow's id (RTS_FLOW_NONE if refused). */
static inline uint8_t rts_test_bind(rts_flow_table *t, unsigned proto, unsigned port, uint32_t src)
{
    uint8_t id = RTS_FLOW_NONE;
    CHECK_EQ(rts_flow_table_bind(t, proto, port, src, &id), RTS_OK);
    return id;
}

/* Bind UDP `port` from any source with priority `prio`, as a receive-path
 * test's high- and low-priority flows. */
static inline uint8_t rts_test_bind_udp_prio(rts_flow_table *t, unsigned port, unsigned prio)
{
    const uint8_t id = rts_test_bind(t, RTS_PROTO_UDP, port, 0u);
    CHECK_EQ(rts_flow_table_setopt(t, id, RTS_FLOWOPT_PRIORITY, prio, 0), RTS_OK);
    return id;
}

#endif
