/* NIC parameter rules of Behnke §7.3.2: WCPD, t_qf, the t_abs bound, the
 * t_pack window, and the validator naming the violated bound. */
#include "rts_test.h"
#include "rtshield/rts_nic_params.h"

static void test_formulas(void)
{
    CHECK_EQ(rts_nic_params_wcpd(10000, 4 * 128), 5120000);      /* 10 µs · 512 */
    CHECK_EQ(rts_nic_params_t_qf(128, 5000000), 640000000);      /* 128 at 200 pkt/s */
    CHECK_EQ(rts_nic_params_t_abs_max(10000000, 640000000, 5120000), 634880000);
    CHECK_EQ(rts_nic_params_t_abs_max(10000000, 2000000, 5120000), 4880000);
    CHECK_EQ(rts_nic_params_t_abs_max(1000, 2000, 5000), 0);
    ROW("saturation instead of wrap-around");
    CHECK(rts_nic_params_wcpd(UINT64_MAX / 2, 3) == UINT64_MAX);
    CHECK(rts_nic_params_t_qf(0xFFFFFFFFu, UINT64_MAX / 4) == UINT64_MAX);
}

typedef struct {
    const char *name;
    uint32_t n_q;
    rts_time_ns t_p, t_d, t_abs, t_pack;
    uint32_t expect;
} prow;

static void test_check_names_the_bound(void)
{
    /* t_netstack 10 µs, 4 queues of 16 in total 64 -> WCPD 640 µs. */
    static const prow rows[] = {
        /* t_P 100 µs: t_qf = 1.6 ms < t_d = 10 ms, bound 10 − 0.64 = 9.36 ms */
        {"valid", 16, 100000, 10000000, 5000000, 2000000, RTS_NIC_PARAMS_OK},
        {"t_abs at the bound", 16, 100000, 10000000, 9360000, 2000000, RTS_NIC_PARAMS_OK},
        {"t_abs 1 ns over", 16, 100000, 10000000, 9360001, 2000000, RTS_NIC_V_TABS},
        {"t_qf (80 ms) widens the window to 79.36 ms", 16, 5000000, 10000000, 79000000, 5000000,
         RTS_NIC_PARAMS_OK},
        {"t_pack below t_P", 16, 100000, 10000000, 5000000, 99999, RTS_NIC_V_TPACK_LOW},
        {"t_pack above t_abs", 16, 100000, 10000000, 5000000, 5000001, RTS_NIC_V_TPACK_HIGH},
        {"no window (600 µs <= WCPD 640 µs), so no t_abs >= t_pack either", 16, 10000, 600000, 0, 10000,
         RTS_NIC_V_NO_WINDOW | RTS_NIC_V_TPACK_HIGH},
        {"size 0", 0, 100000, 10000000, 5000000, 2000000, RTS_NIC_V_SIZE},
        {"two at once", 16, 100000, 10000000, 9400000, 9500000, RTS_NIC_V_TABS | RTS_NIC_V_TPACK_HIGH},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        CHECK_EQ(rts_nic_params_check(10000, 64, rows[i].n_q, rows[i].t_p, rows[i].t_d, rows[i].t_abs,
                                      rows[i].t_pack),
                 rows[i].expect);
    }
}

static void test_validate_queues(void)
{
    rts_nic_params_queue q[3] = {
        {.n_q = 8, .t_p = 1000000, .t_d = 2000000, .t_abs = 1000000, .t_pack = 1000000},
        {.n_q = 8, .t_p = 1000000, .t_d = 2000000, .t_abs = 1500000, .t_pack = 1000000},
        {.n_q = 8, .t_p = 1000000, .t_d = 2000000, .t_abs = 1000000, .t_pack = 500000},
    };
    unsigned bad = 99;
    /* t_netstack 10 µs · 24 = 240 µs: window 8 ms (t_qf) − 0.24 ms: all fine. */
    CHECK_EQ(rts_nic_params_validate(q, 3, 10000, &bad), RTS_NIC_V_TPACK_LOW);
    CHECK_EQ(bad, 2);
    q[2].t_pack = 1000000;
    CHECK_EQ(rts_nic_params_validate(q, 3, 10000, &bad), RTS_NIC_PARAMS_OK);
    CHECK_EQ(bad, 3);
    ROW("a slow stack: the WCPD over all queues eats the window of every queue");
    CHECK_EQ(rts_nic_params_validate(q, 3, 400000, &bad), RTS_NIC_V_NO_WINDOW);
    CHECK_EQ(bad, 0);
    ROW("adding a queue raises the WCPD of the others");
    CHECK_EQ(rts_nic_params_validate(q, 2, 300000, &bad), RTS_NIC_PARAMS_OK);
    /* 300 µs · 24 = 7.2 ms: bound 0.8 ms, queue 0 (1 ms) is the first over. */
    CHECK_EQ(rts_nic_params_validate(q, 3, 300000, &bad), RTS_NIC_V_TABS);
    CHECK_EQ(bad, 0);
    CHECK_EQ(rts_nic_params_validate(NULL, 3, 1, &bad), RTS_NIC_V_SIZE);
}

int main(void)
{
    RTS_RUN(test_formulas);
    RTS_RUN(test_check_names_the_bound);
    RTS_RUN(test_validate_queues);
    return rts_test_end();
}
