/* Bursty interrupt limiter with a shared periodic timer
 * (Regehr & Duongsaa §3.3, §3.5). */
#include "rtshield/rts_bursty.h"

#include "rts_time.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_LIMITERS

RTS_STATIC_ASSERT(RTS_BURSTY_MAX_SOURCES <= 32, "the re-enable mask is one uint32_t");

rts_err rts_bursty_init(rts_bursty *b, rts_time_ns period_ns, rts_bursty_mode mode)
{
    if (b == NULL || period_ns == 0u ||
        (mode != RTS_BURSTY_TIMER_PERIODIC && mode != RTS_BURSTY_TIMER_LAZY)) {
        return RTS_EINVAL;
    }
    /* No source, no line held off, counters at 0. */
    *b = (rts_bursty){.period_ns = period_ns, .next_tick = period_ns, .mode = mode};
    return RTS_OK;
}

rts_err rts_bursty_add_source(rts_bursty *b, uint32_t burst, uint32_t *id_out)
{
    if (b == NULL || burst == 0u) {
        return RTS_EINVAL;
    }
    if (b->n_sources >= RTS_BURSTY_MAX_SOURCES) {
        return RTS_EFULL;
    }
    const uint32_t id = b->n_sources;
    b->src[id] = (rts_bursty_source){.burst = burst};
    b->n_sources = id + 1u;
    if (id_out != NULL) {
        *id_out = id;
    }
    return RTS_OK;
}

rts_err rts_bursty_set_burst(rts_bursty *b, uint32_t id, uint32_t burst)
{
    if (b == NULL || burst == 0u) {
        return RTS_EINVAL;
    }
    if (id >= b->n_sources) {
        return RTS_ENOENT;
    }
    b->src[id].burst = burst;
    return RTS_OK;
}

/* The first phase point t0 + k*period (k >= 1) strictly after `now`,
 * remembered in next_tick. The common cases (the tick that was due, or a
 * timer still ahead) need no division. */
static rts_time_ns phase_after(rts_bursty *b, rts_time_ns now)
{
    const rts_time_ns first = rts_time_add(b->t0, b->period_ns);
    if (now < first) {
        b->next_tick = first;
    } else if (now < b->next_tick && b->next_tick - now <= b->period_ns) {
        /* still ahead and within one period: it is the next phase point */
    } else if (now >= b->next_tick && now - b->next_tick < b->period_ns) {
        b->next_tick = rts_time_add(b->next_tick, b->period_ns);
    } else {
        b->next_tick = rts_time_add(b->t0, rts_time_mul((now - b->t0) / b->period_ns + 1u, b->period_ns));
    }
    return b->next_tick;
}

/* Lazy mode: the timer interrupt goes on, its stale pending bit cleared
 * first (§3.3), and the timer is (re)armed at the next phase point. */
static uint32_t lazy_timer_on(rts_bursty *b, rts_action *a, rts_time_ns now)
{
    b->timer_irq_on = true;
    b->timer_enables++;
    a->timer_at = phase_after(b, now);
    return RTS_ACT_ARM_TIMER | RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_ENABLE_TIMER_IRQ;
}

rts_action rts_bursty_start(rts_bursty *b, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    b->t0 = now;
    b->next_tick = rts_time_add(now, b->period_ns);
    if (b->mode == RTS_BURSTY_TIMER_PERIODIC) {
        b->timer_irq_on = true;
        a.flags = RTS_ACT_ARM_TIMER | RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_ENABLE_TIMER_IRQ;
        a.timer_at = b->next_tick;
    } else if (b->disabled_mask != 0u) {
        a.flags = lazy_timer_on(b, &a, now);
    } else {
        b->timer_irq_on = false;
        a.flags = RTS_ACT_ARM_TIMER | RTS_ACT_DISABLE_TIMER_IRQ;
        a.timer_at = b->next_tick;
    }
    return a;
}

rts_action rts_bursty_on_irq_isr(rts_bursty *b, uint32_t id, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    if (id >= b->n_sources) {
        b->port_errors++;
        a.flags = RTS_ACT_DELIVER;
        return a;
    }
    rts_bursty_source *s = &b->src[id];
    if (((b->disabled_mask >> id) & 1u) != 0u) {
        b->port_errors++;
        a.flags = RTS_ACT_DROP | RTS_ACT_DISABLE_LINE;
        return a;
    }
    s->admitted++;
    if (s->count < UINT32_MAX) {
        s->count++;
    }
    a.flags = RTS_ACT_DELIVER;
    if (s->count >= s->burst) {
        b->disabled_mask |= 1u << id;
        s->disables++;
        a.flags |= RTS_ACT_DISABLE_LINE;
        if (b->mode == RTS_BURSTY_TIMER_LAZY && !b->timer_irq_on) {
            a.flags |= lazy_timer_on(b, &a, now);
        }
    }
    return a;
}

rts_action rts_bursty_on_tick_isr(rts_bursty *b, rts_time_ns now, uint32_t *reenable_out)
{
    rts_action a = {RTS_ACT_ARM_TIMER, 0u};
    const uint32_t mask = b->disabled_mask;
    const uint32_t n = b->n_sources <= RTS_BURSTY_MAX_SOURCES ? b->n_sources : RTS_BURSTY_MAX_SOURCES;
    for (uint32_t i = 0; i < n; i++) {
        b->src[i].count = 0u;
    }
    b->disabled_mask = 0u;
    b->ticks++;
    a.timer_at = phase_after(b, now);
    if (b->mode == RTS_BURSTY_TIMER_LAZY && mask == 0u) {
        b->timer_irq_on = false;
        a.flags |= RTS_ACT_DISABLE_TIMER_IRQ;
    }
    if (reenable_out != NULL) {
        *reenable_out = mask;
    }
    return a;
}

