/* The simulator's state: one struct rtsim that the rooms of sim/src share
 * (each group of fields names the room that owns it; the others read it,
 * and only rtsim_create() initialises another room's fields), and the
 * primitives every room uses on it: bounded FIFOs, pushing an event,
 * making a task ready, recording a fault. The hooks (hooks.h) never see
 * it. Private to the simulator; the public API is rtsim/rtsim.h. The rooms
 * and their order: docs/architecture.md, "The simulator". */
#ifndef RTSIM_SIM_H
#define RTSIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "event_queue.h"
#include "hooks.h"
#include "rtshield/rts_nic_moderation.h"
#include "rtshield/rts_irq_gate.h"
#include "rtshield/rts_port.h"
#include "rtsim/rtsim.h"
#include "trace_source.h"
#include "traffic.h"

#define SIM_INF UINT64_MAX

/* Interrupt lines of a core, dispatched lowest number first (nesting off):
 * the tick, then the mitigation timers, then the NIC. */
enum {
    LINE_TICK = 0,
    LINE_TIMER0 = 1,
    SIM_MAX_TIMERS = 8,
    LINE_RX = LINE_TIMER0 + SIM_MAX_TIMERS, /* source k's line is LINE_RX + k */
    SIM_POLL_TIMER = SIM_MAX_TIMERS - 1,    /* mitigation kind polling: the poll timer (above the shield's) */
    SIM_NO_ISR = -1
};

_Static_assert((int)RTS_SHIELD_TIMERS <= (int)SIM_POLL_TIMER,
               "the polling mode's timer must not be one of the shield's timers");

/* Event kinds, with their tie-breaking priority (lower first at equal time).
 * A bin closes before anything else at its boundary; the end of a running
 * activity (ISR or task segment) comes next (priority 1, not in the heap). */
enum {
    EV_BIN = 0,
    EV_TIMER = 2,
    EV_FILTER = 3,
    EV_TICK = 4,
    EV_ARRIVAL = 5,
    EV_RELEASE = 6,
    EV_POLL = 7,
    EV_NIC = 8 /* a multiqueue NIC timer expires */
};
#define PRIO_DONE 1u

/* EV_NIC events in the heap at most: two timers per NIC queue, plus one
 * for an expiry already due (nic_schedule()). */
#define SIM_NIC_PENDING (2u * RTSIM_MAX_NIC_QUEUES + 1u)

typedef struct sim_pkt {
    uint64_t t_arr;
    uint32_t flow;  /* the scenario flow that sent it */
    uint16_t buf;   /* receive path: the pool buffer holding its frame (RTS_BUF_NONE: none) */
    uint8_t sflow;  /* receive path: libshield's flow id once classified */
    uint8_t sprio;  /* receive path: the priority it was queued at */
    uint32_t frame; /* trace flows: index of its recorded frame */
} sim_pkt;

/* A bounded FIFO of packets (RX queue, DMA ring). */
typedef struct sim_fifo {
    sim_pkt *buf;
    uint32_t cap, head, len;
} sim_fifo;

typedef enum task_state { TS_READY, TS_BLOCKED } task_state;

typedef struct sim_task {
    const rtsim_task_cfg *cfg;
    uint32_t idx;
    uint32_t prio; /* priority now (the network task's changes by priority inheritance) */
    task_state state;
    uint64_t seq;       /* order among ready tasks of equal priority */
    uint64_t remaining; /* work left in the current job, ns (SIM_INF: never ends) */
    /* periodic */
    uint64_t release, deadline, last_finish;
    bool has_last;
    bool miss_booked;         /* the current cycle's miss is in a bin already */
    uint64_t late_booked_ppm; /* the current cycle's lateness already in earlier bins, ppm of P */
    /* driver */
    bool has_packet; /* a packet is dequeued and being processed */
    bool polling;    /* the job is one iteration of the suspended sleep loop */
    bool suspended;  /* a mitigation stopped the driver */
    bool sleeping;   /* suspended in a sleep loop: an EV_POLL is due */
    bool masking;    /* periodic masks_rx: its job has the RX lines masked */
    bool woke;       /* driver: switched in for a new packet; that packet pays driver_wake */
    sim_pkt pkt;
    uint64_t work;    /* driver: CPU time of the packet in hand */
    sim_fifo mailbox; /* worker: messages handed over by the driver */
    rtsim_task_stats st;
} sim_task;

