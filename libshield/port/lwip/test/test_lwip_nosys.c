/* The lwIP adapter (libshield/port/lwip/) on the real lwIP core, NO_SYS=1,
 * on the host under the sanitizers (ctest libshield.lwip_nosys_*).
 *
 * A device: one Ethernet netif whose "NIC" is a descriptor ring in this
 * file, fed with real Ethernet frames by a simulated wire on a simulated
 * clock (10 us steps): a high-priority UDP flow to port 5000 (one datagram
 * per ms), ARP requests and ICMP echo requests from the peer, and for
 * 100 ms a flood of 300 000 frames/s (UDP to a bound bulk port, UDP to an
 * unbound port, TCP SYNs to a closed port). The main loop gets one frame's
 * worth of CPU per step (100 000 frames/s): less than the flood.
 *
 *   test_lwip_nosys protected   the adapter: the wanted flow is delivered
 *                               to its UDP pcb, the flood dropped inside
 *                               libshield by reason, the pbuf pool never
 *                               dry, every buffer and frame accounted for
 *   test_lwip_nosys stock       lwIP's NO_SYS pattern (a pbuf per frame in
 *                               the RX interrupt, a queue, the main loop):
 *                               the pool runs dry and the wanted flow loses
 *                               what lwIP counts as memory errors
 *   test_lwip_nosys global      the adapter with a global limit: the RX
 *                               interrupt off, the main loop polling the
 *                               ring at most `capacity` frames per period,
 *                               interrupts again after the flood
 *
 * The parts marked [netif], [isr], [main] and [stock] are the driver code
 * docs/porting/lwip.md quotes. Exit status 0 when every check holds. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/inet_chksum.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "lwip/udp.h"
#include "netif/ethernet.h"
#include "rts_lwip.h"
#include "test_nic.h"

/* ------------------------------------------------------------ checks */

static int failures;

static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!ok) failures++;
}

/* libshield is built with RTS_ASSERT on: a broken invariant stops the test. */
void rts_port_assert_failed(const char *msg, const char *file, int line)
{
    fprintf(stderr, "libshield assert: %s (%s:%d)\n", msg, file, line);
    abort();
}

/* ------------------------------------------- the platform under lwIP */

#define STEP_NS 10000u /* 10 us */
static uint64_t clock_now;  /* simulated time, ns */
static unsigned masked;     /* SYS_ARCH_PROTECT depth: the RX interrupt is masked */

u32_t sys_now(void)
{
    return (u32_t)(clock_now / 1000000u);
}

sys_prot_t sys_arch_protect(void)
{
    masked++;
    return 0;
}

void sys_arch_unprotect(sys_prot_t lev)
{
    (void)lev;
    masked--;
}

unsigned int lwip_port_rand(void)
{
    static unsigned int x = 12345u; /* deterministic */
    x = x * 1103515245u + 12345u;
    return x >> 8;
}

static uint64_t clock_ns(void *drv)
{
    (void)drv;
    return clock_now;
}

/* ---------------------------------------------------- the NIC's ring */

#define NBUFS 64     /* RX buffers: 48 in the descriptor ring, 16 spare */
#define RING 48
#define BUF_BYTES 1536

static uint8_t rx_mem[NBUFS][BUF_BYTES];

/* What the test counts beyond the NIC (tn, tn_rx). */
static struct {
    unsigned no_pbuf[K_KINDS]; /* stock path: found no pbuf */
} cnt;

/* ------------------------------------------------------ the device */

static bool protect;         /* the adapter (else lwIP's NO_SYS pattern) */
static uint32_t global_cap;  /* global limit: packets per ms (0: none) */
static struct netif nif;
static rts_lwip sh_if;       /* the adapter: shield, buffers, counters */

#define CTRL_PORT TN_CTRL_PORT
#define CTRL_PRIO 6          /* the control flow's receiver */
#define BULK_PORT TN_BULK_PORT

/* lwIP as any NO_SYS device starts it, and the two receivers. */
static void lwip_device(void)
{
    tn_init(&rx_mem[0][0], BUF_BYTES, NBUFS);
    lwip_init();
    tn_netif_add(&nif, ethernet_input); /* NO_SYS: netif->input = ethernet_input */
    tn_receivers();
}

