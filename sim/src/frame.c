/* The frames a simulated flow sends (rtsim_frame_build(), rtsim_frame_min()).
 *
 * Layout (offsets in bytes; L = 14 untagged, 18 with the 802.1Q tag):
 *
 *   Ethernet II   0  dst MAC = FRAME_DEVICE_MAC (02:72:74:73:00:01)
 *                 6  src MAC = 02:00:a:b:c:d from the IPv4 source a.b.c.d
 *                12  EtherType, or 0x8100 + TCI (PCP << 13 | VID 1) at 14
 *                    and the EtherType at 16
 *   IPv4          L  0x45, TOS 0, total length = frame length - L,
 *                    id 0, flags DF (0x4000), TTL 64, protocol, header
 *                    checksum, source, destination (20 bytes)
 *   TCP        L+20  src port, dst port, seq 0, ack 0, data offset 5,
 *                    flags SYN, window 64240, checksum 0, urgent 0 (20 bytes)
 *   UDP        L+20  src port, dst port, length = total length - 20,
 *                    checksum 0 (none) (8 bytes)
 *   ICMP       L+20  type 8 (echo request), code 0, checksum over the whole
 *                    ICMP message, id 1, sequence 1 (8 bytes)
 *   ARP           L  htype 1, ptype 0x0800, hlen 6, plen 4, oper 1,
 *                    sender MAC/IPv4 (src), target MAC 0 / IPv4 (dst) (28 bytes)
 *   RAW           L  EtherType 0x88B5 (local experimental), no header
 *
 * Everything after the headers up to the frame length is zero. The frame
 * length is max(f->size, headers), at most RTSIM_FRAME_MAX; for IPv4 the
 * datagram fills the whole frame (no Ethernet padding after it).
 * Multi-byte fields are written byte by byte in network order.
 */
#include <string.h>

#include "rtsim/rtsim.h"

enum {
    FR_ETH = 14,
    FR_VLAN_TAG = 4,
    FR_IPV4 = 20,
    FR_TCP = 20,
    FR_UDP = 8,
    FR_ICMP = 8,
    FR_ARP = 28,
    FR_TYPE_IPV4 = 0x0800,
    FR_TYPE_ARP = 0x0806,
    FR_TYPE_VLAN = 0x8100,
    FR_TYPE_RAW = 0x88B5,
    FR_VLAN_VID = 1,
    FR_TTL = 64,
    FR_TCP_WINDOW = 64240
};

/* The device's MAC address (locally administered). */
static const uint8_t FRAME_DEVICE_MAC[6] = {0x02, 0x72, 0x74, 0x73, 0x00, 0x01};

#define FR_ADDR_DST_DEFAULT 0xC0000201u /* 192.0.2.1 (TEST-NET-1) */
#define FR_ADDR_SRC_DEFAULT 0xC0000264u /* 192.0.2.100 */

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)((v >> 8) & 0xFFu);
    p[1] = (uint8_t)(v & 0xFFu);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)((v >> 24) & 0xFFu);
    p[1] = (uint8_t)((v >> 16) & 0xFFu);
    p[2] = (uint8_t)((v >> 8) & 0xFFu);
    p[3] = (uint8_t)(v & 0xFFu);
}

/* Internet checksum (RFC 1071) of p[0..n). */
static uint32_t inet_checksum(const uint8_t *p, size_t n)
{
    uint32_t sum = 0u;
    size_t i = 0u;
    for (; i + 1u < n; i += 2u) {
        sum += ((uint32_t)p[i] << 8) | (uint32_t)p[i + 1u];
    }
    if (i < n) {
        sum += (uint32_t)p[i] << 8;
    }
    while ((sum >> 16) != 0u) {
        sum = (sum & 0xFFFFu) + (sum >> 16);
    }
    return ~sum & 0xFFFFu;
}

/* Source MAC of a host: 02:00 and its IPv4 address. */
static void src_mac(uint8_t *p, uint32_t addr)
{
    p[0] = 0x02u;
    p[1] = 0x00u;
    put32(p + 2, addr);
}

size_t rtsim_frame_min(uint32_t proto, uint32_t vlan)
{
    const size_t l2 = vlan != 0u ? (size_t)(FR_ETH + FR_VLAN_TAG) : (size_t)FR_ETH;
    switch (proto) {
    case RTSIM_PROTO_TCP:
        return l2 + FR_IPV4 + FR_TCP;
    case RTSIM_PROTO_UDP:
        return l2 + FR_IPV4 + FR_UDP;
    case RTSIM_PROTO_ICMP:
        return l2 + FR_IPV4 + FR_ICMP;
    case RTSIM_PROTO_ARP:
        return l2 + FR_ARP;
    case RTSIM_PROTO_RAW:
        return l2;
    default:
        return 0u;
    }
}

