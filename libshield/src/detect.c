/* Overload detection metrics (Danicki et al. §2.1): lateness monitor,
 * interrupt count per slice, queue fill watermarks. */
#include "rtshield/rts_detect.h"
#include "rtshield/rts_opts.h"
#include "rts_time.h"

#define PPM_ONE ((uint64_t)RTS_PPM_ONE)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return rts_time_add(a, b); /* the library's one saturating add (rts_time.h) */
}

static int64_t to_i64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* late * 10^6 / dur without overflow: exact while dur < 2^64 / 10^6 (about
 * 5 hours), saturating when the result does not fit. */
static uint64_t ppm_of(uint64_t late, uint64_t dur)
{
    const uint64_t q = late / dur;
    const uint64_t r = late % dur;
    if (q > UINT64_MAX / PPM_ONE) {
        return UINT64_MAX;
    }
    uint64_t frac;
    if (dur <= UINT64_MAX / PPM_ONE) {
        frac = r * PPM_ONE / dur;
    } else {
        frac = r / (dur / PPM_ONE); /* huge durations: within one ppm */
        if (frac >= PPM_ONE) {
            frac = PPM_ONE - 1u;
        }
    }
    return sat_add(q * PPM_ONE, frac);
}

rts_detect_cycle_result rts_detect_cycle_eval(rts_time_ns start, rts_time_ns target, rts_time_ns finish)
{
    rts_detect_cycle_result res = {0, 0u, false};
    if (target <= start) {
        return res;
    }
    if (finish <= target) {
        res.earliness_ns = to_i64(target - finish);
        return res;
    }
    const uint64_t late = finish - target;
    res.earliness_ns = late > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)late;
    res.lateness_ppm = ppm_of(late, target - start);
    res.miss = true;
    return res;
}

static void bin_clear(rts_detect_lateness_bin *b)
{
    b->cycles = 0u;
    b->misses = 0u;
    b->lateness_sum_ppm = 0u;
    b->lateness_max_ppm = 0u;
}

rts_err rts_detect_lateness_mon_init(rts_detect_lateness_mon *m)
{
    if (m == NULL) {
        return RTS_EINVAL;
    }
    *m = (rts_detect_lateness_mon){.earliness_min_ns = INT64_MAX}; /* no cycle yet */
    return RTS_OK;
}

rts_detect_cycle_result rts_detect_lateness_mon_cycle(rts_detect_lateness_mon *m, rts_time_ns start, rts_time_ns target,
                                        rts_time_ns finish)
{
    const rts_detect_cycle_result r = rts_detect_cycle_eval(start, target, finish);
    m->cycles++;
    m->bin.cycles++;
    if (r.miss) {
        m->misses++;
        m->bin.misses++;
    }
    if (r.earliness_ns < m->earliness_min_ns) {
        m->earliness_min_ns = r.earliness_ns;
    }
    if (r.lateness_ppm > m->lateness_max_ppm) {
        m->lateness_max_ppm = r.lateness_ppm;
    }
    if (r.lateness_ppm > m->bin.lateness_max_ppm) {
        m->bin.lateness_max_ppm = r.lateness_ppm;
    }
    m->lateness_sum_ppm = sat_add(m->lateness_sum_ppm, r.lateness_ppm);
    m->bin.lateness_sum_ppm = sat_add(m->bin.lateness_sum_ppm, r.lateness_ppm);
    return r;
}

rts_err rts_detect_lateness_mon_take_bin(rts_detect_lateness_mon *m, rts_detect_lateness_bin *out)
{
    if (m == NULL) {
        return RTS_EINVAL;
    }
    if (out != NULL) {
        *out = m->bin;
    }
    if (m->bin.lateness_sum_ppm > m->bin_max_ppm) {
        m->bin_max_ppm = m->bin.lateness_sum_ppm;
    }
    bin_clear(&m->bin);
    return RTS_OK;
}

#if RTS_CONFIG_DETECT /* interrupt counting and fill watermarks (rts_opts.h) */

rts_err rts_detect_irq_count_init(rts_detect_irq_count *c, rts_time_ns slice_ns, uint32_t threshold, rts_time_ns origin)
{
    if (c == NULL || slice_ns == 0u) {
        return RTS_EINVAL;
    }
    *c = (rts_detect_irq_count){
        .slice_ns = slice_ns, .threshold = threshold, .slice_start = origin}; /* counters at 0 */
    return RTS_OK;
}

void rts_detect_irq_count_advance(rts_detect_irq_count *c, rts_time_ns now)
{
    if (now < c->slice_start || now - c->slice_start < c->slice_ns) {
        return;
    }
    const uint64_t k = (now - c->slice_start) / c->slice_ns;
    if (k == 1u) {
        c->last = c->count;
        c->last_over = c->over;
    } else {
        c->last = 0u; /* the slice just before the current one saw nothing */
        c->last_over = false;
    }
    c->slice_start += k * c->slice_ns;
    c->count = 0u;
    c->over = false;
}

bool rts_detect_irq_count_on_irq_isr(rts_detect_irq_count *c, rts_time_ns now)
{
    rts_detect_irq_count_advance(c, now);
    c->total++;
    if (c->count == UINT32_MAX) {
        return false;
    }
    c->count++;
    if (!c->over && c->count > c->threshold) {
        c->over = true;
        c->slices_over++;
        return true;
    }
    return false;
}

rts_err rts_detect_fill_wm_init(rts_detect_fill_wm *w, uint32_t high, uint32_t low)
{
    if (w == NULL || high == 0u || low >= high) {
        return RTS_EINVAL;
    }
    *w = (rts_detect_fill_wm){.high = high, .low = low};
    return RTS_OK;
}

rts_detect_wm_change rts_detect_fill_wm_update(rts_detect_fill_wm *w, uint32_t fill)
{
    if (fill > w->max_fill) {
        w->max_fill = fill;
    }
    if (!w->overload && fill >= w->high) {
        w->overload = true;
        w->episodes++;
        return RTS_WM_OVERLOAD;
    }
    if (w->overload && fill <= w->low) {
        w->overload = false;
        return RTS_WM_CLEARED;
    }
    return RTS_WM_UNCHANGED;
}

#endif /* RTS_CONFIG_DETECT */
