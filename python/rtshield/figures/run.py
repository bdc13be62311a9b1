"""The figures of one run: packets, critical cycles and lateness, cycle times, packet
latency per flow, the receive path's drops and priority, the overload detectors
(:func:`run_figures` writes those that apply)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rtshield.outputs import atomic_write, remove_ours

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from concurrent.futures import Executor, Future

    from matplotlib.figure import Figure
from rtshield.figures import layout

__all__ = [
    "critical_figure",
    "cycle_time_figure",
    "detection_figure",
    "flows_figure",
    "hist_arrays",
    "latency_figure",
    "log_rebin",
    "packets_figure",
    "run_figure_jobs",
    "run_figure_png",
    "run_figures",
    "rx_drops_figure",
    "submit_run_figures",
    "rx_priority_figure",
    "stock_run_figures",
]


#: The shapes of the run figures of one axes (:func:`rtshield.figures.layout.single_axes`):
#: the ones a run draws are made ahead by :func:`stock_run_figures`.
PACKETS = layout.Shape(7.0, 3.8, left=0.85)
CRITICAL = layout.Shape(7.0, 3.8, left=0.7, right=0.85, twin=True, minor=("twin",))
CYCLE_TIME = layout.Shape(7.0, 3.5, minor=("x", "y"))
LATENCY = layout.Shape(7.0, 3.4, top=layout.TITLE_IN + 0.05, right=1.6, minor=("x",))
RX_DROPS = layout.Shape(7.0, 3.6, top=layout.TITLE_IN + 0.05, right=1.8, left=0.9)
#: its twin only when the run polled: made when needed
RX_PRIORITY = layout.Shape(7.0, 3.6, left=0.7, right=0.85)


def stock_run_figures() -> None:
    """Make ahead one figure of each shape that every run draws (packets, critical
    cycles, cycle times, latency): for a resident server before it forks
    (:func:`rtshield.figures.layout.stock`)."""
    layout.stock((PACKETS, CRITICAL, CYCLE_TIME, LATENCY))


def packets_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Sent, received and processed packets per second over time."""
    fig, ax = layout.single_axes(PACKETS)
    layout.legend_top(fig, layout.packets_axes(ax, ts))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("packets per second")
    layout.suptitle(fig, title)
    return fig


def critical_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Completed critical cycles per second and accumulated lateness over time."""
    fig, ax = layout.single_axes(CRITICAL)
    ax2, artists = layout.critical_axes(ax, ts)
    layout.legend_top(fig, artists)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("completed cycles per second")
    ax2.set_ylabel("accumulated lateness [%]", color="tab:red")
    layout.suptitle(fig, title)
    return fig


def flows_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """Each flow's offered and delivered packets per second, one panel per flow on its
    own scale (so that a 500 pkt/s flow shows beside a 200 000 pkt/s flood); None with
    fewer than two flows (packets.png shows one)."""
    names = layout.flow_names(ts)
    if len(names) < 2:
        return None
    n = len(names)
    top = layout.TITLE_IN + layout.LEGEND_IN + layout.PANEL_TITLE_IN
    fig = layout.new_figure(7.0, top + 0.55 + 1.5 * n + 0.45 * (n - 1), left=0.85, top=top,
                            bottom=0.55, rows=n, hgap=0.45)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    artists: list = []
    for ax, name in zip(axes, names, strict=True):
        artists = layout.flow_axes(ax, ts, name) or artists
        ax.set_title(f"flow {name}", fontsize="small", loc="left")
        ax.set_ylabel("packets / s", fontsize="small")
    axes[-1].set_xlabel("time [s]")
    layout.legend_top(fig, artists)
    layout.suptitle(fig, title)
    return fig


def hist_arrays(hist: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """``(edges_us, counts)`` from a tuple, a mapping or an object with those attributes."""
    if hist is None:
        return None
    if isinstance(hist, Mapping):
        edges = hist.get("edges_us", hist.get("edges"))
        counts = hist.get("counts")
    elif isinstance(hist, (tuple, list)) and len(hist) == 2:
        edges, counts = hist
    else:
        edges = getattr(hist, "edges_us", getattr(hist, "edges", None))
        counts = getattr(hist, "counts", None)
    if edges is None or counts is None:
        return None
    e, c = np.asarray(edges, dtype=float), np.asarray(counts, dtype=float)
    if len(e) != len(c) + 1:
        return None
    return e, c


def _count(n: float) -> str:
    """A count with thin-space thousands separators, as the report writes numbers."""
    return f"{int(n):,}".replace(",", "\u2009")


#: A histogram whose occupied range spans more than this ratio is redrawn on
#: logarithmic bins (a run whose worst cycle took 800 periods).
_LOG_SPAN = 20.0
_LOG_BINS = 60


def log_rebin(edges: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The occupied part of a histogram, on log-spaced bins when it spans decades.

    Counts move whole into the log bin that holds their bin's middle, so the
    total is kept. A narrow histogram comes back as its occupied slice.
    """
    nz = np.nonzero(counts)[0]
    if len(nz) == 0:
        return edges[:1], counts[:0]
    lo_i, hi_i = int(nz[0]), int(nz[-1]) + 1
    e, c = edges[lo_i : hi_i + 1], counts[lo_i:hi_i]
    lo, hi = max(float(e[0]), 1e-9), float(e[-1])
    if lo <= 0 or hi / lo <= _LOG_SPAN:
        return e, c
    new = np.geomspace(lo, hi, _LOG_BINS + 1)
    mid = np.clip(0.5 * (e[:-1] + e[1:]), lo, hi)
    binned, _ = np.histogram(mid, bins=new, weights=c)
    return new, binned


