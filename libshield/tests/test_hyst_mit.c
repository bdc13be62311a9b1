/* Hysteresis Mitigation (Danicki et al. §2.2): the critical task's report
 * only records earliness; the driver's poll blocks below the block threshold
 * and unblocks above the unblock threshold. */
#include "rts_test.h"
#include "rtshield/rts_hyst_mit.h"

enum { OP_REPORT, OP_POLL };

typedef struct {
    const char *name;
    int op;
    int64_t earliness_ns; /* OP_REPORT */
    bool run;             /* OP_POLL: expected */
    uint32_t flags;       /* OP_POLL: expected act */
    rts_time_ns sleep_ns; /* OP_POLL: expected */
} hyst_row;

#define MS 1000000LL

static void test_study_thresholds(void)
{
    /* 10 ms period, block below 10 %, unblock above 50 % (Danicki §3). */
    static const hyst_row rows[] = {
        {"no report yet: run", OP_POLL, 0, true, RTS_ACT_NONE, 0},
        {"report 3 ms", OP_REPORT, 3 * MS, false, 0, 0},
        {"poll: run", OP_POLL, 0, true, RTS_ACT_NONE, 0},
        {"report exactly 1 ms (not below)", OP_REPORT, 1 * MS, false, 0, 0},
        {"poll: still runs", OP_POLL, 0, true, RTS_ACT_NONE, 0},
        {"report 0.9 ms (< 10 %)", OP_REPORT, 9 * MS / 10, false, 0, 0},
        {"poll: blocks, disables RX, sleeps", OP_POLL, 0, false, RTS_ACT_DISABLE_LINE, 200000},
        {"poll: still blocked, no second disable", OP_POLL, 0, false, RTS_ACT_NONE, 200000},
        {"report 4 ms (between thresholds)", OP_REPORT, 4 * MS, false, 0, 0},
        {"poll: stays blocked", OP_POLL, 0, false, RTS_ACT_NONE, 200000},
        {"report exactly 5 ms (not above)", OP_REPORT, 5 * MS, false, 0, 0},
        {"poll: stays blocked at the threshold", OP_POLL, 0, false, RTS_ACT_NONE, 200000},
        {"report 5.001 ms", OP_REPORT, 5 * MS + 1000, false, 0, 0},
        {"poll: unblocks, enables RX", OP_POLL, 0, true, RTS_ACT_ENABLE_LINE, 0},
        {"poll: runs", OP_POLL, 0, true, RTS_ACT_NONE, 0},
        {"report 2 ms (between: running stays running)", OP_REPORT, 2 * MS, false, 0, 0},
        {"poll: runs", OP_POLL, 0, true, RTS_ACT_NONE, 0},
        {"report late by 2 ms", OP_REPORT, -2 * MS, false, 0, 0},
        {"poll: blocks", OP_POLL, 0, false, RTS_ACT_DISABLE_LINE, 200000},
    };
    rts_hyst_mit_cfg cfg;
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 100, 500, 200000), RTS_OK);
    CHECK_EQ(cfg.block_below_ns, 1 * MS);
    CHECK_EQ(cfg.unblock_above_ns, 5 * MS);
    rts_hyst_mit m;
    CHECK_EQ(rts_hyst_mit_init(&m, &cfg), RTS_OK);
    rts_time_ns now = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        now += 1000;
        if (rows[i].op == OP_REPORT) {
            const bool blocked_before = m.blocked;
            rts_action a = rts_hyst_mit_on_cycle_end(&m, now, rows[i].earliness_ns);
            CHECK_EQ(a.flags, RTS_ACT_NONE);
            CHECK_EQ(m.blocked, blocked_before); /* the report decides nothing */
        } else {
            rts_driver_poll p = rts_hyst_mit_driver_poll(&m, now);
            CHECK_EQ(p.run, rows[i].run);
            CHECK_EQ(p.act.flags, rows[i].flags);
            CHECK_EQ(p.sleep_ns, rows[i].sleep_ns);
            CHECK_EQ(m.blocked, !rows[i].run);
        }
    }
    CHECK_EQ(m.blocks, 2);
    CHECK_EQ(m.unblocks, 1);
    CHECK_EQ(m.reports, 8);
}

/* A flood that starves the driver defeats the mitigation (Danicki §3): low
 * reports without a driver poll never disable the line. */
static void test_starved_driver_never_blocks(void)
{
    rts_hyst_mit_cfg cfg;
    rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 100, 500, 100000);
    rts_hyst_mit m;
    rts_hyst_mit_init(&m, &cfg);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(rts_hyst_mit_on_cycle_end(&m, (rts_time_ns)i * 10 * MS, -50 * MS).flags, RTS_ACT_NONE);
    }
    CHECK(!m.blocked);
    CHECK_EQ(m.blocks, 0);
    /* The first poll the driver gets reacts to the latest report. */
    rts_driver_poll p = rts_hyst_mit_driver_poll(&m, 1000 * MS);
    CHECK(!p.run);
    CHECK_EQ(p.act.flags, RTS_ACT_DISABLE_LINE);
}

static void test_config_errors(void)
{
    rts_hyst_mit_cfg cfg;
    CHECK_EQ(rts_hyst_mit_cfg_permille(NULL, 10, 1, 2, 1), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 0, 100, 500, 1), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 600, 500, 1), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 100, 1001, 1), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 100, 500, 0), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, ((rts_time_ns)1 << 53) + 1, 100, 500, 1), RTS_EINVAL);
    CHECK_EQ(rts_hyst_mit_cfg_permille(&cfg, 10 * MS, 500, 500, 1), RTS_OK); /* no band: allowed */
    rts_hyst_mit m;
    CHECK_EQ(rts_hyst_mit_init(&m, NULL), RTS_EINVAL);
    const rts_hyst_mit_cfg inverted = {.block_below_ns = 5, .unblock_above_ns = 4, .sleep_ns = 1};
    CHECK_EQ(rts_hyst_mit_init(&m, &inverted), RTS_EINVAL);
    const rts_hyst_mit_cfg nosleep = {.block_below_ns = 1, .unblock_above_ns = 4, .sleep_ns = 0};
    CHECK_EQ(rts_hyst_mit_init(&m, &nosleep), RTS_EINVAL);
    /* Thresholds in ns work directly, including negative ones (tolerate lateness). */
    const rts_hyst_mit_cfg neg = {.block_below_ns = -2 * MS, .unblock_above_ns = 0, .sleep_ns = 5};
    CHECK_EQ(rts_hyst_mit_init(&m, &neg), RTS_OK);
    rts_hyst_mit_on_cycle_end(&m, 0, -1 * MS);
    CHECK(rts_hyst_mit_driver_poll(&m, 0).run);
    rts_hyst_mit_on_cycle_end(&m, 0, -3 * MS);
    CHECK(!rts_hyst_mit_driver_poll(&m, 0).run);
    rts_hyst_mit_on_cycle_end(&m, 0, 1);
    CHECK(rts_hyst_mit_driver_poll(&m, 0).run);
}

int main(void)
{
    RTS_RUN(test_study_thresholds);
    RTS_RUN(test_starved_driver_never_blocks);
    RTS_RUN(test_config_errors);
    return rts_test_end();
}
