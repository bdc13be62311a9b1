/**
 * @file rts_netif.h
 * @brief A FreeRTOS-Plus-TCP network interface with libshield in its
 *        receive path (the rig's FreeRTOS target, issue 17), on the
 *        device's NIC (nic/rts_nic.h: descriptor slots and rings, one
 *        backend per board).
 *
 * Where libshield sits:
 *
 * - the NIC (nic/rts_nic.h) copies each frame into a posted slot; no posted
 *   slot: the NIC drops it ("ring full");
 * - the RX interrupt: rts_nic_rx_isr() (this interface's) harvests the
 *   filled slots. Protected: each through rts_freertos_shield_frame_isr() —
 *   early demultiplexing, short circuit, flow servers, recycling, priority
 *   inheritance, the global limit with its polling task. Unprotected: it
 *   only wakes the network task (the stock path of the Linux interface's
 *   "interrupt simulator", of the MPS2 interface's EMAC task);
 * - the network task: protected, frames in priority order
 *   (rts_freertos_shield_task_next()) at the inherited priority, which the
 *   IP task takes too for the frame it is handed (ip_task_inherits);
 *   unprotected, every frame in arrival order at a fixed priority. Each
 *   frame is copied into a Plus-TCP network buffer and sent to the IP task;
 *   no network buffer: "stack buffers exhausted", counted apart from every
 *   libshield drop.
 *
 * Only frames libshield admitted ever cost a network buffer or IP-task time.
 *
 * Wake-up: on the POSIX board the RX interrupt is the tick hook, so frames
 * wait up to one tick (~1 ms) in the ring. A faster wake-up (the receive
 * thread signalling the FreeRTOS side per frame) is not possible on the
 * POSIX port without changing the port: a thread outside FreeRTOS may not
 * call the kernel, and the port has one simulated interrupt, the tick
 * (docs/porting/freertos-plus-tcp.md, "RX wake-up on the POSIX port"). On
 * the MPS2 board the same harvest runs in the Ethernet ISR.
 */
#ifndef RTS_NETIF_H
#define RTS_NETIF_H

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Routing.h"

#include "rts_net.h"
#include "rts_nic.h"
#include "rts_shield_freertos.h"

typedef struct rts_netif_cfg {
    rts_nic_cfg nic;           /**< the NIC: its interface name, receive CPU, MAC */
    bool protect;              /**< libshield in the receive path; false: the stock path */
    rts_shield_cfg shield;     /**< protections (RTS_SHIELD_RX_PATH added); nbufs/ring_size are set here */
    UBaseType_t net_task_prio; /**< network task: base priority (protected) or fixed one */
    UBaseType_t poll_task_prio; /**< global limit's polling task */
    bool ip_task_inherits;     /**< protected: the IP task takes the network task's inherited
                                    priority for each frame it is handed (else it keeps
                                    ipconfigIP_TASK_PRIORITY) */
} rts_netif_cfg;

/** The interface's counters: the device application's (app/rts_net.h). */
typedef rts_net_stats rts_netif_stats;

/** Describe the interface to Plus-TCP (before FreeRTOS_IPInit_Multi());
 *  `itf` and `cfg` must outlive the stack. */
NetworkInterface_t *rts_netif_fill(NetworkInterface_t *itf, const rts_netif_cfg *cfg);

/** Bind a flow to libshield (protected only), after the interface is up.
 *  Context: task. @return as rts_shield_bind(); RTS_EINVAL unprotected or not up */
rts_err rts_netif_bind(const rts_shield_flow *f, uint8_t *id);

/** Counters; the shield's own (drops by reason, outcomes) through rts_netif_shield(). */
const rts_netif_stats *rts_netif_stats_get(void);

/** The shield (protected), or NULL. */
const rts_shield *rts_netif_shield(void);

#endif
