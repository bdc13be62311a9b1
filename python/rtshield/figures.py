"""Figures of a run and of a comparison, in the style of Danicki et al. Figures 6–8.

* *packets*: sent (offered), received (by the ISR) and processed (by the
  driver) packets per second over time — Danicki et al. Figures 6a, 6c, 7a,
  7c, 8;
* *critical*: completed critical cycles per second and the accumulated
  lateness per second over time — Danicki et al. Figures 6b, 6d, 7b, 7d;
* *cycle time*: a histogram of the critical task's cycle times
  (cyclictest-style, as in the paper on industrial device architectures);
* *latency*: per-flow histograms of packet latency, arrival to delivery;
* with Behnke et al.'s receive path (``[rx]``): *rx drops*, each flow's
  dropped packets stacked by reason, and *rx priority*, the network task's
  highest priority per bin (priority inheritance) with the share of the bin
  spent in polling mode (the global limit).

Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot
state, safe in worker processes) and written as PNG atomically, without a
timestamp in the metadata so the same data give the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rtshield.outputs import atomic_write, remove_ours

__all__ = [
    "compare_figures",
    "critical_figure",
    "cycle_time_figure",
    "grid_figure",
    "latency_figure",
    "overlay_figure",
    "packets_figure",
    "png_bytes",
    "run_figures",
    "rx_drops_figure",
    "rx_priority_figure",
    "detection_figure",
]

_PNG_META = {"Software": None}
_SERIES = (
    ("offered", "sent", "tab:blue"),
    ("received", "received", "tab:orange"),
    ("processed", "processed", "tab:green"),
)


def png_bytes(fig: Figure, dpi: int = 110) -> bytes:
    """Render ``fig`` to PNG bytes (deterministic metadata)."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=_PNG_META)
    return buf.getvalue()


def _col(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    v = ts.get(key)
    return None if v is None else np.asarray(v, dtype=float)


def _t(ts: Mapping[str, Any]) -> np.ndarray:
    t = _col(ts, "t_s")
    if t is None:
        n = len(next(iter(ts.values()))) if ts else 0
        t = np.arange(n, dtype=float)
    return t


def _edges(ts: Mapping[str, Any]) -> np.ndarray:
    """Bin edges: each bin's start, plus the end of the last one."""
    t = _t(ts)
    width = float(t[1] - t[0]) if len(t) > 1 else 1.0
    return np.append(t, t[-1] + width) if len(t) else np.array([0.0])


def _stairs(ax: Any, ts: Mapping[str, Any], y: np.ndarray, **kw: Any) -> list:
    """Draw a per-bin series as flat steps over each bin; returns the artists."""
    return [ax.stairs(y, _edges(ts), baseline=None, **kw)]


def _per_s(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    """A per-bin count as a rate per second (bins may be shorter or longer than 1 s)."""
    v = _col(ts, key)
    if v is None:
        return None
    t = _t(ts)
    width = float(t[1] - t[0]) if len(t) > 1 else 1.0
    return v / width if width > 0 else v


def _packets_axes(ax: Any, ts: Mapping[str, Any], *, legend: bool = True) -> None:
    # received is drawn wide and pale under processed, so it stays visible where they agree
    widths = {"offered": 1.4, "received": 3.2, "processed": 1.2}
    alphas = {"offered": 1.0, "received": 0.55, "processed": 1.0}
    for key, label, color in _SERIES:
        y = _per_s(ts, key)
        if y is not None:
            _stairs(ax, ts, y, label=label, color=color, lw=widths[key], alpha=alphas[key])
    ax.set_xlabel("time [s]")
    ax.set_ylabel("packets per second")
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    if legend:
        ax.legend(loc="upper left", fontsize="small")


def _critical_axes(ax: Any, ts: Mapping[str, Any], *, legend: bool = True) -> None:
    cycles = _per_s(ts, "cycles")
    late = _col(ts, "lateness_pct")
    lines = []
    if cycles is not None:
        lines += _stairs(ax, ts, cycles, color="tab:blue", lw=1.4, label="completed cycles / s")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("completed critical cycles per second")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax2 = ax.twinx()
    if late is not None:
        lines += _stairs(ax2, ts, late, color="tab:red", lw=1.4, label="accumulated lateness [%]")
        top = float(np.nanmax(late)) if len(late) else 0.0
        ax2.set_ylim(0, max(10.0, top * 1.1 if math.isfinite(top) else 10.0))
    ax2.set_ylabel("accumulated lateness per bin [%]", color="tab:red")
    if legend and lines:
        ax.legend(lines, [ln.get_label() for ln in lines], loc="upper left", fontsize="small")


def packets_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Sent, received and processed packets per second over time."""
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    _packets_axes(ax, ts)
    ax.set_title(title, fontsize="medium")
    return fig


def critical_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Completed critical cycles per second and accumulated lateness over time."""
    fig = Figure(figsize=(7.0, 3.6), layout="constrained")
    ax = fig.add_subplot()
    _critical_axes(ax, ts)
    ax.set_title(title, fontsize="medium")
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


def cycle_time_figure(hist: Any, title: str, period_us: float | None = None) -> Figure | None:
    """Histogram of critical cycle times (log count axis); ``None`` if there is no data."""
    arrays = hist_arrays(hist)
    if arrays is None or not np.any(arrays[1] > 0):
        return None
    edges, counts = arrays
    nz = np.nonzero(counts)[0]
    lo, hi = int(nz[0]), int(nz[-1]) + 1
    fig = Figure(figsize=(7.0, 3.2), layout="constrained")
    ax = fig.add_subplot()
    ax.stairs(counts[lo:hi], edges[lo : hi + 1], fill=True, color="tab:blue", alpha=0.8)
    ax.set_yscale("log")
    if period_us:
        ax.axvline(period_us, color="tab:red", ls="--", lw=1, label="period")
        ax.legend(loc="upper right", fontsize="small")
    ax.set_xlabel("cycle time [µs]")
    ax.set_ylabel("cycles")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    return fig


def latency_figure(hists: Mapping[str, Any], title: str) -> Figure | None:
    """Per-flow packet latency (arrival → delivery): share of delivered packets within x."""
    fig = Figure(figsize=(7.0, 3.2), layout="constrained")
    ax = fig.add_subplot()
    drawn = False
    for name in sorted(hists):
        arrays = hist_arrays(hists[name])
        if arrays is None or not np.any(arrays[1] > 0):
            continue
        edges, counts = arrays
        cdf = np.cumsum(counts) / counts.sum()
        nz = np.nonzero(counts)[0]
        lo, hi = int(nz[0]), int(nz[-1]) + 1
        ax.step(edges[lo + 1 : hi + 1], 100.0 * cdf[lo:hi], where="post", lw=1.4, label=name)
        drawn = True
    if not drawn:
        return None
    ax.set_xscale("log")
    ax.set_ylim(0, 101)
    ax.set_xlabel("latency, arrival to delivery [µs]")
    ax.set_ylabel("delivered packets within [%]")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(loc="lower right", fontsize="small")
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
    fig = Figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(names), dtype=float)
    bottom = np.zeros(len(names))
    for k, reason in enumerate(reasons):
        h = np.array([float(by.get(n, {}).get(reason, 0)) for n in names])
        ax.bar(x, h, 0.6, bottom=bottom, label=reason, color=f"C{k % 10}")
        bottom += h
    ax.set_xticks(x, names)
    ax.set_ylabel("packets dropped")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize="small", title="reason", title_fontsize="small")
    return fig


