/* POSIX port: records hook calls in memory; assert failures abort. */
#include "rts_port_posix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void posix_irq_set_enabled(void *ctx, unsigned line, bool enabled)
{
    rts_posix_port *s = ctx;
    if (line < RTS_POSIX_MAX_LINES) {
        s->enabled[line] = enabled;
        s->enable_writes++;
    }
}

static void posix_irq_clear_pending(void *ctx, unsigned line)
{
    rts_posix_port *s = ctx;
    if (line < RTS_POSIX_MAX_LINES) {
        s->pending[line] = false;
        s->pending_clears++;
    }
}

static void posix_timer_arm(void *ctx, unsigned timer, rts_time_ns at)
{
    rts_posix_port *s = ctx;
    if (timer < RTS_POSIX_MAX_TIMERS) {
        s->timer_armed[timer] = true;
        s->timer_at[timer] = at;
    }
}

static void posix_timer_cancel(void *ctx, unsigned timer)
{
    rts_posix_port *s = ctx;
    if (timer < RTS_POSIX_MAX_TIMERS) {
        s->timer_armed[timer] = false;
    }
}

static void posix_cache_invalidate(void *ctx, const void *addr, size_t len)
{
    rts_posix_port *s = ctx;
    (void)addr;
    s->cache_invalidated_bytes += (uint32_t)len;
}

void rts_posix_port_init(rts_port *port, rts_posix_port *state)
{
    memset(state, 0, sizeof *state);
    port->ctx = state;
    port->irq_set_enabled = posix_irq_set_enabled;
    port->irq_clear_pending = posix_irq_clear_pending;
    port->timer_arm = posix_timer_arm;
    port->timer_cancel = posix_timer_cancel;
    port->cache_invalidate = posix_cache_invalidate;
}

void rts_port_assert_failed(const char *msg, const char *file, int line)
{
    fprintf(stderr, "libshield assert: %s (%s:%d)\n", msg, file, line);
    abort();
}
