/**
 * @file rts_nic_moderation.h
 * @brief Logic of the multiqueue NIC with per-queue interrupt moderation
 *        (Behnke et al. §7, Figure 12, Table 1; descriptors of §9).
 *
 * A distribution map sends each validated frame, by (protocol, destination
 * port), to one queue; frames that match no entry are dropped before any
 * interrupt. Each queue has a size n_q and three moderation triggers:
 *
 *   absolute timer t_abs  started by the first frame after an interrupt,
 *                         not restarted by later frames (e1000e RADV,
 *                         "absolute delay");
 *   packet timer t_pack   restarted by every frame (e1000e RDTR, ethtool
 *                         rx-usecs);
 *   frame threshold       interrupt when this many frames wait (ethtool
 *                         rx-frames).
 *
 * The queue interrupts at the first trigger; its waiting descriptors are
 * then announced to the driver (the base/next-base swap of Table 1) and the
 * queue starts empty. A trigger of 0 is off; a queue with all three off
 * interrupts for every frame. A frame arriving at a full queue is dropped.
 *
 * Queues and map entries are added and released at run time, as sockets
 * bind and close (§7.3.3). Frames without a transport port use port 0 and
 * protocol RTS_NIC_PROTO_NONTRANSPORT (ARP and other non-IP frames) or
 * RTS_NIC_PROTO_ICMP, so ARP and ICMP can have queues (and flow ids) of
 * their own.
 *
 * This is the NIC's decision logic as a library: the simulator runs it as
 * the NIC model, and it documents what an FPGA or NIC firmware must do. All
 * calls are deterministic, take `now`, and are O(RTS_NIC_MAP_MAX) at most.
 */
#ifndef RTSHIELD_RTS_NIC_MODERATION_H
#define RTSHIELD_RTS_NIC_MODERATION_H

#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** Map protocols for frames without a transport port (port 0). */
enum {
    RTS_NIC_PROTO_NONTRANSPORT = 0, /**< ARP and other non-IP frames */
    RTS_NIC_PROTO_ICMP = 1          /**< ICMP (the IPv4 protocol number) */
};

/** Outcome of one received frame. */
typedef enum rts_nic_moderation_outcome {
    RTS_NIC_STORED = 0,       /**< written to its queue */
    RTS_NIC_UNREGISTERED = 1, /**< no map entry: dropped before any interrupt */
    RTS_NIC_QUEUE_FULL = 2    /**< its queue was full: dropped */
} rts_nic_moderation_outcome;

/** One queue (Table 1 row). */
typedef struct rts_nic_moderation_queue {
    uint8_t active;      /**< 1 when allocated */
    uint8_t flow;        /**< flow id written into descriptors (§9) */
    uint8_t prio;        /**< priority written into descriptors (§9) */
    uint8_t pad;
    uint16_t size;       /**< n_q, descriptors */
    uint16_t count;      /**< descriptors waiting for the next interrupt */
    uint16_t frames;     /**< frame threshold, 0 = off */
    uint16_t announced;  /**< descriptors announced by the last interrupt */
    rts_time_ns t_abs;   /**< absolute timer, 0 = off */
    rts_time_ns t_pack;  /**< packet timer, 0 = off */
    rts_time_ns abs_at;  /**< absolute timer expiry, 0 = not running */
    rts_time_ns pack_at; /**< packet timer expiry, 0 = not running */
    uint32_t stored;     /**< frames stored */
    uint32_t dropped;    /**< frames dropped because the queue was full */
    uint32_t irqs;       /**< interrupts raised */
} rts_nic_moderation_queue;

/** One distribution-map entry. */
typedef struct rts_nic_moderation_map_entry {
    uint8_t used;
    uint8_t proto;  /**< RTS_PROTO_TCP, RTS_PROTO_UDP, RTS_NIC_PROTO_NONTRANSPORT or RTS_NIC_PROTO_ICMP */
    uint8_t queue;
    uint8_t pad;
    uint16_t port;  /**< destination port (0 for the portless protocols) */
    uint16_t pad2;
} rts_nic_moderation_map_entry;

