/**
 * @file rts_lwip.h
 * @brief libshield in the receive path of an lwIP network interface.
 *
 * The receive side of an lwIP Ethernet driver (the part of lwIP's
 * ethernetif template that takes frames in), with every rts_shield hook
 * in its place. Frames stay in the driver's own RX descriptor buffers
 * until libshield has classified them in the RX interrupt; only frames it
 * admitted are copied into a pbuf from PBUF_POOL, one at a time, in the
 * network task, in the order of their flows' priorities. A flood never
 * touches the pbuf pool nor tcpip_thread's mailbox.
 *
 * | place in the driver                    | call                     | hooks of rts_shield.h              |
 * |----------------------------------------|--------------------------|------------------------------------|
 * | RX interrupt entry                     | rts_lwip_irq_isr()       | rts_shield_rx_irq_isr()            |
 * | RX interrupt, each filled descriptor   | rts_lwip_frame_isr()     | rts_shield_rx_frame_isr()          |
 * | network task (NO_SYS: the main loop)   | rts_lwip_poll() / the receive task / tcpip_thread | task_poll, task_next, task_done |
 * | polling (global limit)                 | rts_lwip_poll() / the polling task | poll_begin, poll_end     |
 * | the shield's timers                    | rts_lwip_poll() deadlines / FreeRTOS software timers | timer_isr |
 * | the critical task's cycle end          | rts_lwip_cycle_end()     | rts_shield_cycle_end()             |
 *
 * Two variants, chosen by lwIP's NO_SYS (lwipopts.h):
 *
 * - NO_SYS 1 (bare metal): the main loop is the network task. It calls
 *   rts_lwip_poll() every turn, beside sys_check_timeouts(): the shield's
 *   timers are deadlines checked there, the global limit's polling happens
 *   there, and admitted frames go to netif->input (ethernet_input) in
 *   priority order. Priorities order the frames; there is no task to raise.
 *   Critical sections are lwIP's SYS_ARCH_PROTECT (SYS_LIGHTWEIGHT_PROT 1),
 *   which must mask the RX interrupt.
 * - NO_SYS 0 (lwIP on FreeRTOS, contrib/ports/freertos/sys_arch.c): the
 *   decisions are performed by libshield's FreeRTOS port
 *   (rts_shield_freertos.h). The network task is either the adapter's
 *   receive task (RTS_LWIP_RX_TASK: netif->input = tcpip_input with
 *   LWIP_TCPIP_CORE_LOCKING_INPUT 1, so protocol processing runs in it, at
 *   its inherited priority, under lwIP's core lock — a FreeRTOS mutex,
 *   whose own priority inheritance lends that priority to whoever holds
 *   the core) or tcpip_thread itself (RTS_LWIP_TCPIP_THREAD: the RX
 *   interrupt wakes it with one preallocated callback message, it drains
 *   the flow queues through netif->input = ethernet_input, and libshield
 *   sets tcpip_thread's priority).
 *
 * The driver supplies its descriptor ring: buffers 0..RTS_LWIP_BUFS-1 at
 * buf_mem + b * buf_size, a post() that gives a buffer to the DMA, the RX
 * interrupt's enable, and its descriptor loop (harvest(), which calls
 * rts_lwip_frame_isr() per filled descriptor) for the polling step.
 *
 * No heap: everything is in the caller's rts_lwip (the FreeRTOS variant's
 * tasks are static; its wake-up message comes from lwIP's memp pool).
 */
#ifndef RTSHIELD_RTS_LWIP_H
#define RTSHIELD_RTS_LWIP_H

#include "lwip/opt.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "rtshield/rts_shield.h"

#if !NO_SYS
#include "lwip/tcpip.h"
#include "rts_shield_freertos.h"
#endif

