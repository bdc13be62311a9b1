/* Recorded traces as traffic sources: a flow of pattern RTSIM_PAT_TRACE
 * replays frames (their bytes and their times) handed over by
 * rtsim_flow_trace(), once or looped. Private to the simulator.
 *
 * Memory: one copy of the frames, allocated when the trace is handed over
 * and bounded by RTSIM_TRACE_MAX_FRAMES / RTSIM_TRACE_MAX_BYTES over all
 * flows of a simulation; nothing grows during the run. */
#ifndef RTSIM_TRACE_SOURCE_H
#define RTSIM_TRACE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_trace {
    uint32_t n;         /* frames; 0: no trace */
    uint32_t next;      /* index of the next frame to send */
    uint64_t start;     /* the flow's start_ns: time 0 of the first pass */
    uint64_t period;    /* loop period, ns; 0: one pass */
    uint64_t pass_base; /* start of the current pass */
    uint64_t *t;        /* each frame's time within a pass, ns, nondecreasing, < period */
    uint32_t *off;      /* each frame's first byte in `bytes` */
    uint16_t *len;      /* each frame's length */
    uint8_t *bytes;
    size_t n_bytes;
} sim_trace;

/* Copy `n` frames (times t_ns[i], lengths len[i], bytes back to back in
 * bytes[0..n_bytes)) into `tr`, replacing nothing: `tr` must be empty.
 * @return NULL, or a static message naming what is wrong. */
const char *trace_load(sim_trace *tr, uint64_t start_ns, uint64_t period_ns, uint32_t n,
                       const int64_t *t_ns, const uint32_t *len, const uint8_t *bytes,
                       size_t n_bytes);

/* Arrival time of frame `tr->next` (saturated), UINT64_MAX when none is left. */
uint64_t trace_due(const sim_trace *tr);

/* The frame that is due (trace_due() != UINT64_MAX) and its length. */
const uint8_t *trace_frame(const sim_trace *tr, uint32_t i, uint32_t *len);

/* Move to the next frame (wrapping into the next pass when looping). */
void trace_advance(sim_trace *tr);

void trace_free(sim_trace *tr);

#endif