/** The NIC. */
typedef struct rts_nic_moderation {
    rts_nic_moderation_queue q[RTS_NIC_MAX_QUEUES];
    rts_nic_moderation_map_entry map[RTS_NIC_MAP_MAX];
    uint32_t unregistered; /**< frames dropped for want of a map entry */
} rts_nic_moderation;

/** Descriptor the NIC writes for the driver (§9): the driver enqueues it
 *  without classifying (rts_rx_driver_eager_desc_isr()). */
typedef struct rts_nic_moderation_desc {
    uint8_t queue;
    uint8_t flow;
    uint8_t prio;
    uint8_t pad;
} rts_nic_moderation_desc;

/** Result of rts_nic_moderation_rx(). */
typedef struct rts_nic_moderation_rx_result {
    uint8_t outcome;    /**< rts_nic_moderation_outcome */
    uint8_t queue;      /**< the frame's queue (when mapped) */
    uint8_t irq;        /**< 1: the queue interrupts now (frame threshold or unmoderated) */
    uint8_t pad;
    uint16_t announced; /**< descriptors announced by that interrupt */
    uint16_t pad2;
} rts_nic_moderation_rx_result;

/** Reset: no queue, empty map. Context: any. Cost: O(queues + map). */
void rts_nic_moderation_init(rts_nic_moderation *nic);

/**
 * Allocate a queue.
 * Context: task (socket bind). Cost: O(RTS_NIC_MAX_QUEUES).
 * @param size n_q, 1..65535
 * @param t_abs, t_pack timers in ns (0 = off)
 * @param frames frame threshold (0 = off), <= size
 * @param flow, prio written into its descriptors
 * @param[out] qid the queue
 * @retval RTS_OK  @retval RTS_EINVAL bad size/threshold  @retval RTS_EFULL no free queue
 */
rts_err rts_nic_moderation_queue_add(rts_nic_moderation *nic, unsigned size, rts_time_ns t_abs, rts_time_ns t_pack, unsigned frames,
                          unsigned flow, unsigned prio, uint8_t *qid);

/**
 * Change a queue's parameters at run time. Running timers keep their expiry;
 * the new values apply from the next frame. If the new size is below the
 * waiting count, the queue drops frames until the next interrupt.
 * Context: task. Cost: O(1).
 * @retval RTS_OK  @retval RTS_ENOENT no such queue  @retval RTS_EINVAL bad size/threshold
 */
rts_err rts_nic_moderation_queue_config(rts_nic_moderation *nic, unsigned qid, unsigned size, rts_time_ns t_abs, rts_time_ns t_pack,
                             unsigned frames);

/**
 * Release a queue and every map entry pointing to it. Waiting descriptors
 * are discarded (counted in `dropped`).
 * Context: task (socket close). Cost: O(RTS_NIC_MAP_MAX).
 * @retval RTS_OK  @retval RTS_ENOENT no such queue
 */
rts_err rts_nic_moderation_queue_release(rts_nic_moderation *nic, unsigned qid);

/**
 * Map (proto, port) to queue `qid`.
 * Context: task. Cost: O(RTS_NIC_MAP_MAX).
 * @retval RTS_OK  @retval RTS_ENOENT no such queue  @retval RTS_EEXIST already mapped
 * @retval RTS_EFULL map full  @retval RTS_EINVAL bad protocol or port
 */
rts_err rts_nic_moderation_map_add(rts_nic_moderation *nic, unsigned proto, unsigned port, unsigned qid);

/** Remove the entry of (proto, port). Context: task. Cost: O(RTS_NIC_MAP_MAX).
 *  @retval RTS_OK  @retval RTS_ENOENT not mapped */
rts_err rts_nic_moderation_map_remove(rts_nic_moderation *nic, unsigned proto, unsigned port);

