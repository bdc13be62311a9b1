/* FreeRTOS configuration of the rig's FreeRTOS-Plus-TCP application on
 * Cortex-M3 (portable/GCC/ARM_CM3) as booted on QEMU's mps2-an385 (25 MHz):
 * the port's shared settings (libshield/port/freertos/config/common.h)
 * plus a heap, which FreeRTOS-Plus-TCP's sockets and BufferAllocation_2
 * need (heap_4). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "common.h"

#define configCPU_CLOCK_HZ                 ((unsigned long)25000000)
#define configMINIMAL_STACK_SIZE           ((unsigned short)256)
#define configTICK_TYPE_WIDTH_IN_BITS      TICK_TYPE_WIDTH_32_BITS
#define configSUPPORT_DYNAMIC_ALLOCATION   1
#define configTOTAL_HEAP_SIZE              ((size_t)(512 * 1024))
#define configAPPLICATION_ALLOCATED_HEAP   0
#define configCHECK_FOR_STACK_OVERFLOW     2
#define configTIMER_TASK_STACK_DEPTH       ((unsigned short)512)
#define configCHECK_HANDLER_INSTALLATION   1

/* As the port's Cortex-M3 configuration: 3 priority bits; the Ethernet
 * interrupt (IRQ 13) calls libshield and FromISR APIs, so it sits at
 * configMAX_SYSCALL_INTERRUPT_PRIORITY. */
#define configPRIO_BITS                         3
#define configKERNEL_INTERRUPT_PRIORITY         (7 << (8 - configPRIO_BITS))
#define configMAX_SYSCALL_INTERRUPT_PRIORITY    (2 << (8 - configPRIO_BITS))
#define configMAX_API_CALL_INTERRUPT_PRIORITY   configMAX_SYSCALL_INTERRUPT_PRIORITY

#endif
