/**
 * @file rtsim.h
 * @brief The discrete-event device simulator: configuration, run, results.
 *
 * One simulated device: cores with interrupt lines, a fixed-priority
 * preemptive RTOS scheduler (round robin among equal priorities on the tick),
 * a NIC (edge: one interrupt per packet; DMA ring: descriptors + one
 * interrupt announcing them), the driver's RX queue, periodic tasks (the
 * critical task of Danicki et al. §3) and a background task. Every
 * mitigation decision is a call into libshield at the hook a driver uses.
 *
 * Time is integer nanoseconds; events are ordered by (time, priority,
 * sequence), so a configuration and seed give the same result bit for bit.
 * Memory is bounded by the configuration (queue sizes, bins kept between two
 * rtsim_take_bins() calls), never by the run length.
 *
 * This header is parsed by cffi after preprocessing: declarations only,
 * constants as enums, plain structs of scalars and fixed arrays.
 */
#ifndef RTSIM_RTSIM_H
#define RTSIM_RTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "rtshield/rts_opts.h"
#include "rtshield/rts_shield.h"

/** Fixed sizes of the configuration and result arrays. */
enum {
    RTSIM_MAX_CORES = 4,
    RTSIM_MAX_TASKS = 8,
    RTSIM_MAX_FLOWS = 8,
    RTSIM_MAX_SOURCES = RTS_SHIELD_MAX_SOURCES, /**< RX interrupt lines (sources) of the edge NIC */
    RTSIM_MAX_NIC_QUEUES = RTS_NIC_MAX_QUEUES,  /**< queues of the multiqueue NIC */
    RTSIM_FRAME_MAX = 1522,  /**< largest frame: Ethernet 1518 + one 802.1Q tag */
    RTSIM_MAX_RATES = 64,    /**< change points of a piecewise pattern */
    RTSIM_HIST_SUB = 1024,   /**< log histogram: bins per octave (0.1 % resolution) */
    RTSIM_HIST_BINS = 36864, /**< exact below 1024 ns, then up to 2^45 ns (9.8 h) */
    RTSIM_BIN_RING = 4096,   /**< finished bins kept until rtsim_take_bins() */
    RTSIM_COST_MAX_S = 60,   /**< largest CPU cost of one activity (any rtsim_costs field, a
                                  source's ISR work), seconds: the engine adds costs to the
                                  clock, which must not overflow */
    RTSIM_TRACE_MAX_FRAMES = 1048576, /**< frames of all replayed traces of one simulation */
    RTSIM_TRACE_MAX_BYTES = 67108864  /**< their bytes (64 MiB) */
};

/** Task kinds (ARCHITECTURE.md "The simulator", Tasks). */
typedef enum rtsim_task_kind {
    RTSIM_TASK_PERIODIC = 0,   /**< period P, work W per cycle (Danicki §3 critical task) */
    RTSIM_TASK_DRIVER = 1,     /**< network driver: one packet per driver_per_packet cost */
    RTSIM_TASK_BACKGROUND = 2, /**< always ready; measures leftover CPU */
    RTSIM_TASK_WORKER = 3, /**< receiver of one flow: waits on its mailbox, work_ns per message */
    RTSIM_TASK_POLLING = 4, /**< the global limiter's polling task (Behnke §5.5) */
    RTSIM_TASK_INPUT = 5    /**< the stock driver's input task (no receive path, dma_ring NIC):
                                 woken by the RX interrupt, it moves the ring's frames into the
                                 driver queue one by one, costs.isr_per_packet_ns each */
} rtsim_task_kind;

/** What a flow's frames are. */
typedef enum rtsim_proto {
    RTSIM_PROTO_TCP = 0,  /**< TCP SYN segments (a SYN flood, or connection requests) */
    RTSIM_PROTO_UDP = 1,  /**< UDP datagrams */
    RTSIM_PROTO_ICMP = 2, /**< ICMP echo requests */
    RTSIM_PROTO_ARP = 3,  /**< ARP requests */
    RTSIM_PROTO_RAW = 4   /**< an Ethernet frame of an unknown EtherType */
} rtsim_proto;

/** Rate patterns of a traffic flow. A scenario's shapes (a pyramid, steps) are
 *  change points of RTSIM_PAT_PIECEWISE, which the front end computes
 *  (rtshield.scenario.Flow.schedule). */