uint32_t rts_bursty_on_tick_apply_isr(rts_bursty *b, rts_time_ns now, const rts_port *port,
                                      rts_irq_gate *gate, const rts_port_target *targets)
{
    uint32_t mask = 0u;
    const rts_action t = rts_bursty_on_tick_isr(b, now, &mask);
    (void)rts_port_apply(port, gate, targets[0], t);
    const rts_action en = {RTS_ACT_ENABLE_LINE, 0u};
    const uint32_t n = b->n_sources <= RTS_BURSTY_MAX_SOURCES ? b->n_sources : RTS_BURSTY_MAX_SOURCES;
    for (uint32_t i = 0; i < n; i++) {
        if ((mask & (1u << i)) != 0u) {
            (void)rts_port_apply(port, gate, targets[i], en);
        }
    }
    return mask;
}

/* ceil(a / b) without overflow, b >= 1. */
static uint32_t div_ceil_u32(uint32_t a, uint32_t b)
{
    return a / b + (a % b != 0u ? 1u : 0u);
}

rts_err rts_bursty_burst_sizes(const uint32_t *rates_hz, uint32_t n, uint32_t timer_hz,
                               uint32_t *bursts_out, uint32_t *max_rates_out)
{
    if (rates_hz == NULL || bursts_out == NULL || n == 0u || timer_hz == 0u) {
        return RTS_EINVAL;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (rates_hz[i] == 0u) {
            return RTS_EINVAL;
        }
        const uint64_t admitted = (uint64_t)div_ceil_u32(rates_hz[i], timer_hz) * timer_hz;
        if (admitted > UINT32_MAX) {
            return RTS_EINVAL;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t burst = div_ceil_u32(rates_hz[i], timer_hz);
        bursts_out[i] = burst;
        if (max_rates_out != NULL) {
            max_rates_out[i] = burst * timer_hz;
        }
    }
    return RTS_OK;
}

rts_err rts_bursty_burst_for_period(uint32_t rate_hz, rts_time_ns period_ns, uint32_t *burst_out)
{
    if (burst_out == NULL || rate_hz == 0u || period_ns == 0u) {
        return RTS_EINVAL;
    }
    /* ceil(rate * period / 1e9) without overflow: split the period into
     * whole seconds and the rest (rate < 2^32, rest < 1e9 < 2^30). */
    const uint64_t ns_per_s = 1000000000u;
    const uint64_t secs = period_ns / ns_per_s;
    const uint64_t rest = period_ns % ns_per_s;
    if (secs > (uint64_t)UINT32_MAX) {
        return RTS_EINVAL;
    }
    const uint64_t whole = (uint64_t)rate_hz * secs;
    const uint64_t part = (uint64_t)rate_hz * rest;
    const uint64_t burst = whole + part / ns_per_s + (part % ns_per_s != 0u ? 1u : 0u);
    if (burst > UINT32_MAX) {
        return RTS_EINVAL;
    }
    *burst_out = burst == 0u ? 1u : (uint32_t)burst;
    return RTS_OK;
}

rts_err rts_bursty_pick_timer_hz(const uint32_t *rates_hz, uint32_t n, uint32_t max_burst,
                                 const uint32_t *candidates_hz, uint32_t n_candidates,
                                 uint32_t *timer_hz_out)
{
    if (rates_hz == NULL || timer_hz_out == NULL || n == 0u || max_burst == 0u) {
        return RTS_EINVAL;
    }
    uint32_t max_rate = 0u;
    for (uint32_t i = 0; i < n; i++) {
        if (rates_hz[i] == 0u) {
            return RTS_EINVAL;
        }
        if (rates_hz[i] > max_rate) {
            max_rate = rates_hz[i];
        }
    }
    /* ceil(r / f) <= B  <=>  r <= B*f  <=>  f >= ceil(r / B): the bound is
     * set by the fastest source alone. */
    const uint32_t lowest = div_ceil_u32(max_rate, max_burst);
    if (candidates_hz == NULL || n_candidates == 0u) {
        *timer_hz_out = lowest;
        return RTS_OK;
    }
    uint32_t best = 0u;
    for (uint32_t j = 0; j < n_candidates; j++) {
        if (candidates_hz[j] == 0u) {
            return RTS_EINVAL;
        }
        if (candidates_hz[j] >= lowest && (best == 0u || candidates_hz[j] < best)) {
            best = candidates_hz[j];
        }
    }
    if (best == 0u) {
        return RTS_ENOENT;
    }
    *timer_hz_out = best;
    return RTS_OK;
}


uint64_t rts_bursty_max_irqs(uint32_t burst, rts_time_ns period_ns, rts_time_ns delta_ns)
{
    return rts_time_per_window(burst, period_ns, delta_ns);
}

#else /* RTS_CONFIG_LIMITERS == 0: compiled out (rts_opts.h) */
typedef int rts_bursty_compiled_out; /* ISO C: a translation unit declares something */
#endif