#if !LWIP_ETHERNET
#error "rts_lwip: the adapter receives Ethernet frames (LWIP_ETHERNET 1)"
#endif
#if NO_SYS && !SYS_LIGHTWEIGHT_PROT
#error "rts_lwip: NO_SYS needs SYS_LIGHTWEIGHT_PROT 1 (its SYS_ARCH_PROTECT masks the RX interrupt)"
#endif
#if !NO_SYS && (!LWIP_TCPIP_CORE_LOCKING || !LWIP_TCPIP_CORE_LOCKING_INPUT)
#error "rts_lwip: set LWIP_TCPIP_CORE_LOCKING and LWIP_TCPIP_CORE_LOCKING_INPUT to 1 (admitted frames are processed in the network task, not queued per frame to tcpip_thread)"
#endif
#if !NO_SYS && defined(LWIP_FREERTOS_SYS_ARCH_PROTECT_USES_MUTEX) && LWIP_FREERTOS_SYS_ARCH_PROTECT_USES_MUTEX
#error "rts_lwip: SYS_ARCH_PROTECT must mask interrupts (LWIP_FREERTOS_SYS_ARCH_PROTECT_USES_MUTEX 0)"
#endif

/** RX descriptor buffers the adapter knows (libshield buffer ids
 *  0..RTS_LWIP_BUFS-1): the driver's ring plus spares for recycling and
 *  refills. RAM: 2 B each for the frame lengths, beside the buffers. */
#ifndef RTS_LWIP_BUFS
#define RTS_LWIP_BUFS RTS_POOL_MAX_BUFS
#endif
RTS_STATIC_ASSERT(RTS_LWIP_BUFS >= 2 && RTS_LWIP_BUFS <= RTS_POOL_MAX_BUFS,
                  "RTS_LWIP_BUFS: 2..RTS_POOL_MAX_BUFS (every buffer is a libshield buffer)");

/** Frames the network task hands to lwIP per turn (NO_SYS: per
 *  rts_lwip_poll(); tcpip_thread: per wake-up message) when the
 *  configuration says 0. */
#ifndef RTS_LWIP_BATCH
#define RTS_LWIP_BATCH 8u
#endif

#if NO_SYS
typedef int rts_lwip_woken; /**< no scheduler: nothing to yield to */
/** Interrupt lines from this value on name the shield's timers (their
 *  "interrupt" is the deadline check in rts_lwip_poll()). */
#define RTS_LWIP_TIMER_LINE 0x100u
#else
typedef BaseType_t rts_lwip_woken; /**< pdTRUE: yield on ISR exit (portYIELD_FROM_ISR) */
/** Stack of the adapter's receive task (RTS_LWIP_RX_TASK), in words: lwIP
 *  processes frames in it (ethernet_input() and what it sends back). Set it
 *  to 1 with the tcpip_thread placement, which creates no receive task. */
#ifndef RTS_LWIP_RX_STACK
#define RTS_LWIP_RX_STACK (configMINIMAL_STACK_SIZE * 2)
#endif
/** Stack of the global limit's polling task, in words (it runs the driver's
 *  descriptor loop through libshield, no lwIP). 1 without a global limit. */
#ifndef RTS_LWIP_POLL_STACK
#define RTS_LWIP_POLL_STACK configMINIMAL_STACK_SIZE
#endif

/** Which task is the network task (NO_SYS 0). */
typedef enum rts_lwip_place {
    /** The adapter's receive task: netif->input = tcpip_input, processed in
     *  the task under the core lock (LWIP_TCPIP_CORE_LOCKING_INPUT). */
    RTS_LWIP_RX_TASK = 0,
    /** tcpip_thread: netif->input = ethernet_input; call rts_lwip_init()
     *  from tcpip_thread (tcpip_init()'s done callback). */
    RTS_LWIP_TCPIP_THREAD = 1
} rts_lwip_place;
#endif

/** What rts_lwip_frame_isr() tells the driver's descriptor loop. */
typedef enum rts_lwip_next {
    RTS_LWIP_NEXT = 0,  /**< taken: advance past the descriptor, go on */
    RTS_LWIP_STOP = 1,  /**< taken: advance, then stop (the global limit is reached) */
    RTS_LWIP_LEAVE = 2  /**< not taken: leave it and the rest in the ring for the polling step */
} rts_lwip_next;

