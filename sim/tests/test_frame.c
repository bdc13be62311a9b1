/* rtsim_frame_build() / rtsim_frame_min(): the frames of every protocol,
 * with and without an 802.1Q tag, at sizes from below the headers to above
 * RTSIM_FRAME_MAX: lengths, every header field, checksums, zero payload, no
 * byte written past the frame, and the classifier of libshield (parse and
 * flow-table lookup) reading them as the flow that sent them. */
#include <stdlib.h>
#include <string.h>

#include "rtshield/rts_classifier.h"
#include "sim_test_util.h"

enum { GUARD = 64, SENTINEL = 0xA5 };

static const uint32_t PROTOS[] = {RTSIM_PROTO_TCP, RTSIM_PROTO_UDP, RTSIM_PROTO_ICMP,
                                  RTSIM_PROTO_ARP, RTSIM_PROTO_RAW};
static const uint32_t SIZES[] = {0u,   1u,    40u,   54u,   58u,   59u,   60u,        64u,
                                 65u,  128u,  511u,  1000u, 1500u, 1514u, 1518u,      1521u,
                                 1522u, 1523u, 2000u, 9000u, 65535u, 0xFFFFFFFFu};

static unsigned get16(const uint8_t *p)
{
    return ((unsigned)p[0] << 8) | (unsigned)p[1];
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* Ones'-complement sum of p[0..n), folded: 0xFFFF over a region whose checksum is right. */
static unsigned sum16(const uint8_t *p, size_t n)
{
    uint32_t s = 0;
    size_t i = 0;
    for (; i + 1 < n; i += 2) s += ((uint32_t)p[i] << 8) | p[i + 1];
    if (i < n) s += (uint32_t)p[i] << 8;
    while (s >> 16) s = (s & 0xFFFFu) + (s >> 16);
    return (unsigned)s;
}

static size_t headers(uint32_t proto, uint32_t vlan)
{
    size_t l2 = vlan ? 18 : 14;
    switch (proto) {
    case RTSIM_PROTO_TCP: return l2 + 40;
    case RTSIM_PROTO_UDP: return l2 + 28;
    case RTSIM_PROTO_ICMP: return l2 + 28;
    case RTSIM_PROTO_ARP: return l2 + 28;
    default: return l2;
    }
}

static rtsim_flow_cfg flow(uint32_t proto, uint32_t vlan, uint32_t size)
{
    rtsim_flow_cfg f;
    memset(&f, 0, sizeof f);
    f.proto = proto;
    f.vlan = vlan;
    f.vlan_pcp = vlan ? 5 : 0;
    f.size = size;
    f.dst_port = 502;
    f.src_port = 40000;
    f.src_addr = 0x0A000107u; /* 10.0.1.7 */
    f.dst_addr = 0xC0A80001u; /* 192.168.0.1 */
    return f;
}

/* Classify a copy flush against the end of a heap block (ASan catches an over-read). */
static uint8_t classify_exact(const rts_flow_table *t, const uint8_t *frame, size_t len,
                              rts_classifier_info *info)
{
    uint8_t *copy = malloc(len);
    memcpy(copy, frame, len);
    uint8_t id = rts_classifier_classify_isr(t, copy, len, info);
    free(copy);
    return id;
}

/* Build flow `f`'s frame and classify it with `t` (an exact-size copy). */
static uint8_t classify_flow(const rts_flow_table *t, const rtsim_flow_cfg *f, rts_classifier_info *info)
{
    static uint8_t buf[RTSIM_FRAME_MAX];
    size_t n = rtsim_frame_build(f, buf, sizeof buf);
    return classify_exact(t, buf, n, info);
}

/* Every field of one frame of flow `f`, built into a buffer with room to spare. */
static void check_frame(const rtsim_flow_cfg *f)
{
    static uint8_t buf[RTSIM_FRAME_MAX + GUARD];
    memset(buf, SENTINEL, sizeof buf);
    size_t hdr = headers(f->proto, f->vlan);
    size_t want = f->size > hdr ? f->size : hdr;
    if (want > RTSIM_FRAME_MAX) want = RTSIM_FRAME_MAX;
    CHECK_EQ(rtsim_frame_min(f->proto, f->vlan), hdr);
    size_t len = rtsim_frame_build(f, buf, sizeof buf);
    CHECK_EQ(len, want);
    if (len != want) return;
    for (size_t i = len; i < sizeof buf; i++)
        if (buf[i] != SENTINEL) {
            CHECK_EQ(i, len); /* written past the frame */
            break;
        }
    /* The same frame with exactly the room it needs. */
    static uint8_t exact[RTSIM_FRAME_MAX];
    CHECK_EQ(rtsim_frame_build(f, exact, len), len);
    CHECK(memcmp(exact, buf, len) == 0);

    /* Ethernet: the device's MAC, 02:00 + the source address, the tag. */
    static const uint8_t dev[6] = {0x02, 0x72, 0x74, 0x73, 0x00, 0x01};
    CHECK(memcmp(buf, dev, 6) == 0);
    CHECK_EQ(buf[6], 0x02);
    CHECK_EQ(buf[7], 0x00);
    CHECK_EQ(get32(buf + 8), f->src_addr);
    size_t l3 = 14;
    if (f->vlan) {
        CHECK_EQ(get16(buf + 12), 0x8100);
        CHECK_EQ(get16(buf + 14), (f->vlan_pcp << 13) | 1u);
        l3 = 18;
    }
    const unsigned type = get16(buf + l3 - 2);
    const uint8_t *p = buf + l3;
    size_t payload_from = hdr; /* zeros from here to len */

    if (f->proto == RTSIM_PROTO_ARP) {
        CHECK_EQ(type, 0x0806);
        CHECK_EQ(get16(p), 1);
        CHECK_EQ(get16(p + 2), 0x0800);
        CHECK_EQ(p[4], 6);
        CHECK_EQ(p[5], 4);
        CHECK_EQ(get16(p + 6), 1);
        CHECK(memcmp(p + 8, buf + 6, 6) == 0);
        CHECK_EQ(get32(p + 14), f->src_addr);
        for (int i = 18; i < 24; i++) CHECK_EQ(p[i], 0);
        CHECK_EQ(get32(p + 24), f->dst_addr);
    } else if (f->proto == RTSIM_PROTO_RAW) {
        CHECK_EQ(type, 0x88B5);
    } else {
        CHECK_EQ(type, 0x0800);
        const size_t total = len - l3;
        CHECK_EQ(p[0], 0x45);
        CHECK_EQ(p[1], 0);
        CHECK_EQ(get16(p + 2), total);
        CHECK_EQ(get16(p + 6), 0x4000); /* DF, no fragment */
        CHECK_EQ(p[8], 64);
        CHECK_EQ(sum16(p, 20), 0xFFFF); /* header checksum right */
        CHECK_EQ(get32(p + 12), f->src_addr);
        CHECK_EQ(get32(p + 16), f->dst_addr);
        const uint8_t *l4 = p + 20;
        if (f->proto == RTSIM_PROTO_TCP) {
            CHECK_EQ(p[9], 6);
            CHECK_EQ(get16(l4), f->src_port);
            CHECK_EQ(get16(l4 + 2), f->dst_port);
            CHECK_EQ(get32(l4 + 4), 0);
            CHECK_EQ(get32(l4 + 8), 0);
            CHECK_EQ(l4[12], 0x50);
            CHECK_EQ(l4[13], 0x02); /* SYN only */
            CHECK_EQ(get16(l4 + 14), 64240);
            CHECK_EQ(get16(l4 + 16), 0);
            CHECK_EQ(get16(l4 + 18), 0);
        } else if (f->proto == RTSIM_PROTO_UDP) {
            CHECK_EQ(p[9], 17);
            CHECK_EQ(get16(l4), f->src_port);
            CHECK_EQ(get16(l4 + 2), f->dst_port);
            CHECK_EQ(get16(l4 + 4), total - 20);
            CHECK_EQ(get16(l4 + 6), 0);
        } else {
            CHECK_EQ(p[9], 1);
            CHECK_EQ(l4[0], 8);
            CHECK_EQ(l4[1], 0);
            CHECK_EQ(get16(l4 + 4), 1);
            CHECK_EQ(get16(l4 + 6), 1);
            CHECK_EQ(sum16(l4, total - 20), 0xFFFF); /* over the whole message */
        }
    }
    for (size_t i = payload_from; i < len; i++)
        if (buf[i] != 0) {
            CHECK_EQ(i, len); /* a non-zero payload byte */
            break;
        }

    /* What the classifier reads. */
    rts_classifier_info info;
    CHECK_EQ(rts_classifier_parse_isr(buf, len, &info), RTS_OK);
    CHECK_EQ(info.vlan, f->vlan ? 1 : 0);
    CHECK_EQ(info.vlan_tci, f->vlan ? (f->vlan_pcp << 13) | 1u : 0);
    CHECK_EQ(info.l3_off, l3);
    switch (f->proto) {
    case RTSIM_PROTO_TCP:
    case RTSIM_PROTO_UDP:
        CHECK_EQ(info.kind, f->proto == RTSIM_PROTO_TCP ? RTS_CLASSIFIER_TCP : RTS_CLASSIFIER_UDP);
        CHECK_EQ(info.local_port, f->dst_port);
        CHECK_EQ(info.remote_port, f->src_port);
        CHECK_EQ(info.src_addr, f->src_addr);
        CHECK_EQ(info.l4_off, l3 + 20);
        break;
    case RTSIM_PROTO_ICMP:
        CHECK_EQ(info.kind, RTS_CLASSIFIER_ICMP);
        CHECK_EQ(info.src_addr, f->src_addr);
        break;
    case RTSIM_PROTO_ARP:
        CHECK_EQ(info.kind, RTS_CLASSIFIER_ARP);
        break;
    default:
        CHECK_EQ(info.kind, RTS_CLASSIFIER_OTHER);
        break;
    }
}

static void test_min(void)
{
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_TCP, 0), 54);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_TCP, 1), 58);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_UDP, 0), 42);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_UDP, 1), 46);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_ICMP, 0), 42);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_ICMP, 1), 46);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_ARP, 0), 42);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_ARP, 1), 46);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_RAW, 0), 14);
    CHECK_EQ(rtsim_frame_min(RTSIM_PROTO_RAW, 1), 18);
    CHECK_EQ(rtsim_frame_min(5, 0), 0);
    CHECK_EQ(rtsim_frame_min(0xFFFFFFFFu, 1), 0);
}

