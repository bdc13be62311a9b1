/**
 * @file rts_shield.h
 * @brief The one entry point a network driver uses: every libshield
 *        protection behind a handful of hooks named after the places in a
 *        driver where they are called.
 *
 * A driver (a FreeRTOS-Plus-TCP network interface, any other driver through
 * the port layer, the rtshield simulator's device model) fills one rts_shield_cfg, calls
 * rts_shield_init(), binds its flows, and then calls:
 *
 * | place in the driver (context)                        | hook                              |
 * |------------------------------------------------------|-----------------------------------|
 * | NIC filter in front of the interrupt controller (hw)  | rts_shield_filter_arrival_isr(), _zero_isr() |
 * | RX interrupt entry, once per interrupt (ISR)          | rts_shield_rx_irq_isr()           |
 * | RX interrupt, once per frame it takes (ISR)           | rts_shield_rx_frame_isr() (receive path on) or rts_shield_rx_packet_isr() (driver queue) |
 * | RX interrupt, the driver queue was full (ISR)         | rts_shield_rx_queue_full_isr()    |
 * | RX interrupt exit, with the ISR's measured time (ISR)  | rts_shield_rx_isr_done_isr()      |
 * | a timer the shield armed expired (ISR)                | rts_shield_timer_isr()            |
 * | network task, before it takes a packet (task)         | rts_shield_task_poll()            |
 * | network task takes its next packet (task)             | rts_shield_task_next() (receive path on) |
 * | network task completed a packet (task)                | rts_shield_task_done()            |
 * | polling task woke / finished harvesting (task)        | rts_shield_poll_begin(), rts_shield_poll_end() |
 * | critical task ended a cycle (task)                    | rts_shield_cycle_end()            |
 *
 * Every hook returns its decisions as a value (rts_shield_dec): operations
 * on the RX lines and the shield's timers, which rts_shield_apply() performs
 * through the port, and flags the driver acts on itself (drop the frame and
 * why, suspend or resume the network task, set the network task's priority,
 * start the polling task). Errors are rts_err.
 *
 * Several protections may be active at once (Danicki et al. §4 suggest
 * Hysteresis with Burst; Behnke et al. combine flow queues with a global
 * limit). Each holds the RX line off on its own account: the line is
 * enabled only when no protection holds it, and the network task runs only
 * when no protection suspends it.
 *
 * Concurrency: one rts_shield per device. ISR-side and task-side hooks on
 * the same shield must not run concurrently: task-side hooks run with the
 * RX interrupt masked (taskENTER_CRITICAL()), each is O(1) plus the bounded
 * per-component costs documented in their headers.
 */
#ifndef RTSHIELD_RTS_SHIELD_H
#define RTSHIELD_RTS_SHIELD_H

#include "rtshield/rts_budget_mit.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_detect.h"
#include "rtshield/rts_hyst_mit.h"
#include "rtshield/rts_opts.h"
#include "rtshield/rts_port.h"
#include "rtshield/rts_queue_mit.h"
#include "rtshield/rts_rx_driver.h"
#include "rtshield/rts_strict.h"
#include "rtshield/rts_types.h"

/** Protections, OR-ed into rts_shield_cfg.protections. */
typedef enum rts_shield_prot {
    RTS_SHIELD_BURST = 1u << 0,      /**< Danicki §2.2 Burst Mitigation */
    RTS_SHIELD_HYSTERESIS = 1u << 1, /**< Danicki §2.2 Hysteresis Mitigation */
    RTS_SHIELD_BUDGET = 1u << 2,     /**< Danicki §2.2 Budget Mitigation */
    RTS_SHIELD_QUEUE = 1u << 3,      /**< Danicki §2.2 Queue Mitigation */
    RTS_SHIELD_STRICT = 1u << 4,     /**< Regehr & Duongsaa §3.2 strict limiter, per source */
    RTS_SHIELD_BURSTY = 1u << 5,     /**< Regehr & Duongsaa §3.3 bursty limiter, one shared timer */
    RTS_SHIELD_COUNTDOWN = 1u << 6,  /**< Regehr & Duongsaa §3.4 countdown filter (hardware) */
    RTS_SHIELD_RX_PATH = 1u << 7,    /**< Behnke §5: early demultiplexing into flow queues */
    RTS_SHIELD_PROT_ALL = 0xFFu
} rts_shield_prot;

