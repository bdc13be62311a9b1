/* Deferrable server (Behnke et al. §2.4). */
#include "rtshield/rts_dserver.h"
#include "rtshield/rts_opts.h"
#include "rts_time.h"

#if RTS_CONFIG_RX_PATH

rts_err rts_dserver_init(rts_dserver *s, uint64_t budget, rts_time_ns period_ns, rts_time_ns start)
{
    if (s == NULL || period_ns == 0u) {
        return RTS_EINVAL;
    }
    *s = (rts_dserver){
        .budget = budget, .period_ns = period_ns, .period_start = start, .remaining = budget};
    return RTS_OK;
}

void rts_dserver_update(rts_dserver *s, rts_time_ns now)
{
    if (now < s->period_start) {
        return;
    }
    const rts_time_ns elapsed = now - s->period_start;
    if (elapsed < s->period_ns) {
        return;
    }
    /* Jump over every missed period at once: start + k p <= now. */
    s->period_start += elapsed - elapsed % s->period_ns;
    s->remaining = s->budget;
}

bool rts_dserver_can_serve(rts_dserver *s, rts_time_ns now, uint64_t cost)
{
    rts_dserver_update(s, now);
    return cost <= s->remaining;
}

rts_err rts_dserver_consume(rts_dserver *s, rts_time_ns now, uint64_t used)
{
    if (s == NULL) {
        return RTS_EINVAL;
    }
    rts_dserver_update(s, now);
    if (used > s->remaining) {
        s->remaining = 0u;
        s->overruns++;
        return RTS_ELIMIT;
    }
    s->remaining -= used;
    return RTS_OK;
}

uint64_t rts_dserver_remaining(rts_dserver *s, rts_time_ns now)
{
    rts_dserver_update(s, now);
    return s->remaining;
}

rts_time_ns rts_dserver_next_replenish(rts_dserver *s, rts_time_ns now)
{
    rts_dserver_update(s, now);
    return rts_time_add(s->period_start, s->period_ns);
}

uint64_t rts_dserver_dbf(uint64_t budget, uint64_t period_ns, uint64_t delta_ns)
{
    if (delta_ns == 0u || budget == 0u) {
        return 0u;
    }
    if (period_ns == 0u) {
        return UINT64_MAX;
    }
    const uint64_t q = delta_ns / period_ns;
    if (q > UINT64_MAX - 2u) {
        return UINT64_MAX;
    }
    const uint64_t n = q + (delta_ns % period_ns != 0u ? 1u : 0u) + 1u; /* ⌈Δ/p⌉ + 1 */
    if (n > UINT64_MAX / budget) {
        return UINT64_MAX;
    }
    return budget * n;
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_dserver_compiled_out; /* ISO C: a translation unit declares something */
#endif
