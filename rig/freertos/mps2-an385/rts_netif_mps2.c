/* rts_netif's NIC on the MPS2 board (AN385, Cortex-M3): the SMSC LAN9118
 * through FreeRTOS-Plus-TCP's own chip driver (ether_lan9118/smsc9220_eth_drv.c,
 * compiled from a copy of the Plus-TCP tree with the project's patches,
 * rig/freertos/patches/). It replaces the stock MPS2_AN385
 * NetworkInterface.c; the differences are the ones the porting guide
 * describes (docs/porting/freertos-plus-tcp.md):
 *
 * - stock: EthernetISR() only notifies the EMAC task, which copies every
 *   frame out of the RX FIFO into a network buffer and hands it to the IP
 *   task, so a flood costs a network buffer and IP-task time per frame;
 * - here: the Ethernet ISR (IRQ 13) moves each frame from the FIFO into a
 *   posted descriptor slot (the LAN9118 has no DMA: programmed I/O is its
 *   "DMA") and calls rts_netif_rx_isr(): libshield classifies it and
 *   queues or drops it in the ISR; only admitted frames become network
 *   buffers, in the network task.
 *
 * The RX line of the shield is the LAN9118's RX-status-FIFO-level
 * interrupt enable. Frames are read with the driver's
 * smsc9220_receive_by_chunks(), which reads exactly a frame's words once
 * patch 0001 is applied (docs/decisions/lan9118-driver-fixes.md). */
#include <string.h>

#include "ether_lan9118/smsc9220_eth_drv.h"
#include "mps2_clock.h"
#include "rts_netif_hw.h"
#include "task.h"

#define ETH_IRQ 13u
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)
#define LAN9118_BASE 0x40200000u /* SMM_MPS2.h: SMSC9220_BASE */

static const struct smsc9220_eth_dev_cfg_t dev_cfg = {.base = LAN9118_BASE};
static struct smsc9220_eth_dev_data_t dev_data = {.state = 0};
static const struct smsc9220_eth_dev_t dev = {&dev_cfg, &dev_data};

uint32_t get_irq_status(const struct smsc9220_eth_dev_t *d); /* the driver's, not in its header */

/** Test hook: put the PHY in loopback so transmitted frames come back as
 *  received ones (the self-test's wire; QEMU's LAN9118 implements it). */
void rts_netif_mps2_phy_loopback(bool on);

static void wait_ms(uint32_t ms)
{
    if (xTaskGetSchedulerState() == taskSCHEDULER_RUNNING) {
        vTaskDelay(pdMS_TO_TICKS(ms) + 1u);
    } else {
        for (volatile uint32_t i = 0; i < ms * 5000u; i++) {
        }
    }
}

uint64_t rts_netif_hw_cpu_ns(void)
{
    return rts_mps2_now_ns(); /* guest time: under -icount, instructions x 2^shift ns */
}

BaseType_t rts_netif_hw_open(void)
{
    if (smsc9220_init(&dev, wait_ms) != SMSC9220_ERROR_NONE) return pdFAIL;
    NVIC_ICER0 = 1u << ETH_IRQ;
    smsc9220_disable_all_interrupts(&dev);
    smsc9220_clear_all_interrupts(&dev);
    smsc9220_set_fifo_level_irq(&dev, SMSC9220_FIFO_LEVEL_IRQ_RX_STATUS_POS, SMSC9220_FIFO_LEVEL_IRQ_LEVEL_MIN);
    /* The MAC address of the end point (the stack's), low four bytes first. */
    const uint8_t *m = rts_netif_hw_cfg()->mac;
    const uint32_t lo = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
    const uint32_t hi = (uint32_t)m[4] | (uint32_t)m[5] << 8;
    (void)smsc9220_mac_regwrite(&dev, SMSC9220_MAC_REG_OFFSET_ADDRL, lo);
    (void)smsc9220_mac_regwrite(&dev, SMSC9220_MAC_REG_OFFSET_ADDRH, hi);
    /* The Ethernet interrupt calls FromISR APIs: at the syscall limit. */
    NVIC_IPR[ETH_IRQ] = (uint8_t)configMAX_SYSCALL_INTERRUPT_PRIORITY;
    return pdPASS;
}

BaseType_t rts_netif_hw_start(void)
{
    smsc9220_enable_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
    NVIC_ISER0 = 1u << ETH_IRQ;
    return pdPASS;
}

void rts_netif_mps2_phy_loopback(bool on)
{
    uint32_t v = 0;
    (void)smsc9220_phy_regread(&dev, SMSC9220_PHY_REG_OFFSET_BCTRL, &v);
    v = on ? (v | (1u << 14)) : (v & ~(1u << 14));
    (void)smsc9220_phy_regwrite(&dev, SMSC9220_PHY_REG_OFFSET_BCTRL, v);
}

BaseType_t rts_netif_hw_output(const uint8_t *frame, size_t len)
{
    if (len > RTS_NETIF_SLOT_BYTES) return pdFAIL;
    taskENTER_CRITICAL(); /* one TX FIFO: the IP task and the self-test's wire share it */
    const enum smsc9220_error_t e =
        smsc9220_send_by_chunks(&dev, (uint32_t)len, true, (const char *)frame, (uint32_t)len);
    taskEXIT_CRITICAL();
    return e == SMSC9220_ERROR_NONE ? pdPASS : pdFAIL;
}

void rts_netif_hw_rx_irq(bool on)
{
    if (on) {
        smsc9220_enable_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
    } else {
        smsc9220_disable_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
    }
}

/* Read a frame of `size` bytes (the RX status word's length, FCS included)
 * out of the RX data FIFO and discard it: whole words in 64-byte chunks,
 * the last chunk ceil(rest / 4) words. */
static void discard(uint32_t size)
{
    static uint8_t scratch[64];
    while (size > 0u) {
        const uint32_t n = size < sizeof scratch ? size : (uint32_t)sizeof scratch;
        (void)smsc9220_receive_by_chunks(&dev, (char *)scratch, n);
        size -= n;
    }
}

/* IRQ 13. Bounded: at most 64 frames (more than the LAN9118's status FIFO
 * holds), each at most its status word's length of FIFO reads. */
void rts_netif_mps2_eth_isr(void)
{
    BaseType_t woken = pdFALSE;
    const uint32_t rx_bit = 1u << SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL;
    if ((get_irq_status(&dev) & rx_bit) != 0u) {
        for (unsigned k = 0; k < 64u; k++) {
            const uint32_t size = smsc9220_peek_next_packet_size(&dev); /* pops the status word */
            if (size == 0u) break;
            uint16_t slot = 0;
            uint8_t *mem = rts_netif_hw_slot(&slot);
            if (mem == NULL || size > RTS_NETIF_SLOT_BYTES || size <= 4u) { /* no descriptor: drop */
                discard(size);
                rts_netif_hw_ring_full();
                continue;
            }
            (void)smsc9220_receive_by_chunks(&dev, (char *)mem, size);
            rts_netif_hw_filled(slot, (uint16_t)(size - 4u)); /* without the FCS */
        }
        smsc9220_clear_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
        rts_netif_rx_isr(&woken);
    }
    smsc9220_clear_all_interrupts(&dev);
    portYIELD_FROM_ISR(woken);
}
