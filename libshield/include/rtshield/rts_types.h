/**
 * @file rts_types.h
 * @brief Types shared by every libshield component: time, errors, actions.
 *
 * Context: header only; no code.
 */
#ifndef RTSHIELD_RTS_TYPES_H
#define RTSHIELD_RTS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Time in nanoseconds. The library never reads a clock: callers pass it in. */
typedef uint64_t rts_time_ns;

/** The one error enum of libshield. Every public function documents which of
 *  these it returns. */
typedef enum rts_err {
    RTS_OK = 0,          /**< success */
    RTS_EINVAL = -1,     /**< an argument is out of its documented range */
    RTS_EFULL = -2,      /**< a bounded container is full */
    RTS_EEMPTY = -3,     /**< a bounded container is empty */
    RTS_ENOENT = -4,     /**< no such entry (flow, line, queue) */
    RTS_EEXIST = -5,     /**< the entry already exists */
    RTS_EMALFORMED = -6, /**< packet input is truncated or inconsistent */
    RTS_ELIMIT = -7      /**< a rate or budget limit rejected the request */
} rts_err;

/** Bits of an action a component asks its caller (or port) to perform. */
typedef enum rts_act_flag {
    RTS_ACT_NONE = 0u,
    RTS_ACT_DISABLE_LINE = 1u << 0,  /**< clear the scheduler enable bit of the line */
    RTS_ACT_ENABLE_LINE = 1u << 1,   /**< set the scheduler enable bit of the line */
    RTS_ACT_ARM_TIMER = 1u << 2,     /**< arm the component's timer at rts_action.timer_at */
    RTS_ACT_CANCEL_TIMER = 1u << 3,  /**< cancel the component's timer */
    RTS_ACT_CLEAR_TIMER_PENDING = 1u << 4, /**< clear the timer interrupt's pending bit */
    RTS_ACT_ENABLE_TIMER_IRQ = 1u << 5,    /**< enable the timer interrupt line */
    RTS_ACT_DISABLE_TIMER_IRQ = 1u << 6,   /**< disable the timer interrupt line */
    RTS_ACT_DELIVER = 1u << 7,       /**< deliver the (latched) interrupt to the CPU now */
    RTS_ACT_DROP = 1u << 8,          /**< drop the packet / request at hand */
    RTS_ACT_SUSPEND_DRIVER = 1u << 9, /**< the network driver must stop processing */
    RTS_ACT_RESUME_DRIVER = 1u << 10, /**< the network driver may run again */
    RTS_ACT_RESCHEDULE = 1u << 11    /**< a higher-priority task may be ready: yield on ISR exit */
} rts_act_flag;

/** A decision returned by a component: what to do, and when for timers. */
typedef struct rts_action {
    uint32_t flags;       /**< OR of rts_act_flag */
    rts_time_ns timer_at; /**< absolute expiry when RTS_ACT_ARM_TIMER is set, else 0 */
} rts_action;

/* Invariants are checked at compile time. The binding generator parses the
 * public headers as declarations only, so the assertion is hidden from it. */
#ifdef RTS_CDEF
#define RTS_STATIC_ASSERT(cond, msg)
#else
#define RTS_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif /* RTSHIELD_RTS_TYPES_H */
