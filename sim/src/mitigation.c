/* The mitigation adapter: each hook calls the libshield component of the
 * configured mitigation at the point a real driver would, and performs the
 * returned rts_action through libshield's port (engine.c's simulated
 * interrupt controller and timers). No mitigation logic lives here. */
#include "mitigation.h"

#include "engine.h"

/* The one hardware timer the Danicki mitigations use. */
#define MIT_TIMER 0u

const char *mit_config_error(const rtsim_config *cfg)
{
    const rtsim_mitigation_cfg *m = &cfg->mitigation;
    if (cfg->n_sources > 1 && m->kind != RTSIM_MIT_NONE && m->kind != RTSIM_MIT_STRICT &&
        m->kind != RTSIM_MIT_BURSTY)
        return "mitigation.kind: several RX sources work with none, strict or bursty only";
    if (m->kind == RTSIM_MIT_COUNTDOWN && cfg->nic_kind != RTSIM_NIC_EDGE)
        return "mitigation.kind: countdown filters the edge NIC's interrupt line (nic.kind = edge)";
    switch (m->kind) {
    case RTSIM_MIT_NONE:
    case RTSIM_MIT_QUEUE:
        return NULL;
    case RTSIM_MIT_BURST:
        if (m->slice_ns <= 0) return "mitigation.slice: must be positive";
        if (m->capacity == 0) return "mitigation.capacity: must be positive";
        return NULL;
    case RTSIM_MIT_HYSTERESIS: {
        int crit = -1;
        for (uint32_t i = 0; i < cfg->n_tasks; i++)
            if (cfg->tasks[i].kind == RTSIM_TASK_PERIODIC && (crit < 0 || cfg->tasks[i].critical))
                crit = (int)i;
        if (crit < 0) return "mitigation: hysteresis needs a periodic critical task";
        if (!(m->block_below >= 0.0 && m->block_below <= m->unblock_above &&
              m->unblock_above <= 1.0))
            return "mitigation.block_below/unblock_above: need 0 <= block_below <= unblock_above "
                   "<= 1";
        if (m->sleep_ns <= 0) return "mitigation.sleep: must be positive";
        return NULL;
    }
    case RTSIM_MIT_BUDGET:
        return NULL;
    case RTSIM_MIT_STRICT:
        for (uint32_t k = 0; k < (cfg->n_sources ? cfg->n_sources : 1); k++) {
            int64_t t = cfg->n_sources && cfg->sources[k].min_interarrival_ns
                            ? cfg->sources[k].min_interarrival_ns
                            : m->min_interarrival_ns;
            if (t <= 0) return "mitigation.min_interarrival: must be positive";
        }
        return NULL;
    case RTSIM_MIT_BURSTY:
        for (uint32_t k = 0; k < (cfg->n_sources ? cfg->n_sources : 1); k++) {
            uint32_t b = cfg->n_sources && cfg->sources[k].burst ? cfg->sources[k].burst : m->burst;
            if (b == 0) return "mitigation.burst: must be positive";
        }
        return m->period_ns > 0 ? NULL : "mitigation.period: must be positive";
    case RTSIM_MIT_COUNTDOWN:
        if (m->window_ns <= 0 || m->window_ns > (int64_t)UINT32_MAX)
            return "mitigation.window: must be between 1 ns and 4.29 s";
        return NULL;
    default:
        return "mitigation.kind: unknown";
    }
}

static int64_t critical_period(const rtsim *s)
{
    return s->critical >= 0 ? s->cfg.tasks[s->critical].period_ns : 0;
}

/* Perform an action for RX source `src` and its timer; handle what the port
 * does not (suspend, resume). Returns false when the packet must be dropped. */
static bool apply_src(rtsim *s, uint64_t now, unsigned src, unsigned timer, rts_action act)
{
    uint32_t rest = eng_apply(s, src, timer, act);
    if (rest & RTS_ACT_SUSPEND_DRIVER) eng_driver_suspend(s, now);
    if (rest & RTS_ACT_RESUME_DRIVER) eng_driver_resume(s, now);
    return (rest & RTS_ACT_DROP) == 0;
}

/* The Danicki mitigations: one RX source, timer 0. */
static bool apply(rtsim *s, uint64_t now, rts_action act)
{
    return apply_src(s, now, 0, MIT_TIMER, act);
}

