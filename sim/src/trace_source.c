/* Recorded traces as traffic sources (trace_source.h). */
#include "trace_source.h"

#include <stdlib.h>
#include <string.h>

#include "rtsim/rtsim.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

const char *trace_load(sim_trace *tr, uint64_t start_ns, uint64_t period_ns, uint32_t n,
                       const int64_t *t_ns, const uint32_t *len, const uint8_t *bytes,
                       size_t n_bytes)
{
    if (tr->n != 0) return "trace: the flow has one already";
    if (n == 0) return "trace: no frames";
    if (t_ns == NULL || len == NULL || bytes == NULL) return "trace: NULL array";
    if (n > RTSIM_TRACE_MAX_FRAMES) return "trace: more frames than RTSIM_TRACE_MAX_FRAMES";
    if (n_bytes > RTSIM_TRACE_MAX_BYTES) return "trace: more bytes than RTSIM_TRACE_MAX_BYTES";
    size_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (len[i] < 14 || len[i] > RTSIM_FRAME_MAX)
            return "trace: a frame is shorter than an Ethernet header or longer than RTSIM_FRAME_MAX";
        if (t_ns[i] < 0 || (i > 0 && t_ns[i] < t_ns[i - 1]))
            return "trace: frame times are negative or decrease";
        if (period_ns != 0 && (uint64_t)t_ns[i] >= period_ns)
            return "trace: a frame's time is not below the loop period";
        sum += len[i];
    }
    if (sum != n_bytes) return "trace: the frame lengths do not add up to the bytes given";
    tr->t = malloc((size_t)n * sizeof *tr->t);
    tr->off = malloc((size_t)n * sizeof *tr->off);
    tr->len = malloc((size_t)n * sizeof *tr->len);
    tr->bytes = malloc(n_bytes);
    if (tr->t == NULL || tr->off == NULL || tr->len == NULL || tr->bytes == NULL) {
        trace_free(tr);
        return "trace: out of memory";
    }
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        tr->t[i] = (uint64_t)t_ns[i];
        tr->off[i] = off;
        tr->len[i] = (uint16_t)len[i];
        off += len[i];
    }
    memcpy(tr->bytes, bytes, n_bytes);
    tr->n = n;
    tr->n_bytes = n_bytes;
    tr->next = 0;
    tr->start = start_ns;
    tr->period = period_ns;
    tr->pass_base = start_ns;
    return NULL;
}

uint64_t trace_due(const sim_trace *tr)
{
    if (tr->n == 0 || tr->next >= tr->n) return UINT64_MAX;
    return sat_add(tr->pass_base, tr->t[tr->next]);
}

const uint8_t *trace_frame(const sim_trace *tr, uint32_t i, uint32_t *len)
{
    if (i >= tr->n) {
        *len = 0;
        return NULL;
    }
    *len = tr->len[i];
    return tr->bytes + tr->off[i];
}

void trace_advance(sim_trace *tr)
{
    if (tr->next >= tr->n) return;
    tr->next++;
    if (tr->next == tr->n && tr->period != 0 && tr->pass_base != UINT64_MAX) {
        tr->next = 0;
        tr->pass_base = sat_add(tr->pass_base, tr->period);
    }
}

void trace_free(sim_trace *tr)
{
    free(tr->t);
    free(tr->off);
    free(tr->len);
    free(tr->bytes);
    memset(tr, 0, sizeof *tr);
}
