/* Detection metrics (Danicki et al. §2.1): cycle lateness/earliness in ppm of
 * the target duration, per-bin accumulated lateness, interrupt count per
 * slice, queue fill watermarks (vectors/detect.toml). */
#include "rts_test.h"
#include "rtshield/rts_detect.h"

#define MS 1000000ULL

typedef struct {
    const char *name;
    rts_time_ns start, target, finish;
    int64_t earliness;
    uint64_t lateness_ppm;
    bool miss;
} cycle_row;

static void test_cycle_eval(void)
{
    static const cycle_row rows[] = {
        {"early by 6 ms", 0, 10 * MS, 4 * MS, (int64_t)(6 * MS), 0, false},
        {"exactly on target", 0, 10 * MS, 10 * MS, 0, 0, false},
        {"twice as long: 100 %", 0, 10 * MS, 20 * MS, -(int64_t)(10 * MS), 1000000, true},
        {"8 % late", 0, 10 * MS, 10800 * 1000ULL, -800000, 80000, true},
        {"500 %, started at 5 ms", 5 * MS, 15 * MS, 65 * MS, -(int64_t)(50 * MS), 5000000, true},
        {"1 ns late of 3: floor(10^6/3)", 0, 3, 4, -1, 333333, true},
        {"finish before start counts as early", 100, 200, 50, 150, 0, false},
        {"no target duration: all zero", 10, 10, 20, 0, 0, false},
        {"target before start: all zero", 10, 5, 20, 0, 0, false},
        {"huge lateness saturates", 0, 1, UINT64_MAX, INT64_MIN, UINT64_MAX, true},
        {"huge earliness clamps", 0, UINT64_MAX, 0, INT64_MAX, 0, false},
        {"5 h period, half late: 50 %", 0, 18000000000000ULL, 27000000000000ULL, -9000000000000LL, 500000,
         true},
        {"40 h period, half late: 50 % (coarse path)", 0, 144000000000000ULL, 216000000000000ULL,
         -72000000000000LL, 500000, true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_detect_cycle_result r = rts_detect_cycle_eval(rows[i].start, rows[i].target, rows[i].finish);
        CHECK_EQ(r.earliness_ns, rows[i].earliness);
        CHECK(r.lateness_ppm == rows[i].lateness_ppm);
        CHECK_EQ(r.miss, rows[i].miss);
    }
}

/* A 10 ms task; bins taken every "second" by the caller. */
static void test_monitor_bins(void)
{
    rts_detect_lateness_mon m;
    CHECK_EQ(rts_detect_lateness_mon_init(&m), RTS_OK);
    CHECK_EQ(m.earliness_min_ns, INT64_MAX);
    /* bin 1: on time, 8 % late, 100 % late (a late cycle's successor starts
     * at once, its target is its own start + period) */
    rts_detect_lateness_mon_cycle(&m, 0, 10 * MS, 7 * MS);
    rts_detect_lateness_mon_cycle(&m, 10 * MS, 20 * MS, 20800 * 1000ULL);
    rts_detect_cycle_result r = rts_detect_lateness_mon_cycle(&m, 20800 * 1000ULL, 30800 * 1000ULL, 40800 * 1000ULL);
    CHECK(r.miss);
    CHECK(r.lateness_ppm == 1000000);
    rts_detect_lateness_bin b;
    CHECK_EQ(rts_detect_lateness_mon_take_bin(&m, &b), RTS_OK);
    CHECK_EQ(b.cycles, 3);
    CHECK_EQ(b.misses, 2);
    CHECK(b.lateness_sum_ppm == 1080000); /* 108 % accumulated */
    CHECK(b.lateness_max_ppm == 1000000);
    CHECK(m.bin_max_ppm == 1080000);
    /* bin 2: one cycle 30 % late */
    rts_detect_lateness_mon_cycle(&m, 50 * MS, 60 * MS, 63 * MS);
    CHECK_EQ(rts_detect_lateness_mon_take_bin(&m, &b), RTS_OK);
    CHECK_EQ(b.cycles, 1);
    CHECK(b.lateness_sum_ppm == 300000);
    CHECK(m.bin_max_ppm == 1080000); /* worst bin kept */
    /* bin 3: empty; NULL out allowed */
    CHECK_EQ(rts_detect_lateness_mon_take_bin(&m, NULL), RTS_OK);
    CHECK_EQ(m.bin.cycles, 0);
    /* totals */
    CHECK_EQ(m.cycles, 4);
    CHECK_EQ(m.misses, 3);
    CHECK(m.lateness_max_ppm == 1000000);
    CHECK(m.lateness_sum_ppm == 1380000);
    CHECK_EQ(m.earliness_min_ns, -(int64_t)(10 * MS));
    CHECK_EQ(rts_detect_lateness_mon_init(NULL), RTS_EINVAL);
    CHECK_EQ(rts_detect_lateness_mon_take_bin(NULL, &b), RTS_EINVAL);
    /* Accumulation saturates. */
    rts_detect_lateness_mon_cycle(&m, 0, 1, UINT64_MAX);
    rts_detect_lateness_mon_cycle(&m, 0, 1, UINT64_MAX);
    CHECK(m.bin.lateness_sum_ppm == UINT64_MAX);
}

enum { IRQ, ADVANCE };

typedef struct {
    const char *name;
    int op;
    rts_time_ns now;
    bool crossed; /* IRQ: returned */
    uint32_t count, last;
    bool over, last_over;
    rts_time_ns slice_start;
} irq_row;

static void test_irq_count(void)
{
    /* 1 ms slices from origin 500, threshold 3 (crossing at the 4th). */
    static const irq_row rows[] = {
        {"irq 1", IRQ, 500, false, 1, 0, false, false, 500},
        {"irq 2", IRQ, 600, false, 2, 0, false, false, 500},
        {"irq 3 (at threshold)", IRQ, 700, false, 3, 0, false, false, 500},
        {"irq 4 crosses", IRQ, 800, true, 4, 0, true, false, 500},
        {"irq 5: crossing reported once", IRQ, 1499, false, 5, 0, true, false, 500},
        {"rollover at 1500", IRQ, 1500, false, 1, 5, false, true, 1500},
        {"advance into the next slice", ADVANCE, 2700, false, 0, 1, false, false, 2500},
        {"skip two empty slices: last 0", IRQ, 5100, false, 1, 0, false, false, 4500},
        {"time before the slice stays in it", IRQ, 4000, false, 2, 0, false, false, 4500},
        {"skip one empty slice after a busy one: last 0", IRQ, 6600, false, 1, 0, false, false, 6500},
    };
    rts_detect_irq_count c;
    CHECK_EQ(rts_detect_irq_count_init(&c, 1000, 3, 500), RTS_OK);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        if (rows[i].op == IRQ) {
            CHECK_EQ(rts_detect_irq_count_on_irq_isr(&c, rows[i].now), rows[i].crossed);
        } else {
            rts_detect_irq_count_advance(&c, rows[i].now);
        }
        CHECK_EQ(c.count, rows[i].count);
        CHECK_EQ(c.last, rows[i].last);
        CHECK_EQ(c.over, rows[i].over);
        CHECK_EQ(c.last_over, rows[i].last_over);
        CHECK_EQ(c.slice_start, rows[i].slice_start);
    }
    CHECK_EQ(c.total, 9);
    CHECK_EQ(c.slices_over, 1);
    CHECK_EQ(rts_detect_irq_count_init(&c, 0, 3, 0), RTS_EINVAL);
    CHECK_EQ(rts_detect_irq_count_init(NULL, 10, 3, 0), RTS_EINVAL);
    /* Threshold 0: the first interrupt crosses. */
    rts_detect_irq_count_init(&c, 10, 0, 0);
    CHECK(rts_detect_irq_count_on_irq_isr(&c, 0));
}