/** Timers the shield arms (ids of rts_shield_op.timer); the driver maps each
 *  to a hardware timer. Strict limiter of source k: RTS_SHIELD_TIMER_STRICT0 + k. */
enum {
    RTS_SHIELD_TIMER_MIT = 0,     /**< Burst slice end, or the bursty limiter's shared timer
                                       (one timer: burst and bursty do not combine) */
    RTS_SHIELD_TIMER_POLL = 1,    /**< global limit: wakes the polling task at a period start */
    RTS_SHIELD_TIMER_STRICT0 = 2,
    RTS_SHIELD_TIMERS = RTS_SHIELD_TIMER_STRICT0 + RTS_SHIELD_MAX_SOURCES
};

/** Why the shield dropped a frame (rts_shield_dec.drop when RTS_SHIELD_F_DROP is set). */
typedef enum rts_shield_drop {
    RTS_SHIELD_DROP_NONE = 0,
    RTS_SHIELD_DROP_LIMITER = 1,      /**< an interrupt-level protection refused it (burst over
                                           capacity, a limiter whose line should have been off,
                                           the countdown filter's full latch) */
    RTS_SHIELD_DROP_SHORT_CIRCUIT = 2, /**< path (a): ring low, lowest priority: buffer reposted */
    RTS_SHIELD_DROP_FLOW_SERVER = 3,  /**< path (b): the flow's deferrable server is exhausted */
    RTS_SHIELD_DROP_QUEUE_FULL = 4,   /**< its flow queue (or the driver queue) is full */
    RTS_SHIELD_DROP_GLOBAL_LIMIT = 5, /**< over the global capacity (left in the ring when there is one) */
    RTS_SHIELD_DROP_REASONS = 6
} rts_shield_drop;

/** Flags of rts_shield_dec the driver acts on itself. */
typedef enum rts_shield_flag {
    RTS_SHIELD_F_DROP = 1u << 0,       /**< drop the frame at hand (reason in `drop`) */
    RTS_SHIELD_F_SUSPEND = 1u << 1,    /**< the network task must stop taking packets */
    RTS_SHIELD_F_RESUME = 1u << 2,     /**< the network task may take packets again */
    RTS_SHIELD_F_PRIO = 1u << 3,       /**< set the network task's priority to `task_prio` */
    RTS_SHIELD_F_RESCHEDULE = 1u << 4, /**< a higher-priority task may be ready: yield on ISR exit */
    RTS_SHIELD_F_POLL = 1u << 5,       /**< wake the polling task (the poll timer expired) */
    RTS_SHIELD_F_DELIVER = 1u << 6,    /**< countdown filter: deliver the interrupt to the CPU now */
    RTS_SHIELD_F_LATCHED = 1u << 7,    /**< countdown filter: the arrival was latched */
    RTS_SHIELD_F_RECYCLED = 1u << 8,   /**< path (c): a queued buffer was recycled (see rx result) */
    RTS_SHIELD_F_STOP = 1u << 9        /**< global limit: stop harvesting, leave the rest in the ring */
} rts_shield_flag;

/** One port operation: `act` on RX source `source`'s line and shield timer `timer`. */
typedef struct rts_shield_op {
    uint8_t source; /**< RX source (line) the action's line flags apply to */
    uint8_t timer;  /**< shield timer (RTS_SHIELD_TIMER_*) the timer flags apply to */
    uint16_t pad;
    rts_action act; /**< port flags only (line, timer, timer interrupt) */
} rts_shield_op;

/** Most port operations one hook returns (bursty tick: the timer plus every source). */
enum { RTS_SHIELD_MAX_OPS = 2 + RTS_SHIELD_MAX_SOURCES };

/** Decisions of one hook. Zero-initialise (or let the hook do it). */
typedef struct rts_shield_dec {
    uint32_t flags;  /**< OR of rts_shield_flag */
    uint8_t drop;    /**< rts_shield_drop when RTS_SHIELD_F_DROP */
    uint8_t task_prio; /**< network task priority when RTS_SHIELD_F_PRIO */
    uint8_t n_ops;   /**< operations in `ops`, to perform in order */
    uint8_t pad;
    rts_shield_op ops[RTS_SHIELD_MAX_OPS];
} rts_shield_dec;

