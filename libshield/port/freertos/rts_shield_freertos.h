/**
 * @file rts_shield_freertos.h
 * @brief Running rts_shield decisions on FreeRTOS: the hooks of rts_shield.h
 *        with their decisions performed through the FreeRTOS port.
 *
 * rts_shield returns every decision as a value (rts_shield_dec). This glue
 * performs it: the port operations through rts_shield_apply() on the
 * adapter of rts_port_freertos.h (RX line through the irq gate, the shield's
 * timers as software timers), and the flags with FreeRTOS calls:
 *
 * | flag                     | in an ISR (or a task's critical section)        | in a task, after the critical section |
 * |--------------------------|-------------------------------------------------|---------------------------------------|
 * | RTS_SHIELD_F_PRIO        | deferred: xTimerPendFunctionCallFromISR() runs the priority sync in the timer service task | vTaskPrioritySet() |
 * | RTS_SHIELD_F_RESUME      | vTaskNotifyGiveFromISR(network task)            | (done in the critical section)        |
 * | RTS_SHIELD_F_SUSPEND     | recorded: the network task's next rts_shield_task_poll() refuses; never vTaskSuspend() | — |
 * | RTS_SHIELD_F_POLL        | vTaskNotifyGiveFromISR(polling task)            | (done in the critical section)        |
 * | RTS_SHIELD_F_RESCHEDULE  | *woken = pdTRUE (caller: portYIELD_FROM_ISR())  | taskYIELD()                           |
 * | a frame queued           | vTaskNotifyGiveFromISR(network task)            | —                                     |
 * | F_DROP, F_STOP, F_RECYCLED, F_DELIVER, F_LATCHED | returned: the driver acts on the frame at hand | |
 *
 * Priority sync. The network task's priority is always set to what the
 * shield says now (rts_shield_task_prio()), read and set in one critical
 * section, never to a value carried in an old decision: a deferred raise
 * and a task-side lowering can then arrive in any order and the last one
 * is right. Shield priorities map 1:1 onto FreeRTOS
 * priorities (both count upwards; values above configMAX_PRIORITIES - 1 are
 * clamped): bind flows with their receivers' task priorities.
 *
 * Contexts: `_isr` functions run in the RX ISR or the shield's interrupt
 * (priority at or below configMAX_SYSCALL_INTERRUPT_PRIORITY), or in a task
 * between rts_freertos_lock() and rts_freertos_unlock() (the polling task's
 * harvest); the caller yields on `*woken` (portYIELD_FROM_ISR(), or
 * taskYIELD() after unlocking). The other functions run in a task, outside a
 * critical section: each takes the critical section for its hook and
 * performs what needs a task afterwards.
 */
#ifndef RTSHIELD_RTS_SHIELD_FREERTOS_H
#define RTSHIELD_RTS_SHIELD_FREERTOS_H

#include "rts_port_freertos.h"

/** Where the shield meets the application. */
typedef struct rts_freertos_shield_cfg {
    TaskHandle_t net_task;  /**< the network task: priority inheritance, F_RESUME, frames queued */
    TaskHandle_t poll_task; /**< the global limit's polling task (F_POLL); NULL without a global limit */
    unsigned rx_line[RTS_SHIELD_MAX_SOURCES]; /**< the irq gate's line of RX source k (< RTS_IRQ_GATE_MAX_LINES),
                                                   passed to rx_irq_set(), which maps it to the hardware */
} rts_freertos_shield_cfg;

/** Counters of what the glue did. */
typedef struct rts_freertos_shield_stats {
    uint32_t prio_sets;        /**< vTaskPrioritySet() calls */
    uint32_t prio_deferred;    /**< priority syncs pended from an ISR */
    uint32_t prio_defer_fails; /**< pends the timer queue refused (synced at the next task-side call) */
    uint32_t resumes;          /**< F_RESUME */
    uint32_t suspends;         /**< F_SUSPEND */
    uint32_t polls;            /**< F_POLL */
    uint32_t notifies;         /**< network task notified: frame queued */
    uint32_t timer_calls;      /**< rts_shield_timer_isr() calls from the timer service task */
    uint8_t prio_max;          /**< highest FreeRTOS priority given to the network task */
    uint8_t pad[3];
} rts_freertos_shield_stats;

