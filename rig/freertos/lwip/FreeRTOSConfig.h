/* FreeRTOS configuration of the device application on lwIP: the board's
 * own (posix/FreeRTOSConfig.h or mps2-an385/FreeRTOSConfig.h, the next
 * FreeRTOSConfig.h on the include path), then what lwIP's FreeRTOS port
 * (contrib/ports/freertos/sys_arch.c) needs of it
 * (libshield/port/lwip/config/lwip_freertos.h). */
#ifndef RTS_RIG_LWIP_FREERTOS_CONFIG_H
#define RTS_RIG_LWIP_FREERTOS_CONFIG_H

#include_next <FreeRTOSConfig.h>
#include "lwip_freertos.h"

#endif