/** Where the shield's lines and timers are on this device (for rts_shield_apply()). */
typedef struct rts_shield_map {
    unsigned rx_line[RTS_SHIELD_MAX_SOURCES];     /**< interrupt line of RX source k */
    unsigned timer_hw[RTS_SHIELD_TIMERS];         /**< hardware timer of each shield timer */
    unsigned timer_line[RTS_SHIELD_TIMERS];       /**< interrupt line of that hardware timer */
} rts_shield_map;

/** Configuration: one struct, everything the protections need. Start from
 *  rts_shield_cfg_default(); only the fields of enabled protections are read. */
typedef struct rts_shield_cfg {
    uint32_t protections; /**< OR of rts_shield_prot */
    uint32_t n_sources;   /**< RX interrupt sources (lines), 1..RTS_SHIELD_MAX_SOURCES; several
                               only with no protection, strict or bursty (one driver queue) */
    rts_burst_mit_cfg burst;
    rts_hyst_mit_cfg hyst;
    rts_budget_mit_cfg budget;
    rts_time_ns strict_t_min[RTS_SHIELD_MAX_SOURCES]; /**< strict: minimum interarrival per source */
    rts_time_ns bursty_period;                        /**< bursty: the shared timer's period */
    uint32_t bursty_burst[RTS_SHIELD_MAX_SOURCES];    /**< bursty: interrupts per period per source */
    uint32_t bursty_mode;                             /**< rts_bursty_mode */
    uint32_t countdown_tick_ns;                       /**< countdown: counter period, >= 1 */
    uint32_t countdown_initial;                       /**< countdown: window = initial x tick */
    /* receive path (Behnke §5), with RTS_SHIELD_RX_PATH */
    uint32_t nbufs;            /**< buffers in the pool shared by ring and flow queues, 2..RTS_POOL_MAX_BUFS */
    uint32_t ring_size;        /**< of which posted to the RX descriptor ring at start, 1..nbufs */
    uint32_t recycle_threshold; /**< recycle below this many posted buffers, 0..ring_size;
                                     RTS_SHIELD_THRESHOLD_DEFAULT: ring_size x RTS_RX_RECYCLE_THRESHOLD_256 / 256 */
    uint32_t short_circuit;    /**< 1 (Behnke Figure 8): path (a) on; 0: off (their Figure 9, footnote 1) */
    uint32_t task_base_prio;   /**< the network task's own priority, 0..RTS_FLOW_PRIO_LEVELS-1 */
    uint32_t global_capacity;  /**< packets per global period; 0 = no global limit */
    rts_time_ns global_period; /**< global limit period (ns) */
    /* detection (Danicki §2.1): always on, costs nothing when not read */
    rts_time_ns detect_slice_ns;  /**< interrupt count slice; 0: no interrupt counting */
    uint32_t detect_irq_threshold; /**< slice crossing when more interrupts than this */
    uint32_t detect_fill_high;     /**< queue fill overload watermark; 0: no watermarks */
    uint32_t detect_fill_low;      /**< overload cleared at or below; < high */
} rts_shield_cfg;

/** rts_shield_cfg.recycle_threshold: use the rts_opts.h share. */
#define RTS_SHIELD_THRESHOLD_DEFAULT 0xFFFFFFFFu

/** A flow to bind: what a socket's bind() + setsockopt() say (Behnke §5.6). */
typedef struct rts_shield_flow {
    uint32_t proto;        /**< RTS_PROTO_TCP or RTS_PROTO_UDP */
    uint32_t local_port;   /**< 1..65535 */
    uint32_t src_addr;     /**< IPv4 source to match (host order), 0 = any */
    uint32_t prio;         /**< 0..RTS_FLOW_PRIO_LEVELS-1 */
    uint32_t capacity;     /**< server: packets per server period, 0 = unlimited */
    rts_time_ns server_period; /**< server period (ns); required when capacity > 0 */
    uint32_t queue_limit;  /**< packets its flow queue may hold, 1..RTS_POOL_MAX_BUFS; 0 = pool size */
} rts_shield_flow;

