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
timestamp in the metadata so the same data give the same bytes. Every figure
has a fixed layout (margins set in inches, no tight or constrained layout
pass), its legend outside the data (in the top margin or to the right), and
matplotlib is imported only by the functions that draw, so importing this
module is cheap. Comparisons are small multiples: one panel per
configuration on shared axes. :func:`render` draws one figure by name from
plain data and writes it, the picklable entry point for worker processes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rtshield.outputs import atomic_write, remove_ours

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure

__all__ = [
    "compare_figures",
    "critical_figure",
    "cycle_time_figure",
    "detection_figure",
    "grid_figure",
    "hist_arrays",
    "latency_figure",
    "overlay_figure",
    "packets_figure",
    "png_bytes",
    "render",
    "run_figures",
    "rx_drops_figure",
    "rx_priority_figure",
]

_PNG_META = {"Software": None}
_SERIES = (
    ("offered", "sent", "tab:blue"),
    ("received", "received", "tab:orange"),
    ("processed", "processed", "tab:green"),
)
#: Lateness above this many percent is drawn on a logarithmic scale (symlog), so
#: a run that is 100 % late and one that is 80 000 % late both stay readable.
_LATE_LINEAR_PCT = 100.0

# Fixed margins, in inches: room for a title line and a legend row above the axes,
# and for the panel titles of small multiples.
_TITLE_IN = 0.32
_LEGEND_IN = 0.30
_PANEL_TITLE_IN = 0.25


def png_bytes(fig: Figure, dpi: int = 110) -> bytes:
    """Render ``fig`` to PNG bytes (deterministic metadata)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=_PNG_META)
    return buf.getvalue()


def _figure(
    width: float,
    height: float,
    *,
    left: float = 0.8,
    right: float = 0.25,
    top: float = _TITLE_IN + _LEGEND_IN,
    bottom: float = 0.5,
    rows: int = 1,
    cols: int = 1,
    hgap: float = 0.0,
    wgap: float = 0.0,
) -> Figure:
    """A figure whose axes area is fixed by margins and gaps given in inches."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes_w = (width - left - right - wgap * (cols - 1)) / cols
    axes_h = (height - top - bottom - hgap * (rows - 1)) / rows
    fig.subplots_adjust(
        left=left / width,
        right=1.0 - right / width,
        top=1.0 - top / height,
        bottom=bottom / height,
        wspace=wgap / axes_w if cols > 1 else 0.2,
        hspace=hgap / axes_h if rows > 1 else 0.2,
    )
    return fig


def _title(fig: Figure, title: str) -> None:
    h = fig.get_figheight()
    fig.suptitle(title, y=1.0 - 0.06 / h, va="top", fontsize="medium")


def _legend_top(fig: Figure, handles: Sequence[Any], labels: Sequence[str] | None = None,
                *, below_title: bool = True) -> None:
    """One legend for the whole figure, in the top margin (outside every panel)."""
    if not handles:
        return
    h = fig.get_figheight()
    y = 1.0 - ((_TITLE_IN if below_title else 0.0) + 0.02) / h
    labels = list(labels) if labels is not None else [a.get_label() for a in handles]
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y),
               ncol=min(len(handles), 5), frameon=False, fontsize="small")


