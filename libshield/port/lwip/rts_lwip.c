/* libshield in the receive path of an lwIP network interface (see rts_lwip.h). */
#include "rts_lwip.h"

#include <string.h>

#include "lwip/stats.h"
#include "lwip/sys.h"

static uint8_t *buf_addr(const rts_lwip *l, uint16_t buf)
{
    return l->cfg.buf_mem + (size_t)buf * l->cfg.buf_size;
}

static void post(rts_lwip *l, uint16_t buf)
{
    l->cfg.post(l->cfg.drv, buf, buf_addr(l, buf));
}

/* [to-lwip] */
/* An admitted frame into a PBUF_POOL pbuf, then to lwIP: the only place the
 * receive path takes a pbuf. Network task (or main loop), unmasked. */
static void to_lwip(rts_lwip *l, const rts_rx_job *job)
{
    const uint8_t *frame = buf_addr(l, job->buf);
    const uint16_t len = l->len[job->buf];
    rts_rx_driver_task_invalidate(&l->sh.rx, frame, len); /* the rest of the frame's cache lines */
    if (job->prio > l->stats.prio_max) l->stats.prio_max = job->prio;
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(len + ETH_PAD_SIZE), PBUF_POOL);
    if (p == NULL) { /* the pool is held by the application: count as lwIP's drivers do */
        l->stats.no_pbuf++;
        LINK_STATS_INC(link.memerr);
        LINK_STATS_INC(link.drop);
        return;
    }
#if ETH_PAD_SIZE
    (void)pbuf_remove_header(p, ETH_PAD_SIZE); /* the pad stays in front of the Ethernet header */
#endif
    (void)pbuf_take(p, frame, len);
#if ETH_PAD_SIZE
    (void)pbuf_add_header(p, ETH_PAD_SIZE);
#endif
    LINK_STATS_INC(link.recv);
    if (l->cfg.netif->input(p, l->cfg.netif) != ERR_OK) {
        pbuf_free(p);
        l->stats.input_err++;
        LINK_STATS_INC(link.drop);
        return;
    }
    l->stats.to_lwip++;
}
/* [to-lwip end] */

static bool cfg_valid(const rts_lwip *l, const rts_lwip_cfg *cfg, const rts_shield_cfg *shield)
{
    if (l == NULL || cfg == NULL || shield == NULL || cfg->netif == NULL || cfg->netif->input == NULL ||
        cfg->buf_mem == NULL || cfg->buf_size == 0u || cfg->buf_size > 0xFFFFu || cfg->post == NULL ||
        cfg->rx_irq_set == NULL) {
        return false;
    }
    if (NO_SYS && cfg->clock_ns == NULL) return false;
    if (shield->nbufs > RTS_LWIP_BUFS) return false;
#if !NO_SYS
    if (cfg->place == RTS_LWIP_RX_TASK && RTS_LWIP_RX_STACK < configMINIMAL_STACK_SIZE) return false;
    if (shield->global_capacity > 0u && RTS_LWIP_POLL_STACK < configMINIMAL_STACK_SIZE) return false;
#endif
    return shield->global_capacity == 0u || cfg->harvest != NULL;
}

/* The shield's configuration as the adapter runs it. */
static rts_shield_cfg shield_cfg(const rts_shield_cfg *shield)
{
    rts_shield_cfg c = *shield;
    c.protections |= RTS_SHIELD_RX_PATH;
    return c;
}

#if NO_SYS
/* ====================================================== NO_SYS: main loop */

static void nosys_irq_set(void *ctx, unsigned line, bool on)
{
    rts_lwip *l = ctx;
    if (line < RTS_LWIP_TIMER_LINE) {
        l->cfg.rx_irq_set(l->cfg.drv, on);
        return;
    }
    const unsigned t = line - RTS_LWIP_TIMER_LINE;
    if (t >= RTS_SHIELD_TIMERS) return;
    if (on) {
        l->timer_irq_on |= 1u << t;
    } else {
        l->timer_irq_on &= ~(1u << t);
    }
}

static void nosys_timer_arm(void *ctx, unsigned t, rts_time_ns at)
{
    rts_lwip *l = ctx;
    if (t >= RTS_SHIELD_TIMERS) return;
    l->timer_at[t] = at;
    l->timer_armed |= 1u << t;
}