static int64_t strict_t_min(const rtsim *s, uint32_t k)
{
    const rtsim_config *c = &s->cfg;
    return c->n_sources && c->sources[k].min_interarrival_ns ? c->sources[k].min_interarrival_ns
                                                             : c->mitigation.min_interarrival_ns;
}

void mit_init(struct rtsim *s, uint64_t now)
{
    const rtsim_mitigation_cfg *m = &s->cfg.mitigation;
    sim_mitigation *x = &s->mit;
    x->kind = m->kind;
    switch (m->kind) {
    case RTSIM_MIT_BURST: {
        rts_burst_mit_cfg c;
        rts_burst_mit_cfg_default(&c);
        c.slice_ns = (rts_time_ns)m->slice_ns;
        c.capacity = m->capacity;
        rts_burst_mit_init(&x->u.burst, &c);
        break;
    }
    case RTSIM_MIT_HYSTERESIS: {
        rts_hyst_mit_cfg c;
        uint64_t P = (uint64_t)critical_period(s);
        rts_hyst_mit_cfg_permille(&c, P, (uint32_t)(m->block_below * 1000.0 + 0.5),
                                  (uint32_t)(m->unblock_above * 1000.0 + 0.5),
                                  (rts_time_ns)m->sleep_ns);
        rts_hyst_mit_init(&x->u.hyst, &c);
        break;
    }
    case RTSIM_MIT_BUDGET: {
        rts_budget_mit_cfg c;
        rts_budget_mit_cfg_default(&c);
        rts_budget_mit_init(&x->u.budget, &c);
        if (x->u.budget.suspended) {
            /* Danicki §2.2: no budget before the first report. */
            rts_action a = {RTS_ACT_DISABLE_LINE | RTS_ACT_SUSPEND_DRIVER, 0};
            apply(s, now, a);
        }
        break;
    }
    case RTSIM_MIT_QUEUE:
        rts_queue_mit_init(&x->u.queue);
        break;
    case RTSIM_MIT_STRICT:
        /* Source k's limiter owns timer k (Regehr & Duongsaa §3.2). */
        for (uint32_t k = 0; k < eng_sources(s); k++)
            rts_strict_init(&x->u.strict[k], (rts_time_ns)strict_t_min(s, k));
        break;
    case RTSIM_MIT_BURSTY:
        /* One periodic timer (timer 0) serves every source (§3.5). */
        rts_bursty_init(&x->u.bursty, (rts_time_ns)m->period_ns, RTS_BURSTY_TIMER_PERIODIC);
        for (uint32_t k = 0; k < eng_sources(s); k++) {
            uint32_t b =
                s->cfg.n_sources && s->cfg.sources[k].burst ? s->cfg.sources[k].burst : m->burst;
            rts_bursty_add_source(&x->u.bursty, b, &x->bursty_id[k]);
        }
        apply(s, now, rts_bursty_start(&x->u.bursty, now));
        break;
    case RTSIM_MIT_COUNTDOWN:
        /* The window in 1 ns counter ticks: window = initial x tick. */
        rts_countdown_init(&x->u.countdown, 1u, (uint32_t)m->window_ns);
        break;
    default:
        break;
    }
}

bool mit_on_rx_irq(struct rtsim *s, uint64_t now, uint64_t isr_entry, uint32_t src)
{
    switch (s->mit.kind) {
    case RTSIM_MIT_STRICT:
        return apply_src(s, now, src, src, rts_strict_on_irq_isr(&s->mit.u.strict[src], isr_entry));
    case RTSIM_MIT_BURSTY:
        return apply_src(s, now, src, MIT_TIMER,
                         rts_bursty_on_irq_isr(&s->mit.u.bursty, s->mit.bursty_id[src], isr_entry));
    default:
        return true;
    }
}

bool mit_is_filter(const struct rtsim *s)
{
    return s->mit.kind == RTSIM_MIT_COUNTDOWN;
}

int mit_filter_arrival(struct rtsim *s, uint64_t now, uint64_t *zero_at)
{
    rts_action a = rts_countdown_on_arrival_isr(&s->mit.u.countdown, now);
    *zero_at = (a.flags & RTS_ACT_ARM_TIMER) ? a.timer_at : UINT64_MAX;
    if (a.flags & RTS_ACT_DROP) return 0;
    if (a.flags & RTS_ACT_DELIVER) return (a.flags & RTS_ACT_ARM_TIMER) ? 2 : 1;
    return 3; /* latched */
}

