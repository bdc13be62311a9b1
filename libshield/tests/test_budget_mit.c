/* Budget Mitigation (Danicki et al. §2.2): earliness reports set the driver's
 * budget, measured driver work consumes it, exhaustion suspends networking
 * until a positive report. */
#include "rts_test.h"
#include "rtshield/rts_budget_mit.h"

enum { OP_REPORT, OP_PACKET, OP_ISR, OP_POLL };

typedef struct {
    const char *name;
    int op;
    int64_t arg;       /* earliness (REPORT) or work (PACKET, ISR) */
    uint32_t flags;    /* expected action (REPORT, PACKET, ISR) */
    int64_t budget;    /* expected budget after */
    bool suspended;    /* expected state after */
} budget_row;

static const uint32_t SUSPEND = RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE;
static const uint32_t RESUME = RTS_ACT_RESUME_DRIVER | RTS_ACT_ENABLE_LINE;

/* `m` initialised with `cfg`, then the `n` rows at `rows`, 100 ns apart. */
static void run_rows(rts_budget_mit *m, const rts_budget_mit_cfg *cfg, const budget_row *rows, size_t n)
{
    CHECK_EQ(rts_budget_mit_init(m, cfg), RTS_OK);
    rts_time_ns now = 0;
    for (size_t i = 0; i < n; i++) {
        ROW(rows[i].name);
        now += 100;
        rts_action a = {0, 0};
        switch (rows[i].op) {
        case OP_REPORT: a = rts_budget_mit_on_cycle_end(m, now, rows[i].arg); break;
        case OP_PACKET: a = rts_budget_mit_on_packet_done(m, now, (rts_time_ns)rows[i].arg, 7); break;
        case OP_ISR: a = rts_budget_mit_on_isr_work_isr(m, now, (rts_time_ns)rows[i].arg); break;
        default: {
            rts_driver_poll p = rts_budget_mit_driver_poll(m, now);
            CHECK_EQ(p.run, !rows[i].suspended);
            CHECK_EQ(p.sleep_ns, 0);
            a = p.act;
        }
        }
        CHECK_EQ(a.flags, rows[i].flags);
        CHECK_EQ(m->budget_ns, rows[i].budget);
        CHECK_EQ(m->suspended, rows[i].suspended);
    }
    ROW("after the last row");
}

/* Default: overdraft discarded (each report replaces the budget), ISR not charged. */
static void test_paper_defaults(void)
{
    static const budget_row rows[] = {
        {"initial budget 0: suspended", OP_POLL, 0, RTS_ACT_NONE, 0, true},
        {"report 5000: resume", OP_REPORT, 5000, RESUME, 5000, false},
        {"poll: run", OP_POLL, 0, RTS_ACT_NONE, 5000, false},
        {"packet 2000", OP_PACKET, 2000, RTS_ACT_NONE, 3000, false},
        {"ISR work not charged", OP_ISR, 2500, RTS_ACT_NONE, 3000, false},
        {"packet 3000 hits zero: suspend", OP_PACKET, 3000, SUSPEND, 0, true},
        {"poll: wait for resume", OP_POLL, 0, RTS_ACT_NONE, 0, true},
        {"report 4000 replaces", OP_REPORT, 4000, RESUME, 4000, false},
        {"report 6000 while running replaces, no action", OP_REPORT, 6000, RTS_ACT_NONE, 6000, false},
        {"packet 8000 mid-packet exhaustion: completes, overdraft 2000", OP_PACKET, 8000, SUSPEND, -2000, true},
        {"report 1000: overdraft discarded", OP_REPORT, 1000, RESUME, 1000, false},
        {"report -500 (late): suspend", OP_REPORT, -500, SUSPEND, -500, true},
        {"report 0: stays suspended", OP_REPORT, 0, RTS_ACT_NONE, 0, true},
        {"report 1: resume", OP_REPORT, 1, RESUME, 1, false},
    };
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    CHECK(!cfg.charge_isr);
    CHECK(!cfg.carry_overdraft);
    rts_budget_mit m;
    run_rows(&m, &cfg, RTS_ROWS(rows));
    CHECK_EQ(m.suspensions, 3);
    CHECK_EQ(m.resumptions, 4);
    CHECK_EQ(m.charged_ns, 13000);
    CHECK_EQ(m.overdraft_ns, 2000);
    CHECK_EQ(m.reports, 7);
}