/* Every protocol x tag x size, and a few port/address/PCP variations. */
static void test_all_frames(void)
{
    static char row[96];
    for (size_t p = 0; p < sizeof PROTOS / sizeof PROTOS[0]; p++)
        for (uint32_t vlan = 0; vlan < 2; vlan++)
            for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
                snprintf(row, sizeof row, "proto %u vlan %u size %u", (unsigned)PROTOS[p],
                         (unsigned)vlan, (unsigned)SIZES[s]);
                ROW(row);
                rtsim_flow_cfg f = flow(PROTOS[p], vlan, SIZES[s]);
                check_frame(&f);
                f.dst_port = 65535;
                f.src_port = 1;
                f.src_addr = 0xFFFFFFFEu;
                f.dst_addr = 0x7F000001u;
                f.vlan_pcp = vlan ? 7 : 0;
                check_frame(&f);
                f.vlan_pcp = 0;
                f.src_addr = 0x01020304u;
                check_frame(&f);
            }
    ROW("test_all_frames");
}

/* The lengths the brief promises: below the headers → the headers, above the maximum → capped. */
static void test_lengths(void)
{
    uint8_t buf[RTSIM_FRAME_MAX];
    rtsim_flow_cfg f = flow(RTSIM_PROTO_TCP, 0, 10);
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 54);
    f.vlan = 1;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 58);
    f.size = 100;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 100);
    CHECK_EQ(get16(buf + 18 + 2), 100 - 18);
    f.size = 5000;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), RTSIM_FRAME_MAX);
    CHECK_EQ(get16(buf + 18 + 2), RTSIM_FRAME_MAX - 18);
    f = flow(RTSIM_PROTO_UDP, 0, 0xFFFFFFFFu);
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), RTSIM_FRAME_MAX);
    CHECK_EQ(get16(buf + 14 + 2), RTSIM_FRAME_MAX - 14);
    CHECK_EQ(get16(buf + 14 + 20 + 4), RTSIM_FRAME_MAX - 14 - 20);
    f = flow(RTSIM_PROTO_RAW, 0, 0);
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 14);
    f.size = 60;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 60);
}

