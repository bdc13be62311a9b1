"""What a sweep says: one row per point (the swept values, the answer, the key
numbers), the boundary of the safe region along each axis, the points the
report shows (the boundary and the extremes), ``safe_region.json`` and the
figure ``sweep.png``. Everything here works from the table's columns, a few
bytes per point, never from the points' results."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.figures import png_bytes
from rtshield.outputs import atomic_write
from rtshield.sweep.grid import Axis
from rtshield.sweep.limits import MAX_SHOWN
from rtshield.sweep.table import ANSWER_COLUMNS, SWEEP_METRICS, answer, numbers

__all__ = [
    "ANSWER_COLUMNS",
    "MAX_FIGURE_LINES",
    "MAX_SHOWN",
    "FIGURE_COLUMNS",
    "SWEEP_METRICS",
    "answer",
    "boundaries",
    "boundaries_of",
    "read_columns",
    "shown_points",
    "states",
    "sweep_figure",
    "sweep_rows",
    "write_figure",
    "write_safe_region",
]

#: Above this many lines (combinations of the axes after the first), the
#: sweep's figure draws heat maps of the first two axes instead of lines.
MAX_FIGURE_LINES = 12


def sweep_rows(
    axes: Sequence[Axis],
    points: Sequence[Mapping[str, str]],
    summaries: Sequence[Mapping[str, Any]],
    periods_us: Sequence[float] | None = None,
) -> list[dict[str, Any]]:
    """One row per point: the swept values, the answer, then the SWEEP_METRICS columns.

    ``periods_us``: each point's critical period (its deadline); without
    them the answer columns are left out.
    """
    periods = list(periods_us) if periods_us is not None else [None] * len(points)
    return [
        {**{a.key: point[a.key] for a in axes}, **numbers(summ, period)}
        for point, summ, period in zip(points, summaries, periods, strict=True)
    ]


def read_columns(out_dir: Path, columns: Sequence[str]) -> dict[str, np.ndarray]:
    """Columns of ``sweep.parquet`` as arrays (``point`` among them); a missing
    number is NaN, a missing ``safe`` -1."""
    import pyarrow.parquet as pq

    table = pq.read_table(Path(out_dir) / "sweep.parquet", columns=["point", *columns])
    out = {"point": table.column("point").to_numpy()}
    for c in columns:
        col = table.column(c)
        if c == "safe":
            out[c] = np.where(col.is_null().to_numpy(zero_copy_only=False), -1,
                              col.fill_null(False).to_numpy(zero_copy_only=False)).astype(np.int8)
        else:
            out[c] = col.cast("double").to_numpy(zero_copy_only=False).astype(float)
    return out


def states(n: int, point: np.ndarray, values: np.ndarray, missing: float = -1) -> np.ndarray:
    """An array of ``n`` entries in grid order: ``values`` at the indices ``point``,
    ``missing`` elsewhere (a failed point has no row)."""
    out = np.full(n, missing, dtype=np.asarray(values).dtype if len(values) else np.int8)
    out[point] = values
    return out


def boundaries(axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Where the safe region ends along each swept axis, from rows holding the
    swept keys and ``safe`` (:func:`boundaries_of`)."""
    pos = [{v: j for j, v in enumerate(a.values)} for a in axes]
    shape = tuple(len(a.values) for a in axes)
    safe = np.full(math.prod(shape), -1, dtype=np.int8)
    for r in rows:
        if r.get("safe") is None:
            continue
        at = tuple(p.get(r[a.key]) for p, a in zip(pos, axes, strict=True))
        if None not in at:
            safe[np.ravel_multi_index(at, shape)] = 1 if r["safe"] else 0
    return [{k: v for k, v in b.items() if k != "points"} for b in boundaries_of(axes, safe)]


