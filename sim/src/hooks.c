/* The driver's hooks into libshield: each hook is one call into
 * rtshield/rts_shield.h at the place a real driver calls it, and the
 * returned decision is performed through libshield's port (engine.c's
 * simulated interrupt controller and timers). No protection logic lives
 * here; the configuration checks name the scenario keys. */
#include "hooks.h"

#include "engine.h"

static uint32_t kind_bit(uint32_t kind)
{
    switch (kind) {
    case RTSIM_MIT_BURST: return RTS_SHIELD_BURST;
    case RTSIM_MIT_HYSTERESIS: return RTS_SHIELD_HYSTERESIS;
    case RTSIM_MIT_BUDGET: return RTS_SHIELD_BUDGET;
    case RTSIM_MIT_QUEUE: return RTS_SHIELD_QUEUE;
    case RTSIM_MIT_STRICT: return RTS_SHIELD_STRICT;
    case RTSIM_MIT_BURSTY: return RTS_SHIELD_BURSTY;
    case RTSIM_MIT_COUNTDOWN: return RTS_SHIELD_COUNTDOWN;
    default: return 0u;
    }
}

static int critical_index(const rtsim_config *cfg)
{
    int crit = -1;
    for (uint32_t i = 0; i < cfg->n_tasks; i++)
        if (cfg->tasks[i].kind == RTSIM_TASK_PERIODIC && (crit < 0 || cfg->tasks[i].critical))
            crit = (int)i;
    return crit;
}

static int64_t strict_t_min(const rtsim_config *c, uint32_t k)
{
    return c->n_sources && c->sources[k].min_interarrival_ns ? c->sources[k].min_interarrival_ns
                                                             : c->mitigation.min_interarrival_ns;
}

static uint32_t bursty_burst(const rtsim_config *c, uint32_t k)
{
    return c->n_sources && c->sources[k].burst ? c->sources[k].burst : c->mitigation.burst;
}

static const char *rx_config_error(const rtsim_config *cfg)
{
    const rtsim_rx_cfg *rx = &cfg->rx;
    if (rx->enabled > 1u) return "rx.enabled: 0 or 1";
    if (!rx->enabled) return NULL;
    if (cfg->n_sources > 1) return "rx: the receive path takes one RX source";
    if (rx->nbufs < 2 || rx->nbufs > RTS_POOL_MAX_BUFS) return "rx.buffers: out of range (2..pool limit)";
    if (cfg->ring == 0 || cfg->ring > rx->nbufs) return "nic.ring: 1..rx.buffers posted buffers";
    if (rx->recycle_threshold != 0xFFFFFFFFu && rx->recycle_threshold > cfg->ring)
        return "rx.recycle_below: at most nic.ring";
    if (rx->short_circuit > 1u || rx->eager_invalidate > 1u)
        return "rx.short_circuit / rx.cache: 0 or 1";
    for (uint32_t p = 0; p < RTSIM_PATH_COUNT; p++) {
        const int64_t *q = cfg->costs.path_q_ns[p];
        if (cfg->costs.path_ns[p] < 0) return "costs.rx_path: must not be negative";
        if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0) continue;
        if (q[0] < cfg->costs.path_ns[p] || q[1] < q[0] || q[2] < q[1] || q[3] < q[2])
            return "costs.rx_path quantiles: nondecreasing from the path's cost";
    }
    if (rx->global_capacity > 0 && rx->global_period_ns <= 0)
        return "rx.global_period: must be positive with a global capacity";
    int polling = 0;
    for (uint32_t i = 0; i < cfg->n_tasks; i++) {
        const rtsim_task_cfg *t = &cfg->tasks[i];
        if (t->kind == RTSIM_TASK_POLLING) polling++;
        if (t->kind == RTSIM_TASK_DRIVER && t->priority >= RTS_FLOW_PRIO_LEVELS)
            return "driver.priority: with the receive path, below the flow priority levels";
    }
    if (rx->global_capacity > 0 && polling != 1)
        return "rx.global_capacity: needs one polling task (rx.poll_priority)";
    uint32_t bound = 0;
    for (uint32_t i = 0; i < cfg->n_flows; i++) {
        const rtsim_flow_cfg *f = &cfg->flows[i];
        /* ARP, ICMP and other frames belong to libshield's special flows. */
        if (f->unbound || (f->proto != RTSIM_PROTO_TCP && f->proto != RTSIM_PROTO_UDP)) continue;
        if (f->dst_port == 0 || f->dst_port > 65535) return "flows.dst_port: 1..65535 to bind";
        if (f->prio >= RTS_FLOW_PRIO_LEVELS) return "flows.priority: below the flow priority levels";
        if (f->capacity > 0 && f->server_period_ns < 1000)
            return "flows.server_period: at least 1us with a capacity";
        if (f->queue_limit > rx->nbufs) return "flows.queue: at most rx.buffers";
        for (uint32_t j = 0; j < i; j++)
            if (!cfg->flows[j].unbound && cfg->flows[j].proto == f->proto &&
                (f->proto == RTSIM_PROTO_TCP || f->proto == RTSIM_PROTO_UDP) &&
                cfg->flows[j].dst_port == f->dst_port)
                return "flows.dst_port: a port is bound twice";
        bound++;
    }
    if (bound > RTS_FLOW_MAX - RTS_FLOW_FIRST_USER) return "flows: more bound flows than RTS_FLOW_MAX allows";
    return NULL;
}