/** Which part of a configuration or flow libshield refused (rts_shield.bad_field
 *  after RTS_EINVAL from rts_shield_init() or rts_shield_bind()), so a tool
 *  can name the setting without restating the rules. */
typedef enum rts_shield_field {
    RTS_SHIELD_FIELD_NONE = 0,
    RTS_SHIELD_FIELD_PROTECTIONS = 1, /**< unknown bit, or protections that cannot combine */
    RTS_SHIELD_FIELD_SOURCES = 2,     /**< n_sources, or several with a one-source protection */
    RTS_SHIELD_FIELD_BURST = 3,       /**< burst slice or capacity */
    RTS_SHIELD_FIELD_HYSTERESIS = 4,  /**< hysteresis thresholds or sleep */
    RTS_SHIELD_FIELD_BUDGET = 5,
    RTS_SHIELD_FIELD_STRICT = 6,      /**< a strict limiter's minimum interarrival */
    RTS_SHIELD_FIELD_BURSTY = 7,      /**< bursty period, mode or a source's burst */
    RTS_SHIELD_FIELD_COUNTDOWN = 8,   /**< countdown tick or window */
    RTS_SHIELD_FIELD_POOL = 9,        /**< nbufs, ring_size or recycle_threshold */
    RTS_SHIELD_FIELD_SHORT_CIRCUIT = 10,
    RTS_SHIELD_FIELD_TASK_PRIO = 11,  /**< task_base_prio */
    RTS_SHIELD_FIELD_GLOBAL = 12,     /**< global capacity without a period */
    RTS_SHIELD_FIELD_DETECT_IRQ = 13, /**< detection slice */
    RTS_SHIELD_FIELD_DETECT_FILL = 14, /**< fill watermarks */
    RTS_SHIELD_FIELD_FLOW_PORT = 15,  /**< a flow's protocol or port */
    RTS_SHIELD_FIELD_FLOW_PRIO = 16,  /**< a flow's priority */
    RTS_SHIELD_FIELD_FLOW_SERVER = 17, /**< a flow's capacity or server period */
    RTS_SHIELD_FIELD_FLOW_QUEUE = 18  /**< a flow's queue limit */
} rts_shield_field;

/** Detection state and events (read-only for the driver). */
typedef struct rts_shield_detect {
    rts_detect_lateness_mon lateness; /**< the critical task's cycles */
    rts_detect_irq_count irqs;        /**< RX interrupts per slice */
    rts_detect_fill_wm fill;          /**< queue fill watermarks */
    uint32_t on;               /**< bit 0: irq counting, bit 1: watermarks */
    uint32_t pad;
    uint64_t late_cycles;      /**< cycles with negative earliness */
    uint64_t irq_crossings;    /**< slices whose count crossed the threshold */
    uint64_t fill_overloads;   /**< times the fill reached the high watermark */
} rts_shield_detect;

/** The whole shield of one device, in caller storage (no heap). The
 *  shield's own bookkeeping, which every hook reads or writes, comes right
 *  after the configuration and before the components' state, the receive
 *  path (about 3 KB) last: at small offsets each of those loads and stores
 *  is one instruction (on a Cortex-M3 a 64-bit one reaches 1020 bytes from
 *  its base, a 32-bit one 4095; farther, the address is computed first). */
typedef struct rts_shield {
    rts_shield_cfg cfg;
    uint32_t line_holds[RTS_SHIELD_MAX_SOURCES]; /**< per source: protections holding the line off */
    uint32_t task_holds;  /**< protections suspending the network task */
    uint32_t driver_fill; /**< driver queue fill last reported (receive path off) */
    uint64_t drops[RTS_SHIELD_DROP_REASONS]; /**< frames dropped per rts_shield_drop */
    uint32_t bad_field; /**< rts_shield_field of the last RTS_EINVAL from init or bind */
    rts_shield_detect detect;
    rts_burst_mit burst;
    rts_hyst_mit hyst;
    rts_budget_mit budget;
    rts_queue_mit queue;
    rts_strict strict[RTS_SHIELD_MAX_SOURCES];
    rts_bursty bursty;
    uint32_t bursty_id[RTS_SHIELD_MAX_SOURCES];
    rts_countdown countdown;
    rts_rx_driver rx;
} rts_shield;

