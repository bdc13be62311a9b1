/* Private to libshield (not for applications): header constants of the
 * classifier and its flow-only fast path, inline so that the receive
 * path's ISR (rx_driver.c) classifies without a call. */
#ifndef RTSHIELD_SRC_CLASSIFY_FLOW_H
#define RTSHIELD_SRC_CLASSIFY_FLOW_H

#include "rtshield/rts_classifier.h"

#include "flow_lookup.h"

enum {
    RTS_CLASSIFIER_ETH_HDR = 14,
    RTS_CLASSIFIER_VLAN_TAG = 4,
    RTS_CLASSIFIER_ETHERTYPE_IPV4 = 0x0800,
    RTS_CLASSIFIER_ETHERTYPE_ARP = 0x0806,
    RTS_CLASSIFIER_ETHERTYPE_VLAN = 0x8100,
    RTS_CLASSIFIER_ETHERTYPE_IPV6 = 0x86DD,
    RTS_CLASSIFIER_ARP_FIXED = 8,
    RTS_CLASSIFIER_IPV4_MIN = 20,
    RTS_CLASSIFIER_IP_ICMP = 1,
    RTS_CLASSIFIER_IP_TCP = 6,
    RTS_CLASSIFIER_IP_UDP = 17,
    RTS_CLASSIFIER_ICMP_MIN = 8,
    RTS_CLASSIFIER_TCP_MIN = 20,
    RTS_CLASSIFIER_UDP_MIN = 8
};

/* Big-endian reads; the caller has checked off + 2 (off + 4) <= len. With
 * GCC or Clang on a little-endian core, one bounded unaligned load and a
 * byte swap (an ldrh/rev16 on a Cortex-M3, a movzwl/rol on x86) instead of
 * byte loads at a run-time offset; the same bytes are read either way. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint16_t rts_classifier_be16(const uint8_t *p, size_t off)
{
    uint16_t v;
    __builtin_memcpy(&v, p + off, sizeof v);
    return __builtin_bswap16(v);
}

static inline uint32_t rts_classifier_be32(const uint8_t *p, size_t off)
{
    uint32_t v;
    __builtin_memcpy(&v, p + off, sizeof v);
    return __builtin_bswap32(v);
}

/* A 16-bit field as it lies in memory, to compare with RTS_CLASSIFIER_NET16() of a
 * constant (the constant is swapped at compile time, the field not at all). */
static inline uint16_t rts_classifier_raw16(const uint8_t *p, size_t off)
{
    uint16_t v;
    __builtin_memcpy(&v, p + off, sizeof v);
    return v;
}
#define RTS_CLASSIFIER_NET16(x) ((uint16_t)((((unsigned)(x) & 0xFFu) << 8) | ((unsigned)(x) >> 8)))
#else
#define rts_classifier_raw16 rts_classifier_be16
#define RTS_CLASSIFIER_NET16(x) ((uint16_t)(x))
static inline uint16_t rts_classifier_be16(const uint8_t *p, size_t off)
{
    return (uint16_t)(((unsigned)p[off] << 8) | (unsigned)p[off + 1u]);
}

static inline uint32_t rts_classifier_be32(const uint8_t *p, size_t off)
{
    return ((uint32_t)p[off] << 24) | ((uint32_t)p[off + 1u] << 16) | ((uint32_t)p[off + 2u] << 8) |
           (uint32_t)p[off + 3u];
}
#endif

/*
 * The flow of a frame without the header facts (the receive path's ISR):
 * the same checks of every byte read against `len` and of every header
 * field that decides an offset or a length as rts_classifier_parse_isr(), in
 * the same order of consequence, so both always give the same flow (tested
 * on every frame of the classifier's unit test and fuzz corpus); nothing
 * is written but the result.
 */
#if RTS_CONFIG_RX_INLINE
/* The IPv4 part, from the network header at `l3` (a constant where it is
 * inlined: 14, or 18 behind a VLAN tag). */
