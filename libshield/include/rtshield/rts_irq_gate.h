/**
 * @file rts_irq_gate.h
 * @brief Two enable bits per interrupt line (Regehr & Duongsaa §4).
 *
 * A software interrupt scheduler turns the line's enable bit into a shared
 * variable: the limiter clears it on overload while the application may clear
 * it for mutual exclusion. The gate keeps two bits per line, one owned by the
 * scheduler (limiters, mitigations) and one owned by the application. The
 * line may fire only when both are set. Each setter reports whether the
 * combined state changed, so the caller writes the hardware bit only then.
 *
 * All functions are O(1), touch two words, and may be called from any
 * context; callers on different priority levels must serialise calls on the
 * same gate (one critical section around the read-modify-write), as with any
 * shared interrupt register.
 */
#ifndef RTSHIELD_RTS_IRQ_GATE_H
#define RTSHIELD_RTS_IRQ_GATE_H

#include "rtshield/rts_opts.h"
#include "rtshield/rts_types.h"

/** State of up to RTS_IRQ_GATE_MAX_LINES lines. Zero-initialised storage is
 *  a gate with every line disabled by both owners. */
typedef struct rts_irq_gate {
    uint32_t sched; /**< scheduler-owned enable bits */
    uint32_t app;   /**< application-owned enable bits */
} rts_irq_gate;

/** Result of a setter: the combined (hardware) state after the call and
 *  whether it differs from before. */
typedef enum rts_gate_change {
    RTS_GATE_UNCHANGED = 0, /**< hardware bit needs no write */
    RTS_GATE_ENABLED = 1,   /**< both bits now set: enable the hardware line */
    RTS_GATE_DISABLED = 2,  /**< was enabled, now not: disable the hardware line */
    RTS_GATE_BAD_LINE = 3   /**< line >= RTS_IRQ_GATE_MAX_LINES: nothing changed */
} rts_gate_change;

/** Initialise: the scheduler bits of all lines set (no limiter holds a line
 *  yet), the application bits clear (the application enables what it uses).
 *  Context: any. Cost: O(1). */
void rts_irq_gate_init(rts_irq_gate *g);

/** Set or clear the scheduler-owned bit.
 *  Context: ISR or task (`_isr`: bounded, never blocks). Cost: O(1), no loop.
 *  @return how the combined state changed (rts_gate_change); RTS_GATE_BAD_LINE
 *          for line >= RTS_IRQ_GATE_MAX_LINES */
rts_gate_change rts_irq_gate_sched_set_isr(rts_irq_gate *g, unsigned line, bool on);

/** Set or clear the application-owned bit. Context: ISR or task. Cost: O(1).
 *  @return how the combined state changed (rts_gate_change); RTS_GATE_BAD_LINE
 *          for line >= RTS_IRQ_GATE_MAX_LINES */
rts_gate_change rts_irq_gate_app_set(rts_irq_gate *g, unsigned line, bool on);

/** True when both bits of `line` are set (false for an out-of-range line).
 *  Context: any. Cost: O(1). */
bool rts_irq_gate_enabled(const rts_irq_gate *g, unsigned line);

#endif /* RTSHIELD_RTS_IRQ_GATE_H */
