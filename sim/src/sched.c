/* The CPU scheduler: a fixed-priority preemptive RTOS on each core
 * (interrupts first, then the highest-priority ready task; round robin
 * among equals on the tick, with time slicing), and the jobs of the tasks
 * it runs: the critical periodic task's cycles, the network task's loop
 * (ask the mitigation, take a packet, hand it to its socket), the stock
 * driver's input task (ring to driver queue, a frame at a time), the workers
 * behind the sockets, the global limit's polling task. Tasks made ready
 * elsewhere (task_ready(), sim.h) are picked up here at the next pass. */
#include "sched.h"

#include "irq.h"
#include "measure.h"
#include "rx.h"
#include "sim_compiler.h"

/* The ready task of `core` to run: the highest priority, the longest
 * ready among equals (-1: none). */
static int pick_task(rtsim *s, uint32_t core)
{
    int best = -1;
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        sim_task *t = &s->task[i];
        if (t->cfg->core != core || t->state != TS_READY) continue;
        if (best < 0) {
            best = (int)i;
            continue;
        }
        sim_task *b = &s->task[best];
        if (t->prio > b->prio || (t->prio == b->prio && t->seq < b->seq))
            best = (int)i;
    }
    return best;
}

/* The driver's loop when it gets the CPU with no packet in hand: ask the
 * mitigation whether it may run (libshield driver_poll), then take a packet.
 * Returns true when the driver has a job, false when it blocked or sleeps. */
static bool driver_begin(rtsim *s, sim_task *t, uint64_t now)
{
    if (t->has_packet || t->polling) return true;
    uint64_t sleep_ns = 0;
    if ((hook_mask(&s->hk) & RTS_SHIELD_CALL_TASK_POLL) && !hook_task_poll(&s->hk, now, &sleep_ns)) {
        t->state = TS_BLOCKED;
        t->suspended = true;
        if (sleep_ns > 0) {
            t->sleeping = true;
            push_event(s, now + sleep_ns, EV_POLL, EV_POLL, t->idx, 0);
        }
        return false;
    }
    const rtsim_costs *k = &s->cfg.costs;
    const int64_t hook = (hook_mask(&s->hk) & RTS_SHIELD_HOOK_TASK) ? k->mitig_driver_ns : 0;
    /* A packet taken right after a wake-up carries the wake's cost; the
     * packets queued behind it are taken without one (a batch). */
    const int64_t wake = !t->woke                                       ? 0
                         : s->input >= 0 && k->driver_wake_input_ns > 0 ? k->driver_wake_input_ns
                                                                        : k->driver_wake_ns;
    if (s->cfg.rx.enabled) {
        /* The deferred half: the highest-priority waiting packet. */
        rts_rx_job job;
        if (!hook_task_next(&s->hk, now, &job)) {
            t->state = TS_BLOCKED;
            t->woke = false;
            return false;
        }
        t->pkt = s->bufpkt[job.buf];
        t->pkt.buf = job.buf;
        t->pkt.sflow = job.flow;
        t->pkt.sprio = job.prio;
        t->has_packet = true;
        t->woke = false;
        t->work = (uint64_t)(k->driver_per_packet_ns +
                             (s->cfg.rx.eager_invalidate ? 0 : k->invalidate_deferred_ns) + hook +
                             wake);
        t->remaining = t->work;
        return true;
    }
    if (s->rxq.len == 0) {
        t->state = TS_BLOCKED;
        t->woke = false;
        return false;
    }
    t->pkt = fifo_pop(&s->rxq);
    t->has_packet = true;
    t->woke = false;
    /* A packet for a worker's socket is handed over (driver_done); one
     * without a socket is only looked up and dropped. */
    const int64_t handover =
        (!s->cfg.flows[t->pkt.flow].unbound && s->flow_worker[t->pkt.flow] >= 0)
            ? k->driver_handover_ns
            : 0;
    t->remaining = (uint64_t)(k->driver_per_packet_ns + hook + wake + handover);
    return true;
}

/* The polling task of the global limit (Behnke §5.5): at a period start it
 * harvests what the ring holds, up to the capacity, then either stays in
 * polling mode or returns to interrupts (at the end of its job). */
static bool polling_begin(rtsim *s, sim_task *t, uint64_t now)
{
    if (t->has_packet) return true;
    if (!t->polling) {
        t->state = TS_BLOCKED;
        return false;
    }
    t->polling = false;
    t->has_packet = true; /* a job in hand: its end calls poll_end */
    t->remaining = rx_poll_harvest(s, now);
    return true;
}

