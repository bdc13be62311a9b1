/**
 * @file rts_port_freertos.h
 * @brief The FreeRTOS port: libshield's port hooks on FreeRTOS APIs.
 *
 * What this adapter maps, and onto which FreeRTOS calls:
 *
 * | libshield needs                      | FreeRTOS (this adapter)                                 |
 * |--------------------------------------|---------------------------------------------------------|
 * | critical section, task context       | rts_freertos_lock() / _unlock(): taskENTER_CRITICAL()   |
 * | critical section, ISR context        | rts_freertos_lock_isr() / _unlock_isr(): taskENTER_CRITICAL_FROM_ISR() |
 * | RX interrupt enable / disable        | the driver's rx_irq_set() callback (NVIC, GIC, a MAC register) |
 * | RX pending bit clear                 | the driver's rx_irq_clear_pending() callback (optional) |
 * | one-shot timers (rts_port timer_arm) | one static software timer per timer id, xTimerChangePeriodFromISR() |
 * | periodic timers                      | rts_freertos_timer_periodic(): the same timer, auto-reload |
 * | a timer's interrupt on / off         | a per-timer enable bit: an expiry while off is discarded |
 * | time in ns                           | the tick count x tick period, or the driver's hardware counter |
 * | cache invalidation                   | the driver's cache_invalidate() callback (optional)     |
 * | RTS_ASSERT (RTS_CONFIG_ASSERT = 1)   | rts_port_assert_failed(): hook, configASSERT(), halt    |
 *
 * Task priority changes (priority inheritance, Behnke et al.) and the
 * network/polling task wake-ups are rts_shield decisions: see
 * rts_shield_freertos.h, which performs every decision through this port.
 *
 * Contexts. `port` holds one set of hooks, built on the FromISR variants of
 * the FreeRTOS calls: they never block and never yield. Call them (that is,
 * rts_port_apply() or rts_shield_apply() on `port`) from an ISR whose
 * priority is at or below configMAX_SYSCALL_INTERRUPT_PRIORITY, or from a
 * task inside a critical section. Either way the caller collects
 * rts_freertos_take_woken() before leaving and yields: portYIELD_FROM_ISR()
 * in an ISR, taskYIELD() after taskEXIT_CRITICAL() in a task.
 *
 * Timers. A shield timer is a FreeRTOS software timer (static storage):
 * resolution one tick, callback in the timer service task. The adapter
 * remembers the armed time and discards an expiry that the timer service
 * delivers more than one tick before it: the service task reads its
 * command queue before each expiry, but a re-arm sent from an ISR just
 * after that read would otherwise let the old expiry through. A cancelled
 * timer, or one whose interrupt is off, never reaches on_timer. With a driver clock (clock_ns) finer than the
 * tick, a timer may fire up to one tick before its time. Set
 * configTIMER_TASK_PRIORITY at or above every task the shield protects
 * against (configMAX_PRIORITIES - 1 is the usual choice) so expiries and
 * deferred priority changes take effect at once.
 *
 * Requires configSUPPORT_STATIC_ALLOCATION, configUSE_TIMERS,
 * INCLUDE_xTimerPendFunctionCall and INCLUDE_vTaskPrioritySet set to 1 in
 * FreeRTOSConfig.h. No heap.
 */
#ifndef RTSHIELD_RTS_PORT_FREERTOS_H
#define RTSHIELD_RTS_PORT_FREERTOS_H

#include "FreeRTOS.h"
#include "task.h"
#include "timers.h"

#include "rtshield/rts_port.h"
#include "rtshield/rts_shield.h"

#if !defined(configSUPPORT_STATIC_ALLOCATION) || (configSUPPORT_STATIC_ALLOCATION != 1)
#error "rts_port_freertos: set configSUPPORT_STATIC_ALLOCATION to 1 (the adapter's timers are static)"
#endif
#if !defined(configUSE_TIMERS) || (configUSE_TIMERS != 1)
#error "rts_port_freertos: set configUSE_TIMERS to 1 (the shield's timers are software timers)"
#endif
#if !defined(INCLUDE_xTimerPendFunctionCall) || (INCLUDE_xTimerPendFunctionCall != 1)
#error "rts_port_freertos: set INCLUDE_xTimerPendFunctionCall to 1 (priority changes from an ISR are deferred)"
#endif
#if !defined(INCLUDE_vTaskPrioritySet) || (INCLUDE_vTaskPrioritySet != 1)
#error "rts_port_freertos: set INCLUDE_vTaskPrioritySet to 1 (priority inheritance of the network task)"
#endif

