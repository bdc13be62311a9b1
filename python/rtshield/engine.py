"""Run a :class:`~rtshield.scenario.Scenario` on the native simulator.

:func:`simulate` maps the scenario onto the engine's C configuration
(``sim/include/rtsim/rtsim.h``, parsed by cffi from the header itself), runs
it in slices of simulated time of at most one bin and about
:data:`CHUNK_WALL_S` of wall time each (so that Ctrl-C is noticed quickly),
calls ``progress(done_s, total_s)`` after each bin for a progress bar, and
returns a :class:`~rtshield.result.Result`.

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

``DROP_REASONS``, ``TRACE_KINDS`` and ``RX_PATHS`` are the names of the C
enums ``rtsim_drop``, ``rtsim_trace_kind`` and ``rtsim_rx_path``, read from
the binding on first use (``RTSIM_DROP_LINE_DISABLED`` → ``"line_disabled"``).
"""

from __future__ import annotations

import functools
import ipaddress
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rtshield._native import enum_names, enum_value, load
from rtshield.errors import UsageError
from rtshield.result import Result, hist_percentile_us
from rtshield.scenario import DEFAULT_SRC, PATH_QUANTILE_KEYS, Scenario
from rtshield.units import MIN_RATE_HZ

__all__ = [
    "COST_KEYS",
    "OPTIONAL_COST_KEYS",
    "DETECTORS",  # noqa: F822 (module __getattr__)
    "DROP_REASONS",  # noqa: F822
    "RX_COST_KEYS",  # noqa: F822
    "PATH_QUANTILE_KEYS",
    "RX_PATHS",  # noqa: F822
    "TRACE_DTYPE",  # noqa: F822
    "TRACE_KINDS",  # noqa: F822
    "WORKER_MAILBOX_DEFAULT",
    "check_scenario",
    "enum_value",
    "enum_names",
    "packet_counters",
    "rx_cost_keys",
    "simulate",
    "trace_dtype",
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


def __getattr__(name: str) -> Any:
    """``DROP_REASONS``, ``TRACE_KINDS``, ``RX_PATHS``, ``DETECTORS``: the C enums' names;
    ``RX_COST_KEYS`` (:func:`rx_cost_keys`) and ``TRACE_DTYPE`` (:func:`trace_dtype`):
    read from the binding on first use."""
    if name == "DROP_REASONS":
        return enum_names("rtsim_drop", "RTSIM_DROP_")
    if name == "TRACE_KINDS":
        return enum_names("rtsim_trace_kind", "RTSIM_TR_")
    if name == "RX_PATHS":
        return enum_names("rtsim_rx_path", "RTSIM_PATH_")
    if name == "DETECTORS":
        return enum_names("rtsim_detector", "RTSIM_DET_")
    if name == "RX_COST_KEYS":
        return rx_cost_keys()
    if name == "TRACE_DTYPE":
        return trace_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def packet_counters() -> tuple[str, ...]:
    """The packet counters of a bin, in ``rtsim_bin``'s order: its fields after
    ``t_start_ns`` up to the per-reason ``dropped`` array (``offered`` … ``delivered``)."""
    ffi, _ = load()
    names = [n for n, _ in ffi.typeof("rtsim_bin").fields]
    return tuple(names[names.index("t_start_ns") + 1 : names.index("dropped")])


@functools.cache
def trace_dtype() -> np.dtype:
    """The numpy layout of a trace record: the C ``rtsim_trace_rec``'s fields, types,
    offsets and size, read from the binding (little-endian, as the records are written)."""
    ffi, _ = load()
    ct = ffi.typeof("rtsim_trace_rec")
    names, formats, offsets = [], [], []
    for fname, fld in ct.fields:
        cname = fld.type.cname
        if fld.type.kind != "primitive" or not cname.endswith("_t"):
            raise RuntimeError(f"rtsim_trace_rec.{fname}: {cname} has no numpy layout")
        names.append(fname)
        formats.append(np.dtype(cname[: -len("_t")]).newbyteorder("<"))
        offsets.append(fld.offset)
    return np.dtype(
        {"names": names, "formats": formats, "offsets": offsets, "itemsize": ffi.sizeof(ct)}
    )


#: A worker's mailbox capacity (messages) when its ``queue`` is not given
#: (docs/scenarios.md): the front end's default, used here and by ``rtshield design``.
WORKER_MAILBOX_DEFAULT = 16

#: Wall time one call into the engine should take at most (Ctrl-C latency).
CHUNK_WALL_S = 0.02
_FIRST_STEP_NS = 1_000_000  #: the first slice: 1 ms of simulated time
_MIN_STEP_NS = 1_000  #: the smallest slice: 1 µs of simulated time


def _r(x: float, nd: int = 3) -> float:
    """Deterministic rounding for the summary (and -0.0 → 0.0)."""
    v = round(float(x), nd)
    return v + 0.0


def _entries(
    cfg: Any, field: str, items: Any, limit: int, where: str, table: str, noun: str
) -> list[tuple[Any, Any]]:
    """The C configuration's array ``field`` for ``items`` ([[table]]): at most ``limit``
    ``noun``, its count set; (C entry, item) pairs to fill."""
    if len(items) > limit:
        raise UsageError(f"{where}: [[{table}]]: at most {limit} {noun}")
    setattr(cfg, f"n_{field}", len(items))
    return [(getattr(cfg, field)[k], item) for k, item in enumerate(items)]


def _build_config(sc: Scenario, ffi: Any, lib: Any) -> tuple[Any, list[str]]:
    """Fill an ``rtsim_config``; return it with the CPU context names of its tasks."""
    cfg = ffi.new("rtsim_config *")
    where = sc.path
    cfg.duration_ns = sc.duration_ns
    cfg.bin_ns = sc.bin_ns
    cfg.seed = sc.seed & 0xFFFFFFFFFFFFFFFF
    cfg.n_cores = sc.platform.cores
    cfg.tick_ns = sc.platform.tick_ns
    cfg.time_slicing = 1 if getattr(sc.platform, "time_slicing", True) else 0
    cfg.nic_kind = enum_value("rtsim_nic_kind", "RTSIM_NIC_", sc.nic.kind)
    cfg.nic_core = getattr(sc.nic, "core", 0)
    cfg.ring = sc.nic.ring or 0
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
        r.global_period_ns = rx.global_period_ns or 0
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
        d.period_ns, d.work_ns = period or 0, work or 0
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
        d.server_period_ns = getattr(f, "server_period_ns", None) or 0
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
    from . import pcap

    cap = pcap.read_pcap(f.pcap)
    return pcap.replay(cap, scale=f.scale, skip_ns=f.skip_ns, loop=f.loop)


def _hand_traces(sc: Scenario, sim: Any, ffi: Any, lib: Any) -> None:
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
    _build_config(scenario, ffi, lib)


def _ctx_names(task_names: list[str], n_cores: int, lib: Any) -> list[str | None]:
    """CPU context names by ``rtsim_ctx`` index: the contexts below ``RTSIM_CTX_TASK0``
    by their C names (``RTSIM_CTX_ISR_RX`` → ``isr_rx``), then the tasks, then the idle
    time of the other cores."""
    names: list[str | None] = [None] * lib.RTSIM_CTX_COUNT
    ffi, _ = load()
    for v, n in ffi.typeof("rtsim_ctx").elements.items():
        if v < lib.RTSIM_CTX_TASK0:
            names[v] = n[len("RTSIM_CTX_") :].lower()
    for i, n in enumerate(task_names):
        names[lib.RTSIM_CTX_TASK0 + i] = n
    for k in range(1, n_cores):
        names[lib.RTSIM_CTX_IDLE_CORE1 + k - 1] = f"idle_core{k}"
    return names


def _hist(ffi: Any, lib: Any, counts_c: Any) -> tuple[np.ndarray, np.ndarray]:
    """Histogram trimmed to its non-empty range, edges in µs."""
    n = lib.RTSIM_HIST_BINS
    counts = np.frombuffer(ffi.buffer(counts_c, n * 8), dtype=np.uint64).astype(np.int64)
    nz = np.nonzero(counts)[0]
    lo, hi = (int(nz[0]), int(nz[-1]) + 1) if len(nz) else (0, 1)
    edges_c = ffi.new("uint64_t[]", hi + 1 - lo)
    lib.rtsim_hist_edges_ns(lo, edges_c, hi + 1 - lo)
    edges = np.frombuffer(ffi.buffer(edges_c), dtype=np.uint64).astype(np.float64)
    return edges / 1e3, counts[lo:hi].copy()


def _path_quantiles(ffi: Any, lib: Any, sim: Any, path: int, counts_c: Any) -> dict[str, float]:
    """The RX ISR's per-frame duration on one path at Behnke Fig. 10's quantiles (µs)."""
    lib.rtsim_hist_path(sim, path, counts_c, lib.RTSIM_HIST_BINS)
    edges, counts = _hist(ffi, lib, counts_c)
    if not counts.sum():
        return {}
    lo = float(edges[0])
    out = {"q0": _r(lo)}
    for name, q in (("q90", 0.9), ("q99", 0.99), ("q999", 0.999), ("q9999", 0.9999)):
        out[name] = _r(hist_percentile_us(edges, counts, q, lo, None))
    return out


def simulate(
    scenario: Scenario,
    progress: Callable[[float, float], None] | None = None,
    *,
    trace: int = 0,
    exact_arrivals: bool = False,
) -> Result:
    """Simulate ``scenario``; call ``progress(done_s, total_s)`` after each bin.

    ``trace`` > 0 keeps an event trace (arrivals, ISRs, task switches, drops,
    line enables, cycle ends, deliveries) of at most that many records per
    bin in :attr:`Result.trace`; the rest are counted in ``trace_lost``.
    ``exact_arrivals`` processes every arrival as its own event, even one the
    engine would otherwise count in closed form (a lost interrupt assertion,
    a full ring): the reference path tests and benchmarks compare against;
    results are the same either way.
    """
    ffi, lib = load()
    cfg, task_names = _build_config(scenario, ffi, lib)
    cfg.trace_capacity = max(0, int(trace))
    cfg.exact_arrivals = 1 if exact_arrivals else 0
    sim = lib.rtsim_create(cfg)
    if sim == ffi.NULL:
        raise MemoryError("rtsim_create failed (out of memory)")
    try:
        _hand_traces(scenario, sim, ffi, lib)
        return _run(scenario, cfg, task_names, sim, ffi, lib, progress, int(cfg.trace_capacity))
    finally:
        lib.rtsim_destroy(sim)


def _run(
    sc: Scenario,
    cfg: Any,
    task_names: list[str],
    sim: Any,
    ffi: Any,
    lib: Any,
    progress: Callable[[float, float], None] | None,
    trace_cap: int,
) -> Result:
    total = sc.duration_ns
    nbins = -(-total // sc.bin_ns)
    buf = ffi.new("rtsim_bin[]", 64)
    bins: list[Any] = []
    traces: list[np.ndarray] = []
    tbuf = ffi.new("rtsim_trace_rec[]", trace_cap) if trace_cap else None
    rec = trace_dtype()
    t = 0
    # The engine runs in slices of simulated time sized to take about
    # CHUNK_WALL_S of wall time each, whatever the bin, so that Ctrl-C
    # (noticed between two calls) is noticed quickly. Where the
    # run stops between calls does not change its results (the engine
    # handles every event before t_end and nothing at or after it).
    step = min(sc.bin_ns, _FIRST_STEP_NS)
    while t < total:
        end = min(t + sc.bin_ns, total)
        while t < end:
            t = min(t + step, end)
            w0 = time.perf_counter()
            if lib.rtsim_run_until(sim, t) != 0:
                err = lib.rtsim_error(sim)
                why = ffi.string(err).decode() if err != ffi.NULL else "internal error"
                raise RuntimeError(f"simulator: {why}")
            wall = time.perf_counter() - w0
            if wall > CHUNK_WALL_S:
                step = max(_MIN_STEP_NS, step // 2)
            elif wall < CHUNK_WALL_S / 4:
                step = min(sc.bin_ns, step * 2)
        while True:
            n = lib.rtsim_take_bins(sim, buf, 64)
            for k in range(n):
                b = ffi.new("rtsim_bin *")
                b[0] = buf[k]
                bins.append(b)
            if n < 64:
                break
        if tbuf is not None:
            n = lib.rtsim_take_trace(sim, tbuf, trace_cap)
            raw = ffi.buffer(tbuf, n * rec.itemsize)
            traces.append(np.frombuffer(bytes(raw), dtype=rec))
        if progress is not None:
            progress(t / 1e9, total / 1e9)
    bins = bins[:nbins]
    ctx = _ctx_names(task_names, sc.platform.cores, lib)
    drop_reasons = enum_names("rtsim_drop", "RTSIM_DROP_")
    bin_s = sc.bin_ns / 1e9

    # ---- time series
    ts: dict[str, np.ndarray] = {}
    ts["t_s"] = np.array([b.t_start_ns / 1e9 for b in bins], dtype=np.float64)
    for key in packet_counters():
        ts[key] = np.array([getattr(b, key) for b in bins], dtype=np.int64)
    for i, reason in enumerate(drop_reasons):
        ts[f"dropped_{reason}"] = np.array([b.dropped[i] for b in bins], dtype=np.int64)
    ts["cycles"] = np.array([b.cycles for b in bins], dtype=np.int64)
    ts["lateness_pct"] = np.array([b.lateness_pct for b in bins], dtype=np.float64)
    ts["lateness_max_pct"] = np.array([b.lateness_max_pct for b in bins], dtype=np.float64)
    ts["misses"] = np.array([b.misses for b in bins], dtype=np.int64)
    lengths = np.array([min(sc.bin_ns, total - b.t_start_ns) for b in bins], dtype=np.float64)
    for i, name in enumerate(ctx):
        if name is not None:
            ts[f"cpu_{name}"] = np.array([b.cpu_ns[i] for b in bins], dtype=np.float64) / lengths
    ts["rx_disabled_s"] = np.array([b.rx_disabled_ns / 1e9 for b in bins], dtype=np.float64)
    # receive path (0 without [rx]): time in polling mode, the network task's top priority
    ts["polling_s"] = np.array([b.polling_ns / 1e9 for b in bins], dtype=np.float64)
    ts["net_prio_max"] = np.array([b.net_prio_max for b in bins], dtype=np.int64)
    # the overload detectors: times each fired in the bin (Danicki §2.1)
    detectors = enum_names("rtsim_detector", "RTSIM_DET_")
    for k, det in enumerate(detectors):
        ts[f"detected_{det}"] = np.array([b.detected[k] for b in bins], dtype=np.int64)

    # ---- totals
    tot = ffi.new("rtsim_bin *")
    lib.rtsim_totals(sim, tot)
    totals = {k: int(getattr(tot, k)) for k in packet_counters()}
    totals["dropped"] = {r: int(tot.dropped[i]) for i, r in enumerate(drop_reasons)}
    totals["irq_per_packet"] = _r(tot.isr_runs / tot.received, 6) if tot.received else 0.0

    # ---- critical task and its cycle-time histogram
    counts_c = ffi.new("uint64_t[]", lib.RTSIM_HIST_BINS)
    lib.rtsim_hist_cycle(sim, counts_c, lib.RTSIM_HIST_BINS)
    cyc_hist = _hist(ffi, lib, counts_c)
    st = ffi.new("rtsim_task_stats *")
    lib.rtsim_task_stats_get(sim, 0, st)
    cmin, cmax = st.cycle_min_ns / 1e3, st.cycle_max_ns / 1e3
    critical = {
        "cycles": int(tot.cycles),
        "misses": int(tot.misses),
        "lateness_max_pct": _r(tot.lateness_max_pct),
        "lateness_bin_max_pct": _r(float(ts["lateness_pct"].max()) if len(bins) else 0.0),
        "lateness_sum_pct": _r(tot.lateness_pct),
        "cycle_time_us": {
            "min": _r(cmin),
            "p50": _r(hist_percentile_us(*cyc_hist, 0.50, cmin, cmax)),
            "p99": _r(hist_percentile_us(*cyc_hist, 0.99, cmin, cmax)),
            "max": _r(cmax),
        },
        "max_response_us": _r(st.max_response_ns / 1e3),
    }

    # ---- tasks
    tasks: dict[str, dict[str, Any]] = {}
    for i, name in enumerate(task_names):
        lib.rtsim_task_stats_get(sim, i, st)
        tasks[name] = {
            "jobs": int(st.jobs),
            "misses": int(st.misses),
            "max_response_us": _r(st.max_response_ns / 1e3),
            "cpu_s": _r(st.cpu_ns / 1e9, 6),
        }

    # ---- flows
    flows: dict[str, dict[str, Any]] = {}
    lat_hists: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    fs = ffi.new("rtsim_flow_stats *")
    for i, f in enumerate(sc.flows):
        lib.rtsim_flow_stats_get(sim, i, fs)
        lib.rtsim_hist_latency(sim, i, counts_c, lib.RTSIM_HIST_BINS)
        h = _hist(ffi, lib, counts_c)
        lat_hists[f.name] = h
        lmax = fs.latency_max_ns / 1e3
        flows[f.name] = {
            "offered": int(fs.offered),
            "received": int(fs.received),
            "processed": int(fs.processed),
            "delivered": int(fs.delivered),
            "dropped": int(fs.dropped),
            "dropped_by": {r: int(fs.drops[k]) for k, r in enumerate(drop_reasons)},
            "latency_us": {
                "p50": _r(hist_percentile_us(*h, 0.50, None, lmax)),
                "p99": _r(hist_percentile_us(*h, 0.99, None, lmax)),
                "p999": _r(hist_percentile_us(*h, 0.999, None, lmax)),
                "max": _r(lmax),
            },
        }

    # ---- CPU shares over the run
    cpu = {name: _r(tot.cpu_ns[i] / total, 6) for i, name in enumerate(ctx) if name is not None}

    # ---- mitigation
    ms = ffi.new("rtsim_mitigation_stats *")
    lib.rtsim_mitigation_stats_get(sim, ms)
    counters = {
        k: int(getattr(ms, k))
        for k in ("line_disables", "line_enables", "timer_fires", "suspends", "resumes", "drops")
    }
    counters["rx_disabled_s"] = _r(tot.rx_disabled_ns / 1e9, 6)
    if any(getattr(t, "masks_rx", False) for t in sc.tasks):
        # Regehr & Duongsaa §4: handlers that ran inside a task's critical section
        counters["mask_violations"] = int(ms.mask_violations)
    mitigation = {
        "name": sc.mitigation.kind,
        "parameters": sc.mitigation.parameters(),
        "counters": counters,
    }

    # ---- overload detection: when each detector first fired, and how often
    first = ffi.new("uint64_t[]", len(detectors))
    count = ffi.new("uint64_t[]", len(detectors))
    lib.rtsim_detect_get(sim, first, count)
    detection = {
        det: {
            "count": int(count[k]),
            "first_s": None if first[k] == 0xFFFFFFFFFFFFFFFF else _r(first[k] / 1e9, 9),
        }
        for k, det in enumerate(detectors)
    }

    # ---- receive path
    rx_summary: dict[str, Any] | None = None
    if getattr(sc, "rx", None) is not None:
        rs = ffi.new("rtsim_rx_stats *")
        lib.rtsim_rx_stats_get(sim, rs)
        paths = enum_names("rtsim_rx_path", "RTSIM_PATH_")
        rx_summary = {
            "paths": {
                p: {
                    "count": int(rs.path_count[k]),
                    "cpu_s": _r(rs.path_ns[k] / 1e9, 6),
                    "isr_us": _path_quantiles(ffi, lib, sim, k, counts_c),
                }
                for k, p in enumerate(paths)
            },
            "polls": int(rs.polls),
            "poll_cpu_s": _r(rs.poll_ns / 1e9, 6),
            "prio_changes": int(rs.prio_changes),
            "to_poll": int(rs.to_poll),
            "in_flight": int(rs.in_flight),
            "polling_s": _r(tot.polling_ns / 1e9, 6),
        }

    return Result(
        scenario=sc.name,
        seed=sc.seed,
        duration_s=_r(total / 1e9, 9),
        bin_s=bin_s,
        totals=totals,
        critical=critical,
        flows=flows,
        cpu=cpu,
        mitigation=mitigation,
        tasks=tasks,
        engine={
            "events": int(lib.rtsim_events(sim)),
            "arrivals_batched": int(lib.rtsim_arrivals_batched(sim)),
        },
        timeseries=ts,
        cycle_time_hist=cyc_hist,
        flow_latency_hist=lat_hists,
        trace=np.concatenate(traces) if trace_cap else None,
        trace_lost=int(lib.rtsim_trace_lost(sim)),
        rx=rx_summary,
        detection=detection,
    )
