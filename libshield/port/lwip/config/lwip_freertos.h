/* What lwIP's FreeRTOS port (contrib/ports/freertos/sys_arch.c) needs from
 * FreeRTOSConfig.h beyond libshield's FreeRTOS port (libshield/port/
 * freertos/config/common.h); included last by config/<target>/FreeRTOSConfig.h.
 *
 * - sys_arch.c still divides by the legacy portTICK_RATE_MS: backward
 *   compatibility on (it maps to portTICK_PERIOD_MS);
 * - sys_mutex_t is a recursive mutex (the core lock: LOCK_TCPIP_CORE() may
 *   nest), sys_sem_t a counting semaphore, sys_mbox_t a queue;
 * - every lwIP object (threads, mutexes, semaphores, mailboxes) is created
 *   with the dynamic API (xTaskCreate(), xQueueCreate()): a heap;
 * - sys_thread_new() tasks block forever with portMAX_DELAY (vTaskSuspend). */
#ifndef RTS_LWIP_FREERTOS_CONFIG_H
#define RTS_LWIP_FREERTOS_CONFIG_H

#undef configENABLE_BACKWARD_COMPATIBILITY
#define configENABLE_BACKWARD_COMPATIBILITY 1
#undef configUSE_MUTEXES
#define configUSE_MUTEXES 1
#undef configUSE_RECURSIVE_MUTEXES
#define configUSE_RECURSIVE_MUTEXES 1
#undef configUSE_COUNTING_SEMAPHORES
#define configUSE_COUNTING_SEMAPHORES 1
#undef configSUPPORT_DYNAMIC_ALLOCATION
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#undef INCLUDE_vTaskSuspend
#define INCLUDE_vTaskSuspend 1
#undef INCLUDE_vTaskDelay
#define INCLUDE_vTaskDelay 1
#undef INCLUDE_xTaskGetCurrentTaskHandle
#define INCLUDE_xTaskGetCurrentTaskHandle 1 /* tcpip_thread's handle; the core-locking check */

#endif
