/**
 * @file rts_opts.h
 * @brief Every build-time option of libshield, with its default, unit and RAM cost.
 *
 * An application overrides an option by defining it before this header is
 * seen, usually through `-D` or an `rts_config.h` named by RTS_CONFIG_FILE.
 * Each option is `#ifndef`-guarded; the checks at the end stop the build
 * with a clear message when a value is out of range.
 *
 * Nothing in this header allocates: the sizes below fix the arrays inside
 * the caller-provided state structs.
 */
#ifndef RTSHIELD_RTS_OPTS_H
#define RTSHIELD_RTS_OPTS_H

#ifdef RTS_CONFIG_FILE
#include RTS_CONFIG_FILE
#endif

/* ---------------------------------------------------------------- general */

/** 1: RTS_ASSERT checks its condition and calls rts_port_assert_failed()
 *  (which the port provides) on failure. 0 (default): asserts compile to
 *  nothing. Cost when enabled: one compare per assert. */
#ifndef RTS_CONFIG_ASSERT
#define RTS_CONFIG_ASSERT 0
#endif

/* ------------------------------------------------------ what is built in */

/* Components a driver may leave out of the build (Zephyr-style: the API
 * stays declared, the component's source files compile to nothing, and
 * rts_shield refuses a protection that is not built with RTS_EINVAL and
 * bad_field RTS_SHIELD_FIELD_PROTECTIONS, or the detection's slice and
 * watermarks with RTS_SHIELD_FIELD_DETECT_IRQ / _FILL). A function of a
 * component left out is not defined: calling it is a link error, which
 * names what to switch back on. Each switch is 0 or 1, default 1 (all
 * built). Code size per component and per configuration: docs/codesize.md.
 * RAM is unchanged: the state structs keep their layout. */

/** Danicki et al. §2.2 mitigations: Burst, Hysteresis, Budget and Queue
 *  Mitigation (burst_mit.c, hyst_mit.c, budget_mit.c, queue_mit.c) and
 *  rts_shield's RTS_SHIELD_BURST / _HYSTERESIS / _BUDGET / _QUEUE. */
#ifndef RTS_CONFIG_MITIGATIONS
#define RTS_CONFIG_MITIGATIONS 1
#endif

/** Regehr & Duongsaa interrupt limiters: strict, bursty and the countdown
 *  filter (strict.c, bursty.c, countdown.c) and rts_shield's
 *  RTS_SHIELD_STRICT / _BURSTY / _COUNTDOWN. */
#ifndef RTS_CONFIG_LIMITERS
#define RTS_CONFIG_LIMITERS 1
#endif

/** Behnke et al. §5 receive path: classifier, flow table, flow queues,
 *  deferrable servers, priority inheritance, global limit and the eager /
 *  deferred driver (classifier.c, flow_table.c, flow_queue.c, dserver.c,
 *  prio_inherit.c, global_limit.c, rx_driver.c) and rts_shield's
 *  RTS_SHIELD_RX_PATH. */
#ifndef RTS_CONFIG_RX_PATH
#define RTS_CONFIG_RX_PATH 1
#endif

/** Behnke et al. §7 multiqueue NIC moderation and its parameter checks
 *  (nic_moderation.c, nic_params.c). Not used by rts_shield. */
#ifndef RTS_CONFIG_NIC
#define RTS_CONFIG_NIC 1
#endif

/** Danicki et al. §2.1 detection: interrupts per slice and queue-fill
 *  watermarks (rts_detect_irq_count_*, rts_detect_fill_wm_* in detect.c; rts_shield's
 *  detect_slice_ns and detect_fill_high). The lateness monitor
 *  (rts_detect_lateness_mon_*, rts_detect_cycle_eval) is always built: rts_shield's
 *  cycle end, Hysteresis and Budget Mitigation need it. */
#ifndef RTS_CONFIG_DETECT
#define RTS_CONFIG_DETECT 1
#endif

/* --------------------------------------------------------------- irq gate */

/** Interrupt lines one rts_irq_gate tracks. Range 1..32 (one bit per line in
 *  two uint32_t words). RAM: 8 bytes per gate whatever the value. */
#ifndef RTS_IRQ_GATE_MAX_LINES
#define RTS_IRQ_GATE_MAX_LINES 32
#endif

/* ---------------------------------------------------------- bursty limiter */

/** Interrupt sources one shared bursty timer may serve (Regehr §3.5).
 *  Range 1..32. RAM: 16 bytes per source slot in rts_bursty, plus 56 bytes
 *  for the shared timer state. */
#ifndef RTS_BURSTY_MAX_SOURCES
#define RTS_BURSTY_MAX_SOURCES 8
#endif

/* ------------------------------------------------------------------ shield */

