/*
 * The examples' platform on the host: a clock that moves when told, a ring
 * and a packet queue in plain arrays, kernel calls that only record. Enough
 * to link and run every example once (check_examples.c); a device supplies
 * the real calls (docs/components/porting.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples.h"
#include "platform.h"

static rts_time_ns clock_ns = 1000000;

rts_time_ns plat_now_ns(void) { return clock_ns += 1000; }   /* every read: 1 µs later */
rts_time_ns plat_tick_ns(void) { return clock_ns - clock_ns % 1000000; }
void plat_advance_ns(rts_time_ns ns) { clock_ns += ns; }

static unsigned critical_depth;
unsigned plat_critical_enter(void) { return critical_depth++; }
void plat_critical_exit(unsigned key) { critical_depth = key; }
static unsigned task_prio[3];
void plat_task_set_prio(unsigned task, unsigned prio) { task_prio[task % 3] = prio; }
void plat_task_set_prio_from_isr(unsigned task, unsigned prio) { task_prio[task % 3] = prio; }
void plat_task_notify_from_isr(unsigned task, bool *woken) { (void)task; *woken = true; }
void plat_task_notify(unsigned task) { (void)task; }
bool plat_task_wait(rts_time_ns timeout_ns) { plat_advance_ns(timeout_ns ? timeout_ns : 1000); return true; }
void plat_sleep_ns(rts_time_ns ns) { plat_advance_ns(ns); }
void plat_yield_from_isr(bool woken) { (void)woken; }
void plat_do_work(void) { plat_advance_ns(4000000); }

/* ---- the ring: posted buffers in order; filled ones waiting to be harvested */
static uint8_t frames[PLAT_NBUFS][PLAT_FRAME_MAX];
static size_t frame_len[PLAT_NBUFS];
static unsigned posted[PLAT_NBUFS], n_posted;
static unsigned filled[PLAT_NBUFS], n_filled;

void plat_ring_post(unsigned buf) { if (n_posted < PLAT_NBUFS) posted[n_posted++] = buf; }
uint8_t *plat_frame(unsigned buf) { return frames[buf % PLAT_NBUFS]; }
size_t plat_frame_len(unsigned buf) { return frame_len[buf % PLAT_NBUFS]; }
void plat_stack_input(unsigned buf) { (void)buf; plat_advance_ns(5000); }

bool plat_ring_next_filled(unsigned *buf)
{
    if (n_filled == 0) return false;
    *buf = filled[0];
    memmove(filled, filled + 1, --n_filled * sizeof filled[0]);
    return true;
}

/* A minimal Ethernet II / IPv4 / UDP frame to `udp_port` in the next posted buffers. */
void plat_feed_frames(unsigned n, uint16_t udp_port)
{
    for (unsigned i = 0; i < n && n_posted > 0; i++) {
        const unsigned b = posted[0];
        memmove(posted, posted + 1, --n_posted * sizeof posted[0]);
        uint8_t *f = frames[b];
        memset(f, 0, 64);
        f[12] = 0x08;                       /* EtherType IPv4 */
        f[14] = 0x45;                       /* version 4, IHL 5 */
        f[17] = 28;                         /* total length: 20 + 8 */
        f[23] = 17;                         /* UDP */
        f[14 + 20 + 2] = (uint8_t)(udp_port >> 8);
        f[14 + 20 + 3] = (uint8_t)udp_port;
        f[14 + 20 + 5] = 8;                 /* UDP length */
        frame_len[b] = 64;
        filled[n_filled++] = b;
    }
}

/* ---- the driver queue of the Danicki setup */
struct plat_pkt { unsigned id; };
static plat_pkt pkts[16];
static plat_pkt *queue[16];
static unsigned q_head, q_len, next_pkt;

plat_pkt *plat_nic_read(void) { return &pkts[next_pkt++ % 16]; }
void plat_pkt_free(plat_pkt *p) { (void)p; }
void plat_pkt_process(plat_pkt *p) { (void)p; plat_advance_ns(10000); }
uint32_t plat_queue_len(void) { return q_len; }

bool plat_queue_put_from_isr(plat_pkt *p)
{
    if (q_len == 16) return false;
    queue[(q_head + q_len++) % 16] = p;
    return true;
}

plat_pkt *plat_queue_get(void)
{
    if (q_len == 0) return NULL;
    plat_pkt *p = queue[q_head];
    q_head = (q_head + 1) % 16;
    q_len--;
    return p;
}

/* ---- the port: libshield's template port as shipped (its hooks do nothing,
 * all the host needs), so this check also proves the template compiles and
 * links. A failed RTS_ASSERT reports and aborts instead of halting forever. */
#define RTS_PORT_HALT(msg, file, line) \
    (fprintf(stderr, "libshield assert: %s (%s:%d)\n", (msg), (file), (line)), abort())
#include "../libshield/port/template/rts_port_template.c"