bool mit_filter_zero(struct rtsim *s, uint64_t now)
{
    return (rts_countdown_on_zero_isr(&s->mit.u.countdown, now).flags & RTS_ACT_DELIVER) != 0;
}

bool mit_on_rx_packet(struct rtsim *s, uint64_t now, uint64_t isr_entry)
{
    if (s->mit.kind == RTSIM_MIT_BURST) {
        /* The ISR reads the OS tick count at entry (Danicki §2.2). */
        uint64_t tick = s->cfg.tick_ns > 0 ? (uint64_t)s->cfg.tick_ns : 1;
        return apply(s, now, rts_burst_mit_on_rx_isr(&s->mit.u.burst, isr_entry / tick * tick));
    }
    return true;
}

void mit_on_enqueue_fail(struct rtsim *s, uint64_t now)
{
    if (s->mit.kind == RTSIM_MIT_QUEUE)
        apply(s, now, rts_queue_mit_on_enqueue_fail_isr(&s->mit.u.queue, now));
}

bool mit_driver_poll(struct rtsim *s, uint64_t now, uint64_t *sleep_ns)
{
    rts_driver_poll p;
    switch (s->mit.kind) {
    case RTSIM_MIT_HYSTERESIS:
        p = rts_hyst_mit_driver_poll(&s->mit.u.hyst, now);
        break;
    case RTSIM_MIT_BUDGET:
        p = rts_budget_mit_driver_poll(&s->mit.u.budget, now);
        break;
    default:
        *sleep_ns = 0;
        return true;
    }
    apply(s, now, p.act);
    *sleep_ns = p.sleep_ns;
    return p.run;
}

void mit_on_packet_done(struct rtsim *s, uint64_t now, uint64_t work_ns, uint32_t fill)
{
    switch (s->mit.kind) {
    case RTSIM_MIT_BUDGET:
        apply(s, now, rts_budget_mit_on_packet_done(&s->mit.u.budget, now, work_ns, fill));
        break;
    case RTSIM_MIT_QUEUE:
        apply(s, now, rts_queue_mit_on_packet_done(&s->mit.u.queue, now, work_ns, fill));
        break;
    default:
        break;
    }
}

void mit_on_cycle_end(struct rtsim *s, uint64_t now, int64_t earliness_ns, uint64_t period_ns)
{
    (void)period_ns;
    switch (s->mit.kind) {
    case RTSIM_MIT_HYSTERESIS:
        apply(s, now, rts_hyst_mit_on_cycle_end(&s->mit.u.hyst, now, earliness_ns));
        break;
    case RTSIM_MIT_BUDGET:
        apply(s, now, rts_budget_mit_on_cycle_end(&s->mit.u.budget, now, earliness_ns));
        break;
    default:
        break;
    }
}

void mit_on_timer(struct rtsim *s, uint64_t now, unsigned timer)
{
    switch (s->mit.kind) {
    case RTSIM_MIT_BURST:
        apply(s, now, rts_burst_mit_on_timer_isr(&s->mit.u.burst, now));
        break;
    case RTSIM_MIT_STRICT:
        if (timer < eng_sources(s))
            apply_src(s, now, timer, timer, rts_strict_on_timer_isr(&s->mit.u.strict[timer], now));
        break;
    case RTSIM_MIT_BURSTY: {
        uint32_t reenable = 0;
        apply(s, now, rts_bursty_on_tick_isr(&s->mit.u.bursty, now, &reenable));
        for (uint32_t k = 0; k < eng_sources(s); k++) {
            if (reenable & (1u << s->mit.bursty_id[k])) {
                rts_action a = {RTS_ACT_ENABLE_LINE, 0};
                apply_src(s, now, k, MIT_TIMER, a);
            }
        }
        break;
    }
    default:
        break;
    }
}

bool mit_wants_report(const struct rtsim *s)
{
    return s->mit.kind == RTSIM_MIT_HYSTERESIS || s->mit.kind == RTSIM_MIT_BUDGET;
}

bool mit_hooks_isr(const struct rtsim *s)
{
    uint32_t k = s->mit.kind;
    return k == RTSIM_MIT_BURST || k == RTSIM_MIT_STRICT || k == RTSIM_MIT_BURSTY;
}

bool mit_hooks_driver(const struct rtsim *s)
{
    uint32_t k = s->mit.kind;
    return k == RTSIM_MIT_HYSTERESIS || k == RTSIM_MIT_BUDGET || k == RTSIM_MIT_QUEUE;
}
