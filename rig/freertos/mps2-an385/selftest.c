/* The rig's receive path on Cortex-M3: FreeRTOS (portable/GCC/ARM_CM3),
 * FreeRTOS-Plus-TCP with rts_netif on the MPS2 board's LAN9118
 * (rts_netif_mps2.c), booted in `qemu-system-arm -M mps2-an385`.
 *
 * A self-test of the receive path: the LAN9118's PHY is put in loopback,
 * and a "wire" task transmits synthetic frames that come back through the
 * real RX path (RX FIFO -> Ethernet IRQ 13 -> libshield -> network task ->
 * network buffers -> IP task -> sockets): a control flow (UDP to port 5000,
 * received by a worker task above the critical task) all the time, and a
 * SYN flood to the TCP listener on port 502 in the middle phase. A critical
 * periodic task runs throughout. At the end the counters go out over
 * semihosting and the exit status says whether the checks held:
 *
 *   protected (RTS_MPS2_PROTECT 1): every control datagram delivered, flood
 *   frames dropped by libshield (reasons counted), no stack buffer
 *   exhausted, the critical task missed no deadline;
 *   unprotected (0, the stock path): frames reached the stack, libshield
 *   dropped none, and the control flow lost datagrams or the critical task
 *   missed a deadline.
 *
 * QEMU runs with -icount (tools/freertos_build.sh): virtual time advances
 * with the instructions executed (32 ns each, about a 31 MHz core), so the
 * counts are the same on every run and on a loaded host.
 *
 * Start-up, vectors and semihosting: libshield/port/freertos/selftest/
 * mps2_boot.c (shared with the port's self-test).
 *
 * Exit status: 0 checks held, 1 a check failed, 2 kernel assertion,
 * 3 set-up failed, 5 stack overflow, 6/7 start-up or fault. */
#include <string.h>

#include "FreeRTOS.h"
#include "FreeRTOS_ARP.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Sockets.h"
#include "mps2_boot.h"
#include "mps2_clock.h"
#include "rts_netif.h"
#include "task.h"

#ifndef RTS_MPS2_PROTECT
#define RTS_MPS2_PROTECT 1
#endif
#ifndef RTS_MPS2_BENCH
#define RTS_MPS2_BENCH 0
#endif

void rts_netif_mps2_phy_loopback(bool on);

/* ------------------------------------------------------------- output */

static void print(const char *s)
{
    mps2_print(s);
}

static void print_u(const char *name, uint32_t v)
{
    char b[16];
    int i = (int)sizeof b - 1;
    b[i] = '\0';
    do {
        b[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u && i > 0);
    print(name);
    print(" ");
    print(&b[i]);
    print("\n");
}

static void finish(int status)
{
    mps2_exit(status);
}

/* ----------------------------------------------------------- the device */

static const uint8_t my_mac[6] = {0x02, 0x00, 0x00, 0x77, 0x00, 0x02};
static const uint8_t my_ip[4] = {10, 0, 0, 2}, mask[4] = {255, 255, 255, 0}, none[4] = {0, 0, 0, 0};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x77, 0x00, 0x09};
static const uint8_t peer_ip[4] = {10, 0, 0, 9};
#define CTRL_PORT 5000u
#define LISTEN_PORT 502u
#define PERIOD_MS 10u
#define WORK_MS 2u
#define PHASE_MS 500u   /* idle, flood (two phases long), idle */
#define FLOOD_PER_TICK 8u
#define CTRL_EVERY_MS 5u

static NetworkInterface_t itf;
static NetworkEndPoint_t ep;
static rts_netif_cfg netif_cfg;
static volatile uint32_t ctrl_sent, ctrl_got, flood_sent, accepted, cycles, misses;
static volatile bool running = true;

/* ---------------------------------------------------- synthetic frames */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
    for (size_t i = 0; i + 1 < n; i += 2) s += (uint32_t)p[i] << 8 | p[i + 1];
    if (n & 1u) s += (uint32_t)p[n - 1] << 8;
    return s;
}

