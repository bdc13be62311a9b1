/**
 * @file rts_port.h
 * @brief The port contract: what a platform supplies so libshield can act.
 *
 * libshield decides; the port performs. Most components return an
 * rts_action and let the caller act on it; rts_port_apply() performs such an
 * action through the function pointers below, so a driver can write
 * `rts_port_apply(&port, &gate, line, timer, rts_strict_on_irq_isr(...))`.
 *
 * Contract for every hook:
 * - it may be called from interrupt context, so it must not block;
 * - it must take bounded time (a register write, a timer compare load);
 * - a NULL hook means "this platform has nothing to do here" and is skipped.
 *
 * Link-time hook: when RTS_CONFIG_ASSERT is 1 the port also defines
 * `void rts_port_assert_failed(const char *msg, const char *file, int line)`,
 * which must not return (log and halt, or reset the device).
 *
 * See port/template/ for a port to start from and port/posix/ for the one the
 * tests and the simulator use.
 */
#ifndef RTSHIELD_RTS_PORT_H
#define RTSHIELD_RTS_PORT_H

#include "rtshield/rts_types.h"
#include "rtshield/rts_irq_gate.h"

/** Platform hooks. `ctx` is passed back to every hook unchanged. */
typedef struct rts_port {
    void *ctx;
    /** Write the hardware enable bit of interrupt `line`. */
    void (*irq_set_enabled)(void *ctx, unsigned line, bool enabled);
    /** Clear the hardware pending bit of interrupt `line`. */
    void (*irq_clear_pending)(void *ctx, unsigned line);
    /** Arm hardware timer `timer` to fire once at absolute time `at`. */
    void (*timer_arm)(void *ctx, unsigned timer, rts_time_ns at);
    /** Cancel hardware timer `timer` (no effect if not armed). */
    void (*timer_cancel)(void *ctx, unsigned timer);
    /** Invalidate the data cache over [addr, addr+len) before the CPU reads
     *  DMA-written memory. Used by the receive path (Behnke §5.3.2). */
    void (*cache_invalidate)(void *ctx, const void *addr, size_t len);
} rts_port;

/** Where an action applies: the device line it guards and the timer (and the
 *  timer's own interrupt line) its component owns. */
typedef struct rts_port_target {
    unsigned line;       /**< device interrupt line */
    unsigned timer;      /**< hardware timer id */
    unsigned timer_line; /**< interrupt line of that timer */
} rts_port_target;

/**
 * Perform `act` through `port`. Enable and disable of the device line go
 * through the scheduler-owned bit of `gate` (Regehr §4), so an application
 * that has masked the line keeps it masked; the hardware bit is written only
 * when the gate's combined state changes. `gate` may be NULL, in which case
 * the hardware bit is written directly.
 *
 * Context: any (ISR or task). Cost: at most six hook calls.
 * @return the flags of `act` that were not port actions (DELIVER, DROP,
 *         SUSPEND_DRIVER, RESUME_DRIVER, RESCHEDULE), for the caller to handle.
 */
uint32_t rts_port_apply(const rts_port *port, rts_irq_gate *gate, rts_port_target tgt, rts_action act);

#endif /* RTSHIELD_RTS_PORT_H */
