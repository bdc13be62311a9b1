/* The MPS2 board's clock (mps2_clock.h). */
#include "mps2_clock.h"

/* CMSDK APB timer 0: CTRL, VALUE (counts down), RELOAD, INTSTATUS. */
#define TIMER0 ((volatile uint32_t *)0x40000000u)
#define T_CTRL 0
#define T_VALUE 1
#define T_RELOAD 2

static uint32_t hi, last;

void rts_mps2_clock_start(void)
{
    TIMER0[T_CTRL] = 0u;
    TIMER0[T_RELOAD] = 0xFFFFFFFFu;
    TIMER0[T_VALUE] = 0xFFFFFFFFu;
    TIMER0[T_CTRL] = 1u; /* enable, no interrupt, system clock */
    hi = 0u;
    last = 0u;
}

uint64_t rts_mps2_cycles(void)
{
    uint32_t primask;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    const uint32_t v = ~TIMER0[T_VALUE]; /* counts up from 0 */
    if (v < last) hi++;                  /* wrapped since the last read */
    last = v;
    const uint64_t c = (uint64_t)hi << 32 | v;
    __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
    return c;
}

uint64_t rts_mps2_now_ns(void)
{
    return rts_mps2_cycles() * RTS_MPS2_NS_PER_CYCLE;
}