/** Receive-path outcome of one frame (rts_shield_rx_frame_isr()). */
typedef struct rts_shield_rx {
    uint8_t outcome;       /**< rts_rx_outcome of the eager driver; RTS_RX_OUTCOMES when an
                                interrupt-level protection dropped the frame before it */
    uint8_t flow;          /**< the frame's flow (RTS_FLOW_NONE when not classified) */
    uint8_t prio;          /**< its priority */
    uint8_t recycled_flow; /**< flow of the buffer recycled by path (c), else RTS_FLOW_NONE */
    uint16_t repost;       /**< buffer to re-post to the ring, or RTS_BUF_NONE; when an
                                interrupt-level protection dropped the frame, its own buffer */
    uint8_t raised;        /**< 1: the network task's priority was raised */
    uint8_t pad;
} rts_shield_rx;

/** Fill `cfg` with no protection, one source, and the documented defaults
 *  of every component (rts_opts.h). Context: any. Cost: O(1). */
void rts_shield_cfg_default(rts_shield_cfg *cfg);

/**
 * Initialise every configured protection at time `now`. With Budget
 * Mitigation the RX line starts held off and the task suspended (no budget
 * before the first report, Danicki §2.2); the bursty limiter arms its
 * timer: perform `*dec` before enabling the RX interrupt.
 * Context: task, before the RX interrupt is enabled. Cost: O(nbufs + RTS_FLOW_MAX).
 * @retval RTS_OK initialised
 * @retval RTS_EINVAL a NULL pointer, an unknown protection bit, n_sources out
 *         of range, several sources with another protection than strict or
 *         bursty, strict with bursty or countdown, burst with bursty (they
 *         would share RTS_SHIELD_TIMER_MIT), or a component's parameter out
 *         of its documented range
 */
rts_err rts_shield_init(rts_shield *sh, const rts_shield_cfg *cfg, rts_time_ns now, rts_shield_dec *dec);

/**
 * Bind a flow (the socket layer's bind() and setsockopt(), Behnke §5.6).
 * Context: task, RX interrupt masked. Cost: O(RTS_FLOW_MAX).
 * @param[out] id the flow id
 * @retval RTS_OK bound
 * @retval RTS_EINVAL receive path off, or a field out of range (see rts_shield_flow)
 * @retval RTS_EEXIST (proto, port, source) is bound already
 * @retval RTS_EFULL no free flow slot (RTS_FLOW_MAX)
 */
rts_err rts_shield_bind(rts_shield *sh, const rts_shield_flow *f, rts_time_ns now, uint8_t *id);

/**
 * RX interrupt entry of `source` at `now`, once per interrupt: the strict or
 * bursty limiter's prologue, and the detection's interrupt count.
 * Context: the RX ISR. Cost: O(1).
 * @return true when the interrupt is admitted; false when a limiter found
 *         its line should have been off (the driver leaves the frames; with
 *         an edge NIC the carried frame is dropped: RTS_SHIELD_F_DROP is set)
 */
bool rts_shield_rx_irq_isr(rts_shield *sh, unsigned source, rts_time_ns now, rts_shield_dec *dec);

/**
 * RX interrupt, one frame, receive path off (the driver queue of Danicki
 * et al.): Burst Mitigation counts it at `tick_now` (the OS tick time the
 * ISR read at entry, Danicki §2.2).
 * Context: the RX ISR. Cost: O(1).
 * @return true to enqueue the frame; false: drop it (RTS_SHIELD_F_DROP set)
 */
bool rts_shield_rx_packet_isr(rts_shield *sh, rts_time_ns tick_now, rts_shield_dec *dec);

/**
 * RX interrupt exit: the ISR took `work_ns` of CPU time. Budget Mitigation
 * with cfg.budget.charge_isr charges it against the budget (Danicki §4: the
 * uncharged ISR is one reason the budget underestimates the network load);
 * nothing otherwise. Context: the RX ISR. Cost: O(1).
 */
void rts_shield_rx_isr_done_isr(rts_shield *sh, rts_time_ns now, rts_time_ns work_ns,
                                rts_shield_dec *dec);

/** RX interrupt: enqueueing into the driver queue failed, it is full (Queue
 *  Mitigation turns the line off). Context: the RX ISR. Cost: O(1). */
