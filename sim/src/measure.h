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

/* Append a record to the run's event trace (when tracing is on; the
 * recorded traffic traces are trace_source.h's). */
void trace_rec(rtsim *s, uint64_t t, uint32_t kind, uint32_t core, int32_t arg, int64_t value);
/* Charge core c's CPU time since its last accounting to its current context. */
void acct_cpu(rtsim *s, sim_core *c, uint64_t now);
/* The measured RX line's disabled time up to `now`. */
void acct_rx_off(rtsim *s, uint64_t now);
/* The receive path's time in polling mode (the global limit): call after
 * anything that may switch the mode. */
void acct_rx_mode(rtsim *s, uint64_t now);
/* Record what libshield's detectors found since the last look. */
void detect_seen(rtsim *s, uint64_t now);
/* Close the current bin at `now` into the ring of finished bins and the totals. */
void close_bin(rtsim *s, uint64_t now);
/* Packet p is dropped, for reason `why`. */
void count_drop(rtsim *s, const sim_pkt *p, rtsim_drop why);
/* Packet p reaches the application at `now`: its latency. */
void deliver(rtsim *s, const sim_pkt *p, uint64_t now);
/* The lateness, in percent of the period, of periodic task t's cycle ending at `finish`. */
double cycle_lateness_pct(const sim_task *t, uint64_t finish);
/* Account `misses` missed periods and `late` percent of lateness to task t
 * (and to the bin when t is the critical task). */
void add_lateness(rtsim *s, sim_task *t, uint64_t misses, double late);
/* The run ends at `end`: periodic cycles past their deadline are late. */
void unfinished_cycles(rtsim *s, uint64_t end);

#endif
