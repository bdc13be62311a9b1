/* Running rts_shield decisions on FreeRTOS (see rts_shield_freertos.h). */
#include "rts_shield_freertos.h"

#include <string.h>

static UBaseType_t os_prio(unsigned p)
{
    return p < (unsigned)configMAX_PRIORITIES ? (UBaseType_t)p : (UBaseType_t)(configMAX_PRIORITIES - 1);
}

/* ------------------------------------------------------- priority sync */

void rts_freertos_shield_sync_prio(rts_freertos_shield *g)
{
    /* One critical section: no ISR can raise the shield's priority and no
     * other sync can run between the read and the set (vTaskPrioritySet()
     * yields, if it must, at its end, as it does inside its own critical
     * section). Compared with what was last set, not uxTaskPriorityGet(): a
     * mutex the task holds may lend it a higher priority, and
     * vTaskPrioritySet() sets the base under it. */
    rts_freertos_lock();
    const UBaseType_t p = os_prio(rts_shield_task_prio(g->sh));
    g->prio_stale = 0u;
    if (g->prio_set != (uint32_t)p) {
        g->prio_set = (uint32_t)p;
        g->stats.prio_sets++;
        if (p > g->stats.prio_max) g->stats.prio_max = (uint8_t)p;
        vTaskPrioritySet(g->net_task, p);
    }
    rts_freertos_unlock();
}

/* Runs in the timer service task, pended from an ISR. */
static void prio_pended(void *arg, uint32_t unused)
{
    (void)unused;
    rts_freertos_shield *g = arg;
    g->prio_pending = 0u; /* a raise after this point pends again */
    rts_freertos_shield_sync_prio(g);
}

static void defer_prio_isr(rts_freertos_shield *g, BaseType_t *woken)
{
    if (g->prio_pending != 0u) return; /* the queued sync will read the newest priority */
    g->prio_pending = 1u;
    if (xTimerPendFunctionCallFromISR(prio_pended, g, 0u, woken) == pdPASS) {
        g->stats.prio_deferred++;
    } else {
        g->prio_pending = 0u;
        g->prio_stale = 1u;
        g->stats.prio_defer_fails++;
    }
}

/* ------------------------------------------------------------- perform */

uint32_t rts_freertos_shield_perform_isr(rts_freertos_shield *g, const rts_shield_dec *d,
                                         BaseType_t *woken)
{
    const uint32_t f = rts_shield_apply(&g->fr->port, &g->gate, &g->map, d);
    if (rts_freertos_take_woken(g->fr) != pdFALSE) *woken = pdTRUE;
    if (f & RTS_SHIELD_F_PRIO) defer_prio_isr(g, woken);
    if (f & RTS_SHIELD_F_SUSPEND) g->stats.suspends++;
    if (f & RTS_SHIELD_F_RESUME) {
        g->stats.resumes++;
        vTaskNotifyGiveFromISR(g->net_task, woken);
    }
    if ((f & RTS_SHIELD_F_POLL) && g->poll_task != NULL) {
        g->stats.polls++;
        vTaskNotifyGiveFromISR(g->poll_task, woken);
    }
    if (f & RTS_SHIELD_F_RESCHEDULE) *woken = pdTRUE;
    return f;
}

void rts_freertos_shield_finish(rts_freertos_shield *g, uint32_t flags, BaseType_t woken)
{
    if ((flags & RTS_SHIELD_F_PRIO) || g->prio_stale != 0u) rts_freertos_shield_sync_prio(g);
    if (woken != pdFALSE || (flags & RTS_SHIELD_F_RESCHEDULE)) taskYIELD();
}

/* Task side: perform `d` inside the caller's critical section, except the
 * priority, which the caller syncs after unlocking (finish). */
static uint32_t perform_locked(rts_freertos_shield *g, const rts_shield_dec *d, BaseType_t *woken)
{
    rts_shield_dec copy = *d;
    copy.flags &= ~(uint32_t)RTS_SHIELD_F_PRIO;
    return rts_freertos_shield_perform_isr(g, &copy, woken) | (d->flags & RTS_SHIELD_F_PRIO);
}

/* ---------------------------------------------------------------- timers */

static void on_timer(void *arg, unsigned timer)
{
    rts_freertos_shield *g = arg;
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    uint32_t f = 0u;
    rts_freertos_lock();
    if (timer < RTS_SHIELD_TIMERS &&
        rts_shield_timer_isr(g->sh, timer, rts_freertos_now_ns_isr(g->fr), &d) == RTS_OK) {
        g->stats.timer_calls++;
        f = perform_locked(g, &d, &woken);
    }
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
}