void rts_shield_rx_queue_full_isr(rts_shield *sh, rts_time_ns now, rts_shield_dec *dec);

/**
 * RX interrupt (or the polling task), one filled descriptor, receive path
 * on: Burst Mitigation at `tick_now`, then the eager driver of Behnke
 * Figure 8 on buffer `buf` holding `frame[0..len)`: global limit, header
 * invalidation, classification of the bytes, short circuit (a), flow server
 * (b), enqueue, priority inheritance, recycling (c); Queue Mitigation when
 * the flow queue is full; the fill watermarks.
 * With `frame` NULL the descriptor's `desc_flow` and `desc_prio` are used
 * instead of classifying (the unified NIC of Behnke §9).
 * Context: RX ISR or polling task. Cost: one classification (an O(1) flow
 * lookup: one hash, a slot or two) plus O(1).
 * @param[out] rx what the eager driver did (repost and recycled buffers); a
 *         frame Burst Mitigation dropped (outcome RTS_RX_OUTCOMES) was not
 *         harvested: its buffer, still a ring buffer, is in `repost`
 * @retval RTS_OK see dec (DROP with its reason, STOP, PRIO) and rx
 * @retval RTS_EINVAL receive path off, or buf is not a ring buffer (nothing changed)
 */
rts_err rts_shield_rx_frame_isr(rts_shield *sh, unsigned buf, const uint8_t *frame, size_t len,
                                unsigned desc_flow, unsigned desc_prio, rts_time_ns now,
                                rts_time_ns tick_now, rts_shield_rx *rx, rts_shield_dec *dec);

/**
 * A shield timer expired (the driver's timer ISR for shield timer `timer`).
 * Context: timer ISR. Cost: O(RTS_SHIELD_MAX_SOURCES).
 * @return RTS_OK, or RTS_EINVAL for an unknown timer
 */
rts_err rts_shield_timer_isr(rts_shield *sh, unsigned timer, rts_time_ns now, rts_shield_dec *dec);

/**
 * Network task, before it takes a packet: may it run? (Hysteresis and
 * Budget Mitigation.) When not, it sleeps `*sleep_ns` and asks again, or,
 * with `*sleep_ns` 0, blocks until a hook returns RTS_SHIELD_F_RESUME.
 * Context: network task. Cost: O(1).
 */
bool rts_shield_task_poll(rts_shield *sh, rts_time_ns now, rts_time_ns *sleep_ns, rts_shield_dec *dec);

/**
 * Network task takes the highest-priority waiting packet (receive path on).
 * When nothing waits, the inherited priority may drop (RTS_SHIELD_F_PRIO).
 * Context: network task, RX interrupt masked. Cost: O(1).
 * @retval RTS_OK job filled  @retval RTS_EEMPTY nothing waiting
 * @retval RTS_EINVAL receive path off
 */
rts_err rts_shield_task_next(rts_shield *sh, rts_rx_job *job, rts_shield_dec *dec);

/**
 * Network task completed a packet after `work_ns` of its CPU time: Budget
 * and Queue Mitigation account for it; with the receive path on, the
 * priority inheritance recomputes (RTS_SHIELD_F_PRIO when it drops), the
 * buffer goes back to the pool and a spare one is posted to the ring
 * (`*refill`, RTS_BUF_NONE when the ring is full or no buffer is spare).
 * Receive path off: `job` may be NULL and `fill` is the driver queue's fill.
 * Context: network task, RX interrupt masked. Cost: O(1).
 * @retval RTS_OK  @retval RTS_EINVAL job's buffer was not handed out
 */
rts_err rts_shield_task_done(rts_shield *sh, const rts_rx_job *job, rts_time_ns now,
                             rts_time_ns work_ns, uint32_t fill, uint16_t *refill,
                             rts_shield_dec *dec);

/** Polling task woke (RTS_SHIELD_F_POLL): packets it may harvest now, each
 *  through rts_shield_rx_frame_isr(). Context: polling task. Cost: O(1). */
uint32_t rts_shield_poll_begin(rts_shield *sh, rts_time_ns now);

/** Polling task done harvesting: back to interrupts (the line's hold is
 *  released) or stay polling (poll timer armed). Context: polling task. */
void rts_shield_poll_end(rts_shield *sh, rts_time_ns now, rts_shield_dec *dec);