/* [netif] */
static void shield_init(void)
{
    const rts_lwip_cfg cfg = {.netif = &nif,                /* added with ethernet_input */
                              .buf_mem = &rx_mem[0][0],     /* the DMA's RX buffers */
                              .buf_size = BUF_BYTES,
                              .batch = 1,                   /* the main loop's budget per turn */
 .drv = &sh_if,
                              .post = tn_dma_post,          /* a buffer to the next free descriptor */
                              .rx_irq_set = tn_rx_irq_set,
                              .harvest = tn_harvest,        /* the RX interrupt's descriptor loop */
                              .clock_ns = clock_ns};
    rts_shield_cfg sc;
    rts_shield_cfg_default(&sc);
    sc.protections = RTS_SHIELD_RX_PATH;
    sc.nbufs = NBUFS;                    /* 48 descriptors + 16 spares */
    sc.ring_size = RING;
    sc.task_base_prio = 0;
    sc.global_capacity = global_cap;     /* frames per period; 0: no global limit */
    sc.global_period = 1000000;          /* 1 ms */
    if (rts_lwip_init(&sh_if, &cfg, &sc) != RTS_OK) abort();

    /* a flow per receiver (its pcb's port after udp_bind()), at the receiver's priority */
    uint8_t id;
    const rts_shield_flow ctrl = {.proto = RTS_PROTO_UDP, .local_port = CTRL_PORT, .prio = CTRL_PRIO};
    const rts_shield_flow bulk = {.proto = RTS_PROTO_UDP, .local_port = BULK_PORT, .prio = 1,
                                  .capacity = 10, .server_period = 1000000}; /* 10 per ms */
    if (rts_lwip_bind(&sh_if, &ctrl, &id) != RTS_OK || rts_lwip_bind(&sh_if, &bulk, &id) != RTS_OK) abort();
}
/* [netif end] */

/* [isr] */
static void eth_rx_isr(void)
{
    rts_lwip_woken woken = 0;
    if (rts_lwip_irq_isr(&sh_if, &woken)) (void)tn_harvest(&sh_if, UINT32_MAX, &woken);
}
/* [isr end] */

static unsigned cycles; /* the critical task's cycles the main loop reported */

/* The control work is due once per ms (the test does none; its report is what counts). */
static bool control_cycle_due(void)
{
    return clock_now % 1000000u == 0u && clock_now > 0u;
}

/* [main] */
static void main_loop_turn(void)
{
    (void)rts_lwip_poll(&sh_if); /* shield timers, polling, admitted frames into lwIP */
    sys_check_timeouts();        /* lwIP's own timers */
    if (control_cycle_due()) {   /* the application's 1 ms control work, then its report */
        const rts_time_ns start = clock_now - 1000000u;
        (void)rts_lwip_cycle_end(&sh_if, start, start + 1000000u); /* detection, Hysteresis, Budget */
        cycles++;
    }
}
/* [main end] */

/* [stock] */
/* lwIP's NO_SYS pattern without libshield: the RX interrupt copies every
 * frame into a pbuf from PBUF_POOL and queues it; the main loop hands the
 * queue to netif->input. */
#define STOCK_QUEUE 32
static struct pbuf *stock_q[STOCK_QUEUE];
static unsigned stock_head, stock_tail;

static void stock_rx_isr(void)
{
    uint16_t buf, len;
    while (tn_desc_filled(&buf, &len)) {
        struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)(len + ETH_PAD_SIZE), PBUF_POOL);
        if (p != NULL) {
            (void)pbuf_remove_header(p, ETH_PAD_SIZE);
            (void)pbuf_take(p, rx_mem[buf], len);
            (void)pbuf_add_header(p, ETH_PAD_SIZE);
            if (stock_tail - stock_head < STOCK_QUEUE) {
                stock_q[stock_tail++ % STOCK_QUEUE] = p;
            } else {
                pbuf_free(p); /* queue full */
                LINK_STATS_INC(link.drop);
            }
        } else {              /* the pool is empty: the frame is lost */
            LINK_STATS_INC(link.memerr);
            LINK_STATS_INC(link.drop);
        }
        tn_desc_advance();
        tn_dma_post(NULL, buf, rx_mem[buf]);
        if (p == NULL) {
            const int k = tn_kind(rx_mem[buf], len); /* the test's own accounting */
            if (k >= 0) cnt.no_pbuf[k]++;
        }
    }
}

static void stock_init(void)
{
    for (uint16_t b = 0; b < RING; b++) tn_dma_post(NULL, b, rx_mem[b]);
    tn_rx_irq_set(NULL, true);
}

