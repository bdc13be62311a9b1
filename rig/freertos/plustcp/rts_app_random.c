/* The random-number hooks FreeRTOS-Plus-TCP asks of an application, for the
 * rig's programs on both boards: xorshift32 seeded by rts_app_random_seed()
 * (rts_net_plustcp.c: the board's clock at start-up). No C library (newlib's
 * rand() allocates its state from a heap on a microcontroller). A rig needs
 * no cryptographic quality; a product would use its hardware generator. */
#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "rts_net_itf.h"

static uint32_t state = 2463534242u;

void rts_app_random_seed(uint32_t seed)
{
    state = seed != 0u ? seed : 2463534242u;
}

static uint32_t next(void)
{
    uint32_t x = state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    state = x;
    return x;
}

BaseType_t xApplicationGetRandomNumber(uint32_t *pulNumber)
{
    *pulNumber = next();
    return pdTRUE;
}

uint32_t ulApplicationGetNextSequenceNumber(uint32_t ulSourceAddress, uint16_t usSourcePort,
                                            uint32_t ulDestinationAddress, uint16_t usDestinationPort)
{
    (void)ulSourceAddress;
    (void)usSourcePort;
    (void)ulDestinationAddress;
    (void)usDestinationPort;
    return next();
}
