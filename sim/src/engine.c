/* The event loop and the public API. rtsim_create() builds the device from
 * its configuration; rtsim_run_until() takes, in (time, priority, sequence)
 * order, the earliest of: the end of the ISR or task segment running on a
 * core, a flow's next arrival, a queued event; and hands it to the room
 * that owns it. Arrivals, the most frequent event, are kept out of the
 * heap, and those the device would lose anyway are counted in closed form.
 * The rooms of sim/src and their order: docs/architecture.md, "The
 * simulator"; the model's choices: docs/model.md. */
#include "irq.h"
#include "measure.h"
#include "nic.h"
#include "sched.h"
#include "sim.h"

#include <stdlib.h>
#include <string.h>

/* The flow whose pending arrival comes first, by (time, sequence). */
static void arrival_pick(rtsim *s)
{
    if (s->cfg.n_flows == 1) { /* the common case: no comparison to make */
        s->arr_next = s->arr_t[0] == SIM_INF ? -1 : 0;
        return;
    }
    int best = -1;
    for (uint32_t i = 0; i < s->cfg.n_flows; i++) {
        if (s->arr_t[i] == SIM_INF) continue;
        if (best < 0 || s->arr_t[i] < s->arr_t[best] ||
            (s->arr_t[i] == s->arr_t[best] && s->arr_seq[i] < s->arr_seq[best]))
            best = (int)i;
    }
    s->arr_next = best;
}

/* Flow f's next arrival at t (SIM_INF or past the run: none). It takes the
 * sequence number the event heap would have given it. */
static void arrival_set(rtsim *s, uint32_t f, uint64_t t)
{
    if (t != SIM_INF && t < s->cfg.duration_ns) {
        s->arr_t[f] = t;
        s->arr_seq[f] = s->evq.next_seq++;
    } else {
        s->arr_t[f] = SIM_INF;
    }
    arrival_pick(s);
}

/* Arrivals lost in closed form. When flow f's next arrivals would find the
 * device exactly as its last one left it and be dropped without changing
 * anything but counters (the edge NIC's RX line already pending, pending
 * behind a disabled line, or a full DMA ring), they are counted here, all
 * at once, up to the next thing that can change the device: the earliest
 * queued event, the end of a running ISR or task segment on any core, or
 * the end of this rtsim_run_until() call (flow_skip_before: in closed form
 * within a rate interval of an evenly spaced pattern, else one generator
 * step each). Each would have run the same
 * scheduler pass (kick) as the one before it, which only splits the running
 * segment's CPU accounting at the arrival (sums unchanged). Arrivals at the
 * limit itself go through the event queue as usual, so ties keep their
 * order. Returns flow f's first arrival not counted here.
 * cfg.exact_arrivals = 1 keeps one event per arrival (the reference the
 * tests compare against); a trace also needs every arrival. */
static uint64_t lost_arrivals(rtsim *s, uint32_t f, uint64_t next)
{
    if (next >= s->run_end || s->trace != NULL || s->kick_mask != 0) return next;
    /* Generated arrivals only (flow_next_after); any other source of
     * arrivals (a recorded trace) takes the event path. */
    if (s->cfg.flows[f].pattern > RTSIM_PAT_PIECEWISE) return next;
    rtsim_drop why;
    bool irq;
    if (!nic_drops_next(s, f, &why, &irq)) return next;
    uint64_t limit = s->run_end;
    const sim_event *e = evq_peek(&s->evq);
    if (e != NULL && e->t < limit) limit = e->t;
    for (uint32_t i = 0; i < s->cfg.n_flows; i++)
        if (s->arr_t[i] < limit) limit = s->arr_t[i]; /* another flow's arrival */
    for (uint32_t i = 0; i < s->cfg.n_cores; i++) {
        const uint64_t d = core_done(s, &s->core[i]);
        if (d < limit) limit = d;
    }
    uint64_t n = 0;
    next = flow_skip_before(&s->flow[f], next, limit, &n);
    if (n > 0) {
        s->cur_bin.offered += n;
        s->cur_bin.flow_offered[f] += n;
        s->flow_st[f].offered += n;
        if (irq) {
            s->cur_bin.irq_raised += n;
            s->cur_bin.irq_lost += n;
        }
        s->cur_bin.dropped[why] += n;
        s->flow_st[f].dropped += n;
        s->flow_st[f].drops[why] += n;
        s->lost_batched += n;
    }
    return next;
}