/* ------------------------------------------------------------------ init */

rts_err rts_freertos_shield_init(rts_freertos_shield *g, rts_shield *sh, rts_freertos *fr,
                                 const rts_shield_cfg *cfg, const rts_freertos_shield_cfg *gcfg)
{
    if (g == NULL || sh == NULL || fr == NULL || cfg == NULL || gcfg == NULL || gcfg->net_task == NULL) {
        return RTS_EINVAL;
    }
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) {
        if (gcfg->rx_line[k] >= RTS_IRQ_GATE_MAX_LINES) return RTS_EINVAL;
    }
    memset(g, 0, sizeof *g);
    g->sh = sh;
    g->fr = fr;
    g->net_task = gcfg->net_task;
    g->poll_task = gcfg->poll_task;
    g->prio_set = UINT32_MAX; /* the first sync sets the base */
    for (unsigned k = 0; k < RTS_SHIELD_MAX_SOURCES; k++) g->map.rx_line[k] = gcfg->rx_line[k];
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        g->map.timer_hw[t] = t;
        g->map.timer_line[t] = RTS_FREERTOS_TIMER_LINE + t;
    }
    rts_irq_gate_init(&g->gate);
    fr->cfg.on_timer = on_timer;
    fr->cfg.timer_arg = g;

    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    uint32_t f = 0u;
    rts_freertos_lock();
    const rts_err e = rts_shield_init(sh, cfg, rts_freertos_now_ns_isr(fr), &d);
    if (e == RTS_OK) f = perform_locked(g, &d, &woken);
    rts_freertos_unlock();
    if (e != RTS_OK) return e;
    rts_freertos_shield_sync_prio(g); /* the network task starts at the shield's base priority */
    rts_freertos_shield_finish(g, f, woken);
    return RTS_OK;
}

void rts_freertos_shield_rx_enable(rts_freertos_shield *g, unsigned source, bool on)
{
    if (source >= RTS_SHIELD_MAX_SOURCES) return;
    const unsigned line = g->map.rx_line[source];
    rts_freertos_lock();
    const rts_gate_change c = rts_irq_gate_app_set(&g->gate, line, on);
    if (c == RTS_GATE_ENABLED || c == RTS_GATE_DISABLED) {
        g->fr->port.irq_set_enabled(g->fr->port.ctx, line, c == RTS_GATE_ENABLED);
    }
    rts_freertos_unlock();
}

rts_err rts_freertos_shield_bind(rts_freertos_shield *g, const rts_shield_flow *f, uint8_t *id)
{
    rts_freertos_lock();
    const rts_err e = rts_shield_bind(g->sh, f, rts_freertos_now_ns_isr(g->fr), id);
    rts_freertos_unlock();
    return e;
}

/* ------------------------------------------------------------ ISR hooks */

bool rts_freertos_shield_irq_isr(rts_freertos_shield *g, unsigned source, BaseType_t *woken)
{
    rts_shield_dec d;
    const bool admitted = rts_shield_rx_irq_isr(g->sh, source, rts_freertos_now_ns_isr(g->fr), &d);
    (void)rts_freertos_shield_perform_isr(g, &d, woken);
    return admitted;
}

rts_err rts_freertos_shield_frame_isr(rts_freertos_shield *g, unsigned buf, const uint8_t *frame,
                                      size_t len, unsigned desc_flow, unsigned desc_prio,
                                      rts_shield_rx *rx, uint32_t *flags, uint8_t *drop,
                                      BaseType_t *woken)
{
    rts_shield_dec d;
    const rts_time_ns now = rts_freertos_now_ns_isr(g->fr);
    const rts_time_ns tick = g->fr->cfg.clock_ns != NULL ? rts_freertos_tick_ns_isr(g->fr) : now;
    const rts_err e = rts_shield_rx_frame_isr(g->sh, buf, frame, len, desc_flow, desc_prio, now, tick, rx, &d);
    if (e != RTS_OK) {
        if (flags != NULL) *flags = 0u;
        return e;
    }
    const uint32_t f = rts_freertos_shield_perform_isr(g, &d, woken);
    if (rx->outcome == RTS_RX_QUEUED) {
        g->stats.notifies++;
        vTaskNotifyGiveFromISR(g->net_task, woken);
    }
    if (flags != NULL) *flags = f;
    if (drop != NULL) *drop = d.drop;
    return RTS_OK;
}

/* ------------------------------------------------------------ task side */