static void nosys_timer_cancel(void *ctx, unsigned t)
{
    rts_lwip *l = ctx;
    if (t < RTS_SHIELD_TIMERS) l->timer_armed &= ~(1u << t);
}

static void nosys_cache(void *ctx, const void *addr, size_t len)
{
    rts_lwip *l = ctx;
    if (l->cfg.cache_invalidate != NULL) l->cfg.cache_invalidate(l->cfg.drv, addr, len);
}

static rts_time_ns now_ns(rts_lwip *l)
{
    return l->cfg.clock_ns(l->cfg.drv);
}

/* Perform a decision: port operations; F_POLL starts a polling step. No
 * task to raise (F_PRIO), suspend or resume: the main loop asks the shield
 * every turn. ISR, or the main loop inside SYS_ARCH_PROTECT. */
static uint32_t perform(rts_lwip *l, const rts_shield_dec *d)
{
    const uint32_t f = rts_shield_apply(&l->port, &l->gate, &l->map, d);
    if (f & RTS_SHIELD_F_POLL) l->poll_pending = 1u;
    return f;
}

rts_err rts_lwip_init(rts_lwip *l, const rts_lwip_cfg *cfg, const rts_shield_cfg *shield)
{
    if (!cfg_valid(l, cfg, shield)) return RTS_EINVAL;
    memset(l, 0, sizeof *l);
    l->cfg = *cfg;
    if (l->cfg.batch == 0u) l->cfg.batch = RTS_LWIP_BATCH;
    l->port = (rts_port){.ctx = l,
                         .irq_set_enabled = nosys_irq_set,
                         .timer_arm = nosys_timer_arm,
                         .timer_cancel = nosys_timer_cancel,
                         .cache_invalidate = nosys_cache};
    rts_irq_gate_init(&l->gate);
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        l->map.timer_hw[t] = t;
        l->map.timer_line[t] = RTS_LWIP_TIMER_LINE + t;
    }
    l->timer_irq_on = (1u << RTS_SHIELD_TIMERS) - 1u;
    const rts_shield_cfg c = shield_cfg(shield);
    rts_shield_dec d;
    SYS_ARCH_DECL_PROTECT(lev);
    SYS_ARCH_PROTECT(lev);
    rts_err e = rts_shield_init(&l->sh, &c, now_ns(l), &d);
    if (e == RTS_OK) {
        (void)perform(l, &d);
        for (uint16_t b = 0; b < c.ring_size; b++) post(l, b); /* buffers 0..ring_size-1 */
        l->up = 1u;
        if (rts_irq_gate_app_set(&l->gate, 0u, true) == RTS_GATE_ENABLED) l->cfg.rx_irq_set(l->cfg.drv, true);
    }
    SYS_ARCH_UNPROTECT(lev);
    return e;
}

rts_err rts_lwip_bind(rts_lwip *l, const rts_shield_flow *f, uint8_t *id)
{
    SYS_ARCH_DECL_PROTECT(lev);
    SYS_ARCH_PROTECT(lev);
    const rts_err e = rts_shield_bind(&l->sh, f, now_ns(l), id);
    SYS_ARCH_UNPROTECT(lev);
    return e;
}

bool rts_lwip_irq_isr(rts_lwip *l, rts_lwip_woken *woken)
{
    (void)woken;
    if (l->up == 0u) return false;
    rts_shield_dec d;
    const bool admitted = rts_shield_rx_irq_isr(&l->sh, 0u, now_ns(l), &d);
    (void)perform(l, &d);
    if (admitted) l->stats.rx_irqs++;
    return admitted;
}

rts_detect_cycle_result rts_lwip_cycle_end(rts_lwip *l, rts_time_ns start, rts_time_ns target)
{
    rts_shield_dec d;
    SYS_ARCH_DECL_PROTECT(lev);
    SYS_ARCH_PROTECT(lev);
    const rts_detect_cycle_result r = rts_shield_cycle_end(&l->sh, start, target, now_ns(l), &d);
    (void)perform(l, &d);
    SYS_ARCH_UNPROTECT(lev);
    return r;
}

