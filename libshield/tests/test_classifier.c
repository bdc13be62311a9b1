/* classifier: every protocol case of Behnke §5.3.1, every truncation of
 * every valid frame, and no read past `len` (the frame is placed at the end
 * of a guarded buffer under ASan). */
#include <stdlib.h>

#include "rts_frames.h"
#include "rts_test.h"
#include "rts_test_flows.h"
#include "rtshield/rts_classifier.h"

static rts_flow_table tbl;
static uint8_t f_udp, f_tcp, f_udp_src;

static void setup(void)
{
    rts_flow_table_init(&tbl, 0);
    f_udp = rts_test_bind(&tbl, RTS_PROTO_UDP, 502, 0);
    f_tcp = rts_test_bind(&tbl, RTS_PROTO_TCP, 502, 0);
    f_udp_src = rts_test_bind(&tbl, RTS_PROTO_UDP, 502, 0xC0A80001u);
}

/* Classify a copy placed flush against the end of a heap block, so that an
 * over-read is an ASan error. Both paths of rts_classifier_classify_isr() run on
 * every frame: with header facts (the full parse) and without (the receive
 * path's lean parse); they must give the same flow. */
static uint8_t classify_exact(const uint8_t *frame, size_t len, rts_classifier_info *info)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, frame, len);
    rts_classifier_info local;
    uint8_t id = rts_classifier_classify_isr(&tbl, copy, len, info != NULL ? info : &local);
    CHECK_EQ(rts_classifier_classify_isr(&tbl, copy, len, NULL), id);
    free(copy);
    return id;
}

typedef struct {
    const char *name;
    rts_frame_spec spec; /* ip_proto 0 = ARP frame */
    int arp;
    uint8_t *expect_flow;
    uint8_t expect_special;
    int kind;
} cls_row;

