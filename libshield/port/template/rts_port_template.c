/*
 * Template port: copy this file into your BSP and fill in the five hooks.
 * Each hook may run in interrupt context: no blocking, bounded time.
 *
 * FreeRTOS on Cortex-M, for instance:
 *   irq_set_enabled   -> NVIC_EnableIRQ / NVIC_DisableIRQ
 *   irq_clear_pending -> NVIC_ClearPendingIRQ
 *   timer_arm         -> load the compare register of a free hardware timer
 *                        with the tick count for `at` and enable its IRQ
 *   timer_cancel      -> disable that compare interrupt
 *   cache_invalidate  -> SCB_InvalidateDCache_by_Addr (no-op without D-cache)
 * Zephyr: irq_enable()/irq_disable(), counter_set_channel_alarm(),
 *   sys_cache_data_invd_range().
 */
#include "rtshield/rts_port.h"

static void my_irq_set_enabled(void *ctx, unsigned line, bool enabled)
{
    (void)ctx; (void)line; (void)enabled;
    /* write the interrupt controller's enable bit for `line` */
}

static void my_irq_clear_pending(void *ctx, unsigned line)
{
    (void)ctx; (void)line;
    /* clear the interrupt controller's pending bit for `line` */
}

static void my_timer_arm(void *ctx, unsigned timer, rts_time_ns at)
{
    (void)ctx; (void)timer; (void)at;
    /* convert `at` (ns, same clock the driver passes to libshield) to timer
     * ticks and arm a one-shot compare */
}

static void my_timer_cancel(void *ctx, unsigned timer)
{
    (void)ctx; (void)timer;
}

static void my_cache_invalidate(void *ctx, const void *addr, size_t len)
{
    (void)ctx; (void)addr; (void)len;
}

const rts_port my_port = {
    .ctx = NULL,
    .irq_set_enabled = my_irq_set_enabled,
    .irq_clear_pending = my_irq_clear_pending,
    .timer_arm = my_timer_arm,
    .timer_cancel = my_timer_cancel,
    .cache_invalidate = my_cache_invalidate,
};

#if RTS_CONFIG_ASSERT
/* A failed RTS_ASSERT: a libshield invariant broke. Must not return: log
 * `msg`, `file` and `line` (UART, semihosting) and halt, or reset the device.
 * Write that as RTS_PORT_HALT below, or define RTS_PORT_HALT before this file
 * is compiled (the host examples, examples/platform_host.c, print and abort). */
#ifndef RTS_PORT_HALT
#define RTS_PORT_HALT(msg, file, line) for (;;) { }
#endif

void rts_port_assert_failed(const char *msg, const char *file, int line)
{
    (void)msg; (void)file; (void)line;
    RTS_PORT_HALT(msg, file, line);
}
#endif