/* The shield's timers whose deadline passed, each as its interrupt would. */
static void run_timers(rts_lwip *l)
{
    for (unsigned t = 0; t < RTS_SHIELD_TIMERS; t++) {
        const uint32_t bit = 1u << t;
        if ((l->timer_armed & l->timer_irq_on & bit) == 0u) continue;
        SYS_ARCH_DECL_PROTECT(lev);
        SYS_ARCH_PROTECT(lev);
        const rts_time_ns now = now_ns(l);
        if ((l->timer_armed & bit) != 0u && l->timer_at[t] <= now) {
            l->timer_armed &= ~bit;
            rts_shield_dec d;
            if (rts_shield_timer_isr(&l->sh, t, now, &d) == RTS_OK) (void)perform(l, &d);
        }
        SYS_ARCH_UNPROTECT(lev);
    }
}

/* The global limit's polling step: at most what the period allows, through
 * the driver's own descriptor loop, then back to interrupts or not. */
static void poll_step(rts_lwip *l)
{
    if (l->poll_pending == 0u) return;
    l->poll_pending = 0u;
    SYS_ARCH_DECL_PROTECT(lev);
    SYS_ARCH_PROTECT(lev);
    const rts_time_ns now = now_ns(l);
    const uint32_t max = rts_shield_poll_begin(&l->sh, now);
    rts_lwip_woken woken = 0;
    const uint32_t n = l->cfg.harvest(l->cfg.drv, max, &woken);
    rts_shield_dec d;
    rts_shield_poll_end(&l->sh, now_ns(l), &d);
    (void)perform(l, &d);
    SYS_ARCH_UNPROTECT(lev);
    l->stats.polls++;
    l->stats.polled += n;
}

/* [nosys-poll] */
uint32_t rts_lwip_poll(rts_lwip *l)
{
    if (l->up == 0u) return 0u;
    run_timers(l);
    poll_step(l);
    uint32_t n = 0;
    while (n < l->cfg.batch) {
        rts_shield_dec d;
        rts_time_ns sleep = 0;
        rts_rx_job job;
        SYS_ARCH_DECL_PROTECT(lev);
        SYS_ARCH_PROTECT(lev);
        const bool run = rts_shield_task_poll(&l->sh, now_ns(l), &sleep, &d); /* hysteresis, budget */
        (void)perform(l, &d);
        const rts_err e = run ? rts_shield_task_next(&l->sh, &job, &d) : RTS_ELIMIT;
        if (run) (void)perform(l, &d);
        SYS_ARCH_UNPROTECT(lev);
        if (e != RTS_OK) break; /* nothing waiting, or held: the next turn asks again */
        const rts_time_ns t0 = now_ns(l);
        to_lwip(l, &job);
        n++;
        uint16_t refill = RTS_BUF_NONE;
        SYS_ARCH_PROTECT(lev);
        const rts_time_ns t1 = now_ns(l);
        if (rts_shield_task_done(&l->sh, &job, t1, t1 - t0, 0u, &refill, &d) == RTS_OK) (void)perform(l, &d);
        if (refill != RTS_BUF_NONE) post(l, refill); /* a spare buffer for the ring */
        SYS_ARCH_UNPROTECT(lev);
    }
    return n;
}
/* [nosys-poll end] */

#else
/* ============================================ NO_SYS 0: lwIP on FreeRTOS */

static void fr_rx_irq_set(void *drv, unsigned line, bool on)
{
    rts_lwip *l = drv;
    (void)line;
    l->cfg.rx_irq_set(l->cfg.drv, on);
}

static uint64_t fr_clock(void *drv)
{
    rts_lwip *l = drv;
    return l->cfg.clock_ns(l->cfg.drv);
}

static void fr_cache(void *drv, const void *addr, size_t len)
{
    rts_lwip *l = drv;
    l->cfg.cache_invalidate(l->cfg.drv, addr, len);
}

/* The receive task's processing of one admitted frame (rts_freertos_shield_task_step()). */
static rts_time_ns process(void *ctx, const rts_rx_job *job)
{
    rts_lwip *l = ctx;
    const rts_time_ns t0 = rts_freertos_now_ns(&l->fr);
    to_lwip(l, job); /* tcpip_input(): ethernet_input() here, under the core lock */
    return rts_freertos_now_ns(&l->fr) - t0;
}

static void repost_spare(void *ctx, uint16_t buf)
{
    post(ctx, buf);
}

static uint32_t harvest(void *ctx, uint32_t max, BaseType_t *woken)
{
    rts_lwip *l = ctx;
    const uint32_t n = l->cfg.harvest(l->cfg.drv, max, woken);
    l->stats.polls++;
    l->stats.polled += n;
    return n;
}

