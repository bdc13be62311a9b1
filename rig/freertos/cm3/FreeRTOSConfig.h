/* FreeRTOS configuration of the rig's FreeRTOS-Plus-TCP application on
 * Cortex-M3 (portable/GCC/ARM_CM3) as booted on QEMU's mps2-an385 (25 MHz):
 * the port's shared settings (libshield/port/freertos/config/common.h) and
 * its board settings (config/cm3/mps2_an385.h), plus a heap, which
 * FreeRTOS-Plus-TCP's sockets and BufferAllocation_2 need (heap_4). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "common.h"
#include "cm3/mps2_an385.h"

#define configSUPPORT_DYNAMIC_ALLOCATION   1
#define configTOTAL_HEAP_SIZE              ((size_t)(512 * 1024))

#endif
