/* Performing a returned rts_action through the port hooks. */
#include "rtshield/rts_port.h"

/* Through the gate when there is one: the line's hardware enable changes
 * only when both of its bits agree (rts_irq_gate.h). */
static void write_line(const rts_port *port, rts_irq_gate *gate, unsigned line, bool on)
{
    if (gate != NULL) {
        const rts_gate_change c = rts_irq_gate_sched_set_isr(gate, line, on);
        if (c != RTS_GATE_ENABLED && c != RTS_GATE_DISABLED) return;
        on = c == RTS_GATE_ENABLED;
    }
    if (port->irq_set_enabled != NULL) {
        port->irq_set_enabled(port->ctx, line, on);
    }
}

uint32_t rts_port_apply(const rts_port *port, rts_irq_gate *gate, rts_port_target tgt, rts_action act)
{
    const uint32_t f = act.flags;
    if (f & RTS_ACT_DISABLE_LINE) {
        write_line(port, gate, tgt.line, false);
    }
    if (f & RTS_ACT_CANCEL_TIMER) {
        if (port->timer_cancel != NULL) port->timer_cancel(port->ctx, tgt.timer);
    }
    if (f & RTS_ACT_ARM_TIMER) {
        if (port->timer_arm != NULL) port->timer_arm(port->ctx, tgt.timer, act.timer_at);
    }
    if (f & RTS_ACT_CLEAR_TIMER_PENDING) {
        if (port->irq_clear_pending != NULL) port->irq_clear_pending(port->ctx, tgt.timer_line);
    }
    if (f & RTS_ACT_DISABLE_TIMER_IRQ) {
        if (port->irq_set_enabled != NULL) port->irq_set_enabled(port->ctx, tgt.timer_line, false);
    }
    if (f & RTS_ACT_ENABLE_TIMER_IRQ) {
        if (port->irq_set_enabled != NULL) port->irq_set_enabled(port->ctx, tgt.timer_line, true);
    }
    if (f & RTS_ACT_ENABLE_LINE) {
        write_line(port, gate, tgt.line, true);
    }
    return f & (RTS_ACT_DELIVER | RTS_ACT_DROP | RTS_ACT_SUSPEND_DRIVER | RTS_ACT_RESUME_DRIVER |
                RTS_ACT_RESCHEDULE);
}