typedef enum rtsim_pattern {
    RTSIM_PAT_CONSTANT = 0,  /**< rate_pps for ever */
    RTSIM_PAT_POISSON = 1,   /**< exponential interarrivals with mean rate rate_pps */
    RTSIM_PAT_PIECEWISE = 2, /**< rates_pps[i] from rate_t_ns[i] (increasing, [0] = 0) on; the
                                 last rate holds; `poisson` picks exponential gaps */
    RTSIM_PAT_TRACE = 3 /**< a recorded trace (rtsim_flow_trace()): its frames' bytes at their
                             times from start_ns, looped every trace_period_ns (0: once) */
} rtsim_pattern;

/** NIC kinds. */
typedef enum rtsim_nic_kind {
    RTSIM_NIC_EDGE = 0,    /**< one interrupt per packet; the ISR carries the packet */
    RTSIM_NIC_DMA_RING = 1, /**< ring of `ring` descriptors; the ISR moves ready ones */
    RTSIM_NIC_MULTIQUEUE = 2 /**< Behnke §7: distribution map, per-queue moderation (rts_nic_*) */
} rtsim_nic_kind;

/** rtsim_flow_cfg.nic_queue of a flow the multiqueue NIC's map does not know. */
enum { RTSIM_NIC_UNMAPPED = 0xFFFFFFFFu };

/** rtsim_rx_cfg.recycle_threshold that leaves the share to libshield
 *  (RTS_SHIELD_THRESHOLD_DEFAULT, rts_opts.h RTS_RX_RECYCLE_THRESHOLD_256): a
 *  constant, because the binding does not see macros. */
enum { RTSIM_RX_RECYCLE_DEFAULT = RTS_SHIELD_THRESHOLD_DEFAULT };

/** Mitigations; each is a libshield component. */
typedef enum rtsim_mitigation_kind {
    RTSIM_MIT_NONE = 0,
    RTSIM_MIT_BURST = 1,      /**< Danicki §2.2 Burst */
    RTSIM_MIT_HYSTERESIS = 2, /**< Danicki §2.2 Hysteresis */
    RTSIM_MIT_BUDGET = 3,     /**< Danicki §2.2 Budget */
    RTSIM_MIT_QUEUE = 4,      /**< Danicki §2.2 Queue */
    RTSIM_MIT_STRICT = 5,     /**< Regehr & Duongsaa §3.2 */
    RTSIM_MIT_BURSTY = 6,     /**< Regehr & Duongsaa §3.3 */
    RTSIM_MIT_COUNTDOWN = 7,  /**< Regehr & Duongsaa §3.4 */
    RTSIM_MIT_POLLING = 8     /**< Regehr & Duongsaa §2, §5.2 "pure polling": no interrupt; a
                                   timer of period_ns polls the device (the simulator's own
                                   driver mode, no libshield component) */
} rtsim_mitigation_kind;

/** Why a packet was dropped. */
typedef enum rtsim_drop {
    RTSIM_DROP_LINE_DISABLED =
        0, /**< edge NIC: arrived while the RX line was off and already latched */
    RTSIM_DROP_IRQ_OVERRUN = 1,  /**< edge NIC: arrived while an interrupt was already pending */
    RTSIM_DROP_RING_FULL = 2,    /**< DMA ring full */
    RTSIM_DROP_QUEUE_FULL = 3,   /**< driver RX queue full */
    RTSIM_DROP_MITIGATION = 4,   /**< dropped in the ISR on a mitigation's decision */
    RTSIM_DROP_MAILBOX_FULL = 5, /**< a worker's mailbox was full when the driver handed it over */
    RTSIM_DROP_NIC_UNREGISTERED = 6, /**< multiqueue NIC: no map entry, dropped before any interrupt */
    RTSIM_DROP_NIC_QUEUE_FULL = 7,   /**< multiqueue NIC: its queue was full */
    RTSIM_DROP_RECYCLED = 8,      /**< queued, then its buffer recycled for a higher-priority one (c) */
    RTSIM_DROP_SHORT_CIRCUIT = 9, /**< ring low, lowest priority: reposted at once (a) */
    RTSIM_DROP_FLOW_SERVER = 10,  /**< its flow's deferrable server was exhausted (b) */
    RTSIM_DROP_GLOBAL_LIMIT = 11, /**< over the global limit with no ring to wait in (edge NIC) */
    RTSIM_DROP_NO_SOCKET = 12,    /**< processed by the stack, but no socket is bound to its port */
    RTSIM_DROP_COUNT = 13
} rtsim_drop;