/* The stock driver's input task takes the ring's next frame when it gets the
 * CPU (woken by the RX interrupt, it runs until the ring is empty): moving
 * it into the driver queue costs isr_per_packet, and input_resume when the
 * task was switched in for it. */
static bool input_begin(rtsim *s, sim_task *t)
{
    if (t->has_packet) return true;
    if (s->ring.len == 0) {
        t->state = TS_BLOCKED;
        t->woke = false;
        return false;
    }
    const rtsim_costs *k = &s->cfg.costs;
    t->pkt = fifo_pop(&s->ring);
    t->has_packet = true;
    t->remaining = (uint64_t)(k->isr_per_packet_ns + (t->woke ? k->input_resume_ns : 0));
    t->woke = false;
    return true;
}

static void input_done(rtsim *s, sim_task *t, uint64_t now)
{
    sim_pkt p = t->pkt;
    t->has_packet = false;
    t->st.jobs++;
    s->cur_bin.received++;
    s->flow_st[p.flow].received++;
    rx_to_queue(s, p, now);
}

/* A worker takes the next message from its mailbox when it gets the CPU. */
static bool worker_begin(rtsim *s, sim_task *t)
{
    if (t->has_packet) return true;
    if (t->mailbox.len == 0) {
        t->state = TS_BLOCKED;
        return false;
    }
    t->pkt = fifo_pop(&t->mailbox);
    t->has_packet = true;
    t->remaining = (uint64_t)t->cfg->work_ns;
    (void)s;
    return true;
}

/* Give the core to whatever should run now: a pending enabled interrupt,
 * else the highest-priority ready task (round robin among equals). */
void kick(rtsim *s, sim_core *c, uint64_t now)
{
    if (c->isr_line != SIM_NO_ISR || irq_take(s, c, now)) return;
    uint32_t core = (uint32_t)(c - s->core);
    stop_task(s, c, now);
    if (c->rotate) {
        c->rotate = false;
        if (c->cur >= 0 && s->task[c->cur].state == TS_READY) s->task[c->cur].seq = ++s->seq;
    }
    for (;;) {
        int n = pick_task(s, core);
        c->cur = n;
        if (n < 0) break;
        sim_task *t = &s->task[n];
        /* Switched in (from another task or idle) for a new packet: driver_wake. */
        if (n != c->last_cur && !t->has_packet) t->woke = true;
        if (t->cfg->kind == RTSIM_TASK_DRIVER    ? driver_begin(s, t, now)
            : t->cfg->kind == RTSIM_TASK_WORKER  ? worker_begin(s, t)
            : t->cfg->kind == RTSIM_TASK_POLLING ? polling_begin(s, t, now)
            : t->cfg->kind == RTSIM_TASK_INPUT   ? input_begin(s, t)
                                                 : true) {
            if (t->cfg->masks_rx) mask_begin(s, t);
            break;
        }
    }
    /* The driver's poll may have re-enabled a line with an interrupt pending. */
    if (irq_take(s, c, now)) return;
    acct_cpu(s, c, now);
    c->last_cur = c->cur;
    c->acct_ctx = c->cur >= 0 ? RTSIM_CTX_TASK0 + (uint32_t)c->cur : idle_ctx(core);
    if (s->trace != NULL && c->traced_cur != c->cur) {
        c->traced_cur = c->cur;
        trace_rec(s, now, RTSIM_TR_RUN, core, c->cur, 0);
    }
    c->seg_start = now;
}

void tick_isr_done(rtsim *s, sim_core *c)
{
    if (!s->cfg.time_slicing || c->cur < 0) return;
    sim_task *cur = &s->task[c->cur];
    if (cur->state != TS_READY) return;
    uint32_t core = (uint32_t)(c - s->core);
    for (uint32_t i = 0; i < s->cfg.n_tasks; i++) {
        sim_task *t = &s->task[i];
        if ((int)i != c->cur && t->cfg->core == core && t->state == TS_READY &&
            t->prio == cur->prio) {
            c->rotate = true;
            return;
        }
    }
}