#if defined(__GNUC__)
#define RTS_CLASSIFIER_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define RTS_CLASSIFIER_ALWAYS_INLINE inline
#endif
static RTS_CLASSIFIER_ALWAYS_INLINE uint8_t rts_classify_ipv4_flow(const rts_flow_table *t, const uint8_t *f,
                                                            size_t len, size_t l3)
{
    if (len < l3 + RTS_CLASSIFIER_IPV4_MIN) {
        return RTS_FLOW_DEFAULT;
    }
    /* Version 4 and a header length of at least 5 words: 0x45..0x4F. */
    const unsigned ver_ihl = f[l3];
    if (ver_ihl - 0x45u > 0x0Au) {
        return RTS_FLOW_DEFAULT;
    }
    const size_t ihl = (size_t)(ver_ihl - 0x40u) * 4u; /* the low nibble: the version is 4 */
    const size_t total = rts_classifier_be16(f, l3 + 2u);
    if (total < ihl || total > len - l3) {
        return RTS_FLOW_DEFAULT;
    }
    if ((rts_classifier_raw16(f, l3 + 6u) & RTS_CLASSIFIER_NET16(0x3FFFu)) != 0u) { /* MF or a fragment offset */
        return RTS_FLOW_BACKGROUND;
    }
    const unsigned proto = f[l3 + 9u];
    const size_t l4_len = total - ihl;
    const size_t l4 = l3 + ihl;
    /* UDP and TCP, each against its own minimum header (one compare
     * each rather than a select); shorter ones fall to the default. */
    if ((proto == RTS_CLASSIFIER_IP_UDP && l4_len >= RTS_CLASSIFIER_UDP_MIN) ||
        (proto == RTS_CLASSIFIER_IP_TCP && l4_len >= RTS_CLASSIFIER_TCP_MIN)) {
        /* The source address matters only when some flow matches one. */
        const uint32_t src = t->n_specific != 0u ? rts_classifier_be32(f, l3 + 12u) : 0u;
        return rts_flow_table_lookup_inline(t, proto, rts_classifier_be16(f, l4 + 2u), src);
    }
    if (proto == RTS_CLASSIFIER_IP_ICMP) {
        return l4_len < RTS_CLASSIFIER_ICMP_MIN ? (uint8_t)RTS_FLOW_DEFAULT : (uint8_t)RTS_FLOW_ICMP;
    }
    return RTS_FLOW_DEFAULT;
}

/* Untagged IPv4 is tested first, so the common frame pays no VLAN compare,
 * and each IPv4 copy has its header at a constant offset. */
static inline uint8_t rts_classify_flow_inline(const rts_flow_table *t, const uint8_t *f, size_t len)
{
    RTS_ASSERT(f != NULL, "classifier: the inline parse needs a frame (the caller checks)");
    if (len < RTS_CLASSIFIER_ETH_HDR) {
        return RTS_FLOW_DEFAULT;
    }
    size_t l3 = RTS_CLASSIFIER_ETH_HDR;
    unsigned type = rts_classifier_raw16(f, 12u); /* compared in network byte order */
    if (type == RTS_CLASSIFIER_NET16(RTS_CLASSIFIER_ETHERTYPE_IPV4)) {
        return rts_classify_ipv4_flow(t, f, len, RTS_CLASSIFIER_ETH_HDR);
    }
    if (type == RTS_CLASSIFIER_NET16(RTS_CLASSIFIER_ETHERTYPE_VLAN)) {
        if (len < RTS_CLASSIFIER_ETH_HDR + RTS_CLASSIFIER_VLAN_TAG) {
            return RTS_FLOW_DEFAULT;
        }
        type = rts_classifier_raw16(f, 16u);
        l3 = RTS_CLASSIFIER_ETH_HDR + RTS_CLASSIFIER_VLAN_TAG;
        if (type == RTS_CLASSIFIER_NET16(RTS_CLASSIFIER_ETHERTYPE_IPV4)) {
            return rts_classify_ipv4_flow(t, f, len, RTS_CLASSIFIER_ETH_HDR + RTS_CLASSIFIER_VLAN_TAG);
        }
    }
    if (type == RTS_CLASSIFIER_NET16(RTS_CLASSIFIER_ETHERTYPE_ARP)) {
        if (len - l3 < RTS_CLASSIFIER_ARP_FIXED) {
            return RTS_FLOW_DEFAULT;
        }
        const size_t need = RTS_CLASSIFIER_ARP_FIXED + 2u * ((size_t)f[l3 + 4u] + (size_t)f[l3 + 5u]);
        return len - l3 < need ? (uint8_t)RTS_FLOW_DEFAULT : (uint8_t)RTS_FLOW_ARP;
    }
    return RTS_FLOW_DEFAULT;
}

#endif /* RTS_CONFIG_RX_INLINE */

#endif
