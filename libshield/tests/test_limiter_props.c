/* Property tests of the interrupt limiters (Regehr & Duongsaa §3.2-3.4):
 * random arrival sequences from a fixed-seed generator, invariants checked
 * on what was delivered:
 *   strict    - no two admitted interrupts closer than t_min;
 *   bursty    - at most N per source per timer interval, 2N in any window of
 *               one period, in both timer modes;
 *   countdown - no two deliveries within one window; every arrival is
 *               delivered, latched or counted lost. */
#include "rts_port_posix.h"
#include "rts_test.h"
#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_strict.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(uint32_t n) /* uniform-ish in [0, n) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

/* Gap to the next arrival: mostly floods, sometimes quiet stretches. */
static rts_time_ns gap(rts_time_ns scale)
{
    switch (rnd(4)) {
    case 0: return 0; /* simultaneous */
    case 1: return rnd((uint32_t)scale / 20u + 1u);
    case 2: return rnd((uint32_t)scale + 1u);
    default: return rnd((uint32_t)scale * 5u + 1u);
    }
}

#define SEQS 300
#define ARRIVALS 400

/* ----------------------------------------------------------------- strict */

typedef struct {
    rts_port port;
    rts_posix_port hw;
    rts_strict s;
    rts_time_ns last;
    bool any;
    uint32_t admitted, violations;
} strict_host;

static void strict_fire(strict_host *h, rts_time_ns t)
{
    const rts_port_target tgt = {0, 0, 9};
    if (rts_port_apply(&h->port, NULL, tgt, rts_strict_on_irq_isr(&h->s, t)) & RTS_ACT_DELIVER) {
        if (h->any && t - h->last < h->s.t_min_ns) h->violations++;
        h->last = t;
        h->any = true;
        h->admitted++;
    }
}

static void test_strict_min_interarrival(void)
{
    for (int seq = 0; seq < SEQS; seq++) {
        strict_host h;
        rts_posix_port_init(&h.port, &h.hw);
        const rts_time_ns t_min = 1u + rnd(5000);
        rts_strict_init(&h.s, t_min);
        h.hw.enabled[0] = true;
        h.any = false;
        h.admitted = h.violations = 0;
        const bool hostile = rnd(4) == 0; /* ignore the line's enable bit */
        rts_time_ns t = rnd(1000);
        const rts_port_target tgt = {0, 0, 9};
        for (int i = 0; i < ARRIVALS; i++) {
            t += gap(t_min);
            if (h.hw.timer_armed[0] && h.hw.timer_at[0] <= t) {
                const rts_time_ns at = h.hw.timer_at[0];
                h.hw.timer_armed[0] = false;
                rts_port_apply(&h.port, NULL, tgt, rts_strict_on_timer_isr(&h.s, at));
                if (h.hw.enabled[0] && h.hw.pending[0]) {
                    h.hw.pending[0] = false;
                    strict_fire(&h, at);
                }
            }
            if (hostile || h.hw.enabled[0]) {
                strict_fire(&h, t);
            } else {
                h.hw.pending[0] = true;
            }
        }
        CHECK_EQ(h.violations, 0);
        CHECK(h.admitted > 0);
        if (!hostile) CHECK_EQ(h.s.port_errors, 0);
    }
}

/* ----------------------------------------------------------------- bursty */

#define NSRC 3
#define TLINE 9
#define MAXLOG (ARRIVALS + 8)

typedef struct {
    rts_port port;
    rts_posix_port hw;
    rts_bursty b;
    rts_port_target tgt[NSRC];
    uint32_t n_at[NSRC];
    rts_time_ns at[NSRC][MAXLOG];
} bursty_host;

static void b_fire(bursty_host *h, uint32_t src, rts_time_ns t)
{
    if (rts_port_apply(&h->port, NULL, h->tgt[src], rts_bursty_on_irq_isr(&h->b, src, t)) &
        RTS_ACT_DELIVER) {
        if (h->n_at[src] < MAXLOG) h->at[src][h->n_at[src]++] = t;
    }
}

static void b_service(bursty_host *h, rts_time_ns t)
{
    for (int pass = 0; pass < 8; pass++) {
        bool ran = false;
        if (h->hw.enabled[TLINE] && h->hw.pending[TLINE]) {
            h->hw.pending[TLINE] = false;
            rts_bursty_on_tick_apply_isr(&h->b, t, &h->port, NULL, h->tgt);
            ran = true;
        }
        for (uint32_t s = 0; s < NSRC; s++) {
            if (h->hw.enabled[s] && h->hw.pending[s]) {
                h->hw.pending[s] = false;
                b_fire(h, s, t);
                ran = true;
            }
        }
        if (!ran) return;
    }
}

