/* Global receive limit with an interrupt-to-polling switch (Behnke et al. §5.5). */
#include "rtshield/rts_global_limit.h"
#include "rtshield/rts_opts.h"
#include "rts_compiler.h"
#include "rts_time.h"

#if RTS_CONFIG_RX_PATH

rts_err rts_global_limit_init(rts_global_limit *g, uint32_t capacity, rts_time_ns period, rts_time_ns now)
{
    if (g == NULL || (capacity > 0u && period == 0u)) {
        return RTS_EINVAL;
    }
    *g = (rts_global_limit){
        .capacity = capacity, .period = period, .period_start = now, .mode = RTS_GLOBAL_LIMIT_IRQ};
    return RTS_OK;
}

/* Past the current period (or a clock behind period_start, whose elapsed
 * time wraps): start the period holding `now`. Compared as elapsed time, so a
 * period reaching past UINT64_MAX never wraps. Out of line, so that the
 * common case saves no registers for it. */
RTS_NOINLINE static void roll_slow(rts_global_limit *g, rts_time_ns now)
{
    if (g->capacity == 0u || g->period == 0u || now < g->period_start || now - g->period_start < g->period) {
        return;
    }
    g->period_start += ((now - g->period_start) / g->period) * g->period;
    g->count = 0u;
}

/* The common case, `now` inside the current period, costs one subtraction
 * and one compare. */
static void roll(rts_global_limit *g, rts_time_ns now)
{
    if (now - g->period_start >= g->period) {
        roll_slow(g, now);
    }
}

/* Start of the next period, saturating at the end of time. */
static rts_time_ns next_period(const rts_global_limit *g)
{
    return rts_time_add(g->period_start, g->period);
}

bool rts_global_limit_admit_isr(rts_global_limit *g, rts_time_ns now, rts_action *act)
{
    act->flags = RTS_ACT_NONE;
    act->timer_at = 0u;
    roll(g, now); /* changes nothing without a limit (capacity 0) */
    const uint32_t count = g->count;
    if (count >= g->capacity) {
        if (g->capacity == 0u) {
            return true; /* no global limit: nothing to decide */
        }
        g->refused++;
        return false;
    }
    g->count = count + 1u;
    if (count + 1u == g->capacity && g->mode == RTS_GLOBAL_LIMIT_IRQ) {
        g->mode = RTS_GLOBAL_LIMIT_POLL;
        g->to_poll++;
        act->flags = RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER;
        act->timer_at = next_period(g);
    }
    return true;
}

uint32_t rts_global_limit_poll_begin(rts_global_limit *g, rts_time_ns now)
{
    if (g->mode != RTS_GLOBAL_LIMIT_POLL) {
        return 0u;
    }
    roll(g, now);
    return g->capacity - g->count;
}

rts_action rts_global_limit_poll_end(rts_global_limit *g, rts_time_ns now)
{
    rts_action act = {RTS_ACT_NONE, 0u};
    if (g->mode != RTS_GLOBAL_LIMIT_POLL) {
        return act;
    }
    roll(g, now);
    if (g->count < g->capacity) {
        g->mode = RTS_GLOBAL_LIMIT_IRQ;
        g->to_irq++;
        act.flags = RTS_ACT_ENABLE_LINE;
    } else {
        act.flags = RTS_ACT_ARM_TIMER;
        act.timer_at = next_period(g);
    }
    return act;
}

unsigned rts_global_limit_mode_of(const rts_global_limit *g)
{
    return g->mode;
}


uint64_t rts_global_limit_max_packets(uint32_t capacity, rts_time_ns period_ns, rts_time_ns delta_ns)
{
    return rts_time_per_window(capacity, period_ns, delta_ns);
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_global_limit_compiled_out; /* ISO C: a translation unit declares something */
#endif