typedef struct sim_core {
    uint32_t enabled, pending; /* one bit per line */
    int isr_line;              /* running ISR or SIM_NO_ISR */
    uint64_t isr_start, isr_end;
    uint32_t isr_npkts;                 /* packets the running RX ISR handles */
    sim_pkt latched[RTSIM_MAX_SOURCES]; /* edge NIC: the packet behind each pending RX line */
    uint32_t isr_source;                /* source of the running RX ISR */
    sim_pkt isr_pkt;                    /* edge NIC: the packet the running ISR carries */
    sim_pkt filter_pkt; /* countdown filter: the packet behind its latched arrival */
    int cur;            /* task selected to run, -1 = idle */
    uint64_t seg_start; /* when cur last started running */
    uint64_t acct_t;    /* CPU time accounted up to here */
    uint32_t acct_ctx;
    bool rotate;    /* tick asked for a round-robin rotation */
    bool rx_step;   /* receive path: the RX ISR handles one frame per step */
    bool rx_stop;   /* receive path: the global limit stopped this ISR's harvest */
    int traced_cur; /* the task last traced as running (trace only) */
    int last_cur;   /* the task (or -1: idle) that ran the core's last task segment */
} sim_core;

struct rtsim {
    /* engine.c: the configuration, the clock, the event loop */
    rtsim_config cfg;
    uint64_t now;
    uint64_t events;
    uint64_t run_end;      /* t_end of the rtsim_run_until() call in progress */
    uint64_t lost_batched; /* arrivals counted by lost_arrivals() without an event each */
    int error;
    const char *errmsg; /* what stopped the run (rtsim_error()) */
    sim_event_queue evq;
    /* sched.c: the cores and the tasks (irq.c: each core's lines and ISR) */
    sim_core core[RTSIM_MAX_CORES];
    sim_task task[RTSIM_MAX_TASKS];
    int driver;         /* index of the driver task or -1 */
    int input;          /* index of the stock driver's input task or -1 */
    int critical;       /* index of the critical task or -1 */
    uint64_t seq;       /* round-robin sequence counter */
    uint32_t kick_mask; /* cores whose running activity may have to change */
    /* engine.c: the traffic (traffic.c, trace_source.c) and its next arrivals */
    sim_flow_gen flow[RTSIM_MAX_FLOWS];
    /* Each flow's next arrival, kept out of the event heap (the most frequent
     * event): its time (SIM_INF: none) and the sequence number it takes from
     * the heap's counter, so ties are ordered exactly as in the heap. */
    uint64_t arr_t[RTSIM_MAX_FLOWS];
    uint64_t arr_seq[RTSIM_MAX_FLOWS];
    int arr_next; /* the flow whose arrival comes first, or -1 */
    sim_trace trace_src[RTSIM_MAX_FLOWS]; /* trace flows: their recorded frames */
    uint64_t trace_frames, trace_bytes;   /* held by all of them */
    bool started;                         /* rtsim_run_until() was called */
    rtsim_flow_stats flow_st[RTSIM_MAX_FLOWS]; /* measure.c */
    int flow_worker[RTSIM_MAX_FLOWS]; /* sched.c: worker task receiving each flow, or -1 */
    /* measure.c: histograms of RTSIM_HIST_BINS bins */
    uint64_t *lat_hist[RTSIM_MAX_FLOWS]; /* one per configured flow */
    uint64_t *cycle_hist;
    sim_fifo rxq;  /* rx.c: the driver queue (receive path off) */
    sim_fifo ring; /* nic.c: the DMA ring, or the multiqueue NIC's host slots (receive path off) */
    /* irq.c: the simulated interrupt controller seen through libshield's port */
    rts_port port;
    rts_irq_gate gate;
    uint32_t timer_gen[SIM_MAX_TIMERS];
    uint32_t late_lines;   /* timer lines dispatched after pending RX lines (strict limiter) */
    uint32_t masking_jobs; /* masks_rx jobs in progress: the application masks the RX lines */
    uint64_t rx_off_since; /* measure.c: SIM_INF while the RX line is enabled */
    /* measure.c */
    rtsim_bin cur_bin;
    rtsim_bin totals;
    rtsim_bin *bins; /* ring of bins_cap finished bins */
    uint32_t bins_cap, bins_head, bins_len; /* bins_cap: the run's bins, at most RTSIM_BIN_RING */
    bool finished;
    rtsim_trace_rec *trace; /* ring of cfg.trace_capacity records, or NULL */
    uint32_t trace_head, trace_len;
    uint64_t trace_lost;
    rtsim_mitigation_stats mst;
    sim_hooks hk; /* hooks.c: every protection, behind the driver's hooks */
    uint64_t det_count[RTSIM_DET_COUNT]; /* measure.c: detector counters seen so far */
    uint64_t det_first[RTSIM_DET_COUNT]; /* when each first fired, SIM_INF: never */
    /* the receive path (cfg.rx.enabled): nic.c writes frames into the
     * buffer pool, rx.c hands them to libshield */
    uint8_t *bufmem;     /* nbufs frames of RTSIM_FRAME_MAX bytes: the buffer pool's memory */
    sim_pkt *bufpkt;     /* the packet each buffer holds */
    sim_fifo posted;     /* buffers posted to the descriptor ring, empty (pkt.buf only) */
    sim_fifo filled;     /* descriptors the NIC filled, waiting for the ISR */
    uint8_t *tmpl;       /* each flow's frame, RTSIM_FRAME_MAX bytes per flow */
    uint32_t tmpl_len[RTSIM_MAX_FLOWS];
    int polling;         /* sched.c: index of the polling task or -1 */
    uint64_t poll_since; /* measure.c: SIM_INF unless in polling mode */
    rtsim_rx_stats rxst;
    uint64_t *path_hist;  /* measure.c: RTSIM_PATH_COUNT * RTSIM_HIST_BINS: per-frame ISR durations */
    sim_prng cost_rng;    /* rx.c: draws of the per-path cost distributions */
    /* nic.c: the multiqueue NIC */
    rts_nic_moderation nic;
    sim_fifo nicq[RTSIM_MAX_NIC_QUEUES]; /* frames waiting in each queue for its interrupt */
    /* Times of the EV_NIC events in the heap, each pushed earlier than all
     * pending ones: nic_pend[nic_npend - 1] is the earliest (nic_schedule()). */
    uint64_t nic_pend[SIM_NIC_PENDING];
    uint32_t nic_npend;
};

