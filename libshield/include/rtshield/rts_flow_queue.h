/**
 * @file rts_flow_queue.h
 * @brief Differentiated flow queues over a closed buffer pool shared with the
 *        RX descriptor ring (Behnke et al. §5.3, Figures 6 and 8).
 *
 * Buffers are numbered 0..nbufs-1; their memory belongs to the port, this
 * component only knows where each one is:
 *
 *     RING  posted to the RX descriptor ring, waiting for (or holding) DMA data
 *     ISR   taken from the ring by the eager driver, not yet placed
 *     QUEUED in the FIFO of one flow
 *     TASK  taken by the network task (in process, or held by a socket)
 *     POOL  spare, ready to be posted to the ring
 *
 * and every move is one call that checks the buffer is where the caller says
 * it is, so no buffer is lost or duplicated (rts_flow_queue_check() counts them).
 *
 * Each flow's FIFO is linked through the buffers (no per-flow arrays). A
 * bitmap of non-empty priority levels plus, per level, a bitmap of
 * non-empty flows give the highest and the lowest non-empty flow in O(1)
 * (count-leading/trailing-zeros). Flows of equal priority are served round
 * robin.
 *
 * Every function is O(1) (rts_flow_queue_init() and rts_flow_queue_check() excepted), never
 * blocks, and may run in an ISR. Callers at different interrupt levels
 * serialise calls on the same queue set.
 */
#ifndef RTSHIELD_RTS_FLOW_QUEUE_H
#define RTSHIELD_RTS_FLOW_QUEUE_H

#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** "No buffer" in results. */
enum { RTS_BUF_NONE = 0xFFFF };

/** Where a buffer is. */
typedef enum rts_buf_state {
    RTS_BUF_RING = 0,
    RTS_BUF_ISR = 1,
    RTS_BUF_QUEUED = 2,
    RTS_BUF_TASK = 3,
    RTS_BUF_POOL = 4
} rts_buf_state;

/** A set of flows, bit f for flow id f: one 32-bit word while RTS_FLOW_MAX
 *  allows (the default, 16), else 64 bits (two words on a 32-bit core). */
#if RTS_FLOW_MAX <= 32
typedef uint32_t rts_flow_set;
#else
typedef uint64_t rts_flow_set;
#endif

/** Head of one flow's FIFO. */
typedef struct rts_flow_queue_flow {
    uint16_t head;  /**< oldest buffer, RTS_BUF_NONE when empty */
    uint16_t tail;  /**< newest buffer */
    uint16_t count; /**< buffers queued */
    uint8_t level;  /**< priority level the flow is filed under while non-empty */
    uint8_t pad;
} rts_flow_queue_flow;

/** Flow queues, ring accounting and buffer pool. Initialise with rts_flow_queue_init(). */
typedef struct rts_flow_queue {
    uint16_t nbufs;          /**< buffers in the closed pool */
    uint16_t ring_size;      /**< descriptor ring slots */
    uint16_t ring_threshold; /**< ring_low when fewer buffers than this are posted */
    uint16_t pool_head;      /**< first spare buffer, RTS_BUF_NONE when none */
    uint16_t n_state[5];     /**< buffers per rts_buf_state */
    uint16_t pad;
    uint32_t level_mask;     /**< bit l: some flow of priority l is non-empty */
    rts_flow_set level_flows[RTS_FLOW_PRIO_LEVELS]; /**< per level: non-empty flows */
    uint8_t rr_last[RTS_FLOW_PRIO_LEVELS];      /**< per level: flow served last */
    rts_flow_queue_flow q[RTS_FLOW_MAX];
    uint16_t next[RTS_POOL_MAX_BUFS];  /**< FIFO / spare-list links */
    uint8_t state[RTS_POOL_MAX_BUFS];  /**< rts_buf_state of each buffer */
    uint8_t owner[RTS_POOL_MAX_BUFS];  /**< flow of a QUEUED buffer */
} rts_flow_queue;

/**
 * Initialise: buffers 0..ring_size-1 are in the ring (the port posts them),
 * ring_size..nbufs-1 are spare; every queue is empty.
 * Context: task, before the RX interrupt is enabled. Cost: O(nbufs + RTS_FLOW_MAX).
 * @param threshold recycle when fewer than this many buffers are posted
 *        (Behnke suggests ring_size/2); 0..ring_size
 * @retval RTS_OK initialised
 * @retval RTS_EINVAL nbufs > RTS_POOL_MAX_BUFS, ring_size 0 or > nbufs, threshold > ring_size
 */
rts_err rts_flow_queue_init(rts_flow_queue *fq, unsigned nbufs, unsigned ring_size, unsigned threshold);

