/* The FreeRTOS port: libshield's port hooks on FreeRTOS APIs (see
 * rts_port_freertos.h for the mapping and the contexts). */
#include "rts_port_freertos.h"

#include <string.h>

/* ------------------------------------------------------------------ time */

static uint64_t ticks64(rts_freertos *p, TickType_t now)
{
    /* Extend by delta: correct for any TickType_t width as long as a call
     * comes at least once per wrap. */
    p->tick_total += (uint64_t)(TickType_t)(now - p->tick_last);
    p->tick_last = now;
    return p->tick_total;
}

rts_time_ns rts_freertos_tick_ns_isr(rts_freertos *p)
{
    return ticks64(p, xTaskGetTickCountFromISR()) * p->tick_ns;
}

rts_time_ns rts_freertos_now_ns_isr(rts_freertos *p)
{
    if (p->cfg.clock_ns != NULL) return p->cfg.clock_ns(p->cfg.drv);
    return rts_freertos_tick_ns_isr(p);
}

rts_time_ns rts_freertos_now_ns(rts_freertos *p)
{
    if (p->cfg.clock_ns != NULL) return p->cfg.clock_ns(p->cfg.drv);
    taskENTER_CRITICAL();
    const rts_time_ns t = ticks64(p, xTaskGetTickCount()) * p->tick_ns;
    taskEXIT_CRITICAL();
    return t;
}

TickType_t rts_freertos_ticks_for(const rts_freertos *p, rts_time_ns delay_ns)
{
    uint64_t t = delay_ns / p->tick_ns + (delay_ns % p->tick_ns != 0u ? 1u : 0u);
    if (t == 0u) t = 1u;
    if (t >= (uint64_t)portMAX_DELAY) t = (uint64_t)portMAX_DELAY - 1u;
    return (TickType_t)t;
}

BaseType_t rts_freertos_take_woken(rts_freertos *p)
{
    const BaseType_t w = p->woken;
    p->woken = pdFALSE;
    return w;
}

/* ---------------------------------------------------------------- timers */

/* Arm timer t, one-shot, at absolute time `at` (ISR or critical section). */
static void arm_at(rts_freertos *p, unsigned t, rts_time_ns at)
{
    const rts_time_ns now = rts_freertos_now_ns_isr(p);
    const TickType_t ticks = rts_freertos_ticks_for(p, at > now ? at - now : 0u);
    BaseType_t woken = pdFALSE;
    p->timer_at[t] = at;
    p->armed |= 1u << t;
    p->stats.timer_arms++;
    if (xTimerChangePeriodFromISR(p->timer[t], ticks, &woken) != pdPASS) {
        p->stats.timer_queue_full++;
        p->armed &= ~(1u << t);
        RTS_ASSERT(0, "rts_port_freertos: timer command queue full (configTIMER_QUEUE_LENGTH)");
    }
    if (woken != pdFALSE) p->woken = pdTRUE;
}

static void timer_expired(TimerHandle_t h)
{
    rts_freertos *p = (rts_freertos *)pvTimerGetTimerID(h);
    unsigned t = 0;
    while (t < RTS_FREERTOS_TIMERS && p->timer[t] != h) t++;
    if (t == RTS_FREERTOS_TIMERS) return;
    const uint32_t bit = 1u << t;
    bool fire = false;
    taskENTER_CRITICAL();
    const rts_time_ns now = rts_freertos_now_ns_isr(p);
    if ((p->armed & bit) != 0u && now + p->tick_ns >= p->timer_at[t]) {
        if (p->timer_period[t] != 0u) {
            arm_at(p, t, p->timer_at[t] + p->timer_period[t]); /* periodic: next phase, no drift */
        } else {
            p->armed &= ~bit;
        }
        fire = (p->irq_on & bit) != 0u; /* interrupt off: the expiry is lost, as a masked one */
    }
    if (fire) {
        p->stats.timer_fires++;
    } else {
        p->stats.timer_stale++;
    }
    const BaseType_t woken = rts_freertos_take_woken(p);
    taskEXIT_CRITICAL();
    if (fire && p->cfg.on_timer != NULL) p->cfg.on_timer(p->cfg.timer_arg, t);
    (void)woken; /* the timer service task runs at the top priority: nothing to yield to */
}

rts_err rts_freertos_timer_periodic(rts_freertos *p, unsigned timer, rts_time_ns period_ns)
{
    if (p == NULL || timer >= RTS_FREERTOS_TIMERS || period_ns == 0u) return RTS_EINVAL;
    p->timer_period[timer] = period_ns;
    p->irq_on |= 1u << timer;
    arm_at(p, timer, rts_freertos_now_ns_isr(p) + period_ns);
    return (p->armed & (1u << timer)) != 0u ? RTS_OK : RTS_EFULL;
}