def cycle_time_figure(hist: Any, title: str, period_us: float | None = None) -> Figure | None:
    """Histogram of critical cycle times on a log count axis; ``None`` without data.

    A long run of a late configuration holds cycles from one period to
    hundreds of periods: its bins become log-spaced on a log time axis, so
    the single slow cycles stay visible beside the thousands of on-time ones.
    """
    arrays = hist_arrays(hist)
    if arrays is None or not np.any(arrays[1] > 0):
        return None
    edges, counts = log_rebin(*arrays)
    scale, unit = (1e-3, "ms") if edges[-1] >= 20_000 else (1.0, "µs")
    fig, ax = layout.single_axes(CYCLE_TIME)
    artists = [layout.step_patch(ax, counts, edges * scale, fill=True, color="tab:blue",
                                 alpha=0.8, baseline=0.5,
                                 label=f"cycles ({_count(counts.sum())} in all)")]
    layout.step_patch(ax, counts, edges * scale, color="tab:blue", lw=0.8, baseline=0.5)
    if edges[-1] / max(edges[0], 1e-9) > _LOG_SPAN:
        ax.set_xscale("log")
        layout.plain_log_labels(ax.xaxis)
    ax.set_yscale("log")
    layout.plain_log_labels(ax.yaxis)
    ax.set_ylim(0.5, max(2.0, float(counts.max()) * 2.0))
    if period_us:
        artists.append(ax.axvline(period_us * scale, color="tab:red", ls="--", lw=1,
                                  label=f"period {period_us * scale:g} {unit}"))
        late = float(counts[edges[:-1] >= period_us * 1.0001].sum()) if len(counts) else 0.0
        if late:
            artists[0].set_label(f"cycles ({_count(counts.sum())} in all, "
                                 f"{_count(late)} longer than the period)")
    layout.legend_top(fig, artists)
    ax.set_xlabel(f"cycle time [{unit}]")
    ax.set_ylabel("cycles (log)")
    ax.grid(True, alpha=0.3, which="both")
    layout.suptitle(fig, title)
    return fig


def latency_figure(hists: Mapping[str, Any], title: str) -> Figure | None:
    """Per-flow packet latency (arrival → delivery): share of delivered packets within x."""
    fig, ax = layout.single_axes(LATENCY)
    drawn = []
    for name in sorted(hists):
        arrays = hist_arrays(hists[name])
        if arrays is None or not np.any(arrays[1] > 0):
            continue
        edges, counts = arrays
        cdf = np.cumsum(counts) / counts.sum()
        nz = np.nonzero(counts)[0]
        lo, hi = int(nz[0]), int(nz[-1]) + 1
        drawn += ax.step(edges[lo + 1 : hi + 1], 100.0 * cdf[lo:hi], where="post", lw=1.4,
                         label=name)
    if not drawn:
        return None
    ax.set_xscale("log")
    layout.plain_log_labels(ax.xaxis)
    ax.set_ylim(0, 101)
    ax.set_xlabel("latency, arrival to delivery [µs]")
    ax.set_ylabel("delivered packets within [%]")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(handles=drawn, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
              frameon=False, title="flow", title_fontsize="small")
    layout.suptitle(fig, title)
    return fig


