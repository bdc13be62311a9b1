/* The one driver entry point: every protection behind the hooks of a
 * driver, decisions returned as values (rts_shield.h). */
#include "rtshield/rts_shield.h"

/* Port flags an op may carry (the rest of an rts_action goes to dec->flags). */
#define PORT_FLAGS                                                                                 \
    (RTS_ACT_DISABLE_LINE | RTS_ACT_ENABLE_LINE | RTS_ACT_ARM_TIMER | RTS_ACT_CANCEL_TIMER |      \
     RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_ENABLE_TIMER_IRQ | RTS_ACT_DISABLE_TIMER_IRQ)

/* Protections this build contains (the RTS_CONFIG_* switches of rts_opts.h):
 * rts_shield_init() refuses the others, and has() is constant false for
 * them, so their branches cost nothing where they cannot be compiled out. */
#define SHIELD_BUILT                                                                                  \
    ((RTS_CONFIG_MITIGATIONS ? (uint32_t)(RTS_SHIELD_BURST | RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET | \
                                          RTS_SHIELD_QUEUE)                                           \
                             : 0u) |                                                                  \
     (RTS_CONFIG_LIMITERS ? (uint32_t)(RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY | RTS_SHIELD_COUNTDOWN) : 0u) | \
     (RTS_CONFIG_RX_PATH ? (uint32_t)RTS_SHIELD_RX_PATH : 0u))

static bool has(const rts_shield *sh, uint32_t prot)
{
    return (sh->cfg.protections & prot & SHIELD_BUILT) != 0u;
}

static void dec_clear(rts_shield_dec *d)
{
    d->flags = 0u;
    d->drop = RTS_SHIELD_DROP_NONE;
    d->task_prio = 0u;
    d->n_ops = 0u;
    d->pad = 0u;
}

static void count_drop(rts_shield *sh, rts_shield_dec *d, rts_shield_drop why)
{
    d->flags |= RTS_SHIELD_F_DROP;
    d->drop = (uint8_t)why;
    sh->drops[why]++;
}

#if RTS_CONFIG_MITIGATIONS || RTS_CONFIG_LIMITERS || RTS_CONFIG_RX_PATH /* else nothing emits */
/*
 * Fold one component's action into the decision. `who` is the protection
 * bit, for the per-source line holds: a line goes off when its first holder
 * takes it and on when its last holder releases it, so protections combine.
 * The non-port flags become shield flags (DROP is left to the caller, who
 * knows the reason).
 */
static void emit(rts_shield *sh, rts_shield_dec *d, uint32_t who, unsigned source, unsigned timer,
                 rts_action a)
{
    uint32_t f = a.flags & PORT_FLAGS;
    if (source < RTS_SHIELD_MAX_SOURCES) {
        uint32_t *h = &sh->line_holds[source];
        if (a.flags & RTS_ACT_DISABLE_LINE) {
            if (*h != 0u) f &= ~(uint32_t)RTS_ACT_DISABLE_LINE;
            *h |= who;
        }
        if (a.flags & RTS_ACT_ENABLE_LINE) {
            *h &= ~who;
            if (*h != 0u) f &= ~(uint32_t)RTS_ACT_ENABLE_LINE;
        }
    }
    if (a.flags & RTS_ACT_SUSPEND_DRIVER) {
        if (sh->task_holds == 0u) d->flags |= RTS_SHIELD_F_SUSPEND;
        sh->task_holds |= who;
    }
    if (a.flags & RTS_ACT_RESUME_DRIVER) {
        sh->task_holds &= ~who;
        if (sh->task_holds == 0u) d->flags |= RTS_SHIELD_F_RESUME;
    }
    if (a.flags & RTS_ACT_RESCHEDULE) d->flags |= RTS_SHIELD_F_RESCHEDULE;
    if (f == 0u || d->n_ops >= RTS_SHIELD_MAX_OPS) return;
    rts_shield_op *op = &d->ops[d->n_ops++];
    op->source = (uint8_t)source;
    op->timer = (uint8_t)timer;
    op->pad = 0u;
    op->act.flags = f;
    op->act.timer_at = a.timer_at;
}
#endif

void rts_shield_cfg_default(rts_shield_cfg *cfg)
{
    /* Every field not named here is 0: off, or none. */
    *cfg = (rts_shield_cfg){.n_sources = 1u,
                            .hyst = {.sleep_ns = 1000000u},
                            .bursty_mode = RTS_BURSTY_TIMER_PERIODIC,
                            .countdown_tick_ns = 1u,
                            .recycle_threshold = RTS_SHIELD_THRESHOLD_DEFAULT,
                            .short_circuit = 1u};
#if RTS_CONFIG_MITIGATIONS
    rts_burst_mit_cfg_default(&cfg->burst);
    rts_budget_mit_cfg_default(&cfg->budget);
#endif
}

