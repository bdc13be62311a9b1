/**
 * @file rts_nic.h
 * @brief The device's NIC as both IP stacks see it: descriptor slots, the
 *        posted and filled rings, and the contract with a board's NIC
 *        backend. Stack-independent: FreeRTOS-Plus-TCP's interface
 *        (plustcp/rts_netif.c) and lwIP's (lwip/rts_netif_lwip.c) run on
 *        the same rings and the same backends.
 *
 * The device it models:
 *
 * - the NIC copies each arriving frame into the next posted slot (libshield
 *   buffer ids 0..RTS_NIC_SLOTS-1) and marks it filled; no posted slot: the
 *   NIC drops it ("ring full"). Backends: posix/rts_netif_posix.c (an
 *   AF_PACKET socket on a veth end read by a receive pthread outside
 *   FreeRTOS: the DMA engine) and mps2-an385/rts_netif_mps2.c (the
 *   Ethernet ISR reading the LAN9118's RX FIFO);
 * - the RX interrupt, rts_nic_rx_isr(), is the stack interface's: it
 *   harvests the filled slots through libshield (protected) or wakes the
 *   stack's usual receive task (stock path). POSIX: the tick hook (the
 *   port's one interrupt context); MPS2: the Ethernet ISR;
 * - the stack's side gives slots back to the NIC with rts_nic_post().
 *
 * Sizes: RTS_NIC_SLOTS follows the build's RTS_POOL_MAX_BUFS. POSIX: the RX
 * interrupt runs once per tick (1 kHz) and the FreeRTOS process shares the
 * host's CPUs, so the ring holds what arrives while the target does not
 * run: with 2048 buffers (tools/freertos_build.sh) 1792 descriptors take
 * ~50 ms of a 35 000 frames/s flood. MPS2: 128 buffers, 112 posted.
 */
#ifndef RTS_NIC_H
#define RTS_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "FreeRTOS.h"
#include "rts_net.h"

/** Descriptor slots (libshield buffers): ring plus spares. */
#define RTS_NIC_SLOTS RTS_POOL_MAX_BUFS
/** Slots posted to the NIC at the start (the ring). */
#define RTS_NIC_RING (RTS_POOL_MAX_BUFS - RTS_POOL_MAX_BUFS / 8)
/** Bytes per slot: the longest frame the NIC writes. */
#define RTS_NIC_SLOT_BYTES 1536

/** What a backend needs to open the NIC. */
typedef struct rts_nic_cfg {
    const char *ifname; /**< POSIX: the Linux interface to open (a veth end), by name */
    int rx_cpu;         /**< POSIX: host CPU of the receive thread (the NIC's DMA), -1: any */
    const uint8_t *mac; /**< MPS2: the MAC address the LAN9118 filters on (the device's) */
} rts_nic_cfg;

/* ------------------------------------------------- the stack's side */

/** Set the NIC up: its config and the counters it keeps (`stats`:
 *  nic_frames, nic_ring_full); both must outlive it. Before anything else. */
void rts_nic_init(const rts_nic_cfg *cfg, rts_net_stats *stats);

/** Start receiving (rts_nic_hw_start(), after rts_nic_hw_open() and the
 *  first posts); from now on a post may resume a NIC that stopped for want
 *  of a slot (rts_nic_hw_reposted()). */
BaseType_t rts_nic_start(void);

/** Slot `slot`'s memory (RTS_NIC_SLOT_BYTES). The slots are one array:
 *  slot s is rts_nic_mem(0) + s * RTS_NIC_SLOT_BYTES (the lwIP adapter's
 *  buf_mem and buf_size). */
uint8_t *rts_nic_mem(uint16_t slot);

/** Length of the frame in a filled slot. */
uint16_t rts_nic_len(uint16_t slot);

/** Give `slot` to the NIC (the posted ring). Context: the RX interrupt, or
 *  a task inside a critical section (one FreeRTOS-side user at a time). */
void rts_nic_post(uint16_t slot);

/** The oldest filled slot, left in the ring; false: none. Same contexts. */
bool rts_nic_filled(uint16_t *slot);

/** Take the oldest filled slot out of the ring (after rts_nic_filled()). */
void rts_nic_filled_take(void);

/** Count one frame libshield's per-frame hook took in `dt` ns of the
 *  board's cost clock (`e`: what the hook returned; `rx`: what it said):
 *  the receive path's cost per path and frames per flow in the stats
 *  (app/rts_net.h). Both stacks' interfaces call it in their harvest. */
void rts_nic_count_shield(rts_err e, const rts_shield_rx *rx, uint64_t dt);

/** The stack interface's RX interrupt (each interface implements it):
 *  harvest the filled slots. Context: the RX ISR; the caller yields on
 *  `*woken`. The POSIX backend calls it from the tick hook, the MPS2
 *  backend from its Ethernet ISR. */
void rts_nic_rx_isr(BaseType_t *woken);

/** POSIX board: the RX interrupt, from vApplicationTickHook(). */
void rts_nic_tick_isr(void);

/** POSIX board: the frames that reached the link (the veth end) by their
 *  kernel arrival time: `*n` bins of `*bin_ns` of the board's clock from
 *  `*t0_ns` (the NIC's opening; read each with __atomic_load_n: the receive
 *  thread may still count). */
const uint32_t *rts_nic_posix_link(uint64_t *t0_ns, uint64_t *bin_ns, uint32_t *n);

/* ----------------------------------------- the backend provides these */

/** Open the NIC (task context, before slots are posted). */
BaseType_t rts_nic_hw_open(void);
/** Start receiving (the RX interrupt may run from now on). */
BaseType_t rts_nic_hw_start(void);
/** Send one frame. Context: the stack's task. */
BaseType_t rts_nic_hw_output(const uint8_t *frame, size_t len);
/** Enable/disable the NIC's RX interrupt (libshield's RX line). Context: any. */
void rts_nic_hw_rx_irq(bool on);
/** CPU time of the calling context in ns (cost accounting), 0 when unknown. */
uint64_t rts_nic_hw_cpu_ns(void);
/** libshield's clock: the NIC's or board's free-running counter in ns, any
 *  context (NULL: the tick count, which stops while an interrupt above the
 *  tick's priority holds the CPU). */
extern uint64_t (*const rts_nic_hw_clock)(void *drv);
/** A slot was posted again (any context: the RX interrupt, or a task
 *  inside the critical section): a NIC that stopped receiving for want of
 *  one may go on. */
void rts_nic_hw_reposted(void);

/* ------------------------------------ the backend calls these (the DMA) */

/** The next posted slot's memory, its id in `*slot`; NULL: none posted. */
uint8_t *rts_nic_hw_slot(uint16_t *slot);
/** The frame of `len` bytes is in `slot` (the one rts_nic_hw_slot() gave). */
void rts_nic_hw_filled(uint16_t slot, uint16_t len);
/** A frame arrived and found no posted slot (or none could hold it): the NIC dropped it. */
void rts_nic_hw_ring_full(void);
/** Count the cost of one run of the NIC's interrupt handler on the board's
 *  cost clock (MPS2: the LAN9118's FIFO copies, programmed I/O in the
 *  interrupt): `copy_ns` moving `frames` frames of `words` FIFO words into
 *  slots, `isr_ns` the whole handler (nic_copy_*, nic_isr_* in the stats). */
void rts_nic_hw_count_isr(uint64_t copy_ns, uint32_t frames, uint32_t words, uint64_t isr_ns);
/** The NIC's configuration. */
const rts_nic_cfg *rts_nic_hw_cfg(void);

#endif
