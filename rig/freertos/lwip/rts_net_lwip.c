/* The device application's IP stack (app/rts_net.h) on lwIP with its
 * FreeRTOS sys_arch (the ESP-IDF combination): tcpip_thread, one netif on
 * the device's NIC (rts_netif_lwip.c), the netconn API for the sockets, and
 * lwIP's own counters (lwip_stats) for the report. */
#include <string.h>

#include "FreeRTOS.h"
#include "lwip/api.h"
#include "lwip/memp.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/tcpip.h"
#include "lwip/udp.h"
#include "queue.h"
#include "rts_board.h"
#include "rts_net.h"
#include "rts_netif_lwip.h"
#include "rts_random.h"
#include "task.h"

/* ------------------------------------------------------ the platform */

/* lwIP's random numbers (arch/cc.h: LWIP_RAND(); initial ports, TCP
 * sequence numbers): the device's generator. */
unsigned int lwip_port_rand(void)
{
    return rts_random();
}

/* A failed LWIP_ASSERT (lwipopts.h): one error line, status 4 (as a kernel
 * assertion). */
void lwip_port_assert(const char *msg, int line, const char *file)
{
    char text[300];
    (void)rts_device_fmt(text, sizeof text, "%s: lwIP assertion failed: %s (%s:%d)\n", RTS_BOARD_PROGRAM, msg,
                         file, line);
    rts_board_error(text);
    rts_board_exit(4);
}

/* -------------------------------------------------------- bring-up */

static volatile bool started;

/* tcpip_init()'s done callback: tcpip_thread, core locked. */
static void tcpip_ready(void *arg)
{
    (void)arg;
    if (!rts_netif_lwip_start()) rts_board_exit(2); /* the interface said why (rts_board_error) */
    started = true;
}

bool rts_net_init(const rts_net_cfg *c)
{
    rts_random_seed(c->seed);
    if (!rts_netif_lwip_prepare(c)) return false;
    tcpip_init(tcpip_ready, NULL); /* tcpip_thread and its core lock; the netif once it runs */
    return true;
}

bool rts_net_is_up(void)
{
    return started && rts_netif_lwip_up();
}

rts_err rts_net_shield_bind(const rts_shield_flow *flow, uint8_t *id)
{
    return rts_netif_lwip_bind(flow, id);
}

const rts_net_stats *rts_net_stats_get(void)
{
    return rts_netif_lwip_stats();
}

const rts_shield *rts_net_shield(void)
{
    return rts_netif_lwip_shield();
}

/* --------------------------------------------------------- sockets */

/* A socket: its netconn and, for a connection, the rest of a received pbuf
 * chain a read could not take. A fixed pool (no heap of the application's):
 * the flows' sockets and the connections accepted at a time. */
struct rts_net_sock {
    struct netconn *conn;
    struct pbuf *rest;
    u16_t off;
    bool used;
};

#define SOCKS (2u * MEMP_NUM_NETCONN)
static struct rts_net_sock socks[SOCKS];

static rts_sock sock_new(struct netconn *conn)
{
    rts_sock s = NULL;
    taskENTER_CRITICAL();
    for (unsigned i = 0; i < SOCKS && s == NULL; i++) {
        if (!socks[i].used) {
            socks[i] = (struct rts_net_sock){conn, NULL, 0, true};
            s = &socks[i];
        }
    }
    taskEXIT_CRITICAL();
    return s;
}

static void sock_free(rts_sock s)
{
    taskENTER_CRITICAL();
    s->used = false;
    taskEXIT_CRITICAL();
}

/* The datagrams a UDP socket's mailbox refused (dropped: the model's
 * mailbox_full). lwIP counts every refused mailbox post in one counter,
 * mbox.err (tcpip_thread's mailbox, TCP connections' mailboxes, which only
 * defer a segment, accept mailboxes), so the netconn's UDP receive callback
 * (api_msg.c's recv_udp) is wrapped: a datagram that found the socket's
 * mailbox full and did not get in is counted. Only this callback posts to
 * the mailbox (the stack's context, one at a time) and the worker only
 * takes from it: a mailbox with room at the start takes the datagram; a
 * full one refuses it unless the worker took one meanwhile, which the
 * post's own mbox.err tells. */
static udp_recv_fn lwip_recv_udp;
static uint32_t udp_mbox_full;

static void recv_udp_counted(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    const struct netconn *conn = arg;
    const bool full = conn != NULL && sys_mbox_valid(&conn->recvmbox) &&
                      uxQueueSpacesAvailable(conn->recvmbox.mbx) == 0;
    const uint32_t err = (uint32_t)lwip_stats.sys.mbox.err;
    lwip_recv_udp(arg, pcb, p, addr, port);
    if (full && (uint32_t)lwip_stats.sys.mbox.err != err) udp_mbox_full++;
}

rts_sock rts_net_socket(bool tcp, uint16_t port, unsigned backlog)
{
    struct netconn *c = netconn_new(tcp ? NETCONN_TCP : NETCONN_UDP);
    if (c == NULL) return NULL;
    err_t e = netconn_bind(c, IP4_ADDR_ANY, port);
    if (e == ERR_OK && !tcp) {
        LOCK_TCPIP_CORE();
        lwip_recv_udp = c->pcb.udp->recv; /* the same for every UDP netconn */
        udp_recv(c->pcb.udp, recv_udp_counted, c);
        UNLOCK_TCPIP_CORE();
    }
    if (e == ERR_OK && tcp) e = netconn_listen_with_backlog(c, (u8_t)(backlog < 255u ? backlog : 255u));
    rts_sock s = e == ERR_OK ? sock_new(c) : NULL;
    if (s == NULL) (void)netconn_delete(c);
    return s;
}

