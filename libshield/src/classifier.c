/* Early demultiplexing of raw Ethernet frames (Behnke et al. §5.3.1). */
#include "rtshield/rts_classifier.h"

enum {
    ETH_HDR = 14,
    VLAN_TAG = 4,
    ETHERTYPE_IPV4 = 0x0800,
    ETHERTYPE_ARP = 0x0806,
    ETHERTYPE_VLAN = 0x8100,
    ETHERTYPE_IPV6 = 0x86DD,
    ARP_FIXED = 8,
    IPV4_MIN = 20,
    IP_ICMP = 1,
    IP_TCP = 6,
    IP_UDP = 17,
    ICMP_MIN = 8,
    TCP_MIN = 20,
    UDP_MIN = 8
};

/* Big-endian 16-bit read; the caller has checked off + 2 <= len. */
static uint16_t be16(const uint8_t *p, size_t off)
{
    return (uint16_t)(((unsigned)p[off] << 8) | (unsigned)p[off + 1u]);
}

static uint32_t be32(const uint8_t *p, size_t off)
{
    return ((uint32_t)p[off] << 24) | ((uint32_t)p[off + 1u] << 16) | ((uint32_t)p[off + 2u] << 8) |
           (uint32_t)p[off + 3u];
}

static void info_clear(rts_cls_info *info)
{
    info->kind = RTS_CLS_MALFORMED;
    info->vlan = 0u;
    info->vlan_tci = 0u;
    info->local_port = 0u;
    info->remote_port = 0u;
    info->src_addr = 0u;
    info->l3_off = 0u;
    info->l4_off = 0u;
}

static rts_err malformed(rts_cls_info *info)
{
    info->kind = RTS_CLS_MALFORMED;
    return RTS_EMALFORMED;
}

static rts_err parse_ipv4(const uint8_t *f, size_t len, size_t l3, rts_cls_info *info)
{
    if (len - l3 < IPV4_MIN) {
        return malformed(info);
    }
    const unsigned ver_ihl = f[l3];
    if ((ver_ihl >> 4) != 4u) {
        return malformed(info);
    }
    const size_t ihl = (size_t)(ver_ihl & 0x0Fu) * 4u;
    const size_t total = be16(f, l3 + 2u);
    /* The header must fit in the total length, and the datagram in the
     * frame (trailing Ethernet padding beyond the total length is fine). */
    if (ihl < IPV4_MIN || total < ihl || total > len - l3) {
        return malformed(info);
    }
    info->src_addr = be32(f, l3 + 12u);
    const unsigned frag = be16(f, l3 + 6u);
    if ((frag & 0x2000u) != 0u || (frag & 0x1FFFu) != 0u) {
        info->kind = RTS_CLS_FRAGMENT;
        return RTS_OK;
    }
    const unsigned proto = f[l3 + 9u];
    const size_t l4 = l3 + ihl;
    const size_t l4_len = total - ihl; /* bytes of transport data inside the datagram */
    info->l4_off = (uint16_t)l4;
    switch (proto) {
    case IP_ICMP:
        if (l4_len < ICMP_MIN) return malformed(info);
        info->kind = RTS_CLS_ICMP;
        return RTS_OK;
    case IP_TCP:
    case IP_UDP:
        if (l4_len < (proto == IP_TCP ? (size_t)TCP_MIN : (size_t)UDP_MIN)) return malformed(info);
        info->remote_port = be16(f, l4);
        info->local_port = be16(f, l4 + 2u);
        info->kind = proto == IP_TCP ? RTS_CLS_TCP : RTS_CLS_UDP;
        return RTS_OK;
    default:
        info->kind = RTS_CLS_IPV4_OTHER;
        return RTS_OK;
    }
}

rts_err rts_classify_parse_isr(const uint8_t *frame, size_t len, rts_cls_info *info)
{
    info_clear(info);
    if (frame == NULL || len < ETH_HDR) {
        return malformed(info);
    }
    size_t l3 = ETH_HDR;
    unsigned type = be16(frame, 12u);
    if (type == ETHERTYPE_VLAN) {
        if (len < ETH_HDR + VLAN_TAG) {
            return malformed(info);
        }
        info->vlan = 1u;
        info->vlan_tci = be16(frame, 14u);
        type = be16(frame, 16u);
        l3 = ETH_HDR + VLAN_TAG;
    }
    info->l3_off = (uint16_t)l3;
    switch (type) {
    case ETHERTYPE_ARP: {
        if (len - l3 < ARP_FIXED) {
            return malformed(info);
        }
        /* Fixed part + sender/target hardware and protocol addresses. */
        const size_t need = ARP_FIXED + 2u * ((size_t)frame[l3 + 4u] + (size_t)frame[l3 + 5u]);
        if (len - l3 < need) {
            return malformed(info);
        }
        info->kind = RTS_CLS_ARP;
        return RTS_OK;
    }
    case ETHERTYPE_IPV4:
        return parse_ipv4(frame, len, l3, info);
    case ETHERTYPE_IPV6:
        info->kind = RTS_CLS_IPV6;
        return RTS_OK;
    default:
        info->kind = RTS_CLS_OTHER;
        return RTS_OK;
    }
}

uint8_t rts_classify_isr(const rts_flow_table *t, const uint8_t *frame, size_t len, rts_cls_info *info)
{
    rts_cls_info local;
    rts_cls_info *i = info != NULL ? info : &local;
    if (rts_classify_parse_isr(frame, len, i) != RTS_OK) {
        return RTS_FLOW_DEFAULT;
    }
    switch (i->kind) {
    case RTS_CLS_ARP:
        return RTS_FLOW_ARP;
    case RTS_CLS_ICMP:
        return RTS_FLOW_ICMP;
    case RTS_CLS_FRAGMENT:
        return RTS_FLOW_BACKGROUND;
    case RTS_CLS_TCP:
        return rts_flow_lookup_isr(t, RTS_PROTO_TCP, i->local_port, i->src_addr);
    case RTS_CLS_UDP:
        return rts_flow_lookup_isr(t, RTS_PROTO_UDP, i->local_port, i->src_addr);
    default:
        return RTS_FLOW_DEFAULT;
    }
}
