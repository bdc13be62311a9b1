/* Fuzz target: the input is a script of hook calls (one byte of event, one
 * to eight bytes of time step or argument) driving every Danicki mitigation,
 * the detection monitors and a deferrable server. Invariants are checked
 * after every call; a violation traps. Build with -DRTS_BUILD_FUZZ=ON. */
#include <stddef.h>
#include <stdint.h>

#include "rtshield/rts_budget_mit.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_detect.h"
#include "rtshield/rts_dserver.h"
#include "rtshield/rts_hyst_mit.h"
#include "rtshield/rts_queue_mit.h"

#define REQUIRE(c) \
    do {           \
        if (!(c)) __builtin_trap(); \
    } while (0)

typedef struct {
    const uint8_t *p;
    size_t n;
} reader;

static uint64_t take(reader *r, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && r->n > 0; i++, r->p++, r->n--) {
        v = (v << 8) | *r->p;
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    const uint32_t cap = (uint32_t)(take(&r, 1) % 8u) + 1u;
    const rts_time_ns slice = take(&r, 2) + 1u;

    rts_burst_mit burst;
    const rts_burst_mit_cfg bcfg = {.slice_ns = slice, .capacity = cap, .aligned = (cap & 1u) != 0u};
    REQUIRE(rts_burst_mit_init(&burst, &bcfg) == RTS_OK);
    bool burst_line = true;
    rts_time_ns burst_slice = UINT64_MAX;
    uint32_t burst_in_slice = 0;

    rts_hyst_mit hyst;
    rts_hyst_mit_cfg hcfg;
    REQUIRE(rts_hyst_mit_cfg_permille(&hcfg, 10000, 100, 500, 7) == RTS_OK);
    REQUIRE(rts_hyst_mit_init(&hyst, &hcfg) == RTS_OK);

    rts_budget_mit budget;
    rts_budget_mit_cfg ucfg;
    rts_budget_mit_cfg_default(&ucfg);
    ucfg.charge_isr = (cap & 2u) != 0u;
    ucfg.carry_overdraft = (cap & 4u) != 0u;
    ucfg.initial_budget_ns = (int64_t)(slice % 5000u);
    REQUIRE(rts_budget_mit_init(&budget, &ucfg) == RTS_OK);

    rts_queue_mit qm;
    REQUIRE(rts_queue_mit_init(&qm) == RTS_OK);
    uint32_t fill = 0;
    bool q_line = true;

    rts_detect_lateness_mon mon;
    REQUIRE(rts_detect_lateness_mon_init(&mon) == RTS_OK);
    rts_detect_irq_count ic;
    REQUIRE(rts_detect_irq_count_init(&ic, slice, cap, 0) == RTS_OK);
    rts_detect_fill_wm wm;
    REQUIRE(rts_detect_fill_wm_init(&wm, cap + 1u, cap / 2u) == RTS_OK);
    rts_dserver ds;
    REQUIRE(rts_dserver_init(&ds, cap, slice, 0) == RTS_OK);

    rts_time_ns now = 0;
    while (r.n > 0) {
        const uint8_t ev = (uint8_t)take(&r, 1);
        const uint64_t arg = take(&r, (size_t)(ev >> 5) + 1u);
        switch (ev & 7u) {
        case 0: /* time passes (up to 2^62 ns, 146 years: at the saturated end
                 * of time no next slice can start, which is not a bug) */
            now += arg % ((UINT64_C(1) << 62) - now + 1u);
            break;
        case 1: { /* an RX interrupt */
            if (burst_line) {
                rts_action a = rts_burst_mit_on_rx_isr(&burst, now);
                REQUIRE((a.flags & RTS_ACT_DROP) == 0u);
                if (burst.slice_start != burst_slice) {
                    burst_slice = burst.slice_start;
                    burst_in_slice = 0;
                }
                burst_in_slice++;
                REQUIRE(burst_in_slice <= cap && burst.count <= cap);
                if (a.flags & RTS_ACT_DISABLE_LINE) {
                    REQUIRE(a.flags & RTS_ACT_ARM_TIMER);
                    REQUIRE(a.timer_at > now || a.timer_at == UINT64_MAX || burst.slice_start > now);
                    burst_line = false;
                }
            }
            rts_detect_irq_count_on_irq_isr(&ic, now);
            REQUIRE(ic.count <= ic.total);
            if (q_line) {
                if (fill < cap) {
                    fill++;
                } else {
                    rts_action a = rts_queue_mit_on_enqueue_fail_isr(&qm, now);
                    REQUIRE(a.flags == (RTS_ACT_DROP | RTS_ACT_DISABLE_LINE));
                    q_line = false;
                }
                rts_detect_fill_wm_update(&wm, fill);
            }
            rts_budget_mit_on_isr_work_isr(&budget, now, arg);
            break;
        }
        case 2: { /* burst timer or tick */
            const bool was_off = burst.line_off;
            rts_action a = rts_burst_mit_on_timer_isr(&burst, now);
            if (a.flags & RTS_ACT_ENABLE_LINE) {
                REQUIRE(was_off && now >= burst.reenable_at);
                burst_line = true;
            }
            REQUIRE(burst.line_off == !burst_line);
            break;
        }
        case 3: { /* driver: one packet */
            rts_driver_poll hp = rts_hyst_mit_driver_poll(&hyst, now);
            REQUIRE(hp.run == !hyst.blocked);
            REQUIRE(hp.run || hp.sleep_ns == 7u);
            rts_driver_poll bp = rts_budget_mit_driver_poll(&budget, now);
            REQUIRE(bp.run == !budget.suspended);
            if (fill > 0u) {
                fill--;
                rts_budget_mit_on_packet_done(&budget, now, arg, fill);
                rts_action a = rts_queue_mit_on_packet_done(&qm, now, arg, fill);
                if (a.flags & RTS_ACT_ENABLE_LINE) {
                    REQUIRE(!q_line && fill == 0u);
                    q_line = true;
                }
                rts_detect_fill_wm_update(&wm, fill);
            }
            break;
        }
        case 4: { /* critical task cycle end */
            const rts_time_ns start = now > arg ? now - arg : 0;
            rts_detect_cycle_result c = rts_detect_lateness_mon_cycle(&mon, start, start + 10000u, now);
            REQUIRE(c.miss == (c.earliness_ns < 0));
            REQUIRE(c.miss == (c.lateness_ppm > 0u) || (c.miss && now - start - 10000u < 1u));
            rts_hyst_mit_on_cycle_end(&hyst, now, c.earliness_ns);
            rts_action a = rts_budget_mit_on_cycle_end(&budget, now, c.earliness_ns);
            if (a.flags & RTS_ACT_RESUME_DRIVER) {
                REQUIRE(budget.budget_ns > 0);
            }
            break;
        }
        case 5: /* bin */
            REQUIRE(rts_detect_lateness_mon_take_bin(&mon, NULL) == RTS_OK);
            REQUIRE(mon.bin.cycles == 0u);
            break;
        case 6: { /* server */
            const uint64_t before = rts_dserver_remaining(&ds, now);
            REQUIRE(before <= ds.budget);
            const bool ok = rts_dserver_can_serve(&ds, now, arg % 16u);
            const rts_err e = rts_dserver_consume(&ds, now, arg % 16u);
            REQUIRE(ok == (e == RTS_OK));
            REQUIRE(ds.remaining <= before);
            REQUIRE(ds.period_start <= now || now < ds.period_start);
            break;
        }
        default: { /* demand bound is monotone in delta and at least e for delta > 0 */
            const uint64_t d1 = rts_dserver_dbf(cap, slice, arg);
            const uint64_t d2 = rts_dserver_dbf(cap, slice, arg + 1u);
            REQUIRE(arg == UINT64_MAX || d1 <= d2);
            REQUIRE(arg == 0u || d1 >= 2u * cap);
            break;
        }
        }
        /* cross-cutting invariants */
        REQUIRE(budget.suspended || budget.budget_ns > 0);
        REQUIRE(qm.disables == qm.enables || qm.disables == qm.enables + 1u);
        REQUIRE(qm.line_off == !q_line);
        REQUIRE(wm.overload == false || wm.episodes > 0u);
    }
    return 0;
}
