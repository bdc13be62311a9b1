/* Minimal test harness for libshield unit tests: checks count failures,
 * RTS_RUN runs one test function, rts_test_end() prints a summary and gives
 * the exit status ctest reads. Table-driven tests loop over arrays of
 * (time, event, expected) rows (RTS_RUN_ROWS) and name the row in the failure
 * message; a test that runs several tables names each (CASE), and failure
 * messages then read "case: row". The limiters' tables are data
 * (libshield/tests/vectors/), included as generated headers. */
#ifndef RTS_TEST_H
#define RTS_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int rts_test_failed_checks;
static int rts_test_run;
static int rts_test_failed;
static const char *rts_test_row = "";
static const char *rts_test_case = "";

/* "case: " before the row's name while a case is named, else nothing. */
#define RTS_TEST_WHERE_ rts_test_case, *rts_test_case ? ": " : "", rts_test_row

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: %s%s%s: CHECK(%s) failed\n", __FILE__, __LINE__,  \
                    RTS_TEST_WHERE_, #cond);                                          \
            rts_test_failed_checks++;                                                 \
        }                                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                \
    do {                                                                              \
        long long va_ = (long long)(a), vb_ = (long long)(b);                         \
        if (va_ != vb_) {                                                             \
            fprintf(stderr, "%s:%d: %s%s%s: %s == %lld, expected %s == %lld\n",      \
                    __FILE__, __LINE__, RTS_TEST_WHERE_, #a, va_, #b, vb_);           \
            rts_test_failed_checks++;                                                 \
        }                                                                             \
    } while (0)

/* Name the table row being checked, for failure messages. */
#define ROW(name) (rts_test_row = (name))

/* Name the case (a scenario of several rows) being checked, until the next
 * CASE or the end of the test function. */
#define CASE(name) (rts_test_case = (name))

/* Run `call` as one test named `label`. */
#define RTS_RUN_AS(label, call)                                        \
    do {                                                               \
        int before_ = rts_test_failed_checks;                          \
        rts_test_case = "";                                            \
        rts_test_row = (label);                                        \
        call;                                                          \
        rts_test_run++;                                                \
        if (rts_test_failed_checks != before_) {                       \
            rts_test_failed++;                                         \
            fprintf(stderr, "FAIL %s\n", (label));                     \
        } else {                                                       \
            printf("ok   %s\n", (label));                              \
        }                                                              \
    } while (0)

#define RTS_RUN(fn) RTS_RUN_AS(#fn, fn())

/* Run the generated vectors table `table` (see RTS_VECTOR_TABLE) as a test
 * of its own, named after it: run(&table). */
#define RTS_RUN_TABLE(run, table) RTS_RUN_AS(#table, run(&(table)))

/* The number of elements of the array `a`. */
#define RTS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Table-driven tests: for each of the `n` rows at `rows` (structs with a
 * `name`), name the row and call step(lim, &row), the test's own event and
 * checks. RTS_RUN_ROWS takes an array and runs all of it. */
#define RTS_RUN_ROWS_N(lim, rows, n, step)         \
    do {                                           \
        for (size_t i_ = 0; i_ < (n); i_++) {      \
            ROW((rows)[i_].name);                  \
            step((lim), &(rows)[i_]);              \
        }                                          \
    } while (0)
#define RTS_RUN_ROWS(lim, rows, step) RTS_RUN_ROWS_N(lim, rows, RTS_COUNT(rows), step)

/* A table and its number of rows, as two arguments. */
#define RTS_ROWS(a) (a), RTS_COUNT(a)

/* The first columns of a limiter's table row: the row's name, the event (the
 * test's own enum), its time and the expected action's flags and timer. */
#define RTS_ACTION_ROW \
    const char *name;  \
    int ev;            \
    rts_time_ns now;   \
    uint32_t flags;    \
    rts_time_ns timer_at

/* A table of test vectors (libshield/tests/vectors/COMPONENT.toml, made C by
 * gen_vectors.py): the fields every table type starts with (its name, the
 * CASE it names or "", its rows, their number, and NULL or the checks of the
 * component's state after the last row); the table's configuration follows. */
#define RTS_VECTOR_TABLE(row_type, state_type) \
    const char *name;                          \
    const char *case_name;                     \
    const row_type *rows;                      \
    size_t n;                                  \
    void (*after)(const state_type *)

/* Run the generated table `t` on the component at `state` (already set up
 * with the table's configuration): name its case, step(state, &row) each
 * row, then the checks after the last row. */
#define RTS_RUN_VECTORS(state, t, step)                       \
    do {                                                      \
        if (*(t)->case_name) CASE((t)->case_name);            \
        RTS_RUN_ROWS_N(state, (t)->rows, (t)->n, step);       \
        if ((t)->after) {                                     \
            ROW("after the last row");                        \
            (t)->after(state);                                \
        }                                                     \
    } while (0)

/* An rts_action `a` against a row's expected `flags` and `timer_at`. */
#define CHECK_ACTION(a, row)                     \
    do {                                         \
        CHECK_EQ((a).flags, (row)->flags);       \
        CHECK_EQ((a).timer_at, (row)->timer_at); \
    } while (0)

/* xorshift32: a deterministic pseudo-random number in [0, n) from `*state`
 * (never 0), for tests that draw operation sequences. */
static inline uint32_t rts_test_rnd(uint32_t *state, uint32_t n)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x % n;
}

static inline int rts_test_end(void)
{
    printf("%d passed, %d failed\n", rts_test_run - rts_test_failed, rts_test_failed);
    return rts_test_failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
