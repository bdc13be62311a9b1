/* Frame builders for receive-path tests, the fuzz corpus generator and the
 * benchmark: Ethernet II (+ optional 802.1Q) with ARP, IPv4/ICMP/TCP/UDP.
 * Every builder writes into a caller buffer and returns the frame length. */
#ifndef RTS_FRAMES_H
#define RTS_FRAMES_H

#include <stdint.h>
#include <string.h>

typedef struct {
    int vlan;            /* 1: insert an 802.1Q tag */
    uint16_t vlan_tci;
    uint8_t ip_proto;    /* 1 ICMP, 6 TCP, 17 UDP, other */
    uint32_t src;        /* IPv4 source */
    uint32_t dst;
    uint16_t sport, dport;
    uint16_t frag;       /* flags+offset field (0x2000 = MF) */
    uint8_t ihl;         /* 0 → 5 */
    uint16_t payload;    /* transport payload bytes */
} rts_frame_spec;

static inline void rts_fr_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void rts_fr_put32(uint8_t *p, uint32_t v)
{
    rts_fr_put16(p, (uint16_t)(v >> 16));
    rts_fr_put16(p + 2, (uint16_t)v);
}

/* Ethernet header; returns the L3 offset. */
static inline size_t rts_fr_eth(uint8_t *f, int vlan, uint16_t tci, uint16_t type)
{
    static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x01}, src[6] = {0x02, 0, 0, 0, 0, 0x02};
    memset(f, 0, 60); /* callers pass at least 64 bytes */
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    if (vlan) {
        rts_fr_put16(f + 12, 0x8100);
        rts_fr_put16(f + 14, tci);
        rts_fr_put16(f + 16, type);
        return 18;
    }
    rts_fr_put16(f + 12, type);
    return 14;
}

static inline size_t rts_fr_ipv4(uint8_t *f, const rts_frame_spec *s)
{
    size_t l3 = rts_fr_eth(f, s->vlan, s->vlan_tci, 0x0800);
    unsigned ihl = s->ihl ? s->ihl : 5;
    size_t l4hdr = s->ip_proto == 6 ? 20 : s->ip_proto == 17 ? 8 : s->ip_proto == 1 ? 8 : 0;
    size_t total = ihl * 4 + l4hdr + s->payload;
    uint8_t *ip = f + l3;
    memset(ip, 0, total);
    ip[0] = (uint8_t)(0x40 | ihl);
    rts_fr_put16(ip + 2, (uint16_t)total);
    rts_fr_put16(ip + 4, 0x1234);
    rts_fr_put16(ip + 6, s->frag);
    ip[8] = 64;
    ip[9] = s->ip_proto;
    rts_fr_put32(ip + 12, s->src);
    rts_fr_put32(ip + 16, s->dst);
    uint8_t *l4 = ip + ihl * 4;
    if (s->ip_proto == 6 || s->ip_proto == 17) {
        rts_fr_put16(l4, s->sport);
        rts_fr_put16(l4 + 2, s->dport);
        if (s->ip_proto == 17) rts_fr_put16(l4 + 4, (uint16_t)(8 + s->payload));
        if (s->ip_proto == 6) {
            l4[12] = 0x50;
            l4[13] = 0x02; /* SYN */
        }
    } else if (s->ip_proto == 1) {
        l4[0] = 8; /* echo request */
    }
    size_t len = l3 + total;
    return len < 60 ? 60 : len; /* Ethernet minimum: zero padding */
}

static inline size_t rts_fr_udp(uint8_t *f, uint32_t src, uint16_t dport, uint16_t payload)
{
    rts_frame_spec s = {0};
    s.ip_proto = 17;
    s.src = src;
    s.dst = 0x0A000001u;
    s.sport = 40000;
    s.dport = dport;
    s.payload = payload;
    return rts_fr_ipv4(f, &s);
}

static inline size_t rts_fr_arp(uint8_t *f, int vlan)
{
    size_t l3 = rts_fr_eth(f, vlan, 5, 0x0806);
    uint8_t *a = f + l3;
    memset(a, 0, 28);
    rts_fr_put16(a, 1);
    rts_fr_put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    rts_fr_put16(a + 6, 1);
    size_t len = l3 + 28;
    return len < 60 ? 60 : len;
}

#endif
