/**
 * @file rts_flow_table.h
 * @brief Receive flows: who a packet is for, how urgent it is, how much of it
 *        the device accepts (Behnke et al. Definition 1, §5.3.1, §5.5, §5.6).
 *
 * A flow is (protocol, local port, optionally source address) with a
 * priority P, a minimum period tP and a per-flow deferrable server
 * (capacity packets per server period). Four special flows always exist:
 * ARP, ICMP, the background flow (IP fragments, Behnke §5.7) and the default
 * flow (everything the classifier cannot attribute: unbound ports, IPv6,
 * other EtherTypes, malformed frames).
 *
 * The registration API mirrors the socket calls an RTOS stack already has
 * (§5.6): rts_flow_table_bind() at bind(), rts_flow_table_setopt() at setsockopt(),
 * rts_flow_table_unbind() at close(). The socket layer calls them in task context
 * inside the critical section that also guards the ISR's lookup.
 *
 * Priorities: 0 is the lowest, RTS_FLOW_PRIO_LEVELS-1 the highest (the
 * FreeRTOS convention). A port whose RTOS counts the other way maps them in
 * its task-priority hook.
 */
#ifndef RTSHIELD_RTS_FLOW_TABLE_H
#define RTSHIELD_RTS_FLOW_TABLE_H

#include "rtshield/rts_dserver.h"
#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** Flow ids of the special flows; user flows get ids from RTS_FLOW_FIRST_USER. */
typedef enum rts_flow_special {
    RTS_FLOW_ARP = 0,        /**< all ARP frames */
    RTS_FLOW_ICMP = 1,       /**< all ICMP datagrams (unfragmented) */
    RTS_FLOW_BACKGROUND = 2, /**< IPv4 fragments: best effort, never limited by default */
    RTS_FLOW_DEFAULT = 3,    /**< unbound ports, IPv6, other EtherTypes, malformed frames */
    RTS_FLOW_FIRST_USER = 4,
    RTS_FLOW_NONE = 255      /**< "no flow" in results */
} rts_flow_special;

/** Transport protocols a user flow may bind (IPv4 protocol numbers). */
typedef enum rts_flow_proto {
    RTS_PROTO_TCP = 6,
    RTS_PROTO_UDP = 17
} rts_flow_proto;

/** Options of rts_flow_table_setopt(), in the spirit of setsockopt(). */
typedef enum rts_flow_opt {
    RTS_FLOWOPT_PRIORITY = 0,     /**< 0..RTS_FLOW_PRIO_LEVELS-1 */
    RTS_FLOWOPT_PERIOD_NS = 1,    /**< tP, minimum interarrival (ns); 0 = unknown. Also the
                                       server period unless SERVER_PERIOD_NS is set */
    RTS_FLOWOPT_CAPACITY = 2,     /**< packets per server period; 0 = no server (unlimited) */
    RTS_FLOWOPT_SERVER_PERIOD_NS = 3, /**< server period (ns); 0 = use tP */
    RTS_FLOWOPT_SOURCE_ADDR = 4,  /**< match only this IPv4 source (host order); 0 = any */
    RTS_FLOWOPT_QUEUE_LIMIT = 5   /**< packets the flow's queue may hold; 1..RTS_POOL_MAX_BUFS */
} rts_flow_opt;

/** One flow. Read-only for applications: change it through rts_flow_table_setopt(). */
typedef struct rts_flow {
    uint8_t in_use;          /**< 1 when bound (special flows always 1) */
    uint8_t proto;           /**< rts_flow_proto for user flows, 0 for special flows */
    uint8_t prio;            /**< priority P */
    uint8_t limited;         /**< 1 when a server limits the flow */
    uint16_t local_port;     /**< destination port (user flows) */
    uint16_t queue_limit;    /**< bound of the flow's queue */
    uint32_t src_addr;       /**< IPv4 source to match, 0 = any */
    uint32_t capacity;       /**< packets per server period, 0 = unlimited */
    rts_time_ns period;      /**< tP (ns), 0 = unknown */
    rts_time_ns server_period; /**< explicit server period (ns), 0 = tP */
    rts_dserver server;      /**< the flow's deferrable server, budget in packets
                                  (valid when limited == 1) */
    uint32_t admitted;       /**< packets the server admitted */
    uint32_t limited_drops;  /**< packets the server rejected (path (b)) */
} rts_flow;

/** One slot of the lookup index: `key` is (proto << 16 | port) | flow id << 24,
 *  0 when the slot is empty; `src` the source address the flow matches (0 = any). */
typedef struct rts_flow_slot {
    uint32_t key;
    uint32_t src;
} rts_flow_slot;

/** The flow table. Zero-initialised storage is not valid: call rts_flow_table_init().
 *  Change it only through the functions below: the lookup index is rebuilt
 *  from `flows` at every bind, unbind and source change. */
