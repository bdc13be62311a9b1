/* lwIP on FreeRTOS (NO_SYS 0, contrib/ports/freertos/sys_arch.c) with the
 * adapter (libshield/port/lwip/) in its netif's receive path, on the real
 * kernel: the POSIX port on the host and Cortex-M3 booted in QEMU's
 * mps2-an385 (tools/lwip_build.sh). The platform files are the FreeRTOS
 * port's self-test ones (libshield/port/freertos/selftest/main_posix.c,
 * main_cm3.c, mps2_boot.c): the tick hook is the wire, the RX interrupt is
 * the tick hook's pending latch (POSIX) or NVIC IRQ 13 (Cortex-M3).
 *
 * Built once per placement of the network task (TEST_TCPIP_THREAD):
 *   0  the adapter's receive task (RTS_LWIP_RX_TASK), netif->input =
 *      tcpip_input, processed there under the core lock;
 *   1  tcpip_thread itself (RTS_LWIP_TCPIP_THREAD), woken by one callback
 *      message, netif->input = ethernet_input;
 * once with the receive task and a global limit (TEST_GLOBAL_CAP frames
 * per ms): the RX interrupt goes off, the adapter's polling task harvests
 * the ring at each period start, interrupts resume after the flood; and
 * once without libshield (TEST_STOCK 1, lwIP built with
 * LWIP_TCPIP_CORE_LOCKING_INPUT 0): lwIP's usual RTOS driver, whose input
 * task queues every frame to tcpip_thread, for the losses to compare.
 *
 * For one second the wire sends a wanted UDP flow (port 5000, one datagram
 * per tick), ARP requests, and for 600 ms 30 flood frames per tick (9 on Cortex-M3; a
 * bulk UDP flow over its flow server, UDP to an unbound port, TCP SYNs).
 * Checks: every wanted datagram delivered to its UDP pcb, in order, and
 * processed at the flow's priority (the task lwIP runs it in inherited
 * CTRL_PRIO); the flood dropped inside libshield by reason; the pbuf pool
 * never dry; no frame ever queued as a tcpip_thread message (lwIP is
 * built without the MEMP_TCPIP_MSG_INPKT pool); lwIP's core-locking check on every core
 * call; every buffer and frame accounted for; the network task back at its
 * base priority. Exit status 0 when every check holds. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/memp.h"
#include "lwip/stats.h"
#include "lwip/tcpip.h"
#include "lwip/udp.h"
#include "netif/ethernet.h"
#include "selftest.h"
#include "semphr.h"
#include "task.h"
#include "test_nic.h"

#ifndef TEST_STOCK
#define TEST_STOCK 0
#endif
#ifndef TEST_TCPIP_THREAD
#define TEST_TCPIP_THREAD 0
#endif
#if !TEST_STOCK
#define PLACE (TEST_TCPIP_THREAD ? RTS_LWIP_TCPIP_THREAD : RTS_LWIP_RX_TASK)
#endif
#ifndef TEST_GLOBAL_CAP
#define TEST_GLOBAL_CAP 0 /* no global limit */
#endif

#define NBUFS 48 /* RX buffers: 40 descriptors + 8 spares */
#define RING 40
#define BUF_BYTES 256 /* the test's frames are short; a real driver: 1536 */
#define CTRL_PRIO 6   /* the wanted flow's receiver (timer service task: 7) */
#if TEST_STOCK
#define NET_BASE_PRIO 5 /* the stock input task, above tcpip_thread as vendor ports ship it */
#elif TEST_TCPIP_THREAD
#define NET_BASE_PRIO TCPIP_THREAD_PRIO
#else
#define NET_BASE_PRIO 2
#endif
#define POLL_PRIO 5
#define RUNNER_PRIO 1

#define TRAFFIC_TICKS 1000u
#define FLOOD_FROM 200u
#define FLOOD_TO 800u
#if defined(__arm__)
/* Cortex-M3 in QEMU (about 31 MHz with -icount shift=5): the wire builds
 * every frame on the same core, and each frame is its own RX interrupt. */