def rx_priority_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """The network task's highest priority per bin and the share of the bin in polling mode."""
    prio = _col(ts, "net_prio_max")
    poll = _col(ts, "polling_s")
    if prio is None and poll is None:
        return None
    fig = Figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    lines = []
    if prio is not None:
        lines += _stairs(
            ax, ts, prio, color="tab:purple", lw=1.4, label="network task priority (max)"
        )
        ax.set_ylim(0, max(1.0, float(np.nanmax(prio)) + 1.0) if len(prio) else 1.0)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("highest priority in the bin")
    ax.grid(True, alpha=0.3)
    if poll is not None:
        t = _t(ts)
        width = float(t[1] - t[0]) if len(t) > 1 else 1.0
        ax2 = ax.twinx()
        share = 100.0 * poll / width if width > 0 else poll
        lines += _stairs(
            ax2, ts, share, color="tab:orange", lw=1.4, label="time in polling mode [%]"
        )
        ax2.set_ylim(0, 105)
        ax2.set_ylabel("time in polling mode [% of the bin]", color="tab:orange")
    ax.set_title(title, fontsize="medium")
    if lines:
        ax.legend(lines, [ln.get_label() for ln in lines], loc="upper left", fontsize="small")
    return fig


_DETECTOR_LABELS = {
    "late": "late critical cycles",
    "irq": "slices over the interrupt threshold",
    "fill": "RX queue fill reached the high mark",
}


