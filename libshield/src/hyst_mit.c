/* Hysteresis Mitigation (Danicki et al. §2.2): the driver blocks networking
 * while the critical task's earliness is low. */
#include "rtshield/rts_hyst_mit.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_MITIGATIONS

/* Periods above 2^53 ns (104 days) are refused so that period * 1000 fits. */
#define HYST_MAX_PERIOD_NS ((rts_time_ns)1 << 53)

rts_err rts_hyst_mit_cfg_permille(rts_hyst_mit_cfg *cfg, rts_time_ns period_ns, uint32_t block_permille,
                                  uint32_t unblock_permille, rts_time_ns sleep_ns)
{
    if (cfg == NULL || period_ns == 0u || period_ns > HYST_MAX_PERIOD_NS || block_permille > unblock_permille ||
        unblock_permille > 1000u || sleep_ns == 0u) {
        return RTS_EINVAL;
    }
    cfg->block_below_ns = (int64_t)(period_ns * block_permille / 1000u);
    cfg->unblock_above_ns = (int64_t)(period_ns * unblock_permille / 1000u);
    cfg->sleep_ns = sleep_ns;
    return RTS_OK;
}

rts_err rts_hyst_mit_init(rts_hyst_mit *m, const rts_hyst_mit_cfg *cfg)
{
    if (m == NULL || cfg == NULL || cfg->block_below_ns > cfg->unblock_above_ns || cfg->sleep_ns == 0u) {
        return RTS_EINVAL;
    }
    *m = (rts_hyst_mit){.cfg = *cfg}; /* no report yet, not blocked */
    return RTS_OK;
}

rts_action rts_hyst_mit_on_cycle_end(rts_hyst_mit *m, rts_time_ns now, int64_t earliness_ns)
{
    (void)now;
    m->earliness_ns = earliness_ns;
    m->have_report = true;
    m->reports++;
    const rts_action none = {RTS_ACT_NONE, 0u};
    return none;
}

rts_driver_poll rts_hyst_mit_driver_poll(rts_hyst_mit *m, rts_time_ns now)
{
    (void)now;
    rts_driver_poll p = {{RTS_ACT_NONE, 0u}, true, 0u};
    if (!m->blocked) {
        if (m->have_report && m->earliness_ns < m->cfg.block_below_ns) {
            m->blocked = true;
            m->blocks++;
            p.act.flags = RTS_ACT_DISABLE_LINE;
            p.run = false;
            p.sleep_ns = m->cfg.sleep_ns;
        }
        return p;
    }
    if (m->earliness_ns > m->cfg.unblock_above_ns) {
        m->blocked = false;
        m->unblocks++;
        p.act.flags = RTS_ACT_ENABLE_LINE;
        return p;
    }
    p.run = false;
    p.sleep_ns = m->cfg.sleep_ns;
    return p;
}

#else /* RTS_CONFIG_MITIGATIONS == 0: compiled out (rts_opts.h) */
typedef int rts_hyst_mit_compiled_out; /* ISO C: a translation unit declares something */
#endif