/* Flow f's packet arrives at the NIC; the flow's next arrival is due. */
static void on_arrival(rtsim *s, uint32_t f, uint64_t now)
{
    sim_trace *tr = &s->trace_src[f];
    const sim_pkt p = {now, f, RTS_BUF_NONE, RTS_FLOW_NONE, 0, tr->next};
    sim_core *c = rx_core(s);
    s->cur_bin.offered++;
    s->cur_bin.flow_offered[f]++;
    s->flow_st[f].offered++;
    trace_rec(s, now, RTSIM_TR_ARRIVAL, s->cfg.nic_core, (int32_t)f, 0);
    nic_receive(s, p, now);
    uint64_t next;
    if (tr->n) {
        trace_advance(tr);
        next = trace_due(tr);
        if (next < now) next = now; /* saturated: never before the clock */
    } else {
        next = flow_next_after(&s->flow[f], now);
    }
    kick(s, c, now);
    if (!s->cfg.exact_arrivals) next = lost_arrivals(s, f, next);
    arrival_set(s, f, next);
}

static void handle_event(rtsim *s, const sim_event *e)
{
    uint64_t now = e->t;
    switch (e->type) {
    case EV_BIN:
        close_bin(s, now);
        if (now + s->cfg.bin_ns < s->cfg.duration_ns)
            push_event(s, now + s->cfg.bin_ns, EV_BIN, EV_BIN, 0, 0);
        break;
    case EV_TIMER:
        if (irq_timer(s, e->arg, e->gen, now)) kick(s, rx_core(s), now);
        break;
    case EV_FILTER:
        nic_filter_zero(s, now);
        kick(s, rx_core(s), now);
        break;
    case EV_TICK: {
        sim_core *c = &s->core[e->arg];
        c->pending |= 1u << LINE_TICK;
        if (c == rx_core(s)) nic_tick(s); /* with cfg.rx_on_tick: the RX interrupt too */
        push_event(s, now + (uint64_t)s->cfg.tick_ns, EV_TICK, EV_TICK, e->arg, 0);
        kick(s, c, now);
        break;
    }
    case EV_RELEASE: {
        sim_task *t = &s->task[e->arg];
        task_ready(s, t);
        kick(s, &s->core[t->cfg->core], now);
        break;
    }
    case EV_NIC:
        if (nic_expire(s, now)) kick(s, rx_core(s), now); /* armed early: nothing expired yet */
        break;
    case EV_POLL:
        driver_sleep_end(s, &s->task[e->arg], now);
        break;
    default:
        break;
    }
}