/** Execution paths of the receive path's ISR, per frame (Behnke Fig. 10). */
typedef enum rtsim_rx_path {
    RTSIM_PATH_REGULAR = 0,       /**< classified and queued */
    RTSIM_PATH_SHORT_CIRCUIT = 1, /**< (a) */
    RTSIM_PATH_PRIO_RAISE = 2,    /**< queued, the network task's priority raised */
    RTSIM_PATH_RECYCLE = 3,       /**< queued, a lower-priority buffer recycled (c), with any raise */
    RTSIM_PATH_REJECTED = 4,      /**< refused by its flow server (b), its full queue, or a limiter */
    RTSIM_PATH_COUNT = 5
} rtsim_rx_path;

/** CPU contexts whose time is accounted: the ISRs (all cores), idle of core
 *  0, task i at RTSIM_CTX_TASK0 + i, idle of core k > 0 at
 *  RTSIM_CTX_IDLE_CORE1 + k - 1. Each core's contexts add up to its time. */
typedef enum rtsim_ctx {
    RTSIM_CTX_ISR_RX = 0,
    RTSIM_CTX_ISR_TICK = 1,
    RTSIM_CTX_ISR_TIMER = 2,
    RTSIM_CTX_IDLE = 3,
    RTSIM_CTX_TASK0 = 4,
    RTSIM_CTX_IDLE_CORE1 = 12, /**< RTSIM_CTX_TASK0 + RTSIM_MAX_TASKS */
    RTSIM_CTX_COUNT = 15       /**< RTSIM_CTX_IDLE_CORE1 + RTSIM_MAX_CORES - 1 */
} rtsim_ctx;

/** Kinds of trace records (rtsim_config.trace_capacity > 0). */
typedef enum rtsim_trace_kind {
    RTSIM_TR_ARRIVAL = 0,   /**< a packet arrives at the NIC; arg: flow */
    RTSIM_TR_ISR_START = 1, /**< an interrupt handler starts; arg: line */
    RTSIM_TR_ISR_END = 2,   /**< it ends; arg: line */
    RTSIM_TR_RUN = 3,       /**< the core runs task arg from now (-1: idle) */
    RTSIM_TR_DROP = 4,      /**< a packet is dropped; arg: rtsim_drop; value: flow */
    RTSIM_TR_LINE = 5, /**< an interrupt line's enable bit changes; arg: line; value: 1 on, 0 off */
    RTSIM_TR_CYCLE_END =
        6, /**< a periodic task ends a cycle; arg: task; value: earliness ns (< 0: late) */
    RTSIM_TR_DELIVER = 7, /**< a packet is delivered; arg: flow; value: latency ns */
    RTSIM_TR_PRIO = 8,    /**< the network task's priority changes; arg: task; value: new priority */
    RTSIM_TR_DETECT = 9   /**< a detector fired; arg: rtsim_detector; value: its count so far */
} rtsim_trace_kind;

/** libshield's overload detectors (Danicki §2.1), as the engine reports them. */
typedef enum rtsim_detector {
    RTSIM_DET_LATE = 0, /**< the critical task ended a cycle late */
    RTSIM_DET_IRQ = 1,  /**< a slice's RX interrupt count crossed the threshold */
    RTSIM_DET_FILL = 2, /**< the RX queue fill reached the high watermark */
    RTSIM_DET_COUNT = 3
} rtsim_detector;

/** One trace record. */
typedef struct rtsim_trace_rec {
    uint64_t t_ns;
    uint32_t kind; /**< rtsim_trace_kind */
    uint32_t core;
    int32_t arg;
    int64_t value;
} rtsim_trace_rec;

/** One task. */
typedef struct rtsim_task_cfg {
    uint32_t kind;     /**< rtsim_task_kind */
    uint32_t priority; /**< higher number = higher priority (FreeRTOS convention) */
    uint32_t core;     /**< core the task is pinned to */
    uint32_t critical; /**< 1: this periodic task is the measured critical task (at most one) */
    int64_t period_ns; /**< periodic: P */
    int64_t work_ns;   /**< periodic: CPU time per cycle on an idle core */
    int64_t offset_ns; /**< periodic: first release */
    uint32_t flow;     /**< worker: index of the flow it receives */
    uint32_t mailbox;  /**< worker: mailbox capacity, messages */
    uint32_t masks_rx; /**< periodic: 1 = each job masks the RX lines from its start to its end
                            (the application's mutual exclusion with the handlers, Regehr §4) */
} rtsim_task_cfg;

