/* FreeRTOS configuration of lwIP with libshield on Cortex-M3
 * (portable/GCC/ARM_CM3, QEMU's mps2-an385, heap_4): libshield's Cortex-M3
 * configuration plus what lwIP's sys_arch needs (../lwip_freertos.h), with
 * a heap for lwIP's threads, mutexes, semaphores and mailboxes. */
#ifndef RTS_LWIP_FREERTOS_CONFIG_CM3_H
#define RTS_LWIP_FREERTOS_CONFIG_CM3_H

#include "../../../freertos/config/cm3/FreeRTOSConfig.h"
#include "../lwip_freertos.h"

#undef configTOTAL_HEAP_SIZE
#define configTOTAL_HEAP_SIZE ((size_t)(48 * 1024))

#endif