def detection_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """The overload timeline: how often each of libshield's detectors fired per bin."""
    cols = [(k[len("detected_") :], _col(ts, k)) for k in sorted(ts) if k.startswith("detected_")]
    cols = [(name, y) for name, y in cols if y is not None and np.any(y)]
    if not cols:
        return None
    fig = Figure(figsize=(7.0, 1.2 + 1.3 * len(cols)), layout="constrained")
    axes = fig.subplots(len(cols), 1, sharex=True, squeeze=False)[:, 0]
    colors = {"late": "tab:red", "irq": "tab:blue", "fill": "tab:green"}
    for ax, (name, y) in zip(axes, cols, strict=True):
        _stairs(ax, ts, y, color=colors.get(name, "tab:gray"), lw=1.4)
        ax.set_ylabel("per bin", fontsize="small")
        ax.set_title(_DETECTOR_LABELS.get(name, name), fontsize="small", loc="left")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(title, fontsize="medium")
    return fig


def _save(fig: Figure, path: Path) -> Path:
    return atomic_write(path, png_bytes(fig))


def run_figures(
    result: Any, title: str, out_dir: str | Path, period_us: float | None = None
) -> dict[str, Path]:
    """Write the figures of one run; returns ``{"packets": path, ...}``."""
    out = Path(out_dir)
    ts = result.timeseries
    paths = {
        "packets": _save(
            packets_figure(ts, f"{title}: sent, received, processed packets"), out / "packets.png"
        ),
        "critical": _save(
            critical_figure(ts, f"{title}: critical cycles and lateness"), out / "critical.png"
        ),
    }
    fig = cycle_time_figure(
        getattr(result, "cycle_time_hist", None), f"{title}: critical cycle times", period_us
    )
    if fig is not None:
        paths["cycle_time"] = _save(fig, out / "cycle_time.png")
    lat = getattr(result, "flow_latency_hist", None)
    if isinstance(lat, Mapping) and lat:
        fig = latency_figure(lat, f"{title}: packet latency per flow")
        if fig is not None:
            paths["latency"] = _save(fig, out / "latency.png")
    if getattr(result, "rx", None) is not None:
        fig = rx_drops_figure(result.flows, f"{title}: drops per flow by reason")
        if fig is not None:
            paths["rx_drops"] = _save(fig, out / "rx_drops.png")
        fig = rx_priority_figure(ts, f"{title}: network task priority and polling")
        if fig is not None:
            paths["rx_priority"] = _save(fig, out / "rx_priority.png")
    fig = detection_figure(ts, f"{title}: overload detectors")
    if fig is not None:
        paths["detection"] = _save(fig, out / "detection.png")
    for optional in ("cycle_time", "latency", "rx_drops", "rx_priority", "detection"):
        if optional not in paths:  # an earlier run's figure: only if rtshield wrote it
            remove_ours(out / f"{optional}.png")
    return paths


def grid_figure(runs: Sequence[tuple[str, Mapping[str, Any]]], kind: str) -> Figure:
    """Small multiples, one panel per run: ``kind`` is ``"packets"`` or ``"critical"``."""
    n = len(runs)
    cols = 2 if n > 1 else 1
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(6.0 * cols, 2.9 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    draw = _packets_axes if kind == "packets" else _critical_axes
    for i, (name, ts) in enumerate(runs):
        ax = axes[i // cols][i % cols]
        draw(ax, ts, legend=(i == 0))
        ax.set_title(name, fontsize="medium")
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    return fig


def overlay_figure(
    runs: Sequence[tuple[str, Mapping[str, Any]]],
    column: str,
    ylabel: str,
    title: str,
    *,
    per_second: bool = True,
    reference: str | None = None,
) -> Figure:
    """One line per run for ``column`` (e.g. processed packets, lateness)."""
    fig = Figure(figsize=(8.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    if reference and runs:
        ref = _per_s(runs[0][1], reference)
        if ref is not None:
            _stairs(ax, runs[0][1], ref, color="0.6", lw=2.5, ls=":", label=reference)
    for name, ts in runs:
        y = _per_s(ts, column) if per_second else _col(ts, column)
        if y is not None:
            _stairs(ax, ts, y, lw=1.3, label=name)
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize="small", ncol=2)
    return fig


def compare_figures(
    runs: Sequence[tuple[str, Mapping[str, Any]]], out_dir: str | Path
) -> dict[str, Path]:
    """Write the comparative figures; returns ``{"packets_grid": path, ...}``."""
    out = Path(out_dir)
    return {
        "packets_grid": _save(grid_figure(runs, "packets"), out / "compare_packets.png"),
        "critical_grid": _save(grid_figure(runs, "critical"), out / "compare_critical.png"),
        "processed": _save(
            overlay_figure(
                runs,
                "processed",
                "packets processed per second",
                "Packets processed by the driver",
                reference="offered",
            ),
            out / "compare_processed.png",
        ),
        "lateness": _save(
            overlay_figure(
                runs,
                "lateness_pct",
                "accumulated lateness [%]",
                "Accumulated lateness of the critical task per bin",
                per_second=False,
            ),
            out / "compare_lateness.png",
        ),
    }