static void test_bursty_bounds(void)
{
    for (int seq = 0; seq < SEQS; seq++) {
        bursty_host h;
        rts_posix_port_init(&h.port, &h.hw);
        const rts_time_ns period = 100u + rnd(5000);
        const rts_time_ns t0 = rnd(3000);
        const rts_bursty_mode mode = rnd(2) ? RTS_BURSTY_TIMER_LAZY : RTS_BURSTY_TIMER_PERIODIC;
        rts_bursty_init(&h.b, period, mode);
        uint32_t burst[NSRC];
        for (uint32_t s = 0; s < NSRC; s++) {
            burst[s] = 1u + rnd(6);
            rts_bursty_add_source(&h.b, burst[s], NULL);
            h.tgt[s] = (rts_port_target){s, 0, TLINE};
            h.hw.enabled[s] = true;
            h.n_at[s] = 0;
        }
        rts_port_apply(&h.port, NULL, h.tgt[0], rts_bursty_start(&h.b, t0));
        rts_time_ns t = t0;
        for (int i = 0; i < ARRIVALS; i++) {
            t += gap(period / 4u);
            while (h.hw.timer_armed[0] && h.hw.timer_at[0] <= t) {
                const rts_time_ns e = h.hw.timer_at[0];
                h.hw.timer_armed[0] = false;
                h.hw.pending[TLINE] = true;
                b_service(&h, e);
            }
            const uint32_t s = rnd(NSRC);
            if (h.hw.enabled[s]) {
                b_fire(&h, s, t);
            } else {
                h.hw.pending[s] = true;
            }
            b_service(&h, t);
        }
        for (uint32_t s = 0; s < NSRC; s++) {
            /* per timer interval [t0 + kP, t0 + (k+1)P) */
            uint32_t worst_interval = 0, worst_window = 0;
            for (uint32_t i = 0, j = 0, k = 0; i < h.n_at[s]; i++) {
                const rts_time_ns ki = (h.at[s][i] - t0) / period;
                while ((h.at[s][k] - t0) / period != ki) k++;
                if (i - k + 1 > worst_interval) worst_interval = i - k + 1;
                while (h.at[s][i] - h.at[s][j] >= period) j++;
                if (i - j + 1 > worst_window) worst_window = i - j + 1;
            }
            ROW(mode == RTS_BURSTY_TIMER_LAZY ? "lazy" : "periodic");
            CHECK(worst_interval <= burst[s]);
            CHECK(worst_window <= 2u * burst[s]);
            CHECK_EQ(h.b.src[s].admitted, h.n_at[s]);
        }
        CHECK_EQ(h.b.port_errors, 0);
    }
}

/* -------------------------------------------------------------- countdown */

static void test_countdown_window(void)
{
    for (int seq = 0; seq < SEQS; seq++) {
        rts_countdown c;
        const uint32_t tick = 1u + rnd(50), initial = rnd(200);
        const rts_time_ns w = (rts_time_ns)tick * initial;
        rts_countdown_init(&c, tick, initial);
        rts_time_ns t = rnd(100), last = 0;
        bool any = false;
        uint32_t deliveries = 0, violations = 0;
        for (int i = 0; i < ARRIVALS; i++) {
            t += gap(w + 1u);
            const rts_time_ns z = rts_countdown_next_event_at(&c);
            /* the host calls at the zero when latched; otherwise at random */
            if (z <= t && (c.latched || rnd(2) == 0)) {
                if (rts_countdown_on_zero_isr(&c, z).flags & RTS_ACT_DELIVER) {
                    if (any && z - last < w) violations++;
                    last = z;
                    any = true;
                    deliveries++;
                }
            }
            if (rts_countdown_on_arrival_isr(&c, t).flags & RTS_ACT_DELIVER) {
                if (any && t - last < w) violations++;
                last = t;
                any = true;
                deliveries++;
            }
        }
        CHECK_EQ(violations, 0);
        CHECK_EQ(deliveries, c.delivered);
        CHECK_EQ(c.delivered + c.lost + (c.latched ? 1u : 0u), c.arrivals);
        CHECK_EQ(c.arrivals, ARRIVALS);
    }
}

int main(void)
{
    RTS_RUN(test_strict_min_interarrival);
    RTS_RUN(test_bursty_bounds);
    RTS_RUN(test_countdown_window);
    return rts_test_end();
}