/** The driver, as the adapter sees it. */
typedef struct rts_lwip_cfg {
    struct netif *netif;  /**< lwIP's netif; admitted frames go to its input function */
    uint8_t *buf_mem;     /**< RX buffer b is buf_mem + b * buf_size */
    uint32_t buf_size;    /**< bytes per RX buffer (the longest frame the NIC writes) */
    uint32_t batch;       /**< frames per network-task turn; 0: RTS_LWIP_BATCH */
    void *drv;            /**< passed back to every callback */
    /** Give buffer `buf` (at `mem`) to the DMA: the next free descriptor.
     *  Context: the RX ISR, or a task inside the adapter's critical section. */
    void (*post)(void *drv, uint16_t buf, uint8_t *mem);
    /** Enable or disable the NIC's RX interrupt. Any context, no blocking. */
    void (*rx_irq_set)(void *drv, bool on);
    /** The RX interrupt's descriptor loop: at most `max` filled descriptors,
     *  each through rts_lwip_frame_isr(); returns how many it took. Called
     *  by the polling step inside the critical section; NULL without a
     *  global limit. */
    uint32_t (*harvest)(void *drv, uint32_t max, rts_lwip_woken *woken);
    /** Invalidate the data cache over [addr, addr + len) (NULL: no D-cache). */
    void (*cache_invalidate)(void *drv, const void *addr, size_t len);
    /** A free-running clock in ns. NO_SYS: required. FreeRTOS: NULL for
     *  the tick count. Any context, no blocking. */
    uint64_t (*clock_ns)(void *drv);
#if !NO_SYS
    rts_lwip_place place;    /**< the network task */
    UBaseType_t poll_prio;   /**< the global limit's polling task (created with a global limit) */
#endif
} rts_lwip_cfg;

/** What the adapter did (libshield's own counters: sh.drops[], sh.rx.outcomes[]). */
typedef struct rts_lwip_stats {
    uint32_t rx_irqs;     /**< RX interrupts admitted */
    uint32_t frames;      /**< descriptors taken through rts_shield_rx_frame_isr() */
    uint32_t dropped;     /**< of which libshield dropped (reasons in sh.drops[]) */
    uint32_t left;        /**< descriptors left in the ring by the global limit */
    uint32_t bad_desc;    /**< descriptors refused unread: a buffer id over RTS_LWIP_BUFS, a
                               length of 0 or over buf_size, or a buffer libshield did not
                               post (re-posted when it is one of ours) */
    uint32_t to_lwip;     /**< admitted frames netif->input accepted */
    uint32_t no_pbuf;     /**< admitted frames that found no pbuf (link.memerr too) */
    uint32_t input_err;   /**< admitted frames netif->input refused */
    uint32_t polls;       /**< polling steps (global limit) */
    uint32_t polled;      /**< descriptors harvested by them */
    uint32_t wake_posts;  /**< tcpip_thread placement: wake-up messages posted */
    uint32_t wake_fails;  /**< ... refused by a full mailbox (the next frame retries) */
    uint8_t prio_max;     /**< highest priority the network task inherited */
    uint8_t pad[3];
} rts_lwip_stats;

/** The adapter's state, in caller storage. */
typedef struct rts_lwip {
    rts_shield sh;              /**< every protection; read-only for the driver */
    rts_lwip_cfg cfg;
    uint16_t len[RTS_LWIP_BUFS]; /**< length of the frame in each buffer */
    volatile uint32_t up;
#if NO_SYS
    rts_port port;              /**< RX line, the timers as deadlines */
    rts_irq_gate gate;
    rts_shield_map map;
    uint64_t timer_at[RTS_SHIELD_TIMERS];
    uint32_t timer_armed;       /**< bit per shield timer */
    uint32_t timer_irq_on;      /**< bit per shield timer: its "interrupt" enabled */
    volatile uint32_t poll_pending; /**< F_POLL: the next rts_lwip_poll() harvests */
#else
    rts_freertos fr;
    rts_freertos_shield g;
    TaskHandle_t net_task, poll_task;
    StaticTask_t rx_tcb, poll_tcb;
    StackType_t rx_stack[RTS_LWIP_RX_STACK], poll_stack[RTS_LWIP_POLL_STACK];
    struct tcpip_callback_msg *wake; /**< tcpip_thread placement: the RX wake-up */
    volatile uint32_t wake_posted;
    uint32_t retry_set;         /**< tcpip_thread placement: a held drain's retry timeout is set */
#endif
    rts_lwip_stats stats;
    /** What libshield said of the last frame rts_lwip_frame_isr() classified
     *  (outcome, flow, recycled flow): for the driver's own accounting, read
     *  after the call in the same context. Unchanged by a refused descriptor
     *  (stats.bad_desc). */
    rts_shield_rx last;
} rts_lwip;

