/* FreeRTOS configuration of the rtshield port's self-test on the POSIX
 * (Linux simulator) port: portable/ThirdParty/GCC/Posix, heap_3. */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "../common.h"
#include "posix.h"

#endif
