/* The FreeRTOS port's self-test: one program, run on the POSIX port (host)
 * and on Cortex-M3 (QEMU mps2-an385). selftest.c is the test; each
 * platform file supplies what differs (how the RX interrupt is raised and
 * masked, a busy wait that does not need the tick, output and exit). */
#ifndef RTS_SELFTEST_H
#define RTS_SELFTEST_H

#include <stdbool.h>
#include <stdint.h>

#include "FreeRTOS.h"

/* ---- supplied by the platform (main_posix.c, main_cm3.c) ---- */

/** Busy-wait `us` microseconds of wall time, without relying on the tick
 *  (works with interrupts masked). */
void st_busy_wait_us(uint32_t us);
/** True when the calling context has the kernel's interrupts masked. */
bool st_irq_masked(void);
/** The driver's RX line write (the adapter's rx_irq_set callback). */
void st_rx_line_write(bool on);
/** The NIC raises its RX interrupt (called from the wire, ISR context). */
void st_rx_raise(void);
/** Leave the RX ISR: yield if a higher-priority task was woken. */
void st_isr_exit(BaseType_t woken);
/** Write a NUL-terminated string (runner task or a dying assert only). */
void st_print(const char *s);
/** A free-running hardware clock in ns for the adapter's clock_ns, or NULL
 *  when the platform has none the test uses. */
extern uint64_t (*const st_hw_clock)(void *drv);
/** End the program with `status` (0 = all checks passed). */
void st_exit(int status) __attribute__((noreturn));

/* ---- supplied by selftest.c ---- */

/** Create the tasks; the platform then starts the scheduler. */
void st_create_tasks(void);
/** The body of the RX interrupt (the platform's handler calls it). */
void st_rx_isr(void);
/** Called from vApplicationTickHook(): the wire (frames arriving). */
void st_tick(void);

#endif
