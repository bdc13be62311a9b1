/* The random-number hooks FreeRTOS-Plus-TCP asks of an application, for the
 * rig's programs on both boards: the device's generator (app/rts_random.h),
 * seeded by rts_net_plustcp.c with the board's clock at start-up. */
#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "rts_random.h"

BaseType_t xApplicationGetRandomNumber(uint32_t *pulNumber)
{
    *pulNumber = rts_random();
    return pdTRUE;
}

uint32_t ulApplicationGetNextSequenceNumber(uint32_t ulSourceAddress, uint16_t usSourcePort,
                                            uint32_t ulDestinationAddress, uint16_t usDestinationPort)
{
    (void)ulSourceAddress;
    (void)usSourcePort;
    (void)ulDestinationAddress;
    (void)usDestinationPort;
    return rts_random();
}