rtsim *rtsim_create(const rtsim_config *cfg)
{
    if (rtsim_config_error(cfg) != NULL) return NULL;
    rtsim *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->cfg = *cfg;
    /* Sized by the configuration: a run closes ceil(duration / bin) bins in
     * all, so a ring of that many (at most RTSIM_BIN_RING) never fills
     * sooner than a full-size one would; one latency histogram per
     * configured flow. Histograms keep all RTSIM_HIST_BINS bins: a latency
     * can exceed the run's duration (fuzz_sim_config, finding 10). */
    const uint64_t n_bins = cfg->duration_ns / cfg->bin_ns + (cfg->duration_ns % cfg->bin_ns != 0);
    s->bins_cap = n_bins < RTSIM_BIN_RING ? (uint32_t)n_bins : RTSIM_BIN_RING;
    s->bins = calloc(s->bins_cap, sizeof *s->bins);
    s->cycle_hist = calloc(RTSIM_HIST_BINS, sizeof *s->cycle_hist);
    bool hists = s->cycle_hist != NULL;
    for (uint32_t i = 0; i < cfg->n_flows; i++) {
        s->lat_hist[i] = calloc(RTSIM_HIST_BINS, sizeof *s->lat_hist[i]);
        hists = hists && s->lat_hist[i] != NULL;
    }
    if (cfg->trace_capacity > 0) s->trace = calloc(cfg->trace_capacity, sizeof *s->trace);
    size_t evcap =
        64 + 4 * (size_t)RTSIM_MAX_FLOWS + 4 * (size_t)RTSIM_MAX_TASKS + 64 * SIM_MAX_TIMERS;
    if (s->bins == NULL || !hists || (cfg->trace_capacity > 0 && s->trace == NULL) ||
        !evq_init(&s->evq, evcap) || !fifo_init(&s->rxq, cfg->queue_capacity) ||
        !fifo_init(&s->ring, cfg->rx.enabled                          ? 0
                             : cfg->nic_kind == RTSIM_NIC_DMA_RING    ? cfg->ring
                             : cfg->nic_kind == RTSIM_NIC_MULTIQUEUE ? nic_host_slots(cfg)
                                                                     : 0)) {
        rtsim_destroy(s);
        return NULL;
    }
    s->poll_since = SIM_INF;
    for (uint32_t k = 0; k < RTSIM_DET_COUNT; k++)
        s->det_first[k] = SIM_INF;
    if (cfg->rx.enabled) {
        /* The buffer pool's memory, and each flow's frame to copy in. */
        s->bufmem = calloc((size_t)cfg->rx.nbufs, RTSIM_FRAME_MAX);
        s->bufpkt = calloc((size_t)cfg->rx.nbufs, sizeof *s->bufpkt);
        s->path_hist = calloc((size_t)RTSIM_PATH_COUNT * RTSIM_HIST_BINS, sizeof *s->path_hist);
        s->cost_rng.s = cfg->seed ^ 0xA0761D6478BD642Full;
        s->tmpl = calloc((size_t)(cfg->n_flows ? cfg->n_flows : 1), RTSIM_FRAME_MAX);
        if (s->bufmem == NULL || s->bufpkt == NULL || s->tmpl == NULL || s->path_hist == NULL ||
            !fifo_init(&s->posted, cfg->rx.nbufs) || !fifo_init(&s->filled, cfg->ring)) {
            rtsim_destroy(s);
            return NULL;
        }
        for (uint32_t i = 0; i < cfg->n_flows; i++) {
            s->tmpl_len[i] = (uint32_t)rtsim_frame_build(&cfg->flows[i], s->tmpl + (size_t)i * RTSIM_FRAME_MAX,
                                                         RTSIM_FRAME_MAX);
            if (s->tmpl_len[i] == 0) fail(s, "a flow's frame could not be built");
        }
        /* libshield's pool starts with buffers 0..ring-1 posted. */
        for (uint32_t b = 0; b < cfg->ring; b++) {
            sim_pkt e = {0, 0, (uint16_t)b, 0, 0, 0};
            (void)fifo_push(&s->posted, e);
        }
    }
    s->driver = s->input = s->critical = s->polling = -1;
    for (uint32_t i = 0; i < RTSIM_MAX_FLOWS; i++)
        s->flow_worker[i] = -1;
    for (uint32_t i = 0; i < s->cfg.n_cores; i++) {
        sim_core *c = &s->core[i];
        c->isr_line = SIM_NO_ISR;
        c->cur = -1;
        c->traced_cur = -1;
        c->last_cur = -1;
        c->acct_ctx = idle_ctx(i);
        c->enabled = 1u << LINE_TICK;
        for (unsigned k = 0; k < SIM_MAX_TIMERS; k++)
            c->enabled |= 1u << (LINE_TIMER0 + k);
        if (s->cfg.tick_ns > 0) push_event(s, (uint64_t)s->cfg.tick_ns, EV_TICK, EV_TICK, i, 0);
    }
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        sim_task *t = &s->task[i];
        t->cfg = &s->cfg.tasks[i];
        t->idx = i;
        t->prio = t->cfg->priority;
        t->state = TS_BLOCKED;
        switch (t->cfg->kind) {
        case RTSIM_TASK_PERIODIC:
            t->release = (uint64_t)t->cfg->offset_ns;
            t->deadline = t->release + (uint64_t)t->cfg->period_ns;
            t->remaining = (uint64_t)t->cfg->work_ns;
            if (t->cfg->critical && s->critical < 0) s->critical = (int)i;
            push_event(s, t->release, EV_RELEASE, EV_RELEASE, i, 0);
            break;
        case RTSIM_TASK_DRIVER:
            s->driver = (int)i;
            break;
        case RTSIM_TASK_POLLING:
            s->polling = (int)i;
            break;
        case RTSIM_TASK_INPUT:
            s->input = (int)i;
            break;
        case RTSIM_TASK_WORKER:
            if (!fifo_init(&t->mailbox, t->cfg->mailbox)) fail(s, "out of memory");
            s->flow_worker[t->cfg->flow] = (int)i;
            break;
        default:
            t->remaining = SIM_INF;
            task_ready(s, t);
            break;
        }
    }
    if (s->critical < 0) {
        for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
            if (s->cfg.tasks[i].kind == RTSIM_TASK_PERIODIC) {
                s->critical = (int)i;
                break;
            }
        }
    }
    /* The simulated interrupt controller, and the shield driving it through
     * the port; the shield's decisions that are the driver's own go to the
     * scheduler's tasks. */
    irq_setup(s);
    s->hk.ops = &driver_ops;
    s->hk.ctx = s;
    if (!hook_init(&s->hk, &s->cfg, 0)) fail(s, "libshield refused the configuration");
    irq_start(s);
    if (cfg->nic_kind == RTSIM_NIC_MULTIQUEUE && !nic_setup(s)) fail(s, "libshield refused the NIC queues");
    if (cfg->rx.enabled && !s->error) {
        /* The receivers' sockets: bind() + setsockopt() (Behnke §5.6). */
        if (!hook_bind_flows(&s->hk, &s->cfg)) fail(s, "libshield refused a socket binding");
        acct_rx_mode(s, 0);
    }
    for (uint32_t i = 0; i < RTSIM_MAX_FLOWS; i++)
        s->arr_t[i] = SIM_INF;
    for (uint32_t i = 0; i < s->cfg.n_flows; i++) {
        flow_gen_init(&s->flow[i], &s->cfg.flows[i], s->cfg.seed, i);
        arrival_set(s, i, flow_next_after(&s->flow[i], 0));
    }
    if (s->cfg.bin_ns < s->cfg.duration_ns) push_event(s, s->cfg.bin_ns, EV_BIN, EV_BIN, 0, 0);
    for (uint32_t i = 0; i < s->cfg.n_cores; i++)
        kick(s, &s->core[i], 0); /* background tasks start */
    if (s->error) {
        rtsim_destroy(s);
        return NULL;
    }
    return s;
}