def rx_drops_figure(flows: Mapping[str, Any], title: str) -> Figure | None:
    """Per flow, its dropped packets stacked by reason; ``None`` if nothing was dropped.

    ``flows`` is the summary's ``flows`` section (``{name: {"dropped_by": {reason: n}}}``).
    """
    names = sorted(flows)
    by = {n: flows[n].get("dropped_by") or {} for n in names if isinstance(flows[n], Mapping)}
    reasons = sorted({r for d in by.values() for r, v in d.items() if v})
    if not names or not reasons:
        return None
    fig, ax = layout.single_axes(RX_DROPS)
    x = np.arange(len(names), dtype=float)
    bottom = np.zeros(len(names))
    for k, reason in enumerate(reasons):
        h = np.array([float(by.get(n, {}).get(reason, 0)) for n in names])
        ax.bar(x, h, 0.6, bottom=bottom, label=reason, color=f"C{k % 10}")
        bottom += h
    ax.set_xticks(x, names)
    ax.set_ylabel("packets dropped")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False,
              title="reason", title_fontsize="small")
    layout.suptitle(fig, title)
    return fig


def rx_priority_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """The network task's highest priority per bin and the share of the bin in polling mode."""
    prio = layout.column(ts, "net_prio_max")
    poll = layout.column(ts, "polling_s")
    if prio is None and poll is None:
        return None
    fig, ax = layout.single_axes(RX_PRIORITY)
    lines = []
    if prio is not None:
        lines += layout.stairs(
            ax, ts, prio, color="tab:purple", lw=1.4, label="network task priority (max)"
        )
        ax.set_ylim(0, max(1.0, layout.finite_max(prio) + 1.0))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("highest priority in the bin")
    ax.grid(True, alpha=0.3)
    if poll is not None:
        width = layout.bin_width(ts)
        ax2 = ax.twinx()
        share = 100.0 * poll / width if width > 0 else poll
        lines += layout.stairs(
            ax2, ts, share, color="tab:orange", lw=1.4, label="time in polling mode [%]"
        )
        ax2.set_ylim(0, 105)
        ax2.set_ylabel("polling mode [% of the bin]", color="tab:orange")
    layout.legend_top(fig, lines)
    layout.suptitle(fig, title)
    return fig


_DETECTOR_LABELS = {
    "late": "late critical cycles",
    "irq": "slices over the interrupt threshold",
    "fill": "RX queue fill reached the high mark",
}


def detection_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """The overload timeline: how often each of libshield's detectors fired per bin."""
    keys = [k for k in sorted(ts) if k.startswith("detected_")]
    cols = [(k[len("detected_") :], layout.column(ts, k)) for k in keys]
    cols = [(name, y) for name, y in cols if y is not None and np.any(y)]
    if not cols:
        return None
    n = len(cols)
    fig = layout.new_figure(7.0, 0.9 + 1.3 * n, top=layout.TITLE_IN + 0.05, rows=n, hgap=0.35)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    colors = {"late": "tab:red", "irq": "tab:blue", "fill": "tab:green"}
    for ax, (name, y) in zip(axes, cols, strict=True):
        layout.stairs(ax, ts, y, color=colors.get(name, "tab:gray"), lw=1.4)
        ax.set_ylabel("per bin", fontsize="small")
        ax.set_title(_DETECTOR_LABELS.get(name, name), fontsize="small", loc="left")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    layout.suptitle(fig, title)
    return fig


#: The figures of one run, by the name of their file (without ``.png``); the
#: optional ones are drawn only when the run has what they show.
_RUN_FIGURES = {
    "packets": packets_figure,
    "critical": critical_figure,
    "flows": flows_figure,
    "cycle_time": cycle_time_figure,
    "latency": latency_figure,
    "rx_drops": rx_drops_figure,
    "rx_priority": rx_priority_figure,
    "detection": detection_figure,
}
_OPTIONAL = ("flows", "cycle_time", "latency", "rx_drops", "rx_priority", "detection")


