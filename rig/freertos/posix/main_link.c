/* Link check of the rig's FreeRTOS target skeleton: the kernel (POSIX port),
 * FreeRTOS-Plus-TCP, libshield, its FreeRTOS port and rts_netif, with the
 * application hooks the stack requires. Not the device application (issue
 * 17 item 3): it brings the interface up on RTS_NETIF_IFNAME when run and
 * prints the interface's counters after RTS_NETIF_SECONDS. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "rts_netif.h"
#include "task.h"

static NetworkInterface_t itf;
static NetworkEndPoint_t ep;
static rts_netif_cfg netif_cfg;

/* xApplicationGetRandomNumber, ulApplicationGetNextSequenceNumber: rts_app_random.c */

void rts_selftest_assert(const char *file, int line)
{
    fprintf(stderr, "assert failed: %s:%d\n", file, line);
    _exit(2);
}

void vApplicationTickHook(void)
{
    rts_nic_tick_isr();
}

void vApplicationIdleHook(void)
{
    const struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
}

static void report_task(void *arg)
{
    (void)arg;
    const char *s = getenv("RTS_NETIF_SECONDS");
    vTaskDelay(pdMS_TO_TICKS(1000u * (uint32_t)(s != NULL ? atoi(s) : 5)));
    const rts_netif_stats *st = rts_netif_stats_get();
    printf("nic %u ring_full %u shield_dropped %u stack_exhausted %u no_endpoint %u to_ip %u\n",
           (unsigned)st->nic_frames, (unsigned)st->nic_ring_full, (unsigned)st->shield_dropped,
           (unsigned)st->stack_exhausted, (unsigned)st->no_endpoint, (unsigned)st->to_ip_task);
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    static const uint8_t ip[4] = {10, 77, 0, 2}, mask[4] = {255, 255, 255, 0}, gw[4] = {10, 77, 0, 1},
                         dns[4] = {0, 0, 0, 0}, mac[6] = {0x02, 0x00, 0x00, 0x77, 0x00, 0x02};
    const char *ifname = getenv("RTS_NETIF_IFNAME");
    netif_cfg.nic.ifname = ifname != NULL ? ifname : "lo";
    netif_cfg.protect = getenv("RTS_NETIF_UNPROTECTED") == NULL;
    rts_shield_cfg_default(&netif_cfg.shield);
    netif_cfg.net_task_prio = 3;
    netif_cfg.poll_task_prio = 5;
    netif_cfg.nic.rx_cpu = -1;
    netif_cfg.ip_task_inherits = netif_cfg.protect;
    rts_netif_fill(&itf, &netif_cfg);
    FreeRTOS_FillEndPoint(&itf, &ep, ip, mask, gw, dns, mac);
    FreeRTOS_IPInit_Multi();
    xTaskCreate(report_task, "report", configMINIMAL_STACK_SIZE, NULL, 1, NULL);
    vTaskStartScheduler();
    return 1;
}