static void wait_up(rts_lwip *l)
{
    while (l->up == 0u) (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
}

static void rx_task(void *arg)
{
    rts_lwip *l = arg;
    wait_up(l);
    for (;;) (void)rts_freertos_shield_task_step(&l->g, process, repost_spare, l);
}

static void poll_task(void *arg)
{
    rts_lwip *l = arg;
    wait_up(l);
    for (;;) (void)rts_freertos_shield_poll_step(&l->g, harvest, l);
}

/* tcpip_thread placement: post the wake-up message once (the RX ISR, or the
 * drain itself when frames are left). `from_isr`: the ISR's variant. */
static void wake_tcpip(rts_lwip *l, bool from_isr, BaseType_t *woken)
{
    if (l->wake_posted != 0u) return; /* the message in the mailbox will drain this frame too */
    l->wake_posted = 1u;
    const err_t e = from_isr ? tcpip_callbackmsg_trycallback_fromisr(l->wake)
                             : tcpip_callbackmsg_trycallback(l->wake);
    if (e == ERR_OK || e == ERR_NEED_SCHED) {
        l->stats.wake_posts++;
        if (e == ERR_NEED_SCHED && woken != NULL) *woken = pdTRUE;
    } else {
        l->wake_posted = 0u; /* mailbox full: the next queued frame posts again */
        l->stats.wake_fails++;
    }
}

static void drain_later(void *arg);

/* [tcpip-drain] */
/* tcpip_thread placement: runs in tcpip_thread, core locked. Up to `batch`
 * frames, highest priority first, straight into ethernet_input (netif->input);
 * more waiting: post the message again, so timers and API calls interleave. */
static void drain(void *arg)
{
    rts_lwip *l = arg;
    rts_freertos_lock();
    l->wake_posted = 0u;
    rts_freertos_unlock();
    for (uint32_t n = 0; n < l->cfg.batch; n++) {
        rts_rx_job job;
        rts_time_ns sleep = 0;
        const rts_err e = rts_freertos_shield_task_next(&l->g, &job, &sleep);
        if (e == RTS_ELIMIT) { /* Hysteresis or Budget hold the task: look again later */
            if (l->retry_set == 0u) {
                const rts_time_ns ms = sleep / 1000000u;
                l->retry_set = 1u;
                sys_timeout(ms > 0u ? (u32_t)(ms < 1000u ? ms : 1000u) : 1u, drain_later, l);
            }
            return;
        }
        if (e != RTS_OK) return; /* nothing waiting: the next queued frame wakes us */
        const rts_time_ns work = process(l, &job);
        uint16_t refill = RTS_BUF_NONE;
        (void)rts_freertos_shield_task_done(&l->g, &job, work, 0u, &refill);
        if (refill != RTS_BUF_NONE) {
            rts_freertos_lock();
            post(l, refill);
            rts_freertos_unlock();
        }
    }
    rts_freertos_lock();
    const bool more = rts_shield_waiting(&l->sh) > 0u;
    if (more) wake_tcpip(l, true, NULL); /* the ISR variant: inside a critical section */
    rts_freertos_unlock();
}
/* [tcpip-drain end] */

static void drain_later(void *arg)
{
    rts_lwip *l = arg;
    l->retry_set = 0u;
    drain(l);
}

rts_err rts_lwip_init(rts_lwip *l, const rts_lwip_cfg *cfg, const rts_shield_cfg *shield)
{
    if (!cfg_valid(l, cfg, shield)) return RTS_EINVAL;
    memset(l, 0, sizeof *l);
    l->cfg = *cfg;
    if (l->cfg.batch == 0u) l->cfg.batch = RTS_LWIP_BATCH;
    const rts_shield_cfg c = shield_cfg(shield);
    const rts_freertos_cfg pc = {.drv = l,
                                 .rx_irq_set = fr_rx_irq_set,
                                 .clock_ns = cfg->clock_ns != NULL ? fr_clock : NULL,
                                 .cache_invalidate = cfg->cache_invalidate != NULL ? fr_cache : NULL};
    rts_err e = rts_freertos_init(&l->fr, &pc);
    if (e != RTS_OK) return e;
    const UBaseType_t base = c.task_base_prio < (uint32_t)configMAX_PRIORITIES
                                 ? (UBaseType_t)c.task_base_prio
                                 : (UBaseType_t)(configMAX_PRIORITIES - 1);
    /* The tasks wait for `up` before their first hook. */
    if (cfg->place == RTS_LWIP_TCPIP_THREAD) {
        l->net_task = xTaskGetCurrentTaskHandle(); /* rts_lwip_init() runs in tcpip_thread */
        l->wake = tcpip_callbackmsg_new(drain, l);
        if (l->wake == NULL) return RTS_EFULL;
    } else {
        l->net_task = xTaskCreateStatic(rx_task, "rts-lwip-rx", RTS_LWIP_RX_STACK, l, base, l->rx_stack,
                                        &l->rx_tcb);
    }
    if (c.global_capacity > 0u) {
        l->poll_task = xTaskCreateStatic(poll_task, "rts-lwip-poll", RTS_LWIP_POLL_STACK, l, cfg->poll_prio,
                                         l->poll_stack, &l->poll_tcb);
    }
    const rts_freertos_shield_cfg gc = {l->net_task, l->poll_task, {0, 1, 2, 3}};
    e = rts_freertos_shield_init(&l->g, &l->sh, &l->fr, &c, &gc);
    if (e != RTS_OK) return e; /* created tasks stay blocked, never touching the shield */
    rts_freertos_lock();
    for (uint16_t b = 0; b < c.ring_size; b++) post(l, b); /* buffers 0..ring_size-1 */
    l->up = 1u;
    rts_freertos_unlock();
    if (cfg->place == RTS_LWIP_RX_TASK) xTaskNotifyGive(l->net_task);
    if (l->poll_task != NULL) xTaskNotifyGive(l->poll_task);
    rts_freertos_shield_rx_enable(&l->g, 0u, true);
    return RTS_OK;
}

rts_err rts_lwip_bind(rts_lwip *l, const rts_shield_flow *f, uint8_t *id)
{
    return rts_freertos_shield_bind(&l->g, f, id);
}

rts_detect_cycle_result rts_lwip_cycle_end(rts_lwip *l, rts_time_ns start, rts_time_ns target)
{
    return rts_freertos_shield_cycle_end(&l->g, start, target);
}

bool rts_lwip_irq_isr(rts_lwip *l, rts_lwip_woken *woken)
{
    if (l->up == 0u) return false;
    const bool admitted = rts_freertos_shield_irq_isr(&l->g, 0u, woken);
    if (admitted) l->stats.rx_irqs++;
    return admitted;
}
#endif /* NO_SYS */

rts_lwip_next rts_lwip_frame_isr(rts_lwip *l, uint16_t buf, uint16_t len, rts_lwip_woken *woken)
{
    if (buf >= RTS_LWIP_BUFS) { /* not one of ours: a driver bug, skip the descriptor */
        l->stats.bad_desc++;
        return RTS_LWIP_NEXT;
    }
    if (len == 0u || len > l->cfg.buf_size) { /* never read past the buffer */
        l->stats.bad_desc++;
        post(l, buf);
        return RTS_LWIP_NEXT;
    }
    l->len[buf] = len;
    rts_shield_rx rx;
    uint32_t f = 0u;
#if NO_SYS
    (void)woken;
    rts_shield_dec d;
    const rts_time_ns now = now_ns(l);
    const rts_err e = rts_shield_rx_frame_isr(&l->sh, buf, buf_addr(l, buf), len, 0u, 0u, now, now, &rx, &d);
    if (e == RTS_OK) f = perform(l, &d);
#else
    const rts_err e = rts_freertos_shield_frame_isr(&l->g, buf, buf_addr(l, buf), len, 0u, 0u, &rx, &f, NULL, woken);
#endif
    if (e != RTS_OK) { /* not a ring buffer in libshield's books: give it back to the DMA */
        l->stats.bad_desc++;
        post(l, buf);
        return RTS_LWIP_NEXT;
    }
    l->last = rx;
    if (rx.outcome == RTS_RX_GLOBAL_LIMIT) {
        l->stats.left++;
        return RTS_LWIP_LEAVE;
    }
    l->stats.frames++;
    if (f & RTS_SHIELD_F_DROP) l->stats.dropped++;
    if (rx.repost != RTS_BUF_NONE) post(l, rx.repost);
#if !NO_SYS
    if (rx.outcome == RTS_RX_QUEUED && l->cfg.place == RTS_LWIP_TCPIP_THREAD) wake_tcpip(l, true, woken);
#endif
    return (f & RTS_SHIELD_F_STOP) ? RTS_LWIP_STOP : RTS_LWIP_NEXT;
}
