/* The device application's IP stack, behind a small seam: bringing the
 * interface up, the few socket calls the application makes, libshield's
 * flow binding, the receive path's counters and the stack's own.
 *
 * Implemented for FreeRTOS-Plus-TCP by rig/freertos/plustcp/rts_net_plustcp.c
 * (the rts_netif interface: libshield in its receive path, or the stock
 * path) and for lwIP by rig/freertos/lwip/rts_net_lwip.c (the netconn API;
 * its interface rts_netif_lwip.c: libshield through libshield/port/lwip, or
 * lwIP's usual RTOS driver); the application (rts_device.c) calls nothing
 * else of the stack.
 *
 * Sockets block until they have something (no receive timeout); every
 * function except rts_net_init() runs in a task once the scheduler runs.
 */
#ifndef RTS_NET_H
#define RTS_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtshield/rts_shield.h"

/** The interface's configuration (from the device's config file). */
typedef struct rts_net_cfg {
    const char *ifname;        /**< the NIC's name (POSIX: the veth end to open) */
    uint8_t mac[6], ip[4], mask[4];
    bool protect;              /**< libshield in the receive path; false: the stock path */
    bool short_circuit;        /**< Behnke Figure 8 (a) (protected) */
    uint32_t recycle_below;    /**< recycling threshold: posted descriptors (protected) */
    uint32_t global_capacity;  /**< global limit: frames per period, 0 = none (protected) */
    uint64_t global_period_ns;
    uint32_t net_prio;         /**< the network task's base (protected) or fixed priority */
    uint32_t poll_prio;        /**< the global limit's polling task */
    int rx_cpu;                /**< POSIX: host CPU of the NIC's receive thread, -1: any */
    uint32_t seed;             /**< the stack's random numbers (initial sequence numbers) */
} rts_net_cfg;

/** Where a frame went in libshield's receive path (per-path costs). */
typedef enum rts_net_path {
    RTS_NET_PATH_ENQUEUE = 0,   /**< queued in its flow, the network task not raised */
    RTS_NET_PATH_RAISE,         /**< queued, the network task raised to the frame's
                                     priority: the high-priority delivery */
    RTS_NET_PATH_RECYCLE,       /**< queued, a lower-priority queued buffer recycled (path (c)) */
    RTS_NET_PATH_SHORT_CIRCUIT, /**< recycled at once: lowest priority, ring low (path (a)) */
    RTS_NET_PATH_FLOW_LIMIT,    /**< dropped: the flow's server is exhausted (path (b)) */
    RTS_NET_PATH_QUEUE_FULL,    /**< dropped: the flow's queue is full */
    RTS_NET_PATH_GLOBAL_LIMIT,  /**< left in the ring: over the global capacity */
    RTS_NET_PATH_IRQ_DROP,      /**< dropped by an interrupt-level protection */
    RTS_NET_PATHS
} rts_net_path;

/** The receive path's counters (the interface updates them; read them as
 *  they are, field by field). */
