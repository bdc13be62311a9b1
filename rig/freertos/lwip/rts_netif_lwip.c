/* The device's lwIP network interface on its NIC (see rts_netif_lwip.h):
 * libshield through the lwIP adapter (protected build) or lwIP's usual RTOS
 * driver (stock build), on the slots, rings and backends both stacks share
 * (nic/rts_nic.h: posix/rts_netif_posix.c, mps2-an385/rts_netif_mps2.c). */
#include "rts_netif_lwip.h"

#include <string.h>

#include "FreeRTOS.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/tcpip.h"
#include "netif/ethernet.h"
#include "rts_board.h"
#include "rts_nic.h"
#include "task.h"
#if !RTS_NETIF_LWIP_STOCK
#include "rts_lwip.h"
#endif

#if RTS_NETIF_LWIP_STOCK && LWIP_TCPIP_CORE_LOCKING_INPUT
#error "the stock build is lwIP's usual driver: LWIP_TCPIP_CORE_LOCKING_INPUT 0 (frames queued to tcpip_thread)"
#endif

static rts_net_cfg C;
static uint8_t mac[6];
static rts_nic_cfg nic_cfg;
static rts_net_stats stats;
static struct netif nif;
static volatile bool up;

static void fail(const char *what)
{
    char line[200];
    (void)rts_device_fmt(line, sizeof line, "%s: %s\n", RTS_BOARD_PROGRAM, what);
    rts_board_error(line);
}

bool rts_netif_lwip_prepare(const rts_net_cfg *c)
{
    if (c->protect == (RTS_NETIF_LWIP_STOCK != 0)) {
        fail(RTS_NETIF_LWIP_STOCK ? "protect 1: this is lwIP's stock build (its usual driver, no libshield)"
                                  : "protect 0: this is the libshield build; lwIP's usual driver is the stock build");
        return false;
    }
    C = *c;
    memcpy(mac, c->mac, sizeof mac);
    nic_cfg = (rts_nic_cfg){c->ifname, c->rx_cpu, mac};
    rts_nic_init(&nic_cfg, &stats);
    return true;
}

/* --------------------------------------------------------- transmit */

/* lwIP's linkoutput: one frame out of the NIC. Core locked (every lwIP
 * call that sends holds it), so one caller at a time uses the buffer. */
static err_t linkoutput(struct netif *n, struct pbuf *p)
{
    (void)n;
    static uint8_t frame[RTS_NIC_SLOT_BYTES];
#if ETH_PAD_SIZE
    (void)pbuf_remove_header(p, ETH_PAD_SIZE);
#endif
    const u16_t len = pbuf_copy_partial(p, frame, sizeof frame, 0);
#if ETH_PAD_SIZE
    (void)pbuf_add_header(p, ETH_PAD_SIZE);
#endif
    if (len == 0u || rts_nic_hw_output(frame, len) != pdPASS) {
        stats.tx_errors++;
        LINK_STATS_INC(link.err);
        return ERR_IF;
    }
    stats.tx_frames++;
    LINK_STATS_INC(link.xmit);
    return ERR_OK;
}

static err_t netif_setup(struct netif *n)
{
    n->name[0] = 'r';
    n->name[1] = 't';
    n->output = etharp_output;
    n->linkoutput = linkoutput;
    n->mtu = 1500;
    n->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(n->hwaddr, mac, ETH_HWADDR_LEN);
    n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    return ERR_OK;
}

#if RTS_NETIF_LWIP_STOCK
/* ================================================ lwIP's usual driver */

static TaskHandle_t input_task;

/* lwIP's usual RTOS driver: the RX interrupt wakes this task, which copies
 * every frame, in arrival order, into a pbuf from PBUF_POOL and hands it
 * to tcpip_input(): a MEMP_TCPIP_MSG_INPKT message in tcpip_thread's
 * mailbox. Counted as lwIP's drivers count (link.memerr, link.drop). */
static void input_main(void *arg)
{
    (void)arg;
    for (;;) {
        (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
        uint16_t slot;
        for (;;) {
            taskENTER_CRITICAL();
            const bool got = rts_nic_filled(&slot);
            if (got) rts_nic_filled_take();
            taskEXIT_CRITICAL();
            if (!got) break;
            const uint64_t t0 = rts_nic_hw_cpu_ns();
            const u16_t len = rts_nic_len(slot);
            struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(len + ETH_PAD_SIZE), PBUF_POOL);
            if (p != NULL) {
#if ETH_PAD_SIZE
                (void)pbuf_remove_header(p, ETH_PAD_SIZE);
#endif
                (void)pbuf_take(p, rts_nic_mem(slot), len);
#if ETH_PAD_SIZE
                (void)pbuf_add_header(p, ETH_PAD_SIZE);
#endif
            }
            taskENTER_CRITICAL();
            rts_nic_post(slot); /* the slot back to the NIC */
            taskEXIT_CRITICAL();
            if (p == NULL) { /* the pool is empty: the frame is lost */
                stats.stack_exhausted++;
                LINK_STATS_INC(link.memerr);
                LINK_STATS_INC(link.drop);
            } else {
                LINK_STATS_INC(link.recv);
                if (nif.input(p, &nif) != ERR_OK) { /* no message, or the mailbox is full */
                    pbuf_free(p);
                    stats.ip_queue_full++;
                    LINK_STATS_INC(link.drop);
                } else {
                    stats.to_ip_task++;
                }
            }
            stats.to_stack_ns += rts_nic_hw_cpu_ns() - t0;
            stats.to_stack_frames++;
        }
    }
}

