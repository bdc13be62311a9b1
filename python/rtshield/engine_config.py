"""A :class:`~rtshield.scenario_types.Scenario` as the simulator's C configuration.

:func:`build_config` fills an ``rtsim_config`` (``sim/include/rtsim/rtsim.h``,
parsed by cffi from the header itself) and has the simulator check it
(``rtsim_config_error``); :func:`check_scenario` is that check alone, which
:func:`rtshield.scenario.load_scenario` runs before it returns a scenario, and
:func:`hand_traces` gives a created simulator the frames of its pcap flows.
:mod:`rtshield.engine` runs the configuration.

Cost keys the engine reads from the platform preset's ``[costs]`` (all
durations; a missing key is an error naming it, see docs/model.md):
``isr_entry_exit``, ``isr_per_packet``, ``driver_per_packet``,
``timer_isr``, ``mitigation_isr``, ``mitigation_driver``,
``mitigation_report``, ``mitigation_poll``; optionally ``isr_queue_full``
(the edge ISR's work for a packet that finds the driver's queue full; absent:
``isr_per_packet``); the tick's cost is the
preset's ``[platform] tick_isr``. With the receive path (``[rx]``) also
:data:`RX_COST_KEYS`: ``rx_path_regular``, ``rx_path_short_circuit``,
``rx_path_prio_raise``, ``rx_path_recycle``, ``rx_path_rejected`` (the RX
ISR's work per frame by execution path, one per name of the C enum
``rtsim_rx_path``, replacing ``isr_per_packet``),
``invalidate_eager``, ``invalidate_deferred``, ``poll_batch`` and
``poll_per_packet`` (0 without ``[rx]``).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from rtshield._native import enum_names, enum_value, load
from rtshield.errors import UsageError
from rtshield.scenario_types import Scenario
from rtshield.schema.vocabulary import DEFAULT_SRC, PATH_QUANTILE_KEYS, WORKER_MAILBOX_DEFAULT
from rtshield.units import MIN_RATE_HZ

__all__ = [
    "COST_KEYS",
    "OPTIONAL_COST_KEYS",
    "build_config",
    "check_scenario",
    "hand_traces",
    "on_ticks",
    "rx_cost_keys",
]

#: Preset cost keys → fields of the C ``rtsim_costs``.
COST_KEYS: dict[str, str] = {
    "isr_entry_exit": "isr_entry_exit_ns",
    "isr_per_packet": "isr_per_packet_ns",
    "driver_per_packet": "driver_per_packet_ns",
    "timer_isr": "timer_isr_ns",
    "mitigation_isr": "mitig_isr_ns",
    "mitigation_driver": "mitig_driver_ns",
    "mitigation_report": "mitig_report_ns",
    "mitigation_poll": "mitig_poll_ns",
}

#: Preset cost keys a preset may leave out (then 0) → fields of ``rtsim_costs``.
#: ``isr_queue_full`` at 0 means "as ``isr_per_packet``" to the engine.
OPTIONAL_COST_KEYS: dict[str, str] = {
    "isr_rx_batch": "isr_rx_batch_ns",
    "isr_queue_full": "isr_queue_full_ns",  # an edge ISR that finds the queue full
    "driver_wake": "driver_wake_ns",
    "driver_wake_input": "driver_wake_input_ns",  # with an input task; absent: driver_wake
    "input_resume": "input_resume_ns",  # the input task switched in for a frame
    "driver_handover": "driver_handover_ns",
}

#: Receive-path cost keys (``[rx]`` only) that are not per-path costs → fields of
#: ``rtsim_costs``. The per-path ones, ``rx_path_<path>`` for each name of the C enum
#: ``rtsim_rx_path`` (``path_ns[RTSIM_PATH_<PATH>]``), come from the binding:
#: :func:`rx_cost_keys` lists them all.
_RX_OTHER_COST_KEYS: dict[str, str] = {
    "invalidate_eager": "invalidate_eager_ns",
    "invalidate_deferred": "invalidate_deferred_ns",
    "poll_batch": "poll_batch_ns",
    "poll_per_packet": "poll_per_packet_ns",
}


def rx_cost_keys() -> dict[str, str]:
    """Receive-path cost keys (``[rx]`` only) → fields of ``rtsim_costs``; a per-path
    cost ``rx_path_<path>`` maps to ``path:<path>`` (``path_ns[RTSIM_PATH_<PATH>]``),
    one per name of the C enum ``rtsim_rx_path`` in its order."""
    paths = {f"rx_path_{p}": f"path:{p}" for p in enum_names("rtsim_rx_path", "RTSIM_PATH_")}
    return {**paths, **_RX_OTHER_COST_KEYS}


def on_ticks(sc: Scenario, ns: int) -> int:
    """The real length of ``ns`` that the RTOS counts in ticks (``ns / tick`` of them):
    ``ns`` itself, unless the preset's tick interrupt comes every ``tick_real``, not every
    ``tick``; then the count of ticks stays and each takes ``tick_real``. FreeRTOS's
    ``vTaskDelayUntil`` (a periodic task's period and deadline) and libshield on the tick
    count (its servers' and global limit's periods) count ticks (docs/model.md,
    "A tick that comes late")."""
    p = sc.platform
    if not ns or not p.tick_real_ns or p.tick_real_ns == p.tick_ns:
        return ns
    return round(ns * p.tick_real_ns / p.tick_ns)


def _entries(
    cfg: Any, field: str, items: Any, limit: int, where: str, table: str, noun: str
) -> list[tuple[Any, Any]]:
    """The C configuration's array ``field`` for ``items`` ([[table]]): at most ``limit``
    ``noun``, its count set; (C entry, item) pairs to fill."""
    if len(items) > limit:
        raise UsageError(f"{where}: [[{table}]]: at most {limit} {noun}")
    setattr(cfg, f"n_{field}", len(items))
    return [(getattr(cfg, field)[k], item) for k, item in enumerate(items)]


def build_config(sc: Scenario, ffi: Any, lib: Any) -> tuple[Any, list[str]]:
    """Fill an ``rtsim_config``; return it with the CPU context names of its tasks."""
    cfg = ffi.new("rtsim_config *")
    where = sc.path
    cfg.duration_ns = sc.duration_ns
    cfg.bin_ns = sc.bin_ns
    cfg.seed = sc.seed & 0xFFFFFFFFFFFFFFFF
    cfg.n_cores = sc.platform.cores
    cfg.tick_ns = sc.platform.tick_real_ns or sc.platform.tick_ns  # the interrupt's period
    cfg.time_slicing = 1 if getattr(sc.platform, "time_slicing", True) else 0
    cfg.nic_kind = enum_value("rtsim_nic_kind", "RTSIM_NIC_", sc.nic.kind)
    cfg.nic_core = getattr(sc.nic, "core", 0)
    cfg.ring = sc.nic.ring or 0
    cfg.rx_on_tick = 1 if getattr(sc.nic, "interrupt", "frame") == "tick" else 0
    cfg.queue_capacity = sc.driver.queue
    for key, fld in COST_KEYS.items():
        if key not in sc.costs:
            raise UsageError(
                f"{sc.platform.path}: [costs] {key}: missing (the simulator needs it; "
                "see docs/model.md)"
            )
        setattr(cfg.costs, fld, int(sc.costs[key]))
    if "isr_queue_full" in sc.costs and int(sc.costs["isr_queue_full"]) <= 0:
        raise UsageError(
            f"{sc.platform.path}: [costs] isr_queue_full: must be positive, got "
            f"{int(sc.costs['isr_queue_full'])} ns (leave it out to use isr_per_packet)"
        )
    if "driver_wake_input" in sc.costs and int(sc.costs["driver_wake_input"]) <= 0:
        raise UsageError(
            f"{sc.platform.path}: [costs] driver_wake_input: must be positive, got "
            f"{int(sc.costs['driver_wake_input'])} ns (leave it out to use driver_wake)"
        )
    cfg.costs.tick_isr_ns = sc.platform.tick_isr_ns
    for key, fld in OPTIONAL_COST_KEYS.items():
        setattr(cfg.costs, fld, int(sc.costs.get(key, 0)))
    rx = getattr(sc, "rx", None)
    if rx is not None:
        for key, fld in rx_cost_keys().items():
            if key not in sc.costs:
                raise UsageError(
                    f"{sc.platform.path}: [costs] {key}: missing (the receive path, [rx], "
                    "needs it; see docs/model.md)"
                )
            if fld.startswith("path:"):
                k = enum_value("rtsim_rx_path", "RTSIM_PATH_", fld[5:])
                cfg.costs.path_ns[k] = int(sc.costs[key])
                # Optional duration quantiles of the path (Behnke Fig. 10): all four or none.
                qkeys = [f"{key}_{q}" for q in PATH_QUANTILE_KEYS]
                given = [q in sc.costs for q in qkeys]
                if any(given) and not all(given):
                    missing = [q for q in qkeys if q not in sc.costs]
                    raise UsageError(
                        f"{sc.platform.path}: [costs] {missing[0]}: missing (a path's "
                        f"quantiles come as a set: {', '.join(qkeys)})"
                    )
                for j, q in enumerate(qkeys):
                    if q in sc.costs:
                        cfg.costs.path_q_ns[k][j] = int(sc.costs[q])
            else:
                setattr(cfg.costs, fld, int(sc.costs[key]))
        r = cfg.rx
        r.enabled = 1
        r.nbufs = rx.buffers
        r.recycle_threshold = (
            lib.RTSIM_RX_RECYCLE_DEFAULT if rx.recycle_below is None else rx.recycle_below
        )
        r.short_circuit = 1 if rx.short_circuit else 0
        r.eager_invalidate = 1 if rx.cache == "eager" else 0
        r.global_capacity = rx.global_capacity
        r.global_period_ns = on_ticks(sc, rx.global_period_ns or 0)
    nic_queues = getattr(sc.nic, "queues", ())
    for d, q in _entries(
        cfg, "nic_queues", nic_queues, lib.RTSIM_MAX_NIC_QUEUES, where, "nic.queues", "queues"
    ):
        d.size = q.size
        d.t_abs_ns = q.absolute_ns or 0
        d.t_pack_ns = q.packet_ns or 0
        d.frames = q.frames or 0
    queue_index = {q.name: k for k, q in enumerate(nic_queues)}
    det = getattr(sc, "detect", None)
    if det is not None:
        cfg.detect_slice_ns = det.slice_ns
        cfg.detect_irq_threshold = det.irq_threshold
        cfg.detect_fill_high = det.fill_high
        cfg.detect_fill_low = det.fill_low

    names: list[str] = []
    tasks = []
    c = sc.critical
    tasks.append(
        ("critical", lib.RTSIM_TASK_PERIODIC, c.priority, c.core, c.period_ns, c.work_ns, 1)
    )
    tasks.append(("driver", lib.RTSIM_TASK_DRIVER, sc.driver.priority, sc.driver.core, 0, 0, 0))
    if rx is None and sc.driver.input_priority is not None:
        # The stock driver's input task (docs/model.md): ring -> RX queue, on the driver's core.
        tasks.append(
            ("input", lib.RTSIM_TASK_INPUT, sc.driver.input_priority, sc.driver.core, 0, 0, 0)
        )
    flow_index = {f.name: i for i, f in enumerate(sc.flows)}
    workers: dict[int, tuple[int, int]] = {}  # task index -> (flow, mailbox)
    maskers: set[int] = set()  # task indices whose jobs mask the RX lines
    for t in sc.tasks:
        if t.kind == "periodic":
            if getattr(t, "masks_rx", False):
                maskers.add(len(tasks))
            tasks.append(
                (t.name, lib.RTSIM_TASK_PERIODIC, t.priority, t.core, t.period_ns, t.work_ns, 0)
            )
        elif t.kind == "background":
            tasks.append((t.name, lib.RTSIM_TASK_BACKGROUND, t.priority, t.core, 0, 0, 0))
        elif t.kind == "worker":
            if t.flow not in flow_index:
                raise UsageError(f"{where}: [[tasks]] {t.name}: flow {t.flow!r} does not exist")
            workers[len(tasks)] = (flow_index[t.flow], t.queue or WORKER_MAILBOX_DEFAULT)
            tasks.append((t.name, lib.RTSIM_TASK_WORKER, t.priority, t.core, 0, t.work_ns, 0))
        else:
            raise UsageError(f"{where}: [[tasks]] {t.name}: kind {t.kind!r} is not simulated")
    if rx is not None and rx.global_capacity > 0:
        # Behnke §5.5: the global limit's polling task, on the driver's core.
        tasks.append(
            ("polling", lib.RTSIM_TASK_POLLING, rx.poll_priority or 0, sc.driver.core, 0, 0, 0)
        )
    if len(tasks) > lib.RTSIM_MAX_TASKS:
        raise UsageError(f"{where}: [[tasks]]: at most {lib.RTSIM_MAX_TASKS - 2} extra tasks")
    cfg.n_tasks = len(tasks)
    for i, (name, kind, prio, core, period, work, crit) in enumerate(tasks):
        d = cfg.tasks[i]
        d.kind, d.priority, d.core, d.critical = kind, prio, core, crit
        d.period_ns, d.work_ns = on_ticks(sc, period or 0), work or 0
        if i in workers:
            d.flow, d.mailbox = workers[i]
        d.masks_rx = 1 if i in maskers else 0
        names.append(name)

    if len(sc.flows) > lib.RTSIM_MAX_FLOWS:
        raise UsageError(f"{where}: [[flows]]: at most {lib.RTSIM_MAX_FLOWS} flows")
    sources = getattr(sc, "sources", ())
    for d, src in _entries(
        cfg, "sources", sources, lib.RTSIM_MAX_SOURCES, where, "sources", "sources"
    ):
        d.isr_per_packet_ns = src.isr_work_ns
        d.min_interarrival_ns = src.min_interarrival_ns or 0
        d.burst = src.burst or 0
        d.isr_only = 1 if src.isr_only else 0
    source_index = {src.name: k for k, src in enumerate(sources)}
    cfg.n_flows = len(sc.flows)
    for i, f in enumerate(sc.flows):
        if getattr(f, "pcap", None) is not None:
            _trace_flow(cfg.flows[i], f, lib)
            pts = ()
        else:
            pts = f.schedule(sc.duration_ns)
        if len(pts) > lib.RTSIM_MAX_RATES:
            raise UsageError(
                f"{where}: [[flows]] {f.name}: the pattern changes rate "
                f"{len(pts)} times within the duration; the simulator takes at "
                f"most {lib.RTSIM_MAX_RATES} (use a larger step or step_every)"
            )
        low = next((pps for _, pps in pts if 0 < pps < MIN_RATE_HZ), None)
        if low is not None:
            raise UsageError(
                f"{where}: [[flows]] {f.name}: the pattern reaches a rate of {low:g} per "
                f"second; a flow's rate is 0 or at least {MIN_RATE_HZ:g} per second"
            )
        d = cfg.flows[i]
        if pts:
            d.pattern = lib.RTSIM_PAT_PIECEWISE
        d.poisson = 1 if f.random else 0
        d.size = f.size
        d.source = source_index.get(getattr(f, "source", None) or "", 0)
        d.n_rates = len(pts)
        for j, (t_ns, pps) in enumerate(pts):
            d.rate_t_ns[j] = t_ns
            d.rates_pps[j] = pps
        # what its frames are, and the socket bound to it (Behnke §5.6)
        d.proto = enum_value("rtsim_proto", "RTSIM_PROTO_", getattr(f, "protocol", "tcp"))
        d.dst_port = f.dst_port
        d.src_port = getattr(f, "src_port", 40000)
        d.src_addr = int(ipaddress.IPv4Address(getattr(f, "src", DEFAULT_SRC)))
        d.dst_addr = 0  # the device: the simulator's default address
        pcp = getattr(f, "vlan_pcp", None)
        d.vlan, d.vlan_pcp = (0, 0) if pcp is None else (1, pcp)
        d.unbound = 0 if getattr(f, "bind", True) else 1
        d.prio = f.priority
        d.capacity = getattr(f, "capacity", None) or 0
        d.server_period_ns = on_ticks(sc, getattr(f, "server_period_ns", None) or 0)
        d.queue_limit = getattr(f, "queue", None) or 0
        qname = getattr(f, "nic_queue", None)
        d.nic_queue = queue_index[qname] if qname is not None else lib.RTSIM_NIC_UNMAPPED

    m = sc.mitigation
    mc = cfg.mitigation
    try:
        mc.kind = enum_value("rtsim_mitigation_kind", "RTSIM_MIT_", m.kind)
    except KeyError:
        raise UsageError(f"{where}: [mitigation] kind: {m.kind!r} is unknown") from None
    mc.also = 0
    for name in getattr(m, "also", ()):
        mc.also |= enum_value("rts_shield_prot", "RTS_SHIELD_", name)
    mc.slice_ns = m.slice_ns or 0
    mc.capacity = m.capacity or 0
    mc.block_below = m.block_below or 0.0
    mc.unblock_above = m.unblock_above or 0.0
    mc.sleep_ns = m.sleep_ns or 0
    mc.min_interarrival_ns = m.min_interarrival_ns or 0
    mc.burst = m.burst or 0
    mc.period_ns = m.period_ns or 0
    mc.window_ns = m.window_ns or 0
    mc.bursty_lazy = 1 if getattr(m, "timer", None) == "lazy" else 0
    mc.budget_charge_isr = 1 if getattr(m, "charge_isr", None) else 0
    mc.one_enable_bit = 1 if getattr(m, "enable_bits", None) == 1 else 0

    err = lib.rtsim_config_error(cfg)
    if err != ffi.NULL:
        raise UsageError(f"{where}: {ffi.string(err).decode()}")
    return cfg, names


def _trace_flow(d: Any, f: Any, lib: Any) -> None:
    """A pcap flow replays its capture (the frames follow after rtsim_create)."""
    rp = _replay(f)
    d.pattern = lib.RTSIM_PAT_TRACE
    d.start_ns = f.begin_ns
    d.trace_period_ns = rp.period_ns


def _replay(f: Any) -> Any:
    from rtshield import pcap  # here: dpkt's import is a tenth of a second

    cap = pcap.read_pcap(f.pcap)
    return pcap.replay(cap, scale=f.scale, skip_ns=f.skip_ns, loop=f.loop)


def hand_traces(sc: Scenario, sim: Any, ffi: Any, lib: Any) -> None:
    """Give every pcap flow its frames (copied by the simulator)."""
    total = 0
    for i, f in enumerate(sc.flows):
        if getattr(f, "pcap", None) is None:
            continue
        rp = _replay(f)
        total += len(rp.times_ns)
        if total > lib.RTSIM_TRACE_MAX_FRAMES:
            raise UsageError(
                f"[[flows]] {f.name}: the scenario's captures hold more than "
                f"{lib.RTSIM_TRACE_MAX_FRAMES} frames together (the simulator's trace limit)"
            )
        n = len(rp.times_ns)
        times = ffi.new("int64_t[]", rp.times_ns)
        lens = ffi.new("uint32_t[]", rp.lengths)
        data = ffi.from_buffer("uint8_t[]", rp.data)
        err = lib.rtsim_flow_trace(sim, i, n, times, lens, data, len(rp.data))
        if err != ffi.NULL:
            raise UsageError(f"[[flows]] {f.name}: {f.pcap}: {ffi.string(err).decode()}")


def check_scenario(scenario: Scenario) -> None:
    """Raise :class:`UsageError` (one line, naming the file) if the simulator
    refuses the scenario's configuration (``rtsim_config_error``)."""
    ffi, lib = load()
    build_config(scenario, ffi, lib)