static uint16_t fold(uint32_t s)
{
    while (s >> 16) s = (s & 0xFFFFu) + (s >> 16);
    return (uint16_t)~s;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Ethernet + IPv4 + (UDP with `payload` | TCP SYN), checksums computed. */
static size_t build(uint8_t *f, bool tcp, uint16_t sport, uint16_t dport, uint32_t seq)
{
    memset(f, 0, 64);
    memcpy(f, my_mac, 6);
    memcpy(f + 6, peer_mac, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    const size_t l4 = tcp ? 20u : 8u + 8u;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20u + l4));
    put16(ip + 4, (uint16_t)seq);
    ip[8] = 64;
    ip[9] = tcp ? 6 : 17;
    memcpy(ip + 12, peer_ip, 4);
    memcpy(ip + 16, my_ip, 4);
    put16(ip + 10, fold(sum16(ip, 20, 0)));
    uint8_t *t = ip + 20;
    put16(t, sport);
    put16(t + 2, dport);
    if (tcp) {
        t[4] = (uint8_t)(seq >> 24);
        t[5] = (uint8_t)(seq >> 16);
        t[6] = (uint8_t)(seq >> 8);
        t[7] = (uint8_t)seq;
        t[12] = 5u << 4;
        t[13] = 0x02; /* SYN */
        put16(t + 14, 8192);
    } else {
        put16(t + 4, (uint16_t)l4);
        t[8] = (uint8_t)(seq >> 24);
        t[9] = (uint8_t)(seq >> 16);
        t[10] = (uint8_t)(seq >> 8);
        t[11] = (uint8_t)seq;
    }
    uint8_t pseudo[12];
    memcpy(pseudo, peer_ip, 4);
    memcpy(pseudo + 4, my_ip, 4);
    pseudo[8] = 0;
    pseudo[9] = ip[9];
    put16(pseudo + 10, (uint16_t)l4);
    uint16_t c = fold(sum16(t, l4, sum16(pseudo, 12, 0)));
    if (!tcp && c == 0) c = 0xFFFF;
    put16(t + (tcp ? 16 : 6), c);
    const size_t len = 14u + 20u + l4;
    return len < 60u ? 60u : len;
}

static void wire_task(void *arg)
{
    (void)arg;
    static uint8_t f[64];
    const TickType_t t0 = xTaskGetTickCount();
    TickType_t next = t0;
    for (uint32_t ms = 0; ms < 4u * PHASE_MS; ms++) {
        const bool flood = ms >= PHASE_MS && ms < 3u * PHASE_MS;
        if (flood) {
            for (uint32_t k = 0; k < FLOOD_PER_TICK; k++) {
                const uint32_t n = flood_sent;
                (void)rts_nic_hw_output(f, build(f, true, (uint16_t)(1024u + n % 30000u), LISTEN_PORT, n));
                flood_sent = n + 1u;
            }
        }
        if (ms % CTRL_EVERY_MS == 0u) {
            (void)rts_nic_hw_output(f, build(f, false, 40000u, CTRL_PORT, ctrl_sent));
            ctrl_sent++;
        }
        vTaskDelayUntil(&next, 1);
    }
    vTaskDelay(pdMS_TO_TICKS(100)); /* let the last frames drain */
    running = false;
    vTaskSuspend(NULL);
}

static void ctrl_task(void *arg)
{
    Socket_t s = (Socket_t)arg;
    uint8_t b[64];
    for (;;) {
        struct freertos_sockaddr from;
        socklen_t fl = sizeof from;
        if (FreeRTOS_recvfrom(s, b, sizeof b, 0, &from, &fl) > 0) ctrl_got++;
    }
}

static void listen_task(void *arg)
{
    Socket_t s = (Socket_t)arg;
    for (;;) {
        struct freertos_sockaddr from;
        socklen_t fl = sizeof from;
        Socket_t c = FreeRTOS_accept(s, &from, &fl);
        if (c != NULL && c != FREERTOS_INVALID_SOCKET) {
            accepted++;
            FreeRTOS_closesocket(c);
        }
    }
}

static void spin_ticks(TickType_t n)
{
    const TickType_t end = xTaskGetTickCount() + n;
    while ((int32_t)(xTaskGetTickCount() - end) < 0) {
    }
}

static void critical_task(void *arg)
{
    (void)arg;
    TickType_t release = xTaskGetTickCount();
    while (running) {
        spin_ticks(pdMS_TO_TICKS(WORK_MS));
        cycles++;
        const TickType_t deadline = release + pdMS_TO_TICKS(PERIOD_MS);
        if ((int32_t)(xTaskGetTickCount() - deadline) > 0) {
            misses++;
            release = xTaskGetTickCount();
            continue;
        }
        TickType_t last = release;
        release = deadline;
        vTaskDelayUntil(&last, pdMS_TO_TICKS(PERIOD_MS));
    }
    vTaskSuspend(NULL);
}