static void periodic_done(rtsim *s, sim_task *t, uint64_t now)
{
    mask_end(s, t); /* the job's critical section ends with it */
    const rtsim_task_cfg *k = t->cfg;
    uint64_t P = (uint64_t)k->period_ns;
    int64_t earliness = (int64_t)t->deadline - (int64_t)now;
    t->st.jobs++;
    int64_t resp = (int64_t)(now - t->release);
    if (resp > t->st.max_response_ns) t->st.max_response_ns = resp;
    cycle_lateness(s, t, now);
    if (t->has_last) {
        int64_t ct = (int64_t)(now - t->last_finish);
        if (t->st.cycle_min_ns == 0 || ct < t->st.cycle_min_ns) t->st.cycle_min_ns = ct;
        if (ct > t->st.cycle_max_ns) t->st.cycle_max_ns = ct;
        if ((int)t->idx == s->critical) s->cycle_hist[rtsim_hist_index((uint64_t)ct)]++;
    }
    t->last_finish = now;
    t->has_last = true;
    trace_rec(s, now, RTSIM_TR_CYCLE_END, t->cfg->core, (int32_t)t->idx, earliness);
    if ((int)t->idx == s->critical) {
        s->cur_bin.cycles++;
        hook_cycle_end(&s->hk, now, t->deadline - P, t->deadline);
        detect_seen(s, now);
    }
    uint64_t work = (uint64_t)k->work_ns;
    if ((int)t->idx == s->critical && (hook_mask(&s->hk) & RTS_SHIELD_HOOK_REPORT))
        work += (uint64_t)s->cfg.costs.mitig_report_ns;
    if (earliness > 0) {
        /* Early: sleep until the next period (Danicki §3). */
        t->release = t->deadline;
        t->deadline = t->release + P;
        t->remaining = work;
        t->state = TS_BLOCKED;
        push_event(s, t->release, EV_RELEASE, EV_RELEASE, t->idx, 0);
    } else {
        /* On time or late: the next cycle starts at once. */
        t->release = now;
        t->deadline = now + P;
        t->remaining = work;
    }
}

static void worker_done(rtsim *s, sim_task *t, uint64_t now)
{
    sim_pkt p = t->pkt;
    t->has_packet = false;
    t->st.jobs++;
    int64_t resp = (int64_t)(now - p.t_arr);
    if (resp > t->st.max_response_ns) t->st.max_response_ns = resp;
    deliver(s, &p, now);
    if (t->mailbox.len == 0) t->state = TS_BLOCKED;
}

/* Hand a processed packet to the worker bound to it (its socket mailbox),
 * or count it delivered when nobody waits on the socket. */
static SIM_HOT_INLINE void to_socket(rtsim *s, sim_task *t, int w, sim_pkt p, uint64_t now)
{
    if (w < 0) {
        deliver(s, &p, now);
        return;
    }
    sim_task *wk = &s->task[w];
    if (!fifo_push(&wk->mailbox, p)) {
        count_drop(s, &p, RTSIM_DROP_MAILBOX_FULL);
    } else {
        task_ready(s, wk);
        if (wk->cfg->core != t->cfg->core) kick(s, &s->core[wk->cfg->core], now);
    }
}

/* The network task finished a packet of the receive path: libshield frees
 * its buffer, posts a spare one, recomputes the inherited priority; the
 * stack hands it to the socket bound to its flow. */
static void rx_driver_done(rtsim *s, sim_task *t, uint64_t now)
{
    sim_pkt p = t->pkt;
    t->has_packet = false;
    t->st.jobs++;
    s->cur_bin.processed++;
    s->flow_st[p.flow].processed++;
    rts_rx_job job = {p.buf, p.sflow, p.sprio};
    uint16_t refill = RTS_BUF_NONE;
    if (!hook_rx_task_done(&s->hk, now, &job, t->work, &refill))
        fail(s, "libshield refused a buffer handed back");
    if (refill != RTS_BUF_NONE) {
        sim_pkt e = {0, 0, refill, 0, 0, 0};
        if (!fifo_push(&s->posted, e)) fail(s, "posted buffers overflow");
    }
    if (hook_mask(&s->hk) & RTS_SHIELD_CALL_FILL) detect_seen(s, now); /* only the fill can fire here */
    const int owner = hook_flow_owner(&s->hk, p.sflow);
    if (p.sflow == RTS_FLOW_ARP || p.sflow == RTS_FLOW_ICMP) {
        deliver(s, &p, now); /* the stack itself consumes ARP and ICMP */
    } else if (owner >= 0) {
        to_socket(s, t, s->flow_worker[owner], p, now);
    } else {
        count_drop(s, &p, RTSIM_DROP_NO_SOCKET);
    }
    if (t->suspended) t->state = TS_BLOCKED;
}