/* RTS_EINVAL with the field it concerns (rts_shield.bad_field). */
static rts_err bad(rts_shield *sh, rts_shield_field f)
{
    sh->bad_field = (uint32_t)f;
    return RTS_EINVAL;
}

#if RTS_CONFIG_RX_PATH
static rts_err init_rx(rts_shield *sh, const rts_shield_cfg *c, rts_time_ns now)
{
    if (c->task_base_prio >= RTS_FLOW_PRIO_LEVELS) return bad(sh, RTS_SHIELD_FIELD_TASK_PRIO);
    if (c->short_circuit > 1u) return bad(sh, RTS_SHIELD_FIELD_SHORT_CIRCUIT);
    if (c->global_capacity > 0u && c->global_period == 0u) return bad(sh, RTS_SHIELD_FIELD_GLOBAL);
    rts_err e = rts_rx_driver_init(&sh->rx, NULL, c->nbufs, c->ring_size, c->task_base_prio,
                            c->global_capacity, c->global_period, now);
    if (e != RTS_OK) return bad(sh, RTS_SHIELD_FIELD_POOL);
    sh->rx.short_circuit = (uint8_t)c->short_circuit;
    if (c->recycle_threshold != RTS_SHIELD_THRESHOLD_DEFAULT &&
        rts_flow_queue_set_threshold(&sh->rx.fq, c->recycle_threshold) != RTS_OK) {
        return bad(sh, RTS_SHIELD_FIELD_POOL);
    }
    return RTS_OK;
}
#endif

rts_err rts_shield_init(rts_shield *sh, const rts_shield_cfg *cfg, rts_time_ns now, rts_shield_dec *dec)
{
    if (sh == NULL || cfg == NULL || dec == NULL) return RTS_EINVAL;
    dec_clear(dec);
    sh->bad_field = RTS_SHIELD_FIELD_NONE;
    const uint32_t p = cfg->protections;
    /* A bit beyond RTS_SHIELD_PROT_ALL, or a protection not in this build. */
    if ((p & ~SHIELD_BUILT) != 0u) return bad(sh, RTS_SHIELD_FIELD_PROTECTIONS);
    if (cfg->n_sources < 1u || cfg->n_sources > RTS_SHIELD_MAX_SOURCES) {
        return bad(sh, RTS_SHIELD_FIELD_SOURCES);
    }
    const uint32_t multi_ok = RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY;
    if (cfg->n_sources > 1u && (p & ~multi_ok) != 0u) return bad(sh, RTS_SHIELD_FIELD_SOURCES);
    /* Exclusive pairs, tested only in builds that contain both (p holds no
     * protection of a component left out: refused above). */
#if RTS_CONFIG_LIMITERS
    if ((p & RTS_SHIELD_STRICT) && (p & (RTS_SHIELD_BURSTY | RTS_SHIELD_COUNTDOWN))) {
        return bad(sh, RTS_SHIELD_FIELD_PROTECTIONS);
    }
#endif
#if RTS_CONFIG_MITIGATIONS && RTS_CONFIG_LIMITERS
    /* Burst's slice timer and the bursty limiter's tick are one timer (TIMER_MIT). */
    if ((p & RTS_SHIELD_BURST) && (p & RTS_SHIELD_BURSTY)) return bad(sh, RTS_SHIELD_FIELD_PROTECTIONS);
#endif
    sh->cfg = *cfg;
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) sh->line_holds[k] = 0u;
    sh->task_holds = 0u;
    sh->driver_fill = 0u;
    for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++) sh->drops[r] = 0u;
#if RTS_CONFIG_MITIGATIONS
    if ((p & RTS_SHIELD_BURST) && rts_burst_mit_init(&sh->burst, &cfg->burst) != RTS_OK) {
        return bad(sh, RTS_SHIELD_FIELD_BURST);
    }
    if ((p & RTS_SHIELD_HYSTERESIS) && rts_hyst_mit_init(&sh->hyst, &cfg->hyst) != RTS_OK) {
        return bad(sh, RTS_SHIELD_FIELD_HYSTERESIS);
    }
    if ((p & RTS_SHIELD_BUDGET) && rts_budget_mit_init(&sh->budget, &cfg->budget) != RTS_OK) {
        return bad(sh, RTS_SHIELD_FIELD_BUDGET);
    }
    if (p & RTS_SHIELD_QUEUE) (void)rts_queue_mit_init(&sh->queue);
