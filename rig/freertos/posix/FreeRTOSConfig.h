/* FreeRTOS configuration of the rig's device on the POSIX board
 * (portable/ThirdParty/GCC/Posix, heap_3): the port's shared settings
 * (libshield/port/freertos/config/common.h) and its POSIX settings
 * (config/posix/posix.h), the same as the port's self-test. */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "common.h"
#include "posix/posix.h"

#endif
