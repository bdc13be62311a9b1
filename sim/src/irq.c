/* The simulated interrupt controller, which is libshield's port on this
 * device: interrupt lines with enable and pending bits (the tick, the
 * mitigation timers, one RX line per source), the hardware timers, the
 * application's enable bit beside the protections' (libshield's irq gate),
 * which pending line runs next, and an interrupt's entry and exit on its
 * core: its cost charged, its handler called (the RX handler is rx.c's,
 * the shield's timers are the hooks'). Interrupts are not nested. */
#include "irq.h"

#include "measure.h"
#include "rx.h"

static void port_irq_set_enabled(void *ctx, unsigned line, bool on)
{
    rtsim *s = ctx;
    sim_core *c = rx_core(s);
    if (line >= 32) return;
    uint32_t bit = 1u << line;
    bool was = (c->enabled & bit) != 0;
    c->enabled = on ? (c->enabled | bit) : (c->enabled & ~bit);
    if (on && !was) s->kick_mask |= 1u << s->cfg.nic_core;
    if (on != was) trace_rec(s, s->now, RTSIM_TR_LINE, s->cfg.nic_core, (int32_t)line, on ? 1 : 0);
    if (line == LINE_RX && was != on) { /* source 0's line is the one measured */
        if (on) {
            acct_rx_off(s, s->now);
            s->rx_off_since = SIM_INF;
            s->mst.line_enables++;
        } else {
            s->rx_off_since = s->now;
            s->mst.line_disables++;
        }
    }
}

static void port_irq_clear_pending(void *ctx, unsigned line)
{
    rtsim *s = ctx;
    if (line < 32) rx_core(s)->pending &= ~(1u << line);
}

static void port_timer_arm(void *ctx, unsigned timer, rts_time_ns at)
{
    rtsim *s = ctx;
    if (timer >= SIM_MAX_TIMERS) return;
    s->timer_gen[timer]++;
    push_event(s, at < s->now ? s->now : at, EV_TIMER, EV_TIMER, timer, s->timer_gen[timer]);
}

static void port_timer_cancel(void *ctx, unsigned timer)
{
    rtsim *s = ctx;
    if (timer < SIM_MAX_TIMERS) s->timer_gen[timer]++;
}

/* The application masks (on = false) or unmasks the RX lines: a masks_rx
 * task's mutual exclusion with the handlers (Regehr §4). With two enable
 * bits it writes its own bit of libshield's gate, and the hardware line
 * changes only when the combined state does; with one bit it writes the
 * hardware bit itself, as the protections do. */
static void app_mask(rtsim *s, bool on)
{
    for (uint32_t k = 0; k < rx_sources(s); k++) {
        const unsigned line = LINE_RX + k;
        if (s->cfg.mitigation.one_enable_bit) {
            port_irq_set_enabled(s, line, on);
            continue;
        }
        const rts_gate_change g = rts_irq_gate_app_set(&s->gate, line, on);
        if (g == RTS_GATE_ENABLED || g == RTS_GATE_DISABLED) port_irq_set_enabled(s, line, on);
    }
}

/* A masks_rx task's job starts running (it masks the lines) or ends. */
void mask_begin(rtsim *s, sim_task *t)
{
    if (!t->cfg->masks_rx || t->masking) return;
    t->masking = true;
    if (s->masking_jobs++ == 0) app_mask(s, false);
}

void mask_end(rtsim *s, sim_task *t)
{
    if (!t->masking) return;
    t->masking = false;
    if (--s->masking_jobs == 0) app_mask(s, true);
}

/* The pending enabled line dispatched next: the lowest number, except that
 * the lines of late_lines (the strict limiter's timers, whose re-enable took
 * effect at the expiry) wait for any pending RX line (docs/decisions/regehr.md). */
static int next_line(const rtsim *s, uint32_t ready)
{
    const uint32_t first = ready & ~s->late_lines;
    return lowest_bit(first ? first : ready);
}

/* Pure polling (mitigation kind polling): the poll timer's handler finds
 * the device's pending request (the lowest pending RX line) and handles it:
 * the handler becomes that RX handler, costing the poll on top. */
static int poll_takes(rtsim *s, sim_core *c, int line, bool *polled)
{
    *polled = false;
    if (line != LINE_TIMER0 + SIM_POLL_TIMER || s->cfg.mitigation.kind != RTSIM_MIT_POLLING)
        return line;
    const uint32_t rx = c->pending & ~((1u << LINE_RX) - 1u);
    if (!rx) return line;
    c->pending &= ~(1u << line);
    *polled = true;
    return lowest_bit(rx);
}

