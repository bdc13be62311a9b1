/* The interface under the device application's FreeRTOS-Plus-TCP seam
 * (rts_net_plustcp.c; private): rts_net_netif.c (rts_netif: libshield in
 * its receive path, or the stock path) or a board's stock interface
 * (mps2-an385/rts_net_stock.c: the upstream MPS2_AN385 interface, without
 * libshield). Each also implements rts_net_shield_bind(),
 * rts_net_stats_get() and rts_net_shield() of app/rts_net.h, and
 * rts_net_rx_slots() and rts_net_rx_ring() (rts_netif: its NIC's,
 * nic/rts_nic.c). */
#ifndef RTS_NET_ITF_H
#define RTS_NET_ITF_H

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Routing.h"
#include "rts_net.h"

/** Describe the interface to Plus-TCP for `cfg` (`mac`: its address, in
 *  storage that outlives the stack); NULL when this interface cannot serve
 *  `cfg` (the stock interface and protect 1). */
NetworkInterface_t *rts_net_itf_fill(NetworkInterface_t *itf, const rts_net_cfg *cfg, const uint8_t *mac);

#endif
