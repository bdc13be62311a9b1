/* The settings the rtshield FreeRTOS port and its self-test share on every
 * target (included by config/<target>/FreeRTOSConfig.h). What the adapter
 * itself needs is marked "adapter"; rts_port_freertos.h stops the build with
 * a message when one of those is missing. */
#ifndef RTS_FREERTOS_CONFIG_COMMON_H
#define RTS_FREERTOS_CONFIG_COMMON_H

#define configUSE_PREEMPTION                    1
#define configUSE_TIME_SLICING                  1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#define configUSE_TICKLESS_IDLE                 0
#define configTICK_RATE_HZ                      1000
/* Libshield priorities map 1:1 onto these (RTS_FLOW_PRIO_LEVELS 8 in the self-test). */
#define configMAX_PRIORITIES                    8
#define configMAX_TASK_NAME_LEN                 12
#define configIDLE_SHOULD_YIELD                 1
#define configTASK_NOTIFICATION_ARRAY_ENTRIES   1
#define configQUEUE_REGISTRY_SIZE               0
#define configENABLE_BACKWARD_COMPATIBILITY     0
#define configNUM_THREAD_LOCAL_STORAGE_POINTERS 0
#define configUSE_MINI_LIST_ITEM                1
#define configSTACK_DEPTH_TYPE                  size_t
#define configMESSAGE_BUFFER_LENGTH_TYPE        size_t
#define configHEAP_CLEAR_MEMORY_ON_FREE         0
#define configUSE_NEWLIB_REENTRANT              0

/* adapter: the shield's timers are static software timers; the timer
 * service task runs deferred priority changes, so it is the top priority. */
#define configUSE_TIMERS                1
#define configTIMER_TASK_PRIORITY       (configMAX_PRIORITIES - 1)
#define configTIMER_QUEUE_LENGTH        16
#define configSUPPORT_STATIC_ALLOCATION 1
#define configKERNEL_PROVIDED_STATIC_MEMORY 1

#define configUSE_EVENT_GROUPS   1 /* FreeRTOS-Plus-TCP (rig target) */
#define configUSE_STREAM_BUFFERS 0

#define configUSE_IDLE_HOOK                1
#define configUSE_TICK_HOOK                1
#define configUSE_MALLOC_FAILED_HOOK       0
#define configUSE_DAEMON_TASK_STARTUP_HOOK 0
#define configUSE_SB_COMPLETED_CALLBACK    0
#define configGENERATE_RUN_TIME_STATS      0
#define configUSE_TRACE_FACILITY           0
#define configUSE_STATS_FORMATTING_FUNCTIONS 0
#define configUSE_CO_ROUTINES              0
#define configMAX_CO_ROUTINE_PRIORITIES    1

#define configUSE_TASK_NOTIFICATIONS   1
#define configUSE_MUTEXES              1
#define configUSE_RECURSIVE_MUTEXES    0
#define configUSE_COUNTING_SEMAPHORES  1
#define configUSE_QUEUE_SETS           0
#define configUSE_APPLICATION_TASK_TAG 0

#define INCLUDE_vTaskPrioritySet            1 /* adapter: priority inheritance */
#define INCLUDE_uxTaskPriorityGet           1 /* the self-test reads priorities */
#define INCLUDE_xTimerPendFunctionCall      1 /* adapter: priority changes from an ISR */
#define INCLUDE_vTaskDelete                 0
#define INCLUDE_vTaskSuspend                1
#define INCLUDE_xTaskDelayUntil             1
#define INCLUDE_vTaskDelay                  1
#define INCLUDE_xTaskGetSchedulerState      1
#define INCLUDE_xTaskGetCurrentTaskHandle   1
#define INCLUDE_uxTaskGetStackHighWaterMark 0
#define INCLUDE_xTaskGetIdleTaskHandle      0
#define INCLUDE_eTaskGetState               0
#define INCLUDE_xTaskAbortDelay             0
#define INCLUDE_xTaskGetHandle              0
#define INCLUDE_xTaskResumeFromISR          0

/* A failed kernel assertion ends the self-test with a message and status 2. */
void rts_selftest_assert(const char *file, int line);
#define configASSERT(x)                                  \
    do {                                                 \
        if ((x) == 0) rts_selftest_assert(__FILE__, __LINE__); \
    } while (0)

#endif
