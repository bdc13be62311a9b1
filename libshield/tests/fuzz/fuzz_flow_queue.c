/* libFuzzer target: the flow-queue API driven by arbitrary operation
 * sequences. After every operation the buffer-conservation invariant
 * (rts_flow_queue_check) must hold and the per-state counts must add up; a state
 * error must leave everything unchanged. Then the same bytes drive the
 * receive driver (eager/deferred halves) with the same invariant, the short
 * circuit on or off: path (c) never recycles the packet just queued, and
 * with the short circuit on only a buffer of strictly lower priority. Last,
 * the same bytes drive the shield's entry points that own the driver
 * (rts_shield_rx_frame_isr() with frames or descriptors, task next/done)
 * while flow priorities change at run time (setsockopt), with the same
 * invariants plus the shield's drop counters. */
#include <stdlib.h>
#include <string.h>

#include "rtshield/rts_rx_driver.h"
#include "rtshield/rts_shield.h"
#include "rts_frames.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rts_flow_queue fq;
static rts_rx_driver rx;

static void must(int cond)
{
    if (!cond) abort();
}

static void check_fq(const rts_flow_queue *q)
{
    must(rts_flow_queue_check(q) == RTS_OK);
    unsigned total = 0;
    for (unsigned s = 0; s < 5u; s++) total += rts_flow_queue_count(q, s);
    must(total == q->nbufs);
}

static void run_queue(const uint8_t *data, size_t size)
{
    if (size < 3) return;
    const unsigned nbufs = 1u + data[0] % 64u;
    const unsigned ring = 1u + data[1] % nbufs;
    const unsigned thr = data[2] % (ring + 1u);
    must(rts_flow_queue_init(&fq, nbufs, ring, thr) == RTS_OK);
    for (size_t i = 3; i + 2 < size; i += 3) {
        const uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
        const unsigned buf = a % (nbufs + 2u);
        uint16_t out;
        uint8_t fl, pr;
        rts_flow_queue before;
        memcpy(&before, &fq, sizeof before);
        rts_err e = RTS_OK;
        switch (op % 9u) {
        case 0: e = rts_flow_queue_rx_take_isr(&fq, buf); break;
        case 1: e = rts_flow_queue_push_isr(&fq, buf, b % (RTS_FLOW_MAX + 1u), (b >> 3) % (RTS_FLOW_PRIO_LEVELS + 1u), 1u + op / 9u); break;
        case 2: e = rts_flow_queue_repost_isr(&fq, buf); break;
        case 3: e = rts_flow_queue_recycle_lowest_isr(&fq, &out, &fl); break;
        case 4:
            e = rts_flow_queue_pop_highest(&fq, &out, &fl, &pr);
            if (e == RTS_OK) must((int)pr >= rts_flow_queue_highest_prio(&fq));
            break;
        case 5: e = rts_flow_queue_refill(&fq, &out); break;
        case 6: e = rts_flow_queue_release(&fq, buf); break;
        case 7: e = rts_flow_queue_set_threshold(&fq, b); break;
        default: {
            const int hi = rts_flow_queue_highest_prio(&fq), lo = rts_flow_queue_lowest_prio(&fq);
            must((hi < 0) == (lo < 0) && hi >= lo);
            break;
        }
        }
        if (e != RTS_OK) must(memcmp(&before, &fq, sizeof before) == 0);
        check_fq(&fq);
    }
}

static void run_driver(const uint8_t *data, size_t size)
{
    if (size < 4) return;
    const unsigned nbufs = 2u + data[0] % 48u;
    const unsigned ring = 1u + data[1] % nbufs;
    if (rts_rx_driver_init(&rx, NULL, nbufs, ring, data[2] % RTS_FLOW_PRIO_LEVELS, data[3] % 8u, 100000u, 0) != RTS_OK) {
        abort();
    }
    rx.short_circuit = (uint8_t)((data[3] >> 3) & 1u);
    uint8_t id;
    (void)rts_flow_table_bind(&rx.flows, RTS_PROTO_UDP, 502, 0, &id);
    (void)rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_PRIORITY, 9, 0);
    (void)rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_CAPACITY, 2, 0);
    (void)rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_PERIOD_NS, 50000, 0);
    rts_time_ns now = 0;
    for (size_t i = 4; i + 2 < size; i += 3) {
        const uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
        now += (rts_time_ns)b * 1000u;
        rts_rx_result r;
        rts_rx_job job;
        uint16_t out;
        switch (op % 6u) {
        case 0:
        case 1: {
            const unsigned buf = a % (nbufs + 1u);
            if (rts_rx_driver_eager_desc_isr(&rx, buf, b % (RTS_FLOW_MAX + 2u), op % 40u, now, &r) == RTS_OK &&
                r.outcome != RTS_RX_GLOBAL_LIMIT) {
                must(r.repost == RTS_BUF_NONE || rx.fq.state[r.repost] == RTS_BUF_RING);
                must(rts_prio_inherit_current(&rx.pi) >= (unsigned)(rts_flow_queue_highest_prio(&rx.fq) < 0 ? 0 : rts_flow_queue_highest_prio(&rx.fq)));
                if (r.recycled_flow != RTS_FLOW_NONE) {
                    /* The victim's flow keeps the level its buffers were filed at. */
                    const unsigned level = rx.fq.q[r.recycled_flow].level;
                    must(r.outcome == RTS_RX_QUEUED && r.repost != buf && rx.fq.state[buf] == RTS_BUF_QUEUED);
                    must(rx.short_circuit ? level < r.prio : level <= r.prio);
                }
            }
            break;
        }
        case 2:
            if (rts_rx_driver_task_next(&rx, &job, NULL) == RTS_OK) must(rx.fq.state[job.buf] == RTS_BUF_TASK);
            break;
        case 3: (void)rts_rx_driver_task_refill(&rx, &out); break;
        case 4:
            (void)rts_rx_driver_task_complete(&rx, b % RTS_FLOW_PRIO_LEVELS);
            (void)rts_rx_driver_buf_free(&rx, a % (nbufs + 1u));
            break;
        default:
            if (rts_rx_driver_poll_begin(&rx, now) > 0) (void)rts_rx_driver_poll_end(&rx, now);
            break;
        }
        check_fq(&rx.fq);
        must(rts_flow_queue_count(&rx.fq, RTS_BUF_ISR) == 0);
    }
}