/* carry_overdraft: the work beyond the budget is paid from the next reports. */
static void test_carry_overdraft(void)
{
    static const budget_row rows[] = {
        {"initial 4000: running", OP_POLL, 0, RTS_ACT_NONE, 4000, false},
        {"packet 6000: overdraft 2000", OP_PACKET, 6000, SUSPEND, -2000, true},
        {"report 1000 pays 1000 of the debt: still suspended", OP_REPORT, 1000, RTS_ACT_NONE, -1000, true},
        {"report 3000 pays the rest: resume with 2000", OP_REPORT, 3000, RESUME, 2000, false},
        {"report 3000: no debt left", OP_REPORT, 3000, RTS_ACT_NONE, 3000, false},
    };
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    cfg.carry_overdraft = true;
    cfg.initial_budget_ns = 4000;
    rts_budget_mit m;
    run_rows(&m, &cfg, RTS_ROWS(rows));
    CHECK_EQ(m.debt_ns, 0);
}

/* charge_isr: ISR work consumes the budget too and may suspend. */
static void test_charge_isr(void)
{
    static const budget_row rows[] = {
        {"initial 3000", OP_POLL, 0, RTS_ACT_NONE, 3000, false},
        {"ISR 1000 charged", OP_ISR, 1000, RTS_ACT_NONE, 2000, false},
        {"packet 1500", OP_PACKET, 1500, RTS_ACT_NONE, 500, false},
        {"ISR 500 exhausts: suspend", OP_ISR, 500, SUSPEND, 0, true},
        {"latched ISR while suspended: overdraft, no repeat", OP_ISR, 300, RTS_ACT_NONE, -300, true},
    };
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    cfg.charge_isr = true;
    cfg.initial_budget_ns = 3000;
    rts_budget_mit m;
    run_rows(&m, &cfg, RTS_ROWS(rows));
    CHECK_EQ(m.overdraft_ns, 300);
    CHECK_EQ(m.suspensions, 1);
}

static void test_extremes(void)
{
    rts_budget_mit m;
    CHECK_EQ(rts_budget_mit_init(NULL, NULL), RTS_EINVAL);
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    cfg.initial_budget_ns = -5;
    CHECK_EQ(rts_budget_mit_init(&m, &cfg), RTS_OK);
    CHECK(m.suspended);
    CHECK_EQ(m.budget_ns, 0);
    /* Huge work and extreme reports saturate instead of wrapping. */
    rts_budget_mit_on_cycle_end(&m, 0, INT64_MAX);
    CHECK_EQ(rts_budget_mit_on_packet_done(&m, 0, UINT64_MAX, 0).flags, SUSPEND);
    CHECK(m.budget_ns <= 0);
    rts_budget_mit_on_cycle_end(&m, 0, INT64_MIN);
    CHECK(m.suspended);
    cfg.carry_overdraft = true;
    cfg.initial_budget_ns = 1;
    rts_budget_mit_init(&m, &cfg);
    rts_budget_mit_on_packet_done(&m, 0, UINT64_MAX, 0);
    CHECK_EQ(m.debt_ns, INT64_MAX - 1); /* work clamped to INT64_MAX, minus the budget of 1 */
    rts_budget_mit_on_cycle_end(&m, 0, INT64_MIN);
    CHECK(m.suspended);
    CHECK(m.debt_ns > 0);
}

int main(void)
{
    RTS_RUN(test_paper_defaults);
    RTS_RUN(test_carry_overdraft);
    RTS_RUN(test_charge_isr);
    RTS_RUN(test_extremes);
    return rts_test_end();
}
