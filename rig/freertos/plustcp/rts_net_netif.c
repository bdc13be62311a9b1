/* The device application's interface on FreeRTOS-Plus-TCP (rts_net_itf.h):
 * rts_netif, libshield in its receive path (protect 1) or the stock path
 * (protect 0), on the board's NIC backend. */
#include "rts_net_itf.h"
#include "rts_netif.h"

static rts_netif_cfg netif_cfg;

NetworkInterface_t *rts_net_itf_fill(NetworkInterface_t *itf, const rts_net_cfg *c, const uint8_t *mac)
{
    netif_cfg.nic.ifname = c->ifname;
    netif_cfg.protect = c->protect;
    rts_shield_cfg_default(&netif_cfg.shield);
    netif_cfg.shield.short_circuit = c->short_circuit ? 1u : 0u;
    netif_cfg.shield.recycle_threshold = c->recycle_below;
    netif_cfg.shield.global_capacity = c->global_capacity;
    netif_cfg.shield.global_period = (rts_time_ns)c->global_period_ns;
    netif_cfg.net_task_prio = c->net_prio;
    netif_cfg.poll_task_prio = c->poll_prio;
    netif_cfg.nic.rx_cpu = c->rx_cpu;
    netif_cfg.nic.mac = mac;
    netif_cfg.ip_task_inherits = c->protect;
    return rts_netif_fill(itf, &netif_cfg);
}

rts_err rts_net_shield_bind(const rts_shield_flow *flow, uint8_t *id)
{
    return rts_netif_bind(flow, id);
}

const rts_net_stats *rts_net_stats_get(void)
{
    return rts_netif_stats_get();
}

const rts_shield *rts_net_shield(void)
{
    return rts_netif_shield();
}
