/* The FreeRTOS settings of a Cortex-M3 (portable/GCC/ARM_CM3) as booted on
 * QEMU's mps2-an385 (25 MHz), shared by the port's configuration
 * (FreeRTOSConfig.h beside this file) and the rig's FreeRTOS-Plus-TCP
 * application (rig/freertos/mps2-an385/FreeRTOSConfig.h); each adds its heap. */
#ifndef RTS_FREERTOS_MPS2_AN385_H
#define RTS_FREERTOS_MPS2_AN385_H

#define configCPU_CLOCK_HZ                 ((unsigned long)25000000)
#define configMINIMAL_STACK_SIZE           ((unsigned short)256)
#define configTICK_TYPE_WIDTH_IN_BITS      TICK_TYPE_WIDTH_32_BITS
#define configAPPLICATION_ALLOCATED_HEAP   0
#define configCHECK_FOR_STACK_OVERFLOW     2
#define configTIMER_TASK_STACK_DEPTH       ((unsigned short)512)
#define configCHECK_HANDLER_INSTALLATION   1

/* Cortex-M3 NVIC: 3 priority bits on the MPS2 (8 levels), upper bits. The
 * kernel (PendSV, SysTick) runs at the lowest; interrupts that call the
 * shield or any FromISR API (the rig's Ethernet interrupt, IRQ 13) must be
 * at configMAX_SYSCALL_INTERRUPT_PRIORITY or below (numerically at or
 * above). */
#define configPRIO_BITS                         3
#define configKERNEL_INTERRUPT_PRIORITY         (7 << (8 - configPRIO_BITS))
#define configMAX_SYSCALL_INTERRUPT_PRIORITY    (2 << (8 - configPRIO_BITS))
#define configMAX_API_CALL_INTERRUPT_PRIORITY   configMAX_SYSCALL_INTERRUPT_PRIORITY

#endif