/** One traffic flow arriving at the NIC. */
typedef struct rtsim_flow_cfg {
    uint32_t pattern;      /**< rtsim_pattern */
    uint32_t size;         /**< bytes (recorded; no cost depends on it yet) */
    double rate_pps;       /**< constant, poisson */
    int64_t start_ns;      /**< no packet before this time */
    uint32_t source;       /**< RX interrupt source (line) it arrives on; < max(1, n_sources) */
    uint32_t n_rates;      /**< piecewise */
    uint32_t poisson;      /**< piecewise: 1 = exponential gaps at the current mean rate */
    double rates_pps[RTSIM_MAX_RATES];
    int64_t rate_t_ns[RTSIM_MAX_RATES]; /**< piecewise: change points */
    /* what its frames are (rtsim_frame_build()) */
    uint32_t proto;    /**< rtsim_proto */
    uint32_t dst_port; /**< TCP/UDP destination (the device's local) port */
    uint32_t src_port; /**< TCP/UDP source port */
    uint32_t src_addr; /**< IPv4 source address, host order */
    uint32_t dst_addr; /**< IPv4 destination address (the device), host order */
    uint32_t vlan;     /**< 1: one 802.1Q tag */
    uint32_t vlan_pcp; /**< the tag's priority code point, 0..7 */
    /* the socket a receiver bound to it (receive path on; Behnke §5.6) */
    uint32_t unbound;     /**< 0: a socket is bound to (proto, dst_port) (with the receive path: the
                               flow is registered in libshield); 1: none, frames are dropped
                               after protocol processing (no_socket) */
    uint32_t prio;        /**< flow priority, 0..RTS_FLOW_PRIO_LEVELS-1 */
    uint32_t capacity;    /**< deferrable server: packets per server period; 0 = unlimited */
    int64_t server_period_ns; /**< server period (> 0 when capacity > 0) */
    uint32_t queue_limit; /**< flow queue capacity, packets; 0 = the pool */
    uint32_t nic_queue;   /**< multiqueue NIC: its queue, or RTSIM_NIC_UNMAPPED */
    int64_t trace_period_ns; /**< trace: loop period (after the last frame); 0: one pass */
} rtsim_flow_cfg;

/** One queue of the multiqueue NIC (Behnke §7.3.2, Table 2). All timers 0:
 *  unmoderated, an interrupt on every arrival. */
typedef struct rtsim_nic_queue_cfg {
    uint32_t size;     /**< n_q, descriptors */
    int64_t t_abs_ns;  /**< absolute timer, 0 = off */
    int64_t t_pack_ns; /**< packet timer, 0 = off */
    uint32_t frames;   /**< frame threshold, 0 = off */
} rtsim_nic_queue_cfg;

/** The receive path of Behnke et al. §5 (libshield's flow queues). */
typedef struct rtsim_rx_cfg {
    uint32_t enabled;          /**< 1: early demultiplexing into flow queues */
    uint32_t nbufs;            /**< buffers in the pool shared by the ring and the flow queues */
    uint32_t recycle_threshold; /**< recycle below this many posted buffers;
                                     RTSIM_RX_RECYCLE_DEFAULT: libshield's default share */
    uint32_t short_circuit;    /**< 1: path (a) on (the paper); 0: off */
    uint32_t eager_invalidate; /**< 1: the ISR invalidates the whole frame (eager); 0: lazy (the paper) */
    uint32_t global_capacity;  /**< packets per global period; 0 = no global limit */
    int64_t global_period_ns;
} rtsim_rx_cfg;

