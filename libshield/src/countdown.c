/* Countdown filter, the hardware scheduler of Regehr & Duongsaa §3.4. */
#include "rtshield/rts_countdown.h"

#include "rts_time.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_LIMITERS

static rts_time_ns window(const rts_countdown *c)
{
    return (rts_time_ns)c->initial * c->tick_ns;
}

rts_err rts_countdown_init(rts_countdown *c, uint32_t tick_ns, uint32_t initial)
{
    if (c == NULL || tick_ns == 0u) {
        return RTS_EINVAL;
    }
    *c = (rts_countdown){.tick_ns = tick_ns, .initial = initial}; /* stopped, counters at 0 */
    return RTS_OK;
}

/* Bring the filter up to `now`: if the counter reached zero at or before
 * `now`, deliver the latched arrival (reload at the zero time) or stop.
 * After a delivery nothing is latched, so a second zero within the same
 * catch-up only stops the counter: no loop is needed.
 * Returns true when a latched arrival was delivered. */
static bool catch_up(rts_countdown *c, rts_time_ns now)
{
    if (!c->running || now < c->zero_at) {
        return false;
    }
    if (!c->latched) {
        c->running = false;
        return false;
    }
    c->latched = false;
    c->delivered++;
    c->zero_at = rts_time_add(c->zero_at, window(c));
    if (window(c) == 0u || now >= c->zero_at) {
        c->running = false;
    }
    return true;
}

rts_err rts_countdown_configure(rts_countdown *c, uint32_t tick_ns, uint32_t initial, rts_time_ns now)
{
    if (c == NULL || tick_ns == 0u) {
        return RTS_EINVAL;
    }
    (void)catch_up(c, now);
    if (c->running) {
        const rts_time_ns left = c->zero_at - now;
        const rts_time_ns value = left / c->tick_ns + (left % c->tick_ns != 0u ? 1u : 0u);
        c->zero_at = rts_time_add(now, rts_time_mul(value, tick_ns));
    }
    c->tick_ns = tick_ns;
    c->initial = initial;
    return RTS_OK;
}

rts_action rts_countdown_on_arrival_isr(rts_countdown *c, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    c->arrivals++;
    if (catch_up(c, now)) {
        /* The zero delivered the latched arrival and reloaded the counter
         * at its zero time: this arrival finds the counter running. */
        a.flags = RTS_ACT_DELIVER;
    }
    if (!c->running) {
        c->delivered++;
        a.flags |= RTS_ACT_DELIVER;
        if (c->initial != 0u) {
            c->running = true;
            c->zero_at = rts_time_add(now, window(c));
        }
        return a;
    }
    if (!c->latched) {
        c->latched = true;
        c->latches++;
        a.flags |= RTS_ACT_ARM_TIMER;
        a.timer_at = c->zero_at;
        return a;
    }
    c->lost++;
    a.flags |= RTS_ACT_DROP;
    return a;
}

rts_action rts_countdown_on_zero_isr(rts_countdown *c, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    if (catch_up(c, now)) {
        a.flags = RTS_ACT_DELIVER;
    }
    return a;
}

rts_time_ns rts_countdown_next_event_at(const rts_countdown *c)
{
    return c->running ? c->zero_at : UINT64_MAX;
}


uint64_t rts_countdown_max_irqs(uint32_t tick_ns, uint32_t initial, rts_time_ns delta_ns)
{
    /* a window of 0 (initial or tick 0) passes every arrival: ceil_div's "no bound" */
    return delta_ns == 0u ? 0u : rts_time_ceil_div(delta_ns, (rts_time_ns)tick_ns * initial);
}

#else /* RTS_CONFIG_LIMITERS == 0: compiled out (rts_opts.h) */
typedef int rts_countdown_compiled_out; /* ISO C: a translation unit declares something */
#endif
