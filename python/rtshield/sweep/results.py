"""What a sweep says: one row per point (the swept values, the answer, the key
numbers), the boundary of the safe region along each axis, ``sweep.csv``,
``sweep.json`` and the figure ``sweep.png``."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rtshield.figures import png_bytes
from rtshield.outputs import atomic_write
from rtshield.sweep.grid import Axis

__all__ = [
    "ANSWER_COLUMNS",
    "SWEEP_METRICS",
    "answer",
    "boundaries",
    "sweep_figure",
    "sweep_rows",
    "write_figure",
    "write_tables",
]

#: The answer columns of sweep.csv, right after the swept keys: whether the
#: critical task met every deadline (``safe``), its worst response time, the
#: margin to its deadline (the period: a cycle must end before the next
#: release) and its worst lateness.
ANSWER_COLUMNS = ("safe", "worst_response_us", "margin_us", "lateness_max_pct")

#: Columns of sweep.csv after the answer: (column, path into summary.json).
SWEEP_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("offered", ("totals", "offered")),
    ("received", ("totals", "received")),
    ("processed", ("totals", "processed")),
    ("delivered", ("totals", "delivered")),
    ("irq_lost", ("totals", "irq_lost")),
    ("cycles", ("critical", "cycles")),
    ("misses", ("critical", "misses")),
    ("lateness_max_pct", ("critical", "lateness_max_pct")),
    ("lateness_bin_max_pct", ("critical", "lateness_bin_max_pct")),
    ("lateness_sum_pct", ("critical", "lateness_sum_pct")),
    ("cycle_time_max_us", ("critical", "cycle_time_us", "max")),
)


def _get(d: Any, path: Sequence[str]) -> Any:
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def answer(summary: Mapping[str, Any], period_us: float) -> dict[str, Any]:
    """The ANSWER_COLUMNS of one point from its summary and the critical period.

    ``safe``: every critical cycle that ended met its deadline and at least
    one ended (a starved task that never finishes is not safe);
    ``margin_us``: the period minus the worst response time (negative: late).
    """
    crit = summary.get("critical") or {}
    misses = crit.get("misses")
    cycles = crit.get("cycles")
    # a response time exists only once a cycle ended (never measured: None, "—")
    worst = crit.get("max_response_us") if cycles else None
    safe = bool(misses == 0 and cycles) if misses is not None else None
    margin = None if worst is None else round(period_us - float(worst), 3)
    return {
        "safe": safe,
        "worst_response_us": worst,
        "margin_us": margin,
        "lateness_max_pct": crit.get("lateness_max_pct"),
    }


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
    rows = []
    periods = list(periods_us) if periods_us is not None else [None] * len(points)
    for point, summ, period in zip(points, summaries, periods, strict=True):
        row: dict[str, Any] = {a.key: point[a.key] for a in axes}
        if period is not None:
            row.update(answer(summ, period))
        for col, path in SWEEP_METRICS:
            row.setdefault(col, _get(summ, path))
        rows.append(row)
    return rows


def boundaries(axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Where the safe region ends along each swept axis.

    For every axis and every combination of the other axes' values, the
    points in the axis's order (as written on the command line) are scanned
    for changes of ``safe``. One entry per line of the grid: ``axis``,
    ``others`` (``{key: value}``), ``transitions`` (a list of ``(last value
    before, first value after, "safe→unsafe" or "unsafe→safe")``) and
    ``verdict``: ``"safe throughout"``, ``"unsafe throughout"``, or the
    transitions in words (``"safe up to 40000, unsafe from 50000"``).
    """
    out = []
    by_point = {tuple(r[a.key] for a in axes): r for r in rows}
    for i, axis in enumerate(axes):
        others = [a for j, a in enumerate(axes) if j != i]
        for combo in itertools.product(*(a.values for a in others)) or [()]:
            fixed = dict(zip((a.key for a in others), combo, strict=True))
            line = []
            for v in axis.values:
                key = tuple(v if a.key == axis.key else fixed[a.key] for a in axes)
                r = by_point.get(key)
                if r is not None and r.get("safe") is not None:
                    line.append((v, bool(r["safe"])))
            if not line:
                continue
            trans = [
                (a[0], b[0], "safe→unsafe" if a[1] else "unsafe→safe")
                for a, b in zip(line, line[1:], strict=False)
                if a[1] != b[1]
            ]
            if not trans:
                verdict = "safe throughout" if line[0][1] else "unsafe throughout"
                verdict += f" ({line[0][0]} … {line[-1][0]})" if len(line) > 1 else ""
            else:
                words = []
                first_safe = line[0][1]
                words.append(f"{'safe' if first_safe else 'unsafe'} up to {trans[0][0]}")
                for _, after, kind in trans:
                    words.append(f"{kind.split('→')[1]} from {after}")
                verdict = ", ".join(words)
            out.append(
                {"axis": axis.key, "others": fixed, "transitions": trans, "verdict": verdict}
            )
    return out