typedef struct {
    const char *name;
    uint32_t fill;
    rts_detect_wm_change change;
    bool overload;
} detect_row;

typedef struct {
    RTS_VECTOR_TABLE(detect_row, rts_detect_fill_wm);
    uint32_t high, low;
} detect_table;

#include "vectors_detect.h"

static void wm_step(rts_detect_fill_wm *w, const detect_row *r)
{
    CHECK_EQ(rts_detect_fill_wm_update(w, r->fill), r->change);
    CHECK_EQ(w->overload, r->overload);
}

static void test_fill_watermarks(void)
{
    const detect_table *t = &vec_detect_fill_watermarks;
    rts_detect_fill_wm w;
    CHECK_EQ(rts_detect_fill_wm_init(&w, t->high, t->low), RTS_OK);
    RTS_RUN_VECTORS(&w, t, wm_step);
    CHECK_EQ(rts_detect_fill_wm_init(&w, 20, 20), RTS_EINVAL);
    CHECK_EQ(rts_detect_fill_wm_init(&w, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_detect_fill_wm_init(NULL, 2, 1), RTS_EINVAL);
    CHECK_EQ(rts_detect_fill_wm_init(&w, 1, 0), RTS_OK);
}

int main(void)
{
    RTS_RUN(test_cycle_eval);
    RTS_RUN(test_monitor_bins);
    RTS_RUN(test_irq_count);
    RTS_RUN(test_fill_watermarks);
    return rts_test_end();
}
