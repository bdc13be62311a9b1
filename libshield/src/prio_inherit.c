/* Priority inheritance of the network task (Behnke et al. §5.4). */
#include "rtshield/rts_prio_inherit.h"

#include "rts_bits.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_RX_PATH

void rts_prio_inherit_init(rts_prio_inherit *pi, unsigned base)
{
    if (base >= RTS_FLOW_PRIO_LEVELS) base = RTS_FLOW_PRIO_LEVELS - 1u;
    pi->base = (uint8_t)base;
    pi->current = (uint8_t)base;
    pi->pad = 0u;
    pi->inproc_mask = 0u;
    for (unsigned l = 0; l < RTS_FLOW_PRIO_LEVELS; l++) pi->inproc[l] = 0u;
    pi->raises = 0u;
    pi->lowers = 0u;
}

rts_prio_inherit_change rts_prio_inherit_on_enqueue_isr(rts_prio_inherit *pi, unsigned prio)
{
    if (prio >= RTS_FLOW_PRIO_LEVELS || prio <= pi->current) {
        return RTS_PRIO_INHERIT_UNCHANGED;
    }
    pi->current = (uint8_t)prio;
    pi->raises++;
    return RTS_PRIO_INHERIT_RAISED;
}

rts_err rts_prio_inherit_on_start(rts_prio_inherit *pi, unsigned prio)
{
    if (prio >= RTS_FLOW_PRIO_LEVELS) return RTS_EINVAL;
    if (pi->inproc[prio] == 0xFFFFu) return RTS_EFULL;
    pi->inproc[prio]++;
    pi->inproc_mask |= 1u << prio;
    return RTS_OK;
}

rts_prio_inherit_change rts_prio_inherit_recompute(rts_prio_inherit *pi, int highest_waiting)
{
    unsigned target = pi->base;
    if (highest_waiting >= 0 && (unsigned)highest_waiting < RTS_FLOW_PRIO_LEVELS &&
        (unsigned)highest_waiting > target) {
        target = (unsigned)highest_waiting;
    }
    if (pi->inproc_mask != 0u) {
        const unsigned e = rts_bits_msb32(pi->inproc_mask);
        if (e > target) target = e;
    }
    if (target == pi->current) return RTS_PRIO_INHERIT_UNCHANGED;
    const rts_prio_inherit_change c = target < pi->current ? RTS_PRIO_INHERIT_LOWERED : RTS_PRIO_INHERIT_RAISED;
    pi->current = (uint8_t)target;
    if (c == RTS_PRIO_INHERIT_LOWERED) {
        pi->lowers++;
    } else {
        pi->raises++;
    }
    return c;
}

rts_prio_inherit_change rts_prio_inherit_on_complete(rts_prio_inherit *pi, unsigned prio, int highest_waiting)
{
    if (prio < RTS_FLOW_PRIO_LEVELS && pi->inproc[prio] > 0u) {
        pi->inproc[prio]--;
        if (pi->inproc[prio] == 0u) pi->inproc_mask &= ~(1u << prio);
    }
    return rts_prio_inherit_recompute(pi, highest_waiting);
}

unsigned rts_prio_inherit_current(const rts_prio_inherit *pi)
{
    return pi->current;
}

#else /* RTS_CONFIG_RX_PATH == 0: compiled out (rts_opts.h) */
typedef int rts_prio_inherit_compiled_out; /* ISO C: a translation unit declares something */
#endif
