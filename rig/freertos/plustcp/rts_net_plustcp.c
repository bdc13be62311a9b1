/* The device application's IP stack (app/rts_net.h) on FreeRTOS-Plus-TCP:
 * one IPv4 end point on the interface (rts_net_itf.h: rts_netif, or a
 * board's stock interface) and Plus-TCP's sockets. */
#include <string.h>

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_IP_Private.h"
#include "FreeRTOS_Sockets.h"
#include "NetworkBufferManagement.h"
#include "rts_net.h"
#include "rts_net_itf.h"
#include "rts_random.h"

static NetworkInterface_t itf;
static NetworkEndPoint_t ep;
static uint8_t mac[6];

bool rts_net_init(const rts_net_cfg *c)
{
    static const uint8_t none[4] = {0, 0, 0, 0};
    rts_random_seed(c->seed); /* the stack's hooks: rts_app_random.c */
    memcpy(mac, c->mac, sizeof mac);
    if (rts_net_itf_fill(&itf, c, mac) == NULL) return false;
    FreeRTOS_FillEndPoint(&itf, &ep, c->ip, c->mask, none, none, mac);
    return FreeRTOS_IPInit_Multi() == pdPASS;
}

bool rts_net_is_up(void)
{
    return FreeRTOS_IsNetworkUp() != pdFALSE;
}

/* The listening sockets, for their children's count (rts_net_stack_counters()). */
static Socket_t listeners[8];
static unsigned n_listeners;

static void block_forever(Socket_t s)
{
    const TickType_t forever = portMAX_DELAY;
    FreeRTOS_setsockopt(s, 0, FREERTOS_SO_RCVTIMEO, &forever, sizeof forever);
}

rts_sock rts_net_socket(bool tcp, uint16_t port, unsigned backlog)
{
    Socket_t s = FreeRTOS_socket(FREERTOS_AF_INET, tcp ? FREERTOS_SOCK_STREAM : FREERTOS_SOCK_DGRAM,
                                 tcp ? FREERTOS_IPPROTO_TCP : FREERTOS_IPPROTO_UDP);
    if (s == FREERTOS_INVALID_SOCKET) return NULL;
    block_forever(s);
    struct freertos_sockaddr a;
    memset(&a, 0, sizeof a);
    a.sin_family = FREERTOS_AF_INET;
    a.sin_port = FreeRTOS_htons(port);
    if (FreeRTOS_bind(s, &a, sizeof a) != 0) return NULL;
    if (tcp && FreeRTOS_listen(s, (BaseType_t)backlog) != 0) return NULL;
    if (tcp && n_listeners < sizeof listeners / sizeof listeners[0]) listeners[n_listeners++] = s;
    return (rts_sock)s;
}

int32_t rts_net_recvfrom(rts_sock s, void *buf, size_t cap)
{
    struct freertos_sockaddr from;
    socklen_t fl = sizeof from;
    return FreeRTOS_recvfrom((Socket_t)s, buf, cap, 0, &from, &fl);
}

int32_t rts_net_echo(rts_sock s, void *buf, size_t cap)
{
    struct freertos_sockaddr from;
    socklen_t fl = sizeof from;
    const int32_t n = FreeRTOS_recvfrom((Socket_t)s, buf, cap, 0, &from, &fl);
    if (n <= 0) return n;
    return FreeRTOS_sendto((Socket_t)s, buf, (size_t)n, 0, &from, fl) == n ? n : -1;
}

rts_sock rts_net_accept(rts_sock s)
{
    struct freertos_sockaddr from;
    socklen_t fl = sizeof from;
    Socket_t c = FreeRTOS_accept((Socket_t)s, &from, &fl);
    if (c == NULL || c == FREERTOS_INVALID_SOCKET) return NULL;
    block_forever(c);
    return (rts_sock)c;
}

int32_t rts_net_recv(rts_sock s, void *buf, size_t cap)
{
    return FreeRTOS_recv((Socket_t)s, buf, cap, 0);
}

int32_t rts_net_send(rts_sock s, const void *buf, size_t len)
{
    return FreeRTOS_send((Socket_t)s, buf, len, 0);
}

void rts_net_close(rts_sock s)
{
    FreeRTOS_shutdown((Socket_t)s, FREERTOS_SHUT_RDWR);
    FreeRTOS_closesocket((Socket_t)s);
}

/* The interface counts what the stack refused (app/rts_net.h's stats); the
 * stack's own levels say where its buffers were when it ran out: the most
 * network buffers in use at once, and the most events its IP task's queue
 * held at once (high-water marks since the start: "_max_used"), and the
 * buffers in use when asked ("_now"); levels, not counts. */
unsigned rts_net_stack_counters(const char **names, uint32_t *values)
{
    names[0] = "buffers_max_used";
    values[0] = (uint32_t)(ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS - uxGetMinimumFreeNetworkBuffers());
    names[1] = "ip_queue_max_used";
    values[1] = (uint32_t)(ipconfigEVENT_QUEUE_LENGTH - uxGetMinimumIPQueueSpace());
    names[2] = "buffers_used_now";
    values[2] = (uint32_t)(ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS - uxGetNumberOfFreeNetworkBuffers());
    /* The drains (the network task's and the IP task's, counted by the
     * interface: rts_netif.c) and, per snapshot ("_now": since the previous
     * call, which clears them), the most frames one drain took, the most
     * events the IP task's queue held and the most network buffers in use. */
    rts_net_stats *st = (rts_net_stats *)rts_net_stats_get(); /* the interface's own, writable */
    static const char *const drain_names[] = {"net_wakes",        "net_wake_frames_max_now", "ip_rx_events",
                                              "ip_drains",        "ip_drain_frames_max_now", "ip_queue_max_now",
                                              "buffers_used_max_now"};
    static const bool per_snapshot[] = {false, true, false, false, true, true, true};
    volatile uint32_t *const drain[] = {&st->net_wakes, &st->net_wake_frames_max, &st->ip_rx_events,
                                        &st->ip_drains, &st->ip_drain_frames_max, &st->ip_queue_max,
                                        &st->buffers_used_max};
    unsigned n = 3;
    for (unsigned k = 0; k < sizeof drain / sizeof drain[0]; k++, n++) {
        names[n] = drain_names[k];
        values[n] = *drain[k];
        if (per_snapshot[k]) *drain[k] = 0;
    }
    /* The children of the fullest listening socket when asked (a level): the
     * connections it holds, half-open, waiting for accept() or accepted and not
     * yet closed. At its backlog (16) it answers every new SYN with a RST. Read
     * outside the IP task: a 16-bit level, good for a snapshot. */
    uint32_t children = 0;
    for (unsigned k = 0; k < n_listeners; k++) {
        const FreeRTOS_Socket_t *l = (const FreeRTOS_Socket_t *)listeners[k];
        if (l->u.xTCP.usChildCount > children) children = l->u.xTCP.usChildCount;
    }
    names[n] = "listen_children_now";
    values[n++] = children;
    return n;
}
