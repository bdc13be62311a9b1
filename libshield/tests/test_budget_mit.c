/* Budget Mitigation (Danicki et al. §2.2): earliness reports set the driver's
 * budget, measured driver work consumes it, exhaustion suspends networking
 * until a positive report (vectors/budget_mit.toml). */
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
} budget_mit_row;

static const uint32_t SUSPEND = RTS_ACT_SUSPEND_DRIVER | RTS_ACT_DISABLE_LINE;

typedef struct {
    RTS_VECTOR_TABLE(budget_mit_row, rts_budget_mit);
    /* overrides of rts_budget_mit_cfg_default(), each where has_ is true */
    int64_t initial_budget_ns;
    bool charge_isr, carry_overdraft;
    bool has_initial_budget_ns, has_charge_isr, has_carry_overdraft;
} budget_mit_table;

#include "vectors_budget_mit.h"

/* `m` initialised with the defaults and the table's overrides, then its
 * rows, 100 ns apart. */
static void run(const budget_mit_table *t)
{
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    if (t->has_initial_budget_ns) cfg.initial_budget_ns = t->initial_budget_ns;
    if (t->has_charge_isr) cfg.charge_isr = t->charge_isr;
    if (t->has_carry_overdraft) cfg.carry_overdraft = t->carry_overdraft;
    rts_budget_mit m;
    CHECK_EQ(rts_budget_mit_init(&m, &cfg), RTS_OK);
    rts_time_ns now = 0;
    for (size_t i = 0; i < t->n; i++) {
        const budget_mit_row *r = &t->rows[i];
        ROW(r->name);
        now += 100;
        rts_action a = {0, 0};
        switch (r->op) {
        case OP_REPORT: a = rts_budget_mit_on_cycle_end(&m, now, r->arg); break;
        case OP_PACKET: a = rts_budget_mit_on_packet_done(&m, now, (rts_time_ns)r->arg, 7); break;
        case OP_ISR: a = rts_budget_mit_on_isr_work_isr(&m, now, (rts_time_ns)r->arg); break;
        default: {
            rts_driver_poll p = rts_budget_mit_driver_poll(&m, now);
            CHECK_EQ(p.run, !r->suspended);
            CHECK_EQ(p.sleep_ns, 0);
            a = p.act;
        }
        }
        CHECK_EQ(a.flags, r->flags);
        CHECK_EQ(m.budget_ns, r->budget);
        CHECK_EQ(m.suspended, r->suspended);
    }
    ROW("after the last row");
    if (t->after) t->after(&m);
}

/* Default: overdraft discarded (each report replaces the budget), ISR not charged. */
static void test_paper_defaults(void)
{
    rts_budget_mit_cfg cfg;
    rts_budget_mit_cfg_default(&cfg);
    CHECK(!cfg.charge_isr);
    CHECK(!cfg.carry_overdraft);
    run(&vec_budget_mit_paper_defaults);
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
    RTS_RUN_TABLE(run, vec_budget_mit_carry_overdraft);
    RTS_RUN_TABLE(run, vec_budget_mit_charge_isr);
    RTS_RUN(test_extremes);
    return rts_test_end();
}