/** CPU cost of each activity, in ns (the platform preset's [costs]). */
typedef struct rtsim_costs {
    int64_t isr_entry_exit_ns;    /**< entry + exit of any interrupt handler */
    int64_t isr_per_packet_ns;    /**< RX ISR work per packet (build, enqueue); with an input
                                       task (RTSIM_TASK_INPUT), that task's work per packet and
                                       the ISR only wakes it */
    /** RX ISR work per packet that finds the driver's queue full (edge NIC
     *  without [[sources]] or [rx]: the enqueue fails at once and nothing is
     *  copied); 0: the same as isr_per_packet_ns. */
    int64_t isr_queue_full_ns;
    int64_t driver_per_packet_ns; /**< driver work per packet (process, acknowledge) */
    int64_t tick_isr_ns;          /**< RTOS tick handler body */
    int64_t timer_isr_ns;         /**< mitigation timer handler body */
    int64_t mitig_isr_ns;         /**< mitigation hook in the RX ISR (count, compare) */
    int64_t mitig_driver_ns;      /**< mitigation hook in the driver, per packet */
    int64_t mitig_report_ns;      /**< the critical task's report to the mitigation, per cycle */
    int64_t mitig_poll_ns;        /**< one iteration of a suspended driver's sleep loop */
    /* receive path (rx.enabled): the ISR's work per frame by path, replacing isr_per_packet */
    int64_t path_ns[RTSIM_PATH_COUNT]; /**< per rtsim_rx_path (Behnke Fig. 10): its minimum */
    /** Optional distribution per path: the duration at the 90, 99, 99.9 and
     *  99.99 % quantiles (Behnke Fig. 10's bars), nondecreasing and at least
     *  path_ns; all 0: always path_ns. Drawn per frame from the seed,
     *  piecewise linear between the quantiles. */
    int64_t path_q_ns[RTSIM_PATH_COUNT][4];
    int64_t invalidate_eager_ns;    /**< ISR: invalidating the rest of the frame (eager only) */
    int64_t invalidate_deferred_ns; /**< network task: the same work when deferred (lazy) */
    int64_t poll_batch_ns;          /**< polling task: one wake-up */
    int64_t poll_per_packet_ns;     /**< polling task: per harvested frame */
    int64_t isr_rx_batch_ns; /**< RX ISR body once per interrupt (one batch of descriptors:
                                  hand-over, waking the network task), beyond entry/exit */
    int64_t driver_wake_ns; /**< network task: one wake-up (switch in, and the block and
                                 switch out once its queue is empty), charged to the first
                                 packet it takes after being switched in from another task
                                 or idle; the packets it finds queued behind it share it */
    int64_t driver_wake_input_ns; /**< with an input task (RTSIM_TASK_INPUT): the driver's
                                       wake-up instead of driver_wake_ns (the input task's
                                       hand-over switches it in, no interrupt); 0: the same
                                       as driver_wake_ns */
    int64_t input_resume_ns; /**< the input task (RTSIM_TASK_INPUT): switched in (from another
                                  task or idle) for a frame, charged to that frame; the frames it
                                  takes after it without a switch share it */
    int64_t driver_handover_ns; /**< network task: handing a packet to its worker's mailbox
                                     and notifying the worker, beyond driver_per_packet; a
                                     packet without a socket (dropped) does not pay it */
} rtsim_costs;

/** One RX interrupt source (edge NIC line) when rtsim_config.n_sources > 0.
 *  Sources are dispatched in index order (source 0 has the highest
 *  interrupt priority); all of them feed the one RX queue. */
typedef struct rtsim_source_cfg {
    int64_t isr_per_packet_ns;   /**< ISR work per packet of this source (replaces the cost) */
    int64_t min_interarrival_ns; /**< strict: this source's limiter (0: mitigation's value) */
    uint32_t burst;              /**< bursty: this source's burst (0: mitigation's value);
                                      all sources share one timer of mitigation.period_ns */
    uint32_t isr_only;           /**< 1: the ISR handles the event completely (an interrupt-level
                                      task): delivered at the ISR's end, never queued */
} rtsim_source_cfg;

/** Mitigation parameters; only those of `kind` are read. */
typedef struct rtsim_mitigation_cfg {
    uint32_t kind;               /**< rtsim_mitigation_kind */
    uint32_t also;               /**< further protections applied together: OR of RTS_SHIELD_BURST,
                                      _HYSTERESIS, _BUDGET, _QUEUE (Danicki §4 combinations) */
    int64_t slice_ns;            /**< burst: time slice */
    uint32_t capacity;           /**< burst: packets per slice */
    double block_below;          /**< hysteresis: block when earliness/P falls below */
    double unblock_above;        /**< hysteresis: unblock when earliness/P rises above */
    int64_t sleep_ns;            /**< hysteresis: sleep of the blocked driver's loop */
    int64_t min_interarrival_ns; /**< strict */
    uint32_t burst;              /**< bursty: interrupts per period */
    int64_t period_ns;           /**< bursty: replenishment period */
    int64_t window_ns;           /**< countdown: window */
    uint32_t bursty_lazy;        /**< bursty: 1 = the lazy timer of Regehr §3.3 (RTS_BURSTY_TIMER_LAZY) */
    uint32_t budget_charge_isr;  /**< budget: 1 = charge the RX ISR's time too (rts_budget_mit_cfg.charge_isr) */
    uint32_t one_enable_bit;     /**< 1: the protections and the application write each RX line's
                                      one enable bit (Regehr §4's race); 0: two bits (rts_irq_gate) */
} rtsim_mitigation_cfg;