#define FLOOD_PER_TICK 9u
#define RECYCLE_AT RTS_SHIELD_THRESHOLD_DEFAULT /* half the ring */
#else
/* The POSIX port runs the RX interrupt once per tick: 31 frames at once.
 * Shed best effort (short circuit, recycling) below 36 posted descriptors,
 * so the ring keeps room for one interrupt's burst. */
#define FLOOD_PER_TICK 30u
#define RECYCLE_AT 36
#endif
#define DRAIN_TICKS 300u

static uint8_t rx_mem[NBUFS][BUF_BYTES];
#if !TEST_STOCK
static rts_lwip sh_if;
#endif
static struct netif nif;
static SemaphoreHandle_t ready;
static volatile bool wire_on;
static uint32_t ticks;

static struct {
    UBaseType_t ctrl_prio_min, ctrl_prio_max, bulk_prio_min;
} cnt = {.ctrl_prio_min = 99, .bulk_prio_min = 99};

/* ------------------------------------------------------------- output */

static unsigned failures;

static void out(const char *fmt, va_list ap)
{
    char line[256];
    (void)vsnprintf(line, sizeof line, fmt, ap);
    st_print(line);
}

static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out(fmt, ap);
    va_end(ap);
}

static void check(bool ok, const char *fmt, ...)
{
    st_print(ok ? "ok: " : "FAIL: ");
    va_list ap;
    va_start(ap, fmt);
    out(fmt, ap);
    va_end(ap);
    st_print("\n");
    if (!ok) failures++;
}

/* ------------------------------------------------------ platform hooks */

void rts_selftest_assert(const char *file, int line)
{
    say("kernel assert failed: %s:%d\n", file, line);
    st_exit(2);
}

void lwip_port_assert(const char *msg, int line, const char *file)
{
    say("lwIP assert failed: %s (%s:%d)\n", msg, file, line);
    st_exit(3);
}