static void stock_main_loop_turn(void)
{
    if (stock_head != stock_tail) {
        struct pbuf *p = stock_q[stock_head++ % STOCK_QUEUE];
        LINK_STATS_INC(link.recv);
        if (nif.input(p, &nif) != ERR_OK) pbuf_free(p);
    }
    sys_check_timeouts();
}
/* [stock end] */

/* --------------------------------------------------------- the wire */

#define MS(n) ((uint64_t)(n) * 1000000u)
#define FLOOD_FROM MS(50)
#define FLOOD_TO MS(150)
#define TRAFFIC_TO MS(200)
#define END MS(260)

/* One step's arrivals: the flood's frames in order, the other frames each
 * at a pseudo-random place among them (a wanted frame is as likely to come
 * right after a flood frame as before it). */
typedef struct {
    uint8_t f[8][TN_FRAME_MAX];
    uint16_t len[8];
    unsigned n;
} arrivals;

static uint8_t *slot_at(arrivals *a, unsigned at)
{
    memmove(a->f[at + 1], a->f[at], (a->n - at) * sizeof a->f[0]);
    memmove(&a->len[at + 1], &a->len[at], (a->n - at) * sizeof a->len[0]);
    a->n++;
    return a->f[at];
}

static unsigned place_rand(void)
{
    static uint32_t x = 2463534242u; /* xorshift32: the same places on every run */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

static void add(arrivals *a, bool anywhere, uint16_t (*build)(uint8_t *, uint32_t), uint32_t arg)
{
    const unsigned at = anywhere ? place_rand() % (a->n + 1u) : a->n;
    uint8_t *f = slot_at(a, at);
    a->len[at] = build(f, arg);
}

static uint16_t b_wanted(uint8_t *f, uint32_t seq) { return tn_udp(f, CTRL_PORT, seq); }
static uint16_t b_bulk(uint8_t *f, uint32_t seq) { return tn_udp(f, BULK_PORT, seq); }
static uint16_t b_unbound(uint8_t *f, uint32_t seq) { return tn_udp(f, TN_UNBOUND_PORT, seq); }
static uint16_t b_arp(uint8_t *f, uint32_t seq) { (void)seq; return tn_arp_request(f); }

static void run(void)
{
    uint32_t wanted_seq = 0, flood_seq = 0, echo_seq = 0;
    for (clock_now = 0; clock_now < END; clock_now += STEP_NS) {
        const uint64_t t = clock_now;
        tn_now_ms = (uint32_t)(t / MS(1));
        arrivals a = {.n = 0};
        if (t >= FLOOD_FROM && t < FLOOD_TO) {
            for (int i = 0; i < 3; i++) { /* 300 000 frames/s */
                flood_seq++;
                const unsigned m = flood_seq % 3u;
                add(&a, false, m == 0 ? b_bulk : m == 1 ? b_unbound : tn_syn, flood_seq);
            }
        }
        if (t < TRAFFIC_TO) {
            if (t % MS(10) == 0) add(&a, true, b_arp, 0);
            if (t % MS(1) == MS(1) / 2) add(&a, true, b_wanted, ++wanted_seq);
            if (t % MS(20) == MS(5)) add(&a, true, tn_echo_request, ++echo_seq);
        }
        for (unsigned i = 0; i < a.n; i++) tn_wire(a.f[i], a.len[i]);
        if (tn_filled() > 0 && tn_line_on) {
            if (masked != 0u) check(false, "RX interrupt while masked");
            if (protect) {
                eth_rx_isr();
            } else {
                stock_rx_isr();
            }
        }
        if (protect) {
            main_loop_turn();
        } else {
            stock_main_loop_turn();
        }
    }
}

/* ------------------------------------------------------------ checks */

static void report(void)
{
    for (int k = 0; k < K_KINDS; k++) {
        printf("  %-8s sent %6u  nic full %6u  no pbuf %6u\n", tn_kind_name[k], tn.sent[k], tn.nic_full[k],
               cnt.no_pbuf[k]);
    }
    printf("  delivered: wanted %u, bulk %u; tx: arp replies %u, echo replies %u, unreachables %u, rst %u, other %u\n",
           tn_rx.wanted, tn_rx.bulk, tn_txc.arp_reply, tn_txc.echo_reply, tn_txc.unreach, tn_txc.rst,
           tn_txc.other);
    const struct stats_mem *pool = lwip_stats.memp[MEMP_PBUF_POOL];
    printf("  lwip_stats: link recv %u drop %u memerr %u; pbuf pool max %u err %u; udp recv %u drop %u; "
           "tcp recv %u drop %u; icmp recv %u; etharp recv %u\n",
           lwip_stats.link.recv, lwip_stats.link.drop, lwip_stats.link.memerr, pool->max, pool->err,
           lwip_stats.udp.recv, lwip_stats.udp.drop, lwip_stats.tcp.recv, lwip_stats.tcp.drop, lwip_stats.icmp.recv,
           lwip_stats.etharp.recv);
    if (protect) {
        const rts_shield *s = &sh_if.sh;
        const rts_lwip_stats *a = &sh_if.stats;
        printf("  libshield drops: limiter %llu short-circuit %llu flow-server %llu queue-full %llu global %llu; "
               "recycled %u\n",
               (unsigned long long)s->drops[RTS_SHIELD_DROP_LIMITER],
               (unsigned long long)s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT],
               (unsigned long long)s->drops[RTS_SHIELD_DROP_FLOW_SERVER],
               (unsigned long long)s->drops[RTS_SHIELD_DROP_QUEUE_FULL],
               (unsigned long long)s->drops[RTS_SHIELD_DROP_GLOBAL_LIMIT], s->rx.recycled);
        printf("  adapter: irqs %u frames %u dropped %u left %u to lwip %u no pbuf %u input err %u polls %u "
               "polled %u bad %u prio max %u; line offs %u\n",
               a->rx_irqs, a->frames, a->dropped, a->left, a->to_lwip, a->no_pbuf, a->input_err, a->polls,
               a->polled, a->bad_desc, a->prio_max, tn_line_offs);
    }
}

