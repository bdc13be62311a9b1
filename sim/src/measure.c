/* Measurements: the CPU time of each context, the bins and the totals,
 * drops, deliveries and latencies, the critical task's lateness, the
 * detectors, the histograms (log-scale bins), the run's event trace, and
 * the public calls that read them. Every other room reports here; this
 * room calls none of them. */
#include "measure.h"

#include "rtshield/rts_detect.h"

#include <stddef.h>
#include <string.h>

/* trace_rec() with tracing on: append a record, or count it lost when the
 * ring is full. */
void trace_append(rtsim *s, uint64_t t, uint32_t kind, uint32_t core, int32_t arg, int64_t value)
{
    if (s->trace_len == s->cfg.trace_capacity) {
        s->trace_lost++;
        return;
    }
    uint32_t i = s->trace_head + s->trace_len;
    if (i >= s->cfg.trace_capacity) i -= s->cfg.trace_capacity;
    rtsim_trace_rec r = {t, kind, core, arg, value};
    s->trace[i] = r;
    s->trace_len++;
}

void acct_rx_off(rtsim *s, uint64_t now)
{
    if (s->rx_off_since != SIM_INF) {
        s->cur_bin.rx_disabled_ns += now - s->rx_off_since;
        s->rx_off_since = now;
    }
}

/* Time spent in the global limit's polling mode. */
void acct_rx_mode(rtsim *s, uint64_t now)
{
    if (!s->cfg.rx.enabled) return;
    const bool poll = hook_polling_mode(&s->hk);
    if (poll && s->poll_since == SIM_INF) {
        s->poll_since = now;
        s->rxst.to_poll++;
    } else if (!poll && s->poll_since != SIM_INF) {
        s->cur_bin.polling_ns += now - s->poll_since;
        s->poll_since = SIM_INF;
    }
}

void detect_seen(rtsim *s, uint64_t now)
{
    uint64_t v[RTSIM_DET_COUNT];
    hook_detected(&s->hk, v);
    for (uint32_t k = 0; k < RTSIM_DET_COUNT; k++) {
        if (v[k] == s->det_count[k]) continue;
        s->cur_bin.detected[k] += v[k] - s->det_count[k];
        s->det_count[k] = v[k];
        if (s->det_first[k] == SIM_INF) s->det_first[k] = now;
        trace_rec(s, now, RTSIM_TR_DETECT, s->cfg.nic_core, (int32_t)k, (int64_t)v[k]);
    }
}

static void book_running_late(rtsim *s, uint64_t now);

/* Add the counts of bin `b` into `dst` (totals are a running sum of bins). */
static void bin_add(rtsim_bin *dst, const rtsim_bin *b)
{
    dst->offered += b->offered;
    dst->irq_raised += b->irq_raised;
    dst->isr_runs += b->isr_runs;
    dst->irq_lost += b->irq_lost;
    dst->received += b->received;
    dst->processed += b->processed;
    dst->delivered += b->delivered;
    for (int i = 0; i < RTSIM_DROP_COUNT; i++)
        dst->dropped[i] += b->dropped[i];
    dst->cycles += b->cycles;
    dst->misses += b->misses;
    dst->lateness_pct += b->lateness_pct;
    if (b->lateness_max_pct > dst->lateness_max_pct) dst->lateness_max_pct = b->lateness_max_pct;
    for (int i = 0; i < RTSIM_CTX_COUNT; i++)
        dst->cpu_ns[i] += b->cpu_ns[i];
    dst->rx_disabled_ns += b->rx_disabled_ns;
    dst->polling_ns += b->polling_ns;
    for (int i = 0; i < RTSIM_DET_COUNT; i++)
        dst->detected[i] += b->detected[i];
    for (int i = 0; i < RTSIM_MAX_FLOWS; i++) {
        dst->flow_offered[i] += b->flow_offered[i];
        dst->flow_delivered[i] += b->flow_delivered[i];
    }
    if (b->net_prio_max > dst->net_prio_max) dst->net_prio_max = b->net_prio_max;
}

void close_bin(rtsim *s, uint64_t now)
{
    book_running_late(s, now);
    for (uint32_t i = 0; i < s->cfg.n_cores; i++)
        acct_cpu(s, &s->core[i], now);
    acct_rx_off(s, now);
    if (s->poll_since != SIM_INF) {
        s->cur_bin.polling_ns += now - s->poll_since;
        s->poll_since = now;
    }
    rtsim_bin *b = &s->cur_bin;
    bin_add(&s->totals, b);
    if (s->bins_len == s->bins_cap) {
        fail(s, "bin ring full: take bins more often"); /* the caller did not take bins in time */
    } else {
        uint32_t i = s->bins_head + s->bins_len;
        if (i >= s->bins_cap) i -= s->bins_cap;
        s->bins[i] = *b;
        s->bins_len++;
    }
    memset(b, 0, sizeof *b);
    b->t_start_ns = now;
    b->net_prio_max = s->driver >= 0 ? s->task[s->driver].prio : 0u;
}

