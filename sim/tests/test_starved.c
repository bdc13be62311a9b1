/* A starved task is never reported as on time: a periodic task that never
 * completes a cycle before the run ends has a miss for every period that
 * ended, and its lateness accumulated up to the end of the run. */
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

int main(void)
{
    RTS_RUN(test_never_runs);
    RTS_RUN(test_on_time_untouched);
    RTS_RUN(test_starved_late);
    return rts_test_end();
}
