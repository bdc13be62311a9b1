/* The synthetic NIC of the lwIP adapter's tests (see test_nic.h). */
#include "test_nic.h"

#include <string.h>

#include "lwip/etharp.h"
#include "lwip/inet_chksum.h"
#include "lwip/stats.h"
#include "lwip/udp.h"

const char *const tn_kind_name[K_KINDS] = {"wanted", "bulk", "unbound", "syn", "arp", "icmp"};
const uint8_t tn_dev_mac[6] = {0x02, 0, 0, 0, 0, 0x02}, tn_dev_ip[4] = {192, 168, 7, 2};
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x01}, peer_ip[4] = {192, 168, 7, 1};

tn_counts tn;
tn_tx_counts tn_txc;
volatile uint32_t tn_now_ms;

/* ------------------------------------------------------------- frames */

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v >> 16);
    put16(p + 2, v & 0xFFFFu);
}

uint32_t tn_seq(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void eth_hdr(uint8_t *f, const uint8_t *dst, unsigned type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, peer_mac, 6);
    put16(f + 12, type);
}

/* The IPv4 header at f + 14 with its checksum; returns the frame length. */
static uint16_t ip_hdr(uint8_t *f, unsigned proto, unsigned l4_len, unsigned id)
{
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, 20 + l4_len);
    put16(ip + 4, id & 0xFFFFu);
    ip[8] = 64;
    ip[9] = (uint8_t)proto;
    memcpy(ip + 12, peer_ip, 4);
    memcpy(ip + 16, tn_dev_ip, 4);
    const u16_t c = inet_chksum(ip, 20);
    memcpy(ip + 10, &c, 2);
    return (uint16_t)(14 + 20 + l4_len);
}

uint16_t tn_udp(uint8_t *f, unsigned dport, uint32_t seq)
{
    eth_hdr(f, tn_dev_mac, 0x0800);
    uint8_t *u = f + 34;
    const unsigned n = 32;
    put16(u, 40000);
    put16(u + 2, dport);
    put16(u + 4, 8 + n);
    put16(u + 6, 0); /* no checksum (IPv4) */
    memset(u + 8, 0xA5, n);
    put32(u + 8, seq);
    return ip_hdr(f, 17, 8 + n, seq);
}

uint16_t tn_syn(uint8_t *f, uint32_t seq)
{
    eth_hdr(f, tn_dev_mac, 0x0800);
    uint8_t t[12 + 20] = {0}; /* pseudo-header + TCP header, for the checksum */
    memcpy(t, peer_ip, 4);
    memcpy(t + 4, tn_dev_ip, 4);
    t[9] = 6;
    put16(t + 10, 20);
    uint8_t *h = t + 12;
    put16(h, 1024 + (seq % 30000u));
    put16(h + 2, 80);
    put32(h + 4, seq);
    h[12] = 5 << 4;
    h[13] = 0x02; /* SYN */
    put16(h + 14, 8192);
    const u16_t c = inet_chksum(t, sizeof t);
    memcpy(h + 16, &c, 2);
    memcpy(f + 34, h, 20);
    return ip_hdr(f, 6, 20, seq);
}

uint16_t tn_arp_request(uint8_t *f)
{
    static const uint8_t bcast[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    eth_hdr(f, bcast, 0x0806);
    uint8_t *a = f + 14;
    put16(a, 1);
    put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, 1); /* request */
    memcpy(a + 8, peer_mac, 6);
    memcpy(a + 14, peer_ip, 4);
    memset(a + 18, 0, 6);
    memcpy(a + 24, tn_dev_ip, 4);
    return 14 + 28;
}

uint16_t tn_echo_request(uint8_t *f, uint32_t seq)
{
    eth_hdr(f, tn_dev_mac, 0x0800);
    uint8_t *m = f + 34;
    memset(m, 0x5A, 40);
    m[0] = 8; /* echo request */
    m[1] = 0;
    put16(m + 2, 0);
    put16(m + 4, 0x1234);
    put16(m + 6, seq & 0xFFFFu);
    const u16_t c = inet_chksum(m, 40);
    memcpy(m + 2, &c, 2);
    return ip_hdr(f, 1, 40, seq);
}

int tn_kind(const uint8_t *f, uint16_t len)
{
    if (len >= 14 && f[12] == 0x08 && f[13] == 0x06) return K_ARP;
    if (len < 38 || f[12] != 0x08 || f[13] != 0x00) return -1;
    if (f[23] == 1) return K_ICMP;
    if (f[23] == 6) return K_SYN;
    const unsigned dport = (unsigned)f[36] << 8 | f[37];
    return dport == TN_CTRL_PORT ? K_WANTED : dport == TN_BULK_PORT ? K_BULK : K_UNBOUND;
}

