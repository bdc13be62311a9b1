/* The device's NIC, stack-independent (see rts_nic.h): descriptor slots
 * and the posted and filled rings between a board's NIC backend and an IP
 * stack's interface. */
#include "rts_nic.h"

#include <stdatomic.h>

_Static_assert(RTS_NIC_RING < RTS_NIC_SLOTS, "spare slots for recycling and refills");
_Static_assert(RTS_NIC_SLOTS <= RTS_POOL_MAX_BUFS, "every slot is a libshield buffer");
_Static_assert(RTS_NIC_SLOTS <= 0xFFFFu, "slot ids are 16-bit");

/* Single-producer single-consumer rings of slot ids. The FreeRTOS side is
 * one logical producer or consumer: its users run in the RX interrupt or
 * inside a critical section, one at a time; the NIC side is the backend's
 * receive context (the POSIX receive thread, or the Ethernet ISR). */
typedef struct {
    uint16_t item[RTS_NIC_SLOTS];
    _Atomic uint32_t head, tail;
} ring_t;

static bool ring_push(ring_t *r, uint16_t v)
{
    const uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&r->head, memory_order_acquire) >= RTS_NIC_SLOTS) return false;
    r->item[t % RTS_NIC_SLOTS] = v;
    atomic_store_explicit(&r->tail, t + 1u, memory_order_release);
    return true;
}

static bool ring_peek(ring_t *r, uint16_t *v)
{
    const uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h == atomic_load_explicit(&r->tail, memory_order_acquire)) return false;
    *v = r->item[h % RTS_NIC_SLOTS];
    return true;
}

static void ring_drop_head(ring_t *r)
{
    atomic_store_explicit(&r->head, atomic_load_explicit(&r->head, memory_order_relaxed) + 1u,
                          memory_order_release);
}

static const rts_nic_cfg *cfg;
static rts_net_stats *stats;
static uint8_t slot_mem[RTS_NIC_SLOTS][RTS_NIC_SLOT_BYTES];
static volatile uint16_t slot_len[RTS_NIC_SLOTS];
static ring_t posted; /* FreeRTOS side -> NIC */
static ring_t filled; /* NIC -> FreeRTOS side */
static volatile bool running;

void rts_nic_init(const rts_nic_cfg *c, rts_net_stats *st)
{
    cfg = c;
    stats = st;
}

uint8_t *rts_nic_mem(uint16_t slot)
{
    return slot_mem[slot % RTS_NIC_SLOTS];
}

uint16_t rts_nic_len(uint16_t slot)
{
    return slot_len[slot % RTS_NIC_SLOTS];
}

/* The application's limits on its flows' queues and the recycling threshold
 * (app/rts_net.h): the NIC's slots and its ring, for either stack. */
uint32_t rts_net_rx_slots(void)
{
    return RTS_NIC_SLOTS;
}

uint32_t rts_net_rx_ring(void)
{
    return RTS_NIC_RING;
}

BaseType_t rts_nic_start(void)
{
    if (rts_nic_hw_start() != pdPASS) return pdFAIL;
    running = true;
    return pdPASS;
}

void rts_nic_post(uint16_t slot)
{
    (void)ring_push(&posted, slot); /* cannot overflow: a slot is in one place at a time */
    if (running) rts_nic_hw_reposted();
}

bool rts_nic_filled(uint16_t *slot)
{
    return ring_peek(&filled, slot);
}

void rts_nic_filled_take(void)
{
    ring_drop_head(&filled);
}

/* The path a frame took through the shield (app/rts_net.h), for its cost. */
static rts_net_path path_of(const rts_shield_rx *rx)
{
    switch (rx->outcome) {
    case RTS_RX_QUEUED:
        if (rx->recycled_flow != RTS_FLOW_NONE) return RTS_NET_PATH_RECYCLE;
        return rx->raised ? RTS_NET_PATH_RAISE : RTS_NET_PATH_ENQUEUE;
    case RTS_RX_SHORT_CIRCUIT:
        return RTS_NET_PATH_SHORT_CIRCUIT;
    case RTS_RX_FLOW_LIMIT:
        return RTS_NET_PATH_FLOW_LIMIT;
    case RTS_RX_QUEUE_FULL:
        return RTS_NET_PATH_QUEUE_FULL;
    case RTS_RX_GLOBAL_LIMIT:
        return RTS_NET_PATH_GLOBAL_LIMIT;
    default:
        return RTS_NET_PATH_IRQ_DROP;
    }
}

void rts_nic_count_shield(rts_err e, const rts_shield_rx *rx, uint64_t dt)
{
    stats->shield_ns += dt;
    stats->shield_frames++;
    if (e != RTS_OK) return;
    const rts_net_path p = path_of(rx);
    stats->path_ns[p] += dt;
    stats->path_frames[p]++;
    if (rx->flow < RTS_FLOW_MAX && rx->outcome != RTS_RX_GLOBAL_LIMIT) {
        stats->flow_frames[rx->flow]++;
        if (rx->outcome == RTS_RX_QUEUED) stats->flow_queued[rx->flow]++;
    }
    if (rx->recycled_flow < RTS_FLOW_MAX) stats->flow_recycled[rx->recycled_flow]++;
}

/* ------------------------------------------------ the NIC's side (hw) */

uint8_t *rts_nic_hw_slot(uint16_t *slot)
{
    return ring_peek(&posted, slot) ? slot_mem[*slot] : NULL;
}

void rts_nic_hw_filled(uint16_t slot, uint16_t len)
{
    stats->nic_frames++;
    ring_drop_head(&posted);
    slot_len[slot] = len;
    (void)ring_push(&filled, slot);
}

void rts_nic_hw_count_isr(uint64_t copy_ns, uint32_t frames, uint32_t words, uint64_t isr_ns)
{
    stats->nic_copy_ns += copy_ns;
    stats->nic_copy_frames += frames;
    stats->nic_copy_words += words;
    stats->nic_isr_ns += isr_ns;
    stats->nic_isr_runs++;
}

void rts_nic_hw_ring_full(void)
{
    stats->nic_frames++;
    stats->nic_ring_full++;
}

const rts_nic_cfg *rts_nic_hw_cfg(void)
{
    return cfg;
}
