/* Rates so low that the next arrival lies beyond the 64-bit clock mean
 * "never": the engine neither hangs nor converts an out-of-range gap. */
#include "sim_test_util.h"

static void test_tiny_rates_never_arrive(void)
{
    const double rates[] = {1e-12, 1e-10, 4e-9};
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        rtsim_config c = base(1000 * MS);
        add_driver(&c, 1);
        add_flow(&c, RTSIM_PAT_CONSTANT, rates[i]);
        add_flow(&c, RTSIM_PAT_POISSON, rates[i]);
        rtsim *s;
        rtsim_bin t = run_totals(&c, &s);
        CHECK_EQ(t.offered, 0);
        CHECK(rtsim_events(s) < 1000); /* no event per nanosecond */
        rtsim_destroy(s);
    }
}

/* A slow flow whose rate then rises: the arrivals of the later rate come. */
static void test_slow_then_fast(void)
{
    rtsim_config c = base(1000 * MS);
    add_driver(&c, 1);
    add_two_rate_flow(&c, 1e-12, 500 * MS, 1000);
    rtsim *s;
    rtsim_bin t = run_totals(&c, &s);
    CHECK(t.offered >= 499 && t.offered <= 500);
    rtsim_destroy(s);
}

int main(void)
{
    RTS_RUN(test_tiny_rates_never_arrive);
    RTS_RUN(test_slow_then_fast);
    return rts_test_end();
}
