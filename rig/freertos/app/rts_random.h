/* The device's random numbers, for the IP stack's hooks (FreeRTOS-Plus-TCP's
 * xApplicationGetRandomNumber(), lwIP's LWIP_RAND(): initial ports and TCP
 * sequence numbers): xorshift32, seeded at start-up from the board's clock.
 * No C library (newlib's rand() allocates its state from a heap on a
 * microcontroller). A rig needs no cryptographic quality; a product would
 * use its hardware generator. */
#ifndef RTS_RANDOM_H
#define RTS_RANDOM_H

#include <stdint.h>

/** Seed the generator (0: a fixed non-zero seed). */
void rts_random_seed(uint32_t seed);

/** The next number. Context: any task (the stacks call it from theirs). */
uint32_t rts_random(void);

#endif