unsigned int lwip_port_rand(void)
{
    static uint32_t x = 2463534242u; /* xorshift32: deterministic */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

#if defined(__arm__)
#include <errno.h>
#include <stddef.h>
void *_sbrk(ptrdiff_t incr);
/* newlib's malloc has no memory here (vsnprintf() refers to it, and never
 * calls it for a string): FreeRTOS's heap_4 is the only heap. */
void *_sbrk(ptrdiff_t incr)
{
    (void)incr;
    errno = ENOMEM;
    return (void *)-1;
}
#endif

/* --------------------------------------------------------- the device */


/* Runs in the task lwIP processes the datagram in: its priority is what the
 * datagram was processed at. */
static void record_prio(int kind)
{
    const UBaseType_t prio = uxTaskPriorityGet(NULL);
    if (kind == K_WANTED) {
        if (prio < cnt.ctrl_prio_min) cnt.ctrl_prio_min = prio;
        if (prio > cnt.ctrl_prio_max) cnt.ctrl_prio_max = prio;
    } else if (prio < cnt.bulk_prio_min) {
        cnt.bulk_prio_min = prio;
    }
}

#if !TEST_STOCK
/* [freertos-init] */
static void shield_init(void)
{
    const rts_lwip_cfg cfg = {.netif = &nif,
                              .buf_mem = &rx_mem[0][0],
                              .buf_size = BUF_BYTES,
                              .drv = &sh_if,
                              .post = tn_dma_post,
                              .rx_irq_set = tn_rx_irq_set,
                              .harvest = tn_harvest,
                              .place = PLACE, /* receive task, or tcpip_thread */
                              .poll_prio = POLL_PRIO};
    rts_shield_cfg sc;
    rts_shield_cfg_default(&sc);
    sc.nbufs = NBUFS;
    sc.ring_size = RING;
    sc.recycle_threshold = RECYCLE_AT;
    sc.global_capacity = TEST_GLOBAL_CAP; /* frames per period; 0: none */
    sc.global_period = 1000000;           /* 1 ms */
    sc.task_base_prio = NET_BASE_PRIO; /* the network task's own priority, below CTRL_PRIO */
    if (rts_lwip_init(&sh_if, &cfg, &sc) != RTS_OK) st_exit(4);
    uint8_t id;
    const rts_shield_flow ctrl = {.proto = RTS_PROTO_UDP, .local_port = TN_CTRL_PORT, .prio = CTRL_PRIO};
    const rts_shield_flow bulk = {.proto = RTS_PROTO_UDP, .local_port = TN_BULK_PORT, .prio = 1,
                                  .capacity = 1, .server_period = 1000000}; /* 1 per ms */
    if (rts_lwip_bind(&sh_if, &ctrl, &id) != RTS_OK || rts_lwip_bind(&sh_if, &bulk, &id) != RTS_OK) st_exit(4);
}
/* [freertos-init end] */
#else
static TaskHandle_t stock_task;
static struct {
    unsigned no_pbuf[K_KINDS], refused[K_KINDS];
} lost;

/* [stock-rtos] */
/* lwIP's usual RTOS driver, without libshield: the RX interrupt wakes an
 * input task, which copies every frame, in arrival order, into a pbuf from
 * PBUF_POOL and hands it to tcpip_input(): a MEMP_TCPIP_MSG_INPKT message
 * in tcpip_thread's mailbox. */
static void stock_input_task(void *arg)
{
    (void)arg;
    for (;;) {
        (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
        uint16_t buf, len;
        for (;;) {
            taskENTER_CRITICAL();
            const bool got = tn_desc_filled(&buf, &len);
            if (got) tn_desc_advance();
            taskEXIT_CRITICAL();
            if (!got) break;
            struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(len + ETH_PAD_SIZE), PBUF_POOL);
            if (p != NULL) {
                (void)pbuf_remove_header(p, ETH_PAD_SIZE);
                (void)pbuf_take(p, rx_mem[buf], len);
                (void)pbuf_add_header(p, ETH_PAD_SIZE);
            }
            const int k = tn_kind(rx_mem[buf], len); /* the test's own accounting */
            taskENTER_CRITICAL();
            tn_dma_post(NULL, buf, rx_mem[buf]);     /* the descriptor back to the DMA */
            taskEXIT_CRITICAL();
            if (p == NULL) {                         /* the pool is empty: the frame is lost */
                LINK_STATS_INC(link.memerr);
                LINK_STATS_INC(link.drop);
                if (k >= 0) lost.no_pbuf[k]++;
                continue;
            }
            LINK_STATS_INC(link.recv);
            if (nif.input(p, &nif) != ERR_OK) {      /* no message, or the mailbox is full */
                pbuf_free(p);
                LINK_STATS_INC(link.drop);
                if (k >= 0) lost.refused[k]++;
            }
        }
    }
}
/* [stock-rtos end] */

static void stock_init(void)
{
    (void)xTaskCreate(stock_input_task, "ethif", configMINIMAL_STACK_SIZE * 2, NULL, NET_BASE_PRIO, &stock_task);
    taskENTER_CRITICAL();
    for (uint16_t b = 0; b < RING; b++) tn_dma_post(NULL, b, rx_mem[b]);
    taskEXIT_CRITICAL();
    tn_rx_irq_set(NULL, true);
}
#endif

/* tcpip_init()'s done callback: tcpip_thread, core locked. */
static void tcpip_ready(void *arg)
{
    (void)arg;
    /* the receive task hands frames over from outside tcpip_thread: tcpip_input;
     * tcpip_thread as the network task calls ethernet_input itself */
#if TEST_STOCK
    tn_netif_add(&nif, tcpip_input); /* the stock input task hands frames over */
#else
    tn_netif_add(&nif, PLACE == RTS_LWIP_RX_TASK ? tcpip_input : ethernet_input);
#endif
    tn_rx_hook = record_prio;
    tn_receivers();
#if !TEST_STOCK
    if (PLACE == RTS_LWIP_TCPIP_THREAD) shield_init(); /* in tcpip_thread */
#endif
    xSemaphoreGive(ready);
}

/* ------------------------------------------------ the wire, the RX ISR */

/* One frame: the DMA fills a descriptor (atomic to the RX ISR), the NIC
 * raises its interrupt (Cortex-M3: IRQ 13 preempts the tick at once, one
 * interrupt per frame; POSIX: the port runs it at the end of the tick hook). */
static void arrive(const uint8_t *f, uint16_t len)
{
    const UBaseType_t m = taskENTER_CRITICAL_FROM_ISR();
    tn_wire(f, len);
    taskEXIT_CRITICAL_FROM_ISR(m);
    st_rx_raise();
}

void st_tick(void)
{
    if (!wire_on) return;
    const uint32_t t = ticks++;
    if (t >= TRAFFIC_TICKS) return;
    tn_now_ms = t;
    const unsigned n = (t >= FLOOD_FROM && t < FLOOD_TO) ? FLOOD_PER_TICK : 0u;
    const unsigned wanted_at = t % (n + 1u); /* anywhere among the flood's frames */
    uint8_t f[TN_FRAME_MAX];
    if (t % 50u == 0u) arrive(f, tn_arp_request(f));
    for (unsigned i = 0; i <= n; i++) {
        if (i == wanted_at) arrive(f, tn_udp(f, TN_CTRL_PORT, t + 1u));
        if (i == n) break;
        const unsigned k = (t * FLOOD_PER_TICK + i) % 3u;
        arrive(f, k == 0 ? tn_udp(f, TN_BULK_PORT, t) : k == 1 ? tn_udp(f, TN_UNBOUND_PORT, t) : tn_syn(f, t));
    }
}

#if !TEST_STOCK
/* [freertos-isr] */
void st_rx_isr(void) /* the Ethernet RX interrupt */
{
    BaseType_t woken = pdFALSE;
    if (rts_lwip_irq_isr(&sh_if, &woken)) (void)tn_harvest(&sh_if, UINT32_MAX, &woken);
    st_isr_exit(woken); /* portYIELD_FROM_ISR(woken) */
}
/* [freertos-isr end] */
#else
void st_rx_isr(void)
{
    BaseType_t woken = pdFALSE;
    vTaskNotifyGiveFromISR(stock_task, &woken);
    st_isr_exit(woken);
}
#endif

/* -------------------------------------------------------------- checks */

static void report_common(void)
{
    for (int k = 0; k < K_KINDS; k++) {
        say("  %-8s sent %5u  nic full %5u\n", tn_kind_name[k], tn.sent[k], tn.nic_full[k]);
    }
    say("  delivered: wanted %u (priority %u..%u), bulk %u (lowest priority %u); tx: arp replies %u, "
        "unreachables %u, rst %u\n",
        tn_rx.wanted, (unsigned)cnt.ctrl_prio_min, (unsigned)cnt.ctrl_prio_max, tn_rx.bulk,
        (unsigned)cnt.bulk_prio_min, tn_txc.arp_reply, tn_txc.unreach, tn_txc.rst);
    say("  lwip_stats: link recv %u drop %u memerr %u; pbuf pool max %u err %u; tcpip api msgs max %u; "
        "mbox err %u; udp recv %u drop %u; tcp drop %u\n",
        (unsigned)lwip_stats.link.recv, (unsigned)lwip_stats.link.drop, (unsigned)lwip_stats.link.memerr,
        (unsigned)lwip_stats.memp[MEMP_PBUF_POOL]->max, (unsigned)lwip_stats.memp[MEMP_PBUF_POOL]->err,
        (unsigned)lwip_stats.memp[MEMP_TCPIP_MSG_API]->max, (unsigned)lwip_stats.sys.mbox.err,
        (unsigned)lwip_stats.udp.recv, (unsigned)lwip_stats.udp.drop, (unsigned)lwip_stats.tcp.drop);
}

#if !TEST_STOCK
static void check_protected(void)
{
    const rts_shield *s = &sh_if.sh;
    const rts_lwip_stats *a = &sh_if.stats;
    say("  libshield drops: short-circuit %u flow-server %u queue-full %u; recycled %u\n",
        (unsigned)s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT], (unsigned)s->drops[RTS_SHIELD_DROP_FLOW_SERVER],
        (unsigned)s->drops[RTS_SHIELD_DROP_QUEUE_FULL], (unsigned)s->rx.recycled);
    say("  adapter: irqs %u frames %u dropped %u to lwip %u no pbuf %u wake-ups %u (%u refused); "
        "glue: priority sets %u, highest %u\n",
        a->rx_irqs, a->frames, a->dropped, a->to_lwip, a->no_pbuf, a->wake_posts, a->wake_fails,
        (unsigned)sh_if.g.stats.prio_sets, (unsigned)sh_if.g.stats.prio_max);
    if (TEST_GLOBAL_CAP > 0) {
        check(tn_line_offs > 0 && sh_if.stats.polls > 0 && sh_if.stats.polled > 0,
              "the global limit turned the RX interrupt off and the polling task harvested (%u offs, %u polls, "
              "%u frames)", tn_line_offs, sh_if.stats.polls, sh_if.stats.polled);
        check(tn_line_on, "interrupts again after the flood");
        check(tn_rx.wanted + tn.nic_full[K_WANTED] == tn.sent[K_WANTED] && tn_rx.order_errs == 0,
              "every wanted datagram delivered, in order, or refused by the full NIC ring (%u + %u of %u)",
              tn_rx.wanted, tn.nic_full[K_WANTED], tn.sent[K_WANTED]);
    } else {
        check(tn_rx.wanted == tn.sent[K_WANTED] && tn.nic_full[K_WANTED] == 0 && tn_rx.order_errs == 0,
              "every wanted datagram delivered to its UDP pcb, in order (%u of %u)", tn_rx.wanted,
              tn.sent[K_WANTED]);
        check(s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT] > 0 && s->drops[RTS_SHIELD_DROP_FLOW_SERVER] > 0,
              "the flood dropped inside libshield: short circuit %u, flow server %u",
              (unsigned)s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT], (unsigned)s->drops[RTS_SHIELD_DROP_FLOW_SERVER]);
        /* ARP is best effort (RTS_FLOW_ARP_PRIO): when the ring runs low while the
         * network task is held off (a loaded host stalls it), recycling may shed a
         * queued request. Every request is answered or shed by libshield, and most
         * are answered. */
        check(tn_txc.arp_reply + tn.arp_shed == tn.sent[K_ARP] && tn_txc.arp_reply * 2u >= tn.sent[K_ARP],
              "every ARP request answered or shed by libshield (%u + %u of %u)", tn_txc.arp_reply,
              tn.arp_shed, tn.sent[K_ARP]);
    }
    check(cnt.ctrl_prio_min == CTRL_PRIO && cnt.ctrl_prio_max == CTRL_PRIO,
          "lwIP processed every wanted datagram at the flow's priority (%u..%u, flow %u, base %u)",
          (unsigned)cnt.ctrl_prio_min, (unsigned)cnt.ctrl_prio_max, CTRL_PRIO, NET_BASE_PRIO);
    check(cnt.bulk_prio_min == NET_BASE_PRIO, "and bulk datagrams at the base priority when nothing else waited (%u)",
          (unsigned)cnt.bulk_prio_min);
    check(lwip_stats.memp[MEMP_PBUF_POOL]->err == 0 && a->no_pbuf == 0 && lwip_stats.link.memerr == 0,
          "the pbuf pool never ran dry (at most %u of %u in use)", (unsigned)lwip_stats.memp[MEMP_PBUF_POOL]->max,
          PBUF_POOL_SIZE);
    /* LWIP_TCPIP_CORE_LOCKING_INPUT (rts_lwip.h requires it): lwIP has no
     * MEMP_TCPIP_MSG_INPKT pool at all, tcpip_input() processes in place. */
    check(a->input_err == 0 && a->to_lwip == lwip_stats.link.recv && lwip_stats.sys.mbox.err == 0,
          "every admitted frame processed by lwIP where it was handed over (%u), none refused", a->to_lwip);
    if (PLACE == RTS_LWIP_TCPIP_THREAD) {
        check(a->wake_posts > 0 && a->wake_fails == 0, "tcpip_thread woken by its one callback message (%u posts)",
              a->wake_posts);
    }
    check(rts_shield_task_prio(s) == NET_BASE_PRIO && uxTaskPriorityGet(sh_if.net_task) == NET_BASE_PRIO,
          "the network task back at its base priority (%u)", (unsigned)uxTaskPriorityGet(sh_if.net_task));
    tn_check_conservation(&sh_if, NBUFS, check);
}
#else
static void check_stock(void)
{
    unsigned refused = 0, no_pbuf = 0;
    for (int k = 0; k < K_KINDS; k++) {
        refused += lost.refused[k];
        no_pbuf += lost.no_pbuf[k];
    }
    say("  stock: refused by tcpip_input %u (wanted %u), no pbuf %u (wanted %u); MEMP_TCPIP_MSG_INPKT max %u "
        "err %u\n",
        refused, lost.refused[K_WANTED], no_pbuf, lost.no_pbuf[K_WANTED],
        (unsigned)lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->max, (unsigned)lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->err);
    const unsigned lost_wanted = tn.sent[K_WANTED] - tn_rx.wanted;
    check(lost_wanted > 0, "the wanted flow lost datagrams under the flood (%u of %u)", lost_wanted,
          tn.sent[K_WANTED]);
    check(lost_wanted == lost.refused[K_WANTED] + lost.no_pbuf[K_WANTED] + tn.nic_full[K_WANTED],
          "each lost wanted datagram was refused by tcpip_input(), found no pbuf or no descriptor (%u + %u + %u)",
          lost.refused[K_WANTED], lost.no_pbuf[K_WANTED], tn.nic_full[K_WANTED]);
    check(refused > 0 && lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->err + lwip_stats.sys.mbox.err == refused,
          "lwip_stats counts every refusal: no MEMP_TCPIP_MSG_INPKT message (%u) or a full mailbox (%u)",
          (unsigned)lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->err, (unsigned)lwip_stats.sys.mbox.err);
    check(lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->max == MEMP_NUM_TCPIP_MSG_INPKT,
          "the flood held every input message (%u of %u)", (unsigned)lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->max,
          MEMP_NUM_TCPIP_MSG_INPKT);
    check(no_pbuf == lwip_stats.link.memerr, "link.memerr counts the frames that found no pbuf (%u)", no_pbuf);
}
#endif

