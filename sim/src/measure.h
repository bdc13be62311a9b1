/* Measurements (measure.c): what every other room reports as it happens,
 * and the public calls that read it (rtsim_totals(), rtsim_take_bins(),
 * the statistics, the histograms, rtsim_in_flight()). Private to the
 * simulator. */
#ifndef RTSIM_MEASURE_H
#define RTSIM_MEASURE_H

#include "sim.h"

/* The CPU context of core `core`'s idle time. */
static inline uint32_t idle_ctx(uint32_t core)
{
    return core == 0 ? RTSIM_CTX_IDLE : RTSIM_CTX_IDLE_CORE1 + core - 1;
}

/* The CPU context of interrupt line `line`'s handler. */
static inline uint32_t isr_ctx(int line)
{
    if (line == LINE_TICK) return RTSIM_CTX_ISR_TICK;
    if (line >= LINE_RX) return RTSIM_CTX_ISR_RX;
    return RTSIM_CTX_ISR_TIMER;
}

/* The helpers below run several times per packet: inline, so that their
 * callers in other rooms pay no call (bench/engine_cost.sh). */

void trace_append(rtsim *s, uint64_t t, uint32_t kind, uint32_t core, int32_t arg, int64_t value);
/* Append a record to the run's event trace, when tracing is on (the
 * recorded traffic traces are trace_source.h's). */
static inline void trace_rec(rtsim *s, uint64_t t, uint32_t kind, uint32_t core, int32_t arg,
                             int64_t value)
{
    if (s->trace != NULL) trace_append(s, t, kind, core, arg, value);
}

/* Charge core c's CPU time since its last accounting to its current context. */
static inline void acct_cpu(rtsim *s, sim_core *c, uint64_t now)
{
    uint64_t d = now - c->acct_t;
    s->cur_bin.cpu_ns[c->acct_ctx] += d;
    if (c->acct_ctx >= RTSIM_CTX_TASK0 && c->acct_ctx < RTSIM_CTX_IDLE_CORE1)
        s->task[c->acct_ctx - RTSIM_CTX_TASK0].st.cpu_ns += d;
    c->acct_t = now;
}

/* Packet p is dropped, for reason `why`. */
static inline void count_drop(rtsim *s, const sim_pkt *p, rtsim_drop why)
{
    s->cur_bin.dropped[why]++;
    trace_rec(s, s->now, RTSIM_TR_DROP, s->cfg.nic_core, (int32_t)why, p->flow);
    s->flow_st[p->flow].dropped++;
    s->flow_st[p->flow].drops[why]++;
}

/* Packet p reaches the application at `now`: count it and its latency. */
static inline void deliver(rtsim *s, const sim_pkt *p, uint64_t now)
{
    s->cur_bin.delivered++;
    s->cur_bin.flow_delivered[p->flow]++;
    rtsim_flow_stats *fs = &s->flow_st[p->flow];
    fs->delivered++;
    uint64_t lat = now - p->t_arr;
    if (lat > fs->latency_max_ns) fs->latency_max_ns = lat;
    trace_rec(s, now, RTSIM_TR_DELIVER, s->cfg.nic_core, (int32_t)p->flow, (int64_t)lat);
    s->lat_hist[p->flow][rtsim_hist_index(lat)]++;
}

/* The measured RX line's disabled time up to `now`. */
void acct_rx_off(rtsim *s, uint64_t now);
/* The receive path's time in polling mode (the global limit): call after
 * anything that may switch the mode. */
void acct_rx_mode(rtsim *s, uint64_t now);
/* Record what libshield's detectors found since the last look. */
void detect_seen(rtsim *s, uint64_t now);
/* Close the current bin at `now` into the ring of finished bins and the
 * totals, after booking the lateness the critical task accrued in it. */
void close_bin(rtsim *s, uint64_t now);
/* Periodic task t's cycle ends at `now`: account its miss (if late) and its
 * lateness to the task, and book them into the bins when t is the critical
 * task (docs/decisions/lateness-in-bins.md). */
void cycle_lateness(rtsim *s, sim_task *t, uint64_t now);
/* The run ends at `end`: periodic cycles past their deadline are late. */
void unfinished_cycles(rtsim *s, uint64_t end);

#endif
