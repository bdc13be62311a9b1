/* The synthetic NIC of the lwIP adapter's tests (test_lwip_nosys.c on the
 * host, test_lwip_freertos.c on FreeRTOS): real Ethernet frames built byte
 * by byte (IPv4 and ICMP checksums by lwIP's inet_chksum()), the RX
 * descriptor ring a DMA fills, and the driver's descriptor loop through
 * the adapter. Callers serialise: the wire, the RX interrupt and the
 * adapter's task-side calls never run at the same time (critical sections).
 * With TN_NO_ADAPTER 1 (the stock-path build, no libshield) only the
 * frames and the ring. */
#ifndef RTS_LWIP_TEST_NIC_H
#define RTS_LWIP_TEST_NIC_H

#include <stdbool.h>
#include <stdint.h>

#ifndef TN_NO_ADAPTER
#define TN_NO_ADAPTER 0
#endif
#include "lwip/err.h"
#include "lwip/pbuf.h"
#if !TN_NO_ADAPTER
#include "rts_lwip.h"
#endif

/** Frames the wire sends, by kind. */
enum { K_WANTED, K_BULK, K_UNBOUND, K_SYN, K_ARP, K_ICMP, K_KINDS };
extern const char *const tn_kind_name[K_KINDS];

#define TN_CTRL_PORT 5000 /* the wanted flow's UDP port */
#define TN_BULK_PORT 7    /* a bound bulk flow */
#define TN_UNBOUND_PORT 9999
#define TN_FRAME_MAX 128  /* the longest frame the wire builds */

/** The device's addresses (192.168.7.2, 02:00:00:00:00:02); the peer is .1. */
extern const uint8_t tn_dev_mac[6], tn_dev_ip[4];

/* ------------------------------------------------------------- frames */

uint16_t tn_udp(uint8_t *f, unsigned dport, uint32_t seq); /**< UDP, 32 B payload starting with seq */
uint16_t tn_syn(uint8_t *f, uint32_t seq);                 /**< TCP SYN to port 80 */
uint16_t tn_arp_request(uint8_t *f);                       /**< who has the device's address */
uint16_t tn_echo_request(uint8_t *f, uint32_t seq);        /**< ICMP echo request */
/** The kind of a frame the wire built, or -1. */
int tn_kind(const uint8_t *f, uint16_t len);
/** The sequence number of a wanted datagram's payload. */
uint32_t tn_seq(const uint8_t *payload4);

/** What the device sent, by kind (the netif's linkoutput calls tn_tx()). */
typedef struct tn_tx_counts {
    unsigned arp_reply, echo_reply, unreach, rst, other;
} tn_tx_counts;
extern tn_tx_counts tn_txc;
void tn_tx(const uint8_t *f, uint16_t len);

/* --------------------------------------------------------- the device */

struct netif;
/** Add the device's netif to lwIP (192.168.7.2/24, Ethernet with ARP,
 *  frames it sends counted by tn_tx()), make it the default and bring it
 *  up; `input` is netif->input (ethernet_input or tcpip_input). Context:
 *  where lwIP's core may be called (NO_SYS: the main loop; else tcpip_thread). */
void tn_netif_add(struct netif *n, err_t (*input)(struct pbuf *, struct netif *));

/** What the two receivers got: UDP pcbs on TN_CTRL_PORT (the wanted flow,
 *  its sequence numbers checked in order) and TN_BULK_PORT. */
typedef struct tn_rx_counts {
    unsigned wanted, order_errs, bulk;
} tn_rx_counts;
extern tn_rx_counts tn_rx;
/** Called for each datagram a receiver gets, in the task lwIP runs it in
 *  (K_WANTED or K_BULK); NULL: nothing. */
extern void (*tn_rx_hook)(int kind);
/** Create and bind the two receivers' pcbs (same context as tn_netif_add()). */
void tn_receivers(void);

/* ------------------------------------------------------ the RX ring */

#define TN_SLOTS 64 /* descriptors: at least the buffers */

/** Counters of the wire and the NIC. */
typedef struct tn_counts {
    unsigned sent[K_KINDS];     /**< frames on the wire */
    unsigned nic_full[K_KINDS]; /**< found no posted descriptor: dropped by the NIC */
    unsigned frames;
    unsigned post_errors;       /**< post() of a buffer that is not ours, or a full descriptor ring */
    unsigned arp_shed;          /**< ARP frames libshield dropped on arrival or recycled from
                                     its queue (best effort, RTS_FLOW_ARP_PRIO): not answered */
    unsigned taken_in_ms[400];  /**< descriptors the driver took, per ms of tn_now_ms */
} tn_counts;
extern tn_counts tn;
extern volatile uint32_t tn_now_ms; /**< the caller's clock, for taken_in_ms */

/** The RX buffers: `nbufs` of `buf_size` bytes at `mem` (nbufs <= TN_SLOTS). */
void tn_init(uint8_t *mem, uint32_t buf_size, unsigned nbufs);
/** A frame arrives: the DMA copies it into the next posted buffer, or the
 *  NIC drops it (no posted descriptor). */
void tn_wire(const uint8_t *f, uint16_t len);
/** Descriptors posted and not yet filled; filled and not yet taken. */
unsigned tn_posted(void);
unsigned tn_filled(void);

/** The NIC's RX interrupt enable: its state, how often it went off, and the
 *  platform's write of it (NULL: none). */
extern bool tn_line_on;
extern unsigned tn_line_offs;
extern void (*tn_line_hw)(bool on);
/** The adapter's rx_irq_set() callback. */
void tn_rx_irq_set(void *drv, bool on);

/** The adapter's post() callback: buffer `buf` to the next free descriptor. */
void tn_dma_post(void *drv, uint16_t buf, uint8_t *mem);
/** The oldest filled descriptor: its buffer and length; false: none. */
bool tn_desc_filled(uint16_t *buf, uint16_t *len);
/** Advance past it. */
void tn_desc_advance(void);

/** Report one check: `ok`, and what was checked (printf format). */
typedef void tn_check_fn(bool ok, const char *fmt, ...);

#if !TN_NO_ADAPTER
/** The driver's descriptor loop (the adapter's harvest() callback, and the
 *  RX interrupt's body); `drv` is the rts_lwip. */
uint32_t tn_harvest(void *drv, uint32_t max, rts_lwip_woken *woken);

/* ------------------------------------------------------------ checks */

/** After the traffic has drained: every buffer in one place (libshield's
 *  books and the NIC's descriptors agree), every frame on the wire counted
 *  once (NIC drop, libshield drop by reason, handed to lwIP, recycled, or
 *  still in the ring), lwIP's link.recv equal to what the adapter handed
 *  over. Call with the RX interrupt masked. */
void tn_check_conservation(const rts_lwip *l, unsigned nbufs, tn_check_fn *check);
#endif

#endif
