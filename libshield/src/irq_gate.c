/* Two enable bits per interrupt line (Regehr & Duongsaa §4). */
#include "rtshield/rts_irq_gate.h"

void rts_irq_gate_init(rts_irq_gate *g)
{
    g->sched = 0xFFFFFFFFu;
    g->app = 0u;
}

static rts_gate_change gate_set(rts_irq_gate *g, uint32_t *word, unsigned line, bool on)
{
    if (line >= RTS_IRQ_GATE_MAX_LINES) {
        return RTS_GATE_BAD_LINE;
    }
    const uint32_t bit = 1u << line;
    const bool before = ((g->sched & g->app) & bit) != 0u;
    *word = on ? (*word | bit) : (*word & ~bit);
    const bool after = ((g->sched & g->app) & bit) != 0u;
    if (before == after) {
        return RTS_GATE_UNCHANGED;
    }
    return after ? RTS_GATE_ENABLED : RTS_GATE_DISABLED;
}

rts_gate_change rts_irq_gate_sched_set_isr(rts_irq_gate *g, unsigned line, bool on)
{
    return gate_set(g, &g->sched, line, on);
}

rts_gate_change rts_irq_gate_app_set(rts_irq_gate *g, unsigned line, bool on)
{
    return gate_set(g, &g->app, line, on);
}

bool rts_irq_gate_enabled(const rts_irq_gate *g, unsigned line)
{
    if (line >= RTS_IRQ_GATE_MAX_LINES) {
        return false;
    }
    return ((g->sched & g->app) & (1u << line)) != 0u;
}