#endif
#if RTS_CONFIG_LIMITERS
    if (p & RTS_SHIELD_STRICT) {
        for (unsigned k = 0; k < cfg->n_sources; k++) {
            if (rts_strict_init(&sh->strict[k], cfg->strict_t_min[k]) != RTS_OK) {
                return bad(sh, RTS_SHIELD_FIELD_STRICT);
            }
        }
    }
    if (p & RTS_SHIELD_BURSTY) {
        if (rts_bursty_init(&sh->bursty, cfg->bursty_period, (rts_bursty_mode)cfg->bursty_mode) != RTS_OK) {
            return bad(sh, RTS_SHIELD_FIELD_BURSTY);
        }
        for (unsigned k = 0; k < cfg->n_sources; k++) {
            if (rts_bursty_add_source(&sh->bursty, cfg->bursty_burst[k], &sh->bursty_id[k]) != RTS_OK) {
                return bad(sh, RTS_SHIELD_FIELD_BURSTY);
            }
        }
    }
    if ((p & RTS_SHIELD_COUNTDOWN) &&
        rts_countdown_init(&sh->countdown, cfg->countdown_tick_ns, cfg->countdown_initial) != RTS_OK) {
        return bad(sh, RTS_SHIELD_FIELD_COUNTDOWN);
    }
#endif
#if RTS_CONFIG_RX_PATH
    if (p & RTS_SHIELD_RX_PATH) {
        const rts_err e = init_rx(sh, cfg, now);
        if (e != RTS_OK) return e;
    }
#endif
    /* detection */
    rts_shield_detect *dt = &sh->detect;
    (void)rts_detect_lateness_mon_init(&dt->lateness);
    dt->on = 0u;
    dt->pad = 0u;
    dt->late_cycles = dt->irq_crossings = dt->fill_overloads = 0u;
#if RTS_CONFIG_DETECT
    if (cfg->detect_slice_ns > 0u) {
        if (rts_detect_irq_count_init(&dt->irqs, cfg->detect_slice_ns, cfg->detect_irq_threshold, now) != RTS_OK) {
            return bad(sh, RTS_SHIELD_FIELD_DETECT_IRQ);
        }
        dt->on |= 1u;
    }
    if (cfg->detect_fill_high > 0u) {
        if (rts_detect_fill_wm_init(&dt->fill, cfg->detect_fill_high, cfg->detect_fill_low) != RTS_OK) {
            return bad(sh, RTS_SHIELD_FIELD_DETECT_FILL);
        }
        dt->on |= 2u;
    }
#else
    if (cfg->detect_slice_ns > 0u) return bad(sh, RTS_SHIELD_FIELD_DETECT_IRQ);   /* not in this build */
    if (cfg->detect_fill_high > 0u) return bad(sh, RTS_SHIELD_FIELD_DETECT_FILL); /* not in this build */
#endif
#if RTS_CONFIG_MITIGATIONS
    if ((p & RTS_SHIELD_BUDGET) && sh->budget.suspended) {
        /* Danicki §2.2: no budget before the first report. */
        const rts_action a = {RTS_ACT_DISABLE_LINE | RTS_ACT_SUSPEND_DRIVER, 0u};
        emit(sh, dec, RTS_SHIELD_BUDGET, 0u, RTS_SHIELD_TIMER_MIT, a);
    }
#endif
#if RTS_CONFIG_LIMITERS
    if (p & RTS_SHIELD_BURSTY) {
        emit(sh, dec, RTS_SHIELD_BURSTY, 0u, RTS_SHIELD_TIMER_MIT, rts_bursty_start(&sh->bursty, now));
    }
#endif
    (void)now;
    return RTS_OK;
}

