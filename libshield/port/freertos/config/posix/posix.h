/* The FreeRTOS settings of the POSIX (Linux simulator) port
 * (portable/ThirdParty/GCC/Posix), shared by the port's self-test
 * configuration (FreeRTOSConfig.h beside this file) and the rig's device on
 * the POSIX board (rig/freertos/posix/FreeRTOSConfig.h). */
#ifndef RTS_FREERTOS_POSIX_H
#define RTS_FREERTOS_POSIX_H

#define configCPU_CLOCK_HZ                 ((unsigned long)1000000000)
/* In words. Each task is a pthread with its own stack; the FreeRTOS stack
 * only holds the port's thread record. A constant (PTHREAD_STACK_MIN is not
 * one with _GNU_SOURCE on glibc 2.34+), for static stacks. */
#define configMINIMAL_STACK_SIZE           ((unsigned short)2048)
#define configTICK_TYPE_WIDTH_IN_BITS      TICK_TYPE_WIDTH_64_BITS
#define configSUPPORT_DYNAMIC_ALLOCATION   1 /* the POSIX port's threads; heap_3 */
#define configTOTAL_HEAP_SIZE              ((size_t)(64 * 1024))
#define configAPPLICATION_ALLOCATED_HEAP   0
#define configCHECK_FOR_STACK_OVERFLOW     0
#define configTIMER_TASK_STACK_DEPTH       configMINIMAL_STACK_SIZE
#define configKERNEL_INTERRUPT_PRIORITY        0
#define configMAX_SYSCALL_INTERRUPT_PRIORITY   0
#define configMAX_API_CALL_INTERRUPT_PRIORITY  0

#endif
