/* The MPS2 board's clock: the AN385's APB timer 0 (CMSDK timer at
 * 0x40000000, clocked at the 25 MHz system clock) counting freely, extended
 * to 64 bits. In QEMU with -icount it counts guest time, which advances with
 * the instructions executed (docs/decisions/mps2-board.md). */
#ifndef RTS_MPS2_CLOCK_H
#define RTS_MPS2_CLOCK_H

#include <stdint.h>

#define RTS_MPS2_CLOCK_HZ 25000000u
#define RTS_MPS2_NS_PER_CYCLE (1000000000u / RTS_MPS2_CLOCK_HZ)

/** Start the timer (once, before anything reads it). */
void rts_mps2_clock_start(void);

/** Cycles of the 25 MHz clock since rts_mps2_clock_start(). Any context;
 *  read at least once per 171 s (the 32-bit counter's wrap) — the tick hook
 *  does. */
uint64_t rts_mps2_cycles(void);

/** rts_mps2_cycles() in ns. */
uint64_t rts_mps2_now_ns(void);

#endif