const char *rtsim_flow_trace(rtsim *s, uint32_t flow, uint32_t n, const int64_t *t_ns,
                             const uint32_t *len, const uint8_t *bytes, size_t n_bytes)
{
    if (s == NULL || flow >= s->cfg.n_flows) return "trace: no such flow";
    const rtsim_flow_cfg *f = &s->cfg.flows[flow];
    if (f->pattern != RTSIM_PAT_TRACE) return "trace: the flow's pattern is not RTSIM_PAT_TRACE";
    if (s->started) return "trace: the run has started";
    if (n > RTSIM_TRACE_MAX_FRAMES - s->trace_frames)
        return "trace: the traces hold more than RTSIM_TRACE_MAX_FRAMES frames together";
    if (n_bytes > RTSIM_TRACE_MAX_BYTES - s->trace_bytes)
        return "trace: the traces hold more than RTSIM_TRACE_MAX_BYTES bytes together";
    sim_trace *tr = &s->trace_src[flow];
    const char *err = trace_load(tr, (uint64_t)f->start_ns, (uint64_t)f->trace_period_ns, n, t_ns,
                                 len, bytes, n_bytes);
    if (err != NULL) return err;
    s->trace_frames += n;
    s->trace_bytes += n_bytes;
    arrival_set(s, flow, trace_due(tr));
    return NULL;
}

