/* A starved task is never reported as on time: a periodic task that never
 * completes a cycle before the run ends has a miss for every period that
 * ended, and its lateness accumulated up to the end of the run; and the bins
 * a late cycle spans show the lateness it accrued in each of them, its miss
 * in the bin where its deadline passed (docs/decisions/lateness-in-bins.md). */
#include "sim_test_util.h"

/* The critical task (10 ms period) under an always-ready task of higher
 * priority: it never runs. 95 ms: periods end at 10, 20, ..., 90 ms. */
static void test_never_runs(void)
{
    rtsim_config c = base(95 * MS);
    int crit = add_critical(&c, 1, 10 * MS, 4 * MS);
    add_task(&c, RTSIM_TASK_BACKGROUND, 5, 0, 0);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK_EQ(t.cycles, 0);
    CHECK_EQ(t.misses, 9);
    /* (95 - 10) / 10 = 850 % late, as one unfinished cycle */
    CHECK(t.lateness_pct > 849.99 && t.lateness_pct < 850.01);
    CHECK(t.lateness_max_pct > 849.99 && t.lateness_max_pct < 850.01);
    rtsim_task_stats st = task_stats(s, (uint32_t)crit);
    CHECK_EQ(st.misses, 9);
    rtsim_destroy(s);
}

/* A task that finishes its cycles on time gains nothing at the end, and a
 * cycle that is running but not yet due is not a miss. */
static void test_on_time_untouched(void)
{
    rtsim_config c = base(95 * MS);
    add_critical(&c, 1, 10 * MS, 4 * MS);
    rtsim_bin t = run_totals(&c, NULL);
    CHECK_EQ(t.cycles, 10); /* ending at 4, 14, ..., 94 ms */
    CHECK_EQ(t.misses, 0);
    CHECK(t.lateness_pct == 0.0);
}

/* Starved only from 50 ms on (a periodic hog of higher priority takes the
 * core for good): the cycles before count normally, the unfinished one
 * from its deadline at 60 ms. */
static void test_starved_late(void)
{
    rtsim_config c = base(95 * MS);
    add_critical(&c, 1, 10 * MS, 4 * MS);
    int hog = add_periodic(&c, 5, 1000 * MS, 900 * MS);
    c.tasks[hog].offset_ns = 50 * MS;
    rtsim_bin t = run_totals(&c, NULL);
    CHECK_EQ(t.cycles, 5);              /* cycles ending at 4, 14, ..., 44 ms */
    CHECK_EQ(t.misses, 4);              /* periods ending 60, 70, 80, 90 ms */
    CHECK(t.lateness_pct > 349.99 && t.lateness_pct < 350.01); /* (95 - 60) / 10 */
}

/* The critical task (10 ms period, 4 ms work) under a hog of higher priority
 * from 50 to 75 ms, in 10 ms bins: the cycle released at 50 ms (deadline
 * 60 ms) runs from 75 to 79 ms, 190 % late. The bins show it where it
 * happens: nothing in [50, 60), the miss and 100 % in [60, 70), 90 % in
 * [70, 80) (the worst cycle there: 190 %), not 0, 0 and then 190 % at the
 * end. */
static void test_bins_show_the_starved_time(void)
{
    rtsim_config c = base(100 * MS);
    c.bin_ns = 10 * MS;
    add_critical(&c, 1, 10 * MS, 4 * MS);
    int hog = add_periodic(&c, 5, 1000 * MS, 25 * MS);
    c.tasks[hog].offset_ns = 50 * MS;
    rtsim *s;
    run(&c, &s);
    rtsim_bin b[10];
    CHECK_EQ(rtsim_take_bins(s, b, 10), 10);
    const double late[10] = {0, 0, 0, 0, 0, 0, 100, 90, 0, 0};
    const uint64_t misses[10] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
    const uint64_t cycles[10] = {1, 1, 1, 1, 1, 0, 0, 1, 1, 1}; /* 4, ..., 44; 79; 83; 93 */
    const double worst[10] = {0, 0, 0, 0, 0, 0, 100, 190, 0, 0};
    for (int i = 0; i < 10; i++) {
        CHECK(b[i].lateness_pct > late[i] - 1e-6 && b[i].lateness_pct < late[i] + 1e-6);
        CHECK(b[i].lateness_max_pct > worst[i] - 1e-6 && b[i].lateness_max_pct < worst[i] + 1e-6);
        CHECK_EQ(b[i].misses, misses[i]);
        CHECK_EQ(b[i].cycles, cycles[i]);
    }
    /* The totals and the task still count the one late cycle once, whole. */
    rtsim_bin t;
    rtsim_totals(s, &t);
    CHECK_EQ(t.misses, 1);
    CHECK(t.lateness_pct > 189.99 && t.lateness_pct < 190.01);
    CHECK(t.lateness_max_pct > 189.99 && t.lateness_max_pct < 190.01);
    rtsim_task_stats st = task_stats(s, 0);
    CHECK_EQ(st.misses, 1);
    CHECK(st.lateness_max_pct > 189.99 && st.lateness_max_pct < 190.01);
    rtsim_destroy(s);
}

/* Never run, in 10 ms bins: the unfinished cycle's miss is in the bin where
 * its deadline (10 ms) passed, its lateness spreads over the bins it spans
 * (100 % per starved bin, 50 % in the last half bin); the later periods it
 * missed (20, ..., 90 ms), known only when the run ends, are in the last bin. */
static void test_bins_of_a_task_that_never_runs(void)
{
    rtsim_config c = base(95 * MS);
    c.bin_ns = 10 * MS;
    add_critical(&c, 1, 10 * MS, 4 * MS);
    add_task(&c, RTSIM_TASK_BACKGROUND, 5, 0, 0);
    rtsim *s;
    run(&c, &s);
    rtsim_bin b[10];
    CHECK_EQ(rtsim_take_bins(s, b, 10), 10);
    CHECK_EQ(b[0].misses, 0);
    CHECK(b[0].lateness_pct == 0.0);
    CHECK_EQ(b[1].misses, 1);
    for (int i = 1; i < 9; i++) {
        CHECK(b[i].lateness_pct > 100 - 1e-6 && b[i].lateness_pct < 100 + 1e-6);
        CHECK(b[i].lateness_max_pct > 100.0 * i - 1e-6 && b[i].lateness_max_pct < 100.0 * i + 1e-6);
        if (i > 1 && i < 9) CHECK_EQ(b[i].misses, 0);
    }
    CHECK(b[9].lateness_pct > 50 - 1e-6 && b[9].lateness_pct < 50 + 1e-6);
    CHECK_EQ(b[9].misses, 8);
    rtsim_destroy(s);
}

int main(void)
{
    RTS_RUN(test_never_runs);
    RTS_RUN(test_on_time_untouched);
    RTS_RUN(test_starved_late);
    RTS_RUN(test_bins_show_the_starved_time);
    RTS_RUN(test_bins_of_a_task_that_never_runs);
    return rts_test_end();
}
