/* lwIP's options for the rig's device application on lwIP (rig/freertos/lwip/):
 * the sizes a device with the rig's flows needs, then the adapter's
 * documented options (libshield/port/lwip/lwipopts.h) for everything else.
 * Each value here is guarded like the adapter's, so a build may set one on
 * the command line: the stock build (lwIP's usual RTOS driver, no
 * libshield) sets LWIP_TCPIP_CORE_LOCKING_INPUT 0 and tcpip_thread's
 * priority (tools/freertos_build.sh lwip-build). */
#ifndef RTS_RIG_LWIPOPTS_H
#define RTS_RIG_LWIPOPTS_H

/* A UDP socket's mailbox: the datagrams waiting for its worker, as many
 * as FreeRTOS-Plus-TCP's ipconfigUDP_MAX_RX_PACKETS on the same device
 * (16). A burst of a flow (a host that delivers frames late, bunched) is
 * handed to lwIP at the flow's priority, the worker's own: it must wait
 * there until the worker runs. A full mailbox drops (mbox_err). */
#ifndef DEFAULT_UDP_RECVMBOX_SIZE
#define DEFAULT_UDP_RECVMBOX_SIZE 16
#endif
#ifndef MEMP_NUM_NETBUF
#define MEMP_NUM_NETBUF 40 /* a UDP datagram in a socket's mailbox */
#endif
/* The receive pool. A datagram waiting in a socket's mailbox holds its pool
 * pbuf until the worker reads it, so the pool outnumbers what two UDP
 * flows' mailboxes hold (2 x 16) with room for frames in flight: the bulk
 * flow's backlog must not leave the control flow without a pbuf. One
 * more: about 1.5 KiB (72 KiB in all). */
#ifndef PBUF_POOL_SIZE
#define PBUF_POOL_SIZE 48
#endif

/* The device's sockets: up to 8 flows (app/rts_device.c), each a UDP pcb
 * or a listener; accepted connections (MODBUS/TCP, scans that complete);
 * the half-open connections a SYN flood leaves, at most the listener's
 * backlog each (TCP_LISTEN_BACKLOG), with room beside them. */
#ifndef MEMP_NUM_UDP_PCB
#define MEMP_NUM_UDP_PCB 8
#endif
#ifndef MEMP_NUM_TCP_PCB_LISTEN
#define MEMP_NUM_TCP_PCB_LISTEN 8
#endif
#ifndef MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB 24
#endif
#ifndef TCP_LISTEN_BACKLOG
#define TCP_LISTEN_BACKLOG 1
#endif
#ifndef MEMP_NUM_NETCONN
#define MEMP_NUM_NETCONN 32
#endif
#ifndef MEMP_NUM_TCP_SEG
#define MEMP_NUM_TCP_SEG 32
#endif
#ifndef DEFAULT_ACCEPTMBOX_SIZE
#define DEFAULT_ACCEPTMBOX_SIZE 8
#endif

/* A failed LWIP_ASSERT goes to the application (rts_net_lwip.c), which
 * reports it in one line and ends the program (status 4). */
void lwip_port_assert(const char *msg, int line, const char *file);
#define LWIP_PLATFORM_ASSERT(x) lwip_port_assert((x), __LINE__, __FILE__)

/* Counters of 32 bits: a flood passes 65 535 frames in seconds. */
#ifndef LWIP_STATS_LARGE
#define LWIP_STATS_LARGE 1
#endif

#include "../../../libshield/port/lwip/lwipopts.h"

#endif
