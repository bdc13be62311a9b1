/* Deferrable server (Behnke et al. §2.4): consumption, replenishment at
 * aligned period boundaries (O(1) over missed periods), and the demand bound
 * e (ceil(delta/p) + 1). */
#include "rts_test.h"
#include "rtshield/rts_dserver.h"

enum { OP_CAN, OP_CONSUME, OP_REMAINING, OP_NEXT };

typedef struct {
    const char *name;
    int op;
    rts_time_ns now;
    uint64_t arg;     /* cost / used */
    long long expect; /* can_serve bool, consume rts_err, remaining, next replenish */
    uint64_t remaining_after;
} ds_row;

static void test_server_table(void)
{
    /* e = 3, p = 10, periods [100 + 10k, 110 + 10k) */
    static const ds_row rows[] = {
        {"before start: period 0, full", OP_REMAINING, 50, 0, 3, 3},
        {"can serve 3", OP_CAN, 100, 3, true, 3},
        {"cannot serve 4", OP_CAN, 100, 4, false, 3},
        {"consume 2", OP_CONSUME, 101, 2, RTS_OK, 1},
        {"cannot serve 2 now", OP_CAN, 105, 2, false, 1},
        {"zero cost is always servable", OP_CAN, 105, 0, true, 1},
        {"overrun: budget to 0", OP_CONSUME, 109, 5, RTS_ELIMIT, 0},
        {"next replenish at 110", OP_NEXT, 109, 0, 110, 0},
        {"boundary: replenished", OP_REMAINING, 110, 0, 3, 3},
        {"consume all", OP_CONSUME, 119, 3, RTS_OK, 0},
        {"unused budget is not carried", OP_CONSUME, 120, 3, RTS_OK, 0},
        {"next boundary", OP_REMAINING, 130, 0, 3, 3},
        {"consume 1", OP_CONSUME, 131, 1, RTS_OK, 2},
        {"a million periods later: one replenish", OP_REMAINING, 10000135, 0, 3, 3},
        {"next replenish after the jump", OP_NEXT, 10000135, 0, 10000140, 3},
        {"time stepping back changes nothing", OP_CONSUME, 50, 1, RTS_OK, 2},
    };
    rts_dserver s;
    CHECK_EQ(rts_dserver_init(&s, 3, 10, 100), RTS_OK);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        long long got = 0;
        switch (rows[i].op) {
        case OP_CAN: got = rts_dserver_can_serve(&s, rows[i].now, rows[i].arg); break;
        case OP_CONSUME: got = rts_dserver_consume(&s, rows[i].now, rows[i].arg); break;
        case OP_REMAINING: got = (long long)rts_dserver_remaining(&s, rows[i].now); break;
        default: got = (long long)rts_dserver_next_replenish(&s, rows[i].now); break;
        }
        CHECK_EQ(got, rows[i].expect);
        CHECK_EQ(s.remaining, rows[i].remaining_after);
        CHECK((s.period_start - 100) % 10 == 0); /* stays aligned */
    }
    CHECK_EQ(s.overruns, 1);
    CHECK_EQ(rts_dserver_init(&s, 3, 0, 0), RTS_EINVAL);
    CHECK_EQ(rts_dserver_init(NULL, 3, 1, 0), RTS_EINVAL);
    CHECK_EQ(rts_dserver_consume(NULL, 0, 0), RTS_EINVAL);
    /* End of time: next replenish saturates. */
    rts_dserver_init(&s, 1, 10, UINT64_MAX - 5);
    CHECK(rts_dserver_next_replenish(&s, UINT64_MAX - 5) == UINT64_MAX);
}

typedef struct {
    const char *name;
    uint64_t e, p, delta, expect;
} dbf_row;

static void test_dbf_table(void)
{
    static const dbf_row rows[] = {
        {"empty interval", 3, 10, 0, 0},
        {"tiny interval: e before + e after a boundary", 3, 10, 1, 6},
        {"one period", 3, 10, 10, 6},
        {"just over one period", 3, 10, 11, 9},
        {"two periods", 3, 10, 20, 9},
        {"budget 0", 0, 10, 100, 0},
        {"no period: unbounded", 3, 0, 5, UINT64_MAX},
        {"quotient overflows", 2, 1, UINT64_MAX, UINT64_MAX},
        {"largest exact", 1, 1, UINT64_MAX - 2, UINT64_MAX - 1},
        {"product overflows", 1ULL << 40, 1, 1ULL << 30, UINT64_MAX},
        {"Behnke-like: 1 ms per 10 ms over 1 s", 1000000, 10000000, 1000000000, 101000000},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        CHECK(rts_dserver_dbf(rows[i].e, rows[i].p, rows[i].delta) == rows[i].expect);
    }
}

/* Property: no schedule of a real deferrable server serves more than dbf in
 * any window. Worst case used: the server is ready all the time and serves
 * as late as possible in each period (the back-to-back pattern); check every
 * window start and length on a small grid. Also check the bound is tight for
 * windows straddling a boundary. */
static void test_dbf_bounds_simulated_service(void)
{
    const uint64_t e = 3, p = 10;
    /* served[t] = 1 if the server runs in [t, t+1): the last e units of each
     * period, and the first e units too in alternate periods (both patterns
     * a deferrable server may show). */
    static uint8_t served[400];
    for (uint64_t t = 0; t < 400; t++) {
        const uint64_t k = t / p, off = t % p;
        served[t] = (uint8_t)((k % 2 == 0) ? (off >= p - e) : (off < e));
    }
    bool tight = false;
    for (uint64_t start = 0; start < 200; start++) {
        uint64_t sum = 0;
        for (uint64_t d = 1; d <= 150; d++) {
            sum += served[start + d - 1];
            const uint64_t bound = rts_dserver_dbf(e, p, d);
            CHECK(sum <= bound);
            if (sum == bound) tight = true;
        }
    }
    CHECK(tight);
    /* The same served pattern is a valid server schedule: never more than e
     * per period. */
    rts_dserver s;
    rts_dserver_init(&s, e, p, 0);
    for (uint64_t t = 0; t < 400; t++) {
        if (served[t]) {
            CHECK(rts_dserver_can_serve(&s, t, 1));
            CHECK_EQ(rts_dserver_consume(&s, t, 1), RTS_OK);
        }
    }
}

int main(void)
{
    RTS_RUN(test_server_table);
    RTS_RUN(test_dbf_table);
    RTS_RUN(test_dbf_bounds_simulated_service);
    return rts_test_end();
}
