/* priority inheritance: the §5.4 formula, raised on enqueue only when
 * needed, lowered on completion only when needed. */
#include "rts_test.h"
#include "rtshield/rts_prio_inherit.h"

typedef enum { ENQ, START, DONE, RECOMPUTE } pi_op;

typedef struct {
    const char *name;
    pi_op op;
    unsigned prio;
    int highest_waiting; /* what the queues hold after the operation */
    rts_prio_inherit_change expect;
    unsigned current;
} pi_row;

static void test_raise_lower_sequence(void)
{
    static const pi_row rows[] = {
        {"LP packet above base 2 raises", ENQ, 3, 3, RTS_PRIO_INHERIT_RAISED, 3},
        {"same priority: no change", ENQ, 3, 3, RTS_PRIO_INHERIT_UNCHANGED, 3},
        {"lower than current: no change", ENQ, 1, 3, RTS_PRIO_INHERIT_UNCHANGED, 3},
        {"HP packet raises", ENQ, 9, 9, RTS_PRIO_INHERIT_RAISED, 9},
        {"task takes the HP packet", START, 9, 3, RTS_PRIO_INHERIT_UNCHANGED, 9},
        {"HP done; LP 3 still waiting: lowered to 3", DONE, 9, 3, RTS_PRIO_INHERIT_LOWERED, 3},
        {"task takes an LP 3 packet", START, 3, 3, RTS_PRIO_INHERIT_UNCHANGED, 3},
        {"HP arrives while LP in process", ENQ, 9, 9, RTS_PRIO_INHERIT_RAISED, 9},
        {"LP done, HP waiting: stays", DONE, 3, 9, RTS_PRIO_INHERIT_UNCHANGED, 9},
        {"take HP", START, 9, 3, RTS_PRIO_INHERIT_UNCHANGED, 9},
        {"take LP 3 too (two in process)", START, 3, 1, RTS_PRIO_INHERIT_UNCHANGED, 9},
        {"LP 3 done while HP still in process: stays", DONE, 3, 1, RTS_PRIO_INHERIT_UNCHANGED, 9},
        {"HP done: only prio 1 waiting, below base 2 -> base", DONE, 9, 1, RTS_PRIO_INHERIT_LOWERED, 2},
        {"take the prio 1 packet", START, 1, -1, RTS_PRIO_INHERIT_UNCHANGED, 2},
        {"done: nothing left, base", DONE, 1, -1, RTS_PRIO_INHERIT_UNCHANGED, 2},
        {"raise again", ENQ, 5, 5, RTS_PRIO_INHERIT_RAISED, 5},
        {"the packet was recycled: recompute lowers", RECOMPUTE, 0, -1, RTS_PRIO_INHERIT_LOWERED, 2},
        {"out-of-range enqueue ignored", ENQ, RTS_FLOW_PRIO_LEVELS, -1, RTS_PRIO_INHERIT_UNCHANGED, 2},
    };
    rts_prio_inherit pi;
    rts_prio_inherit_init(&pi, 2);
    CHECK_EQ(rts_prio_inherit_current(&pi), 2);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        ROW(rows[i].name);
        rts_prio_inherit_change c = RTS_PRIO_INHERIT_UNCHANGED;
        switch (rows[i].op) {
        case ENQ: c = rts_prio_inherit_on_enqueue_isr(&pi, rows[i].prio); break;
        case START: CHECK_EQ(rts_prio_inherit_on_start(&pi, rows[i].prio), RTS_OK); break;
        case DONE: c = rts_prio_inherit_on_complete(&pi, rows[i].prio, rows[i].highest_waiting); break;
        case RECOMPUTE: c = rts_prio_inherit_recompute(&pi, rows[i].highest_waiting); break;
        }
        CHECK_EQ(c, rows[i].expect);
        CHECK_EQ(rts_prio_inherit_current(&pi), rows[i].current);
    }
    CHECK_EQ(pi.raises, 4);
    CHECK_EQ(pi.lowers, 3);
    CHECK_EQ(rts_prio_inherit_on_start(&pi, RTS_FLOW_PRIO_LEVELS), RTS_EINVAL);
}

int main(void)
{
    RTS_RUN(test_raise_lower_sequence);
    return rts_test_end();
}