/* The lateness of periodic task t's current cycle if it ends (or is still
 * running) at `finish`, in parts per million of the period: libshield's
 * rts_detect_cycle_eval(), the lateness monitor a driver runs
 * (docs/decisions/lateness-one-home.md). 0 up to the deadline. */
static uint64_t cycle_lateness_ppm(const sim_task *t, uint64_t finish)
{
    const uint64_t P = (uint64_t)t->cfg->period_ns;
    return rts_detect_cycle_eval(t->deadline - P, t->deadline, finish).lateness_ppm;
}

/* Book into the current bin what the critical task's current cycle, still
 * running at `now`, has not booked yet once its deadline has passed: its
 * miss (so a miss lands in the bin where the deadline passes) and the
 * lateness it accrued since its last booking (so a bin's lateness is the
 * lateness accrued within it: docs/decisions/lateness-in-bins.md). The
 * increments telescope: a cycle's bookings add up to its lateness. */
static void book_late(rtsim *s, sim_task *t, uint64_t now)
{
    if (now <= t->deadline) return;
    rtsim_bin *b = &s->cur_bin;
    if (!t->miss_booked) {
        b->misses++;
        t->miss_booked = true;
    }
    const uint64_t ppm = cycle_lateness_ppm(t, now);
    b->lateness_pct += (double)(ppm - t->late_booked_ppm) / 1e4;
    t->late_booked_ppm = ppm;
    const double pct = (double)ppm / 1e4;
    if (pct > b->lateness_max_pct) b->lateness_max_pct = pct;
}

/* Account a cycle of task t that is over at `now` (ended, or cut by the end
 * of the run) to its statistics: `misses` missed periods, its lateness. */
static void task_lateness(sim_task *t, uint64_t misses, uint64_t now)
{
    const double late = (double)cycle_lateness_ppm(t, now) / 1e4;
    t->st.misses += misses;
    t->st.lateness_sum_pct += late;
    if (late > t->st.lateness_max_pct) t->st.lateness_max_pct = late;
}

void cycle_lateness(rtsim *s, sim_task *t, uint64_t now)
{
    task_lateness(t, now > t->deadline ? 1u : 0u, now);
    if ((int)t->idx == s->critical) book_late(s, t, now);
    t->miss_booked = false;
    t->late_booked_ppm = 0;
}

/* The critical task's cycle, if it runs past its deadline at `now`: book
 * what it has not booked yet into the current bin (before it closes). */
static void book_running_late(rtsim *s, uint64_t now)
{
    if (s->critical < 0) return;
    sim_task *t = &s->task[s->critical];
    if (t->cfg->kind == RTSIM_TASK_PERIODIC && t->state == TS_READY) book_late(s, t, now);
}

/* The run ends: a periodic task whose current cycle is past its deadline
 * and not finished is not on time. Every period that ended without the
 * cycle completing counts as a miss, and the cycle's lateness up to the
 * end of the run is accumulated (docs/decisions/rxpath-sim.md, "A starved
 * task"). The cycle's own miss and lateness went into the bins as they
 * passed; the later periods are known to be missed only now, and go into
 * the last bin. */
void unfinished_cycles(rtsim *s, uint64_t end)
{
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        sim_task *t = &s->task[i];
        if (t->cfg->kind != RTSIM_TASK_PERIODIC || t->state != TS_READY || end <= t->deadline)
            continue;
        const uint64_t missed = (end - t->deadline) / (uint64_t)t->cfg->period_ns + 1u;
        task_lateness(t, missed, end);
        if ((int)t->idx == s->critical) {
            book_late(s, t, end);
            s->cur_bin.misses += missed - 1u;
        }
    }
}

/* ---- histograms: exact below RTSIM_HIST_SUB ns, then RTSIM_HIST_SUB bins
 * per octave (0.1 % resolution), integer arithmetic only. */

/* v > 0 (GCC and Clang builtin: one bit scan instead of a loop per bit). */
static uint32_t floor_log2(uint64_t v)
{
    return 63u - (uint32_t)__builtin_clzll(v);
}

uint32_t rtsim_hist_index(uint64_t v)
{
    if (v < RTSIM_HIST_SUB) return (uint32_t)v;
    uint32_t o = floor_log2(v) - 9; /* v >= 1024: o >= 1 */
    uint64_t i = (uint64_t)o * RTSIM_HIST_SUB + ((v >> (o - 1)) - RTSIM_HIST_SUB);
    return i >= RTSIM_HIST_BINS ? RTSIM_HIST_BINS - 1 : (uint32_t)i;
}

uint64_t rtsim_hist_lower_ns(uint32_t i)
{
    if (i < RTSIM_HIST_SUB) return i;
    uint32_t o = i / RTSIM_HIST_SUB;
    uint64_t sub = i % RTSIM_HIST_SUB;
    return (RTSIM_HIST_SUB + sub) << (o - 1);
}