/** The glue's state, in caller storage. */
typedef struct rts_freertos_shield {
    rts_shield *sh;
    rts_freertos *fr;
    rts_irq_gate gate;
    rts_shield_map map;
    TaskHandle_t net_task;
    TaskHandle_t poll_task;
    volatile uint32_t prio_pending; /**< a priority sync is queued in the timer service task */
    volatile uint32_t prio_stale;   /**< a sync could not be queued: the next task-side call syncs */
    uint32_t prio_set;              /**< the network task's base priority as last set by the glue */
    rts_freertos_shield_stats stats;
} rts_freertos_shield;

/**
 * Initialise `sh` with `cfg` through the adapter `fr` (rts_freertos_init()
 * done; its on_timer is taken over) and perform the init decision (Budget
 * holds the line, the bursty limiter starts its timer). The RX lines stay
 * off until rts_freertos_shield_rx_enable().
 * Context: a task (scheduler running), RX interrupt not yet enabled. Cost: rts_shield_init().
 * @retval RTS_OK ready  @retval RTS_EINVAL a NULL pointer, no network task, an RX line
 *         >= RTS_IRQ_GATE_MAX_LINES, or rts_shield_init() refused `cfg` (sh->bad_field says why)
 */
rts_err rts_freertos_shield_init(rts_freertos_shield *g, rts_shield *sh, rts_freertos *fr,
                                 const rts_shield_cfg *cfg, const rts_freertos_shield_cfg *gcfg);

/** The application's enable of RX source `source` (the gate's application
 *  bit, Regehr & Duongsaa §4): the line is on when this is set and no
 *  protection holds it. Context: task. Cost: O(1). */
void rts_freertos_shield_rx_enable(rts_freertos_shield *g, unsigned source, bool on);

/** Bind a flow (bind()/setsockopt() of the socket layer). Context: task.
 *  @return as rts_shield_bind() */
rts_err rts_freertos_shield_bind(rts_freertos_shield *g, const rts_shield_flow *f, uint8_t *id);

/* ------------------------------------------------- interrupt side (_isr) */

/** Perform `d` from an ISR (or a task's critical section): operations, wake-ups,
 *  a deferred priority sync on F_PRIO. Cost: rts_shield_apply() + up to three
 *  FromISR calls. @return d->flags */
uint32_t rts_freertos_shield_perform_isr(rts_freertos_shield *g, const rts_shield_dec *d,
                                         BaseType_t *woken);

/** RX interrupt entry of `source`: rts_shield_rx_irq_isr() performed.
 *  @return true: the interrupt is admitted, harvest the descriptors */
bool rts_freertos_shield_irq_isr(rts_freertos_shield *g, unsigned source, BaseType_t *woken);

/**
 * One filled descriptor: rts_shield_rx_frame_isr() on buffer `buf` holding
 * `frame[0..len)` (NULL frame: `desc_flow`/`desc_prio`), performed; the
 * network task notified when the frame was queued.
 * @param[out] rx what the receive path did: re-post `rx->repost` to the ring
 * @param[out] flags the decision's flags: F_DROP (reason in `drop`), F_STOP
 *         (stop harvesting: leave the rest in the ring), F_RECYCLED
 * @param[out] drop the rts_shield_drop reason when F_DROP (may be NULL)
 * @return as rts_shield_rx_frame_isr()
 */
rts_err rts_freertos_shield_frame_isr(rts_freertos_shield *g, unsigned buf, const uint8_t *frame,
                                      size_t len, unsigned desc_flow, unsigned desc_prio,
                                      rts_shield_rx *rx, uint32_t *flags, uint8_t *drop,
                                      BaseType_t *woken);

/* ------------------------------------------------------------ task side */

/** Perform, in a task outside a critical section, what the flags returned by
 *  rts_freertos_shield_perform_isr() inside one still need: the priority
 *  sync (F_PRIO or a stale deferral) and the yield. Cost: see the priority sync. */
void rts_freertos_shield_finish(rts_freertos_shield *g, uint32_t flags, BaseType_t woken);

/** Set the network task's priority to the shield's, as described above.
 *  Context: task, outside a critical section. Cost: one vTaskPrioritySet()
 *  when the priority changed, inside the critical section. */
void rts_freertos_shield_sync_prio(rts_freertos_shield *g);