/* An IPv4 datagram of `total` bytes: its EtherType at `type`, its header at
 * ip; returns where its payload (the transport header) starts. */
static uint8_t *put_ipv4(uint8_t *type, uint8_t *ip, size_t total, uint8_t proto, uint32_t src,
                         uint32_t dst)
{
    put16(type, FR_TYPE_IPV4);
    ip[0] = 0x45u; /* version 4, IHL 5 */
    ip[1] = 0x00u;
    put16(ip + 2, (uint32_t)total);
    put16(ip + 4, 0u);       /* identification */
    put16(ip + 6, 0x4000u);  /* DF, offset 0 */
    ip[8] = (uint8_t)FR_TTL;
    ip[9] = proto;
    put16(ip + 10, 0u);
    put32(ip + 12, src);
    put32(ip + 16, dst);
    put16(ip + 10, inet_checksum(ip, FR_IPV4));
    return ip + FR_IPV4;
}

size_t rtsim_frame_build(const rtsim_flow_cfg *f, uint8_t *buf, size_t cap)
{
    if (f == NULL || buf == NULL) {
        return 0u;
    }
    const size_t min = rtsim_frame_min(f->proto, f->vlan);
    if (min == 0u) {
        return 0u;
    }
    size_t len = (size_t)f->size > min ? (size_t)f->size : min;
    if (len > (size_t)RTSIM_FRAME_MAX) {
        len = (size_t)RTSIM_FRAME_MAX;
    }
    if (cap < len) {
        return 0u;
    }
    const uint32_t src = f->src_addr != 0u ? f->src_addr : FR_ADDR_SRC_DEFAULT;
    const uint32_t dst = f->dst_addr != 0u ? f->dst_addr : FR_ADDR_DST_DEFAULT;
    const uint32_t sport = f->src_port & 0xFFFFu;
    const uint32_t dport = f->dst_port & 0xFFFFu;

    memset(buf, 0, len);

    /* Ethernet II, optionally one 802.1Q tag. */
    memcpy(buf, FRAME_DEVICE_MAC, sizeof FRAME_DEVICE_MAC);
    src_mac(buf + 6, src);
    size_t l3 = FR_ETH;
    if (f->vlan != 0u) {
        put16(buf + 12, FR_TYPE_VLAN);
        put16(buf + 14, ((f->vlan_pcp & 7u) << 13) | (uint32_t)FR_VLAN_VID);
        l3 = FR_ETH + FR_VLAN_TAG;
    }
    uint8_t *const type = buf + l3 - 2u;
    uint8_t *const l3p = buf + l3;
    const size_t total = len - l3; /* IPv4: the datagram fills the frame */

    switch (f->proto) {
    case RTSIM_PROTO_TCP: {
        uint8_t *const tcp = put_ipv4(type, l3p, total, 6u, src, dst);
        put16(tcp + 0, sport);
        put16(tcp + 2, dport);
        /* seq 0, ack 0 */
        tcp[12] = (uint8_t)((FR_TCP / 4) << 4); /* data offset 5 */
        tcp[13] = 0x02u;                          /* SYN */
        put16(tcp + 14, FR_TCP_WINDOW);
        /* checksum 0 (offloaded), urgent 0 */
        break;
    }
    case RTSIM_PROTO_UDP: {
        uint8_t *const udp = put_ipv4(type, l3p, total, 17u, src, dst);
        put16(udp + 0, sport);
        put16(udp + 2, dport);
        put16(udp + 4, (uint32_t)(total - FR_IPV4));
        /* checksum 0: none */
        break;
    }
    case RTSIM_PROTO_ICMP: {
        uint8_t *const icmp = put_ipv4(type, l3p, total, 1u, src, dst);
        icmp[0] = 8u; /* echo request */
        icmp[1] = 0u;
        put16(icmp + 4, 1u); /* identifier */
        put16(icmp + 6, 1u); /* sequence */
        put16(icmp + 2, inet_checksum(icmp, total - FR_IPV4));
        break;
    }
    case RTSIM_PROTO_ARP: {
        put16(type, FR_TYPE_ARP);
        put16(l3p + 0, 1u);            /* Ethernet */
        put16(l3p + 2, FR_TYPE_IPV4);  /* IPv4 */
        l3p[4] = 6u;
        l3p[5] = 4u;
        put16(l3p + 6, 1u);            /* request */
        src_mac(l3p + 8, src);         /* sender hardware address */
        put32(l3p + 14, src);          /* sender protocol address */
        /* target hardware address 00:00:00:00:00:00 */
        put32(l3p + 24, dst);          /* target protocol address */
        break;
    }
    default: /* RTSIM_PROTO_RAW (rtsim_frame_min() rejected the rest) */
        put16(type, FR_TYPE_RAW);
        break;
    }
    return len;
}