rts_err rts_shield_bind(rts_shield *sh, const rts_shield_flow *f, rts_time_ns now, uint8_t *id)
{
    if (sh == NULL || f == NULL || id == NULL) return RTS_EINVAL;
    if (!has(sh, RTS_SHIELD_RX_PATH)) return bad(sh, RTS_SHIELD_FIELD_PROTECTIONS);
#if RTS_CONFIG_RX_PATH
    if (f->prio >= RTS_FLOW_PRIO_LEVELS) return bad(sh, RTS_SHIELD_FIELD_FLOW_PRIO);
    if (f->queue_limit > RTS_POOL_MAX_BUFS) return bad(sh, RTS_SHIELD_FIELD_FLOW_QUEUE);
    if (f->capacity > 0u && f->server_period == 0u) return bad(sh, RTS_SHIELD_FIELD_FLOW_SERVER);
    uint8_t fid;
    rts_flow_table *t = &sh->rx.flows;
    rts_err e = rts_flow_table_bind(t, f->proto, f->local_port, f->src_addr, &fid);
    if (e == RTS_EINVAL) return bad(sh, RTS_SHIELD_FIELD_FLOW_PORT);
    if (e != RTS_OK) return e;
    e = rts_flow_table_setopt(t, fid, RTS_FLOWOPT_PRIORITY, f->prio, now);
    if (e == RTS_OK && f->capacity > 0u) {
        e = rts_flow_table_setopt(t, fid, RTS_FLOWOPT_SERVER_PERIOD_NS, f->server_period, now);
        if (e == RTS_OK) e = rts_flow_table_setopt(t, fid, RTS_FLOWOPT_CAPACITY, f->capacity, now);
    }
    if (e == RTS_OK && f->queue_limit > 0u) {
        e = rts_flow_table_setopt(t, fid, RTS_FLOWOPT_QUEUE_LIMIT, f->queue_limit, now);
    }
    if (e != RTS_OK) {
        (void)rts_flow_table_unbind(t, fid);
        return bad(sh, RTS_SHIELD_FIELD_FLOW_SERVER);
    }
    *id = fid;
    return RTS_OK;
#else
    (void)now;
    return RTS_EINVAL;
#endif
}

bool rts_shield_rx_irq_isr(rts_shield *sh, unsigned source, rts_time_ns now, rts_shield_dec *dec)
{
    dec_clear(dec);
#if RTS_CONFIG_DETECT
    rts_shield_detect *dt = &sh->detect;
    if ((dt->on & 1u) && rts_detect_irq_count_on_irq_isr(&dt->irqs, now)) dt->irq_crossings++;
#endif
#if RTS_CONFIG_LIMITERS
    if (source >= sh->cfg.n_sources) return true;
    rts_action a;
    uint32_t who;
    unsigned timer;
    if (has(sh, RTS_SHIELD_STRICT)) {
        a = rts_strict_on_irq_isr(&sh->strict[source], now);
        who = RTS_SHIELD_STRICT;
        timer = RTS_SHIELD_TIMER_STRICT0 + source;
    } else if (has(sh, RTS_SHIELD_BURSTY)) {
        a = rts_bursty_on_irq_isr(&sh->bursty, sh->bursty_id[source], now);
        who = RTS_SHIELD_BURSTY;
        timer = RTS_SHIELD_TIMER_MIT;
    } else {
        return true;
    }
    emit(sh, dec, who, source, timer, a);
    if (a.flags & RTS_ACT_DROP) {
        count_drop(sh, dec, RTS_SHIELD_DROP_LIMITER);
        return false;
    }
#else
    (void)sh;
    (void)source;
    (void)now;
#endif
    return true;
}

void rts_shield_rx_isr_done_isr(rts_shield *sh, rts_time_ns now, rts_time_ns work_ns,
                                rts_shield_dec *dec)
{
    dec_clear(dec);
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_BUDGET)) {
        emit(sh, dec, RTS_SHIELD_BUDGET, 0u, RTS_SHIELD_TIMER_MIT,
             rts_budget_mit_on_isr_work_isr(&sh->budget, now, work_ns));
    }
#else
    (void)sh;
    (void)now;
    (void)work_ns;
#endif
}

bool rts_shield_rx_packet_isr(rts_shield *sh, rts_time_ns tick_now, rts_shield_dec *dec)
{
    dec_clear(dec);
#if !RTS_CONFIG_MITIGATIONS
    (void)sh;
    (void)tick_now;
    return true;
#else
    if (!has(sh, RTS_SHIELD_BURST)) return true;
    const rts_action a = rts_burst_mit_on_rx_isr(&sh->burst, tick_now);
    emit(sh, dec, RTS_SHIELD_BURST, 0u, RTS_SHIELD_TIMER_MIT, a);
    if (a.flags & RTS_ACT_DROP) {
        count_drop(sh, dec, RTS_SHIELD_DROP_LIMITER);
        return false;
    }
    return true;
#endif
}

static void fill_report(rts_shield *sh, uint32_t fill)
{
#if RTS_CONFIG_DETECT
    rts_shield_detect *dt = &sh->detect;
    if ((dt->on & 2u) && rts_detect_fill_wm_update(&dt->fill, fill) == RTS_WM_OVERLOAD) dt->fill_overloads++;
#else
    (void)sh;
    (void)fill;
#endif
}

