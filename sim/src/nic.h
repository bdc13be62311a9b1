/* The NICs (nic.c): edge-triggered, DMA ring, multiqueue. Private to the
 * simulator. */
#ifndef RTSIM_NIC_H
#define RTSIM_NIC_H

#include "sim.h"

/* The multiqueue NIC's distribution map keys of flow f (Behnke §7.3):
 * libshield's protocol number and the destination port (0: portless). */
unsigned nic_proto(const rtsim_flow_cfg *f);
unsigned nic_port(const rtsim_flow_cfg *f);
/* Descriptors the host side holds for the multiqueue NIC of `cfg`. */
uint32_t nic_host_slots(const rtsim_config *cfg);
/* Set up the multiqueue NIC (its queues and map) in libshield's
 * rts_nic_moderation. False when libshield refuses them. */
bool nic_setup(rtsim *s);

/* Packet p's frame reaches the NIC at `now`. */
void nic_receive(rtsim *s, sim_pkt p, uint64_t now);

/* The tick on the NIC's core: with cfg.rx_on_tick, the RX interrupt for the
 * frames the DMA ring holds (raised after the tick's own line). */
void nic_tick(rtsim *s);
/* The NIC (or the edge ISR) writes p's frame into buffer p->buf (receive path). */
void dma_write(rtsim *s, const sim_pkt *p);
/* Length of the frame packet p carries. */
uint32_t pkt_len(const rtsim *s, const sim_pkt *p);
/* True when flow f's next arrival would be dropped changing nothing but
 * counters (*why, and *irq: it asserts the line), as the last one was. */
bool nic_drops_next(const rtsim *s, uint32_t f, rtsim_drop *why, bool *irq);
/* EV_NIC: the multiqueue NIC's timers at `now`. True when a queue interrupted. */
bool nic_expire(rtsim *s, uint64_t now);
/* EV_FILTER: the countdown filter reached zero. */
void nic_filter_zero(rtsim *s, uint64_t now);

#endif
