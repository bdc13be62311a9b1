/* FreeRTOS-Plus-TCP network interface with libshield in its receive path
 * (see rts_netif.h), on the device's NIC (nic/rts_nic.h: the slots and
 * rings, and a backend per board: posix/rts_netif_posix.c, AF_PACKET on a
 * veth; mps2-an385/rts_netif_mps2.c, the MPS2 board's LAN9118). */
#include "rts_netif.h"

#include <string.h>

#include "FreeRTOS_IP_Private.h"
#include "NetworkBufferManagement.h"
#include "NetworkInterface.h"
#include "task.h"

/* ---------------------------------------------------------------- state */

static const rts_netif_cfg *cfg;
static NetworkInterface_t *self;
static rts_netif_stats stats;

static rts_freertos fr;
static rts_freertos_shield g;
static rts_shield sh;
static volatile bool up;
static TaskHandle_t net_task, poll_task;

static void rx_irq_set(void *drv, unsigned line, bool on)
{
    (void)drv;
    (void)line;
    rts_nic_hw_rx_irq(on);
}

/* --------------------------------------------------- the RX interrupt */

/* Harvest filled descriptors through the shield (RX interrupt, or the
 * polling task inside the critical section). */
static uint32_t harvest(void *ctx, uint32_t max, BaseType_t *woken)
{
    (void)ctx;
    uint32_t n = 0;
    uint16_t slot;
    while (n < max && rts_nic_filled(&slot)) {
        rts_shield_rx rx;
        uint32_t flags = 0;
        const uint64_t t0 = rts_nic_hw_cpu_ns();
        const rts_err e = rts_freertos_shield_frame_isr(&g, slot, rts_nic_mem(slot), rts_nic_len(slot), 0, 0, &rx,
                                                        &flags, NULL, woken);
        rts_nic_count_shield(e, &rx, rts_nic_hw_cpu_ns() - t0);
        if (e != RTS_OK) {
            rts_nic_filled_take(); /* not a ring buffer: cannot happen; do not spin on it */
            rts_nic_post(slot);
            continue;
        }
        if (rx.outcome == RTS_RX_GLOBAL_LIMIT) break; /* left for the polling task */
        rts_nic_filled_take();
        n++;
        if (rx.repost != RTS_BUF_NONE) {
            stats.shield_dropped++;
            rts_nic_post(rx.repost);
        }
        if (flags & RTS_SHIELD_F_STOP) break;
    }
    return n;
}

void rts_nic_rx_isr(BaseType_t *woken)
{
    if (!up) return;
    uint16_t slot;
    if (!rts_nic_filled(&slot)) return; /* nothing new: no interrupt */
    stats.rx_irqs++;
    if (cfg->protect) {
        if (!rts_irq_gate_enabled(&g.gate, 0)) return; /* a protection holds the line */
        if (rts_freertos_shield_irq_isr(&g, 0, woken)) (void)harvest(NULL, RTS_NIC_SLOTS, woken);
    } else {
        vTaskNotifyGiveFromISR(net_task, woken);
    }
}

/* ----------------------------------------------------- network task */

/* Copy slot's frame into a network buffer for the IP task. */
static void to_stack_inner(uint16_t slot)
{
    const size_t len = rts_nic_len(slot);
    NetworkBufferDescriptor_t *nb = pxGetNetworkBufferWithDescriptor(len, 0);
    if (nb == NULL) {
        stats.stack_exhausted++;
        return;
    }
    memcpy(nb->pucEthernetBuffer, rts_nic_mem(slot), len);
    nb->xDataLength = len;
    nb->pxInterface = self;
    nb->pxEndPoint = FreeRTOS_MatchingEndpoint(self, nb->pucEthernetBuffer);
    if (nb->pxEndPoint == NULL) { /* not for this device (e.g. IPv6 multicast) */
        vReleaseNetworkBufferAndDescriptor(nb);
        stats.no_endpoint++;
        return;
    }
    IPStackEvent_t ev = {eNetworkRxEvent, nb};
    if (xSendEventStructToIPTask(&ev, 0) != pdPASS) {
        vReleaseNetworkBufferAndDescriptor(nb);
        stats.ip_queue_full++;
        return;
    }
    stats.to_ip_task++;
}

static void to_stack(uint16_t slot)
{
    const uint64_t t0 = rts_nic_hw_cpu_ns();
    to_stack_inner(slot);
    stats.to_stack_ns += rts_nic_hw_cpu_ns() - t0;
    stats.to_stack_frames++;
}

/* The protected path's processing of job->buf: protocol processing at the
 * frame's priority, the IP task taking the network task's inherited
 * priority for what it is handed (Behnke §5.4: the stack works on a packet
 * at the priority of its flow). Returns the work it took. */
static rts_time_ns process(void *ctx, const rts_rx_job *job)
{
    (void)ctx;
    TaskHandle_t ip = FreeRTOS_GetIPTaskHandle();
    const UBaseType_t p = uxTaskPriorityGet(NULL);
    if (cfg->ip_task_inherits && ip != NULL && uxTaskPriorityGet(ip) != p) {
        vTaskPrioritySet(ip, p);
        stats.ip_prio_sets++;
    }
    const rts_time_ns t0 = rts_freertos_now_ns(&fr);
    to_stack(job->buf);
    return rts_freertos_now_ns(&fr) - t0;
}

static void repost_spare(void *ctx, uint16_t slot)
{
    (void)ctx;
    rts_nic_post(slot);
}

