/*
 * The strict limiter (Regehr & Duongsaa §3.2): a minimum interarrival time on
 * one interrupt line. docs/components/strict.md quotes the part between the
 * [hooks] markers.
 */
#include "examples.h"
#include "platform.h"
#include "rtshield/rts_port.h"
#include "rtshield/rts_strict.h"

static rts_strict lim;
static rts_irq_gate gate;
static const rts_port_target tgt = {.line = 0, .timer = 0, .timer_line = 1};
static int handled;

static void handle_device(void) { handled++; }
static rts_time_ns now_ns(void) { return plat_now_ns(); }

/* [hooks] */
static void eth_isr(void) {                       /* device line */
    rts_action a = rts_strict_on_irq_isr(&lim, now_ns());
    if (rts_port_apply(&plat_port, &gate, tgt, a) & RTS_ACT_DELIVER) handle_device();
}
static void lim_timer_isr(void) {                 /* the limiter's one-shot timer */
    rts_port_apply(&plat_port, &gate, tgt, rts_strict_on_timer_isr(&lim, now_ns()));
}
/* [hooks end] */

int example_strict_limiter(void)
{
    rts_irq_gate_init(&gate);
    rts_irq_gate_app_set(&gate, tgt.line, true);
    rts_irq_gate_sched_set_isr(&gate, tgt.line, true);
    if (rts_strict_init(&lim, 250000) != RTS_OK) return 1;   /* at most 4 kHz */
    eth_isr();                             /* admitted: line off, timer armed */
    plat_advance_ns(250000);
    lim_timer_isr();                       /* line on again */
    eth_isr();
    return handled == 2 && lim.admitted == 2 && lim.port_errors == 0 ? 0 : 1;
}
