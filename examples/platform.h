/*
 * The platform an example driver runs on: the few calls a real port supplies
 * (clock, NIC ring, packet queue, kernel services), declared once so the
 * examples compile and link on the host. platform_host.c implements them
 * with plain memory for the example check; on a device each one is a line or
 * two of the RTOS and the NIC driver. docs/components/porting.md maps every
 * plat_* call to FreeRTOS.
 */
#ifndef RTSHIELD_EXAMPLES_PLATFORM_H
#define RTSHIELD_EXAMPLES_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtshield/rts_port.h"
#include "rtshield/rts_types.h"

/* ---- the port (rts_port.h): line enable/pending, timer arm/cancel, cache invalidate;
 * on the host, the template port (libshield/port/template/rts_port_template.c) */
extern const rts_port my_port;
#define plat_port my_port

/* ---- clock */
rts_time_ns plat_now_ns(void);                     /* a free-running ns clock */
rts_time_ns plat_tick_ns(void);                    /* the RTOS tick count × tick length */

/* ---- kernel: critical sections, tasks, notifications */
unsigned plat_critical_enter(void);                /* mask the RX interrupt; returns the key */
void plat_critical_exit(unsigned key);
void plat_task_set_prio(unsigned task, unsigned prio);            /* task context */
void plat_task_set_prio_from_isr(unsigned task, unsigned prio);   /* ISR context */
void plat_task_notify_from_isr(unsigned task, bool *woken);
void plat_task_notify(unsigned task);
bool plat_task_wait(rts_time_ns timeout_ns);       /* block until notified; 0: forever */
void plat_sleep_ns(rts_time_ns ns);
void plat_yield_from_isr(bool woken);

enum { PLAT_TASK_NET = 0, PLAT_TASK_POLL = 1, PLAT_TASK_CRITICAL = 2 };

/* ---- NIC: a DMA descriptor ring of RX buffers identified by number */
enum { PLAT_NBUFS = 64, PLAT_RING = 32, PLAT_FRAME_MAX = 1536 };
bool plat_ring_next_filled(unsigned *buf);         /* the next descriptor the DMA completed */
void plat_ring_post(unsigned buf);                 /* give a buffer to the DMA */
uint8_t *plat_frame(unsigned buf);                 /* the buffer's memory */
size_t plat_frame_len(unsigned buf);               /* bytes the DMA wrote */
void plat_stack_input(unsigned buf);               /* the TCP/IP stack's processing of a frame */

/* ---- a driver queue of packets (the Danicki setup: ISR fills, task empties) */
typedef struct plat_pkt plat_pkt;
plat_pkt *plat_nic_read(void);
bool plat_queue_put_from_isr(plat_pkt *p);
plat_pkt *plat_queue_get(void);                    /* NULL when empty */
uint32_t plat_queue_len(void);
void plat_pkt_process(plat_pkt *p);
void plat_pkt_free(plat_pkt *p);

/* ---- the critical task's work */
void plat_do_work(void);

#endif /* RTSHIELD_EXAMPLES_PLATFORM_H */