int32_t rts_net_recvfrom(rts_sock s, void *buf, size_t cap)
{
    struct netbuf *nb;
    if (netconn_recv(s->conn, &nb) != ERR_OK) return -1;
    const u16_t n = netbuf_copy(nb, buf, (u16_t)(cap < 0xFFFFu ? cap : 0xFFFFu));
    netbuf_delete(nb);
    return (int32_t)n;
}

int32_t rts_net_echo(rts_sock s, void *buf, size_t cap)
{
    struct netbuf *nb;
    if (netconn_recv(s->conn, &nb) != ERR_OK) return -1;
    const u16_t n = netbuf_copy(nb, buf, (u16_t)(cap < 0xFFFFu ? cap : 0xFFFFu));
    const ip_addr_t from = *netbuf_fromaddr(nb);
    const u16_t port = netbuf_fromport(nb);
    netbuf_delete(nb);
    struct netbuf *out = netbuf_new(); /* the answer refers to `buf` (no copy) */
    if (out == NULL) return -1;
    err_t e = netbuf_ref(out, buf, n);
    if (e == ERR_OK) e = netconn_sendto(s->conn, out, &from, port);
    netbuf_delete(out);
    return e == ERR_OK ? (int32_t)n : -1;
}

rts_sock rts_net_accept(rts_sock s)
{
    struct netconn *c;
    if (netconn_accept(s->conn, &c) != ERR_OK) return NULL;
    /* An established connection outranks the half-open ones a SYN flood
     * leaves: lwIP frees the lowest-priority pcb when its pool is empty. */
    LOCK_TCPIP_CORE();
    if (c->pcb.tcp != NULL) tcp_setprio(c->pcb.tcp, TCP_PRIO_MAX);
    UNLOCK_TCPIP_CORE();
    rts_sock r = sock_new(c);
    if (r == NULL) {
        (void)netconn_close(c);
        (void)netconn_delete(c);
    }
    return r;
}

int32_t rts_net_recv(rts_sock s, void *buf, size_t cap)
{
    if (s->rest == NULL) {
        struct pbuf *p;
        if (netconn_recv_tcp_pbuf(s->conn, &p) != ERR_OK) return -1; /* closed or reset */
        s->rest = p;
        s->off = 0;
    }
    const u16_t want = (u16_t)(cap < (size_t)(s->rest->tot_len - s->off) ? cap : (size_t)(s->rest->tot_len - s->off));
    const u16_t n = pbuf_copy_partial(s->rest, buf, want, s->off);
    s->off = (u16_t)(s->off + n);
    if (s->off >= s->rest->tot_len) {
        pbuf_free(s->rest);
        s->rest = NULL;
    }
    return (int32_t)n;
}

int32_t rts_net_send(rts_sock s, const void *buf, size_t len)
{
    return netconn_write(s->conn, buf, len, NETCONN_COPY) == ERR_OK ? (int32_t)len : -1;
}

void rts_net_close(rts_sock s)
{
    if (s->rest != NULL) pbuf_free(s->rest);
    (void)netconn_close(s->conn);
    (void)netconn_delete(s->conn);
    sock_free(s);
}

/* --------------------------------------------------------- counters */

/* Where lwIP lost what: its pools (a pbuf for a received frame, an input
 * message, a netbuf for a datagram, a pcb), its mailboxes (mbox_err: any
 * refused post, tcpip_thread's or a socket's; udp_mbox_full: the datagrams
 * a UDP socket's full mailbox dropped, the device's own count), and the
 * drops each protocol counted. */
unsigned rts_net_stack_counters(const char **names, uint32_t *values)
{
    static const char *const n[] = {"pbuf_pool_err", "pbuf_pool_max_used", "tcpip_inpkt_err", "netbuf_err",
                                    "tcp_pcb_err",   "mbox_err",           "link_recv",       "link_drop",
                                    "link_memerr",   "etharp_drop",        "ip_drop",         "icmp_drop",
                                    "udp_drop",      "tcp_drop",           "udp_mbox_full"};
    _Static_assert(sizeof n / sizeof n[0] <= RTS_NET_STACK_COUNTERS, "RTS_NET_STACK_COUNTERS");
    const struct stats_mem *pool = lwip_stats.memp[MEMP_PBUF_POOL];
#if LWIP_TCPIP_CORE_LOCKING_INPUT
    const uint32_t inpkt_err = 0; /* no such pool: nothing is queued to tcpip_thread */
#else
    const uint32_t inpkt_err = lwip_stats.memp[MEMP_TCPIP_MSG_INPKT]->err;
#endif
    const uint32_t v[] = {pool->err,
                          pool->max,
                          inpkt_err,
                          lwip_stats.memp[MEMP_NETBUF]->err,
                          lwip_stats.memp[MEMP_TCP_PCB]->err,
                          lwip_stats.sys.mbox.err,
                          lwip_stats.link.recv,
                          lwip_stats.link.drop,
                          lwip_stats.link.memerr,
                          lwip_stats.etharp.drop,
                          lwip_stats.ip.drop,
                          lwip_stats.icmp.drop,
                          lwip_stats.udp.drop,
                          lwip_stats.tcp.drop,
                          udp_mbox_full};
    _Static_assert(sizeof v / sizeof v[0] == sizeof n / sizeof n[0], "a value per name");
    for (unsigned i = 0; i < sizeof n / sizeof n[0]; i++) {
        names[i] = n[i];
        values[i] = v[i];
    }
    return sizeof n / sizeof n[0];
}