static void test_protocols(void)
{
    setup();
    const uint8_t none = RTS_FLOW_NONE;
    uint8_t arp = RTS_FLOW_ARP, icmp = RTS_FLOW_ICMP, bg = RTS_FLOW_BACKGROUND, def = RTS_FLOW_DEFAULT;
    (void)none;
    const cls_row rows[] = {
        {"ARP", {0}, 1, &arp, 0, RTS_CLASSIFIER_ARP},
        {"ICMP echo", {.ip_proto = 1, .src = 1}, 0, &icmp, 0, RTS_CLASSIFIER_ICMP},
        {"UDP bound port", {.ip_proto = 17, .src = 0x0A000002u, .sport = 9, .dport = 502}, 0, &f_udp, 0,
         RTS_CLASSIFIER_UDP},
        {"UDP bound port, matching source", {.ip_proto = 17, .src = 0xC0A80001u, .dport = 502}, 0, &f_udp_src,
         0, RTS_CLASSIFIER_UDP},
        {"TCP SYN bound port", {.ip_proto = 6, .src = 3, .sport = 1000, .dport = 502}, 0, &f_tcp, 0,
         RTS_CLASSIFIER_TCP},
        {"UDP unbound port", {.ip_proto = 17, .src = 3, .dport = 503}, 0, &def, 0, RTS_CLASSIFIER_UDP},
        {"TCP unbound port", {.ip_proto = 6, .src = 3, .dport = 80}, 0, &def, 0, RTS_CLASSIFIER_TCP},
        {"VLAN UDP", {.vlan = 1, .vlan_tci = 0x2005, .ip_proto = 17, .dport = 502}, 0, &f_udp, 0, RTS_CLASSIFIER_UDP},
        {"VLAN ARP", {.vlan = 1}, 1, &arp, 0, RTS_CLASSIFIER_ARP},
        {"fragment MF", {.ip_proto = 17, .dport = 502, .frag = 0x2000}, 0, &bg, 0, RTS_CLASSIFIER_FRAGMENT},
        {"fragment offset", {.ip_proto = 17, .dport = 502, .frag = 0x0010}, 0, &bg, 0, RTS_CLASSIFIER_FRAGMENT},
        {"DF set is not a fragment", {.ip_proto = 17, .dport = 502, .frag = 0x4000}, 0, &f_udp, 0, RTS_CLASSIFIER_UDP},
        {"ICMP fragment", {.ip_proto = 1, .frag = 0x2000}, 0, &bg, 0, RTS_CLASSIFIER_FRAGMENT},
        {"IPv4 options (ihl 8)", {.ip_proto = 17, .dport = 502, .ihl = 8}, 0, &f_udp, 0, RTS_CLASSIFIER_UDP},
        {"IPv4 other protocol (GRE)", {.ip_proto = 47, .payload = 8}, 0, &def, 0, RTS_CLASSIFIER_IPV4_OTHER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        uint8_t fr[256];
        size_t len = rows[i].arp ? rts_fr_arp(fr, rows[i].spec.vlan) : rts_fr_ipv4(fr, &rows[i].spec);
        rts_classifier_info info;
        CHECK_EQ(classify_exact(fr, len, &info), *rows[i].expect_flow);
        CHECK_EQ(info.kind, rows[i].kind);
        CHECK_EQ(info.vlan, rows[i].spec.vlan);
        if (rows[i].kind == RTS_CLASSIFIER_UDP || rows[i].kind == RTS_CLASSIFIER_TCP) {
            CHECK_EQ(info.local_port, rows[i].spec.dport);
            CHECK_EQ(info.remote_port, rows[i].spec.sport);
            CHECK_EQ(info.src_addr, rows[i].spec.src);
        }
    }
}

static void test_other_ethertypes(void)
{
    setup();
    uint8_t fr[64];
    rts_classifier_info info;
    ROW("IPv6 goes to the default flow");
    rts_fr_eth(fr, 0, 0, 0x86DD);
    CHECK_EQ(classify_exact(fr, 60, &info), RTS_FLOW_DEFAULT);
    CHECK_EQ(info.kind, RTS_CLASSIFIER_IPV6);
    ROW("802.3 length field");
    rts_fr_eth(fr, 0, 0, 46);
    CHECK_EQ(classify_exact(fr, 60, &info), RTS_FLOW_DEFAULT);
    CHECK_EQ(info.kind, RTS_CLASSIFIER_OTHER);
    ROW("double tag (QinQ inner 0x8100) is 'other'");
    rts_fr_eth(fr, 1, 1, 0x8100);
    CHECK_EQ(classify_exact(fr, 60, &info), RTS_FLOW_DEFAULT);
    CHECK_EQ(info.kind, RTS_CLASSIFIER_OTHER);
    ROW("NULL frame");
    CHECK_EQ(rts_classifier_classify_isr(&tbl, NULL, 60, &info), RTS_FLOW_DEFAULT);
    CHECK_EQ(info.kind, RTS_CLASSIFIER_MALFORMED);
    ROW("NULL info accepted");
    size_t n = rts_fr_udp(fr, 1, 502, 0);
    CHECK_EQ(rts_classifier_classify_isr(&tbl, fr, n, NULL), f_udp);
    ROW("NULL frame and NULL info: the default flow, nothing read");
    CHECK_EQ(rts_classifier_classify_isr(&tbl, NULL, n, NULL), RTS_FLOW_DEFAULT);
    CHECK_EQ(rts_classifier_classify_isr(&tbl, NULL, 0, NULL), RTS_FLOW_DEFAULT);
}

typedef struct {
    const char *name;
    size_t off; /* offset from the L3 header */
    uint8_t value;
} corrupt_row;

static void test_inconsistent_headers(void)
{
    setup();
    const corrupt_row rows[] = {
        {"version 6 in an IPv4 EtherType", 0, 0x65},
        {"ihl 4 (< 20 bytes)", 0, 0x44},
        {"ihl 15 beyond total length", 0, 0x4F},
        {"total length > frame", 2, 0x7F},
        {"total length < header (high byte 0, low 10)", 3, 10},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        uint8_t fr[128];
        size_t len = rts_fr_udp(fr, 1, 502, 0);
        if (rows[i].off == 3) fr[14 + 2] = 0;
        fr[14 + rows[i].off] = rows[i].value;
        rts_classifier_info info;
        CHECK_EQ(classify_exact(fr, len, &info), RTS_FLOW_DEFAULT);
        CHECK_EQ(info.kind, RTS_CLASSIFIER_MALFORMED);
    }
    ROW("UDP datagram too short for the UDP header (total length 24)");
    uint8_t fr[128];
    size_t len = rts_fr_udp(fr, 1, 502, 0);
    fr[14 + 2] = 0;
    fr[14 + 3] = 24;
    CHECK_EQ(classify_exact(fr, len, NULL), RTS_FLOW_DEFAULT);
    ROW("trailing Ethernet padding after the datagram is fine");
    len = rts_fr_udp(fr, 1, 502, 0); /* 42 bytes of headers padded to 60 */
    CHECK_EQ(len, 60);
    CHECK_EQ(classify_exact(fr, len, NULL), f_udp);
    ROW("ARP with hlen/plen beyond the frame");
    len = rts_fr_arp(fr, 0);
    fr[14 + 4] = 200;
    CHECK_EQ(classify_exact(fr, len, NULL), RTS_FLOW_DEFAULT);
}

/* Length fields checked one at a time, each with the smallest frame that
 * violates it (the list: IHL < 5, total length < IHL*4, total length
 * > frame, truncated VLAN tag, plus a transport header cut by the total
 * length and an ARP header cut by the frame). Offsets are from the start of
 * the frame; a frame length of 0 keeps the built length. */
typedef struct {
    const char *name;
    rts_frame_spec spec; /* ip_proto 0 = ARP frame */
    size_t set_len;      /* frame length to pass (0: as built) */
    size_t off;          /* byte to overwrite (0: none) */
    uint8_t value;
    size_t off2; /* second byte to overwrite (0: none) */
    uint8_t value2;
} len_row;

static void test_length_fields(void)
{
    setup();
    const len_row rows[] = {
        {"VLAN tag truncated: 17 bytes", {.vlan = 1, .ip_proto = 17, .dport = 502}, 17, 0, 0, 0, 0},
        {"Ethernet header truncated: 13 bytes", {.ip_proto = 17, .dport = 502}, 13, 0, 0, 0, 0},
        {"IPv4 header truncated: 33 bytes", {.ip_proto = 17, .dport = 502}, 33, 0, 0, 0, 0},
        {"ihl 0", {.ip_proto = 17, .dport = 502}, 0, 14, 0x40, 0, 0},
        {"total length 19 < 20-byte header", {.ip_proto = 17, .dport = 502}, 0, 16, 0, 17, 19},
        {"ihl 6, total length 23 < 24", {.ip_proto = 17, .dport = 502, .ihl = 6}, 0, 16, 0, 17, 23},
        {"total length one byte past the frame", {.ip_proto = 17, .dport = 502, .payload = 40}, 0, 16, 0,
         17, 20 + 8 + 40 + 1},
        {"VLAN: total length past the frame", {.vlan = 1, .ip_proto = 6, .dport = 502}, 0, 20, 0, 21, 255},
        {"TCP header cut by the total length (39)", {.ip_proto = 6, .dport = 502}, 0, 16, 0, 17, 39},
        {"ICMP header cut by the total length (27)", {.ip_proto = 1}, 0, 16, 0, 17, 27},
        {"ARP fixed part truncated: 14 + 7 bytes", {0}, 21, 0, 0, 0, 0},
        {"ARP plen beyond the frame", {0}, 0, 14 + 5, 40, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        uint8_t fr[256];
        size_t len = rows[i].spec.ip_proto == 0 ? rts_fr_arp(fr, rows[i].spec.vlan) : rts_fr_ipv4(fr, &rows[i].spec);
        if (rows[i].set_len != 0u) len = rows[i].set_len;
        if (rows[i].off != 0u) fr[rows[i].off] = rows[i].value;
        if (rows[i].off2 != 0u) fr[rows[i].off2] = rows[i].value2;
        rts_classifier_info info;
        CHECK_EQ(classify_exact(fr, len, &info), RTS_FLOW_DEFAULT);
        CHECK_EQ(info.kind, RTS_CLASSIFIER_MALFORMED);
    }
    /* The boundary itself is valid: total length exactly the frame. */
    ROW("total length exactly the frame (no padding)");
    rts_frame_spec spec = {.ip_proto = 17, .dport = 502, .payload = 40};
    uint8_t fr[256];
    size_t len = rts_fr_ipv4(fr, &spec);
    CHECK_EQ(len, 14 + 20 + 8 + 40);
    CHECK_EQ(classify_exact(fr, len, NULL), f_udp);
}

/* Every prefix of every valid frame: a prefix shorter than the headers the
 * classifier needs is malformed (default flow), never an over-read. */
static void test_every_truncation(void)
{
    setup();
    uint8_t frames[6][128];
    size_t lens[6];
    size_t need[6];
    rts_frame_spec udp = {.ip_proto = 17, .dport = 502, .payload = 20};
    rts_frame_spec tcp = {.ip_proto = 6, .dport = 502, .vlan = 1};
    rts_frame_spec icmp = {.ip_proto = 1, .payload = 30};
    rts_frame_spec frag = {.ip_proto = 17, .dport = 502, .frag = 0x2000, .payload = 40};
    lens[0] = rts_fr_ipv4(frames[0], &udp);
    need[0] = 14 + 20 + 8 + 20;
    lens[1] = rts_fr_ipv4(frames[1], &tcp);
    need[1] = 18 + 20 + 20;
    lens[2] = rts_fr_ipv4(frames[2], &icmp);
    need[2] = 14 + 20 + 8 + 30;
    lens[3] = rts_fr_ipv4(frames[3], &frag);
    need[3] = 14 + 20 + 8 + 40;
    lens[4] = rts_fr_arp(frames[4], 0);
    need[4] = 14 + 28;
    lens[5] = rts_fr_arp(frames[5], 1);
    need[5] = 18 + 28;
    const uint8_t expect[6] = {f_udp, f_tcp, RTS_FLOW_ICMP, RTS_FLOW_BACKGROUND, RTS_FLOW_ARP, RTS_FLOW_ARP};
    for (int k = 0; k < 6; k++) {
        for (size_t n = 0; n <= lens[k]; n++) {
            ROW("truncation");
            uint8_t id = classify_exact(frames[k], n, NULL);
            if (n >= need[k]) {
                CHECK_EQ(id, expect[k]);
            } else {
                CHECK_EQ(id, RTS_FLOW_DEFAULT);
            }
        }
    }
}

/* The lean parse (info NULL) against the full one on mutated frames: every
 * header byte of valid frames of each kind set to boundary and random
 * values, at every length up to the frame's. */
static void test_fast_path_matches_parse(void)
{
    setup();
    uint8_t base[8][128];
    size_t blen[8];
    rts_frame_spec specs[6] = {
        {.ip_proto = 17, .src = 0xC0A80001u, .dport = 502, .payload = 4},
        {.ip_proto = 6, .src = 7, .dport = 502, .vlan = 1},
        {.ip_proto = 1, .payload = 8},
        {.ip_proto = 17, .dport = 502, .frag = 0x2000},
        {.ip_proto = 17, .dport = 502, .ihl = 6},
        {.ip_proto = 47, .payload = 8},
    };
    for (int k = 0; k < 6; k++) blen[k] = rts_fr_ipv4(base[k], &specs[k]);
    blen[6] = rts_fr_arp(base[6], 0);
    blen[7] = rts_fr_arp(base[7], 1);
    static const uint8_t values[] = {0x00, 0x01, 0x04, 0x05, 0x06, 0x08, 0x11, 0x20, 0x3F,
                                     0x40, 0x44, 0x45, 0x46, 0x4F, 0x50, 0x81, 0x86, 0xDD, 0xFF};
    uint32_t rng = 12345u;
    unsigned compared = 0u;
    for (int k = 0; k < 8; k++) {
        for (size_t off = 12; off < 18 + 24 + 4 && off < blen[k]; off++) {
            for (size_t v = 0; v < sizeof values + 4u; v++) {
                uint8_t fr[128];
                memcpy(fr, base[k], blen[k]);
                rng = rng * 1103515245u + 12345u;
                fr[off] = v < sizeof values ? values[v] : (uint8_t)(rng >> 16);
                for (size_t n = 0; n <= blen[k]; n += 1u + (n > 40u ? 3u : 0u)) {
                    ROW("mutated frame");
                    (void)classify_exact(fr, n, NULL); /* checks both paths agree */
                    compared++;
                }
            }
        }
    }
    CHECK(compared > 10000u);
}

int main(void)
{
    RTS_RUN(test_protocols);
    RTS_RUN(test_other_ethertypes);
    RTS_RUN(test_inconsistent_headers);
    RTS_RUN(test_length_fields);
    RTS_RUN(test_every_truncation);
    RTS_RUN(test_fast_path_matches_parse);
    return rts_test_end();
}
