/* Strict limiter (Regehr & Duongsaa §3.2): tables of (time, event) ->
 * expected action and counters (vectors/strict.toml). */
#include "rts_test.h"
#include "rts_test_host.h"
#include "rtshield/rts_strict.h"

enum { IRQ, TIMER };

typedef struct {
    RTS_ACTION_ROW;
    uint32_t admitted, expiries, port_errors;
} strict_row;

static void step(rts_strict *s, const strict_row *r)
{
    rts_action a =
        r->ev == IRQ ? rts_strict_on_irq_isr(s, r->now) : rts_strict_on_timer_isr(s, r->now);
    CHECK_ACTION(a, r);
    CHECK_EQ(s->admitted, r->admitted);
    CHECK_EQ(s->expiries, r->expiries);
    CHECK_EQ(s->port_errors, r->port_errors);
}

typedef struct {
    RTS_VECTOR_TABLE(strict_row, rts_strict);
    rts_time_ns t_min;
} strict_table;

#include "vectors_strict.h"

/* A fresh limiter with the table's t_min, then its rows. */
static void run(const strict_table *t)
{
    rts_strict s;
    CHECK_EQ(rts_strict_init(&s, t->t_min), RTS_OK);
    RTS_RUN_VECTORS(&s, t, step);
}

static void test_set_t_min(void)
{
    rts_strict s;
    CHECK_EQ(rts_strict_init(&s, 0), RTS_EINVAL);
    CHECK_EQ(rts_strict_init(NULL, 10), RTS_EINVAL);
    rts_strict_init(&s, 1000);
    rts_action a = rts_strict_on_irq_isr(&s, 0);
    CHECK_EQ(a.timer_at, 1000);
    /* Changed while armed: the armed expiry stays, the next admission uses it. */
    CHECK_EQ(rts_strict_set_t_min(&s, 300), RTS_OK);
    CHECK_EQ(rts_strict_set_t_min(&s, 0), RTS_EINVAL);
    CHECK_EQ(s.t_min_ns, 300);
    CHECK_EQ(rts_strict_on_timer_isr(&s, 999).timer_at, 1000);
    CHECK_EQ(rts_strict_on_timer_isr(&s, 1000).flags, RTS_ACT_ENABLE_LINE);
    CHECK_EQ(rts_strict_on_irq_isr(&s, 1200).timer_at, 1500);
}

/* Through the port and the irq gate: a host that models the line's enable
 * and pending bits. Arrivals on a disabled line set the pending bit once
 * (further ones are lost); the pending interrupt fires when re-enabled. */
static void test_through_port(void)
{
    rts_test_host h;
    rts_test_host_init(&h, 2);
    const rts_port_target tgt = {.line = 2, .timer = 0, .timer_line = 8};
    rts_strict s;
    rts_strict_init(&s, 1000);

    /* arrivals every 300 ns from 0 to 3000: admitted at 0, then the pending
     * one fires at each expiry: 1000, 2000, 3000. */
    uint32_t handled = 0, lost = 0;
    rts_time_ns handled_at[8] = {0};
    for (rts_time_ns t = 0; t <= 3000; t += 100) {
        if (h.hw.timer_armed[0] && h.hw.timer_at[0] <= t) {
            h.hw.timer_armed[0] = false;
            rts_test_host_apply(&h, tgt, rts_strict_on_timer_isr(&s, h.hw.timer_at[0]));
            if (h.hw.enabled[2] && h.hw.pending[2]) {
                h.hw.pending[2] = false;
                if (rts_test_host_apply(&h, tgt, rts_strict_on_irq_isr(&s, t)) & RTS_ACT_DELIVER) {
                    handled_at[handled < 8 ? handled : 7] = t;
                    handled++;
                }
            }
        }
        if (t % 300 == 0) {
            if (!h.hw.enabled[2]) {
                if (h.hw.pending[2]) lost++;
                h.hw.pending[2] = true;
            } else if (rts_test_host_apply(&h, tgt, rts_strict_on_irq_isr(&s, t)) & RTS_ACT_DELIVER) {
                handled_at[handled < 8 ? handled : 7] = t;
                handled++;
            }
        }
    }
    CHECK_EQ(handled, 4);
    CHECK_EQ(handled_at[0], 0);
    CHECK_EQ(handled_at[1], 1000);
    CHECK_EQ(handled_at[2], 2000);
    CHECK_EQ(handled_at[3], 3000);
    /* 11 arrivals: 4 handled (0, and the pended 300, 1200, 2100 at the
     * expiries), 3000 still pending, 6 lost on a pending bit already set. */
    CHECK_EQ(lost, 6);
    CHECK(h.hw.pending[2]);
    CHECK_EQ(s.port_errors, 0);
    CHECK(!h.hw.enabled[2]);
    CHECK(h.hw.timer_armed[0]);
    CHECK_EQ(h.hw.timer_at[0], 4000);
    /* The application masks the line; the expiry must not unmask it. */
    rts_irq_gate_app_set(&h.gate, 2, false);
    rts_test_host_apply(&h, tgt, rts_strict_on_timer_isr(&s, 4000));
    CHECK(!h.hw.enabled[2]);
    CHECK(!rts_irq_gate_enabled(&h.gate, 2));
}

int main(void)
{
    RTS_RUN_TABLE(run, vec_strict_sequence);
    RTS_RUN_TABLE(run, vec_strict_exactly_t_min);
    RTS_RUN_TABLE(run, vec_strict_port_errors);
    RTS_RUN(test_set_t_min);
    RTS_RUN(test_through_port);
    return rts_test_end();
}
