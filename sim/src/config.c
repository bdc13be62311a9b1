/* The configuration's checks (rtsim_config_error()): what the device model
 * needs of an rtsim_config, each refusal naming the scenario key at fault.
 * libshield's own rules (the protections, the receive path, the sockets)
 * are checked by libshield itself, through the hooks (hook_config_error()). */
#include "hooks.h"
#include "nic.h"

#include <math.h>
#include <string.h>

const char *rtsim_config_error(const rtsim_config *cfg)
{
    if (cfg == NULL) return "config: NULL";
    if (cfg->duration_ns == 0) return "duration: must be positive";
    if (cfg->bin_ns == 0) return "bin: must be positive";
    if (cfg->duration_ns / cfg->bin_ns > (uint64_t)1 << 32)
        return "bin: too many bins for the duration";
    if (cfg->n_cores < 1 || cfg->n_cores > RTSIM_MAX_CORES) return "cores: must be 1..4";
    /* The array counts first: every later check reads tasks[] and flows[]. */
    if (cfg->n_tasks > RTSIM_MAX_TASKS) return "tasks: at most 8";
    if (cfg->n_flows > RTSIM_MAX_FLOWS) return "flows: at most 8";
    if (cfg->tick_ns < 0) return "tick: must not be negative";
    if (cfg->nic_kind > RTSIM_NIC_MULTIQUEUE) return "nic.kind: unknown";
    if (cfg->nic_kind == RTSIM_NIC_MULTIQUEUE) {
        if (cfg->n_nic_queues < 1 || cfg->n_nic_queues > RTSIM_MAX_NIC_QUEUES)
            return "nic.queues: 1..RTS_NIC_MAX_QUEUES queues";
        for (uint32_t q = 0; q < cfg->n_nic_queues; q++) {
            const rtsim_nic_queue_cfg *n = &cfg->nic_queues[q];
            if (n->size == 0 || n->size > 65535) return "nic.queues.size: 1..65535 descriptors";
            if (n->t_abs_ns < 0 || n->t_pack_ns < 0) return "nic.queues: timers must not be negative";
            /* rts_nic_moderation_queue_add(): a frame threshold beyond the queue never triggers. */
            if (n->frames > n->size) return "nic.queues.frames: at most the queue's size";
        }
        uint32_t entries = 0;
        for (uint32_t i = 0; i < cfg->n_flows; i++) {
            const rtsim_flow_cfg *f = &cfg->flows[i];
            if (f->nic_queue == RTSIM_NIC_UNMAPPED) continue;
            if (f->nic_queue >= cfg->n_nic_queues) return "flows.nic_queue: no such queue";
            /* The distribution map's key (rts_nic_moderation_map_add()): a TCP or UDP port 1..65535. */
            if ((f->proto == RTSIM_PROTO_TCP || f->proto == RTSIM_PROTO_UDP) &&
                (f->dst_port == 0 || f->dst_port > 65535))
                return "flows.dst_port: 1..65535 for a flow mapped to a NIC queue";
            bool dup = false;
            for (uint32_t j = 0; j < i; j++) {
                const rtsim_flow_cfg *g = &cfg->flows[j];
                if (g->nic_queue == RTSIM_NIC_UNMAPPED || nic_proto(g) != nic_proto(f) ||
                    nic_port(g) != nic_port(f))
                    continue;
                if (g->nic_queue != f->nic_queue)
                    return "flows.nic_queue: one (protocol, port) maps to one queue";
                dup = true;
            }
            if (!dup) entries++;
        }
        if (entries > RTS_NIC_MAP_MAX) return "flows.nic_queue: more map entries than RTS_NIC_MAP_MAX";
    } else {
        for (uint32_t i = 0; i < cfg->n_flows; i++)
            if (cfg->flows[i].nic_queue != 0 && cfg->flows[i].nic_queue != RTSIM_NIC_UNMAPPED)
                return "flows.nic_queue: only with the multiqueue NIC";
    }
    if (cfg->nic_core >= cfg->n_cores) return "nic.core: no such core";
    if (cfg->nic_kind == RTSIM_NIC_DMA_RING && cfg->ring == 0) return "nic.ring: must be positive";
    if (cfg->rx_on_tick > 1) return "nic.interrupt: unknown";
    if (cfg->rx_on_tick && (cfg->nic_kind != RTSIM_NIC_DMA_RING || cfg->tick_ns <= 0))
        return "nic.interrupt: \"tick\" needs nic.kind = dma_ring and a tick";
    if (cfg->queue_capacity == 0) return "driver.queue: must be positive";
    if (cfg->n_sources > RTSIM_MAX_SOURCES) return "sources: at most 4";
    if (cfg->n_sources > 1 && cfg->nic_kind != RTSIM_NIC_EDGE)
        return "sources: several only with the edge NIC";
    for (uint32_t k = 0; k < cfg->n_sources; k++)
        if (cfg->sources[k].isr_per_packet_ns < 0 || cfg->sources[k].min_interarrival_ns < 0)
            return "sources: costs and intervals must not be negative";
    const rtsim_costs *k = &cfg->costs;
    if (k->isr_entry_exit_ns < 0 || k->isr_per_packet_ns < 0 || k->driver_per_packet_ns <= 0 ||
        k->isr_rx_batch_ns < 0 || k->isr_queue_full_ns < 0 || k->driver_wake_ns < 0 ||
        k->driver_wake_input_ns < 0 || k->input_resume_ns < 0 ||
        k->driver_handover_ns < 0 ||
        k->tick_isr_ns < 0 || k->timer_isr_ns < 0 || k->mitig_isr_ns < 0 ||
        k->mitig_driver_ns < 0 || k->mitig_report_ns < 0 || k->mitig_poll_ns < 0)
        return "costs: must not be negative (driver_per_packet: positive)";
    /* rtsim_costs holds int64_t fields only: every one of them is a cost. */
    _Static_assert(sizeof(rtsim_costs) % sizeof(int64_t) == 0, "rtsim_costs: int64_t fields only");
    const int64_t cost_max = (int64_t)RTSIM_COST_MAX_S * 1000000000;
    for (size_t i = 0; i < sizeof *k / sizeof(int64_t); i++) {
        int64_t v;
        memcpy(&v, (const char *)k + i * sizeof v, sizeof v);
        if (v > cost_max) return "costs: at most RTSIM_COST_MAX_S (60 s) each";
        if (v < 0) return "costs: must not be negative (driver_per_packet: positive)";
    }
    for (uint32_t i = 0; i < cfg->n_sources; i++)
        if (cfg->sources[i].isr_per_packet_ns > cost_max)
            return "sources: isr_work at most RTSIM_COST_MAX_S (60 s)";
    if (cfg->n_flows > 0 && cfg->n_sources == 0 && k->isr_entry_exit_ns + k->isr_per_packet_ns <= 0)
        return "costs: an RX interrupt must cost CPU time";
    for (uint32_t i = 0; i < cfg->n_sources; i++)
        if (k->isr_entry_exit_ns + cfg->sources[i].isr_per_packet_ns <= 0)
            return "sources: an RX interrupt must cost CPU time";
    int drivers = 0, criticals = 0, inputs = 0;
    for (uint32_t i = 0; i < cfg->n_tasks; i++) {
        const rtsim_task_cfg *t = &cfg->tasks[i];
        if (t->core >= cfg->n_cores) return "tasks.core: no such core";
        if (t->kind > RTSIM_TASK_INPUT) return "tasks.kind: unknown";
        if (t->kind == RTSIM_TASK_WORKER) {
            if (t->flow >= cfg->n_flows) return "tasks.flow: no such flow";
            if (t->mailbox == 0)
                return "tasks.queue: a worker's mailbox must hold at least one message";
            if (t->work_ns <= 0) return "tasks.work: must be positive";
            for (uint32_t j = 0; j < i; j++)
                if (cfg->tasks[j].kind == RTSIM_TASK_WORKER && cfg->tasks[j].flow == t->flow)
                    return "tasks.flow: one worker per flow";
        }
        if (t->kind == RTSIM_TASK_PERIODIC) {
            if (t->period_ns <= 0) return "tasks.period: must be positive";
            if (t->work_ns <= 0) return "tasks.work: must be positive";
            if (t->offset_ns < 0) return "tasks.offset: must not be negative";
            if (t->critical) criticals++;
        }
        if (t->kind == RTSIM_TASK_DRIVER) drivers++;
        if (t->kind == RTSIM_TASK_INPUT) inputs++;
    }
    if (drivers > 1) return "tasks: at most one driver";
    if (inputs > 1) return "tasks: at most one input task";
    if (inputs > 0 && (drivers == 0 || cfg->rx.enabled || cfg->nic_kind != RTSIM_NIC_DMA_RING ||
                       cfg->n_sources > 0 || cfg->mitigation.kind != RTSIM_MIT_NONE ||
                       cfg->mitigation.also != 0))
        return "driver.input_priority: an input task needs a driver, a dma_ring NIC, and no "
               "[rx], [[sources]] or [mitigation]";
    if (inputs > 0 && cfg->costs.isr_per_packet_ns <= 0)
        return "costs.isr_per_packet: must be positive with an input task (its work per frame)";
    if (criticals > 1) return "tasks: at most one critical task";
    bool needs_driver = false; /* a flow whose source hands packets to the driver */
    for (uint32_t i = 0; i < cfg->n_flows; i++) {
        uint32_t src = cfg->flows[i].source;
        if (cfg->n_sources == 0 || src >= RTSIM_MAX_SOURCES || !cfg->sources[src].isr_only)
            needs_driver = true;
    }
    if (needs_driver && drivers == 0) return "driver: traffic needs a driver task";
    for (uint32_t i = 0; i < cfg->n_flows; i++) {
        const rtsim_flow_cfg *f = &cfg->flows[i];
        if (f->pattern > RTSIM_PAT_TRACE) return "flows.pattern: unknown";
        if (f->proto > RTSIM_PROTO_RAW) return "flows.protocol: unknown";
        if (f->trace_period_ns < 0) return "flows.trace_period: must not be negative";
        if (f->source >= (cfg->n_sources ? cfg->n_sources : 1))
            return "flows.source: no such RX source";
        if (f->pattern == RTSIM_PAT_PIECEWISE) {
            if (f->n_rates == 0 || f->n_rates > RTSIM_MAX_RATES)
                return "flows.rates: 1..64 change points";
            for (uint32_t j = 0; j < f->n_rates; j++) {
                /* NaN fails every comparison: checked on its own, as is an
                 * infinite rate (traffic.c floors it, but it is no rate). */
                if (!isfinite(f->rates_pps[j])) return "flows.rates: must be finite";
                if (f->rates_pps[j] < 0) return "flows.rates: must not be negative";
                if (j > 0 && f->rate_t_ns[j] <= f->rate_t_ns[j - 1])
                    return "flows: change points must increase";
            }
            if (f->rate_t_ns[0] < 0) return "flows: change points must not be negative";
        }
        if (!isfinite(f->rate_pps)) return "flows: rates must be finite";
        if (f->rate_pps < 0) return "flows: rates must not be negative";
        if (f->start_ns < 0) return "flows.start: must not be negative";
    }
    return hook_config_error(cfg);
}