void rts_shield_rx_queue_full_isr(rts_shield *sh, rts_time_ns now, rts_shield_dec *dec)
{
    dec_clear(dec);
    count_drop(sh, dec, RTS_SHIELD_DROP_QUEUE_FULL);
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_QUEUE)) {
        emit(sh, dec, RTS_SHIELD_QUEUE, 0u, RTS_SHIELD_TIMER_MIT,
             rts_queue_mit_on_enqueue_fail_isr(&sh->queue, now));
    }
#else
    (void)now;
#endif
}

/* The rx result before the eager driver fills it: nothing happened yet. */
static void rx_clear(rts_shield_rx *rx)
{
    *rx = (rts_shield_rx){.outcome = RTS_RX_OUTCOMES,
                          .flow = RTS_FLOW_NONE,
                          .recycled_flow = RTS_FLOW_NONE,
                          .repost = RTS_BUF_NONE};
}

#if RTS_CONFIG_RX_PATH
static const uint8_t rx_drop_reason[RTS_RX_OUTCOMES] = {
    RTS_SHIELD_DROP_NONE,          /* QUEUED */
    RTS_SHIELD_DROP_SHORT_CIRCUIT, /* SHORT_CIRCUIT */
    RTS_SHIELD_DROP_FLOW_SERVER,   /* FLOW_LIMIT */
    RTS_SHIELD_DROP_QUEUE_FULL,    /* QUEUE_FULL */
    RTS_SHIELD_DROP_GLOBAL_LIMIT   /* GLOBAL_LIMIT */
};

rts_err rts_shield_rx_frame_isr(rts_shield *sh, unsigned buf, const uint8_t *frame, size_t len,
                                unsigned desc_flow, unsigned desc_prio, rts_time_ns now,
                                rts_time_ns tick_now, rts_shield_rx *rx, rts_shield_dec *dec)
{
    dec_clear(dec);
    rx_clear(rx);
    if (!has(sh, RTS_SHIELD_RX_PATH)) return RTS_EINVAL;
    if (buf >= sh->rx.fq.nbufs || sh->rx.fq.state[buf] != RTS_BUF_RING) return RTS_EINVAL;
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_BURST)) {
        const rts_action a = rts_burst_mit_on_rx_isr(&sh->burst, tick_now);
        emit(sh, dec, RTS_SHIELD_BURST, 0u, RTS_SHIELD_TIMER_MIT, a);
        if (a.flags & RTS_ACT_DROP) {
            count_drop(sh, dec, RTS_SHIELD_DROP_LIMITER);
            rx->repost = (uint16_t)buf; /* still a ring buffer: the driver re-posts it */
            return RTS_OK;
        }
    }
#else
    (void)tick_now;
#endif
    rts_rx_result r;
    const unsigned before = rts_prio_inherit_current(&sh->rx.pi);
    rts_err e = frame != NULL ? rts_rx_driver_eager_isr(&sh->rx, buf, frame, len, now, &r)
                              : rts_rx_driver_eager_desc_isr(&sh->rx, buf, desc_flow, desc_prio, now, &r);
    if (e != RTS_OK) return e;
    rx->outcome = r.outcome;
    rx->flow = r.flow;
    rx->prio = r.prio;
    rx->recycled_flow = r.recycled_flow;
    rx->repost = r.repost;
    if (r.recycled_flow != RTS_FLOW_NONE) dec->flags |= RTS_SHIELD_F_RECYCLED;
    if (r.task_prio != before) {
        rx->raised = r.task_prio > before ? 1u : 0u;
        dec->flags |= RTS_SHIELD_F_PRIO | RTS_SHIELD_F_RESCHEDULE;
        dec->task_prio = (uint8_t)r.task_prio;
    }
    if (r.flags & (RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER)) {
        /* Global limit reached: interrupt mode ends, the polling task takes over. */
        const rts_action a = {r.flags & (RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER), r.timer_at};
        emit(sh, dec, RTS_SHIELD_RX_PATH, 0u, RTS_SHIELD_TIMER_POLL, a);
        dec->flags |= RTS_SHIELD_F_STOP;
    }
    if (r.outcome == RTS_RX_GLOBAL_LIMIT) dec->flags |= RTS_SHIELD_F_STOP;
    if (r.outcome != RTS_RX_QUEUED) count_drop(sh, dec, (rts_shield_drop)rx_drop_reason[r.outcome]);
#if RTS_CONFIG_MITIGATIONS
    if (r.outcome == RTS_RX_QUEUE_FULL && has(sh, RTS_SHIELD_QUEUE)) {
        emit(sh, dec, RTS_SHIELD_QUEUE, 0u, RTS_SHIELD_TIMER_MIT,
             rts_queue_mit_on_enqueue_fail_isr(&sh->queue, now));
    }
