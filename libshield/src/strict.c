/* Strict interrupt limiter (Regehr & Duongsaa §3.2). */
#include "rtshield/rts_strict.h"

#include "rts_time.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_LIMITERS

rts_err rts_strict_init(rts_strict *s, rts_time_ns t_min_ns)
{
    if (s == NULL || t_min_ns == 0u) {
        return RTS_EINVAL;
    }
    *s = (rts_strict){.t_min_ns = t_min_ns}; /* not armed, counters at 0 */
    return RTS_OK;
}

rts_err rts_strict_set_t_min(rts_strict *s, rts_time_ns t_min_ns)
{
    if (s == NULL || t_min_ns == 0u) {
        return RTS_EINVAL;
    }
    s->t_min_ns = t_min_ns;
    return RTS_OK;
}

rts_action rts_strict_on_irq_isr(rts_strict *s, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    if (s->armed) {
        /* The line should be off: re-assert the disable, keep the timer. */
        s->port_errors++;
        a.flags = RTS_ACT_DROP | RTS_ACT_DISABLE_LINE;
        return a;
    }
    s->armed = true;
    s->timer_at = rts_time_add(now, s->t_min_ns);
    s->admitted++;
    a.flags = RTS_ACT_DELIVER | RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER;
    a.timer_at = s->timer_at;
    return a;
}

rts_action rts_strict_on_timer_isr(rts_strict *s, rts_time_ns now)
{
    rts_action a = {RTS_ACT_NONE, 0u};
    if (!s->armed) {
        s->port_errors++;
        return a;
    }
    if (now < s->timer_at) {
        s->port_errors++;
        a.flags = RTS_ACT_ARM_TIMER;
        a.timer_at = s->timer_at;
        return a;
    }
    s->armed = false;
    s->expiries++;
    a.flags = RTS_ACT_ENABLE_LINE;
    return a;
}


uint64_t rts_strict_max_irqs(rts_time_ns t_min_ns, rts_time_ns delta_ns)
{
    return delta_ns == 0u ? 0u : rts_time_ceil_div(delta_ns, t_min_ns);
}

#else /* RTS_CONFIG_LIMITERS == 0: compiled out (rts_opts.h) */
typedef int rts_strict_compiled_out; /* ISO C: a translation unit declares something */
#endif