static void runner(void *arg)
{
    (void)arg;
#if TEST_STOCK
    say("lwIP on FreeRTOS without libshield: the stock input task\n");
#else
    say("lwIP on FreeRTOS with libshield, network task: %s, global limit: %u per ms\n",
        PLACE == RTS_LWIP_RX_TASK ? "the receive task" : "tcpip_thread", TEST_GLOBAL_CAP);
    say("  RAM: rts_lwip %u B (task stacks %u B, rts_shield %u B, rts_freertos %u B, rts_freertos_shield %u B)\n",
        (unsigned)sizeof sh_if, (unsigned)(sizeof sh_if.rx_stack + sizeof sh_if.poll_stack),
        (unsigned)sizeof sh_if.sh, (unsigned)sizeof sh_if.fr, (unsigned)sizeof sh_if.g);
#endif
    ready = xSemaphoreCreateBinary();
    tcpip_init(tcpip_ready, NULL);
    (void)xSemaphoreTake(ready, portMAX_DELAY);
#if TEST_STOCK
    stock_init();
#else
    if (PLACE == RTS_LWIP_RX_TASK) shield_init();
#endif
    wire_on = true;
    vTaskDelay(TRAFFIC_TICKS + DRAIN_TICKS);
    wire_on = false;

    taskENTER_CRITICAL(); /* a consistent picture: no RX interrupt, no network task */
    report_common();
#if TEST_STOCK
    check_stock();
#else
    check_protected();
#endif
    taskEXIT_CRITICAL();
    say("%s\n", failures == 0 ? "all checks passed" : "FAILED");
    st_exit(failures == 0 ? 0 : 1);
}

void st_create_tasks(void)
{
    tn_init(&rx_mem[0][0], BUF_BYTES, NBUFS);
    tn_line_hw = st_rx_line_write; /* POSIX: the emulated enable; Cortex-M3: the NVIC */
    (void)xTaskCreate(runner, "runner", configMINIMAL_STACK_SIZE * 4, NULL, RUNNER_PRIO, NULL);
}