#endif
#if RTS_CONFIG_DETECT /* else fill_report() does nothing: no count to take */
    fill_report(sh, rts_flow_queue_count(&sh->rx.fq, RTS_BUF_QUEUED));
#endif
    return RTS_OK;
}
#else
rts_err rts_shield_rx_frame_isr(rts_shield *sh, unsigned buf, const uint8_t *frame, size_t len,
                                unsigned desc_flow, unsigned desc_prio, rts_time_ns now,
                                rts_time_ns tick_now, rts_shield_rx *rx, rts_shield_dec *dec)
{
    (void)sh, (void)buf, (void)frame, (void)len, (void)desc_flow, (void)desc_prio, (void)now, (void)tick_now;
    dec_clear(dec);
    rx_clear(rx);
    return RTS_EINVAL; /* receive path not in this build */
}
#endif

rts_err rts_shield_timer_isr(rts_shield *sh, unsigned timer, rts_time_ns now, rts_shield_dec *dec)
{
    dec_clear(dec);
    if (timer == RTS_SHIELD_TIMER_MIT) {
#if RTS_CONFIG_MITIGATIONS
        if (has(sh, RTS_SHIELD_BURST)) {
            emit(sh, dec, RTS_SHIELD_BURST, 0u, RTS_SHIELD_TIMER_MIT,
                 rts_burst_mit_on_timer_isr(&sh->burst, now));
            return RTS_OK;
        }
#endif
#if RTS_CONFIG_LIMITERS
        if (has(sh, RTS_SHIELD_BURSTY)) {
            uint32_t reenable = 0u;
            emit(sh, dec, RTS_SHIELD_BURSTY, 0u, RTS_SHIELD_TIMER_MIT,
                 rts_bursty_on_tick_isr(&sh->bursty, now, &reenable));
            for (unsigned k = 0; k < sh->cfg.n_sources; k++) {
                if (reenable & (1u << sh->bursty_id[k])) {
                    const rts_action a = {RTS_ACT_ENABLE_LINE, 0u};
                    emit(sh, dec, RTS_SHIELD_BURSTY, k, RTS_SHIELD_TIMER_MIT, a);
                }
            }
        }
#endif
        return RTS_OK;
    }
    if (timer == RTS_SHIELD_TIMER_POLL) {
#if RTS_CONFIG_RX_PATH
        if (has(sh, RTS_SHIELD_RX_PATH) && rts_global_limit_mode_of(&sh->rx.glim) == RTS_GLOBAL_LIMIT_POLL) {
            dec->flags |= RTS_SHIELD_F_POLL;
        }
#endif
        return RTS_OK;
    }
    if (timer >= RTS_SHIELD_TIMER_STRICT0 && timer < RTS_SHIELD_TIMERS) {
#if RTS_CONFIG_LIMITERS
        const unsigned k = timer - RTS_SHIELD_TIMER_STRICT0;
        if (has(sh, RTS_SHIELD_STRICT) && k < sh->cfg.n_sources) {
            emit(sh, dec, RTS_SHIELD_STRICT, k, timer, rts_strict_on_timer_isr(&sh->strict[k], now));
        }
#endif
        return RTS_OK;
    }
    (void)sh;
    (void)now;
    return RTS_EINVAL;
}

bool rts_shield_task_poll(rts_shield *sh, rts_time_ns now, rts_time_ns *sleep_ns, rts_shield_dec *dec)
{
    dec_clear(dec);
    *sleep_ns = 0u;
    bool run = true;
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_HYSTERESIS)) {
        const rts_driver_poll p = rts_hyst_mit_driver_poll(&sh->hyst, now);
        emit(sh, dec, RTS_SHIELD_HYSTERESIS, 0u, RTS_SHIELD_TIMER_MIT, p.act);
        if (!p.run) {
            run = false;
            *sleep_ns = p.sleep_ns;
        }
    }
    if (has(sh, RTS_SHIELD_BUDGET)) {
        const rts_driver_poll p = rts_budget_mit_driver_poll(&sh->budget, now);
        emit(sh, dec, RTS_SHIELD_BUDGET, 0u, RTS_SHIELD_TIMER_MIT, p.act);
        if (!p.run && run) {
            run = false;
            *sleep_ns = p.sleep_ns;
        }
    }
#else
    (void)sh;
    (void)now;
#endif
    return run;
}