void rtsim_destroy(rtsim *s)
{
    if (s == NULL) return;
    evq_free(&s->evq);
    free(s->rxq.buf);
    for (uint32_t i = 0; i < RTSIM_MAX_TASKS; i++)
        free(s->task[i].mailbox.buf);
    free(s->ring.buf);
    free(s->posted.buf);
    free(s->filled.buf);
    free(s->bufmem);
    free(s->bufpkt);
    free(s->path_hist);
    free(s->tmpl);
    for (uint32_t i = 0; i < RTSIM_MAX_FLOWS; i++)
        trace_free(&s->trace_src[i]);
    for (uint32_t i = 0; i < RTSIM_MAX_NIC_QUEUES; i++)
        free(s->nicq[i].buf);
    free(s->bins);
    for (uint32_t i = 0; i < RTSIM_MAX_FLOWS; i++)
        free(s->lat_hist[i]);
    free(s->cycle_hist);
    free(s->trace);
    free(s);
}

int rtsim_run_until(rtsim *s, uint64_t t_end)
{
    if (s->finished) return s->error ? -1 : 0;
    s->started = true;
    if (t_end > s->cfg.duration_ns) t_end = s->cfg.duration_ns;
    if (t_end < s->now) t_end = s->now; /* time never goes back */
    const uint32_t ncores = s->cfg.n_cores;
    s->run_end = t_end;
    while (!s->error) {
        /* The earliest end of a running activity... */
        uint64_t td = SIM_INF;
        uint32_t cd = 0;
        for (uint32_t i = 0; i < ncores; i++) {
            uint64_t d = core_done(s, &s->core[i]);
            if (d < td) {
                td = d;
                cd = i;
            }
        }
        /* ...against the earliest queued event, by (time, priority,
         * sequence): the heap's top or the first flow's next arrival. */
        const sim_event *e = evq_peek(&s->evq);
        const int af = s->arr_next;
        bool take_arr = false;
        if (af >= 0) {
            const uint64_t ta = s->arr_t[af];
            take_arr = e == NULL || ta < e->t ||
                       (ta == e->t && (EV_ARRIVAL < e->prio ||
                                       (EV_ARRIVAL == e->prio && s->arr_seq[af] < e->seq)));
        }
        const uint64_t te = take_arr ? s->arr_t[af] : (e ? e->t : SIM_INF);
        const uint32_t pe = take_arr ? (uint32_t)EV_ARRIVAL : (e ? e->prio : 0u);
        bool take_done = td != SIM_INF && (te == SIM_INF || td < te || (td == te && PRIO_DONE < pe));
        uint64_t t = take_done ? td : te;
        if (t >= t_end) break;
        s->now = t;
        s->events++;
        if (take_done) {
            sim_core *c = &s->core[cd];
            if (c->isr_line == SIM_NO_ISR)
                task_done(s, c, t);
            else if (isr_done(s, c, t) == LINE_TICK)
                tick_isr_done(s, c); /* the tick's handler ended: time slicing */
            kick(s, c, t);
            s->kick_mask &= ~(1u << cd);
        } else if (take_arr) {
            s->arr_t[af] = SIM_INF; /* taken; on_arrival sets the next */
            on_arrival(s, (uint32_t)af, t);
        } else {
            sim_event ev;
            evq_pop(&s->evq, &ev);
            handle_event(s, &ev);
        }
        /* Another core's task was woken, or a line enabled there. */
        while (s->kick_mask) {
            const uint32_t k = (uint32_t)lowest_bit(s->kick_mask);
            s->kick_mask &= ~(1u << k);
            kick(s, &s->core[k], t);
        }
    }
    s->now = t_end;
    if (t_end == s->cfg.duration_ns && !s->finished) {
        unfinished_cycles(s, t_end);
        close_bin(s, t_end);
        /* Buffer conservation: every frame dropped with one reason,
         * delivered, or still in the device. */
        uint64_t dropped = 0;
        for (int r = 0; r < RTSIM_DROP_COUNT; r++)
            dropped += s->totals.dropped[r];
        if (s->totals.offered != s->totals.delivered + dropped + rtsim_in_flight(s))
            fail(s, "conservation violated: offered != delivered + dropped + in flight");
        s->finished = true;
    }
    return s->error ? -1 : 0;
}

const char *rtsim_error(const rtsim *s)
{
    return s->error ? (s->errmsg ? s->errmsg : "internal error") : NULL;
}

uint64_t rtsim_now(const rtsim *s)
{
    return s->now;
}

uint64_t rtsim_events(const rtsim *s)
{
    return s->events;
}

uint64_t rtsim_arrivals_batched(const rtsim *s)
{
    return s->lost_batched;
}
