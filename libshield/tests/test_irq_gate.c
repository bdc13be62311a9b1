/* irq gate: the line fires only when both the scheduler and the application
 * bit are set; setters report hardware-state changes exactly once. */
#include "rts_port_posix.h"
#include "rts_test.h"
#include "rtshield/rts_irq_gate.h"

typedef struct {
    const char *name;
    int owner; /* 0 = scheduler, 1 = application */
    bool on;
    rts_gate_change expect;
    bool enabled_after;
} gate_row;

static void test_both_bits_required(void)
{
    static const gate_row rows[] = {
        {"app enables (sched already set)", 1, true, RTS_GATE_ENABLED, true},
        {"app enables again", 1, true, RTS_GATE_UNCHANGED, true},
        {"limiter disables", 0, false, RTS_GATE_DISABLED, false},
        {"app disables for mutual exclusion", 1, false, RTS_GATE_UNCHANGED, false},
        {"limiter re-enables: app still holds it off", 0, true, RTS_GATE_UNCHANGED, false},
        {"app re-enables: now both set", 1, true, RTS_GATE_ENABLED, true},
        {"app disables", 1, false, RTS_GATE_DISABLED, false},
        {"limiter disables while app off", 0, false, RTS_GATE_UNCHANGED, false},
        {"app enables while limiter off", 1, true, RTS_GATE_UNCHANGED, false},
        {"limiter enables", 0, true, RTS_GATE_ENABLED, true},
    };
    rts_irq_gate g;
    rts_irq_gate_init(&g);
    CHECK(!rts_irq_gate_enabled(&g, 5));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_gate_change c = rows[i].owner == 0 ? rts_irq_gate_sched_set_isr(&g, 5, rows[i].on)
                                               : rts_irq_gate_app_set(&g, 5, rows[i].on);
        CHECK_EQ(c, rows[i].expect);
        CHECK_EQ(rts_irq_gate_enabled(&g, 5), rows[i].enabled_after);
        CHECK(!rts_irq_gate_enabled(&g, 4)); /* neighbours untouched */
        CHECK(!rts_irq_gate_enabled(&g, 6));
    }
}

static void test_bad_line(void)
{
    rts_irq_gate g;
    rts_irq_gate_init(&g);
    CHECK_EQ(rts_irq_gate_app_set(&g, RTS_IRQ_GATE_MAX_LINES, true), RTS_GATE_BAD_LINE);
    CHECK_EQ(rts_irq_gate_sched_set_isr(&g, 1000, false), RTS_GATE_BAD_LINE);
    CHECK(!rts_irq_gate_enabled(&g, RTS_IRQ_GATE_MAX_LINES));
    CHECK_EQ(g.app, 0);
}

static void test_port_apply_through_gate(void)
{
    rts_port port;
    rts_posix_port hw;
    rts_posix_port_init(&port, &hw);
    rts_irq_gate g;
    rts_irq_gate_init(&g);
    const rts_port_target tgt = {.line = 3, .timer = 1, .timer_line = 9};

    rts_irq_gate_app_set(&g, 3, false);
    /* A limiter's disable+arm while the application holds the line off:
     * no hardware enable write, timer armed. */
    rts_action a = {RTS_ACT_DISABLE_LINE | RTS_ACT_ARM_TIMER, 5000};
    CHECK_EQ(rts_port_apply(&port, &g, tgt, a), 0);
    CHECK_EQ(hw.enable_writes, 0);
    CHECK(hw.timer_armed[1]);
    CHECK_EQ(hw.timer_at[1], 5000);

    /* Timer re-enables: still no write, the application bit is clear. */
    rts_action b = {RTS_ACT_ENABLE_LINE | RTS_ACT_RESCHEDULE, 0};
    CHECK_EQ(rts_port_apply(&port, &g, tgt, b), RTS_ACT_RESCHEDULE);
    CHECK_EQ(hw.enable_writes, 0);

    /* Application enables; a limiter disable now writes the hardware bit. */
    if (rts_irq_gate_app_set(&g, 3, true) == RTS_GATE_ENABLED) {
        port.irq_set_enabled(port.ctx, 3, true);
    }
    CHECK(hw.enabled[3]);
    rts_action c = {RTS_ACT_DISABLE_LINE | RTS_ACT_CLEAR_TIMER_PENDING | RTS_ACT_ENABLE_TIMER_IRQ, 0};
    rts_port_apply(&port, &g, tgt, c);
    CHECK(!hw.enabled[3]);
    CHECK(hw.enabled[9]);
    CHECK_EQ(hw.pending_clears, 1);
}

int main(void)
{
    RTS_RUN(test_both_bits_required);
    RTS_RUN(test_bad_line);
    RTS_RUN(test_port_apply_through_gate);
    return rts_test_end();
}