/** A whole simulated device and run. */
typedef struct rtsim_config {
    uint64_t duration_ns;
    uint64_t bin_ns; /**< measurement bin (Danicki: 1 s) */
    uint64_t seed;   /**< PRNG seed (Poisson flows) */
    uint32_t n_cores;
    int64_t tick_ns;         /**< RTOS tick period; 0 = no tick (then no time slicing) */
    uint32_t time_slicing;   /**< 1: round robin among equal priorities on the tick */
    uint32_t nic_kind;       /**< rtsim_nic_kind */
    uint32_t nic_core;       /**< core that takes the NIC and timer interrupts */
    uint32_t ring;           /**< DMA ring descriptors */
    uint32_t rx_on_tick;     /**< dma_ring: 1 = the RX interrupt comes with the tick, for the frames
                                  the ring holds then (a board whose only interrupt context is the
                                  tick hook: the FreeRTOS POSIX port); 0 = with each frame */
    uint32_t queue_capacity; /**< driver RX queue, packets */
    uint32_t n_sources;      /**< 0: one RX source with costs.isr_per_packet_ns; 1..4: sources[] */
    rtsim_source_cfg sources[RTSIM_MAX_SOURCES];
    rtsim_costs costs;
    uint32_t n_tasks;
    rtsim_task_cfg tasks[RTSIM_MAX_TASKS];
    uint32_t n_flows;
    rtsim_flow_cfg flows[RTSIM_MAX_FLOWS];
    rtsim_mitigation_cfg mitigation;
    rtsim_rx_cfg rx;
    uint32_t n_nic_queues;   /**< multiqueue NIC */
    rtsim_nic_queue_cfg nic_queues[RTSIM_MAX_NIC_QUEUES];
    /* detection (libshield's detectors, fed by the live system) */
    int64_t detect_slice_ns;     /**< interrupt count slice; 0: no interrupt counting */
    uint32_t detect_irq_threshold; /**< a slice crosses with more RX interrupts than this */
    uint32_t detect_fill_high;   /**< RX queue (or flow queues) fill overload mark; 0: none */
    uint32_t detect_fill_low;    /**< overload cleared at or below this; < high */
    uint32_t trace_capacity; /**< 0: no trace; else records kept until rtsim_take_trace() */
    uint32_t exact_arrivals; /**< 1: one event per arrival, even one lost without changing
                                  anything (the reference path, for tests and benchmarks);
                                  0: such arrivals are counted in closed form (same results) */
} rtsim_config;

/** Measurements of one bin (or of the whole run, from rtsim_totals()). */
typedef struct rtsim_bin {
    uint64_t t_start_ns;
    uint64_t offered;    /**< packets arriving at the NIC */
    uint64_t irq_raised; /**< RX interrupt assertions */
    uint64_t isr_runs;   /**< RX ISR executions */
    uint64_t irq_lost;   /**< assertions lost (line pending or disabled and latched) */
    uint64_t received;   /**< packets the RX ISR took from the NIC (then queued or dropped) */
    uint64_t processed;  /**< packets finished by the driver */
    uint64_t delivered;  /**< packets delivered: finished by the flow's worker, or by the
                              driver for a flow without a worker */
    uint64_t dropped[RTSIM_DROP_COUNT];
    uint64_t cycles;         /**< critical cycles ended */
    uint64_t misses;         /**< critical deadlines missed: booked in the bin where the
                                  deadline passes (docs/decisions/lateness-in-bins.md) */
    double lateness_pct;     /**< lateness accrued within the bin by every critical cycle
                                  running past its deadline in it, in percent of P (whole ppm
                                  of P, rts_detect_cycle_eval()); summed over the bins, each
                                  cycle's (finish - deadline)/P * 100 */
    double lateness_max_pct; /**< worst single cycle: the largest lateness a cycle reached in
                                  the bin (one still running counts with its lateness so far) */
    uint64_t cpu_ns[RTSIM_CTX_COUNT];
    uint64_t rx_disabled_ns; /**< time with the RX line (of source 0) disabled */
    uint64_t polling_ns;     /**< time the receive path spent in polling mode (global limit) */
    uint32_t net_prio_max;   /**< highest priority the network task ran at */
    uint32_t pad;
    uint64_t detected[RTSIM_DET_COUNT]; /**< times each detector fired in the bin */
    uint64_t flow_offered[RTSIM_MAX_FLOWS];   /**< per scenario flow: packets offered */
    uint64_t flow_delivered[RTSIM_MAX_FLOWS]; /**< per scenario flow: packets delivered */
} rtsim_bin;