/**
 * Initialise the adapter and `shield` (RTS_SHIELD_RX_PATH is added;
 * nbufs at most RTS_LWIP_BUFS; the network task's base priority is
 * task_base_prio), post the first ring_size buffers with post(), and
 * enable the RX interrupt.
 * Context: NO_SYS: the main loop, before the RX interrupt is enabled.
 * FreeRTOS: a task; with RTS_LWIP_TCPIP_THREAD, tcpip_thread (tcpip_init()'s
 * done callback). Creates the receive task (RTS_LWIP_RX_TASK) and, with a
 * global limit, the polling task.
 * Cost: rts_shield_init() + ring_size post() calls.
 * @retval RTS_OK running
 * @retval RTS_EINVAL a NULL pointer or callback, buf_size 0, nbufs over
 *         RTS_LWIP_BUFS, no harvest() with a global limit, a task this
 *         configuration needs whose stack (RTS_LWIP_RX_STACK,
 *         RTS_LWIP_POLL_STACK) is below configMINIMAL_STACK_SIZE, or
 *         `shield` refused by rts_shield_init() (sh.bad_field says which part)
 * @retval RTS_EFULL FreeRTOS: no memp element for the wake-up message
 */
rts_err rts_lwip_init(rts_lwip *l, const rts_lwip_cfg *cfg, const rts_shield_cfg *shield);

/**
 * Bind a flow (what bind() and setsockopt() say; for an lwIP pcb, its
 * local_port after udp_bind() or tcp_bind()).
 * Context: a task or the main loop, after rts_lwip_init(). Cost: rts_shield_bind().
 * @return as rts_shield_bind()
 */
rts_err rts_lwip_bind(rts_lwip *l, const rts_shield_flow *f, uint8_t *id);

/**
 * RX interrupt entry (source 0): the strict or bursty limiter's prologue
 * and the interrupt count, performed.
 * Context: the RX ISR. Cost: O(1).
 * @return true: harvest the filled descriptors; false: leave them
 */
bool rts_lwip_irq_isr(rts_lwip *l, rts_lwip_woken *woken);

/**
 * One filled descriptor: buffer `buf` holds a frame of `len` bytes.
 * libshield classifies it in place and queues, drops or leaves it; a
 * buffer to give back to the DMA (the frame's own after a drop, a
 * recycled one) goes out through post() before this returns. The network
 * task is woken when the frame was queued.
 * Context: the RX ISR, or the polling step inside the critical section.
 * Cost: rts_shield_rx_frame_isr() (one classification + O(1)) and at most
 * one post().
 * @return what the descriptor loop does next
 */
rts_lwip_next rts_lwip_frame_isr(rts_lwip *l, uint16_t buf, uint16_t len, rts_lwip_woken *woken);

/**
 * The critical task ended a cycle that started at `start` with deadline
 * `target`, now (the adapter's clock): detection, and Hysteresis and Budget
 * Mitigation when configured, performed (rts_shield_cycle_end()).
 * Context: the critical task (NO_SYS: the main loop). Cost: O(1).
 * @return the cycle's metrics
 */
rts_detect_cycle_result rts_lwip_cycle_end(rts_lwip *l, rts_time_ns start, rts_time_ns target);

#if NO_SYS
/**
 * One turn of the main loop's network work: the shield's timers that are
 * due (rts_shield_timer_isr()), the global limit's polling step when one
 * is pending (harvest() inside SYS_ARCH_PROTECT), then up to `batch`
 * admitted frames, highest priority first, each copied into a PBUF_POOL
 * pbuf and given to netif->input.
 * Context: the main loop (not an ISR). Cost: O(RTS_SHIELD_TIMERS) + the
 * harvest + per frame one pbuf_alloc(), one copy and lwIP's processing.
 * @return frames handed to lwIP (accepted or not)
 */
uint32_t rts_lwip_poll(rts_lwip *l);
#endif

#endif /* RTSHIELD_RTS_LWIP_H */
