/* FreeRTOS-Plus-TCP network interface with libshield in its receive path,
 * for the FreeRTOS POSIX port (see rts_netif.h). */
#define _GNU_SOURCE /* AF_PACKET, if_nametoindex */
#include "rts_netif.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "FreeRTOS_IP_Private.h"
#include "NetworkBufferManagement.h"
#include "NetworkInterface.h"
#include "task.h"

_Static_assert(RTS_NETIF_RING < RTS_NETIF_SLOTS, "spare slots for recycling and refills");

/* ----------------------------------------------------- descriptor rings */

/* Single-producer single-consumer rings of slot ids. The FreeRTOS side is
 * one logical producer or consumer: its users run in the tick interrupt or
 * inside a critical section (signals masked), one thread at a time. */
typedef struct {
    uint16_t item[RTS_NETIF_SLOTS];
    _Atomic uint32_t head, tail;
} ring_t;

static bool ring_push(ring_t *r, uint16_t v)
{
    const uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&r->head, memory_order_acquire) >= RTS_NETIF_SLOTS) return false;
    r->item[t % RTS_NETIF_SLOTS] = v;
    atomic_store_explicit(&r->tail, t + 1u, memory_order_release);
    return true;
}

static bool ring_peek(ring_t *r, uint16_t *v)
{
    const uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h == atomic_load_explicit(&r->tail, memory_order_acquire)) return false;
    *v = r->item[h % RTS_NETIF_SLOTS];
    return true;
}

static void ring_drop_head(ring_t *r)
{
    atomic_fetch_add_explicit(&r->head, 1u, memory_order_release);
}

/* ---------------------------------------------------------------- state */

static const rts_netif_cfg *cfg;
static NetworkInterface_t *self;
static int fd = -1;
static pthread_t rx_thread;
static uint8_t slot_mem[RTS_NETIF_SLOTS][RTS_NETIF_SLOT_BYTES];
static volatile uint16_t slot_len[RTS_NETIF_SLOTS];
static ring_t posted; /* FreeRTOS side -> receive thread */
static ring_t filled; /* receive thread -> FreeRTOS side */
static rts_netif_stats stats;

static rts_freertos fr;
static rts_freertos_shield g;
static rts_shield sh;
static volatile bool up;
static TaskHandle_t net_task, poll_task;

/* CPU time of the calling thread: the cost of a call even when the host
 * (or a higher-priority FreeRTOS task) preempts it midway. */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void repost(uint16_t slot)
{
    (void)ring_push(&posted, slot); /* cannot overflow: a slot is in one place at a time */
}

/* ------------------------------------------------- the NIC: rx thread */

static void *rx_main(void *arg)
{
    (void)arg;
    static uint8_t scratch[RTS_NETIF_SLOT_BYTES];
    for (;;) {
        uint16_t slot;
        const bool have = ring_peek(&posted, &slot);
        uint8_t *dst = have ? slot_mem[slot] : scratch;
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        const ssize_t n = recvfrom(fd, dst, RTS_NETIF_SLOT_BYTES, 0, (struct sockaddr *)&from, &fl);
        if (n <= 0) {
            if (n < 0 && errno == EBADF) return NULL;
            continue; /* timeout (EAGAIN), EINTR */
        }
        if (from.sll_pkttype == PACKET_OUTGOING) continue; /* our own transmissions */
        stats.nic_frames++;
        if (!have) {
            stats.nic_ring_full++; /* the NIC found no posted descriptor */
            continue;
        }
        ring_drop_head(&posted);
        slot_len[slot] = (uint16_t)n;
        (void)ring_push(&filled, slot);
    }
}

static void rx_irq_set(void *drv, unsigned line, bool on)
{
    (void)drv;
    (void)line;
    (void)on; /* the tick hook checks the gate: rts_irq_gate_enabled() */
}

/* --------------------------------------------------- the RX interrupt */

/* Harvest filled descriptors through the shield (tick interrupt, or the
 * polling task inside the critical section). */
static uint32_t harvest(uint32_t max, BaseType_t *woken)
{
    uint32_t n = 0;
    uint16_t slot;
    while (n < max && ring_peek(&filled, &slot)) {
        rts_shield_rx rx;
        uint32_t flags = 0;
        const uint64_t t0 = cpu_ns();
        const rts_err e = rts_freertos_shield_frame_isr(&g, slot, slot_mem[slot], slot_len[slot], 0, 0, &rx,
                                                        &flags, NULL, woken);
        stats.shield_ns += cpu_ns() - t0;
        stats.shield_frames++;
        if (e != RTS_OK) {
            ring_drop_head(&filled); /* not a ring buffer: cannot happen; do not spin on it */
            repost(slot);
            continue;
        }
        if (rx.outcome == RTS_RX_GLOBAL_LIMIT) break; /* left for the polling task */
        ring_drop_head(&filled);
        n++;
        if (rx.repost != RTS_BUF_NONE) {
            stats.shield_dropped++;
            repost(rx.repost);
        }
        if (flags & RTS_SHIELD_F_STOP) break;
    }
    return n;
}

void rts_netif_tick_isr(void)
{
    if (!up) return;
    uint16_t slot;
    if (!ring_peek(&filled, &slot)) return; /* nothing new: no interrupt */
    BaseType_t woken = pdFALSE;
    stats.rx_irqs++;
    if (cfg->protect) {
        if (!rts_irq_gate_enabled(&g.gate, 0)) return; /* a protection holds the line */
        if (rts_freertos_shield_irq_isr(&g, 0, &woken)) (void)harvest(RTS_NETIF_SLOTS, &woken);
    } else {
        vTaskNotifyGiveFromISR(net_task, &woken);
    }
    /* In the tick hook the kernel switches on its own yield-pending flag. */
    (void)woken;
}