static void net_main(void *arg)
{
    (void)arg;
    for (;;) {
        if (!cfg->protect) { /* the stock path: every frame, in arrival order */
            (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
            uint16_t slot;
            uint32_t taken = 0; /* this wake-up's frames (the stack's drains: rts_net_stack_counters()) */
            for (;;) {
                rts_freertos_lock();
                const bool got = rts_nic_filled(&slot);
                if (got) rts_nic_filled_take();
                rts_freertos_unlock();
                if (!got) break;
                taken++;
                to_stack(slot);
                rts_freertos_lock();
                rts_nic_post(slot);
                rts_freertos_unlock();
            }
            if (taken > 0) {
                stats.net_wakes++;
                if (taken > stats.net_wake_frames_max) stats.net_wake_frames_max = taken;
            }
            continue;
        }
        (void)rts_freertos_shield_task_step(&g, process, repost_spare, NULL);
    }
}

static void poll_main(void *arg)
{
    (void)arg;
    for (;;) (void)rts_freertos_shield_poll_step(&g, harvest, NULL); /* F_POLL */
}

/* ------------------------------------------------- Plus-TCP interface */

static BaseType_t initialise(NetworkInterface_t *itf)
{
    (void)itf;
    if (up) return pdPASS;
    if (rts_nic_hw_open() != pdPASS) return pdFAIL;
    for (uint16_t s = 0; s < RTS_NIC_RING; s++) rts_nic_post(s);

    static StaticTask_t net_tcb, poll_tcb;
    static StackType_t net_stack[configMINIMAL_STACK_SIZE * 2], poll_stack[configMINIMAL_STACK_SIZE * 2];
    net_task = xTaskCreateStatic(net_main, "rts-net", configMINIMAL_STACK_SIZE * 2, NULL, cfg->net_task_prio,
                                 net_stack, &net_tcb);
    if (cfg->protect) {
        poll_task = xTaskCreateStatic(poll_main, "rts-poll", configMINIMAL_STACK_SIZE * 2, NULL,
                                      cfg->poll_task_prio, poll_stack, &poll_tcb);
        const rts_freertos_cfg pc = {NULL, rx_irq_set, NULL, rts_nic_hw_clock, NULL, NULL, NULL};
        if (rts_freertos_init(&fr, &pc) != RTS_OK) return pdFAIL;
        rts_shield_cfg c = cfg->shield;
        c.protections |= RTS_SHIELD_RX_PATH;
        c.nbufs = RTS_NIC_SLOTS;
        c.ring_size = RTS_NIC_RING;
        c.task_base_prio = (uint32_t)cfg->net_task_prio;
        const rts_freertos_shield_cfg gc = {net_task, poll_task, {0, 1, 2, 3}};
        if (rts_freertos_shield_init(&g, &sh, &fr, &c, &gc) != RTS_OK) return pdFAIL;
        rts_freertos_shield_rx_enable(&g, 0, true);
    }
    if (rts_nic_start() != pdPASS) return pdFAIL;
    up = true;
    return pdPASS;
}

static BaseType_t output(NetworkInterface_t *itf, NetworkBufferDescriptor_t *const nb, BaseType_t release)
{
    (void)itf;
    if (rts_nic_hw_output(nb->pucEthernetBuffer, nb->xDataLength) == pdPASS) {
        stats.tx_frames++;
    } else {
        stats.tx_errors++;
    }
    if (release != pdFALSE) vReleaseNetworkBufferAndDescriptor(nb);
    return pdTRUE;
}

static BaseType_t link_status(NetworkInterface_t *itf)
{
    (void)itf;
    return up ? pdTRUE : pdFALSE;
}

NetworkInterface_t *rts_netif_fill(NetworkInterface_t *itf, const rts_netif_cfg *c)
{
    cfg = c;
    self = itf;
    rts_nic_init(&c->nic, &stats);
    memset(itf, 0, sizeof *itf);
    itf->pcName = c->nic.ifname;
    itf->pfInitialise = initialise;
    itf->pfOutput = output;
    itf->pfGetPhyLinkStatus = link_status;
    FreeRTOS_AddNetworkInterface(itf);
    return itf;
}

rts_err rts_netif_bind(const rts_shield_flow *f, uint8_t *id)
{
    if (!up || !cfg->protect) return RTS_EINVAL;
    return rts_freertos_shield_bind(&g, f, id);
}

const rts_netif_stats *rts_netif_stats_get(void)
{
    return &stats;
}

const rts_shield *rts_netif_shield(void)
{
    return (up && cfg->protect) ? &sh : NULL;
}

/* The stack's receive-path trace hooks (FreeRTOSIPConfig.h): this interface
 * counts its losses in its own code. */
/* The IP task's drains, counted where it takes each event (IP task context):
 * a drain is a run of received frames it took without finding its event
 * queue empty, from its wake-up to its next block; the per-snapshot levels
 * (cleared by their reader, rts_net_stack_counters()): the most frames in
 * one drain, the most events its queue held when it took one (that one
 * included), the most network buffers in use when it took a frame. A race
 * with the reader loses one sample: a measurement, not control. */
static bool in_drain;
static uint32_t drain_frames;

void rts_net_trace_ip_event(int event)
{
    const uint32_t waiting = (uint32_t)uxQueueMessagesWaiting(xNetworkEventQueue);
    if (event == (int)eNetworkRxEvent) {
        if (!in_drain) {
            in_drain = true;
            stats.ip_drains++;
            drain_frames = 0;
        }
        stats.ip_rx_events++;
        drain_frames++;
        if (drain_frames > stats.ip_drain_frames_max) stats.ip_drain_frames_max = drain_frames;
        const uint32_t used =
            (uint32_t)(ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS - uxGetNumberOfFreeNetworkBuffers());
        if (used > stats.buffers_used_max) stats.buffers_used_max = used;
    }
    if (waiting + 1u > stats.ip_queue_max) stats.ip_queue_max = waiting + 1u;
    if (waiting == 0u) in_drain = false;
}

void rts_net_trace_rx_lost(void)
{
}