typedef struct rts_flow_table {
    rts_flow flows[RTS_FLOW_MAX];
    rts_flow_slot index[RTS_FLOW_INDEX_SLOTS]; /**< open addressing, linear probing; for
                                                    equal keys the lowest flow id is kept */
    uint32_t mult;      /**< hash multiplier chosen at the last rebuild (the one of
                             RTS_FLOW_HASH_MULTS giving the shortest probes) */
    uint8_t probe_max;  /**< a lookup reads at most probe_max + 1 slots per key */
    uint8_t n_specific; /**< bound user flows that match one source address */
    uint8_t pad[2];
} rts_flow_table;

/** Initialise: the four special flows with the RTS_FLOW_ARP_* / RTS_FLOW_ICMP_*
 *  defaults of rts_opts.h, background and default flows at priority 0 and
 *  unlimited, no user flow. `now` starts the special flows' servers.
 *  Context: task (before the RX interrupt is enabled). Cost: O(RTS_FLOW_MAX +
 *  RTS_FLOW_INDEX_SLOTS). */
void rts_flow_table_init(rts_flow_table *t, rts_time_ns now);

/**
 * Register a flow for a bound socket (mirrors bind()). The new flow has
 * priority 0, no server and the queue limit RTS_POOL_MAX_BUFS until
 * rts_flow_table_setopt() sets them.
 * Context: task, with the RX interrupt masked or inside the stack's socket
 * critical section. Cost: O(RTS_FLOW_MAX), plus the index rebuild: at most
 * 8 hash multipliers tried, each placing the bound flows (O(RTS_FLOW_MAX ·
 * RTS_FLOW_INDEX_SLOTS) in the worst case, a few hundred steps in practice).
 * @param proto RTS_PROTO_TCP or RTS_PROTO_UDP
 * @param local_port destination port, 1..65535
 * @param src_addr IPv4 source (host byte order) to match, 0 for any
 * @param[out] id the flow id (RTS_FLOW_FIRST_USER..RTS_FLOW_MAX-1)
 * @retval RTS_OK bound
 * @retval RTS_EINVAL bad protocol, port 0 or NULL id
 * @retval RTS_EEXIST the same (proto, port, source) is already bound
 * @retval RTS_EFULL no free flow slot
 */
rts_err rts_flow_table_bind(rts_flow_table *t, unsigned proto, unsigned local_port, uint32_t src_addr,
                      uint8_t *id);

/**
 * Set one scheduling property of a flow (mirrors setsockopt(); special flows
 * too). Changing PERIOD_NS, CAPACITY or SERVER_PERIOD_NS restarts the
 * flow's server full at `now`. SOURCE_ADDR rebuilds the lookup index.
 * Context: task (same critical section as rts_flow_table_bind()). Cost: O(1);
 * SOURCE_ADDR as rts_flow_table_bind().
 * @retval RTS_OK set
 * @retval RTS_ENOENT no such flow
 * @retval RTS_EINVAL unknown option or value out of its range
 */
rts_err rts_flow_table_setopt(rts_flow_table *t, unsigned id, unsigned opt, uint64_t value, rts_time_ns now);

/**
 * Remove a user flow (mirrors close()). Packets of the flow already queued
 * stay queued and are processed; new ones go to the default flow (or to
 * the any-source flow of the same port, when one is bound).
 * Context: task. Cost: the index rebuild, as rts_flow_table_bind().
 * @retval RTS_OK removed
 * @retval RTS_ENOENT not a bound user flow (special flows cannot be removed)
 */
rts_err rts_flow_table_unbind(rts_flow_table *t, unsigned id);

/**
 * Find the flow of a transport packet: an exact (proto, port, source) match
 * wins over a (proto, port, any source) match; among flows bound to the
 * same key (a source changed by setopt onto another flow's), the lowest id.
 * Context: ISR or task. Cost: O(1) and bounded: one hash and at most
 * probe_max + 1 slot reads for the any-source key, and as many again for
 * the exact key only when some flow matches a source (n_specific != 0) and
 * the packet has a source address; no pass over the flows.
 * @return the flow id, or RTS_FLOW_DEFAULT when nothing is bound there.
 */
uint8_t rts_flow_table_lookup_isr(const rts_flow_table *t, unsigned proto, unsigned local_port,
                            uint32_t src_addr);

/**
 * Ask the flow's deferrable server for one packet (Behnke §5.5): unlimited
 * flows always admit; a limited flow admits while its budget for the current
 * server period lasts (the budget is replenished at period boundaries).
 * Context: ISR or task. Cost: O(1) (one division when a period has passed).
 * @return true to enqueue, false to discard at insertion (path (b) of Figure 8).
 */
bool rts_flow_table_admit_isr(rts_flow_table *t, unsigned id, rts_time_ns now);

/** Priority of flow `id` (0 for an unknown id). Context: any. Cost: O(1). */
unsigned rts_flow_table_prio(const rts_flow_table *t, unsigned id);

#endif /* RTSHIELD_RTS_FLOW_TABLE_H */