static Socket_t open_sock(bool tcp, uint16_t port, uint32_t prio, uint32_t cap, uint32_t per_ms, uint32_t queue)
{
    Socket_t s = FreeRTOS_socket(FREERTOS_AF_INET, tcp ? FREERTOS_SOCK_STREAM : FREERTOS_SOCK_DGRAM,
                                 tcp ? FREERTOS_IPPROTO_TCP : FREERTOS_IPPROTO_UDP);
    if (s == FREERTOS_INVALID_SOCKET) return NULL;
    struct freertos_sockaddr a;
    memset(&a, 0, sizeof a);
    a.sin_family = FREERTOS_AF_INET;
    a.sin_port = FreeRTOS_htons(port);
    if (FreeRTOS_bind(s, &a, sizeof a) != 0) return NULL;
    if (tcp && FreeRTOS_listen(s, 4) != 0) return NULL;
#if RTS_MPS2_PROTECT
    const rts_shield_flow f = {tcp ? RTS_PROTO_TCP : RTS_PROTO_UDP, port, 0, prio, cap,
                               (rts_time_ns)per_ms * 1000000u, queue};
    uint8_t id;
    if (rts_netif_bind(&f, &id) != RTS_OK) return NULL;
#else
    (void)prio;
    (void)cap;
    (void)per_ms;
    (void)queue;
#endif
    return s;
}

#if RTS_MPS2_BENCH
/* ---------------------------------------------------- the cost benchmark
 *
 * Built with RTS_MPS2_BENCH (tools/freertos_build.sh mps2-bench, run by
 * bench/mps2_isr_cost.sh): instead of the checks above, traffic that takes
 * each path of libshield's receive path many times, through the same
 * loopback wire, and the time the interface measured inside the per-frame
 * hook (rts_freertos_shield_frame_isr(), rts_netif.c: harvest()) per path.
 * Under QEMU's -icount guest time is instructions x 2^shift ns, so the
 * script turns these times into instructions per frame.
 *
 *   enqueue        bulk datagrams (priority 1, the network task's own) paced
 *   raise          control datagrams (priority 5) paced: the network task raised
 *   short_circuit  bursts of 100 bulk datagrams: past half the ring queued,
 *                  the ring is low and bulk is the lowest queued priority
 *   recycle        control datagrams inside those bursts: a queued bulk
 *                  buffer recycled for each
 *   queue_full     bursts of 10 datagrams to a flow whose queue holds 4
 *   flow_limit     SYNs at 8 per ms to a listener served 5 per 10 ms */
#define BULK_PORT 6000u
#define SMALL_PORT 7000u

static void send_udp(uint16_t port)
{
    static uint8_t f[64];
    (void)rts_nic_hw_output(f, build(f, false, 40000u, port, ctrl_sent));
    ctrl_sent++;
}

static void bench_wire(void *arg)
{
    (void)arg;
    static uint8_t f[64];
    TickType_t next = xTaskGetTickCount();
    for (unsigned k = 0; k < 200u; k++) { /* enqueue, raise */
        send_udp(CTRL_PORT);
        send_udp(BULK_PORT);
        vTaskDelayUntil(&next, 1);
    }
    vTaskDelay(pdMS_TO_TICKS(20));
    for (unsigned r = 0; r < 20u; r++) { /* short circuit, recycle */
        for (unsigned k = 0; k < 100u; k++) send_udp(BULK_PORT);
        for (unsigned k = 0; k < 10u; k++) send_udp(CTRL_PORT);
        vTaskDelay(pdMS_TO_TICKS(30));
    }
    for (unsigned r = 0; r < 20u; r++) { /* queue full */
        for (unsigned k = 0; k < 10u; k++) send_udp(SMALL_PORT);
        vTaskDelay(pdMS_TO_TICKS(10));
    }
    next = xTaskGetTickCount();
    for (unsigned ms = 0; ms < 250u; ms++) { /* flow server */
        for (unsigned k = 0; k < FLOOD_PER_TICK; k++) {
            const uint32_t n = flood_sent;
            (void)rts_nic_hw_output(f, build(f, true, (uint16_t)(1024u + n % 30000u), LISTEN_PORT, n));
            flood_sent = n + 1u;
        }
        vTaskDelayUntil(&next, 1);
    }
    vTaskDelay(pdMS_TO_TICKS(100));
    running = false;
    vTaskSuspend(NULL);
}