size_t rtsim_hist_edges_ns(uint32_t lo, uint64_t *out, size_t n)
{
    if (out == NULL) return 0;
    for (size_t k = 0; k < n; k++)
        out[k] = rtsim_hist_lower_ns(lo + (uint32_t)k);
    return n;
}

size_t rtsim_take_bins(rtsim *s, rtsim_bin *out, size_t max)
{
    size_t n = 0;
    while (n < max && s->bins_len > 0) {
        out[n++] = s->bins[s->bins_head];
        if (++s->bins_head == s->bins_cap) s->bins_head = 0;
        s->bins_len--;
    }
    return n;
}

size_t rtsim_take_trace(rtsim *s, rtsim_trace_rec *out, size_t max)
{
    size_t n = 0;
    while (n < max && s->trace_len > 0) {
        out[n++] = s->trace[s->trace_head];
        if (++s->trace_head == s->cfg.trace_capacity) s->trace_head = 0;
        s->trace_len--;
    }
    return n;
}

uint64_t rtsim_trace_lost(const rtsim *s)
{
    return s->trace_lost;
}

void rtsim_totals(const rtsim *s, rtsim_bin *out)
{
    *out = s->totals;
    out->t_start_ns = 0;
    if (s->finished) return;
    bin_add(out, &s->cur_bin);
    /* The running activities up to now, not yet charged: so that each core's
     * contexts add up to the elapsed time mid-run too. */
    for (uint32_t i = 0; i < s->cfg.n_cores; i++)
        out->cpu_ns[s->core[i].acct_ctx] += s->now - s->core[i].acct_t;
    if (s->rx_off_since != SIM_INF) out->rx_disabled_ns += s->now - s->rx_off_since;
}

int rtsim_task_stats_get(const rtsim *s, uint32_t i, rtsim_task_stats *out)
{
    if (i >= s->cfg.n_tasks) return -1;
    *out = s->task[i].st;
    return 0;
}

int rtsim_flow_stats_get(const rtsim *s, uint32_t i, rtsim_flow_stats *out)
{
    if (i >= s->cfg.n_flows) return -1;
    *out = s->flow_st[i];
    return 0;
}

void rtsim_mitigation_stats_get(const rtsim *s, rtsim_mitigation_stats *out)
{
    *out = s->mst;
}

uint64_t rtsim_in_flight(const rtsim *s)
{
    uint64_t n = s->rxq.len + s->ring.len + s->filled.len;
    if (s->cfg.rx.enabled) n += hook_waiting(&s->hk);
    for (uint32_t i = 0; i < RTSIM_MAX_NIC_QUEUES; i++)
        n += s->nicq[i].len;
    const sim_core *c = &s->core[s->cfg.nic_core];
    if (s->cfg.nic_kind == RTSIM_NIC_EDGE) {
        for (uint32_t k = 0; k < rx_sources(s); k++)
            if (c->pending & (1u << (LINE_RX + k))) n++;
        if (hook_filter_latched(&s->hk)) n++;
    }
    /* A running RX ISR holds the frames it has not finished yet. */
    if (c->isr_line >= LINE_RX && s->cfg.nic_kind == RTSIM_NIC_EDGE)
        n += c->isr_npkts;
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        const sim_task *t = &s->task[i];
        if ((t->cfg->kind == RTSIM_TASK_DRIVER || t->cfg->kind == RTSIM_TASK_WORKER ||
             t->cfg->kind == RTSIM_TASK_INPUT) &&
            t->has_packet)
            n++;
        n += t->mailbox.len;
    }
    return n;
}

void rtsim_detect_get(const rtsim *s, uint64_t *first, uint64_t *count)
{
    for (uint32_t k = 0; k < RTSIM_DET_COUNT; k++) {
        first[k] = s->det_first[k];
        count[k] = s->det_count[k];
    }
}

void rtsim_rx_stats_get(const rtsim *s, rtsim_rx_stats *out)
{
    *out = s->rxst;
    out->in_flight = rtsim_in_flight(s);
}

/* The first n (at most RTSIM_HIST_BINS) counts of a histogram. */
static size_t hist_copy(const uint64_t *h, uint64_t *counts, size_t n)
{
    if (n > RTSIM_HIST_BINS) n = RTSIM_HIST_BINS;
    memcpy(counts, h, n * sizeof *counts);
    return n;
}

size_t rtsim_hist_cycle(const rtsim *s, uint64_t *counts, size_t n)
{
    return hist_copy(s->cycle_hist, counts, n);
}

size_t rtsim_hist_path(const rtsim *s, uint32_t path, uint64_t *counts, size_t n)
{
    if (path >= RTSIM_PATH_COUNT || s->path_hist == NULL) return 0;
    return hist_copy(s->path_hist + (size_t)path * RTSIM_HIST_BINS, counts, n);
}

size_t rtsim_hist_latency(const rtsim *s, uint32_t flow, uint64_t *counts, size_t n)
{
    if (flow >= s->cfg.n_flows) return 0;
    return hist_copy(s->lat_hist[flow], counts, n);
}
