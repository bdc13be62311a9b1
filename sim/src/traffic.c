/* Traffic generators: constant, piecewise-constant and Poisson arrivals. */
#include "traffic.h"
#include "sim_compiler.h"

#include <stdbool.h>
#include <string.h>

uint64_t prng_next(sim_prng *p)
{
    /* splitmix64 (Steele, Lea, Flood 2014): one add, three xor-shift-multiplies. */
    uint64_t z = (p->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double prng_unit(sim_prng *p)
{
    /* 53 random bits, shifted into (0, 1]. */
    return ((double)(prng_next(p) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

double det_log(double x)
{
    /* x = m * 2^e with m in [1, 2); ln x = e ln 2 + 2 atanh((m-1)/(m+1)).
     * Only +, -, *, / are used, which IEEE 754 rounds identically everywhere. */
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 52) & 0x7FF) - 1023;
    bits = (bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m;
    memcpy(&m, &bits, sizeof m);
    double z = (m - 1.0) / (m + 1.0);
    double z2 = z * z;
    double term = z;
    double sum = 0.0;
    for (int k = 1; k < 60; k += 2) {
        sum += term / (double)k;
        term *= z2;
    }
    return (double)e * 0.69314718055994530942 + 2.0 * sum;
}

void flow_gen_init(sim_flow_gen *g, const rtsim_flow_cfg *cfg, uint64_t seed, uint32_t index)
{
    g->cfg = cfg;
    g->rng.s = seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(index + 1));
    (void)prng_next(&g->rng);
    g->frac = 0.0;
    g->seg = 0;
    g->seg_lo = 1;
    g->seg_hi = 0;
    g->seg_rate = 0.0;
    g->seg_gap = 0.0;
    g->exponential = cfg->pattern == RTSIM_PAT_POISSON ||
                     (cfg->pattern == RTSIM_PAT_PIECEWISE && cfg->poisson);
}

/* Piecewise: the segment holding t (searched forward from the cached one). */
static uint32_t piece_at(const sim_flow_gen *g, uint64_t t)
{
    const rtsim_flow_cfg *c = g->cfg;
    uint32_t i = g->seg < c->n_rates ? g->seg : 0;
    if (i > 0 && t < (uint64_t)c->rate_t_ns[i]) i = 0;
    while (i + 1 < c->n_rates && t >= (uint64_t)c->rate_t_ns[i + 1])
        i++;
    return i;
}

double flow_rate_at(const sim_flow_gen *g, uint64_t t)
{
    const rtsim_flow_cfg *c = g->cfg;
    if (t < (uint64_t)c->start_ns) return 0.0;
    uint64_t u = t - (uint64_t)c->start_ns;
    switch (c->pattern) {
    case RTSIM_PAT_CONSTANT:
    case RTSIM_PAT_POISSON:
        return c->rate_pps;
    case RTSIM_PAT_PIECEWISE:
        if (c->n_rates == 0 || u < (uint64_t)c->rate_t_ns[0]) return 0.0;
        return c->rates_pps[piece_at(g, u)];
    default:
        return 0.0;
    }
}

/* Start of the next rate interval after t (the flow's start, a piecewise
 * change point), or UINT64_MAX. */
static uint64_t next_change(const sim_flow_gen *g, uint64_t t)
{
    const rtsim_flow_cfg *c = g->cfg;
    if (t < (uint64_t)c->start_ns) return (uint64_t)c->start_ns;
    if (c->pattern != RTSIM_PAT_PIECEWISE) return UINT64_MAX;
    uint64_t u = t - (uint64_t)c->start_ns;
    for (uint32_t i = piece_at(g, u); i < c->n_rates; i++)
        if ((uint64_t)c->rate_t_ns[i] > u) return (uint64_t)c->start_ns + (uint64_t)c->rate_t_ns[i];
    return UINT64_MAX;
}

/* The rate at t and the start of the next rate interval (UINT64_MAX: none),
 * from the cached interval while t is in it: between two changes the rate is
 * constant, so the cache gives exactly what flow_rate_at and next_change
 * would. */
static double rate_interval(sim_flow_gen *g, uint64_t t, uint64_t *change)
{
    if (t >= g->seg_lo && t < g->seg_hi) {
        *change = g->seg_hi;
        return g->seg_rate;
    }
    if (g->cfg->pattern == RTSIM_PAT_PIECEWISE && t >= (uint64_t)g->cfg->start_ns)
        g->seg = piece_at(g, t - (uint64_t)g->cfg->start_ns);
    const double r = flow_rate_at(g, t);
    const uint64_t nc = next_change(g, t);
    g->seg_lo = t;
    g->seg_hi = nc;
    g->seg_rate = r;
    g->seg_gap = r > 0.0 ? 1e9 / r : 0.0;
    *change = nc;
    return r;
}

/* The next arrival after t inside the rate interval that holds t (rate r, next
 * change nc): true with it in *at, or false when the interval holds none (a
 * rate of 0, a gap beyond the clock, or a gap reaching past the change). */
static SIM_HOT_INLINE bool arrival_in_interval(sim_flow_gen *g, uint64_t t, double r, uint64_t nc,
                                               uint64_t *at)
{
    if (r <= 0.0) return false;
    double gap;
    if (g->exponential) {
        gap = -det_log(prng_unit(&g->rng)) * 1e9 / r;
    } else {
        /* The first packet of a rate interval comes one gap after its start,
         * so an interval of length L at rate r holds floor(L r) packets. */
        gap = g->seg_gap; /* 1e9 / r, divided once per rate interval */
    }
    gap += g->frac;
    /* A gap beyond the 64-bit clock (a rate below ~1e-10 pkt/s, or an
     * extreme exponential draw) is "never": converting it would be
     * undefined. The arrival time t + gap saturates at the end of time. */
    if (!(gap < 1.8e19)) return false;
    /* Below 2^63 the signed conversions give the same integer and double
     * as the unsigned ones, in fewer instructions on common targets. */
    uint64_t whole;
    double whole_d;
    if (gap < 9.2e18) {
        const int64_t w = (int64_t)gap;
        whole = (uint64_t)w;
        whole_d = (double)w;
    } else {
        whole = (uint64_t)gap;
        whole_d = (double)whole;
    }
    /* Exponential gaps carry their fraction like the even ones and may be
     * shorter than a nanosecond: two arrivals then share one nanosecond
     * (whole == 0) and the carried fraction pays the time back, so the
     * arrivals offer exactly the rate, at 10^9 pkt/s too. Rounding such a gap
     * up to 1 ns while also carrying it (as before) lost ~1 ns per short
     * gap: 27 % of the packets at 10^9 pkt/s, 0.5 % at 10^8. An even gap is
     * never below 1 ns (rates are at most 10^9 pkt/s). */
    /* A rate beyond 10^9 pkt/s gets the old floor of one arrival per
     * nanosecond: time must advance (rtsim_config_error() refuses only
     * rates that are not finite). */
    if (whole == 0 && (!g->exponential || !(r <= 1e9))) whole = 1;
    /* A gap drawn at this rate must not reach into the next rate
     * interval: there the new rate starts afresh from the change point
     * (a packet exactly on it still belongs to the ending interval).
     * Deterministic gaps: an interval holds floor(L r) packets;
     * exponential gaps: memoryless, so restarting is exact. */
    if (nc != UINT64_MAX && (whole > nc - t || t + whole > nc)) return false;
    g->frac = gap - whole_d;
    *at = whole > UINT64_MAX - t ? UINT64_MAX : t + whole;
    return true;
}

uint64_t flow_next_after(sim_flow_gen *g, uint64_t t)
{
    for (int guard = 0; guard < 100000; guard++) {
        uint64_t nc, at;
        const double r = rate_interval(g, t, &nc);
        if (arrival_in_interval(g, t, r, nc, &at)) return at;
        /* None in this interval: the next one starts afresh at its change point. */
        if (nc == UINT64_MAX) return UINT64_MAX;
        t = nc;
        g->frac = 0.0;
    }
    return UINT64_MAX;
}

#if defined(__SIZEOF_INT128__)
/* Evenly spaced arrivals of one rate interval in closed form. With the gap G
 * in [1, 2^52) and u = 2^(e-52) its last place (2^e <= G < 2^(e+1)), G is
 * K units and one nanosecond M = 2^(52-e) units. If the carried fraction f
 * is a whole number m of units and G + 1 <= 2^(e+1), each step of
 * flow_next_after() is exact integer arithmetic: gap = G + f is exact (a
 * multiple of u in the binade of G), its whole part is floor((K + m) / M)
 * and the next fraction (K + m) mod M units, so after j steps the arrival is
 * t + floor((jK + m) / M) and the fraction ((jK + m) mod M) units. Takes the
 * most steps whose last arrival is at or before `bound` (and so inside the
 * interval: no restart). Returns the steps taken (0: not applicable). */
static uint64_t grid_jump(sim_flow_gen *g, uint64_t *next, uint64_t bound)
{
    const double G = g->seg_gap;
    if (!(G >= 1.0 && G < 4503599627370496.0) || bound <= *next) return 0;
    /* Room for fewer than about three steps: walking them is cheaper than
     * the 128-bit division (the result is the same either way). */
    if ((double)(bound - *next) < 3.0 * G) return 0;
    uint64_t bits;
    memcpy(&bits, &G, sizeof bits);
    const unsigned sh = 52u - (unsigned)((int)((bits >> 52) & 0x7FF) - 1023); /* 1..52 */
    const uint64_t M = (uint64_t)1 << sh;
    const uint64_t K = (bits & 0xFFFFFFFFFFFFFull) | (1ull << 52); /* G * M */
    if (K + M > (1ull << 53)) return 0; /* G + f could reach the next binade */
    const double fm = g->frac * (double)M; /* exact: a power-of-two scaling */
    if (!(fm >= 0.0 && fm < (double)M)) return 0;
    const uint64_t m = (uint64_t)fm;
    if ((double)m != fm) return 0; /* not on the grid yet: one walked step puts it there */
    /* floor((jK + m) / M) <= B  <=>  jK + m < (B + 1) M */
    const unsigned __int128 lim = ((unsigned __int128)(bound - *next) + 1u) * M;
    if (lim <= (unsigned __int128)m + K) return 0; /* not even one step */
    uint64_t steps, whole, rest;
    if ((lim >> 64) == 0) { /* the usual case: 64-bit arithmetic suffices (jK <= lim) */
        const uint64_t l64 = (uint64_t)lim;
        steps = (l64 - m - 1u) / K;
        const uint64_t S = steps * K + m;
        whole = S >> sh;
        rest = S & (M - 1u);
    } else {
        const unsigned __int128 j = (lim - m - 1u) / K;
        steps = (uint64_t)j; /* < 2^64: at most (B + 1) / G */
        const unsigned __int128 S = j * K + m;
        whole = (uint64_t)(S >> sh);
        rest = (uint64_t)(S & (M - 1u));
    }
    *next += whole;
    g->frac = (double)rest / (double)M; /* exact: rest < 2^52, M a power of two */
    return steps;
}
#endif

uint64_t flow_skip_before(sim_flow_gen *g, uint64_t next, uint64_t limit, uint64_t *count)
{
    const rtsim_flow_cfg *c = g->cfg;
    const bool even =
        c->pattern == RTSIM_PAT_CONSTANT || (c->pattern == RTSIM_PAT_PIECEWISE && !c->poisson);
    uint64_t n = 0;
    while (next < limit) {
#if defined(__SIZEOF_INT128__)
        /* From an arrival of the cached rate interval: the steps up to
         * min(limit, the interval's end) in closed form (grid_jump). */
        if (even && next >= g->seg_lo && next < g->seg_hi && g->seg_rate > 0.0) {
            n += grid_jump(g, &next, limit < g->seg_hi ? limit : g->seg_hi);
            if (next >= limit) break;
        }
#endif
        /* One step as the event path takes it: a Poisson draw, a restart at
         * an interval's end, a fraction not yet on the gap's grid, or a gap
         * outside grid_jump's range. */
        n++;
        next = flow_next_after(g, next);
    }
    *count += n;
    return next;
}
