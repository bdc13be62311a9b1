/* Budget Mitigation (Danicki et al. §2.2): the critical task's earliness is
 * the network driver's budget. */
#include "rtshield/rts_budget_mit.h"
#include "rtshield/rts_opts.h"
#include "rts_time.h"

#if RTS_CONFIG_MITIGATIONS

static int64_t clamp_u64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* a - b for b >= 0, saturating at INT64_MIN. */
static int64_t sat_sub(int64_t a, int64_t b)
{
    return a < INT64_MIN + b ? INT64_MIN : a - b;
}

static rts_action act_of(uint32_t flags)
{
    const rts_action a = {flags, 0u};
    return a;
}

void rts_budget_mit_cfg_default(rts_budget_mit_cfg *cfg)
{
    if (cfg == NULL) {
        return;
    }
    cfg->initial_budget_ns = 0;
    cfg->charge_isr = RTS_BUDGET_MIT_CHARGE_ISR_DEFAULT != 0;
    cfg->carry_overdraft = RTS_BUDGET_MIT_CARRY_OVERDRAFT_DEFAULT != 0;
}

rts_err rts_budget_mit_init(rts_budget_mit *m, const rts_budget_mit_cfg *cfg)
{
    if (m == NULL || cfg == NULL) {
        return RTS_EINVAL;
    }
    const int64_t budget = cfg->initial_budget_ns > 0 ? cfg->initial_budget_ns : 0;
    *m = (rts_budget_mit){.cfg = *cfg, .budget_ns = budget, .suspended = budget <= 0}; /* no debt */
    return RTS_OK;
}

rts_action rts_budget_mit_on_cycle_end(rts_budget_mit *m, rts_time_ns now, int64_t earliness_ns)
{
    (void)now;
    m->reports++;
    int64_t b = earliness_ns;
    if (m->cfg.carry_overdraft) {
        b = sat_sub(b, m->debt_ns);
        /* Debt the report could not cover stays owed. */
        m->debt_ns = b < 0 ? (b == INT64_MIN ? INT64_MAX : -b) : 0;
    }
    m->budget_ns = b;
    if (m->suspended && b > 0) {
        m->suspended = false;
        m->resumptions++;
        return act_of(RTS_ACT_RESUME_DRIVER | RTS_ACT_ENABLE_LINE);
    }
    if (!m->suspended && b <= 0) {
        m->suspended = true;
        m->suspensions++;
        return act_of(RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE);
    }
    return act_of(RTS_ACT_NONE);
}

rts_driver_poll rts_budget_mit_driver_poll(const rts_budget_mit *m, rts_time_ns now)
{
    (void)now;
    const rts_driver_poll p = {{RTS_ACT_NONE, 0u}, !m->suspended, 0u};
    return p;
}

static rts_action charge(rts_budget_mit *m, rts_time_ns work_ns)
{
    const int64_t w = clamp_u64(work_ns);
    const int64_t before = m->budget_ns;
    const int64_t after = sat_sub(before, w);
    /* The part of this work not covered by a positive budget. */
    const int64_t over = before >= 0 ? (after < 0 ? (after == INT64_MIN ? INT64_MAX : -after) : 0) : w;
    m->budget_ns = after;
    m->charged_ns = rts_time_add(m->charged_ns, work_ns);
    m->overdraft_ns = rts_time_add(m->overdraft_ns, (uint64_t)over);
    if (m->cfg.carry_overdraft) {
        m->debt_ns = m->debt_ns > INT64_MAX - over ? INT64_MAX : m->debt_ns + over;
    }
    if (!m->suspended && after <= 0) {
        m->suspended = true;
        m->suspensions++;
        return act_of(RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE);
    }
    return act_of(RTS_ACT_NONE);
}

rts_action rts_budget_mit_on_packet_done(rts_budget_mit *m, rts_time_ns now, rts_time_ns work_ns,
                                         uint32_t queue_fill)
{
    (void)now;
    (void)queue_fill;
    return charge(m, work_ns);
}

rts_action rts_budget_mit_on_isr_work_isr(rts_budget_mit *m, rts_time_ns now, rts_time_ns work_ns)
{
    (void)now;
    if (!m->cfg.charge_isr) {
        return act_of(RTS_ACT_NONE);
    }
    return charge(m, work_ns);
}

#else /* RTS_CONFIG_MITIGATIONS == 0: compiled out (rts_opts.h) */
typedef int rts_budget_mit_compiled_out; /* ISO C: a translation unit declares something */
#endif