/* Addresses 0 stand for 192.0.2.100 (source) and 192.0.2.1 (destination). */
static void test_default_addresses(void)
{
    uint8_t buf[RTSIM_FRAME_MAX];
    rtsim_flow_cfg f = flow(RTSIM_PROTO_UDP, 0, 0);
    f.src_addr = 0;
    f.dst_addr = 0;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 42);
    CHECK_EQ(get32(buf + 14 + 12), 0xC0000264u);
    CHECK_EQ(get32(buf + 14 + 16), 0xC0000201u);
    CHECK_EQ(get32(buf + 8), 0xC0000264u); /* the source MAC follows */
    CHECK_EQ(sum16(buf + 14, 20), 0xFFFF);
    f.proto = RTSIM_PROTO_ARP;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 42);
    CHECK_EQ(get32(buf + 14 + 14), 0xC0000264u);
    CHECK_EQ(get32(buf + 14 + 24), 0xC0000201u);
}

/* Too little room or an unknown protocol: 0, and nothing written. */
static void test_errors(void)
{
    uint8_t buf[RTSIM_FRAME_MAX];
    for (size_t p = 0; p < sizeof PROTOS / sizeof PROTOS[0]; p++)
        for (uint32_t vlan = 0; vlan < 2; vlan++) {
            const uint32_t sizes[] = {0u, 100u, 5000u};
            for (size_t s = 0; s < 3; s++) {
                rtsim_flow_cfg f = flow(PROTOS[p], vlan, sizes[s]);
                memset(buf, SENTINEL, sizeof buf);
                size_t need = rtsim_frame_build(&f, buf, sizeof buf);
                CHECK(need > 0);
                memset(buf, SENTINEL, sizeof buf);
                CHECK_EQ(rtsim_frame_build(&f, buf, need - 1), 0);
                CHECK_EQ(rtsim_frame_build(&f, buf, 0), 0);
                for (size_t i = 0; i < sizeof buf; i++)
                    if (buf[i] != SENTINEL) {
                        CHECK_EQ(i, sizeof buf); /* written although refused */
                        break;
                    }
                CHECK_EQ(rtsim_frame_build(&f, buf, need), need);
            }
        }
    rtsim_flow_cfg f = flow(5, 0, 100);
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 0);
    f.proto = 0xFFFFFFFFu;
    f.vlan = 1;
    CHECK_EQ(rtsim_frame_build(&f, buf, sizeof buf), 0);
    f = flow(RTSIM_PROTO_UDP, 0, 100);
    CHECK_EQ(rtsim_frame_build(NULL, buf, sizeof buf), 0);
    CHECK_EQ(rtsim_frame_build(&f, NULL, sizeof buf), 0);
}