void tn_tx(const uint8_t *f, uint16_t len)
{
    const bool ip = len >= 35 && f[12] == 0x08 && f[13] == 0x00;
    if (len >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 2) {
        tn_txc.arp_reply++;
    } else if (ip && f[23] == 1 && f[34] == 0) {
        tn_txc.echo_reply++;
    } else if (ip && f[23] == 1 && f[34] == 3) {
        tn_txc.unreach++;
    } else if (ip && len >= 48 && f[23] == 6 && (f[47] & 0x04)) {
        tn_txc.rst++;
    } else {
        tn_txc.other++;
    }
}

/* --------------------------------------------------------- the device */

tn_rx_counts tn_rx;
void (*tn_rx_hook)(int kind);

static err_t linkoutput(struct netif *n, struct pbuf *p)
{
    (void)n;
    uint8_t f[TN_FRAME_MAX];
    tn_tx(f, pbuf_copy_partial(p, f, sizeof f, ETH_PAD_SIZE));
    return ERR_OK;
}

static err_t netif_setup(struct netif *n)
{
    n->name[0] = 'e';
    n->name[1] = 'n';
    n->hwaddr_len = 6;
    memcpy(n->hwaddr, tn_dev_mac, 6);
    n->mtu = 1500;
    n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    n->output = etharp_output;
    n->linkoutput = linkoutput;
    return ERR_OK;
}

void tn_netif_add(struct netif *n, err_t (*input)(struct pbuf *, struct netif *))
{
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, tn_dev_ip[0], tn_dev_ip[1], tn_dev_ip[2], tn_dev_ip[3]);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    netif_add(n, &ip, &mask, &gw, NULL, netif_setup, input);
    netif_set_default(n);
    netif_set_up(n);
}

static void on_datagram(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)pcb;
    (void)addr;
    (void)port;
    const int kind = arg != NULL ? K_WANTED : K_BULK;
    if (tn_rx_hook != NULL) tn_rx_hook(kind);
    if (kind == K_WANTED) {
        uint8_t s[4] = {0};
        (void)pbuf_copy_partial(p, s, 4, 0);
        static uint32_t last;
        const uint32_t seq = tn_seq(s);
        if (tn_rx.wanted > 0 && seq <= last) tn_rx.order_errs++;
        last = seq;
        tn_rx.wanted++;
    } else {
        tn_rx.bulk++;
    }
    pbuf_free(p);
}

void tn_receivers(void)
{
    static int wanted_tag;
    struct udp_pcb *ctrl = udp_new(), *bulk = udp_new();
    (void)udp_bind(ctrl, IP4_ADDR_ANY, TN_CTRL_PORT);
    udp_recv(ctrl, on_datagram, &wanted_tag);
    (void)udp_bind(bulk, IP4_ADDR_ANY, TN_BULK_PORT);
    udp_recv(bulk, on_datagram, NULL);
}

/* ------------------------------------------------------ the RX ring */

static uint8_t *mem_base;
static uint32_t mem_size;
static unsigned mem_bufs;
static struct {
    uint16_t buf[TN_SLOTS];
    unsigned head, tail;
} posted, filled; /* buffers the DMA may fill; filled descriptors in arrival order */
static uint16_t filled_len[TN_SLOTS];

static void fifo_put(uint16_t *item, unsigned *tail, uint16_t v)
{
    item[*tail % TN_SLOTS] = v;
    (*tail)++;
}

void tn_init(uint8_t *mem, uint32_t buf_size, unsigned nbufs)
{
    mem_base = mem;
    mem_size = buf_size;
    mem_bufs = nbufs <= TN_SLOTS ? nbufs : TN_SLOTS;
}

void tn_wire(const uint8_t *f, uint16_t len)
{
    const int k = tn_kind(f, len);
    if (k < 0 || len > mem_size) return; /* the wire sends known kinds that fit */
    tn.sent[k]++;
    tn.frames++;
    if (posted.head == posted.tail) {
        tn.nic_full[k]++;
        return;
    }
    const uint16_t b = posted.buf[posted.head++ % TN_SLOTS];
    memcpy(mem_base + (size_t)b * mem_size, f, len);
    filled_len[b] = len;
    fifo_put(filled.buf, &filled.tail, b);
}

unsigned tn_posted(void)
{
    return posted.tail - posted.head;
}

unsigned tn_filled(void)
{
    return filled.tail - filled.head;
}

bool tn_line_on;
unsigned tn_line_offs;
void (*tn_line_hw)(bool on);