static rts_shield sh;

static void run_shield(const uint8_t *data, size_t size)
{
    if (size < 4) return;
    rts_shield_cfg cfg;
    rts_shield_dec dec;
    rts_shield_cfg_default(&cfg);
    cfg.protections = RTS_SHIELD_RX_PATH;
    cfg.nbufs = 2u + data[0] % 48u;
    cfg.ring_size = 1u + data[1] % cfg.nbufs;
    cfg.task_base_prio = data[2] % RTS_FLOW_PRIO_LEVELS;
    cfg.short_circuit = (data[3] >> 3) & 1u;
    cfg.recycle_threshold = (data[3] & 0x80u) ? data[2] % (cfg.ring_size + 1u) : RTS_SHIELD_THRESHOLD_DEFAULT;
    must(rts_shield_init(&sh, &cfg, 0u, &dec) == RTS_OK);
    uint8_t frames[3][64];
    size_t flen[3];
    for (unsigned u = 0; u < 3u; u++) {
        rts_shield_flow f = {RTS_PROTO_UDP, 502u + u, 0u, u * 7u, 0u, 0u, 0u};
        uint8_t id;
        must(rts_shield_bind(&sh, &f, 0u, &id) == RTS_OK);
        flen[u] = rts_fr_udp(frames[u], 0x0A000002u, (uint16_t)(502u + u), 8u);
    }
    rts_time_ns now = 0;
    uint64_t not_queued = 0;
    for (size_t i = 4; i + 2 < size; i += 3) {
        const uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
        now += (rts_time_ns)b * 1000u;
        switch (op % 5u) {
        case 0:
        case 1: {
            rts_shield_rx rx;
            const unsigned buf = a % (cfg.nbufs + 1u);
            const bool frame = op & 0x10u;
            const rts_err e = rts_shield_rx_frame_isr(&sh, buf, frame ? frames[b % 3u] : NULL, frame ? flen[b % 3u] : 0u,
                                                      b % (RTS_FLOW_MAX + 2u), op % 40u, now, now, &rx, &dec);
            if (e != RTS_OK) break;
            if (rx.outcome != RTS_RX_QUEUED) not_queued++;
            if (rx.recycled_flow != RTS_FLOW_NONE) {
                const unsigned level = sh.rx.fq.q[rx.recycled_flow].level;
                must(rx.outcome == RTS_RX_QUEUED && rx.repost != buf && sh.rx.fq.state[buf] == RTS_BUF_QUEUED);
                must(sh.rx.fq.state[rx.repost] == RTS_BUF_RING);
                must(cfg.short_circuit ? level < rx.prio : level <= rx.prio);
            }
            break;
        }
        case 2: /* setsockopt(priority) at run time, special flows too */
            (void)rts_flow_table_setopt(&sh.rx.flows, a % (RTS_FLOW_FIRST_USER + 3u), RTS_FLOWOPT_PRIORITY,
                                  b % (RTS_FLOW_PRIO_LEVELS + 1u), now);
            break;
        case 3: {
            rts_rx_job job;
            if (rts_shield_task_next(&sh, &job, &dec) == RTS_OK) {
                uint16_t refill;
                must(sh.rx.fq.state[job.buf] == RTS_BUF_TASK);
                must(rts_shield_task_done(&sh, &job, now, 1000u, 0u, &refill, &dec) == RTS_OK);
                must(refill == RTS_BUF_NONE || sh.rx.fq.state[refill] == RTS_BUF_RING);
            }
            break;
        }
        default:
            (void)rts_flow_queue_set_threshold(&sh.rx.fq, a % (cfg.ring_size + 2u));
            break;
        }
        check_fq(&sh.rx.fq);
        must(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_ISR) == 0);
        must(rts_prio_inherit_current(&sh.rx.pi) >= (unsigned)(rts_flow_queue_highest_prio(&sh.rx.fq) < 0 ? 0 : rts_flow_queue_highest_prio(&sh.rx.fq)));
        uint64_t drops = 0;
        for (unsigned d = 0; d < RTS_SHIELD_DROP_REASONS; d++) drops += sh.drops[d];
        must(drops == not_queued);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_queue(data, size);
    run_driver(data, size);
    run_shield(data, size);
    return 0;
}