rts_err rts_shield_task_next(rts_shield *sh, rts_rx_job *job, rts_shield_dec *dec)
{
    dec_clear(dec);
    if (!has(sh, RTS_SHIELD_RX_PATH)) return RTS_EINVAL;
#if RTS_CONFIG_RX_PATH
    rts_prio_inherit_change c;
    const rts_err e = rts_rx_driver_task_next(&sh->rx, job, &c);
    if (c != RTS_PRIO_INHERIT_UNCHANGED) {
        dec->flags |= RTS_SHIELD_F_PRIO;
        dec->task_prio = (uint8_t)rts_prio_inherit_current(&sh->rx.pi);
    }
    return e;
#else
    (void)job;
    return RTS_EINVAL;
#endif
}

rts_err rts_shield_task_done(rts_shield *sh, const rts_rx_job *job, rts_time_ns now,
                             rts_time_ns work_ns, uint32_t fill, uint16_t *refill,
                             rts_shield_dec *dec)
{
    dec_clear(dec);
    if (refill != NULL) *refill = RTS_BUF_NONE;
#if RTS_CONFIG_RX_PATH
    if (has(sh, RTS_SHIELD_RX_PATH)) {
        if (job == NULL) return RTS_EINVAL;
        if (rts_rx_driver_buf_free(&sh->rx, job->buf) != RTS_OK) return RTS_EINVAL;
        const rts_prio_inherit_change c = rts_rx_driver_task_complete(&sh->rx, job->prio);
        if (c != RTS_PRIO_INHERIT_UNCHANGED) {
            dec->flags |= RTS_SHIELD_F_PRIO;
            dec->task_prio = (uint8_t)rts_prio_inherit_current(&sh->rx.pi);
        }
        uint16_t b;
        if (refill != NULL && rts_rx_driver_task_refill(&sh->rx, &b) == RTS_OK) *refill = b;
        fill = rts_flow_queue_count(&sh->rx.fq, RTS_BUF_QUEUED);
    }
#else
    (void)job;
#endif
    sh->driver_fill = fill;
    fill_report(sh, fill);
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_BUDGET)) {
        emit(sh, dec, RTS_SHIELD_BUDGET, 0u, RTS_SHIELD_TIMER_MIT,
             rts_budget_mit_on_packet_done(&sh->budget, now, work_ns, fill));
    }
    if (has(sh, RTS_SHIELD_QUEUE)) {
        emit(sh, dec, RTS_SHIELD_QUEUE, 0u, RTS_SHIELD_TIMER_MIT,
             rts_queue_mit_on_packet_done(&sh->queue, now, work_ns, fill));
    }
#else
    (void)now;
    (void)work_ns;
#endif
    return RTS_OK;
}

uint32_t rts_shield_poll_begin(rts_shield *sh, rts_time_ns now)
{
#if RTS_CONFIG_RX_PATH
    if (!has(sh, RTS_SHIELD_RX_PATH)) return 0u;
    return rts_rx_driver_poll_begin(&sh->rx, now);
#else
    (void)sh;
    (void)now;
    return 0u;
#endif
}

void rts_shield_poll_end(rts_shield *sh, rts_time_ns now, rts_shield_dec *dec)
{
    dec_clear(dec);
#if RTS_CONFIG_RX_PATH
    if (!has(sh, RTS_SHIELD_RX_PATH)) return;
    emit(sh, dec, RTS_SHIELD_RX_PATH, 0u, RTS_SHIELD_TIMER_POLL, rts_rx_driver_poll_end(&sh->rx, now));
#else
    (void)sh;
    (void)now;
#endif
}

rts_detect_cycle_result rts_shield_cycle_end(rts_shield *sh, rts_time_ns start, rts_time_ns target,
                                      rts_time_ns now, rts_shield_dec *dec)
{
    dec_clear(dec);
    const rts_detect_cycle_result r = rts_detect_lateness_mon_cycle(&sh->detect.lateness, start, target, now);
    if (r.miss) sh->detect.late_cycles++;
#if RTS_CONFIG_MITIGATIONS
    if (has(sh, RTS_SHIELD_HYSTERESIS)) {
        emit(sh, dec, RTS_SHIELD_HYSTERESIS, 0u, RTS_SHIELD_TIMER_MIT,
             rts_hyst_mit_on_cycle_end(&sh->hyst, now, r.earliness_ns));
    }
    if (has(sh, RTS_SHIELD_BUDGET)) {
        emit(sh, dec, RTS_SHIELD_BUDGET, 0u, RTS_SHIELD_TIMER_MIT,
             rts_budget_mit_on_cycle_end(&sh->budget, now, r.earliness_ns));
    }
#endif
    return r;
}