/* ----------------------------------------------------- network task */

/* Copy slot's frame into a network buffer for the IP task. */
static void to_stack_inner(uint16_t slot);

static void to_stack(uint16_t slot)
{
    const uint64_t t0 = cpu_ns();
    to_stack_inner(slot);
    stats.to_stack_ns += cpu_ns() - t0;
    stats.to_stack_frames++;
}

static void to_stack_inner(uint16_t slot)
{
    const size_t len = slot_len[slot];
    NetworkBufferDescriptor_t *nb = pxGetNetworkBufferWithDescriptor(len, 0);
    if (nb == NULL) {
        stats.stack_exhausted++;
        return;
    }
    memcpy(nb->pucEthernetBuffer, slot_mem[slot], len);
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

static void net_main(void *arg)
{
    (void)arg;
    for (;;) {
        if (!cfg->protect) { /* the stock path: every frame, in arrival order */
            (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
            uint16_t slot;
            for (;;) {
                rts_freertos_lock();
                const bool got = ring_peek(&filled, &slot);
                if (got) ring_drop_head(&filled);
                rts_freertos_unlock();
                if (!got) break;
                to_stack(slot);
                rts_freertos_lock();
                repost(slot);
                rts_freertos_unlock();
            }
            continue;
        }
        rts_rx_job job;
        rts_time_ns sleep = 0;
        if (rts_freertos_shield_task_next(&g, &job, &sleep) != RTS_OK) {
            rts_freertos_shield_wait(&g, sleep);
            continue;
        }
        const rts_time_ns t0 = rts_freertos_now_ns(&fr);
        to_stack(job.buf);
        uint16_t refill = RTS_BUF_NONE;
        (void)rts_freertos_shield_task_done(&g, &job, rts_freertos_now_ns(&fr) - t0, 0, &refill);
        if (refill != RTS_BUF_NONE) {
            rts_freertos_lock();
            repost(refill);
            rts_freertos_unlock();
        }
    }
}

static void poll_main(void *arg)
{
    (void)arg;
    for (;;) {
        (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY); /* F_POLL */
        const uint32_t n = rts_freertos_shield_poll_begin(&g);
        BaseType_t woken = pdFALSE;
        rts_freertos_lock();
        (void)harvest(n, &woken);
        rts_freertos_unlock();
        if (woken != pdFALSE) taskYIELD();
        rts_freertos_shield_poll_end(&g);
    }
}

/* ------------------------------------------------- Plus-TCP interface */

static BaseType_t open_socket(void)
{
    const unsigned idx = if_nametoindex(cfg->ifname);
    if (idx == 0u) return pdFAIL;
    fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) return pdFAIL;
    struct sockaddr_ll a;
    memset(&a, 0, sizeof a);
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = (int)idx;
    struct timeval tv = {0, 100000}; /* wake up now and then */
    const int rcvbuf = 8 << 20;        /* a flood's burst waits in the socket, not in a kernel drop */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
        close(fd);
        fd = -1;
        return pdFAIL;
    }
    return pdPASS;
}

static BaseType_t initialise(NetworkInterface_t *itf)
{
    (void)itf;
    if (up) return pdPASS;
    if (fd < 0 && open_socket() != pdPASS) return pdFAIL;
    for (uint16_t s = 0; s < RTS_NETIF_RING; s++) repost(s);

    static StaticTask_t net_tcb, poll_tcb;
    static StackType_t net_stack[configMINIMAL_STACK_SIZE * 2], poll_stack[configMINIMAL_STACK_SIZE * 2];
    net_task = xTaskCreateStatic(net_main, "rts-net", configMINIMAL_STACK_SIZE * 2, NULL, cfg->net_task_prio,
                                 net_stack, &net_tcb);
    if (cfg->protect) {
        poll_task = xTaskCreateStatic(poll_main, "rts-poll", configMINIMAL_STACK_SIZE * 2, NULL,
                                      cfg->poll_task_prio, poll_stack, &poll_tcb);
        const rts_freertos_cfg pc = {NULL, rx_irq_set, NULL, NULL, NULL, NULL, NULL};
        if (rts_freertos_init(&fr, &pc) != RTS_OK) return pdFAIL;
        rts_shield_cfg c = cfg->shield;
        c.protections |= RTS_SHIELD_RX_PATH;
        c.nbufs = RTS_NETIF_SLOTS;
        c.ring_size = RTS_NETIF_RING;
        c.task_base_prio = (uint32_t)cfg->net_task_prio;
        const rts_freertos_shield_cfg gc = {net_task, poll_task, {0, 1, 2, 3}};
        if (rts_freertos_shield_init(&g, &sh, &fr, &c, &gc) != RTS_OK) return pdFAIL;
        rts_freertos_shield_rx_enable(&g, 0, true);
    }

    /* The NIC's thread must never take the kernel's signals. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int e = pthread_create(&rx_thread, NULL, rx_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) return pdFAIL;
    if (cfg->rx_cpu >= 0) { /* the NIC's DMA beside, not on, the FreeRTOS CPU */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cfg->rx_cpu, &set);
        (void)pthread_setaffinity_np(rx_thread, sizeof set, &set);
    }
    up = true;
    return pdPASS;
}

static BaseType_t output(NetworkInterface_t *itf, NetworkBufferDescriptor_t *const nb, BaseType_t release)
{
    (void)itf;
    if (send(fd, nb->pucEthernetBuffer, nb->xDataLength, MSG_DONTWAIT) == (ssize_t)nb->xDataLength) {
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
    memset(itf, 0, sizeof *itf);
    itf->pcName = c->ifname;
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