/** RX interrupt sources (lines) one rts_shield guards (rts_shield.h). Range
 *  1..RTS_BURSTY_MAX_SOURCES (and at most 8). RAM: about 64 bytes per source
 *  (its strict limiter and line holds). */
#ifndef RTS_SHIELD_MAX_SOURCES
#define RTS_SHIELD_MAX_SOURCES 4
#endif

/* ------------------------------------------------------ Danicki mitigations */

/** Burst Mitigation defaults used by rts_burst_mit_cfg_default(): slice
 *  length in ns and packets per slice. The study's values (Danicki §3):
 *  600 packets per 20 ms, i.e. at most 30 000 packets/s. */
#ifndef RTS_BURST_MIT_SLICE_NS_DEFAULT
#define RTS_BURST_MIT_SLICE_NS_DEFAULT 20000000u
#endif
#ifndef RTS_BURST_MIT_CAPACITY_DEFAULT
#define RTS_BURST_MIT_CAPACITY_DEFAULT 600u
#endif

/** Burst Mitigation slice start. 0 (default, the paper): a new slice starts
 *  at the tick time of the first ISR after the old one ran out. 1: slices lie
 *  on a fixed grid. 0 or 1. */
#ifndef RTS_BURST_MIT_ALIGNED_DEFAULT
#define RTS_BURST_MIT_ALIGNED_DEFAULT 0
#endif

/** Budget Mitigation: 1 charges the RX ISR's measured work to the driver's
 *  budget as well. 0 (default, as the paper, which timed only the driver). */
#ifndef RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT
#define RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT 0
#endif

/** Budget Mitigation: 1 carries work beyond an exhausted budget over to the
 *  next report's budget. 0 (default): each report replaces the budget and the
 *  overdraft is forgotten. */
#ifndef RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT
#define RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT 0
#endif

/* ------------------------------------------------------------ receive path */

/** Flows in one flow table, including the special ARP, ICMP, background and
 *  default flows. Range 4..64. RAM: about 96 bytes per flow (entry with its 40-byte
 *  deferrable server, and its queue head); above 32 flows the flow queues'
 *  per-level sets of flows (rts_flow_set) take 8 bytes per priority level
 *  instead of 4, and every operation on them two words on a 32-bit core. */
#ifndef RTS_FLOW_MAX
#define RTS_FLOW_MAX 16
#endif

/** Slots of the flow table's lookup index: an open-addressed hash of the
 *  bound (protocol, port, source) keys, rebuilt at bind, unbind and
 *  source change, so the ISR's lookup reads one slot in the common case
 *  instead of scanning every flow. 16, 32, 64, 128 or 256, and at least
 *  RTS_FLOW_MAX (the fewer keys per slot, the shorter the probes).
 *  Default: the power of two from 2 x RTS_FLOW_MAX (32 for 16 flows).
 *  RAM: 8 bytes per slot. */
#ifndef RTS_FLOW_INDEX_SLOTS
#if RTS_FLOW_MAX <= 8
#define RTS_FLOW_INDEX_SLOTS 16
#elif RTS_FLOW_MAX <= 16
#define RTS_FLOW_INDEX_SLOTS 32
#elif RTS_FLOW_MAX <= 32
#define RTS_FLOW_INDEX_SLOTS 64
#else
#define RTS_FLOW_INDEX_SLOTS 128
#endif
#endif

/** Distinct flow priorities. Range 1..32: the non-empty lookup is one
 *  uint32_t bitmap and a count-leading-zeros (Behnke Figure 6). */
#ifndef RTS_FLOW_PRIO_LEVELS
#define RTS_FLOW_PRIO_LEVELS 32
#endif

/** Packet buffers in the pool shared by the RX descriptor ring and the flow
 *  queues. Range 2..65535. RAM: 4 bytes of bookkeeping per buffer (the
 *  buffer memory itself belongs to the port). */
#ifndef RTS_POOL_MAX_BUFS
#define RTS_POOL_MAX_BUFS 256
#endif

/** Queues of one multiqueue NIC (Behnke §7). Range 1..32. RAM: about 40
 *  bytes per queue. */
#ifndef RTS_NIC_MAX_QUEUES
#define RTS_NIC_MAX_QUEUES 8
#endif

/** Port-to-queue entries of the NIC distribution map. Range 1..256.
 *  RAM: 4 bytes per entry. */
#ifndef RTS_NIC_MAP_MAX
#define RTS_NIC_MAP_MAX 32
#endif

/** Special-flow defaults (Behnke §5.6: "special flows ... configured using
 *  C macro definitions"). ARP: priority, packets per server period (0 = no
 *  server, unlimited) and server period in ns. Priority in
 *  0..RTS_FLOW_PRIO_LEVELS-1; capacity 0..65535; period >= 1000 ns when the
 *  capacity is non-zero. Defaults: priority 1, 16 packets per 100 ms. */