def boundaries_of(axes: Sequence[Axis], safe: np.ndarray) -> list[dict[str, Any]]:
    """Where the safe region ends along each swept axis.

    ``safe`` holds each point's state in grid order (1 safe, 0 not, -1
    unknown). For every axis and every combination of the other axes' values,
    the points in the axis's order (as written on the command line) are
    scanned for changes of ``safe``. One entry per line of the grid: ``axis``,
    ``others`` (``{key: value}``), ``transitions`` (a list of ``(last value
    before, first value after, "safe→unsafe" or "unsafe→safe")``),
    ``verdict``: ``"safe throughout"``, ``"unsafe throughout"``, or the
    transitions in words (``"safe up to 40000, unsafe from 50000"``), and
    ``points``: the grid indices of each transition's two points.
    """
    shape = tuple(len(a.values) for a in axes)
    grid = np.asarray(safe).reshape(shape)
    index = np.arange(grid.size).reshape(shape)
    out = []
    for i, axis in enumerate(axes):
        others = [a for j, a in enumerate(axes) if j != i]
        lines = np.moveaxis(grid, i, -1)
        where = np.moveaxis(index, i, -1)
        for at in np.ndindex(*lines.shape[:-1]):
            known = np.nonzero(lines[at] >= 0)[0]
            if not len(known):
                continue
            line = [(axis.values[k], bool(lines[at][k]), int(where[at][k])) for k in known]
            fixed = {a.key: a.values[j] for a, j in zip(others, at, strict=True)}
            pairs = [(a, b) for a, b in zip(line, line[1:], strict=False) if a[1] != b[1]]
            trans = [(a[0], b[0], "safe→unsafe" if a[1] else "unsafe→safe") for a, b in pairs]
            if not trans:
                verdict = "safe throughout" if line[0][1] else "unsafe throughout"
                verdict += f" ({line[0][0]} … {line[-1][0]})" if len(line) > 1 else ""
            else:
                words = [f"{'safe' if line[0][1] else 'unsafe'} up to {trans[0][0]}"]
                words += [f"{kind.split('→')[1]} from {after}" for _, after, kind in trans]
                verdict = ", ".join(words)
            out.append({
                "axis": axis.key,
                "others": fixed,
                "transitions": trans,
                "verdict": verdict,
                "points": [(a[2], b[2]) for a, b in pairs],
            })
    return out


def shown_points(
    n: int, bounds: Sequence[Mapping[str, Any]], margin: np.ndarray, limit: int = MAX_SHOWN
) -> list[int]:
    """The grid indices of the points the report shows, at most ``limit``: every
    point of a grid that small; else the extremes (the smallest and the largest
    margin, the first in grid order among equals) and the two points of each
    transition of the safe region, spread evenly over the boundary when there
    are more than fit."""
    if n <= limit:
        return list(range(n))
    chosen: list[int] = []
    m = np.asarray(margin, dtype=float)
    if len(m) and np.isfinite(m).any():
        finite = np.where(np.isfinite(m), m, np.nan)
        chosen += [int(np.nanargmin(finite)), int(np.nanargmax(finite))]
    pairs = list(dict.fromkeys(p for b in bounds for p in b.get("points", ())))
    picked = set(chosen)
    for j in _spread(len(pairs)):  # both ends of the boundary, its middle, its quarters, …
        new = picked | set(pairs[j])
        if len(new) <= limit:
            picked = new
    return sorted(picked)[:limit]


def _spread(n: int) -> list[int]:
    """``range(n)`` in an order that covers it evenly from the start: the ends, then
    the middle, the quarters, the eighths, …"""
    order = list(dict.fromkeys([0, n - 1] if n else []))
    seen = set(order)
    den = 2
    while len(order) < n:
        for num in range(1, den, 2):
            j = round(num * (n - 1) / den)
            if j not in seen:
                order.append(j)
                seen.add(j)
        den *= 2
        if den > 2 * n:  # what rounding skipped, in order
            order += [j for j in range(n) if j not in seen]
    return order