bool rts_freertos_shield_task_poll(rts_freertos_shield *g, rts_time_ns *sleep_ns)
{
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    rts_freertos_lock();
    const bool run = rts_shield_task_poll(g->sh, rts_freertos_now_ns_isr(g->fr), sleep_ns, &d);
    const uint32_t f = perform_locked(g, &d, &woken);
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
    return run;
}

rts_err rts_freertos_shield_task_next(rts_freertos_shield *g, rts_rx_job *job, rts_time_ns *sleep_ns)
{
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    rts_err e = RTS_ELIMIT;
    uint32_t f;
    *sleep_ns = 0u;
    rts_freertos_lock();
    const bool run = rts_shield_task_poll(g->sh, rts_freertos_now_ns_isr(g->fr), sleep_ns, &d);
    f = perform_locked(g, &d, &woken);
    if (run) {
        e = rts_shield_task_next(g->sh, job, &d);
        if (e == RTS_OK || e == RTS_EEMPTY) f |= perform_locked(g, &d, &woken);
    }
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
    return e;
}

rts_err rts_freertos_shield_task_done(rts_freertos_shield *g, const rts_rx_job *job, rts_time_ns work_ns,
                                      uint32_t fill, uint16_t *refill)
{
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    uint32_t f = 0u;
    rts_freertos_lock();
    const rts_err e =
        rts_shield_task_done(g->sh, job, rts_freertos_now_ns_isr(g->fr), work_ns, fill, refill, &d);
    if (e == RTS_OK) f = perform_locked(g, &d, &woken);
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
    return e;
}

void rts_freertos_shield_wait(rts_freertos_shield *g, rts_time_ns sleep_ns)
{
    if (sleep_ns > 0u) {
        vTaskDelay(rts_freertos_ticks_for(g->fr, sleep_ns));
    } else {
        (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
    }
}

uint32_t rts_freertos_shield_poll_begin(rts_freertos_shield *g)
{
    rts_freertos_lock();
    const uint32_t n = rts_shield_poll_begin(g->sh, rts_freertos_now_ns_isr(g->fr));
    rts_freertos_unlock();
    return n;
}

void rts_freertos_shield_poll_end(rts_freertos_shield *g)
{
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    rts_freertos_lock();
    rts_shield_poll_end(g->sh, rts_freertos_now_ns_isr(g->fr), &d);
    const uint32_t f = perform_locked(g, &d, &woken);
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
}

rts_err rts_freertos_shield_task_step(rts_freertos_shield *g, rts_freertos_process_fn *process,
                                      rts_freertos_repost_fn *repost, void *ctx)
{
    rts_rx_job job;
    rts_time_ns sleep = 0u;
    const rts_err next = rts_freertos_shield_task_next(g, &job, &sleep);
    if (next == RTS_EEMPTY || next == RTS_ELIMIT) {
        rts_freertos_shield_wait(g, sleep);
        return RTS_OK;
    }
    if (next != RTS_OK) return next;
    const rts_time_ns work_ns = process(ctx, &job);
    uint16_t refill = RTS_BUF_NONE;
    const rts_err e = rts_freertos_shield_task_done(g, &job, work_ns, 0u, &refill);
    if (refill != RTS_BUF_NONE) {
        rts_freertos_lock();
        repost(ctx, refill);
        rts_freertos_unlock();
    }
    return e;
}

uint32_t rts_freertos_shield_poll_step(rts_freertos_shield *g, rts_freertos_harvest_fn *harvest, void *ctx)
{
    (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY); /* F_POLL */
    const uint32_t max = rts_freertos_shield_poll_begin(g);
    BaseType_t woken = pdFALSE;
    rts_freertos_lock(); /* the RX ISR shares the shield and the ring */
    const uint32_t n = harvest(ctx, max, &woken);
    rts_freertos_unlock();
    if (woken != pdFALSE) taskYIELD();
    rts_freertos_shield_poll_end(g);
    return n;
}

rts_detect_cycle_result rts_freertos_shield_cycle_end(rts_freertos_shield *g, rts_time_ns start,
                                               rts_time_ns target)
{
    rts_shield_dec d;
    BaseType_t woken = pdFALSE;
    rts_freertos_lock();
    const rts_detect_cycle_result r = rts_shield_cycle_end(g->sh, start, target, rts_freertos_now_ns_isr(g->fr), &d);
    const uint32_t f = perform_locked(g, &d, &woken);
    rts_freertos_unlock();
    rts_freertos_shield_finish(g, f, woken);
    return r;
}
