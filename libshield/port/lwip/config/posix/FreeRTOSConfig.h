/* FreeRTOS configuration of lwIP with libshield on the POSIX port
 * (portable/ThirdParty/GCC/Posix, heap_3): libshield's POSIX configuration
 * plus what lwIP's sys_arch needs (../lwip_freertos.h). */
#ifndef RTS_LWIP_FREERTOS_CONFIG_POSIX_H
#define RTS_LWIP_FREERTOS_CONFIG_POSIX_H

#include "../../../freertos/config/posix/FreeRTOSConfig.h"
#include "../lwip_freertos.h"

#endif