typedef struct rts_net_stats {
    volatile uint32_t nic_frames;      /**< frames the NIC took from the wire */
    volatile uint32_t nic_ring_full;   /**< dropped by the NIC: no posted descriptor (MPS2: a frame
                                            no slot can hold; frames that find no slot wait in
                                            the chip, whose own drops are not counted here) */
    volatile uint32_t shield_dropped;  /**< dropped by libshield (reasons in the shield) */
    volatile uint32_t stack_exhausted; /**< no network buffer for an admitted frame */
    volatile uint32_t ip_queue_full;   /**< the IP task's event queue refused it */
    volatile uint32_t no_endpoint;     /**< not addressed to this device's end point */
    volatile uint32_t to_ip_task;      /**< handed to the IP task */
    volatile uint32_t tx_frames;
    volatile uint32_t tx_errors;
    volatile uint32_t rx_irqs;         /**< RX interrupts that found frames */
    volatile uint32_t ip_prio_sets;    /**< IP task priority changes (inheritance) */
    volatile uint32_t net_wakes;       /**< stock path: the network task's wake-ups that took frames */
    volatile uint32_t net_wake_frames_max; /**< stock path: the most frames one wake-up took from the
                                                ring since the reader last cleared it */
    volatile uint32_t ip_rx_events;        /**< FreeRTOS-Plus-TCP: received frames the IP task took */
    volatile uint32_t ip_drains;           /**< ... runs of them taken without finding its queue empty */
    volatile uint32_t ip_drain_frames_max; /**< ... the most frames in one run since last cleared */
    volatile uint32_t ip_queue_max;        /**< ... the most events its queue held when it took one,
                                                since last cleared */
    volatile uint32_t buffers_used_max;    /**< ... the most network buffers in use when it took a
                                                frame, since last cleared */
    volatile uint64_t shield_ns;       /**< time inside libshield's per-frame hook (board clock;
                                            POSIX: CPU time of the calling thread) */
    volatile uint32_t shield_frames;   /**< frames that went through it */
    volatile uint64_t to_stack_ns;     /**< time copying frames into network buffers + hand-over */
    volatile uint32_t to_stack_frames; /**< frames that went through that */
    volatile uint64_t nic_copy_ns;     /**< MPS2: time moving frames out of the LAN9118's RX FIFO
                                            into descriptor slots, in its interrupt (board clock) */
    volatile uint32_t nic_copy_frames; /**< frames that went through that */
    volatile uint32_t nic_copy_words;  /**< ... their 32-bit FIFO words (frame and FCS) */
    volatile uint64_t nic_isr_ns;      /**< MPS2: time inside the LAN9118's interrupt handler, all of
                                            it (the copies, libshield's hook or the stock wake-up) */
    volatile uint32_t nic_isr_runs;    /**< runs of that handler */
    volatile uint64_t path_ns[RTS_NET_PATHS];     /**< shield_ns split by the frame's path */
    volatile uint32_t path_frames[RTS_NET_PATHS]; /**< shield_frames split by the frame's path */
    volatile uint32_t flow_frames[RTS_FLOW_MAX];   /**< per libshield flow id: frames classified to it */
    volatile uint32_t flow_queued[RTS_FLOW_MAX];   /**< ... queued in its flow queue */
    volatile uint32_t flow_recycled[RTS_FLOW_MAX]; /**< ... queued, then recycled for a
                                                        higher-priority frame (path (c)) */
} rts_net_stats;

typedef struct rts_net_sock *rts_sock; /**< a stack socket, NULL: none */

/** The receive path's descriptor slots (a flow queue's largest limit). */
uint32_t rts_net_rx_slots(void);

/** The descriptors posted to the NIC (the recycling threshold's largest value). */
uint32_t rts_net_rx_ring(void);

/** Describe the interface and its end point to the stack and start the
 *  stack's task (before the scheduler starts). */
bool rts_net_init(const rts_net_cfg *cfg);

/** The interface is up and has its address. */
bool rts_net_is_up(void);

/** A socket bound to `port` on every address: UDP, or TCP listening with
 *  `backlog`; NULL when it cannot be made. */
rts_sock rts_net_socket(bool tcp, uint16_t port, unsigned backlog);

/** Tell libshield the flow of a bound socket (protected; the socket
 *  layer's bind()/setsockopt() of Behnke §5.6); its id in `*id`. */
rts_err rts_net_shield_bind(const rts_shield_flow *flow, uint8_t *id);

/** The next datagram into `buf`; its length, <= 0 on failure. */
int32_t rts_net_recvfrom(rts_sock s, void *buf, size_t cap);

/** The next datagram into `buf`, sent back unchanged to where it came
 *  from (a UDP echo service); its length, <= 0 on failure (nothing sent,
 *  or the answer could not be sent). */
int32_t rts_net_echo(rts_sock s, void *buf, size_t cap);

/** The next connection on a listening socket (blocks). */
rts_sock rts_net_accept(rts_sock s);

/** Bytes received on a connection; < 0 once it is closed or reset. */
int32_t rts_net_recv(rts_sock s, void *buf, size_t cap);

/** Send `len` bytes on a connection; the count sent. */
int32_t rts_net_send(rts_sock s, const void *buf, size_t len);

/** Shut a connection down and close it. */
void rts_net_close(rts_sock s);

const rts_net_stats *rts_net_stats_get(void);

/** The shield (protected and up), or NULL: its drops by reason. */
const rts_shield *rts_net_shield(void);

/** At most this many of the stack's own counters (rts_net_stack_counters()). */
#define RTS_NET_STACK_COUNTERS 16

/** The stack's own counters, where it lost what (lwIP: lwip_stats, pbuf and
 *  memp errors, drops per protocol; FreeRTOS-Plus-TCP: the high-water marks
 *  of its network buffers in use and of its IP task's event queue): their names
 *  into `names` (static strings) and values into `values`, at most
 *  RTS_NET_STACK_COUNTERS each; returns how many. Context: a task. */
unsigned rts_net_stack_counters(const char **names, uint32_t *values);

#endif