static int protected_run(void)
{
    protect = true;
    lwip_device();
    shield_init();
    run();
    report();
    const rts_shield *s = &sh_if.sh;
    check(tn_rx.wanted == tn.sent[K_WANTED] && tn_rx.order_errs == 0,
          "every wanted datagram delivered to its UDP pcb, in order (%u of %u)", tn_rx.wanted,
          tn.sent[K_WANTED]);
    check(sh_if.stats.prio_max == CTRL_PRIO, "the wanted flow was taken at its priority (%u)",
          sh_if.stats.prio_max);
    check(lwip_stats.memp[MEMP_PBUF_POOL]->err == 0 && sh_if.stats.no_pbuf == 0 && lwip_stats.link.memerr == 0,
          "the pbuf pool never ran dry");
    check(cycles > 0 && s->detect.lateness.cycles == cycles && s->detect.late_cycles == 0,
          "the main loop's control cycles reached libshield's detection (%u, none late)", cycles);
    check(lwip_stats.memp[MEMP_PBUF_POOL]->max == 1, "one pool pbuf in use at a time, at most (%u of %u)",
          lwip_stats.memp[MEMP_PBUF_POOL]->max, PBUF_POOL_SIZE);
    check(s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT] > 0, "unbound-port and SYN frames short-circuited (%llu)",
          (unsigned long long)s->drops[RTS_SHIELD_DROP_SHORT_CIRCUIT]);
    check(s->drops[RTS_SHIELD_DROP_FLOW_SERVER] > 0, "bulk frames over their flow server dropped (%llu)",
          (unsigned long long)s->drops[RTS_SHIELD_DROP_FLOW_SERVER]);
    const unsigned flood = tn.sent[K_BULK] + tn.sent[K_UNBOUND] + tn.sent[K_SYN];
    const unsigned flood_to_lwip = sh_if.stats.to_lwip - tn.sent[K_WANTED] - tn.sent[K_ARP] - tn.sent[K_ICMP];
    check(flood_to_lwip <= (unsigned)((FLOOD_TO - FLOOD_FROM) / STEP_NS) &&
              sh_if.stats.dropped + s->rx.recycled == flood - flood_to_lwip,
          "of the flood's %u frames lwIP got what the main loop had time for (%u); libshield dropped the "
          "rest before any pbuf (%u in the interrupt + %u recycled)",
          flood, flood_to_lwip, sh_if.stats.dropped, s->rx.recycled);
    check(tn_rx.bulk <= 10u * (unsigned)((FLOOD_TO - FLOOD_FROM) / MS(1)) + 10u,
          "the bulk flow got no more than its server allows (%u)", tn_rx.bulk);
    check(tn_txc.arp_reply == tn.sent[K_ARP], "every ARP request answered (%u)", tn_txc.arp_reply);
    check(tn_txc.echo_reply == tn.sent[K_ICMP], "every echo request answered (%u)", tn_txc.echo_reply);
    check(lwip_stats.udp.recv >= tn_rx.wanted + tn_rx.bulk, "lwip_stats.udp.recv counts the delivered datagrams");
    check(lwip_stats.udp.drop + lwip_stats.tcp.drop + lwip_stats.tcp.proterr > 0 && tn_txc.unreach + tn_txc.rst > 0,
          "what libshield admitted to closed ports lwIP dropped and answered (udp drop %u, tcp drop %u, "
          "unreachables %u, rst %u)",
          lwip_stats.udp.drop, lwip_stats.tcp.drop, tn_txc.unreach, tn_txc.rst);
    unsigned nic_full = 0;
    for (int k = 0; k < K_KINDS; k++) nic_full += tn.nic_full[k];
    check(nic_full == 0, "the NIC never ran out of descriptors (%u)", nic_full);
    tn_check_conservation(&sh_if, NBUFS, check);
    return failures;
}

