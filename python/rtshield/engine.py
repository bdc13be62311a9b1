"""Run a :class:`~rtshield.scenario.Scenario` on the native simulator.

:func:`simulate` has the scenario mapped onto the engine's C configuration
(:mod:`rtshield.engine_config`, from ``sim/include/rtsim/rtsim.h`` as cffi
parses it), runs it in slices of simulated time of at most one bin and about
:data:`CHUNK_WALL_S` of wall time each (so that Ctrl-C is noticed quickly),
calls ``progress(done_s, total_s)`` after each bin for a progress bar, and
returns a :class:`~rtshield.result.Result`.

``DROP_REASONS``, ``TRACE_KINDS`` and ``RX_PATHS`` are the names of the C
enums ``rtsim_drop``, ``rtsim_trace_kind`` and ``rtsim_rx_path``, read from
the binding on first use (``RTSIM_DROP_LINE_DISABLED`` → ``"line_disabled"``).
The configuration's cost keys and check, the binding's :func:`enum_names` and
:func:`enum_value`, and the vocabulary's ``WORKER_MAILBOX_DEFAULT`` and
``PATH_QUANTILE_KEYS`` are re-exported here, where callers have found them.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rtshield._native import enum_names, enum_value, load
from rtshield.engine_config import (
    COST_KEYS,
    OPTIONAL_COST_KEYS,
    build_config,
    check_scenario,
    hand_traces,
    rx_cost_keys,
)
from rtshield.result import Result, hist_percentile_us
from rtshield.scenario_types import Scenario
from rtshield.schema.vocabulary import PATH_QUANTILE_KEYS, WORKER_MAILBOX_DEFAULT

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


#: Wall time one call into the engine should take at most (Ctrl-C latency).
CHUNK_WALL_S = 0.02
_FIRST_STEP_NS = 1_000_000  #: the first slice: 1 ms of simulated time
_MIN_STEP_NS = 1_000  #: the smallest slice: 1 µs of simulated time


def _r(x: float, nd: int = 3) -> float:
    """Deterministic rounding for the summary (and -0.0 → 0.0)."""
    v = round(float(x), nd)
    return v + 0.0


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
    cfg, task_names = build_config(scenario, ffi, lib)
    cfg.trace_capacity = max(0, int(trace))
    cfg.exact_arrivals = 1 if exact_arrivals else 0
    sim = lib.rtsim_create(cfg)
    if sim == ffi.NULL:
        raise MemoryError("rtsim_create failed (out of memory)")
    try:
        hand_traces(scenario, sim, ffi, lib)
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
    # per scenario flow: its packets offered and delivered in the bin
    for i, f in enumerate(sc.flows):
        ts[f"flow_{f.name}_offered"] = np.array([b.flow_offered[i] for b in bins], dtype=np.int64)
        ts[f"flow_{f.name}_delivered"] = np.array([b.flow_delivered[i] for b in bins],
                                                  dtype=np.int64)
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