def write_safe_region(out_dir: Path, bounds: Sequence[Mapping[str, Any]]) -> Path:
    """``safe_region.json``: the boundaries (without their grid indices), written atomically."""
    doc = [
        {**{k: v for k, v in b.items() if k != "points"},
         "transitions": [list(t) for t in b["transitions"]]}
        for b in bounds
    ]
    return atomic_write(
        Path(out_dir) / "safe_region.json",
        (json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode(),
    )


def _numeric(values: Sequence[str]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


_PANELS = (
    ("processed", "packets processed"),
    ("misses", "deadline misses"),
    ("lateness_bin_max_pct", "worst 1-bin accumulated lateness [%]"),
)

#: The columns the figure draws.
FIGURE_COLUMNS = tuple(c for c, _ in _PANELS)


def _ticks(ax: Any, which: str, values: Sequence[str], most: int = 10) -> None:
    step = max(1, math.ceil(len(values) / most))
    pos = list(range(0, len(values), step))
    getattr(ax, f"set_{which}ticks")(pos, [values[p] for p in pos])


def sweep_figure(axes: Sequence[Axis], cols: Mapping[str, np.ndarray]):
    """Processed packets, deadline misses and worst per-bin lateness against the first axis.

    ``cols``: each of :data:`FIGURE_COLUMNS` as an array in grid order (NaN
    where a point has no value). One line per combination of the other axes;
    a numeric first axis is plotted on a numeric x axis, otherwise the values
    are categories. With more than :data:`MAX_FIGURE_LINES` lines, each panel
    is a heat map of the first two axes instead (the largest value over any
    further axes).
    """
    from matplotlib.figure import Figure

    first, rest = axes[0], axes[1:]
    shape = tuple(len(a.values) for a in axes)
    lines = math.prod(shape[1:])
    if lines > MAX_FIGURE_LINES:
        # a fixed layout (no constrained-layout passes: on a busy machine they cost seconds)
        fig = Figure(figsize=(12.0, 3.6))
        axs = fig.subplots(1, len(_PANELS))
        second = rest[0]
        fig.subplots_adjust(left=0.08, right=0.97, bottom=0.16, top=0.95, wspace=0.45)
        for ax, (col, label) in zip(axs, _PANELS, strict=True):
            data = np.asarray(cols[col], dtype=float).reshape(shape)
            if data.ndim > 2:
                with np.errstate(all="ignore"):
                    data = np.fmax.reduce(data.reshape(shape[0], shape[1], -1), axis=2)
            im = ax.imshow(data.T, origin="lower", aspect="auto", interpolation="nearest")
            fig.colorbar(im, ax=ax, label=label + (" (worst)" if len(rest) > 1 else ""))
            ax.set_xlabel(first.key)
            ax.set_ylabel(second.key)
            _ticks(ax, "x", first.values)
            _ticks(ax, "y", second.values)
        return fig
    # a fixed layout in inches (no constrained-layout passes: a sweep's figure is drawn once
    # per sweep, but on a busy machine those passes cost seconds): room on the left of each
    # panel for six-digit tick labels and the axis label, a legend row above when there
    # are lines to tell apart
    legend_in = 0.45 if rest else 0.0
    width, height, left, gap = 13.0, 3.6 + legend_in, 1.05, 1.15
    fig = Figure(figsize=(width, height))
    axs = fig.subplots(1, len(_PANELS))
    panel_w = (width - left - 0.2 - gap * (len(_PANELS) - 1)) / len(_PANELS)
    fig.subplots_adjust(left=left / width, right=1 - 0.2 / width, bottom=0.6 / height,
                        top=1 - (0.15 + legend_in) / height, wspace=gap / panel_w)
    xs_num = _numeric(first.values)
    xpos = xs_num if xs_num is not None else list(range(len(first.values)))
    arrays = {c: np.moveaxis(np.asarray(cols[c], dtype=float).reshape(shape), 0, -1)
              for c in FIGURE_COLUMNS}
    for at in np.ndindex(*shape[1:]):
        label = ", ".join(
            f"{a.key.split('.', 1)[1]}={a.values[j]}" for a, j in zip(rest, at, strict=True)
        ) or None
        for ax, (col, _) in zip(axs, _PANELS, strict=True):
            ax.plot(xpos, arrays[col][at], marker="o", lw=1.4, label=label)
    for ax, (col, ylabel) in zip(axs, _PANELS, strict=True):
        ax.set_xlabel(first.key)
        ax.set_ylabel(ylabel)
        # from 0 to the highest point, with room around both for whole markers
        known = arrays[col][~np.isnan(arrays[col])]
        top = max(float(known.max()), 0.0) if known.size else 0.0
        pad = 0.07 * (top if top > 0 else 1.0)
        ax.set_ylim(-pad, top + pad)
        ax.margins(x=0.06)
        ax.grid(True, alpha=0.3)
        if xs_num is None:
            ax.set_xticks(xpos, list(first.values))
    if rest:
        fig.legend(*axs[0].get_legend_handles_labels(), loc="upper center",
                   bbox_to_anchor=(0.5, 1 - 0.05 / height), ncol=min(lines, 6),
                   frameon=False, fontsize="small")
    return fig


def write_figure(out_dir: Path, axes: Sequence[Axis], cols: Mapping[str, np.ndarray]) -> Path:
    return atomic_write(Path(out_dir) / "sweep.png", png_bytes(sweep_figure(axes, cols)))