#ifndef RTS_FLOW_ARP_PRIO
#define RTS_FLOW_ARP_PRIO 1
#endif
#ifndef RTS_FLOW_ARP_CAPACITY
#define RTS_FLOW_ARP_CAPACITY 16
#endif
#ifndef RTS_FLOW_ARP_PERIOD_NS
#define RTS_FLOW_ARP_PERIOD_NS 100000000ull
#endif

/** ICMP special flow, as the ARP options. Defaults: priority 1, 8 packets
 *  per 100 ms. */
#ifndef RTS_FLOW_ICMP_PRIO
#define RTS_FLOW_ICMP_PRIO 1
#endif
#ifndef RTS_FLOW_ICMP_CAPACITY
#define RTS_FLOW_ICMP_CAPACITY 8
#endif
#ifndef RTS_FLOW_ICMP_PERIOD_NS
#define RTS_FLOW_ICMP_PERIOD_NS 100000000ull
#endif

/** Frame bytes the eager driver invalidates in the data cache before it
 *  classifies (Behnke §5.3.2: "only the first cache lines ... containing the
 *  relevant header fields"). Must cover Ethernet + 802.1Q + a maximal IPv4
 *  header (60 B) + the 4 port bytes = 82 B; round up to cache lines.
 *  Range 82..1536. Default 96 (three 32-byte lines). No RAM cost. */
#ifndef RTS_RX_HDR_BYTES
#define RTS_RX_HDR_BYTES 96
#endif

/** Default share of the RX descriptor ring below which the eager driver
 *  recycles (Behnke §5.3.2, "e.g. 1/2"), as numerator over 256. Range
 *  1..256. Default 128 (one half). Overridable per queue at run time. */
#ifndef RTS_RX_RECYCLE_THRESHOLD_256
#define RTS_RX_RECYCLE_THRESHOLD_256 128
#endif

/** 1: the receive path's ISR (rts_rx_driver_eager_isr()) has the classifier's
 *  flow-only parse, the flow lookup and the queueing inlined into it, and
 *  rts_classifier_classify_isr() without header facts uses that lean parse: the
 *  fewest instructions per frame (docs/rx-isr-cost.md), about 1.3 KB more
 *  code on a Cortex-M3. 0: one parse, called (the smaller build). Both give
 *  the same results. Default: 0 when the compiler optimises for size (GCC
 *  and Clang define __OPTIMIZE_SIZE__ under -Os), else 1. */
#ifndef RTS_CONFIG_RX_INLINE
#if defined(__OPTIMIZE_SIZE__)
#define RTS_CONFIG_RX_INLINE 0
#else
#define RTS_CONFIG_RX_INLINE 1
#endif
#endif

/* ----------------------------------------------------------------- checks */

#if (RTS_CONFIG_MITIGATIONS != 0 && RTS_CONFIG_MITIGATIONS != 1) || \
    (RTS_CONFIG_LIMITERS != 0 && RTS_CONFIG_LIMITERS != 1) || \
    (RTS_CONFIG_RX_PATH != 0 && RTS_CONFIG_RX_PATH != 1) || (RTS_CONFIG_NIC != 0 && RTS_CONFIG_NIC != 1) || \
    (RTS_CONFIG_DETECT != 0 && RTS_CONFIG_DETECT != 1) || \
    (RTS_CONFIG_RX_INLINE != 0 && RTS_CONFIG_RX_INLINE != 1)
#error "RTS_CONFIG_MITIGATIONS, _LIMITERS, _RX_PATH, _NIC, _DETECT and _RX_INLINE must each be 0 or 1"
#endif
#if RTS_IRQ_GATE_MAX_LINES < 1 || RTS_IRQ_GATE_MAX_LINES > 32
#error "RTS_IRQ_GATE_MAX_LINES must be in 1..32 (one bit per line in a uint32_t)"
#endif
#if RTS_BURSTY_MAX_SOURCES < 1 || RTS_BURSTY_MAX_SOURCES > 32
#error "RTS_BURSTY_MAX_SOURCES must be in 1..32"
#endif
#if RTS_SHIELD_MAX_SOURCES < 1 || RTS_SHIELD_MAX_SOURCES > 8 || RTS_SHIELD_MAX_SOURCES > RTS_BURSTY_MAX_SOURCES
#error "RTS_SHIELD_MAX_SOURCES must be in 1..8 and at most RTS_BURSTY_MAX_SOURCES"
#endif
#if RTS_BURST_MIT_CAPACITY_DEFAULT < 1
#error "RTS_BURST_MIT_CAPACITY_DEFAULT must be at least 1 packet"
#endif
#if RTS_BURST_MIT_SLICE_NS_DEFAULT < 1
#error "RTS_BURST_MIT_SLICE_NS_DEFAULT must be at least 1 ns"
#endif
#if RTS_BURST_MIT_ALIGNED_DEFAULT != 0 && RTS_BURST_MIT_ALIGNED_DEFAULT != 1
#error "RTS_BURST_MIT_ALIGNED_DEFAULT must be 0 or 1"
#endif
#if RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT != 0 && RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT != 1
#error "RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT must be 0 or 1"
#endif
#if RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT != 0 && RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT != 1
#error "RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT must be 0 or 1"
#endif
#if RTS_FLOW_MAX < 4 || RTS_FLOW_MAX > 64
#error "RTS_FLOW_MAX must be in 4..64 (ARP, ICMP, background and default flows are always present)"
#endif
#if (RTS_FLOW_INDEX_SLOTS != 16 && RTS_FLOW_INDEX_SLOTS != 32 && RTS_FLOW_INDEX_SLOTS != 64 && \
     RTS_FLOW_INDEX_SLOTS != 128 && RTS_FLOW_INDEX_SLOTS != 256) || RTS_FLOW_INDEX_SLOTS < RTS_FLOW_MAX
