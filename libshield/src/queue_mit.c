/* Queue Mitigation (Danicki et al. §2.2): a failed enqueue disables the RX
 * interrupt until the driver has emptied the queue. */
#include "rtshield/rts_queue_mit.h"
#include "rtshield/rts_opts.h"

#if RTS_CONFIG_MITIGATIONS

rts_err rts_queue_mit_init(rts_queue_mit *m)
{
    if (m == NULL) {
        return RTS_EINVAL;
    }
    *m = (rts_queue_mit){0}; /* line on, counters at 0 */
    return RTS_OK;
}

rts_action rts_queue_mit_on_enqueue_fail_isr(rts_queue_mit *m, rts_time_ns now)
{
    (void)now;
    rts_action act = {RTS_ACT_DROP, 0u};
    m->drops++;
    if (!m->line_off) {
        m->line_off = true;
        m->disables++;
        act.flags |= RTS_ACT_DISABLE_LINE;
    }
    return act;
}

rts_action rts_queue_mit_on_packet_done(rts_queue_mit *m, rts_time_ns now, rts_time_ns work_ns,
                                        uint32_t queue_fill)
{
    (void)now;
    (void)work_ns;
    rts_action act = {RTS_ACT_NONE, 0u};
    if (m->line_off && queue_fill == 0u) {
        m->line_off = false;
        m->enables++;
        act.flags = RTS_ACT_ENABLE_LINE;
    }
    return act;
}

rts_action rts_queue_mit_on_drained(rts_queue_mit *m, rts_time_ns now)
{
    return rts_queue_mit_on_packet_done(m, now, 0u, 0u);
}

#else /* RTS_CONFIG_MITIGATIONS == 0: compiled out (rts_opts.h) */
typedef int rts_queue_mit_compiled_out; /* ISO C: a translation unit declares something */
#endif