const char *hook_config_error(const rtsim_config *cfg)
{
    const rtsim_mitigation_cfg *m = &cfg->mitigation;
    if (m->kind > RTSIM_MIT_COUNTDOWN) return "mitigation.kind: unknown";
    const uint32_t combinable =
        RTS_SHIELD_BURST | RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET | RTS_SHIELD_QUEUE;
    if ((m->also & ~combinable) != 0u)
        return "mitigation.also: only burst, hysteresis, budget and queue combine";
    if ((m->also & kind_bit(m->kind)) != 0u) return "mitigation.also: names the mitigation's own kind";
    const uint32_t p = kind_bit(m->kind) | m->also;
    if (cfg->n_sources > 1 && (p & ~(uint32_t)(RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY)) != 0u)
        return "mitigation.kind: several RX sources work with none, strict or bursty only";
    if ((p & RTS_SHIELD_COUNTDOWN) && cfg->nic_kind != RTSIM_NIC_EDGE)
        return "mitigation.kind: countdown filters the edge NIC's interrupt line (nic.kind = edge)";
    if (p & RTS_SHIELD_BURST) {
        if (m->slice_ns <= 0) return "mitigation.slice: must be positive";
        if (m->capacity == 0) return "mitigation.capacity: must be positive";
    }
    if (p & RTS_SHIELD_HYSTERESIS) {
        if (critical_index(cfg) < 0) return "mitigation: hysteresis needs a periodic critical task";
        if (!(m->block_below >= 0.0 && m->block_below <= m->unblock_above &&
              m->unblock_above <= 1.0))
            return "mitigation.block_below/unblock_above: need 0 <= block_below <= unblock_above "
                   "<= 1";
        if (m->sleep_ns <= 0) return "mitigation.sleep: must be positive";
    }
    if (p & RTS_SHIELD_STRICT)
        for (uint32_t k = 0; k < (cfg->n_sources ? cfg->n_sources : 1); k++)
            if (strict_t_min(cfg, k) <= 0) return "mitigation.min_interarrival: must be positive";
    if (p & RTS_SHIELD_BURSTY) {
        for (uint32_t k = 0; k < (cfg->n_sources ? cfg->n_sources : 1); k++)
            if (bursty_burst(cfg, k) == 0) return "mitigation.burst: must be positive";
        if (m->period_ns <= 0) return "mitigation.period: must be positive";
    }
    if ((p & RTS_SHIELD_COUNTDOWN) && (m->window_ns <= 0 || m->window_ns > (int64_t)UINT32_MAX))
        return "mitigation.window: must be between 1 ns and 4.29 s";
    if (cfg->detect_slice_ns < 0) return "detect.slice: must not be negative";
    if (cfg->detect_fill_high > 0 && cfg->detect_fill_low >= cfg->detect_fill_high)
        return "detect.fill_low: must be below detect.fill_high";
    return rx_config_error(cfg);
}

/* The shield configuration of this device: a translation of the scenario's
 * parameters into libshield's units, nothing decided here. */
static void shield_cfg(const rtsim *s, rts_shield_cfg *o)
{
    const rtsim_config *c = &s->cfg;
    const rtsim_mitigation_cfg *m = &c->mitigation;
    rts_shield_cfg_default(o);
    o->protections = kind_bit(m->kind) | m->also | (c->rx.enabled ? RTS_SHIELD_RX_PATH : 0u);
    o->n_sources = eng_sources(s);
    if (o->protections & RTS_SHIELD_BURST) {
        o->burst.slice_ns = (rts_time_ns)m->slice_ns;
        o->burst.capacity = m->capacity;
    }
    if (o->protections & RTS_SHIELD_HYSTERESIS) {
        const uint64_t P = s->critical >= 0 ? (uint64_t)c->tasks[s->critical].period_ns : 0u;
        (void)rts_hyst_mit_cfg_permille(&o->hyst, P, (uint32_t)(m->block_below * 1000.0 + 0.5),
                                        (uint32_t)(m->unblock_above * 1000.0 + 0.5),
                                        (rts_time_ns)m->sleep_ns);
    }
    for (uint32_t k = 0; k < o->n_sources; k++) {
        if (o->protections & RTS_SHIELD_STRICT) o->strict_t_min[k] = (rts_time_ns)strict_t_min(c, k);
        if (o->protections & RTS_SHIELD_BURSTY) o->bursty_burst[k] = bursty_burst(c, k);
    }
    o->bursty_period = (rts_time_ns)m->period_ns;
    o->bursty_mode = RTS_BURSTY_TIMER_PERIODIC;
    /* The countdown counts 1 ns ticks: window = initial x tick. */
    o->countdown_tick_ns = 1u;
    o->countdown_initial = (uint32_t)m->window_ns;
    if (c->rx.enabled) {
        o->nbufs = c->rx.nbufs;
        o->ring_size = c->ring;
        o->recycle_threshold = c->rx.recycle_threshold;
        o->short_circuit = c->rx.short_circuit;
        o->task_base_prio = s->driver >= 0 ? c->tasks[s->driver].priority : 0u;
        o->global_capacity = c->rx.global_capacity;
        o->global_period = (rts_time_ns)c->rx.global_period_ns;
    }
    o->detect_slice_ns = (rts_time_ns)c->detect_slice_ns;
    o->detect_irq_threshold = c->detect_irq_threshold;
    o->detect_fill_high = c->detect_fill_high;
    o->detect_fill_low = c->detect_fill_low;
}