/** Per-task statistics over the run. */
typedef struct rtsim_task_stats {
    uint64_t jobs; /**< periodic: cycles ended; driver, worker: packets finished */
    uint64_t misses;
    int64_t max_response_ns; /**< periodic: max (finish - release); worker: max (finish - packet
                                arrival) */
    int64_t cycle_min_ns;    /**< periodic: min time between consecutive cycle ends (0 if none) */
    int64_t cycle_max_ns;
    double lateness_max_pct;
    double lateness_sum_pct;
    uint64_t cpu_ns;
} rtsim_task_stats;

/** Per-flow statistics over the run. */
typedef struct rtsim_flow_stats {
    uint64_t offered;
    uint64_t delivered;
    uint64_t dropped;
    uint64_t latency_max_ns;
    uint64_t received;  /**< taken from the NIC by the RX ISR (or the polling task) */
    uint64_t processed; /**< finished by the network task */
    uint64_t drops[RTSIM_DROP_COUNT]; /**< dropped, by reason */
} rtsim_flow_stats;

/** The receive path over the run (rx.enabled). */
typedef struct rtsim_rx_stats {
    uint64_t path_count[RTSIM_PATH_COUNT]; /**< frames per ISR execution path */
    uint64_t path_ns[RTSIM_PATH_COUNT];    /**< ISR CPU time per path */
    uint64_t polls;          /**< polling task wake-ups */
    uint64_t poll_ns;        /**< polling task CPU time */
    uint64_t prio_changes;   /**< network task priority changes */
    uint64_t to_poll;        /**< switches to polling mode */
    uint64_t in_flight;      /**< frames still in the device at the end (ring, queues, tasks) */
} rtsim_rx_stats;

/** What the mitigation did, counted by the engine at the port hooks. */
typedef struct rtsim_mitigation_stats {
    uint64_t line_disables; /**< RX line turned off */
    uint64_t line_enables;  /**< RX line turned back on */
    uint64_t timer_fires;   /**< mitigation timer interrupts */
    uint64_t suspends;      /**< driver suspended */
    uint64_t resumes;       /**< driver resumed */
    uint64_t drops;         /**< packets dropped on its decision */
    uint64_t mask_violations; /**< RX handlers started while a masks_rx task's job ran */
} rtsim_mitigation_stats;

typedef struct rtsim rtsim;

/** Check a configuration. Context: any thread.
 *  @return NULL when valid, else a static message naming the field. */
const char *rtsim_config_error(const rtsim_config *cfg);

/** Create a simulation. Allocates the RX queue, ring and event heap, sized by
 *  the configuration.
 *  @return the simulation, or NULL when rtsim_config_error() is non-NULL or
 *          memory is short. */
rtsim *rtsim_create(const rtsim_config *cfg);

/**
 * Hand flow `flow` (pattern RTSIM_PAT_TRACE) its recorded frames: frame i,
 * `len[i]` bytes (14..RTSIM_FRAME_MAX) taken in order from `bytes`, arrives
 * at start_ns + t_ns[i] (nondecreasing, each below trace_period_ns when
 * looping), and again one period later in every further pass. The frames
 * are copied; they enter the NIC like generated frames: the multiqueue
 * NIC's map and the receive path classify their real bytes with libshield.
 * Call once per trace flow, after rtsim_create() and before the first
 * rtsim_run_until(). All traces of a simulation together hold at most
 * RTSIM_TRACE_MAX_FRAMES frames and RTSIM_TRACE_MAX_BYTES bytes.
 * @return NULL when accepted, else a static message naming the problem.
 */
const char *rtsim_flow_trace(rtsim *sim, uint32_t flow, uint32_t n, const int64_t *t_ns,
                             const uint32_t *len, const uint8_t *bytes, size_t n_bytes);

/** Free everything of `sim` (NULL is accepted). */
void rtsim_destroy(rtsim *sim);

/** Advance the simulated clock to min(t_ns, duration), processing every
 *  event before it; a time before rtsim_now() changes nothing. Bins that end on the way become available to
 *  rtsim_take_bins().
 *  @return 0 on success; -1 if the bin ring is full (take bins more often)
 *          or the event heap overflowed (a bug: reported, never ignored). */
int rtsim_run_until(rtsim *sim, uint64_t t_ns);

/** Why rtsim_run_until() returned -1 (a fault of the simulator, never of
 *  the scenario: the bin ring was not emptied in time, the event heap
 *  overflowed, conservation of frames was violated), or NULL. */
const char *rtsim_error(const rtsim *sim);

/** Simulated time reached so far, ns. */
uint64_t rtsim_now(const rtsim *sim);

/** Events processed so far. */
uint64_t rtsim_events(const rtsim *sim);

/** Arrivals counted in closed form so far (lost without an event each;
 *  0 with cfg.exact_arrivals). Not part of rtsim_events(). */