#error "RTS_FLOW_INDEX_SLOTS must be 16, 32, 64, 128 or 256 and at least RTS_FLOW_MAX"
#endif
#if RTS_FLOW_PRIO_LEVELS < 1 || RTS_FLOW_PRIO_LEVELS > 32
#error "RTS_FLOW_PRIO_LEVELS must be in 1..32 (the non-empty bitmap is one uint32_t)"
#endif
#if RTS_POOL_MAX_BUFS < 2 || RTS_POOL_MAX_BUFS > 65535
#error "RTS_POOL_MAX_BUFS must be in 2..65535 (buffer indices are uint16_t)"
#endif
#if RTS_NIC_MAX_QUEUES < 1 || RTS_NIC_MAX_QUEUES > 32
#error "RTS_NIC_MAX_QUEUES must be in 1..32"
#endif
#if RTS_NIC_MAP_MAX < 1 || RTS_NIC_MAP_MAX > 256
#error "RTS_NIC_MAP_MAX must be in 1..256"
#endif
#if RTS_FLOW_ARP_PRIO < 0 || RTS_FLOW_ARP_PRIO >= RTS_FLOW_PRIO_LEVELS
#error "RTS_FLOW_ARP_PRIO must be in 0..RTS_FLOW_PRIO_LEVELS-1"
#endif
#if RTS_FLOW_ICMP_PRIO < 0 || RTS_FLOW_ICMP_PRIO >= RTS_FLOW_PRIO_LEVELS
#error "RTS_FLOW_ICMP_PRIO must be in 0..RTS_FLOW_PRIO_LEVELS-1"
#endif
#if RTS_FLOW_ARP_CAPACITY < 0 || RTS_FLOW_ARP_CAPACITY > 65535 || RTS_FLOW_ICMP_CAPACITY < 0 || RTS_FLOW_ICMP_CAPACITY > 65535
#error "RTS_FLOW_ARP_CAPACITY and RTS_FLOW_ICMP_CAPACITY must be in 0..65535"
#endif
#if (RTS_FLOW_ARP_CAPACITY > 0 && RTS_FLOW_ARP_PERIOD_NS < 1000) || (RTS_FLOW_ICMP_CAPACITY > 0 && RTS_FLOW_ICMP_PERIOD_NS < 1000)
#error "RTS_FLOW_ARP_PERIOD_NS / RTS_FLOW_ICMP_PERIOD_NS must be >= 1000 ns when the capacity is non-zero"
#endif
#if RTS_RX_HDR_BYTES < 82 || RTS_RX_HDR_BYTES > 1536
#error "RTS_RX_HDR_BYTES must be in 82..1536 (Ethernet + 802.1Q + 60-byte IPv4 header + ports)"
#endif
#if RTS_RX_RECYCLE_THRESHOLD_256 < 1 || RTS_RX_RECYCLE_THRESHOLD_256 > 256
#error "RTS_RX_RECYCLE_THRESHOLD_256 must be in 1..256"
#endif

/* ----------------------------------------------------------------- assert */

#if RTS_CONFIG_ASSERT && !defined(RTS_CDEF)
/** Provided by the port when RTS_CONFIG_ASSERT is 1: report a failed
 *  RTS_ASSERT and halt or reset; must not return (see rts_port.h).
 *  Context: wherever the assert sits, ISR included. Cost: the port's. */
void rts_port_assert_failed(const char *msg, const char *file, int line);
#define RTS_ASSERT(cond, msg)                                       \
    do {                                                            \
        if (!(cond)) rts_port_assert_failed((msg), __FILE__, __LINE__); \
    } while (0)
#else
#define RTS_ASSERT(cond, msg) ((void)0)
#endif

#endif /* RTSHIELD_RTS_OPTS_H */