/** Change the recycling threshold. Context: any. Cost: O(1).
 *  @retval RTS_EINVAL threshold > ring_size */
rts_err rts_flow_queue_set_threshold(rts_flow_queue *fq, unsigned threshold);

/** RING → ISR: the eager driver takes a filled buffer from the ring.
 *  Context: ISR. Cost: O(1). @retval RTS_EINVAL buf not in the ring */
rts_err rts_flow_queue_rx_take_isr(rts_flow_queue *fq, unsigned buf);

/**
 * ISR → QUEUED at the tail of flow `flow`, filed under priority `prio` (a
 * non-empty flow whose priority changed moves to the new level).
 * Context: ISR. Cost: O(1).
 * @param limit the flow's queue bound (packets)
 * @retval RTS_OK queued
 * @retval RTS_EFULL the flow already holds `limit` buffers (buffer stays ISR)
 * @retval RTS_EINVAL bad buffer/state, flow or priority
 */
rts_err rts_flow_queue_push_isr(rts_flow_queue *fq, unsigned buf, unsigned flow, unsigned prio, unsigned limit);

/** ISR → RING: the eager driver re-posts a buffer it will not queue (short
 *  circuit, rejected, queue full). Context: ISR. Cost: O(1).
 *  @retval RTS_EINVAL buf not held by the ISR */
rts_err rts_flow_queue_repost_isr(rts_flow_queue *fq, unsigned buf);

/**
 * QUEUED → RING: recycle the oldest buffer of the lowest-priority non-empty
 * flow (path (c) of Behnke Figure 8); the port invalidates its header lines
 * and re-posts it.
 * Context: ISR. Cost: O(1).
 * @param[out] buf the recycled buffer
 * @param[out] flow its flow (may be NULL)
 * @retval RTS_OK recycled
 * @retval RTS_EEMPTY nothing queued
 * @retval RTS_EFULL the ring is full (nothing to recycle for)
 */
rts_err rts_flow_queue_recycle_lowest_isr(rts_flow_queue *fq, uint16_t *buf, uint8_t *flow);

/**
 * QUEUED → TASK: take the oldest buffer of the highest-priority non-empty
 * flow (round robin among flows of that priority).
 * Context: task (any). Cost: O(1).
 * @param[out] buf, flow, prio the buffer, its flow and the level it was queued at
 * @retval RTS_OK taken
 * @retval RTS_EEMPTY nothing queued
 */
rts_err rts_flow_queue_pop_highest(rts_flow_queue *fq, uint16_t *buf, uint8_t *flow, uint8_t *prio);

/** POOL → RING: a spare buffer for the ring (the deferred driver's refill).
 *  Context: task (any). Cost: O(1).
 *  @retval RTS_EFULL ring already full  @retval RTS_EEMPTY no spare buffer */
rts_err rts_flow_queue_refill(rts_flow_queue *fq, uint16_t *buf);

/** TASK → POOL: the stack is done with the buffer. Context: task (any).
 *  Cost: O(1). @retval RTS_EINVAL buf not held by the task */
rts_err rts_flow_queue_release(rts_flow_queue *fq, unsigned buf);

/** True when fewer than ring_threshold buffers are posted. Context: any. Cost: O(1). */
bool rts_flow_queue_ring_low(const rts_flow_queue *fq);

/** Highest priority with a queued buffer, -1 when all queues are empty. Context: any. O(1). */
int rts_flow_queue_highest_prio(const rts_flow_queue *fq);

/** Lowest priority with a queued buffer, -1 when all queues are empty. Context: any. O(1). */
int rts_flow_queue_lowest_prio(const rts_flow_queue *fq);

/** Buffers queued in flow `flow` (0 for a bad id). Context: any. Cost: O(1). */
unsigned rts_flow_queue_flow_count(const rts_flow_queue *fq, unsigned flow);

/** Buffers in state `s` (rts_buf_state). Context: any. Cost: O(1). */
unsigned rts_flow_queue_count(const rts_flow_queue *fq, unsigned s);

/**
 * Verify the invariants: every buffer is in exactly one place, the per-state
 * counts match, each FIFO is well linked and its count right, the bitmaps
 * match the non-empty queues, the ring holds at most ring_size buffers.
 * Context: task or test (O(nbufs + RTS_FLOW_MAX · RTS_FLOW_PRIO_LEVELS)).
 * @retval RTS_OK consistent
 * @retval RTS_EINVAL some invariant is broken
 */
rts_err rts_flow_queue_check(const rts_flow_queue *fq);

#endif /* RTSHIELD_RTS_FLOW_QUEUE_H */