/* ---- the primitives every room uses */

static inline bool fifo_init(sim_fifo *f, uint32_t cap)
{
    f->cap = cap;
    f->head = f->len = 0;
    f->buf = cap ? calloc(cap, sizeof *f->buf) : NULL;
    return cap == 0 || f->buf != NULL;
}

static inline bool fifo_push(sim_fifo *f, sim_pkt p)
{
    if (f->len == f->cap) return false;
    uint32_t i = f->head + f->len;
    if (i >= f->cap) i -= f->cap;
    f->buf[i] = p;
    f->len++;
    return true;
}

static inline sim_pkt fifo_pop(sim_fifo *f)
{
    sim_pkt p = f->buf[f->head];
    if (++f->head == f->cap) f->head = 0;
    f->len--;
    return p;
}

/* Put `p` back at the head (a descriptor left in the ring). */
static inline void fifo_unpop(sim_fifo *f, sim_pkt p)
{
    f->head = f->head == 0 ? f->cap - 1 : f->head - 1;
    f->buf[f->head] = p;
    f->len++;
}

/* A fault of the simulator itself (never of the scenario): the run stops
 * and rtsim_error() says what happened. */
static inline void fail(rtsim *s, const char *what)
{
    if (!s->error) s->errmsg = what;
    s->error = 1;
}

/* A timer event the port layer cancelled or re-armed since: it would be
 * popped and ignored (handle_event(), EV_TIMER). */
static inline bool cancelled_timer(const sim_event *e, void *ctx)
{
    const rtsim *s = ctx;
    return e->type == EV_TIMER && (e->arg >= SIM_MAX_TIMERS || e->gen != s->timer_gen[e->arg]);
}

/* Queue an event; a full heap stops the run (rtsim_error()). */
static inline void push_event(rtsim *s, uint64_t t, uint32_t prio, uint32_t type, uint32_t arg,
                              uint32_t gen)
{
    /* A full heap first drops the timer events that would be ignored (a
     * timer re-armed for every frame of a flood leaves one per frame). */
    if (s->evq.len == s->evq.cap) (void)evq_remove_if(&s->evq, cancelled_timer, s);
    if (!evq_push(&s->evq, t, prio, type, arg, gen)) fail(s, "event heap overflow");
}

/* The index of the lowest set bit of a non-zero mask (one instruction on
 * the usual targets; GCC and Clang, the compilers the simulator builds with). */
static inline int lowest_bit(uint32_t m)
{
    return __builtin_ctz(m);
}

/* The number of RX sources (1 when the configuration gives none). */
static inline uint32_t rx_sources(const rtsim *s)
{
    return s->cfg.n_sources ? s->cfg.n_sources : 1;
}

/* The core the NIC interrupts. */
static inline sim_core *rx_core(rtsim *s)
{
    return &s->core[s->cfg.nic_core];
}

/* Make task t ready. An ISR, a hook or another task may wake it; the
 * scheduler acts on it at its next pass over t's core (kick_mask). */
static inline void task_ready(rtsim *s, sim_task *t)
{
    if (t->state != TS_READY) {
        t->state = TS_READY;
        t->seq = ++s->seq;
        s->kick_mask |= 1u << t->cfg->core;
    }
}

/* Stop the running task's segment at `now`: its remaining work shrinks by the
 * time it ran. */
static inline void stop_task(rtsim *s, sim_core *c, uint64_t now)
{
    if (c->cur >= 0) {
        sim_task *t = &s->task[c->cur];
        if (t->remaining != SIM_INF) t->remaining -= now - c->seg_start;
    }
    c->seg_start = now;
}

#endif