uint64_t rtsim_arrivals_batched(const rtsim *sim);

/** Move up to `max` finished bins, oldest first, into `out`.
 *  At the end of the run the last (possibly partial) bin is included.
 *  @return the number of bins written. */
size_t rtsim_take_bins(rtsim *sim, rtsim_bin *out, size_t max);

/** Totals over the run so far (t_start_ns = 0; lateness_max_pct = worst cycle). Mid-run, a
 *  late cycle still running has its lateness counted up to the last bin boundary. */
void rtsim_totals(const rtsim *sim, rtsim_bin *out);

/** Move up to `max` trace records, oldest first, into `out`. Records that
 *  did not fit between two calls are counted by rtsim_trace_lost().
 *  @return the number of records written (0 when tracing is off). */
size_t rtsim_take_trace(rtsim *sim, rtsim_trace_rec *out, size_t max);

/** Trace records lost because the trace buffer was full. */
uint64_t rtsim_trace_lost(const rtsim *sim);

/** Statistics of task `i`. @return 0, or -1 for a bad index. */
int rtsim_task_stats_get(const rtsim *sim, uint32_t i, rtsim_task_stats *out);

/** Statistics of flow `i`. @return 0, or -1 for a bad index. */
int rtsim_flow_stats_get(const rtsim *sim, uint32_t i, rtsim_flow_stats *out);

/** Counters of the mitigation. */
void rtsim_mitigation_stats_get(const rtsim *sim, rtsim_mitigation_stats *out);

/** When each detector first fired (ns; UINT64_MAX: never) and how often.
 *  @param first, count arrays of RTSIM_DET_COUNT */
void rtsim_detect_get(const rtsim *sim, uint64_t *first, uint64_t *count);

/** Receive-path counters (all zero when rx.enabled is 0). */
void rtsim_rx_stats_get(const rtsim *sim, rtsim_rx_stats *out);

/** Frames in the device now: descriptor ring, latched interrupts, driver
 *  and flow queues, the tasks' hands and mailboxes. With every counter this
 *  closes the conservation law: offered = delivered + dropped + in flight. */
uint64_t rtsim_in_flight(const rtsim *sim);

/**
 * Write the frame flow `f` sends into `buf[0..cap)`: Ethernet II (with one
 * 802.1Q tag when f->vlan), then IPv4 + TCP SYN / UDP / ICMP echo request,
 * an ARP request, or an unknown EtherType, padded with zeros to f->size
 * bytes (at least the headers, at most RTSIM_FRAME_MAX). IPv4 and ICMP
 * checksums are set; TCP and UDP checksums are 0 (offloaded; UDP: none).
 * Context: any. Cost: O(size).
 * @return the frame length, or 0 when cap is too small or f->proto unknown.
 */
size_t rtsim_frame_build(const rtsim_flow_cfg *f, uint8_t *buf, size_t cap);

/** Smallest frame of protocol `proto` with `vlan` (0/1): its headers, no payload.
 *  @return bytes, or 0 for an unknown protocol. */
size_t rtsim_frame_min(uint32_t proto, uint32_t vlan);

/** Copy the critical task's cycle-time histogram (counts per bin, see
 *  rtsim_hist_lower_ns()) into `counts[0..n)`. @return bins copied. */
size_t rtsim_hist_cycle(const rtsim *sim, uint64_t *counts, size_t n);

/** Copy flow `flow`'s latency (arrival → delivery) histogram.
 *  @return bins copied (0 for a bad flow). */
size_t rtsim_hist_latency(const rtsim *sim, uint32_t flow, uint64_t *counts, size_t n);

/** Copy the histogram of the RX ISR's per-frame duration on execution
 *  path `path` (rtsim_rx_path; receive path only).
 *  @return bins copied (0 for a bad path or without the receive path). */
size_t rtsim_hist_path(const rtsim *sim, uint32_t path, uint64_t *counts, size_t n);

/** Lower edge, ns, of histogram bin `i` (bin i holds [lower(i), lower(i+1))). */
uint64_t rtsim_hist_lower_ns(uint32_t i);

/** Lower edges, ns, of bins `lo`, lo+1, ... into `out[0..n)` (one call for a
 *  histogram's range instead of one per bin). @return edges written. */
size_t rtsim_hist_edges_ns(uint32_t lo, uint64_t *out, size_t n);

/** Histogram bin holding value `v` ns. */
uint32_t rtsim_hist_index(uint64_t v);

#endif /* RTSIM_RTSIM_H */
