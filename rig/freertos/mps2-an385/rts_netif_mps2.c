/* The device's NIC on the MPS2 board (AN385, Cortex-M3), for either IP
 * stack's interface (nic/rts_nic.h): the SMSC LAN9118
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
 *   "DMA") and calls rts_nic_rx_isr(): libshield classifies it and
 *   queues or drops it in the ISR; only admitted frames become network
 *   buffers, in the network task.
 *
 * The RX line of the shield is the LAN9118's RX-status-FIFO-level
 * interrupt enable. Frames are read with the driver's
 * smsc9220_receive_by_chunks(), which reads exactly a frame's words once
 * patch 0001 is applied (docs/decisions/lan9118-driver-fixes.md). */
#include <string.h>

#include "ether_lan9118/smsc9220_eth_drv.h"
#include "mps2_boot.h"
#include "mps2_clock.h"
#include "rts_nic.h"
#include "task.h"

#define ETH_IRQ 13u
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)
#define LAN9118_BASE 0x40200000u /* SMM_MPS2.h: SMSC9220_BASE */

static const struct smsc9220_eth_dev_cfg_t dev_cfg = {.base = LAN9118_BASE};
static struct smsc9220_eth_dev_data_t dev_data = {.state = 0};
static const struct smsc9220_eth_dev_t dev = {&dev_cfg, &dev_data};
static volatile bool rx_on; /* the shield's RX line (the RX-status-FIFO-level interrupt enable) */
/* The interrupt's time by the task it interrupted (its handle; the last
 * entry: any task past the table, or none). */
#define ISR_TASKS 24u
static TaskHandle_t isr_task[ISR_TASKS];
static uint64_t isr_ns_in[ISR_TASKS + 1u];

/** The LAN9118 interrupt's time (ns, board clock) spent interrupting `task`,
 *  and in all; board.c reports it apart from the tasks' run time (declared
 *  weak there: the stock image has no such interrupt). */
uint64_t rts_netif_mps2_isr_ns_in(TaskHandle_t task);
uint64_t rts_netif_mps2_isr_ns(void);

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

uint64_t rts_nic_hw_cpu_ns(void)
{
    return rts_mps2_now_ns(); /* guest time: under -icount, instructions x 2^shift ns */
}

static uint64_t board_clock(void *drv)
{
    (void)drv;
    return rts_mps2_now_ns();
}

/* libshield's clock: the board's timer. The tick stops while the Ethernet
 * interrupt (above the tick's priority) drains a flood, and servers and
 * limits on a stopped clock would never replenish. */
uint64_t (*const rts_nic_hw_clock)(void *drv) = board_clock;

BaseType_t rts_nic_hw_open(void)
{
    if (smsc9220_init(&dev, wait_ms) != SMSC9220_ERROR_NONE) return pdFAIL;
    NVIC_ICER0 = 1u << ETH_IRQ;
    smsc9220_disable_all_interrupts(&dev);
    smsc9220_clear_all_interrupts(&dev);
    smsc9220_set_fifo_level_irq(&dev, SMSC9220_FIFO_LEVEL_IRQ_RX_STATUS_POS, SMSC9220_FIFO_LEVEL_IRQ_LEVEL_MIN);
    /* The MAC address of the end point (the stack's), low four bytes first. */
    const uint8_t *m = rts_nic_hw_cfg()->mac;
    const uint32_t lo = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
    const uint32_t hi = (uint32_t)m[4] | (uint32_t)m[5] << 8;
    (void)smsc9220_mac_regwrite(&dev, SMSC9220_MAC_REG_OFFSET_ADDRL, lo);
    (void)smsc9220_mac_regwrite(&dev, SMSC9220_MAC_REG_OFFSET_ADDRH, hi);
    /* The Ethernet interrupt calls FromISR APIs: at the syscall limit. */
    NVIC_IPR[ETH_IRQ] = (uint8_t)configMAX_SYSCALL_INTERRUPT_PRIORITY;
    return pdPASS;
}