static int stock_run(void)
{
    protect = false;
    lwip_device();
    stock_init();
    run();
    report();
    const struct stats_mem *pool = lwip_stats.memp[MEMP_PBUF_POOL];
    const unsigned lost = tn.sent[K_WANTED] - tn_rx.wanted;
    check(lost > 0, "the wanted flow lost datagrams under the flood (%u of %u)", lost, tn.sent[K_WANTED]);
    check(lost == cnt.no_pbuf[K_WANTED], "each lost wanted datagram found the pbuf pool empty (%u)",
          cnt.no_pbuf[K_WANTED]);
    unsigned no_pbuf = 0;
    for (int k = 0; k < K_KINDS; k++) no_pbuf += cnt.no_pbuf[k];
    check(pool->err == no_pbuf && lwip_stats.link.memerr == no_pbuf,
          "lwip_stats counts every frame that found no pbuf (memp err %u, link.memerr %u, counted %u)", pool->err,
          lwip_stats.link.memerr, no_pbuf);
    check(pool->max == PBUF_POOL_SIZE, "the flood took the whole pool (%u of %u)", pool->max, PBUF_POOL_SIZE);
    check(tn_txc.echo_reply < tn.sent[K_ICMP] || tn_txc.arp_reply < tn.sent[K_ARP],
          "ARP or ICMP lost too (arp %u of %u, echo %u of %u)", tn_txc.arp_reply, tn.sent[K_ARP],
          tn_txc.echo_reply, tn.sent[K_ICMP]);
    return failures;
}

static int global_run(void)
{
    protect = true;
    global_cap = 20; /* 20 frames per ms, well below the flood */
    lwip_device();
    shield_init();
    run();
    report();
    unsigned max_ms = 0;
    for (unsigned m = 0; m < END / MS(1); m++) {
        if (tn.taken_in_ms[m] > max_ms) max_ms = tn.taken_in_ms[m];
    }
    check(max_ms <= global_cap, "at most the global capacity taken in any period (%u <= %u)", max_ms,
          global_cap);
    check(tn_line_offs > 0 && sh_if.stats.polls > 0 && sh_if.stats.polled > 0,
          "the RX interrupt went off and the main loop polled (%u offs, %u polls, %u frames)", tn_line_offs,
          sh_if.stats.polls, sh_if.stats.polled);
    check(tn_line_on && (sh_if.timer_armed & (1u << RTS_SHIELD_TIMER_POLL)) == 0,
          "interrupts again after the flood, the poll timer idle");
    check(tn_rx.wanted + tn.nic_full[K_WANTED] == tn.sent[K_WANTED],
          "every wanted datagram delivered or refused by the full NIC ring (%u + %u of %u)", tn_rx.wanted,
          tn.nic_full[K_WANTED], tn.sent[K_WANTED]);
    check(lwip_stats.memp[MEMP_PBUF_POOL]->err == 0, "the pbuf pool never ran dry");
    tn_check_conservation(&sh_if, NBUFS, check);
    return failures;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int f;
    if (strcmp(mode, "protected") == 0) {
        f = protected_run();
    } else if (strcmp(mode, "stock") == 0) {
        f = stock_run();
    } else if (strcmp(mode, "global") == 0) {
        f = global_run();
    } else {
        fprintf(stderr, "usage: test_lwip_nosys protected|stock|global\n");
        return 2;
    }
    printf("%s: %s\n", mode, f == 0 ? "all checks passed" : "FAILED");
    return f == 0 ? 0 : 1;
}
