/* The mitigation adapter: each hook calls the libshield component of the
 * configured mitigation and performs its decision through the port. */
#include "mitigation.h"

#include "engine.h"

const char *mit_config_error(const rtsim_config *cfg)
{
    switch (cfg->mitigation.kind) {
    case RTSIM_MIT_NONE:
        return NULL;
    default:
        return "mitigation.kind: not available in this build";
    }
}

void mit_init(struct rtsim *s, uint64_t now)
{
    (void)now;
    s->mit.kind = s->cfg.mitigation.kind;
}

bool mit_on_rx_packet(struct rtsim *s, uint64_t now)
{
    (void)s;
    (void)now;
    return true;
}

void mit_on_enqueue_fail(struct rtsim *s, uint64_t now)
{
    (void)s;
    (void)now;
}

void mit_on_driver_packet(struct rtsim *s, uint64_t now, uint64_t work_ns)
{
    (void)s;
    (void)now;
    (void)work_ns;
}

void mit_on_queue_empty(struct rtsim *s, uint64_t now)
{
    (void)s;
    (void)now;
}

void mit_on_cycle_end(struct rtsim *s, uint64_t now, int64_t earliness_ns, uint64_t period_ns)
{
    (void)s;
    (void)now;
    (void)earliness_ns;
    (void)period_ns;
}

void mit_on_timer(struct rtsim *s, uint64_t now, unsigned timer)
{
    (void)s;
    (void)now;
    (void)timer;
}

void mit_on_poll(struct rtsim *s, uint64_t now)
{
    (void)s;
    (void)now;
}

bool mit_wants_report(const struct rtsim *s)
{
    (void)s;
    return false;
}
