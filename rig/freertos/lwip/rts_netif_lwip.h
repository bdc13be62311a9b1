/* The device's lwIP network interface (private: for rts_net_lwip.c), on
 * the device's NIC (nic/rts_nic.h). Two builds (tools/freertos_build.sh
 * lwip-build, mps2-lwip-build):
 *
 * - protected (RTS_NETIF_LWIP_STOCK 0): libshield in the receive path
 *   through the lwIP adapter (libshield/port/lwip/rts_lwip.h). The RX
 *   interrupt classifies each filled slot in place, before any pbuf
 *   exists; the adapter's receive task hands admitted frames, highest
 *   priority first, to tcpip_input(), which with
 *   LWIP_TCPIP_CORE_LOCKING_INPUT 1 processes each right there under the
 *   core lock at the task's inherited priority. A flood never touches the
 *   pbuf pool or tcpip_thread's mailbox;
 * - stock (RTS_NETIF_LWIP_STOCK 1, lwIP built with
 *   LWIP_TCPIP_CORE_LOCKING_INPUT 0): lwIP's usual RTOS driver. The RX
 *   interrupt wakes an input task that copies every frame, in arrival
 *   order, into a PBUF_POOL pbuf and hands it to tcpip_input(): a
 *   MEMP_TCPIP_MSG_INPKT message in tcpip_thread's mailbox. No pbuf:
 *   "stack buffers exhausted"; no message or a full mailbox: "input queue
 *   full" (app/rts_net.h's counters), each also in lwip_stats. */
#ifndef RTS_NETIF_LWIP_H
#define RTS_NETIF_LWIP_H

#include "lwip/netif.h"
#include "rts_net.h"

#ifndef RTS_NETIF_LWIP_STOCK
#define RTS_NETIF_LWIP_STOCK 0
#endif

/** Check `cfg` against this build and keep it (before the scheduler
 *  starts); false with one error line to the board when this build cannot
 *  serve it (protect 1 on the stock build, protect 0 on the protected one). */
bool rts_netif_lwip_prepare(const rts_net_cfg *cfg);

/** Add the netif to lwIP, open the NIC and start the receive path.
 *  Context: tcpip_thread (tcpip_init()'s done callback), core locked.
 *  false: the NIC or the adapter could not be started. */
bool rts_netif_lwip_start(void);

/** The netif is up: its receive path runs. */
bool rts_netif_lwip_up(void);

/** Bind a flow to libshield (protected, up). @return as rts_lwip_bind();
 *  RTS_EINVAL on the stock build or before the start */
rts_err rts_netif_lwip_bind(const rts_shield_flow *f, uint8_t *id);

/** The receive path's counters (app/rts_net.h). */
const rts_net_stats *rts_netif_lwip_stats(void);

/** The shield (protected, up), or NULL. */
const rts_shield *rts_netif_lwip_shield(void);

#endif
