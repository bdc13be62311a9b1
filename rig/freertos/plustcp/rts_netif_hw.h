/* The NIC backend of rts_netif (private: for rts_netif_posix.c,
 * rts_netif_mps2.c and a port to another NIC; not for applications).
 *
 * The core (rts_netif.c) owns the descriptor slots and the rings; a
 * backend moves frames between the wire and the slots:
 *
 *   receive: for each arriving frame, rts_netif_hw_slot() gives the next
 *   posted slot (NULL: no descriptor -> rts_netif_hw_ring_full()), the
 *   backend copies the frame into it and calls rts_netif_hw_filled(); then
 *   the RX interrupt calls rts_netif_rx_isr(). One producer: the backend's
 *   receive context (the POSIX receive thread, or the Ethernet ISR).
 */
#ifndef RTS_NETIF_HW_H
#define RTS_NETIF_HW_H

#include "rts_netif.h"

/* ------------------------------------------- the backend provides these */

/** Open the NIC (task context, before the rings are posted). */
BaseType_t rts_netif_hw_open(void);
/** Start receiving (the shield is ready; the RX interrupt may run). */
BaseType_t rts_netif_hw_start(void);
/** Send one frame. Context: the IP task. */
BaseType_t rts_netif_hw_output(const uint8_t *frame, size_t len);
/** Enable/disable the NIC's RX interrupt (the shield's RX line). Context: any. */
void rts_netif_hw_rx_irq(bool on);
/** CPU time of the calling context in ns (cost accounting), 0 when unknown. */
uint64_t rts_netif_hw_cpu_ns(void);
/** libshield's clock: the NIC's or board's free-running counter in ns, any
 *  context (NULL: the tick count, which stops while an interrupt above the
 *  tick's priority holds the CPU). */
extern uint64_t (*const rts_netif_hw_clock)(void *drv);
/** A descriptor was posted again (any context: the RX interrupt, or a task
 *  inside the critical section): a NIC that stopped receiving for want of
 *  one may go on. */
void rts_netif_hw_reposted(void);

/* ------------------------------------------------ the core provides these */

/** The next posted slot's memory (RTS_NETIF_SLOT_BYTES), its id in `*slot`; NULL: none posted. */
uint8_t *rts_netif_hw_slot(uint16_t *slot);
/** The frame of `len` bytes is in `slot` (the one rts_netif_hw_slot() gave). */
void rts_netif_hw_filled(uint16_t slot, uint16_t len);
/** A frame arrived and found no posted slot: the NIC dropped it. */
void rts_netif_hw_ring_full(void);
/** The interface's configuration. */
const rts_netif_cfg *rts_netif_hw_cfg(void);

#endif
