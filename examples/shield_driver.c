/*
 * A driver with every protection behind one entry point, rts_shield.h
 * (Danicki et al. §2, Regehr & Duongsaa §3, Behnke et al. §5): the RX
 * interrupt, the shield's timers, the network task and the critical task's
 * cycle end. The plat_* calls are the kernel's and the NIC's
 * (docs/components/porting.md). docs/components/shield.md quotes the part
 * between the [hooks] markers.
 */
#include "examples.h"
#include "platform.h"
#include "rtshield/rts_shield.h"

enum { UDP_MODBUS = 502 };

static rts_shield sh;            /* all protections: 3.9 KiB, caller storage */
static rts_irq_gate gate;
static rts_shield_map map;       /* RX line; hardware timer and its line per shield timer */
static unsigned taken;

/* [hooks] */
/* ISR side: perform the ops, act on the flags. */
static void isr_perform(const rts_shield_dec *d, bool *woken)
{
    const uint32_t f = rts_shield_apply(&plat_port, &gate, &map, d);
    if (f & RTS_SHIELD_F_PRIO) plat_task_set_prio_from_isr(PLAT_TASK_NET, d->task_prio);
    if (f & RTS_SHIELD_F_POLL) plat_task_notify_from_isr(PLAT_TASK_POLL, woken);
    if (f & RTS_SHIELD_F_RESCHEDULE) *woken = true;
}

static void emac_rx_isr(void)
{
    bool woken = false;
    const rts_time_ns now = plat_now_ns(), tick = plat_tick_ns();
    rts_shield_dec d;
    const bool admitted = rts_shield_rx_irq_isr(&sh, 0, now, &d);   /* strict/bursty, irq count */
    isr_perform(&d, &woken);
    unsigned b;
    while (admitted && plat_ring_next_filled(&b)) {                 /* descriptors the DMA completed */
        rts_shield_rx rx;
        rts_shield_rx_frame_isr(&sh, b, plat_frame(b), plat_frame_len(b), 0, 0, now, tick, &rx, &d);
        isr_perform(&d, &woken);
        if (rx.outcome == RTS_RX_GLOBAL_LIMIT) break;               /* left in the ring for polling */
        if (rx.repost != RTS_BUF_NONE) plat_ring_post(rx.repost);   /* back to the DMA */
        if (rx.outcome == RTS_RX_QUEUED) plat_task_notify_from_isr(PLAT_TASK_NET, &woken);
        if (d.flags & RTS_SHIELD_F_STOP) break;                     /* global limit reached: go polling */
    }
    plat_yield_from_isr(woken);
}

static void shield_timer_isr(unsigned t)                                   /* hardware timer map.timer_hw[t] */
{
    bool woken = false;
    rts_shield_dec d;
    rts_shield_timer_isr(&sh, t, plat_now_ns(), &d);                /* slice end, tick, strict, poll */
    isr_perform(&d, &woken);
    plat_yield_from_isr(woken);
}

/* the network task's receive step */
static void net_task_rx_step(void)
{
    for (;;) {
        rts_shield_dec d;
        rts_time_ns sleep = 0;
        rts_rx_job job;
        unsigned key = plat_critical_enter();                        /* the ISR shares the shield */
        bool run = rts_shield_task_poll(&sh, plat_now_ns(), &sleep, &d); /* hysteresis, budget */
        rts_shield_apply(&plat_port, &gate, &map, &d);
        rts_err e = run ? rts_shield_task_next(&sh, &job, &d) : RTS_EEMPTY;
        uint32_t f = run ? rts_shield_apply(&plat_port, &gate, &map, &d) : 0u;
        plat_critical_exit(key);
        if (f & RTS_SHIELD_F_PRIO) plat_task_set_prio(PLAT_TASK_NET, d.task_prio); /* queues found empty */
        if (!run) {                                                  /* blocked or suspended */
            if (sleep > 0) plat_sleep_ns(sleep);
            else plat_task_wait(0);                                  /* until F_RESUME (or a frame) */
            continue;
        }
        if (e != RTS_OK) return;                                     /* nothing waiting */
        const rts_time_ns t0 = plat_now_ns();
        rts_rx_driver_task_invalidate(&sh.rx, plat_frame(job.buf), plat_frame_len(job.buf));
        plat_stack_input(job.buf);                                   /* the stack copies what it keeps */
        const rts_time_ns t1 = plat_now_ns();
        uint16_t refill;
        key = plat_critical_enter();
        rts_shield_task_done(&sh, &job, t1, t1 - t0, 0, &refill, &d);   /* budget, queue, inheritance */
        f = rts_shield_apply(&plat_port, &gate, &map, &d);
        plat_critical_exit(key);
        taken++;
        if (refill != RTS_BUF_NONE) plat_ring_post(refill);          /* a spare buffer for the ring */
        if (f & RTS_SHIELD_F_PRIO) plat_task_set_prio(PLAT_TASK_NET, d.task_prio);
    }
}

/* the critical task, at the end of each cycle */
static void critical_cycle_end(rts_time_ns start, rts_time_ns target)
{
    rts_shield_dec d;
    unsigned key = plat_critical_enter();
    rts_shield_cycle_end(&sh, start, target, plat_now_ns(), &d);     /* detection, hysteresis, budget */
    const uint32_t f = rts_shield_apply(&plat_port, &gate, &map, &d);
    plat_critical_exit(key);
    if (f & RTS_SHIELD_F_RESUME) plat_task_notify(PLAT_TASK_NET);
}
/* [hooks end] */

int example_shield_driver(void)
{
    rts_shield_cfg cfg;
    rts_shield_dec d;
    rts_shield_cfg_default(&cfg);
    cfg.protections = RTS_SHIELD_RX_PATH | RTS_SHIELD_HYSTERESIS;
    cfg.nbufs = PLAT_NBUFS;
    cfg.ring_size = PLAT_RING;
    cfg.task_base_prio = 1;
    cfg.global_capacity = 7000;
    cfg.global_period = 1000000000u;
    rts_irq_gate_init(&gate);
    rts_irq_gate_app_set(&gate, 0, true);
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        map.timer_hw[t] = t;
        map.timer_line[t] = 1 + t;
    }
    if (rts_shield_init(&sh, &cfg, plat_now_ns(), &d) != RTS_OK) return 1;
    rts_shield_apply(&plat_port, &gate, &map, &d);
    for (unsigned b = 0; b < PLAT_RING; b++) plat_ring_post(b);
    const rts_shield_flow modbus = {.proto = RTS_PROTO_UDP, .local_port = UDP_MODBUS, .prio = 12};
    uint8_t id;
    if (rts_shield_bind(&sh, &modbus, plat_now_ns(), &id) != RTS_OK) return 1;
    plat_feed_frames(4, UDP_MODBUS);
    emac_rx_isr();
    net_task_rx_step();
    const rts_time_ns start = plat_now_ns();
    plat_advance_ns(1000000);
    critical_cycle_end(start, start + 10000000);
    shield_timer_isr(RTS_SHIELD_TIMER_MIT);                /* nothing armed: no operation */
    return taken == 4 ? 0 : 1;
}