/* rts_classifier_classify_isr() against a flow table: the bound (proto, port) gets its
 * flow, a source-specific binding only its source, an unbound port the
 * default flow, ARP and ICMP their special flows, the unknown EtherType the
 * default flow. */
static void test_flow_table(void)
{
    rts_flow_table t;
    rts_flow_table_init(&t, 0);
    uint8_t id_tcp, id_udp, id_udp_src;
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_TCP, 502, 0, &id_tcp), RTS_OK);
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 502, 0, &id_udp), RTS_OK);
    CHECK_EQ(rts_flow_table_bind(&t, RTS_PROTO_UDP, 503, 0x0A000107u, &id_udp_src), RTS_OK);
    const uint32_t sizes[] = {0u, 64u, 1522u};
    for (uint32_t vlan = 0; vlan < 2; vlan++)
        for (size_t s = 0; s < 3; s++) {
            rts_classifier_info info;
            rtsim_flow_cfg f = flow(RTSIM_PROTO_TCP, vlan, sizes[s]);
            CHECK_EQ(classify_flow(&t, &f, &info), id_tcp);
            f.dst_port = 503; /* TCP 503 is not bound */
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_DEFAULT);
            CHECK_EQ(info.kind, RTS_CLASSIFIER_TCP);

            f = flow(RTSIM_PROTO_UDP, vlan, sizes[s]);
            CHECK_EQ(classify_flow(&t, &f, &info), id_udp);
            f.dst_port = 503;
            CHECK_EQ(classify_flow(&t, &f, &info), id_udp_src);
            f.src_addr = 0x0A000108u; /* another source */
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_DEFAULT);
            f.dst_port = 9;
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_DEFAULT);
            CHECK_EQ(info.kind, RTS_CLASSIFIER_UDP);

            f = flow(RTSIM_PROTO_ICMP, vlan, sizes[s]);
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_ICMP);
            f = flow(RTSIM_PROTO_ARP, vlan, sizes[s]);
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_ARP);
            f = flow(RTSIM_PROTO_RAW, vlan, sizes[s]);
            CHECK_EQ(classify_flow(&t, &f, &info), RTS_FLOW_DEFAULT);
            CHECK_EQ(info.kind, RTS_CLASSIFIER_OTHER);
        }
}

int main(void)
{
    RTS_RUN(test_min);
    RTS_RUN(test_all_frames);
    RTS_RUN(test_lengths);
    RTS_RUN(test_default_addresses);
    RTS_RUN(test_errors);
    RTS_RUN(test_flow_table);
    return rts_test_end();
}
