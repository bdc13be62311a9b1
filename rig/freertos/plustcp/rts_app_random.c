/* The random-number hooks FreeRTOS-Plus-TCP asks of an application, for the
 * rig's programs on the POSIX port (main_link.c, rts_device.c): the C
 * library's rand(). A host rig needs no cryptographic quality; a device
 * would use its hardware generator. */
#include <stdlib.h>

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"

BaseType_t xApplicationGetRandomNumber(uint32_t *pulNumber)
{
    *pulNumber = (uint32_t)rand();
    return pdTRUE;
}

uint32_t ulApplicationGetNextSequenceNumber(uint32_t ulSourceAddress, uint16_t usSourcePort,
                                            uint32_t ulDestinationAddress, uint16_t usDestinationPort)
{
    (void)ulSourceAddress;
    (void)usSourcePort;
    (void)ulDestinationAddress;
    (void)usDestinationPort;
    return (uint32_t)rand();
}
