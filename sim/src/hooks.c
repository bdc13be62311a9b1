/* The driver's hooks into libshield (hooks.h): each hook is one call into
 * rtshield/rts_shield.h at the place a real driver calls it, and the
 * returned decision is performed through the port and the driver
 * operations the engine handed over. No protection logic lives here; the
 * configuration checks name the scenario keys. */
#include "hooks.h"

#include <stdlib.h>

_Static_assert(RTSIM_DET_COUNT == 3, "hook_detected() fills three detector counters");

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

/* The measured critical task: the one marked critical, else the first
 * periodic task (as rtsim_create() picks it). */
static int critical_index(const rtsim_config *cfg)
{
    for (uint32_t i = 0; i < cfg->n_tasks; i++)
        if (cfg->tasks[i].kind == RTSIM_TASK_PERIODIC && cfg->tasks[i].critical) return (int)i;
    for (uint32_t i = 0; i < cfg->n_tasks; i++)
        if (cfg->tasks[i].kind == RTSIM_TASK_PERIODIC) return (int)i;
    return -1;
}

static int driver_index(const rtsim_config *cfg)
{
    for (uint32_t i = 0; i < cfg->n_tasks; i++)
        if (cfg->tasks[i].kind == RTSIM_TASK_DRIVER) return (int)i;
    return -1;
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

/* A duration for libshield: negative ones become 0, which it refuses. */
static rts_time_ns ns(int64_t v)
{
    return v > 0 ? (rts_time_ns)v : 0u;
}

/* The shield configuration of this device: the scenario's parameters in
 * libshield's units, nothing decided here. Returns the field libshield's
 * hysteresis helper refused, or RTS_SHIELD_FIELD_NONE. */
static rts_shield_field shield_cfg(const rtsim_config *c, rts_shield_cfg *o)
{
    const rtsim_mitigation_cfg *m = &c->mitigation;
    rts_shield_cfg_default(o);
    o->protections = kind_bit(m->kind) | m->also | (c->rx.enabled ? RTS_SHIELD_RX_PATH : 0u);
    o->n_sources = c->n_sources ? c->n_sources : 1u;
    rts_shield_field bad = RTS_SHIELD_FIELD_NONE;
    if (o->protections & RTS_SHIELD_BURST) {
        o->burst.slice_ns = ns(m->slice_ns);
        o->burst.capacity = m->capacity;
    }
    if (o->protections & RTS_SHIELD_HYSTERESIS) {
        const int crit = critical_index(c);
        const uint64_t P = crit >= 0 ? (uint64_t)c->tasks[crit].period_ns : 0u;
        /* Both shares in [0, 1] before they are converted to permille (a
         * larger one would not fit the conversion: undefined behaviour). */
        if (!(m->block_below >= 0.0 && m->block_below <= 1.0 && m->unblock_above >= 0.0 &&
              m->unblock_above <= 1.0) ||
            rts_hyst_mit_cfg_permille(&o->hyst, P, (uint32_t)(m->block_below * 1000.0 + 0.5),
                                      (uint32_t)(m->unblock_above * 1000.0 + 0.5),
                                      ns(m->sleep_ns)) != RTS_OK)
            bad = RTS_SHIELD_FIELD_HYSTERESIS;
    }
    for (uint32_t k = 0; k < o->n_sources && k < RTS_SHIELD_MAX_SOURCES; k++) {
        if (o->protections & RTS_SHIELD_STRICT) o->strict_t_min[k] = ns(strict_t_min(c, k));
        if (o->protections & RTS_SHIELD_BURSTY) o->bursty_burst[k] = bursty_burst(c, k);
    }
    o->bursty_period = ns(m->period_ns);
    o->bursty_mode = m->bursty_lazy ? RTS_BURSTY_TIMER_LAZY : RTS_BURSTY_TIMER_PERIODIC;
    if (o->protections & RTS_SHIELD_BUDGET) o->budget.charge_isr = m->budget_charge_isr != 0u;
    /* The countdown counts 1 ns ticks: window = initial x tick. */
    o->countdown_tick_ns = 1u;
    o->countdown_initial =
        m->window_ns > 0 && m->window_ns <= (int64_t)UINT32_MAX ? (uint32_t)m->window_ns : 0u;
    if ((o->protections & RTS_SHIELD_COUNTDOWN) && o->countdown_initial == 0u)
        bad = RTS_SHIELD_FIELD_COUNTDOWN;
    if (c->rx.enabled) {
        const int drv = driver_index(c);
        o->nbufs = c->rx.nbufs;
        o->ring_size = c->ring;
        o->recycle_threshold = c->rx.recycle_threshold;
        o->short_circuit = c->rx.short_circuit;
        o->task_base_prio = drv >= 0 ? c->tasks[drv].priority : 0u;
        o->global_capacity = c->rx.global_capacity;
        o->global_period = ns(c->rx.global_period_ns);
    }
    o->detect_slice_ns = ns(c->detect_slice_ns);
    o->detect_irq_threshold = c->detect_irq_threshold;
    o->detect_fill_high = c->detect_fill_high;
    o->detect_fill_low = c->detect_fill_low;
    return bad;
}

/* The socket bound to scenario flow `f` (Behnke §5.6). */
static rts_shield_flow flow_binding(const rtsim_flow_cfg *f)
{
    rts_shield_flow b = {f->proto == RTSIM_PROTO_TCP ? RTS_PROTO_TCP : RTS_PROTO_UDP,
                         f->dst_port,
                         0u,
                         f->prio,
                         f->capacity,
                         ns(f->server_period_ns),
                         f->queue_limit};
    return b;
}

bool hook_binds(const rtsim_flow_cfg *f)
{
    return !f->unbound && (f->proto == RTSIM_PROTO_TCP || f->proto == RTSIM_PROTO_UDP);
}

/* libshield's refusal, in the scenario's words. */
static const char *field_message(rts_shield_field f, const rtsim_config *cfg)
{
    switch (f) {
    case RTS_SHIELD_FIELD_PROTECTIONS: return "mitigation.also: these protections do not combine";
    case RTS_SHIELD_FIELD_SOURCES:
        return cfg->rx.enabled
                   ? "rx: the receive path takes one RX source"
                   : "mitigation.kind: several RX sources work with none, strict or bursty only";
    case RTS_SHIELD_FIELD_BURST: return "mitigation.slice, mitigation.capacity: must be positive";
    case RTS_SHIELD_FIELD_HYSTERESIS:
        return "mitigation.block_below/unblock_above/sleep: need 0 <= block_below <= unblock_above "
               "<= 1, a positive sleep and a critical task's period";
    case RTS_SHIELD_FIELD_STRICT: return "mitigation.min_interarrival: must be positive";
    case RTS_SHIELD_FIELD_BURSTY: return "mitigation.burst, mitigation.period: must be positive";
    case RTS_SHIELD_FIELD_COUNTDOWN: return "mitigation.window: must be between 1 ns and 4.29 s";
    case RTS_SHIELD_FIELD_POOL:
        return "rx.buffers, nic.ring, rx.recycle_below: need 1 <= nic.ring <= rx.buffers <= the "
               "pool limit and rx.recycle_below <= nic.ring";
    case RTS_SHIELD_FIELD_SHORT_CIRCUIT: return "rx.short_circuit: 0 or 1";
    case RTS_SHIELD_FIELD_TASK_PRIO:
        return "driver.priority: with the receive path, below the flow priority levels";
    case RTS_SHIELD_FIELD_GLOBAL: return "rx.global_period: must be positive with a global capacity";
    case RTS_SHIELD_FIELD_DETECT_IRQ: return "detect.slice: must be positive";
    case RTS_SHIELD_FIELD_DETECT_FILL: return "detect.fill_low: must be below detect.fill_high";
    case RTS_SHIELD_FIELD_FLOW_PORT: return "flows.dst_port: 1..65535 to bind a socket";
    case RTS_SHIELD_FIELD_FLOW_PRIO: return "flows.priority: below the flow priority levels";
    case RTS_SHIELD_FIELD_FLOW_SERVER:
        return "flows.capacity, flows.server_period: a capacity needs a positive server period";
    case RTS_SHIELD_FIELD_FLOW_QUEUE: return "flows.queue: 1..the pool limit";
    default: return "mitigation: refused by libshield";
    }
}

/* Build the shield of `cfg` and bind its flows, as rtsim_create() will:
 * libshield's own checks decide; this only names the key. */
static const char *shield_error(const rtsim_config *cfg)
{
    rts_shield_cfg c;
    const rts_shield_field f = shield_cfg(cfg, &c);
    if (f != RTS_SHIELD_FIELD_NONE) return field_message(f, cfg);
    rts_shield *sh = malloc(sizeof *sh);
    if (sh == NULL) return "config: out of memory";
    rts_shield_dec d;
    const char *msg = NULL;
    if (rts_shield_init(sh, &c, 0u, &d) != RTS_OK) {
        msg = field_message((rts_shield_field)sh->bad_field, cfg);
    } else if (cfg->rx.enabled) {
        for (uint32_t i = 0; i < cfg->n_flows && msg == NULL; i++) {
            if (!hook_binds(&cfg->flows[i])) continue;
            const rts_shield_flow b = flow_binding(&cfg->flows[i]);
            uint8_t id;
            const rts_err e = rts_shield_bind(sh, &b, 0u, &id);
            if (e == RTS_EEXIST)
                msg = "flows.dst_port: a port is bound twice";
            else if (e == RTS_EFULL)
                msg = "flows: more bound flows than libshield's RTS_FLOW_MAX allows";
            else if (e != RTS_OK)
                msg = field_message((rts_shield_field)sh->bad_field, cfg);
        }
    }
    free(sh);
    return msg;
}

/* What the device model itself needs of the configuration; libshield's
 * rules come from libshield (shield_error). */
const char *hook_config_error(const rtsim_config *cfg)
{
    const rtsim_mitigation_cfg *m = &cfg->mitigation;
    if (m->kind > RTSIM_MIT_POLLING) return "mitigation.kind: unknown";
    if (m->bursty_lazy > 1u) return "mitigation.timer: periodic or lazy";
    if (m->bursty_lazy && m->kind != RTSIM_MIT_BURSTY)
        return "mitigation.timer: the lazy timer is the bursty limiter's (kind = bursty)";
    if (m->budget_charge_isr > 1u) return "mitigation.charge_isr: true or false";
    if (m->one_enable_bit > 1u) return "mitigation.enable_bits: 1 or 2";
    for (uint32_t i = 0; i < cfg->n_tasks; i++) {
        if (cfg->tasks[i].masks_rx > 1u) return "tasks.masks_rx: true or false";
        if (cfg->tasks[i].masks_rx && cfg->tasks[i].kind != RTSIM_TASK_PERIODIC)
            return "tasks.masks_rx: only a periodic task masks the RX lines";
    }
    if (m->one_enable_bit && cfg->rx.enabled) return "mitigation.enable_bits: 1 not with [rx]";
    if (m->budget_charge_isr && !(kind_bit(m->kind) & RTS_SHIELD_BUDGET) &&
        !(m->also & RTS_SHIELD_BUDGET))
        return "mitigation.charge_isr: needs Budget Mitigation (kind or also)";
    if (m->kind == RTSIM_MIT_POLLING) {
        if (m->period_ns <= 0) return "mitigation.period: the polling period must be positive";
        if (m->also != 0u) return "mitigation.also: polling combines with no protection";
        if (cfg->rx.enabled) return "mitigation.kind: polling works without [rx]";
        if (cfg->nic_kind == RTSIM_NIC_MULTIQUEUE)
            return "mitigation.kind: polling needs nic.kind = edge or dma_ring";
    }
    const uint32_t combinable =
        RTS_SHIELD_BURST | RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET | RTS_SHIELD_QUEUE;
    if ((m->also & ~combinable) != 0u)
        return "mitigation.also: only burst, hysteresis, budget and queue combine";
    if ((m->also & kind_bit(m->kind)) != 0u) return "mitigation.also: names the mitigation's own kind";
    const uint32_t p = kind_bit(m->kind) | m->also;
    if ((p & RTS_SHIELD_COUNTDOWN) && cfg->nic_kind != RTSIM_NIC_EDGE)
        return "mitigation.kind: countdown filters the edge NIC's interrupt line (nic.kind = edge)";
    if ((p & RTS_SHIELD_HYSTERESIS) && critical_index(cfg) < 0)
        return "mitigation: hysteresis needs a periodic critical task";
    if (cfg->detect_slice_ns < 0) return "detect.slice: must not be negative";
    for (uint32_t q = 0; q < RTSIM_PATH_COUNT; q++) {
        const int64_t *v = cfg->costs.path_q_ns[q];
        if (cfg->costs.path_ns[q] < 0) return "costs.rx_path: must not be negative";
        if (v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0) continue;
        if (v[0] < cfg->costs.path_ns[q] || v[1] < v[0] || v[2] < v[1] || v[3] < v[2])
            return "costs.rx_path quantiles: nondecreasing from the path's cost";
    }
    if (cfg->rx.enabled > 1u) return "rx.enabled: 0 or 1";
    if (cfg->rx.enabled) {
        if (cfg->rx.eager_invalidate > 1u) return "rx.cache: lazy or eager";
        int polling = 0;
        for (uint32_t i = 0; i < cfg->n_tasks; i++)
            if (cfg->tasks[i].kind == RTSIM_TASK_POLLING) polling++;
        if (cfg->rx.global_capacity > 0 && polling != 1)
            return "rx.global_capacity: needs one polling task (rx.poll_priority)";
    }
    return shield_error(cfg);
}

/* Bind every receiving socket of `cfg` in the device's shield (at creation). */
bool hook_bind_flows(sim_hooks *h, const rtsim_config *cfg)
{
    for (uint32_t i = 0; i < cfg->n_flows; i++) {
        if (!hook_binds(&cfg->flows[i])) continue;
        const rts_shield_flow b = flow_binding(&cfg->flows[i]);
        uint8_t id;
        if (rts_shield_bind(&h->shield, &b, 0, &id) != RTS_OK) return false;
        h->sflow_owner[id] = (int)i;
    }
    return true;
}

uint32_t hook_perform_all(sim_hooks *h, uint64_t now, const rts_shield_dec *d)
{
    /* One enable bit (Regehr §4): the protections write the hardware bit
     * whatever the application's mask (gate NULL); two: through libshield's gate. */
    const uint32_t f = d->n_ops ? rts_shield_apply(h->port, h->gate, &h->smap, d) : d->flags;
    if (f & RTS_SHIELD_F_SUSPEND) h->ops->suspend(h->ctx, now);
    if (f & RTS_SHIELD_F_RESUME) h->ops->resume(h->ctx, now);
    if (f & RTS_SHIELD_F_PRIO) h->ops->set_prio(h->ctx, now, d->task_prio);
    if (f & RTS_SHIELD_F_POLL) h->ops->poll_wake(h->ctx, now);
    return f;
}

bool hook_init(sim_hooks *h, const rtsim_config *cfg, uint64_t now)
{
    for (uint32_t i = 0; i < RTS_FLOW_MAX; i++)
        h->sflow_owner[i] = -1;
    h->tick_ns = cfg->tick_ns > 0 ? (uint64_t)cfg->tick_ns : 1u;
    rts_shield_cfg c;
    (void)shield_cfg(cfg, &c);
    rts_shield_dec d;
    if (rts_shield_init(&h->shield, &c, (rts_time_ns)now, &d) != RTS_OK) return false;
    h->mask = rts_shield_hooks(&h->shield);
    hook_perform(h, now, &d);
    return true;
}

bool hook_rx_irq(sim_hooks *h, uint64_t now, uint64_t isr_entry, uint32_t source)
{
    rts_shield_dec d;
    const bool ok = rts_shield_rx_irq_isr(&h->shield, source, isr_entry, &d);
    hook_perform(h, now, &d);
    return ok;
}

int hook_filter_arrival(sim_hooks *h, uint64_t now, uint64_t *zero_at)
{
    rts_shield_dec d;
    rts_time_ns z;
    rts_shield_filter_arrival_isr(&h->shield, now, &z, &d);
    *zero_at = z;
    if (d.flags & RTS_SHIELD_F_DROP) return 0;
    if (d.flags & RTS_SHIELD_F_DELIVER) return (d.flags & RTS_SHIELD_F_LATCHED) ? 2 : 1;
    return 3;
}

bool hook_filter_zero(sim_hooks *h, uint64_t now)
{
    return rts_shield_filter_zero_isr(&h->shield, now);
}

bool hook_rx_packet(sim_hooks *h, uint64_t now, uint64_t isr_entry)
{
    /* The ISR reads the OS tick count at entry (Danicki §2.2). */
    rts_shield_dec d;
    const bool ok =
        rts_shield_rx_packet_isr(&h->shield, isr_entry / h->tick_ns * h->tick_ns, &d);
    hook_perform(h, now, &d);
    return ok;
}

void hook_fill(sim_hooks *h, uint32_t fill)
{
    rts_shield_fill_isr(&h->shield, fill);
}

void hook_queue_full(sim_hooks *h, uint64_t now)
{
    rts_shield_dec d;
    rts_shield_rx_queue_full_isr(&h->shield, now, &d);
    hook_perform(h, now, &d);
}

bool hook_rx_frame(sim_hooks *h, uint64_t now, uint64_t isr_entry, unsigned buf,
                   const uint8_t *frame, uint32_t len, rts_shield_rx *rx, uint32_t *flags,
                   unsigned *drop)
{
    rts_shield_dec d;
    /* The ISR reads the OS tick count at entry, as for the driver queue. */
    if (rts_shield_rx_frame_isr(&h->shield, buf, frame, len, 0u, 0u, now,
                                isr_entry / h->tick_ns * h->tick_ns, rx, &d) != RTS_OK)
        return false;
    *flags = hook_perform(h, now, &d);
    *drop = d.drop;
    return true;
}

bool hook_task_poll(sim_hooks *h, uint64_t now, uint64_t *sleep_ns)
{
    rts_shield_dec d;
    rts_time_ns sl;
    const bool run = rts_shield_task_poll(&h->shield, now, &sl, &d);
    hook_perform(h, now, &d);
    *sleep_ns = sl;
    return run;
}

bool hook_task_next(sim_hooks *h, uint64_t now, rts_rx_job *job)
{
    rts_shield_dec d;
    const rts_err e = rts_shield_task_next(&h->shield, job, &d);
    hook_perform(h, now, &d);
    return e == RTS_OK;
}

void hook_task_done(sim_hooks *h, uint64_t now, uint64_t work_ns, uint32_t fill)
{
    rts_shield_dec d;
    (void)rts_shield_task_done(&h->shield, NULL, now, work_ns, fill, NULL, &d);
    hook_perform(h, now, &d);
}

bool hook_rx_task_done(sim_hooks *h, uint64_t now, const rts_rx_job *job, uint64_t work_ns,
                       uint16_t *refill)
{
    rts_shield_dec d;
    const rts_err e = rts_shield_task_done(&h->shield, job, now, work_ns, 0, refill, &d);
    hook_perform(h, now, &d);
    return e == RTS_OK;
}

uint32_t hook_poll_begin(sim_hooks *h, uint64_t now)
{
    return rts_shield_poll_begin(&h->shield, now);
}

void hook_poll_end(sim_hooks *h, uint64_t now)
{
    rts_shield_dec d;
    rts_shield_poll_end(&h->shield, now, &d);
    hook_perform(h, now, &d);
}

void hook_cycle_end(sim_hooks *h, uint64_t now, uint64_t start, uint64_t target)
{
    rts_shield_dec d;
    (void)rts_shield_cycle_end(&h->shield, start, target, now, &d);
    hook_perform(h, now, &d);
}

bool hook_timer_at_expiry(const sim_hooks *h, unsigned timer)
{
    return (h->shield.cfg.protections & RTS_SHIELD_STRICT) != 0u &&
           timer >= RTS_SHIELD_TIMER_STRICT0 && timer < RTS_SHIELD_TIMERS;
}

void hook_rx_isr_done(sim_hooks *h, uint64_t now, uint64_t isr_ns)
{
    rts_shield_dec d;
    rts_shield_rx_isr_done_isr(&h->shield, now, isr_ns, &d);
    hook_perform(h, now, &d);
}

void hook_timer(sim_hooks *h, uint64_t now, unsigned timer)
{
    rts_shield_dec d;
    (void)rts_shield_timer_isr(&h->shield, timer, now, &d);
    hook_perform(h, now, &d);
}