/** Timers the adapter owns (ids 0..RTS_FREERTOS_TIMERS-1); by default one
 *  per shield timer. RAM: one StaticTimer_t (about 44 B on Cortex-M3) and
 *  20 B of state per timer. */
#ifndef RTS_FREERTOS_TIMERS
#define RTS_FREERTOS_TIMERS (2 + RTS_SHIELD_MAX_SOURCES)
#endif
#if RTS_FREERTOS_TIMERS < 1 || RTS_FREERTOS_TIMERS > 32
#error "RTS_FREERTOS_TIMERS must be in 1..32 (one enable bit per timer in a uint32_t)"
#endif
RTS_STATIC_ASSERT(RTS_FREERTOS_TIMERS >= RTS_SHIELD_TIMERS, "RTS_FREERTOS_TIMERS: one timer per shield timer");

/** Interrupt lines from this value on name a timer's interrupt
 *  (RTS_FREERTOS_TIMER_LINE + timer id), for rts_shield_map.timer_line and
 *  rts_port_target.timer_line; lines below it are the driver's RX lines. */
#define RTS_FREERTOS_TIMER_LINE 0x100u

/** What the driver supplies. Only rx_irq_set is required. */
typedef struct rts_freertos_cfg {
    void *drv; /**< passed back to every callback */
    /** Enable or disable RX interrupt `line` (e.g. NVIC_EnableIRQ()). ISR
     *  context or a task's critical section: a register write, no blocking. */
    void (*rx_irq_set)(void *drv, unsigned line, bool enabled);
    /** Clear RX line `line`'s pending bit (NULL: nothing to clear). */
    void (*rx_irq_clear_pending)(void *drv, unsigned line);
    /** A free-running hardware counter in ns (NULL: the tick count x the tick
     *  period). Any context, no blocking; must not wrap within the device's run. */
    uint64_t (*clock_ns)(void *drv);
    /** Invalidate the data cache over [addr, addr+len) (NULL: no D-cache). */
    void (*cache_invalidate)(void *drv, const void *addr, size_t len);
    /** A timer expired with its interrupt on; runs in the timer service task.
     *  rts_shield_freertos.h installs its own; NULL: expiries are only counted. */
    void (*on_timer)(void *arg, unsigned timer);
    void *timer_arg; /**< first argument of on_timer */
} rts_freertos_cfg;

/** Counters, for tests and field diagnosis. */
typedef struct rts_freertos_stats {
    uint32_t rx_irq_writes;  /**< rx_irq_set() calls */
    uint32_t timer_arms;     /**< one-shot and periodic starts */
    uint32_t timer_cancels;
    uint32_t timer_fires;    /**< expiries passed to on_timer */
    uint32_t timer_stale;    /**< expiries discarded: cancelled, re-armed or interrupt off */
    uint32_t timer_queue_full; /**< a command the timer queue refused (raise configTIMER_QUEUE_LENGTH) */
    uint32_t bad_ids;        /**< a hook called with an unknown timer id */
} rts_freertos_stats;

/** The adapter's state, in caller storage. */
typedef struct rts_freertos {
    rts_port port;             /**< the hooks to hand to libshield */
    rts_freertos_cfg cfg;
    uint64_t tick_ns;          /**< 1e9 / configTICK_RATE_HZ */
    TimerHandle_t timer[RTS_FREERTOS_TIMERS];
    StaticTimer_t timer_mem[RTS_FREERTOS_TIMERS];
    rts_time_ns timer_at[RTS_FREERTOS_TIMERS]; /**< armed expiry (one-shot) */
    rts_time_ns timer_period[RTS_FREERTOS_TIMERS]; /**< periodic: period; one-shot: 0 */
    volatile uint32_t armed;   /**< bit per timer: armed */
    volatile uint32_t irq_on;  /**< bit per timer: its "interrupt" enabled */
    BaseType_t woken;          /**< a FromISR call woke a higher-priority task */
    TickType_t tick_last;      /**< tick extension to 64 bits: last tick seen */
    uint64_t tick_total;       /**< ticks since the kernel started, never wraps */
    rts_freertos_stats stats;
} rts_freertos;