void start_isr(rtsim *s, sim_core *c, uint32_t ready, uint64_t now)
{
    bool polled;
    const int line = poll_takes(s, c, next_line(s, ready), &polled);
    stop_task(s, c, now);
    acct_cpu(s, c, now);
    c->acct_ctx = isr_ctx(line);
    c->pending &= ~(1u << line);
    c->isr_line = line;
    c->isr_start = now;
    trace_rec(s, now, RTSIM_TR_ISR_START, (uint32_t)(c - s->core), line, 0);
    const rtsim_costs *k = &s->cfg.costs;
    int64_t cost = k->isr_entry_exit_ns;
    if (line == LINE_TICK) {
        cost += k->tick_isr_ns;
    } else if (line >= LINE_RX) {
        cost += rx_isr_begin(s, c, (uint32_t)(line - LINE_RX), polled);
    } else {
        cost += k->timer_isr_ns;
    }
    c->isr_end = now + (uint64_t)cost;
}

int isr_done(rtsim *s, sim_core *c, uint64_t now)
{
    const int line = c->isr_line;
    acct_cpu(s, c, now);
    if (line >= LINE_RX && s->cfg.rx.enabled && rx_isr_step(s, c, now)) return SIM_NO_ISR; /* next frame */
    trace_rec(s, now, RTSIM_TR_ISR_END, (uint32_t)(c - s->core), line, 0);
    c->isr_line = SIM_NO_ISR;
    c->seg_start = now; /* the interrupted task resumes from here */
    if (line >= LINE_RX) {
        rx_isr_end(s, c, now);
    } else if (line != LINE_TICK) {
        const unsigned timer = (unsigned)(line - LINE_TIMER0);
        s->mst.timer_fires++;
        if (!(s->late_lines & (1u << line)) && !(s->cfg.mitigation.kind == RTSIM_MIT_POLLING &&
                                                 timer == SIM_POLL_TIMER))
            hook_timer(&s->hk, now, timer);
    }
    return line;
}

/* The controller as the device starts: libshield's port on it, the
 * application's enable bits (the RX lines on, except with pure polling),
 * and the shield's lines and timers for the hooks (before hook_init()). */
void irq_setup(rtsim *s)
{
    s->port.ctx = s;
    s->port.irq_set_enabled = port_irq_set_enabled;
    s->port.irq_clear_pending = port_irq_clear_pending;
    s->port.timer_arm = port_timer_arm;
    s->port.timer_cancel = port_timer_cancel;
    s->port.cache_invalidate = NULL;
    s->rx_off_since = 0;
    rts_irq_gate_init(&s->gate);
    const bool polling = s->cfg.mitigation.kind == RTSIM_MIT_POLLING;
    for (uint32_t k = 0; k < rx_sources(s) && !polling; k++) /* polling: the lines stay off */
        if (rts_irq_gate_app_set(&s->gate, LINE_RX + k, true) == RTS_GATE_ENABLED)
            port_irq_set_enabled(s, LINE_RX + k, true);
    s->mst.line_enables = 0;
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++)
        s->hk.smap.rx_line[k] = LINE_RX + k;
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        s->hk.smap.timer_hw[t] = t;
        s->hk.smap.timer_line[t] = LINE_TIMER0 + t;
    }
    s->hk.port = &s->port;
    s->hk.gate = s->cfg.mitigation.one_enable_bit ? NULL : &s->gate;
}

/* After hook_init(): the strict limiter's timer lines wait for pending RX
 * lines, and pure polling's timer starts. */
void irq_start(rtsim *s)
{
    for (unsigned t = 0; t < SIM_MAX_TIMERS; t++)
        if (hook_timer_at_expiry(&s->hk, t)) s->late_lines |= 1u << (LINE_TIMER0 + t);
    const rtsim_mitigation_cfg *m = &s->cfg.mitigation;
    if (m->kind == RTSIM_MIT_POLLING && (uint64_t)m->period_ns < s->cfg.duration_ns)
        push_event(s, (uint64_t)m->period_ns, EV_TIMER, EV_TIMER, SIM_POLL_TIMER,
                   s->timer_gen[SIM_POLL_TIMER]);
}

/* EV_TIMER: hardware timer `timer` (armed as generation `gen`) expires at
 * `now`: its line is pending. False when the port cancelled or re-armed it
 * since (nothing happens). */
bool irq_timer(rtsim *s, uint32_t timer, uint32_t gen, uint64_t now)
{
    if (timer >= SIM_MAX_TIMERS || gen != s->timer_gen[timer]) return false; /* cancelled */
    sim_core *c = rx_core(s);
    c->pending |= 1u << (LINE_TIMER0 + timer);
    if (s->late_lines & (1u << (LINE_TIMER0 + timer))) {
        hook_timer(&s->hk, now, timer); /* the re-enable takes effect at the expiry */
    } else if (s->cfg.mitigation.kind == RTSIM_MIT_POLLING && timer == SIM_POLL_TIMER) {
        const uint64_t next = now + (uint64_t)s->cfg.mitigation.period_ns;
        if (next > now && next < s->cfg.duration_ns)
            push_event(s, next, EV_TIMER, EV_TIMER, SIM_POLL_TIMER, s->timer_gen[SIM_POLL_TIMER]);
    }
    return true;
}