BaseType_t rts_nic_hw_start(void)
{
    rx_on = true;
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

BaseType_t rts_nic_hw_output(const uint8_t *frame, size_t len)
{
    if (len > RTS_NIC_SLOT_BYTES) return pdFAIL;
    taskENTER_CRITICAL(); /* one TX FIFO: the IP task and the self-test's wire share it */
    const enum smsc9220_error_t e =
        smsc9220_send_by_chunks(&dev, (uint32_t)len, true, (const char *)frame, (uint32_t)len);
    taskEXIT_CRITICAL();
    return e == SMSC9220_ERROR_NONE ? pdPASS : pdFAIL;
}

/* The LAN9118 keeps its RX interrupt asserted while the RX status FIFO is
 * above its level. QEMU's model sets the status bit only when a frame
 * arrives: a bit cleared while frames are still in the FIFO, and a FIFO too
 * full to take another frame, would leave them there for good. So the
 * interrupt is pended again by hand whenever frames wait and the line is on. */
static bool frames_waiting(void)
{
    return smsc9220_get_rxfifo_data_used_space(&dev) != 0u;
}

static void pend_eth_irq(void)
{
    NVIC_ISPR0 = 1u << ETH_IRQ;
}

void rts_nic_hw_rx_irq(bool on)
{
    rx_on = on;
    if (on) {
        smsc9220_enable_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
        if (frames_waiting()) pend_eth_irq();
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

void rts_nic_hw_reposted(void)
{
    if (rx_on && frames_waiting()) pend_eth_irq(); /* the ISR stopped for want of a slot */
}

/* IRQ 13: the LAN9118's RX FIFOs into posted descriptor slots (the "DMA"),
 * then the RX interrupt proper (rts_nic_rx_isr()). Like a DMA NIC, it
 * stops when no slot is posted: the frames wait in the chip, whose FIFO
 * drops what arrives once it is full (the emulated NIC's own drops); a slot
 * posted again resumes it (rts_nic_hw_reposted()). Bounded: at most 64
 * frames per pass (more than the status FIFO holds), each at most its
 * status word's length of FIFO reads; frames left behind pend it again. */
static void rts_netif_mps2_eth_isr(void)
{
    BaseType_t woken = pdFALSE;
    /* The handler's cost on the board's clock (under -icount: instructions):
     * the whole of it, and the FIFO copies of the frames it moved. */
    const uint64_t t_isr = rts_mps2_now_ns();
    uint64_t copy_ns = 0;
    uint32_t copied = 0, words = 0;
    /* Cleared first: a frame that arrives while this drains sets it again. */
    smsc9220_clear_interrupt(&dev, SMSC9220_INTERRUPT_RX_STATUS_FIFO_LEVEL);
    if (!rx_on) return; /* the shield holds the line; pended before it did */
    for (unsigned k = 0; k < 64u; k++) {
        uint16_t slot = 0;
        uint8_t *mem = rts_nic_hw_slot(&slot);
        if (mem == NULL) break; /* no descriptor: the frames wait in the chip */
        const uint64_t t0 = rts_mps2_now_ns();
        const uint32_t size = smsc9220_peek_next_packet_size(&dev); /* pops the status word */
        if (size == 0u) break;
        if (size > RTS_NIC_SLOT_BYTES || size <= 4u) { /* not a frame a slot can hold: dropped */
            discard(size);
            rts_nic_hw_ring_full();
            continue;
        }
        (void)smsc9220_receive_by_chunks(&dev, (char *)mem, size);
        rts_nic_hw_filled(slot, (uint16_t)(size - 4u)); /* without the FCS */
        copy_ns += rts_mps2_now_ns() - t0;
        copied++;
        words += (size + 3u) / 4u;
    }
    rts_nic_rx_isr(&woken); /* may post slots again, and pend this interrupt */
    uint16_t slot;
    if (rts_nic_hw_slot(&slot) != NULL && frames_waiting()) pend_eth_irq();
    const uint64_t isr_ns = rts_mps2_now_ns() - t_isr;
    rts_nic_hw_count_isr(copy_ns, copied, words, isr_ns);
    /* FreeRTOS's run-time stats count the handler's time in the task it
     * interrupted: kept per task, the board reports it apart. */
    const TaskHandle_t cur = xTaskGetCurrentTaskHandle();
    unsigned k = 0;
    while (k < ISR_TASKS && isr_task[k] != cur && isr_task[k] != NULL) k++; /* bounded: 24 */
    if (k < ISR_TASKS) isr_task[k] = cur;
    isr_ns_in[k] += isr_ns;
    portYIELD_FROM_ISR(woken);
}

uint64_t rts_netif_mps2_isr_ns_in(TaskHandle_t task)
{
    for (unsigned k = 0; k < ISR_TASKS && isr_task[k] != NULL; k++)
        if (isr_task[k] == task) return isr_ns_in[k];
    return 0u;
}

uint64_t rts_netif_mps2_isr_ns(void)
{
    uint64_t sum = 0;
    for (unsigned k = 0; k <= ISR_TASKS; k++) sum += isr_ns_in[k];
    return sum;
}

/* The Ethernet interrupt (mps2_boot.c's vector table). */
void mps2_irq13_handler(void)
{
    rts_netif_mps2_eth_isr();
}
