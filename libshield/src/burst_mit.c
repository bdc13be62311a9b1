/* Burst Mitigation (Danicki et al. §2.2): a packet capacity per time slice. */
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_opts.h"
#include "rts_compiler.h"
#include "rts_time.h"

#if RTS_CONFIG_MITIGATIONS

void rts_burst_mit_cfg_default(rts_burst_mit_cfg *cfg)
{
    if (cfg == NULL) {
        return;
    }
    cfg->slice_ns = (rts_time_ns)RTS_BURST_MIT_SLICE_NS_DEFAULT;
    cfg->capacity = (uint32_t)RTS_BURST_MIT_CAPACITY_DEFAULT;
    cfg->aligned = RTS_BURST_MIT_ALIGNED_DEFAULT != 0;
}

rts_err rts_burst_mit_init(rts_burst_mit *m, const rts_burst_mit_cfg *cfg)
{
    if (m == NULL || cfg == NULL || cfg->slice_ns == 0u || cfg->capacity == 0u) {
        return RTS_EINVAL;
    }
    *m = (rts_burst_mit){.cfg = *cfg}; /* no slice started, counters at 0 */
    return RTS_OK;
}

/* Start a new slice if the current one has run out at `now`. Out of line,
 * so that the common case (inside the open slice) makes no call. */
RTS_NOINLINE static void maybe_new_slice(rts_burst_mit *m, rts_time_ns now)
{
    if (!m->started) {
        m->started = true;
        m->slice_start = now;
        m->count = 0u;
        m->slices++;
        return;
    }
    if (now < m->slice_start || now - m->slice_start < m->cfg.slice_ns) {
        return; /* still inside (a clock that steps back stays in the slice) */
    }
    if (m->cfg.aligned) {
        const rts_time_ns elapsed = now - m->slice_start;
        m->slice_start += elapsed - elapsed % m->cfg.slice_ns;
    } else {
        m->slice_start = now;
    }
    m->count = 0u;
    m->slices++;
}

static rts_time_ns next_slice_start(const rts_burst_mit *m)
{
    return rts_time_add(m->slice_start, m->cfg.slice_ns); /* saturates at the end of time */
}

rts_action rts_burst_mit_on_rx_isr(rts_burst_mit *m, rts_time_ns now)
{
    rts_action act = {RTS_ACT_NONE, 0u};
    /* Inside the open slice (the common case: one subtraction and one
     * compare); anything else, a clock behind slice_start included (its
     * elapsed time wraps), goes through maybe_new_slice(). */
    if (!m->started || now - m->slice_start >= m->cfg.slice_ns) {
        maybe_new_slice(m, now);
    }
    if (m->count >= m->cfg.capacity) {
        /* The line should be off already: this arrival was latched before the
         * disable took effect, or the port ignored the disable. */
        m->dropped++;
        act.flags = RTS_ACT_DROP | RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER;
        m->reenable_at = next_slice_start(m);
        act.timer_at = m->reenable_at;
        if (!m->line_off) {
            m->line_off = true;
            m->disables++;
        }
        return act;
    }
    m->count++;
    m->accepted++;
    if (m->count == m->cfg.capacity) {
        m->line_off = true;
        m->disables++;
        m->reenable_at = next_slice_start(m);
        act.flags = RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER;
        act.timer_at = m->reenable_at;
    }
    return act;
}

rts_action rts_burst_mit_on_timer_isr(rts_burst_mit *m, rts_time_ns now)
{
    rts_action act = {RTS_ACT_NONE, 0u};
    if (m->line_off && now >= m->reenable_at) {
        m->line_off = false;
        act.flags = RTS_ACT_ENABLE_LINE;
    }
    return act;
}


uint64_t rts_burst_mit_max_packets(uint32_t capacity, rts_time_ns slice_ns, rts_time_ns delta_ns)
{
    return rts_time_per_window(capacity, slice_ns, delta_ns);
}

#else /* RTS_CONFIG_MITIGATIONS == 0: compiled out (rts_opts.h) */
typedef int rts_burst_mit_compiled_out; /* ISO C: a translation unit declares something */
#endif