uint32_t hook_perform_all(struct rtsim *s, uint64_t now, const rts_shield_dec *d)
{
    const uint32_t f = d->n_ops ? rts_shield_apply(&s->port, &s->gate, &s->smap, d) : d->flags;
    if (f & RTS_SHIELD_F_SUSPEND) eng_driver_suspend(s, now);
    if (f & RTS_SHIELD_F_RESUME) eng_driver_resume(s, now);
    if (f & RTS_SHIELD_F_PRIO) eng_driver_prio(s, now, d->task_prio);
    if (f & RTS_SHIELD_F_POLL) eng_poll_wake(s, now);
    return f;
}

bool hook_init(struct rtsim *s, uint64_t now)
{
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) s->smap.rx_line[k] = LINE_RX + k;
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        s->smap.timer_hw[t] = t;
        s->smap.timer_line[t] = LINE_TIMER0 + t;
    }
    rts_shield_cfg c;
    shield_cfg(s, &c);
    rts_shield_dec d;
    if (rts_shield_init(&s->shield, &c, (rts_time_ns)now, &d) != RTS_OK) return false;
    s->hooks = rts_shield_hooks(&s->shield);
    hook_perform(s, now, &d);
    return true;
}

bool hook_rx_irq(struct rtsim *s, uint64_t now, uint64_t isr_entry, uint32_t source)
{
    rts_shield_dec d;
    const bool ok = rts_shield_rx_irq_isr(&s->shield, source, isr_entry, &d);
    hook_perform(s, now, &d);
    eng_detect(s, now);
    return ok;
}

bool hook_is_filter(const struct rtsim *s)
{
    return (s->shield.cfg.protections & RTS_SHIELD_COUNTDOWN) != 0u;
}

int hook_filter_arrival(struct rtsim *s, uint64_t now, uint64_t *zero_at)
{
    rts_shield_dec d;
    rts_time_ns z;
    rts_shield_filter_arrival_isr(&s->shield, now, &z, &d);
    *zero_at = z;
    if (d.flags & RTS_SHIELD_F_DROP) return 0;
    if (d.flags & RTS_SHIELD_F_DELIVER) return (d.flags & RTS_SHIELD_F_LATCHED) ? 2 : 1;
    return 3;
}

bool hook_filter_zero(struct rtsim *s, uint64_t now)
{
    return rts_shield_filter_zero_isr(&s->shield, now);
}

bool hook_rx_packet(struct rtsim *s, uint64_t now, uint64_t isr_entry)
{
    /* The ISR reads the OS tick count at entry (Danicki §2.2). */
    const uint64_t tick = s->cfg.tick_ns > 0 ? (uint64_t)s->cfg.tick_ns : 1u;
    rts_shield_dec d;
    const bool ok = rts_shield_rx_packet_isr(&s->shield, isr_entry / tick * tick, &d);
    hook_perform(s, now, &d);
    return ok;
}

void hook_fill(struct rtsim *s, uint64_t now, uint32_t fill)
{
    rts_shield_fill_isr(&s->shield, fill);
    eng_detect(s, now);
}

void hook_queue_full(struct rtsim *s, uint64_t now)
{
    rts_shield_dec d;
    rts_shield_rx_queue_full_isr(&s->shield, now, &d);
    hook_perform(s, now, &d);
}

bool hook_task_poll(struct rtsim *s, uint64_t now, uint64_t *sleep_ns)
{
    rts_shield_dec d;
    rts_time_ns sl;
    const bool run = rts_shield_task_poll(&s->shield, now, &sl, &d);
    hook_perform(s, now, &d);
    *sleep_ns = sl;
    return run;
}

void hook_task_done(struct rtsim *s, uint64_t now, uint64_t work_ns, uint32_t fill)
{
    rts_shield_dec d;
    (void)rts_shield_task_done(&s->shield, NULL, now, work_ns, fill, NULL, &d);
    hook_perform(s, now, &d);
    eng_detect(s, now);
}

void hook_cycle_end(struct rtsim *s, uint64_t now, uint64_t start, uint64_t target)
{
    rts_shield_dec d;
    (void)rts_shield_cycle_end(&s->shield, start, target, now, &d);
    hook_perform(s, now, &d);
    eng_detect(s, now);
}

void hook_timer(struct rtsim *s, uint64_t now, unsigned timer)
{
    rts_shield_dec d;
    (void)rts_shield_timer_isr(&s->shield, timer, now, &d);
    hook_perform(s, now, &d);
}
