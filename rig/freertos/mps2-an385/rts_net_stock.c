/* The device application's interface on the MPS2 board without libshield
 * (rts_net_itf.h): FreeRTOS-Plus-TCP's own MPS2_AN385 NetworkInterface.c
 * with the project's patches (rig/freertos/patches/ 0001, 0002), as a
 * product would ship it today. Its image (rts_mps2_stock.elf) is the
 * baseline of the flash and RAM comparison (docs/codesize.md) and of the
 * stock driver's recovery after a flood; it serves protect 0 only.
 *
 * Its counters come from the stack's trace hooks (FreeRTOSIPConfig.h):
 * frames the IP task took, frames the interface lost for want of a network
 * buffer (patch 0002); nic_frames is their sum. Not counted: frames whose
 * event the IP task's queue refused (the interface releases them without a
 * trace). */
#include "rts_net_itf.h"

#include <errno.h>
#include <stddef.h>

#include "FreeRTOS_IP_Private.h"
#include "mps2_boot.h"

NetworkInterface_t *pxMPS2_FillInterfaceDescriptor(BaseType_t xEMACIndex, NetworkInterface_t *pxInterface);
void EthernetISR(void);

#define ETH_IRQ 13u
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)

static rts_net_stats stats;

NetworkInterface_t *rts_net_itf_fill(NetworkInterface_t *itf, const rts_net_cfg *cfg, const uint8_t *mac)
{
    (void)mac; /* the interface takes the end point's */
    if (cfg->protect) return NULL;
    /* EthernetISR() calls FromISR APIs: its interrupt at the syscall limit
     * (the upstream interface leaves that to the application). */
    NVIC_IPR[ETH_IRQ] = (uint8_t)configMAX_SYSCALL_INTERRUPT_PRIORITY;
    return pxMPS2_FillInterfaceDescriptor(0, itf);
}

uint32_t rts_net_rx_slots(void)
{
    return 0u; /* no descriptor slots: the chip's FIFO and the stack's network buffers */
}

uint32_t rts_net_rx_ring(void)
{
    return 0u;
}

rts_err rts_net_shield_bind(const rts_shield_flow *flow, uint8_t *id)
{
    (void)flow;
    (void)id;
    return RTS_EINVAL;
}

const rts_net_stats *rts_net_stats_get(void)
{
    return &stats;
}

const rts_shield *rts_net_shield(void)
{
    return NULL;
}

void rts_net_trace_ip_event(int event)
{
    if (event == (int)eNetworkRxEvent) {
        stats.to_ip_task++;
        stats.nic_frames++;
    }
}

void rts_net_trace_rx_lost(void)
{
    stats.stack_exhausted++;
    stats.nic_frames++;
}

/* The Ethernet interrupt (mps2_boot.c's vector table): the stock ISR. */
void mps2_irq13_handler(void)
{
    EthernetISR();
}

/* The upstream interface names itself with snprintf(), which links the C
 * library's heap; the board has none beside FreeRTOS's: every request for
 * more fails (a "%ld" makes none). */
void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    errno = ENOMEM;
    return (void *)-1;
}