def write_tables(
    out_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    bounds: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """``sweep.csv``, ``sweep.json`` and, when given, ``safe_region.json`` (the
    boundaries), written atomically."""
    if not rows:
        return
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write(out_dir / "sweep.csv", buf.getvalue().encode())
    atomic_write(
        out_dir / "sweep.json", (json.dumps(list(rows), indent=2, sort_keys=False) + "\n").encode()
    )
    if bounds is not None:
        doc = [{**b, "transitions": [list(t) for t in b["transitions"]]} for b in bounds]
        atomic_write(
            out_dir / "safe_region.json",
            (json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode(),
        )


def _numeric(values: Sequence[str]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def sweep_figure(axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]):
    """Processed packets, deadline misses and worst per-bin lateness against the first axis.

    One line per combination of the other axes. A numeric first axis is
    plotted on a numeric x axis; otherwise the values are categories.
    """
    from matplotlib.figure import Figure

    first, rest = axes[0], axes[1:]
    xs_num = _numeric(first.values)
    xpos = xs_num if xs_num is not None else list(range(len(first.values)))
    panels = (
        ("processed", "packets processed"),
        ("misses", "deadline misses"),
        ("lateness_bin_max_pct", "worst 1-bin accumulated lateness [%]"),
    )
    # a fixed layout in inches (no constrained-layout passes: a sweep's figure is drawn once
    # per sweep, but on a busy machine those passes cost seconds): room on the left of each
    # panel for six-digit tick labels and the axis label, a legend row above when there
    # are lines to tell apart
    groups = list(itertools.product(*(a.values for a in rest))) or [()]
    legend_in = 0.45 if rest else 0.0
    width, height, left, gap = 13.0, 3.6 + legend_in, 1.05, 1.15
    fig = Figure(figsize=(width, height))
    axs = fig.subplots(1, len(panels))
    panel_w = (width - left - 0.2 - gap * (len(panels) - 1)) / len(panels)
    fig.subplots_adjust(left=left / width, right=1 - 0.2 / width, bottom=0.6 / height,
                        top=1 - (0.15 + legend_in) / height, wspace=gap / panel_w)
    for combo in groups:
        sel = [r for r in rows if all(r[a.key] == v for a, v in zip(rest, combo, strict=True))]
        label = (
            ", ".join(f"{a.key.split('.', 1)[1]}={v}" for a, v in zip(rest, combo, strict=True))
            or None
        )
        by_x = {r[first.key]: r for r in sel}
        for ax, (col, _) in zip(axs, panels, strict=True):
            ys = [by_x[v][col] if v in by_x else None for v in first.values]
            ys = [float("nan") if y is None else float(y) for y in ys]
            ax.plot(xpos, ys, marker="o", lw=1.4, label=label)
    for ax, (col, ylabel) in zip(axs, panels, strict=True):
        ax.set_xlabel(first.key)
        ax.set_ylabel(ylabel)
        # from 0 to the highest point, with room around both for whole markers
        top = max((float(r[col]) for r in rows if r.get(col) is not None), default=0.0)
        pad = 0.07 * (top if top > 0 else 1.0)
        ax.set_ylim(-pad, top + pad)
        ax.margins(x=0.06)
        ax.grid(True, alpha=0.3)
        if xs_num is None:
            ax.set_xticks(xpos, list(first.values))
    if rest:
        fig.legend(*axs[0].get_legend_handles_labels(), loc="upper center",
                   bbox_to_anchor=(0.5, 1 - 0.05 / height), ncol=min(len(groups), 6),
                   frameon=False, fontsize="small")
    return fig


def write_figure(out_dir: Path, axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> Path:
    return atomic_write(out_dir / "sweep.png", png_bytes(sweep_figure(axes, rows)))
