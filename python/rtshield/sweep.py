"""Parameter sweeps: a grid of ``--set SECTION.KEY=v1,v2,…`` values over one scenario.

Each ``--set`` names one axis; a single value is a fixed override for every
point. The grid is the Cartesian product of the axes, in the order given,
the last axis varying fastest. Every point is an ordinary run (its own
folder, summary and report); the sweep adds ``sweep.csv`` and ``sweep.json``
(one row per point: the swept values and the key numbers) and a figure of
those numbers against the first axis, one line per combination of the others.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError
from rtshield.outputs import atomic_write

__all__ = ["Axis", "SWEEP_METRICS", "expand", "split_values", "sweep_figure", "sweep_rows"]

#: Columns of sweep.csv after the swept keys: (column, path into summary.json).
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


@dataclass(frozen=True)
class Axis:
    """One swept setting: ``key`` is ``SECTION.KEY``; ``values`` as written."""

    key: str
    values: tuple[str, ...]


def split_values(raw: str, option: str = "--set") -> list[str]:
    """Split ``"100,500,[1, 2]"`` at top-level commas (not inside ``[]``, ``{}`` or quotes)."""
    out: list[str] = []
    depth, quote, cur = 0, "", []
    for ch in raw:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    if quote or depth != 0:
        raise UsageError(f"{option}: unbalanced brackets or quotes in {raw!r}")
    if any(v == "" for v in out):
        raise UsageError(f"{option}: empty value in {raw!r} (write v1,v2,… with no empty item)")
    return out


def expand(sets: Sequence[str], option: str = "--set") -> tuple[list[Axis], list[dict[str, str]]]:
    """``["driver.queue=100,500", "mitigation.kind=queue"]`` → axes and grid points.

    Returns ``(axes, points)``: the axes with more than one value, and each
    point as ``{SECTION.KEY: value}`` over *all* keys (fixed ones included).
    """
    keys: list[str] = []
    values: list[list[str]] = []
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key.count(".") != 1 or not all(key.split(".")):
            raise UsageError(
                f"{option}: expected SECTION.KEY=v1,v2,… such as "
                f"driver.queue=100,500,750, got {item!r}"
            )
        if key in keys:
            raise UsageError(f"{option}: {key} is given twice; list all its values in one --set")
        keys.append(key)
        values.append(split_values(raw, option))
    axes = [Axis(k, tuple(v)) for k, v in zip(keys, values, strict=True) if len(v) > 1]
    if not axes:
        raise UsageError(
            f"{option}: nothing to sweep; give at least one setting two or more "
            "values, e.g. --set driver.queue=100,500,750"
        )
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]
    return axes, points


def point_label(point: Mapping[str, str], axes: Sequence[Axis]) -> str:
    """``queue=500,capacity=600``: the swept values of one point, by short key."""
    return ",".join(f"{a.key.split('.', 1)[1]}={point[a.key]}" for a in axes)


def _get(d: Any, path: Sequence[str]) -> Any:
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def sweep_rows(
    axes: Sequence[Axis],
    points: Sequence[Mapping[str, str]],
    summaries: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One row per point: the swept values, then the SWEEP_METRICS columns."""
    rows = []
    for point, summ in zip(points, summaries, strict=True):
        row: dict[str, Any] = {a.key: point[a.key] for a in axes}
        for col, path in SWEEP_METRICS:
            row[col] = _get(summ, path)
        rows.append(row)
    return rows


def write_tables(out_dir: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """``sweep.csv`` and ``sweep.json``, written atomically."""
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
    fig = Figure(figsize=(12.0, 3.6), layout="constrained")
    axs = fig.subplots(1, len(panels))
    groups = list(itertools.product(*(a.values for a in rest))) or [()]
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
    for ax, (_, ylabel) in zip(axs, panels, strict=True):
        ax.set_xlabel(first.key)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if xs_num is None:
            ax.set_xticks(xpos, list(first.values))
    if rest:
        axs[0].legend(fontsize="small")
    return fig


def write_figure(out_dir: Path, axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> Path:
    from rtshield.figures import png_bytes

    return atomic_write(out_dir / "sweep.png", png_bytes(sweep_figure(axes, rows)))
