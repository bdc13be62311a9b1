/* Early demultiplexing of raw Ethernet frames (Behnke et al. §5.3.1). */
#include "rtshield/rts_classifier.h"

#include "classify_flow.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_RX_PATH

/* Field by field, not one compound literal: with that GCC 12 lays out
 * rts_classifier_classify_isr() differently, one instruction more per frame
 * in the -Os build's receive path (bench/rx_isr_cost.sh). */
static void info_clear(rts_classifier_info *info)
{
    info->kind = RTS_CLASSIFIER_MALFORMED;
    info->vlan = 0u;
    info->vlan_tci = 0u;
    info->local_port = 0u;
    info->remote_port = 0u;
    info->src_addr = 0u;
    info->l3_off = 0u;
    info->l4_off = 0u;
}

static rts_err malformed(rts_classifier_info *info)
{
    info->kind = RTS_CLASSIFIER_MALFORMED;
    return RTS_EMALFORMED;
}

static rts_err parse_ipv4(const uint8_t *f, size_t len, size_t l3, rts_classifier_info *info)
{
    if (len - l3 < RTS_CLASSIFIER_IPV4_MIN) {
        return malformed(info);
    }
    const unsigned ver_ihl = f[l3];
    if ((ver_ihl >> 4) != 4u) {
        return malformed(info);
    }
    const size_t ihl = (size_t)(ver_ihl & 0x0Fu) * 4u;
    const size_t total = rts_classifier_be16(f, l3 + 2u);
    /* The header must fit in the total length, and the datagram in the
     * frame (trailing Ethernet padding beyond the total length is fine). */
    if (ihl < RTS_CLASSIFIER_IPV4_MIN || total < ihl || total > len - l3) {
        return malformed(info);
    }
    info->src_addr = rts_classifier_be32(f, l3 + 12u);
    const unsigned frag = rts_classifier_be16(f, l3 + 6u);
    if ((frag & 0x2000u) != 0u || (frag & 0x1FFFu) != 0u) {
        info->kind = RTS_CLASSIFIER_FRAGMENT;
        return RTS_OK;
    }
    const unsigned proto = f[l3 + 9u];
    const size_t l4 = l3 + ihl;
    const size_t l4_len = total - ihl; /* bytes of transport data inside the datagram */
    info->l4_off = (uint16_t)l4;
    switch (proto) {
    case RTS_CLASSIFIER_IP_ICMP:
        if (l4_len < RTS_CLASSIFIER_ICMP_MIN) return malformed(info);
        info->kind = RTS_CLASSIFIER_ICMP;
        return RTS_OK;
    case RTS_CLASSIFIER_IP_TCP:
    case RTS_CLASSIFIER_IP_UDP:
        if (l4_len < (proto == RTS_CLASSIFIER_IP_TCP ? (size_t)RTS_CLASSIFIER_TCP_MIN : (size_t)RTS_CLASSIFIER_UDP_MIN)) {
            return malformed(info);
        }
        info->remote_port = rts_classifier_be16(f, l4);
        info->local_port = rts_classifier_be16(f, l4 + 2u);
        info->kind = proto == RTS_CLASSIFIER_IP_TCP ? RTS_CLASSIFIER_TCP : RTS_CLASSIFIER_UDP;
        return RTS_OK;
    default:
        info->kind = RTS_CLASSIFIER_IPV4_OTHER;
        return RTS_OK;
    }
}

rts_err rts_classifier_parse_isr(const uint8_t *frame, size_t len, rts_classifier_info *info)
{
    info_clear(info);
    if (frame == NULL || len < RTS_CLASSIFIER_ETH_HDR) {
        return malformed(info);
    }
    size_t l3 = RTS_CLASSIFIER_ETH_HDR;
    unsigned type = rts_classifier_be16(frame, 12u);
    if (type == RTS_CLASSIFIER_ETHERTYPE_VLAN) {
        if (len < RTS_CLASSIFIER_ETH_HDR + RTS_CLASSIFIER_VLAN_TAG) {
            return malformed(info);
        }
        info->vlan = 1u;
        info->vlan_tci = rts_classifier_be16(frame, 14u);
        type = rts_classifier_be16(frame, 16u);
        l3 = RTS_CLASSIFIER_ETH_HDR + RTS_CLASSIFIER_VLAN_TAG;
    }
    info->l3_off = (uint16_t)l3;
    switch (type) {
    case RTS_CLASSIFIER_ETHERTYPE_ARP: {
        if (len - l3 < RTS_CLASSIFIER_ARP_FIXED) {
            return malformed(info);
        }
        /* Fixed part + sender/target hardware and protocol addresses. */
        const size_t need = RTS_CLASSIFIER_ARP_FIXED + 2u * ((size_t)frame[l3 + 4u] + (size_t)frame[l3 + 5u]);
        if (len - l3 < need) {
            return malformed(info);
        }
        info->kind = RTS_CLASSIFIER_ARP;
        return RTS_OK;
    }
    case RTS_CLASSIFIER_ETHERTYPE_IPV4:
        return parse_ipv4(frame, len, l3, info);
    case RTS_CLASSIFIER_ETHERTYPE_IPV6:
        info->kind = RTS_CLASSIFIER_IPV6;
        return RTS_OK;
    default:
        info->kind = RTS_CLASSIFIER_OTHER;
        return RTS_OK;
    }
}

uint8_t rts_classifier_classify_isr(const rts_flow_table *t, const uint8_t *frame, size_t len, rts_classifier_info *info)
{
#if RTS_CONFIG_RX_INLINE
    if (info == NULL) {
        /* The lean parse, same flow; it needs a frame (a NULL one is the default flow). */
        return frame != NULL ? rts_classify_flow_inline(t, frame, len) : (uint8_t)RTS_FLOW_DEFAULT;
    }
    rts_classifier_info *i = info;
#else
    rts_classifier_info local;
    rts_classifier_info *i = info != NULL ? info : &local;
#endif
    if (rts_classifier_parse_isr(frame, len, i) != RTS_OK) {
        return RTS_FLOW_DEFAULT;
    }
    switch (i->kind) {
    case RTS_CLASSIFIER_ARP:
        return RTS_FLOW_ARP;
    case RTS_CLASSIFIER_ICMP:
        return RTS_FLOW_ICMP;
    case RTS_CLASSIFIER_FRAGMENT:
        return RTS_FLOW_BACKGROUND;
    case RTS_CLASSIFIER_TCP:
    case RTS_CLASSIFIER_UDP: {
        const unsigned proto = i->kind == RTS_CLASSIFIER_TCP ? RTS_PROTO_TCP : RTS_PROTO_UDP;
#if RTS_CONFIG_RX_INLINE
        return rts_flow_table_lookup_inline(t, proto, i->local_port, i->src_addr);
#else
        return rts_flow_table_lookup_isr(t, proto, i->local_port, i->src_addr);
#endif
    }
    default:
        return RTS_FLOW_DEFAULT;
    }
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_classifier_compiled_out; /* ISO C: a translation unit declares something */
#endif