static bool rx_start(void)
{
    static StaticTask_t tcb;
    static StackType_t stack[configMINIMAL_STACK_SIZE * 2];
    input_task = xTaskCreateStatic(input_main, "ethif", configMINIMAL_STACK_SIZE * 2, NULL,
                                   (UBaseType_t)C.net_prio, stack, &tcb);
    taskENTER_CRITICAL();
    for (uint16_t s = 0; s < RTS_NIC_RING; s++) rts_nic_post(s);
    taskEXIT_CRITICAL();
    return input_task != NULL;
}

void rts_nic_rx_isr(BaseType_t *woken)
{
    if (!up) return;
    uint16_t slot;
    if (!rts_nic_filled(&slot)) return; /* nothing new: no interrupt */
    stats.rx_irqs++;
    vTaskNotifyGiveFromISR(input_task, woken);
}

rts_err rts_netif_lwip_bind(const rts_shield_flow *f, uint8_t *id)
{
    (void)f;
    (void)id;
    return RTS_EINVAL;
}

const rts_shield *rts_netif_lwip_shield(void)
{
    return NULL;
}

const rts_net_stats *rts_netif_lwip_stats(void)
{
    return &stats;
}

#else
/* ============================================ libshield, the adapter */

static rts_lwip L;

static void post(void *drv, uint16_t buf, uint8_t *mem)
{
    (void)drv;
    (void)mem; /* rts_nic_mem(buf): the adapter's buf_mem + buf * buf_size */
    rts_nic_post(buf);
}

static void rx_irq_set(void *drv, bool on)
{
    (void)drv;
    rts_nic_hw_rx_irq(on);
}

/* The RX interrupt's descriptor loop (the adapter's harvest() callback, and
 * the global limit's polling step): each filled slot through libshield, in
 * place; no pbuf here. */
static uint32_t harvest(void *drv, uint32_t max, BaseType_t *woken)
{
    (void)drv;
    uint32_t n = 0;
    uint16_t slot;
    while (n < max && rts_nic_filled(&slot)) {
        const uint32_t bad = L.stats.bad_desc;
        const uint64_t t0 = rts_nic_hw_cpu_ns();
        const rts_lwip_next next = rts_lwip_frame_isr(&L, slot, rts_nic_len(slot), woken);
        rts_nic_count_shield(L.stats.bad_desc == bad ? RTS_OK : RTS_EINVAL, &L.last, rts_nic_hw_cpu_ns() - t0);
        if (next == RTS_LWIP_LEAVE) break; /* the global limit: the rest stays for the polling task */
        rts_nic_filled_take();
        n++;
        if (next == RTS_LWIP_STOP) break;
    }
    return n;
}

static bool rx_start(void)
{
    const rts_lwip_cfg lc = {.netif = &nif,
                             .buf_mem = rts_nic_mem(0),
                             .buf_size = RTS_NIC_SLOT_BYTES,
                             .post = post,
                             .rx_irq_set = rx_irq_set,
                             .harvest = harvest,
                             .clock_ns = rts_nic_hw_clock, /* NULL on the POSIX board: the tick count */
                             .place = RTS_LWIP_RX_TASK,
                             .poll_prio = (UBaseType_t)C.poll_prio};
    rts_shield_cfg sc;
    rts_shield_cfg_default(&sc);
    sc.short_circuit = C.short_circuit ? 1u : 0u;
    sc.recycle_threshold = C.recycle_below;
    sc.global_capacity = C.global_capacity;
    sc.global_period = (rts_time_ns)C.global_period_ns;
    sc.nbufs = RTS_NIC_SLOTS;
    sc.ring_size = RTS_NIC_RING;
    sc.task_base_prio = C.net_prio;
    return rts_lwip_init(&L, &lc, &sc) == RTS_OK; /* posts the ring's slots */
}

void rts_nic_rx_isr(BaseType_t *woken)
{
    if (!up) return;
    uint16_t slot;
    if (!rts_nic_filled(&slot)) return; /* nothing new: no interrupt */
    stats.rx_irqs++;
    if (!rts_irq_gate_enabled(&L.g.gate, 0)) return; /* a protection holds the line */
    if (rts_lwip_irq_isr(&L, woken)) (void)harvest(NULL, RTS_NIC_SLOTS, woken);
}

rts_err rts_netif_lwip_bind(const rts_shield_flow *f, uint8_t *id)
{
    if (!up) return RTS_EINVAL;
    return rts_lwip_bind(&L, f, id);
}

const rts_shield *rts_netif_lwip_shield(void)
{
    return up ? &L.sh : NULL;
}

const rts_net_stats *rts_netif_lwip_stats(void)
{
    /* What the adapter counted of the admitted frames, in the interface's terms. */
    stats.shield_dropped = L.stats.dropped;
    stats.to_ip_task = L.stats.to_lwip;
    stats.stack_exhausted = L.stats.no_pbuf;
    stats.ip_queue_full = L.stats.input_err;
    return &stats;
}
#endif

/* ------------------------------------------------------------ start */

bool rts_netif_lwip_start(void)
{
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, C.ip[0], C.ip[1], C.ip[2], C.ip[3]);
    IP4_ADDR(&mask, C.mask[0], C.mask[1], C.mask[2], C.mask[3]);
    ip4_addr_set_zero(&gw);
    /* tcpip_input: the stock build queues each frame to tcpip_thread; with the
     * adapter (LWIP_TCPIP_CORE_LOCKING_INPUT 1) it processes it in the caller. */
    if (netif_add(&nif, &ip, &mask, &gw, NULL, netif_setup, tcpip_input) == NULL) return false;
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);
    if (rts_nic_hw_open() != pdPASS) {
        fail("the NIC could not be opened");
        return false;
    }
    if (!rx_start() || rts_nic_start() != pdPASS) {
        fail("the receive path could not be started");
        return false;
    }
    up = true;
    return true;
}

bool rts_netif_lwip_up(void)
{
    return up;
}