/**
 * The critical task ended a cycle that started at `start` with deadline
 * `target`, at `now`: detection (lateness/earliness), Hysteresis and
 * Budget Mitigation.
 * Context: the critical task. Cost: O(1).
 * @return the cycle's metrics
 */
rts_detect_cycle_result rts_shield_cycle_end(rts_shield *sh, rts_time_ns start, rts_time_ns target,
                                      rts_time_ns now, rts_shield_dec *dec);

/**
 * Countdown filter (hardware in front of the interrupt controller): an
 * arrival at `now`. dec flags: DELIVER (raise the interrupt now; with
 * LATCHED as well, the latched arrival is delivered and this one latched),
 * LATCHED alone (held until the counter reaches zero), DROP (latch full,
 * reason LIMITER). `*zero_at` is when the host must call
 * rts_shield_filter_zero_isr() (UINT64_MAX: no call needed).
 * Context: the NIC model. Cost: O(1).
 */
void rts_shield_filter_arrival_isr(rts_shield *sh, rts_time_ns now, rts_time_ns *zero_at,
                                   rts_shield_dec *dec);

/** Countdown filter: the counter reached zero at `now`.
 *  @return true: deliver the latched arrival's interrupt now. Context: the NIC model. O(1). */
bool rts_shield_filter_zero_isr(rts_shield *sh, rts_time_ns now);

/** Which hooks of a driver the configured protections use, for drivers
 *  that charge a cost per hook (the simulator). */
enum {
    RTS_SHIELD_HOOK_RX_ISR = 1u << 0, /**< per-frame work in the RX ISR (burst, strict, bursty) */
    RTS_SHIELD_HOOK_TASK = 1u << 1,   /**< per-packet work in the network task (hysteresis, budget, queue) */
    RTS_SHIELD_HOOK_REPORT = 1u << 2  /**< the critical task reports each cycle (hysteresis, budget) */
};

/** Hooks that do something for the configured protections: a driver may
 *  skip a call whose bit is clear (it would decide nothing). */
enum {
    RTS_SHIELD_CALL_RX_IRQ = 1u << 8,    /**< rts_shield_rx_irq_isr(): strict, bursty, irq counting */
    RTS_SHIELD_CALL_RX_PACKET = 1u << 9, /**< rts_shield_rx_packet_isr(): burst */
    RTS_SHIELD_CALL_TASK_POLL = 1u << 10, /**< rts_shield_task_poll(): hysteresis, budget */
    RTS_SHIELD_CALL_TASK_DONE = 1u << 11, /**< rts_shield_task_done(): budget, queue, receive path,
                                               fill watermarks */
    RTS_SHIELD_CALL_FILL = 1u << 12,      /**< rts_shield_fill_isr(): fill watermarks */
    RTS_SHIELD_CALL_RX_DONE = 1u << 13    /**< rts_shield_rx_isr_done_isr(): budget charging the ISR */
};

/** The driver queue's fill after an enqueue (receive path off; with it the
 *  shield follows the flow queues itself): the fill watermarks of the
 *  detection. Context: RX ISR. Cost: O(1). */
void rts_shield_fill_isr(rts_shield *sh, uint32_t fill);

/** OR of RTS_SHIELD_HOOK_* and RTS_SHIELD_CALL_* for the configured
 *  protections. Context: any. O(1). */
uint32_t rts_shield_hooks(const rts_shield *sh);

/** Frames the network task may take now (flow queues; receive path on).
 *  Context: any. Cost: O(1). */
uint32_t rts_shield_waiting(const rts_shield *sh);

/** The network task's current priority (its base when the receive path is
 *  off). Context: any. Cost: O(1). */
unsigned rts_shield_task_prio(const rts_shield *sh);

/**
 * Perform the port operations of `dec` in order through `port`, the RX
 * line writes through `gate` (may be NULL), with the lines and timers of
 * `map`. Context: any. Cost: at most RTS_SHIELD_MAX_OPS rts_port_apply().
 * @return dec->flags (what the driver does itself)
 */
uint32_t rts_shield_apply(const rts_port *port, rts_irq_gate *gate, const rts_shield_map *map,
                          const rts_shield_dec *dec);

#endif /* RTSHIELD_RTS_SHIELD_H */