def run_figure_jobs(
    result: Any, title: str, period_us: float | None = None
) -> list[tuple[str, tuple[Any, ...]]]:
    """Each figure one run may have, in the order it is written: ``(name, arguments)``
    of :func:`run_figure_png`, plain data (arrays, mappings, strings) that pickle."""
    ts = result.timeseries
    jobs: list[tuple[str, tuple[Any, ...]]] = [
        ("packets", (ts, f"{title}: sent, received, processed packets")),
        ("critical", (ts, f"{title}: critical cycles and lateness")),
        ("flows", (ts, f"{title}: packets per flow")),
        ("cycle_time", (getattr(result, "cycle_time_hist", None),
                        f"{title}: critical cycle times", period_us)),
    ]
    lat = getattr(result, "flow_latency_hist", None)
    if isinstance(lat, Mapping) and lat:
        jobs.append(("latency", (lat, f"{title}: packet latency per flow")))
    if getattr(result, "rx", None) is not None:
        jobs.append(("rx_drops", (result.flows, f"{title}: drops per flow by reason")))
        jobs.append(("rx_priority", (ts, f"{title}: network task priority and polling")))
    jobs.append(("detection", (ts, f"{title}: overload detectors")))
    return jobs


def run_figure_png(name: str, *args: Any) -> bytes | None:
    """Draw the run figure ``name`` of :func:`run_figure_jobs` as PNG bytes; ``None``
    when the run has nothing it shows. A process pool can call it."""
    fig = _RUN_FIGURES[name](*args)
    return None if fig is None else layout.png_bytes(fig)


#: The order a pool is given a run's figures in, the longest to draw first (panels
#: per flow or detector, then the critical figure's twin axes, then the log axes),
#: so that no worker starts a long one while the others are done: with two workers
#: the four figures of a run end a tenth sooner than in their file order. Those
#: not named here come last.
_DRAW_FIRST = ("flows", "detection", "critical", "rx_priority", "latency", "cycle_time",
               "rx_drops", "packets")


def submit_run_figures(
    jobs: list[tuple[str, tuple[Any, ...]]], pool: Executor | None
) -> list[Future]:
    """The figures of :func:`run_figure_jobs` handed to ``pool`` to draw (nothing
    without one), the longest first (:data:`_DRAW_FIRST`); the futures in the
    jobs' order: for :func:`run_figures`'s ``drawing``."""
    if pool is None:
        return []
    rank = {name: i for i, name in enumerate(_DRAW_FIRST)}
    order = sorted(range(len(jobs)), key=lambda i: rank.get(jobs[i][0], len(rank)))
    futures: dict[int, Future] = {i: pool.submit(run_figure_png, jobs[i][0], *jobs[i][1])
                                  for i in order}
    return [futures[i] for i in range(len(jobs))]


def run_figures(
    result: Any,
    title: str,
    out_dir: str | Path,
    period_us: float | None = None,
    *,
    pool: Executor | None = None,
    drawing: list[Future] | None = None,
) -> dict[str, Path]:
    """Write the figures of one run; returns ``{"packets": path, ...}``.

    With ``pool`` (a process pool, e.g. :func:`rtshield.runner.figure_workers`)
    the figures are drawn there, side by side, and written here, in the same
    order and with the same bytes as when drawn in this process; ``drawing``:
    what :func:`submit_run_figures` returned for the same run earlier (the pool
    drew meanwhile).
    """
    out = Path(out_dir)
    jobs = run_figure_jobs(result, title, period_us)
    futures = drawing if drawing is not None else submit_run_figures(jobs, pool)
    paths: dict[str, Path] = {}
    for i, (name, args) in enumerate(jobs):  # each written as soon as it is drawn
        png = futures[i].result() if futures else run_figure_png(name, *args)
        if png is not None:
            paths[name] = atomic_write(out / f"{name}.png", png)
    for optional in _OPTIONAL:
        if optional not in paths:  # an earlier run's figure: only if rtshield wrote it
            remove_ours(out / f"{optional}.png")
    return paths
