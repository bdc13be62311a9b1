/**
 * @file rts_netif.h
 * @brief A FreeRTOS-Plus-TCP network interface with libshield in its
 *        receive path (the rig's FreeRTOS target, issue 17): a portable
 *        core (rts_netif.c) and one backend per NIC (rts_netif_hw.h).
 *
 * Backends: rts_netif_posix.c (FreeRTOS POSIX port, run under real floods
 * by `rtshield rig freertos-tcp` with rts_device.c) and rts_netif_mps2.c
 * (the MPS2 board's LAN9118 on Cortex-M3, booted in QEMU by cm3/).
 *
 * The device it models, and where libshield sits:
 *
 * - the NIC: copies each frame into a posted slot of the descriptor ring
 *   (libshield buffer ids 0..RTS_NETIF_SLOTS-1) and marks it filled; no
 *   posted slot: the NIC drops it ("ring full"). POSIX: an AF_PACKET
 *   socket on a veth end read by a receive pthread outside FreeRTOS (the
 *   DMA engine); MPS2: the Ethernet ISR reading the LAN9118's RX FIFO;
 * - the RX interrupt: rts_netif_rx_isr() harvests the filled descriptors.
 *   Protected: each through rts_freertos_shield_frame_isr() — early
 *   demultiplexing, short circuit, flow servers, recycling, priority
 *   inheritance, the global limit with its polling task. Unprotected: it
 *   only wakes the network task (the stock path of the Linux interface's
 *   "interrupt simulator", of the MPS2 interface's EMAC task). POSIX: the
 *   tick hook (the port's one interrupt context); MPS2: the Ethernet ISR;
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
 * Wake-up: the RX interrupt is the tick hook, so frames wait up to one tick
 * (~1 ms) in the ring. A faster wake-up (the receive thread signalling the
 * FreeRTOS side per frame) is not possible on the POSIX port without
 * changing the port: a thread outside FreeRTOS may not call the kernel, and
 * the port has one simulated interrupt, the tick (docs/porting/
 * freertos-plus-tcp.md, "RX wake-up on the POSIX port"). On hardware the
 * same harvest runs in the real RX ISR.
 */
#ifndef RTS_NETIF_H
#define RTS_NETIF_H

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Routing.h"

#include "rts_net.h"
#include "rts_shield_freertos.h"

/** Descriptor slots (libshield buffers): ring plus spares, sized by the
 *  build through RTS_POOL_MAX_BUFS. POSIX: the RX interrupt runs once per
 *  tick (1 kHz) and the FreeRTOS process shares the host's CPUs, so the
 *  ring holds what arrives while the target does not run: with 2048
 *  buffers (tools/freertos_build.sh) 1792 descriptors take ~50 ms of a
 *  35 000 frames/s flood. MPS2: 32 buffers. A frame that finds no
 *  descriptor is a NIC "ring full" drop, as on hardware. */
#define RTS_NETIF_SLOTS RTS_POOL_MAX_BUFS
#define RTS_NETIF_RING (RTS_POOL_MAX_BUFS - RTS_POOL_MAX_BUFS / 8)
#define RTS_NETIF_SLOT_BYTES 1536

typedef struct rts_netif_cfg {
    const char *ifname;        /**< Linux interface to open (a veth end), by name */
    bool protect;              /**< libshield in the receive path; false: the stock path */
    rts_shield_cfg shield;     /**< protections (RTS_SHIELD_RX_PATH added); nbufs/ring_size are set here */
    UBaseType_t net_task_prio; /**< network task: base priority (protected) or fixed one */
    UBaseType_t poll_task_prio; /**< global limit's polling task */
    int rx_cpu;                /**< POSIX: host CPU of the receive thread (the NIC's DMA), -1: any */
    const uint8_t *mac;        /**< MPS2: the MAC address the LAN9118 filters on (the end point's) */
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

/** The RX interrupt: harvest what the NIC filled, through libshield
 *  (protected) or by waking the network task (stock path). Context: the RX
 *  ISR; the caller yields on `*woken`. Backends call it: the POSIX one from
 *  the tick hook, the MPS2 one from its Ethernet ISR. */
void rts_netif_rx_isr(BaseType_t *woken);

/** POSIX port: the RX interrupt, from vApplicationTickHook(). */
void rts_netif_tick_isr(void);

/** Counters; the shield's own (drops by reason, outcomes) through rts_netif_shield(). */
const rts_netif_stats *rts_netif_stats_get(void);

/** The shield (protected), or NULL. */
const rts_shield *rts_netif_shield(void);

#endif