static void bench_main(void)
{
    Socket_t h = open_sock(false, CTRL_PORT, 5, 0, 10, 0);
    Socket_t b = open_sock(false, BULK_PORT, 1, 0, 10, 0);
    Socket_t q = open_sock(false, SMALL_PORT, 2, 0, 10, 4);
    Socket_t l = open_sock(true, LISTEN_PORT, 0, 5, 10, 0);
    if (h == NULL || b == NULL || q == NULL || l == NULL) {
        print("rts mps2 bench: cannot open the sockets\n");
        finish(3);
    }
    xTaskCreate(bench_wire, "wire", configMINIMAL_STACK_SIZE * 2, NULL, configMAX_PRIORITIES - 2, NULL);
    while (running) vTaskDelay(pdMS_TO_TICKS(10));
    /* What the measurement itself costs: two clock reads back to back. */
    uint64_t clock_read = ~0ull;
    for (unsigned k = 0; k < 16u; k++) {
        taskENTER_CRITICAL();
        const uint64_t t0 = rts_nic_hw_cpu_ns();
        const uint64_t t1 = rts_nic_hw_cpu_ns();
        taskEXIT_CRITICAL();
        if (t1 - t0 < clock_read) clock_read = t1 - t0;
    }
    const rts_netif_stats *st = rts_netif_stats_get();
    static const char *const name[RTS_NET_PATHS] = {"enqueue",    "raise",      "recycle",      "short_circuit",
                                                    "flow_limit", "queue_full", "global_limit", "irq_drop"};
    print_u("clock_read_ns", (uint32_t)clock_read);
    int bad = 0;
    for (unsigned p = 0; p < RTS_NET_PATHS; p++) {
        print("path ");
        print(name[p]);
        print_u(" frames", st->path_frames[p]);
        print_u("path_ns", (uint32_t)st->path_ns[p]);
        if (p <= RTS_NET_PATH_QUEUE_FULL && st->path_frames[p] < 20u) {
            print("rts mps2 bench: FAILED: too few frames took this path\n");
            bad = 1;
        }
    }
    /* The interrupt's own work around the hook: each frame's move out of the
     * LAN9118's RX FIFO into a slot (rts_netif_mps2.c), and each run of the
     * handler whole (the copies, the hook and the rest). */
    print_u("copy frames", st->nic_copy_frames);
    print_u("copy words", st->nic_copy_words);
    print_u("copy_ns", (uint32_t)st->nic_copy_ns);
    print_u("isr runs", st->nic_isr_runs);
    print_u("isr_ns", (uint32_t)st->nic_isr_ns);
    print_u("shield_ns", (uint32_t)st->shield_ns);
    if (st->nic_copy_frames < 20u) {
        print("rts mps2 bench: FAILED: too few frames copied\n");
        bad = 1;
    }
    print(bad ? "rts mps2 bench: FAILED\n" : "rts mps2 bench: OK\n");
    finish(bad);
}
#endif

static void main_task(void *arg)
{
    (void)arg;
    while (!FreeRTOS_IsNetworkUp()) vTaskDelay(pdMS_TO_TICKS(5));
    rts_netif_mps2_phy_loopback(true);
    /* The synthetic peer never answers ARP: give the stack its address, as a
     * first reply would (Plus-TCP holds a datagram from an unresolved
     * on-link source until ARP resolves it). */
    MACAddress_t pm;
    memcpy(pm.ucBytes, peer_mac, 6);
    vARPRefreshCacheEntry(&pm, FreeRTOS_inet_addr_quick(peer_ip[0], peer_ip[1], peer_ip[2], peer_ip[3]), &ep);
#if RTS_MPS2_BENCH
    bench_main();
#endif
    /* flows as in rig/freertos/device.toml: control above the critical task,
     * the listener at the lowest level with a server of 5 per 10 ms */
    Socket_t c = open_sock(false, CTRL_PORT, 5, 20, 10, 0);
    Socket_t l = open_sock(true, LISTEN_PORT, 0, 5, 10, 0);
    if (c == NULL || l == NULL) {
        print("rts mps2: cannot open the sockets\n");
        finish(3);
    }
    xTaskCreate(ctrl_task, "ctrl", configMINIMAL_STACK_SIZE * 2, c, 5, NULL);
    xTaskCreate(listen_task, "listen", configMINIMAL_STACK_SIZE * 2, l, 1, NULL);
    xTaskCreate(critical_task, "critical", configMINIMAL_STACK_SIZE * 2, NULL, 4, NULL);
    xTaskCreate(wire_task, "wire", configMINIMAL_STACK_SIZE * 2, NULL, configMAX_PRIORITIES - 2, NULL);
    while (running) vTaskDelay(pdMS_TO_TICKS(10));

    const rts_netif_stats *st = rts_netif_stats_get();
    const rts_shield *sh = rts_netif_shield();
    print(RTS_MPS2_PROTECT ? "rts mps2: protected (libshield in the LAN9118 receive path)\n"
                           : "rts mps2: unprotected (the stock path)\n");
    print_u("ctrl_sent", ctrl_sent);
    print_u("ctrl_delivered", ctrl_got);
    print_u("flood_sent", flood_sent);
    print_u("nic_frames", st->nic_frames);
    print_u("nic_ring_full", st->nic_ring_full);
    print_u("rx_irqs", st->rx_irqs);
    print_u("shield_dropped", st->shield_dropped);
    static const char *const reason[RTS_SHIELD_DROP_REASONS] = {
        "drop_none", "drop_limiter", "drop_short_circuit", "drop_flow_server", "drop_queue_full", "drop_global_limit"};
    uint32_t shield_drops = 0;
    for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++) {
        const uint32_t v = sh ? (uint32_t)sh->drops[r] : 0u;
        shield_drops += v;
        if (r > 0) print_u(reason[r], v);
    }
    print_u("to_ip_task", st->to_ip_task);
    print_u("stack_buffers_exhausted", st->stack_exhausted);
    print_u("ip_queue_full", st->ip_queue_full);
    print_u("accepted", accepted);
    print_u("critical_cycles", cycles);
    print_u("critical_misses", misses);

    int bad = 0;
