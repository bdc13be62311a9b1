/*
 * Behnke et al.'s receive path (§4–5, §9) in a zero-copy driver with a
 * descriptor ring: the eager half in the RX interrupt, the deferred half in
 * the network task, flows bound from the socket layer. The plat_* calls are
 * the kernel's and the NIC's (docs/components/porting.md maps them to
 * FreeRTOS+TCP). docs/components/receive-path.md quotes the parts
 * between the [..] markers.
 */
#include "examples.h"
#include "platform.h"
#include "rtshield/rts_rx_driver.h"

enum { NET_TASK_BASE_PRIO = 1, GLOBAL_CAP = 7000, MODBUS_PORT = 502 };
#define GLOBAL_PERIOD_NS 1000000000u       /* the global limit: 7000 packets per second */

static rts_rx_driver rx;                   /* 2.9 KiB with the defaults */
static rts_irq_gate gate;
static const rts_port_target tgt = {.line = 0, .timer = 0, .timer_line = 1};
static unsigned delivered;

/* [init] */
static rts_err net_init(void) {
    rts_err e = rts_rx_driver_init(&rx, &plat_port, PLAT_NBUFS, PLAT_RING, NET_TASK_BASE_PRIO,
                            GLOBAL_CAP, GLOBAL_PERIOD_NS, plat_now_ns());
    for (unsigned b = 0; b < PLAT_RING && e == RTS_OK; b++) plat_ring_post(b);  /* buffers 0..RING-1 */
    return e;
}

/* the socket layer's bind() and setsockopt(), inside its critical section */
static rts_err sock_bind_hook(uint16_t port_no, unsigned prio, uint8_t *flow) {
    unsigned key = plat_critical_enter();
    rts_err e = rts_flow_table_bind(&rx.flows, RTS_PROTO_UDP, port_no, 0, flow);
    if (e == RTS_OK) e = rts_flow_table_setopt(&rx.flows, *flow, RTS_FLOWOPT_PRIORITY, prio, plat_now_ns());
    plat_critical_exit(key);
    return e;
}
/* [init end] */

/* [isr] */
static void emac_rx_isr(void) {
    bool woken = false;
    rts_time_ns now = plat_now_ns();
    unsigned b;
    while (plat_ring_next_filled(&b)) {                 /* descriptors the DMA completed */
        rts_rx_result r;
        rts_rx_driver_eager_isr(&rx, b, plat_frame(b), plat_frame_len(b), now, &r);
        if (r.repost != RTS_BUF_NONE) plat_ring_post(r.repost);   /* (a), (b), full, or (c) */
        if (r.flags & RTS_ACT_RESCHEDULE) {             /* inherited priority rose */
            plat_task_set_prio_from_isr(PLAT_TASK_NET, r.task_prio);
            plat_task_notify_from_isr(PLAT_TASK_NET, &woken);
        } else if (r.outcome == RTS_RX_QUEUED) {
            plat_task_notify_from_isr(PLAT_TASK_NET, &woken);
        }
        if (r.flags & RTS_ACT_DISABLE_LINE) {           /* global limit: go polling */
            rts_action a = {RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER, r.timer_at};
            rts_port_apply(&plat_port, &gate, tgt, a);  /* the timer ISR wakes the polling task */
            break;
        }
        if (r.outcome == RTS_RX_GLOBAL_LIMIT) break;    /* leave the rest in the ring */
    }
    plat_yield_from_isr(woken);
}
/* [isr end] */

/* [task] */
/* the network task's receive step */
static void net_task_rx_step(void) {
    rts_rx_job job;
    rts_prio_inherit_change c = RTS_PRIO_INHERIT_UNCHANGED;
    for (;;) {
        uint16_t fresh;
        unsigned key = plat_critical_enter();           /* the ISR shares the queues */
        rts_err e = rts_rx_driver_task_next(&rx, &job, &c);
        rts_err f = e == RTS_OK ? rts_rx_driver_task_refill(&rx, &fresh) : RTS_EEMPTY;
        plat_critical_exit(key);
        if (e != RTS_OK) break;
        rts_rx_driver_task_invalidate(&rx, plat_frame(job.buf), plat_frame_len(job.buf));
        if (f == RTS_OK) plat_ring_post(fresh);
        plat_stack_input(job.buf);                      /* the stack's own processing */
        key = plat_critical_enter();
        rts_prio_inherit_change lowered = rts_rx_driver_task_complete(&rx, job.prio);
        rts_rx_driver_buf_free(&rx, job.buf);                  /* here: the stack keeps no buffer */
        plat_critical_exit(key);
        delivered++;
        if (lowered == RTS_PRIO_INHERIT_LOWERED) plat_task_set_prio(PLAT_TASK_NET, rts_prio_inherit_current(&rx.pi));
    }
    if (c == RTS_PRIO_INHERIT_LOWERED) plat_task_set_prio(PLAT_TASK_NET, rts_prio_inherit_current(&rx.pi));
}
/* [task end] */

int example_rx_path(void)
{
    uint8_t flow;
    rts_irq_gate_init(&gate);
    rts_irq_gate_app_set(&gate, tgt.line, true);
    if (net_init() != RTS_OK || sock_bind_hook(MODBUS_PORT, 12, &flow) != RTS_OK) return 1;
    plat_feed_frames(5, MODBUS_PORT);
    emac_rx_isr();
    net_task_rx_step();
    return delivered == 5 && rx.outcomes[RTS_RX_QUEUED] == 5 ? 0 : 1;
}