static void driver_done(rtsim *s, sim_task *t, uint64_t now)
{
    if (t->polling) {
        /* One iteration of the sleep loop ended: poll the mitigation again
         * (in driver_begin, when the scheduler gives the driver the CPU). */
        t->polling = false;
        return;
    }
    if (s->cfg.rx.enabled) {
        rx_driver_done(s, t, now);
        return;
    }
    sim_pkt p = t->pkt;
    t->has_packet = false;
    t->st.jobs++;
    s->cur_bin.processed++;
    s->flow_st[p.flow].processed++;
    if (s->cfg.flows[p.flow].unbound)
        count_drop(s, &p, RTSIM_DROP_NO_SOCKET);
    else
        to_socket(s, t, s->flow_worker[p.flow], p, now);
    if (hook_mask(&s->hk) & RTS_SHIELD_CALL_TASK_DONE) {
        hook_task_done(&s->hk, now, (uint64_t)s->cfg.costs.driver_per_packet_ns, s->rxq.len);
        detect_seen(s, now);
    }
    if (t->suspended) t->state = TS_BLOCKED;
}

/* EV_POLL: the network task, suspended in a sleep loop, wakes for one
 * iteration of its loop (its poll costs mitig_poll). */
void driver_sleep_end(rtsim *s, sim_task *t, uint64_t now)
{
    if (!t->sleeping) return;
    t->sleeping = false;
    t->suspended = false;
    t->polling = true;
    t->remaining = (uint64_t)s->cfg.costs.mitig_poll_ns;
    task_ready(s, t);
    kick(s, &s->core[t->cfg->core], now);
}

/* The running task's job on core c ends: what its kind does then. */
void task_done(rtsim *s, sim_core *c, uint64_t now)
{
    sim_task *t = &s->task[c->cur];
    stop_task(s, c, now);
    t->remaining = 0;
    if (t->cfg->kind == RTSIM_TASK_PERIODIC) {
        periodic_done(s, t, now);
    } else if (t->cfg->kind == RTSIM_TASK_DRIVER) {
        driver_done(s, t, now);
    } else if (t->cfg->kind == RTSIM_TASK_WORKER) {
        worker_done(s, t, now);
    } else if (t->cfg->kind == RTSIM_TASK_INPUT) {
        input_done(s, t, now);
    } else if (t->cfg->kind == RTSIM_TASK_POLLING) {
        /* Harvest done: back to interrupts, or stay polling (Behnke §5.5). */
        t->has_packet = false;
        t->state = TS_BLOCKED;
        hook_poll_end(&s->hk, now);
        acct_rx_mode(s, now);
    }
}

/* ---- what the driver does itself when the shield decides so: the
 * operations the hooks are handed (sim_driver_ops), ctx the simulator */

static void driver_suspend(void *ctx, uint64_t now)
{
    rtsim *s = ctx;
    (void)now;
    if (s->driver < 0) return;
    sim_task *t = &s->task[s->driver];
    if (t->suspended) return;
    s->mst.suspends++;
    t->suspended = true;
    if (!t->has_packet && !t->polling) t->state = TS_BLOCKED;
}

static void driver_resume(void *ctx, uint64_t now)
{
    rtsim *s = ctx;
    (void)now;
    if (s->driver < 0) return;
    sim_task *t = &s->task[s->driver];
    if (!t->suspended || t->sleeping) return;
    s->mst.resumes++;
    t->suspended = false;
    if (t->has_packet || s->rxq.len > 0) task_ready(s, t);
}

static void driver_prio(void *ctx, uint64_t now, unsigned prio)
{
    rtsim *s = ctx;
    if (s->driver < 0) return;
    sim_task *t = &s->task[s->driver];
    if (t->prio == prio) return;
    t->prio = prio;
    s->rxst.prio_changes++;
    if (prio > s->cur_bin.net_prio_max) s->cur_bin.net_prio_max = prio;
    trace_rec(s, now, RTSIM_TR_PRIO, t->cfg->core, (int32_t)t->idx, (int64_t)prio);
    s->kick_mask |= 1u << t->cfg->core;
}

static void poll_wake(void *ctx, uint64_t now)
{
    rtsim *s = ctx;
    (void)now;
    if (s->polling < 0) return;
    sim_task *t = &s->task[s->polling];
    if (t->has_packet) return; /* still harvesting */
    t->polling = true;
    task_ready(s, t);
}

const sim_driver_ops driver_ops = {driver_suspend, driver_resume, driver_prio, poll_wake};