/**
 * The network task asks for its next packet: rts_shield_task_poll()
 * (Hysteresis, Budget) then rts_shield_task_next() (receive path on).
 * @retval RTS_OK `*job` to process, then rts_freertos_shield_task_done()
 * @retval RTS_EEMPTY nothing waits: rts_freertos_shield_wait(g, 0)
 * @retval RTS_ELIMIT a protection holds the task: rts_freertos_shield_wait(g, *sleep_ns)
 * @retval RTS_EINVAL receive path off (use rts_freertos_shield_task_poll())
 */
rts_err rts_freertos_shield_task_next(rts_freertos_shield *g, rts_rx_job *job, rts_time_ns *sleep_ns);

/** rts_shield_task_poll() alone (receive path off: the driver queue is the
 *  driver's). @return true: take a packet; false: wait `*sleep_ns` (0: until resumed) */
bool rts_freertos_shield_task_poll(rts_freertos_shield *g, rts_time_ns *sleep_ns);

/** The network task completed `job` (NULL with the receive path off, `fill`
 *  the driver queue's) after `work_ns`: rts_shield_task_done() performed;
 *  `*refill` is a spare buffer for the ring or RTS_BUF_NONE.
 *  @return as rts_shield_task_done() */
rts_err rts_freertos_shield_task_done(rts_freertos_shield *g, const rts_rx_job *job, rts_time_ns work_ns,
                                      uint32_t fill, uint16_t *refill);

/** Block the calling network task: `sleep_ns` > 0 for that long
 *  (vTaskDelay), 0 until notified (a frame queued, F_RESUME). */
void rts_freertos_shield_wait(rts_freertos_shield *g, rts_time_ns sleep_ns);

/** The polling task woke (F_POLL): how many descriptors it may harvest now,
 *  each through rts_freertos_shield_frame_isr() inside rts_freertos_lock(). */
uint32_t rts_freertos_shield_poll_begin(rts_freertos_shield *g);

/** The polling task finished harvesting: back to interrupts or stay polling. */
void rts_freertos_shield_poll_end(rts_freertos_shield *g);

/* ------------------------------------- the driver's tasks, one turn each */

/** A driver's function that hands the frame in `job->buf` to the stack and
 *  returns the ns of work that took (charged by rts_shield_task_done()). */
typedef rts_time_ns rts_freertos_process_fn(void *ctx, const rts_rx_job *job);

/** A driver's function that gives buffer `buf` back to the RX descriptor
 *  ring; called inside rts_freertos_lock(). */
typedef void rts_freertos_repost_fn(void *ctx, uint16_t buf);

/** A driver's function that harvests at most `max` filled descriptors, each
 *  through rts_freertos_shield_frame_isr() (as its RX ISR does); called
 *  inside rts_freertos_lock(). @return the descriptors taken */
typedef uint32_t rts_freertos_harvest_fn(void *ctx, uint32_t max, BaseType_t *woken);

/**
 * One turn of the network task's loop (receive path on, the interface's
 * handler task as the network task): rts_freertos_shield_task_next(); when
 * nothing is to be done, rts_freertos_shield_wait() as it says and return;
 * else `process(ctx, job)`, rts_freertos_shield_task_done() with the work
 * it reports, and the spare buffer that frees, if any, given back with
 * `repost(ctx, buf)` inside rts_freertos_lock().
 * Context: the network task, outside a critical section. Cost: the calls named.
 * @retval RTS_OK a frame processed, or nothing to do and waited
 * @retval RTS_EINVAL receive path off
 * @return otherwise rts_freertos_shield_task_done()'s error
 */
rts_err rts_freertos_shield_task_step(rts_freertos_shield *g, rts_freertos_process_fn *process,
                                      rts_freertos_repost_fn *repost, void *ctx);

/**
 * One turn of the global limit's polling task: block until notified
 * (F_POLL), rts_freertos_shield_poll_begin(), `harvest(ctx, n, &woken)` of
 * at most that many descriptors inside rts_freertos_lock(), taskYIELD() when
 * woken, rts_freertos_shield_poll_end().
 * Context: the polling task. Cost: O(1) + the harvest.
 * @return the descriptors harvested
 */
uint32_t rts_freertos_shield_poll_step(rts_freertos_shield *g, rts_freertos_harvest_fn *harvest, void *ctx);

/** The critical task ended a cycle (detection, Hysteresis, Budget).
 *  @return the cycle's metrics */
rts_detect_cycle_result rts_freertos_shield_cycle_end(rts_freertos_shield *g, rts_time_ns start,
                                               rts_time_ns target);

#endif /* RTSHIELD_RTS_SHIELD_FREERTOS_H */
