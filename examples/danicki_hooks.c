/*
 * Where each hook of Danicki et al.'s mitigations sits (§2.2), in the setup
 * of their study: one interrupt per packet, an ISR that fills a queue, a
 * driver task that empties it, a periodic critical task. Each mitigation
 * uses only the calls marked with its name; every returned action goes
 * through rts_port_apply(). docs/components/porting.md quotes the part
 * between the [hooks] markers.
 */
#include "examples.h"
#include "platform.h"
#include "rtshield/rts_budget_mit.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_detect.h"
#include "rtshield/rts_hyst_mit.h"
#include "rtshield/rts_queue_mit.h"

enum { PERIOD_NS = 10000000 };             /* the critical task's period: 10 ms */

static rts_burst_mit burst;
static rts_hyst_mit hyst;
static rts_budget_mit budget;
static rts_queue_mit qmit;
static rts_detect_lateness_mon mon;
static rts_irq_gate gate;
static const rts_port_target tgt = {.line = 0, .timer = 0, .timer_line = 1};
static rts_time_ns cycles_since(rts_time_ns t0) { return plat_now_ns() - t0; }

/* [hooks] */
/* RX interrupt */
static void rx_isr(void) {
    rts_time_ns now = plat_tick_ns();                      /* tick time at entry */
    rts_action a = rts_burst_mit_on_rx_isr(&burst, now);   /* BURST: ISR prologue */
    rts_port_apply(&plat_port, &gate, tgt, a);
    if (a.flags & RTS_ACT_DROP) return;                    /* over capacity */
    plat_pkt *p = plat_nic_read();
    if (!plat_queue_put_from_isr(p)) {                     /* queue full */
        rts_port_apply(&plat_port, &gate, tgt,
                       rts_queue_mit_on_enqueue_fail_isr(&qmit, now)); /* QUEUE */
        plat_pkt_free(p);
    }
    rts_port_apply(&plat_port, &gate, tgt,                 /* BUDGET, if charge_isr */
                   rts_budget_mit_on_isr_work_isr(&budget, now, cycles_since(now)));
}

/* the mitigation's one-shot timer (or the tick hook) */
static void mit_timer_isr(void) {
    rts_port_apply(&plat_port, &gate, tgt,
                   rts_burst_mit_on_timer_isr(&burst, plat_now_ns())); /* BURST */
}

/* one step of the network driver task: returns false when the queue is empty */
static bool driver_task_step(bool use_budget) {
    rts_driver_poll d = use_budget ? rts_budget_mit_driver_poll(&budget, plat_now_ns()) /* BUDGET */
                                   : rts_hyst_mit_driver_poll(&hyst, plat_now_ns());    /* HYSTERESIS */
    rts_port_apply(&plat_port, &gate, tgt, d.act);
    if (!d.run) {
        if (d.sleep_ns) plat_sleep_ns(d.sleep_ns);         /* hysteresis sleep loop */
        else plat_task_wait(0);                            /* budget: until RESUME_DRIVER */
        return true;
    }
    plat_pkt *p = plat_queue_get();
    if (p == NULL) {
        rts_port_apply(&plat_port, &gate, tgt,             /* QUEUE: drained */
                       rts_queue_mit_on_drained(&qmit, plat_now_ns()));
        return false;
    }
    rts_time_ns t0 = plat_now_ns();
    plat_pkt_process(p);
    rts_time_ns t1 = plat_now_ns();
    rts_port_apply(&plat_port, &gate, tgt,                 /* BUDGET: charge measured work */
                   rts_budget_mit_on_packet_done(&budget, t1, t1 - t0, plat_queue_len()));
    rts_port_apply(&plat_port, &gate, tgt,                 /* QUEUE: re-enable when empty */
                   rts_queue_mit_on_packet_done(&qmit, t1, t1 - t0, plat_queue_len()));
    return true;
}

/* one cycle of the critical task; returns the next cycle's start */
static rts_time_ns critical_cycle(rts_time_ns start) {
    rts_time_ns target = start + PERIOD_NS;
    plat_do_work();
    rts_time_ns fin = plat_now_ns();
    rts_detect_cycle_result r = rts_detect_lateness_mon_cycle(&mon, start, target, fin);     /* detection */
    rts_hyst_mit_on_cycle_end(&hyst, fin, r.earliness_ns);                     /* HYSTERESIS */
    rts_action a = rts_budget_mit_on_cycle_end(&budget, fin, r.earliness_ns); /* BUDGET */
    rts_port_apply(&plat_port, &gate, tgt, a);
    if (a.flags & RTS_ACT_RESUME_DRIVER) plat_task_notify(PLAT_TASK_NET);
    if (fin < target) {
        plat_sleep_ns(target - fin);
        return target;
    }
    return fin;                                            /* late: next cycle at once */
}
/* [hooks end] */

int example_danicki_hooks(void)
{
    rts_burst_mit_cfg bc;
    rts_budget_mit_cfg gc;
    rts_hyst_mit_cfg hc;
    rts_burst_mit_cfg_default(&bc);
    rts_budget_mit_cfg_default(&gc);
    rts_irq_gate_init(&gate);
    rts_irq_gate_app_set(&gate, tgt.line, true);
    rts_irq_gate_sched_set_isr(&gate, tgt.line, true);
    if (rts_burst_mit_init(&burst, &bc) != RTS_OK || rts_budget_mit_init(&budget, &gc) != RTS_OK ||
        rts_hyst_mit_cfg_permille(&hc, PERIOD_NS, 100, 500, 1000000) != RTS_OK ||
        rts_hyst_mit_init(&hyst, &hc) != RTS_OK || rts_queue_mit_init(&qmit) != RTS_OK ||
        rts_detect_lateness_mon_init(&mon) != RTS_OK)
        return 1;
    for (int i = 0; i < 10; i++) rx_isr();
    mit_timer_isr();
    int steps = 0;
    while (driver_task_step(false) && steps < 100) steps++;
    rts_time_ns start = plat_now_ns();
    for (int i = 0; i < 3; i++) start = critical_cycle(start);
    return steps == 10 && plat_queue_len() == 0 ? 0 : 1;
}