#define CHECK(c)                             \
    do {                                     \
        if (!(c)) {                          \
            print("rts mps2: FAILED: " #c "\n"); \
            bad = 1;                         \
        }                                    \
    } while (0)
    CHECK(st->nic_frames >= ctrl_sent + flood_sent);
    CHECK(cycles > 0u);
#if RTS_MPS2_PROTECT
    CHECK(ctrl_got == ctrl_sent);
    CHECK(shield_drops > flood_sent / 2u);
    CHECK(st->stack_exhausted == 0u);
    CHECK(misses == 0u);
#else
    CHECK(shield_drops == 0u);
    CHECK(st->to_ip_task > ctrl_sent);
    /* the contrast the protection is for (deterministic under -icount) */
    CHECK(ctrl_got < ctrl_sent || misses > 0u);
#endif
    print(bad ? "rts mps2: FAILED\n" : "rts mps2: OK\n");
    finish(bad);
}

/* ------------------------------------------------ application hooks */

BaseType_t xApplicationGetRandomNumber(uint32_t *pulNumber)
{
    static uint32_t x = 2463534242u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *pulNumber = x;
    return pdTRUE;
}

uint32_t ulApplicationGetNextSequenceNumber(uint32_t a, uint16_t b, uint32_t c, uint16_t d)
{
    uint32_t r;
    (void)xApplicationGetRandomNumber(&r);
    return r ^ a ^ b ^ c ^ d;
}

void rts_selftest_assert(const char *file, int line)
{
    print("rts mps2: kernel assertion failed: ");
    print(file);
    print_u(" line", (uint32_t)line);
    finish(2);
}

void vApplicationTickHook(void)
{
}

void vApplicationIdleHook(void)
{
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    print("rts mps2: stack overflow in task ");
    print(name);
    print("\n");
    finish(5);
}

/* ------------------------------------------------------------- start-up */


int main(void)
{
    rts_mps2_clock_start();
    rts_shield_cfg_default(&netif_cfg.shield);
    netif_cfg.nic.ifname = "lan9118";
    netif_cfg.protect = RTS_MPS2_PROTECT != 0;
    netif_cfg.net_task_prio = RTS_MPS2_PROTECT ? 1 : configMAX_PRIORITIES - 2;
    netif_cfg.poll_task_prio = configMAX_PRIORITIES - 2;
    netif_cfg.nic.rx_cpu = -1;
    netif_cfg.nic.mac = my_mac;
    netif_cfg.ip_task_inherits = RTS_MPS2_PROTECT != 0;
    rts_netif_fill(&itf, &netif_cfg);
    FreeRTOS_FillEndPoint(&itf, &ep, my_ip, mask, none, none, my_mac);
    if (FreeRTOS_IPInit_Multi() != pdPASS) finish(3);
    xTaskCreate(main_task, "main", configMINIMAL_STACK_SIZE * 2, NULL, configMAX_PRIORITIES - 2, NULL);
    vTaskStartScheduler();
    print("rts mps2: scheduler returned\n");
    return 4;
}