/**
 * Create the timers (static, not started) and fill `p->port`.
 * Context: task or before the scheduler starts. Cost: RTS_FREERTOS_TIMERS xTimerCreateStatic().
 * @retval RTS_OK ready
 * @retval RTS_EINVAL NULL `p` or `cfg`, or no rx_irq_set callback
 */
rts_err rts_freertos_init(rts_freertos *p, const rts_freertos_cfg *cfg);

/** Now in ns, on the clock the shield is given (driver counter or ticks).
 *  The tick count is extended to 64 bits by delta, so with the tick clock
 *  some call must come at least once per TickType_t wrap (49 days at 1 kHz
 *  with 32-bit ticks; every hook of the shield is such a call).
 *  Context: task, outside or inside a critical section. Cost: O(1). */
rts_time_ns rts_freertos_now_ns(rts_freertos *p);

/** Now in ns. Context: ISR, or a task inside a critical section. Cost: O(1). */
rts_time_ns rts_freertos_now_ns_isr(rts_freertos *p);

/** The OS tick time in ns (Danicki et al.'s Burst Mitigation counts in OS
 *  ticks). Context: ISR, or a task inside a critical section. Cost: O(1). */
rts_time_ns rts_freertos_tick_ns_isr(rts_freertos *p);

/** Start timer `timer` as a periodic timer of `period_ns` (rounded up to
 *  whole ticks, at least one); its expiries go to on_timer until it is
 *  cancelled (the port's timer_cancel) or re-armed as one-shot.
 *  Context: ISR, or a task inside a critical section. Cost: one timer command.
 *  @retval RTS_OK started  @retval RTS_EINVAL unknown timer or period 0
 *  @retval RTS_EFULL the timer command queue is full */
rts_err rts_freertos_timer_periodic(rts_freertos *p, unsigned timer, rts_time_ns period_ns);

/** Whether a FromISR call made through the hooks woke a higher-priority
 *  task since the last call; clears it. Context: where the hooks ran, before
 *  leaving the ISR or the critical section. Cost: O(1). */
BaseType_t rts_freertos_take_woken(rts_freertos *p);

/** Ticks from now until `delay_ns` has passed: rounded up, at least one,
 *  capped at portMAX_DELAY - 1. Context: any. Cost: one 64-bit division. */
TickType_t rts_freertos_ticks_for(const rts_freertos *p, rts_time_ns delay_ns);

/* Critical sections. The task pair nests (the kernel counts); the ISR pair
 * nests by saving the mask, restore in reverse order. Both mask every
 * interrupt at or below configMAX_SYSCALL_INTERRUPT_PRIORITY, which must
 * include the RX interrupt and any interrupt that calls the shield. */

/** Enter a critical section from a task. Cost: a mask write, a counter. */
static inline void rts_freertos_lock(void)
{
    taskENTER_CRITICAL();
}

/** Leave a critical section entered with rts_freertos_lock(). */
static inline void rts_freertos_unlock(void)
{
    taskEXIT_CRITICAL();
}

/** Enter a critical section from an ISR; returns the mask to restore. */
static inline UBaseType_t rts_freertos_lock_isr(void)
{
    return taskENTER_CRITICAL_FROM_ISR();
}

/** Leave a critical section entered with rts_freertos_lock_isr(). */
static inline void rts_freertos_unlock_isr(UBaseType_t saved)
{
    taskEXIT_CRITICAL_FROM_ISR(saved);
}

/** With RTS_CONFIG_ASSERT = 1 the adapter defines rts_port_assert_failed():
 *  it calls this hook (when set; e.g. log over a UART or semihosting), then
 *  configASSERT(0), then masks interrupts and halts. Context: any. */
void rts_freertos_set_assert_hook(void (*hook)(const char *msg, const char *file, int line));

#endif /* RTSHIELD_RTS_PORT_FREERTOS_H */
