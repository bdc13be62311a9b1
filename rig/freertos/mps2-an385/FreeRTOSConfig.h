/* FreeRTOS configuration of the rig's device application (and of the
 * receive-path self-test) on Cortex-M3 (portable/GCC/ARM_CM3) as booted on
 * QEMU's mps2-an385 (25 MHz): the port's shared settings
 * (libshield/port/freertos/config/common.h) and its board settings
 * (config/cm3/mps2_an385.h), plus a heap, which FreeRTOS-Plus-TCP's sockets
 * and BufferAllocation_2 need (heap_4), and per-task run time on the board's
 * clock (mps2_clock.h: the report's per-task CPU times). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include "common.h"
#include "cm3/mps2_an385.h"

#define configSUPPORT_DYNAMIC_ALLOCATION   1
#define configTOTAL_HEAP_SIZE              ((size_t)(512 * 1024))

#undef configGENERATE_RUN_TIME_STATS
#undef configUSE_TRACE_FACILITY
#define configGENERATE_RUN_TIME_STATS      1
#define configUSE_TRACE_FACILITY           1 /* uxTaskGetSystemState() */
#define configRUN_TIME_COUNTER_TYPE        uint64_t
#ifndef __ASSEMBLER__
#include <stdint.h>
uint64_t rts_mps2_cycles(void);
#endif
#define portCONFIGURE_TIMER_FOR_RUN_TIME_STATS() /* started before the scheduler */
#define portGET_RUN_TIME_COUNTER_VALUE()   rts_mps2_cycles()

#endif