/* ----------------------------------------------------------- port hooks */

static void hook_irq_set_enabled(void *ctx, unsigned line, bool enabled)
{
    rts_freertos *p = ctx;
    if (line >= RTS_FREERTOS_TIMER_LINE) {
        const unsigned t = line - RTS_FREERTOS_TIMER_LINE;
        if (t >= RTS_FREERTOS_TIMERS) {
            p->stats.bad_ids++;
        } else if (enabled) {
            p->irq_on |= 1u << t;
        } else {
            p->irq_on &= ~(1u << t);
        }
        return;
    }
    p->stats.rx_irq_writes++;
    p->cfg.rx_irq_set(p->cfg.drv, line, enabled);
}

static void hook_irq_clear_pending(void *ctx, unsigned line)
{
    rts_freertos *p = ctx;
    /* A software timer has no pending bit: an expiry with its interrupt off
     * was discarded already. */
    if (line < RTS_FREERTOS_TIMER_LINE && p->cfg.rx_irq_clear_pending != NULL) {
        p->cfg.rx_irq_clear_pending(p->cfg.drv, line);
    }
}

static void hook_timer_arm(void *ctx, unsigned timer, rts_time_ns at)
{
    rts_freertos *p = ctx;
    if (timer >= RTS_FREERTOS_TIMERS) {
        p->stats.bad_ids++;
        return;
    }
    p->timer_period[timer] = 0u;
    arm_at(p, timer, at);
}

static void hook_timer_cancel(void *ctx, unsigned timer)
{
    rts_freertos *p = ctx;
    if (timer >= RTS_FREERTOS_TIMERS) {
        p->stats.bad_ids++;
        return;
    }
    BaseType_t woken = pdFALSE;
    p->armed &= ~(1u << timer);
    p->timer_period[timer] = 0u;
    p->stats.timer_cancels++;
    /* Even if the stop command waits in the queue, the cleared armed bit
     * keeps a late expiry from reaching on_timer. */
    if (xTimerStopFromISR(p->timer[timer], &woken) != pdPASS) p->stats.timer_queue_full++;
    if (woken != pdFALSE) p->woken = pdTRUE;
}

static void hook_cache_invalidate(void *ctx, const void *addr, size_t len)
{
    rts_freertos *p = ctx;
    if (p->cfg.cache_invalidate != NULL) p->cfg.cache_invalidate(p->cfg.drv, addr, len);
}

/* ------------------------------------------------------------------ init */

rts_err rts_freertos_init(rts_freertos *p, const rts_freertos_cfg *cfg)
{
    if (p == NULL || cfg == NULL || cfg->rx_irq_set == NULL) return RTS_EINVAL;
    memset(p, 0, sizeof *p);
    p->cfg = *cfg;
    p->tick_ns = 1000000000u / (uint64_t)configTICK_RATE_HZ;
    p->tick_last = xTaskGetTickCount();
    p->tick_total = (uint64_t)p->tick_last;
    p->irq_on = (RTS_FREERTOS_TIMERS == 32) ? 0xFFFFFFFFu : ((1u << RTS_FREERTOS_TIMERS) - 1u);
    for (unsigned t = 0; t < RTS_FREERTOS_TIMERS; t++) {
        p->timer[t] = xTimerCreateStatic("rts", 1, pdFALSE, p, timer_expired, &p->timer_mem[t]);
        if (p->timer[t] == NULL) return RTS_EINVAL; /* only with a NULL buffer: cannot happen */
    }
    p->port.ctx = p;
    p->port.irq_set_enabled = hook_irq_set_enabled;
    p->port.irq_clear_pending = hook_irq_clear_pending;
    p->port.timer_arm = hook_timer_arm;
    p->port.timer_cancel = hook_timer_cancel;
    p->port.cache_invalidate = hook_cache_invalidate;
    return RTS_OK;
}

/* ---------------------------------------------------------------- assert */

#if RTS_CONFIG_ASSERT
static void (*assert_hook)(const char *msg, const char *file, int line);

void rts_freertos_set_assert_hook(void (*hook)(const char *msg, const char *file, int line))
{
    assert_hook = hook;
}

void rts_port_assert_failed(const char *msg, const char *file, int line)
{
    if (assert_hook != NULL) assert_hook(msg, file, line);
    configASSERT(0);
    taskDISABLE_INTERRUPTS();
    for (;;) {
    }
}
#else
void rts_freertos_set_assert_hook(void (*hook)(const char *msg, const char *file, int line))
{
    (void)hook; /* RTS_CONFIG_ASSERT is 0: libshield checks nothing at run time */
}
#endif