def _col(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    v = ts.get(key)
    return None if v is None else np.asarray(v, dtype=float)


def _t(ts: Mapping[str, Any]) -> np.ndarray:
    t = _col(ts, "t_s")
    if t is None:
        n = len(next(iter(ts.values()))) if ts else 0
        t = np.arange(n, dtype=float)
    return t


def _width(ts: Mapping[str, Any]) -> float:
    t = _t(ts)
    return float(t[1] - t[0]) if len(t) > 1 else 1.0


def _edges(ts: Mapping[str, Any]) -> np.ndarray:
    """Bin edges: each bin's start, plus the end of the last one."""
    t = _t(ts)
    return np.append(t, t[-1] + _width(ts)) if len(t) else np.array([0.0])


def _stairs(ax: Any, ts: Mapping[str, Any], y: np.ndarray, **kw: Any) -> list:
    """Draw a per-bin series as flat steps over each bin; returns the artists."""
    return [ax.stairs(y, _edges(ts), baseline=None, **kw)]


def _per_s(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    """A per-bin count as a rate per second (bins may be shorter or longer than 1 s)."""
    v = _col(ts, key)
    if v is None:
        return None
    width = _width(ts)
    return v / width if width > 0 else v


def _finite_max(*arrays: np.ndarray | None) -> float:
    vals = [float(np.nanmax(a)) for a in arrays if a is not None and len(a)]
    vals = [v for v in vals if math.isfinite(v)]
    return max(vals) if vals else 0.0


def _packets_axes(ax: Any, ts: Mapping[str, Any], *, legend: bool = False) -> list:
    """Sent, received and processed per second; returns the artists for a legend."""
    # received is drawn wide and pale under processed, so it stays visible where they agree
    widths = {"offered": 1.4, "received": 3.2, "processed": 1.2}
    alphas = {"offered": 1.0, "received": 0.55, "processed": 1.0}
    artists = []
    for key, label, color in _SERIES:
        y = _per_s(ts, key)
        if y is not None:
            artists += _stairs(ax, ts, y, label=label, color=color, lw=widths[key],
                               alpha=alphas[key])
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    return artists


def _late_scale(ax: Any, top: float) -> None:
    """The lateness axis: linear up to 100 %, logarithmic above when needed."""
    if top > 2 * _LATE_LINEAR_PCT:
        ax.set_yscale("symlog", linthresh=_LATE_LINEAR_PCT, linscale=1.0)
        ax.set_ylim(0, top * 1.5)
    else:
        ax.set_ylim(0, max(10.0, top * 1.1))


def _critical_axes(ax: Any, ts: Mapping[str, Any], *, late_top: float | None = None,
                   cycles_top: float | None = None) -> tuple[Any, list]:
    """Completed cycles per second (left) and lateness (right twin axis)."""
    cycles = _per_s(ts, "cycles")
    late = _col(ts, "lateness_pct")
    artists = []
    if cycles is not None:
        artists += _stairs(ax, ts, cycles, color="tab:blue", lw=1.4,
                           label="completed critical cycles / s")
    top = cycles_top if cycles_top is not None else _finite_max(cycles)
    ax.set_ylim(0, max(1.0, top * 1.08))
    ax.grid(True, alpha=0.3)
    ax2 = ax.twinx()
    if late is not None:
        artists += _stairs(ax2, ts, late, color="tab:red", lw=1.4,
                           label="accumulated lateness per bin [%]")
    _late_scale(ax2, late_top if late_top is not None else _finite_max(late))
    ax2.tick_params(axis="y", colors="tab:red")
    return ax2, artists


def packets_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Sent, received and processed packets per second over time."""
    fig = _figure(7.0, 3.8, left=0.85)
    ax = fig.add_subplot()
    _legend_top(fig, _packets_axes(ax, ts))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("packets per second")
    _title(fig, title)
    return fig


def critical_figure(ts: Mapping[str, Any], title: str) -> Figure:
    """Completed critical cycles per second and accumulated lateness over time."""
    fig = _figure(7.0, 3.8, left=0.7, right=0.85)
    ax = fig.add_subplot()
    ax2, artists = _critical_axes(ax, ts)
    _legend_top(fig, artists)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("completed cycles per second")
    ax2.set_ylabel("accumulated lateness [%]", color="tab:red")
    _title(fig, title)
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
    fig = _figure(7.0, 3.5)
    ax = fig.add_subplot()
    artists = [ax.stairs(counts, edges * scale, fill=True, color="tab:blue", alpha=0.8,
                         baseline=0.5, label=f"cycles ({_count(counts.sum())} in all)")]
    ax.stairs(counts, edges * scale, color="tab:blue", lw=0.8, baseline=0.5)
    if edges[-1] / max(edges[0], 1e-9) > _LOG_SPAN:
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.5, max(2.0, float(counts.max()) * 2.0))
    if period_us:
        artists.append(ax.axvline(period_us * scale, color="tab:red", ls="--", lw=1,
                                  label=f"period {period_us * scale:g} {unit}"))
        late = float(counts[edges[:-1] >= period_us * 1.0001].sum()) if len(counts) else 0.0
        if late:
            artists[0].set_label(f"cycles ({_count(counts.sum())} in all, "
                                 f"{_count(late)} longer than the period)")
    _legend_top(fig, artists)
    ax.set_xlabel(f"cycle time [{unit}]")
    ax.set_ylabel("cycles (log)")
    ax.grid(True, alpha=0.3, which="both")
    _title(fig, title)
    return fig


def latency_figure(hists: Mapping[str, Any], title: str) -> Figure | None:
    """Per-flow packet latency (arrival → delivery): share of delivered packets within x."""
    fig = _figure(7.0, 3.4, top=_TITLE_IN + 0.05, right=1.6)
    ax = fig.add_subplot()
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
    ax.set_ylim(0, 101)
    ax.set_xlabel("latency, arrival to delivery [µs]")
    ax.set_ylabel("delivered packets within [%]")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(handles=drawn, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small",
              frameon=False, title="flow", title_fontsize="small")
    _title(fig, title)
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
    fig = _figure(7.0, 3.6, top=_TITLE_IN + 0.05, right=1.8, left=0.9)
    ax = fig.add_subplot()
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
    _title(fig, title)
    return fig


def rx_priority_figure(ts: Mapping[str, Any], title: str) -> Figure | None:
    """The network task's highest priority per bin and the share of the bin in polling mode."""
    prio = _col(ts, "net_prio_max")
    poll = _col(ts, "polling_s")
    if prio is None and poll is None:
        return None
    fig = _figure(7.0, 3.6, left=0.7, right=0.85)
    ax = fig.add_subplot()
    lines = []
    if prio is not None:
        lines += _stairs(
            ax, ts, prio, color="tab:purple", lw=1.4, label="network task priority (max)"
        )
        ax.set_ylim(0, max(1.0, _finite_max(prio) + 1.0))
    ax.set_xlabel("time [s]")
    ax.set_ylabel("highest priority in the bin")
    ax.grid(True, alpha=0.3)
    if poll is not None:
        width = _width(ts)
        ax2 = ax.twinx()
        share = 100.0 * poll / width if width > 0 else poll
        lines += _stairs(
            ax2, ts, share, color="tab:orange", lw=1.4, label="time in polling mode [%]"
        )
        ax2.set_ylim(0, 105)
        ax2.set_ylabel("polling mode [% of the bin]", color="tab:orange")
    _legend_top(fig, lines)
    _title(fig, title)
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
    n = len(cols)
    fig = _figure(7.0, 0.9 + 1.3 * n, top=_TITLE_IN + 0.05, rows=n, hgap=0.35)
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    colors = {"late": "tab:red", "irq": "tab:blue", "fill": "tab:green"}
    for ax, (name, y) in zip(axes, cols, strict=True):
        _stairs(ax, ts, y, color=colors.get(name, "tab:gray"), lw=1.4)
        ax.set_ylabel("per bin", fontsize="small")
        ax.set_title(_DETECTOR_LABELS.get(name, name), fontsize="small", loc="left")
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    _title(fig, title)
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


def _grid_shape(n: int) -> tuple[int, int]:
    cols = 1 if n <= 1 else 2 if n <= 8 else 3
    return math.ceil(n / cols), cols


def grid_figure(runs: Sequence[tuple[str, Mapping[str, Any]]], kind: str) -> Figure:
    """Small multiples, one panel per run on shared axes: ``kind`` is ``"packets"`` or
    ``"critical"``. Axis labels on the outer panels only, one legend above them all."""
    n = max(1, len(runs))
    rows, cols = _grid_shape(n)
    twin = kind != "packets"
    panel_w, panel_h = (3.4, 2.1) if cols > 2 else (4.8, 2.1)
    left, right = (0.85, 0.85 if twin else 0.25)
    wgap = 0.75 if twin else 0.25
    width = left + right + cols * panel_w + (cols - 1) * wgap
    top = _TITLE_IN + _LEGEND_IN + _PANEL_TITLE_IN
    height = top + 0.55 + rows * panel_h + (rows - 1) * 0.45
    fig = _figure(width, height, left=left, right=right, top=top, bottom=0.55, rows=rows,
                  cols=cols, hgap=0.45, wgap=wgap)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    artists: list = []
    if kind == "packets":
        for i, (name, ts) in enumerate(runs):
            ax = axes[i // cols][i % cols]
            drawn = _packets_axes(ax, ts)
            artists = artists or drawn
            ax.set_title(name, fontsize="medium")
        _title(fig, "Sent, received and processed packets per second")
        ylabel = "packets per second"
    else:
        late_top = _finite_max(*(_col(ts, "lateness_pct") for _, ts in runs))
        cyc_top = _finite_max(*(_per_s(ts, "cycles") for _, ts in runs))
        first_twin = None
        for i, (name, ts) in enumerate(runs):
            r, c = divmod(i, cols)
            ax = axes[r][c]
            ax2, drawn = _critical_axes(ax, ts, late_top=late_top, cycles_top=cyc_top)
            if first_twin is None:
                first_twin = ax2
            else:
                ax2.sharey(first_twin)
            if c != cols - 1 and i != len(runs) - 1:
                ax2.tick_params(axis="y", labelright=False)
            else:
                ax2.set_ylabel("lateness [%]", color="tab:red")
            artists = artists or drawn
            ax.set_title(name, fontsize="medium")
        _title(fig, "Completed critical cycles per second and accumulated lateness per bin")
        ylabel = "cycles per second"
    _label_grid(axes, n, len(runs), ylabel)
    _legend_top(fig, artists)
    return fig


def _label_grid(axes, n: int, used: int, ylabel: str) -> None:
    """Label a grid of ``n`` time panels: ``ylabel`` on the first column, the time axis
    under the lowest panel of each column; the panels past ``used`` are hidden."""
    rows, cols = len(axes), len(axes[0])
    for r in range(rows):
        axes[r][0].set_ylabel(ylabel)
    for j in range(n):
        r, c = divmod(j, cols)
        if r == rows - 1 or j + cols >= n:
            axes[r][c].set_xlabel("time [s]")
            axes[r][c].xaxis.set_tick_params(labelbottom=True)
    for j in range(used, rows * cols):
        axes[j // cols][j % cols].set_visible(False)


def overlay_figure(
    runs: Sequence[tuple[str, Mapping[str, Any]]],
    column: str,
    ylabel: str,
    title: str,
    *,
    per_second: bool = True,
    reference: str | None = None,
) -> Figure:
    """``column`` (e.g. processed packets, lateness) as small multiples: one panel per run,
    shared axes; ``reference`` (e.g. ``"offered"``) drawn dotted grey in every panel."""
    n = max(1, len(runs))
    rows, cols = _grid_shape(n)
    panel_w, panel_h = (3.4, 1.9) if cols > 2 else (4.8, 1.9)
    width = 0.85 + 0.25 + cols * panel_w + (cols - 1) * 0.25
    top = _TITLE_IN + _LEGEND_IN + _PANEL_TITLE_IN
    height = top + 0.55 + rows * panel_h + (rows - 1) * 0.45
    fig = _figure(width, height, left=0.85, right=0.25, top=top, bottom=0.55, rows=rows, cols=cols,
                  hgap=0.45, wgap=0.25)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    artists: list = []
    for i, (name, ts) in enumerate(runs):
        ax = axes[i // cols][i % cols]
        drawn = []
        if reference:
            ref = _per_s(ts, reference)
            if ref is not None:
                drawn += _stairs(ax, ts, ref, color="0.6", lw=2.0, ls=":", label=reference)
        y = _per_s(ts, column) if per_second else _col(ts, column)
        if y is not None:
            drawn += _stairs(ax, ts, y, lw=1.3, color="tab:green", label=ylabel)
        artists = artists or drawn
        ax.set_title(name, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    _label_grid(axes, n, len(runs), ylabel)
    _legend_top(fig, artists)
    _title(fig, title)
    return fig


def compare_figures(
    runs: Sequence[tuple[str, Mapping[str, Any]]], out_dir: str | Path
) -> dict[str, Path]:
    """Write the comparative figures; returns ``{"packets_grid": path, ...}``.

    Both are small multiples, one panel per configuration on shared axes, in
    the style of Danicki et al. Figures 6–8 (packets) and 6b/d, 7b/d
    (critical cycles and lateness).
    """
    out = Path(out_dir)
    for stale in ("compare_processed.png", "compare_lateness.png"):  # earlier versions' overlays
        remove_ours(out / stale)
    return {
        "packets_grid": _save(grid_figure(runs, "packets"), out / "compare_packets.png"),
        "critical_grid": _save(grid_figure(runs, "critical"), out / "compare_critical.png"),
    }


#: The figures :func:`render` can draw, by name.
_FIGURES: dict[str, Callable[..., Figure | None]] = {
    "packets": packets_figure,
    "critical": critical_figure,
    "cycle_time": cycle_time_figure,
    "latency": latency_figure,
    "rx_drops": rx_drops_figure,
    "rx_priority": rx_priority_figure,
    "detection": detection_figure,
    "grid": grid_figure,
    "overlay": overlay_figure,
}


def render(name: str, path: str | Path, *args: Any, **kwargs: Any) -> Path | None:
    """Draw the figure ``name`` from plain data (arrays, mappings, strings) and write it
    to ``path`` as PNG; ``None`` (and no file) when the figure has nothing to show.

    Everything it takes and returns pickles, so a process pool can call it.
    """
    try:
        fn = _FIGURES[name]
    except KeyError:
        raise ValueError(f"unknown figure {name!r}; known: {', '.join(sorted(_FIGURES))}") from None
    fig = fn(*args, **kwargs)
    return None if fig is None else _save(fig, Path(path))