void rts_shield_filter_arrival_isr(rts_shield *sh, rts_time_ns now, rts_time_ns *zero_at,
                                   rts_shield_dec *dec)
{
    dec_clear(dec);
    *zero_at = UINT64_MAX;
    if (!has(sh, RTS_SHIELD_COUNTDOWN)) {
        dec->flags |= RTS_SHIELD_F_DELIVER;
        return;
    }
#if RTS_CONFIG_LIMITERS
    const rts_action a = rts_countdown_on_arrival_isr(&sh->countdown, now);
    if (a.flags & RTS_ACT_ARM_TIMER) *zero_at = a.timer_at;
    if (a.flags & RTS_ACT_DROP) {
        count_drop(sh, dec, RTS_SHIELD_DROP_LIMITER);
        return;
    }
    if (a.flags & RTS_ACT_DELIVER) {
        dec->flags |= RTS_SHIELD_F_DELIVER;
        if (a.flags & RTS_ACT_ARM_TIMER) dec->flags |= RTS_SHIELD_F_LATCHED;
        return;
    }
    dec->flags |= RTS_SHIELD_F_LATCHED;
#else
    (void)now;
#endif
}

bool rts_shield_filter_zero_isr(rts_shield *sh, rts_time_ns now)
{
    if (!has(sh, RTS_SHIELD_COUNTDOWN)) return false;
#if RTS_CONFIG_LIMITERS
    return (rts_countdown_on_zero_isr(&sh->countdown, now).flags & RTS_ACT_DELIVER) != 0u;
#else
    (void)now;
    return false;
#endif
}

uint32_t rts_shield_hooks(const rts_shield *sh)
{
    uint32_t h = 0u;
    if (has(sh, RTS_SHIELD_BURST | RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY)) h |= RTS_SHIELD_HOOK_RX_ISR;
    if (has(sh, RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET | RTS_SHIELD_QUEUE)) h |= RTS_SHIELD_HOOK_TASK;
    if (has(sh, RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET)) h |= RTS_SHIELD_HOOK_REPORT;
    if (has(sh, RTS_SHIELD_STRICT | RTS_SHIELD_BURSTY) || (sh->detect.on & 1u)) h |= RTS_SHIELD_CALL_RX_IRQ;
    if (has(sh, RTS_SHIELD_BURST)) h |= RTS_SHIELD_CALL_RX_PACKET;
    if (has(sh, RTS_SHIELD_HYSTERESIS | RTS_SHIELD_BUDGET)) h |= RTS_SHIELD_CALL_TASK_POLL;
    if (has(sh, RTS_SHIELD_BUDGET | RTS_SHIELD_QUEUE | RTS_SHIELD_RX_PATH) || (sh->detect.on & 2u))
        h |= RTS_SHIELD_CALL_TASK_DONE;
    if (sh->detect.on & 2u) h |= RTS_SHIELD_CALL_FILL;
    if (has(sh, RTS_SHIELD_BUDGET) && sh->cfg.budget.charge_isr) h |= RTS_SHIELD_CALL_RX_DONE;
    return h;
}

void rts_shield_fill_isr(rts_shield *sh, uint32_t fill)
{
    fill_report(sh, fill);
}

uint32_t rts_shield_waiting(const rts_shield *sh)
{
#if RTS_CONFIG_RX_PATH
    return has(sh, RTS_SHIELD_RX_PATH) ? rts_flow_queue_count(&sh->rx.fq, RTS_BUF_QUEUED) : 0u;
#else
    (void)sh;
    return 0u;
#endif
}

unsigned rts_shield_task_prio(const rts_shield *sh)
{
#if RTS_CONFIG_RX_PATH
    if (has(sh, RTS_SHIELD_RX_PATH)) return rts_prio_inherit_current(&sh->rx.pi);
#endif
    return sh->cfg.task_base_prio;
}

uint32_t rts_shield_apply(const rts_port *port, rts_irq_gate *gate, const rts_shield_map *map,
                          const rts_shield_dec *dec)
{
    for (unsigned i = 0; i < dec->n_ops && i < RTS_SHIELD_MAX_OPS; i++) {
        const rts_shield_op *op = &dec->ops[i];
        if (op->source >= RTS_SHIELD_MAX_SOURCES || op->timer >= RTS_SHIELD_TIMERS) continue;
        const rts_port_target t = {map->rx_line[op->source], map->timer_hw[op->timer],
                                   map->timer_line[op->timer]};
        (void)rts_port_apply(port, gate, t, op->act);
    }
    return dec->flags;
}
