/* The device application's IP stack (app/rts_net.h) on FreeRTOS-Plus-TCP:
 * the rts_netif interface (libshield in its receive path, or the stock
 * path) with one IPv4 end point, and Plus-TCP's sockets. */
#include <string.h>

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Sockets.h"
#include "rts_net.h"
#include "rts_netif.h"

static NetworkInterface_t itf;
static NetworkEndPoint_t ep;
static rts_netif_cfg netif_cfg;
static uint8_t mac[6];

uint32_t rts_net_rx_slots(void)
{
    return RTS_NETIF_SLOTS;
}

uint32_t rts_net_rx_ring(void)
{
    return RTS_NETIF_RING;
}

bool rts_net_init(const rts_net_cfg *c)
{
    static const uint8_t none[4] = {0, 0, 0, 0};
    rts_app_random_seed(c->seed);
    memcpy(mac, c->mac, sizeof mac);
    netif_cfg.ifname = c->ifname;
    netif_cfg.protect = c->protect;
    rts_shield_cfg_default(&netif_cfg.shield);
    netif_cfg.shield.short_circuit = c->short_circuit ? 1u : 0u;
    netif_cfg.shield.recycle_threshold = c->recycle_below;
    netif_cfg.shield.global_capacity = c->global_capacity;
    netif_cfg.shield.global_period = (rts_time_ns)c->global_period_ns;
    netif_cfg.net_task_prio = c->net_prio;
    netif_cfg.poll_task_prio = c->poll_prio;
    netif_cfg.rx_cpu = c->rx_cpu;
    netif_cfg.mac = mac;
    netif_cfg.ip_task_inherits = c->protect;
    rts_netif_fill(&itf, &netif_cfg);
    FreeRTOS_FillEndPoint(&itf, &ep, c->ip, c->mask, none, none, mac);
    return FreeRTOS_IPInit_Multi() == pdPASS;
}

bool rts_net_is_up(void)
{
    return FreeRTOS_IsNetworkUp() != pdFALSE;
}

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
    return (rts_sock)s;
}

rts_err rts_net_shield_bind(const rts_shield_flow *flow, uint8_t *id)
{
    return rts_netif_bind(flow, id);
}

int32_t rts_net_recvfrom(rts_sock s, void *buf, size_t cap)
{
    struct freertos_sockaddr from;
    socklen_t fl = sizeof from;
    return FreeRTOS_recvfrom((Socket_t)s, buf, cap, 0, &from, &fl);
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

const rts_net_stats *rts_net_stats_get(void)
{
    return rts_netif_stats_get();
}

const rts_shield *rts_net_shield(void)
{
    return rts_netif_shield();
}