/**
 * A socket binds (§7.3.3): allocate a queue and map (proto, port) to it.
 * Context: task. Cost: O(RTS_NIC_MAP_MAX).
 * @return as rts_nic_moderation_queue_add() and rts_nic_moderation_map_add(); on error nothing changed
 */
rts_err rts_nic_moderation_bind(rts_nic_moderation *nic, unsigned proto, unsigned port, unsigned size, rts_time_ns t_abs,
                     rts_time_ns t_pack, unsigned frames, unsigned flow, unsigned prio, uint8_t *qid);

/** A socket closes: remove its map entry and release its queue when no other
 *  entry uses it. Context: task. @retval RTS_OK  @retval RTS_ENOENT not mapped */
rts_err rts_nic_moderation_unbind(rts_nic_moderation *nic, unsigned proto, unsigned port);

/**
 * The queue the distribution map gives (proto, port), without receiving
 * anything (the NIC's lookup before it writes a frame to memory).
 * Context: NIC. Cost: O(RTS_NIC_MAP_MAX).
 * @return the queue id, or -1 when the frame would be dropped as unregistered
 */
int rts_nic_moderation_lookup(const rts_nic_moderation *nic, unsigned proto, unsigned port);

/**
 * A validated frame of (proto, port) arrives at `now`.
 * Context: NIC (the simulator's NIC model). Cost: O(RTS_NIC_MAP_MAX).
 * @param[out] r outcome, queue, and whether the queue interrupts now
 */
void rts_nic_moderation_rx(rts_nic_moderation *nic, unsigned proto, unsigned port, rts_time_ns now, rts_nic_moderation_rx_result *r);

/** Earliest running timer expiry over all queues, 0 when none runs.
 *  Context: any. Cost: O(RTS_NIC_MAX_QUEUES). */
rts_time_ns rts_nic_moderation_next_expiry(const rts_nic_moderation *nic);

/**
 * Fire every queue whose timer has expired at `now`: each announces its
 * waiting descriptors (rts_nic_moderation_queue.announced) and starts empty.
 * Context: NIC. Cost: O(RTS_NIC_MAX_QUEUES).
 * @return bit q set for each queue that interrupted
 */
uint32_t rts_nic_moderation_expire(rts_nic_moderation *nic, rts_time_ns now);

/** The descriptor queue `qid` writes (§9). Context: any. Cost: O(1).
 *  @retval RTS_OK  @retval RTS_ENOENT no such queue */
rts_err rts_nic_moderation_describe(const rts_nic_moderation *nic, unsigned qid, rts_nic_moderation_desc *d);

/** Active queues. Context: any. Cost: O(RTS_NIC_MAX_QUEUES). */
unsigned rts_nic_moderation_queue_count(const rts_nic_moderation *nic);

/** On-NIC register memory for m queue entries, Table 1: m · 30 B + 14 B
 *  (the extra 14 B entry is the unmoderated non-transport queue).
 *  Context: any. Cost: O(1). */
uint32_t rts_nic_moderation_memory_bytes(uint32_t m);

/**
 * Admission bound (Behnke §7.3.2): the most interrupts one queue moderated by
 * its timers raises in any window of `delta_ns`. After an interrupt the queue
 * is empty; the next one needs a frame, then the absolute timer t_abs (from
 * that frame) or the packet timer t_pack (restarted by every frame) to
 * expire, so two interrupts are at least min(t_abs, t_pack) apart (of the
 * timers that are on): ⌈Δ / min⌉. A frame threshold (`frames` > 0) or a
 * queue with both timers off interrupts as fast as frames arrive: no bound
 * without the traffic, UINT64_MAX. Pure; usable from Python. Choices: 0 for
 * Δ = 0. Context: any. Cost: O(1), one 64-bit division.
 */
uint64_t rts_nic_moderation_max_irqs(rts_time_ns t_abs, rts_time_ns t_pack, uint32_t frames,
                                     rts_time_ns delta_ns);

#endif /* RTSHIELD_RTS_NIC_MODERATION_H */
