/* The device's random numbers (see rts_random.h): xorshift32. */
#include "rts_random.h"

#define RTS_RANDOM_SEED 2463534242u

static uint32_t state = RTS_RANDOM_SEED;

void rts_random_seed(uint32_t seed)
{
    state = seed != 0u ? seed : RTS_RANDOM_SEED;
}

uint32_t rts_random(void)
{
    uint32_t x = state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    state = x;
    return x;
}
