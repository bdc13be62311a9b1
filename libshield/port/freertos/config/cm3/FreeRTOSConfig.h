/* FreeRTOS configuration of the rtshield port on Cortex-M3
 * (portable/GCC/ARM_CM3), as booted on QEMU's mps2-an385 (25 MHz). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "../common.h"
#include "mps2_an385.h"

#define configSUPPORT_DYNAMIC_ALLOCATION   0 /* everything static: no heap file linked */
#define configTOTAL_HEAP_SIZE              ((size_t)0)

#endif