void tn_rx_irq_set(void *drv, bool on)
{
    (void)drv;
    if (tn_line_on && !on) tn_line_offs++;
    tn_line_on = on;
    if (tn_line_hw != NULL) tn_line_hw(on);
}

/* The driver's descriptor-ring primitives (on hardware: descriptor words). */
void tn_dma_post(void *drv, uint16_t buf, uint8_t *mem)
{
    (void)drv;
    if (buf >= mem_bufs || mem != mem_base + (size_t)buf * mem_size || posted.tail - posted.head >= TN_SLOTS) {
        tn.post_errors++;
        return;
    }
    fifo_put(posted.buf, &posted.tail, buf);
}

bool tn_desc_filled(uint16_t *buf, uint16_t *len)
{
    if (filled.head == filled.tail) return false;
    *buf = filled.buf[filled.head % TN_SLOTS];
    *len = filled_len[*buf];
    return true;
}

void tn_desc_advance(void)
{
    filled.head++;
}

#if !TN_NO_ADAPTER
/* [harvest] */
/* The RX descriptor loop: each filled descriptor through libshield, in
 * place; no pbuf here. The RX interrupt runs it, and so does the global
 * limit's polling step (RX masked). */
uint32_t tn_harvest(void *drv, uint32_t max, rts_lwip_woken *woken)
{
    rts_lwip *l = drv;
    uint32_t n = 0;
    uint16_t buf, len;
    while (n < max && tn_desc_filled(&buf, &len)) {
        const rts_lwip_next next = rts_lwip_frame_isr(l, buf, len, woken);
        if (next == RTS_LWIP_LEAVE) break; /* global limit: the rest stays in the ring */
        /* the test's books, not a driver's: ARP that libshield shed */
        if (l->last.flow == RTS_FLOW_ARP && l->last.outcome != RTS_RX_QUEUED) tn.arp_shed++;
        if (l->last.recycled_flow == RTS_FLOW_ARP) tn.arp_shed++;
        tn_desc_advance();
        n++;
        if (next == RTS_LWIP_STOP) break;  /* the limit is reached: polling from now on */
    }
    tn.taken_in_ms[tn_now_ms % 400u] += n;
    return n;
}
/* [harvest end] */

/* --------------------------------------------------------- checks */

/* Every buffer in one place, every frame counted once. */
void tn_check_conservation(const rts_lwip *l, unsigned nbufs, tn_check_fn *check)
{
    const rts_shield *s = &l->sh;
    const rts_lwip_stats *a = &l->stats;
    check(rts_flow_queue_check(&s->rx.fq) == RTS_OK, "flow queues consistent (rts_flow_queue_check)");
    const unsigned ring = rts_flow_queue_count(&s->rx.fq, RTS_BUF_RING);
    const unsigned pool = rts_flow_queue_count(&s->rx.fq, RTS_BUF_POOL);
    const unsigned nic = tn_posted() + tn_filled();
    check(ring == nic, "libshield's ring buffers (%u) are the NIC's posted + filled descriptors (%u)", ring, nic);
    check(ring + pool == nbufs, "after the drain every buffer is in the ring or spare (%u + %u of %u)", ring,
          pool, nbufs);
    unsigned nic_full = 0;
    for (int k = 0; k < K_KINDS; k++) nic_full += tn.nic_full[k];
    check(tn.frames == nic_full + a->frames + tn_filled(),
          "frames on the wire = NIC drops + taken by libshield + still in the ring (%u = %u + %u + %u)",
          tn.frames, nic_full, a->frames, tn_filled());
    const uint32_t queued = s->rx.outcomes[RTS_RX_QUEUED];
    check(a->frames == a->dropped + queued, "taken = dropped in the interrupt + queued (%u = %u + %u)",
          a->frames, a->dropped, queued);
    check(queued == a->to_lwip + a->no_pbuf + a->input_err + s->rx.recycled,
          "queued = handed to lwIP + no pbuf + refused + recycled (%u = %u + %u + %u + %u)", queued,
          a->to_lwip, a->no_pbuf, a->input_err, s->rx.recycled);
    uint64_t reasons = 0;
    for (int r = 0; r < RTS_SHIELD_DROP_REASONS; r++) reasons += s->drops[r];
    check(reasons - s->drops[RTS_SHIELD_DROP_GLOBAL_LIMIT] == a->dropped,
          "every drop has its reason in sh.drops[] (%u)", a->dropped);
    check(lwip_stats.link.recv == a->to_lwip, "lwIP's link.recv counts exactly the frames handed over (%u)",
          lwip_stats.link.recv);
    check(a->bad_desc == 0 && tn.post_errors == 0, "no descriptor refused, every post a buffer of ours");
}
#endif /* !TN_NO_ADAPTER */
