"""The calibration's files: ``points.csv``, ``best.toml``, ``report.md`` and
``tradeoff.png``."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rtshield.calibrate.file import Calibration, scenarios
from rtshield.calibrate.points import PointResult, best_of
from rtshield.figures import png_bytes
from rtshield.outputs import atomic_write
from rtshield.runner import late_output

__all__ = [
    "best_toml",
    "pair_matrix",
    "points_csv",
    "report_md",
    "tradeoff_figure",
    "write_outputs",
]


def points_csv(cal: Calibration, points: Sequence[PointResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    objs = list(cal.claims) if cal.objective == "claims" else [f"err_{c}" for c in cal.counters]
    w.writerow(["point", "phase", *[q.key for q in cal.params], "score", *objs, "error"])
    for r in points:
        if cal.objective == "claims":
            cells = [int(bool(r.objectives[k][0])) for k in cal.claims]
        else:
            cells = [
                f"{r.objectives[c]:.6g}" if math.isfinite(r.objectives[c]) else ""
                for c in cal.counters
            ]
        w.writerow(
            [
                r.index,
                r.phase,
                *[q.text(v) for q, v in zip(cal.params, r.values, strict=True)],
                f"{r.score:.6g}" if r.ok else "",
                *cells,
                r.error,
            ]
        )
    return buf.getvalue()


_PRESET_SECTIONS = {
    "critical": "defaults.critical",
    "driver": "defaults.driver",
    "nic": "defaults.nic",
}


def best_toml(cal: Calibration, best: PointResult) -> str:
    """The best point as TOML snippets: the preset's tables, then the scenarios' keys."""
    groups: dict[str, list[str]] = {}
    for q, v in zip(cal.params, best.values, strict=True):
        section, name = q.key.split(".")
        if section in ("costs", "platform"):
            where = f"preset [{section}]"
        elif section in _PRESET_SECTIONS:
            where = f"preset [{_PRESET_SECTIONS[section]}]"
        elif section == "flows":
            where = "scenarios [[flows]]"
        else:
            where = f"scenarios [{section}]"
        line = f"{name} = {q.toml(v)}"
        if section == "flows" and name == "peak":  # the rescaled step goes with it
            steps = {
                f.step_pps
                for sc in scenarios(cal, best.values).values()
                for f in sc.flows
                if f.pattern == "pyramid"
            }
            line += "   # every pyramid flow"
            if len(steps) == 1:
                line += f'\nstep = "{steps.pop():.6g}pps"   # as many steps up as before'
        groups.setdefault(where, []).append(line)
    head = [
        f"# rtshield calibrate {cal.name}: the best of the points searched (score {best.score:g}).",
        "# Paste each table into the file it names; units as the preset writes them.",
        "",
    ]
    body = []
    for where, lines in groups.items():
        file, table = where.split(" ", 1)
        body += [f"# into the {file}", table, *lines, ""]
    return "\n".join(head + body)


def pair_matrix(cal: Calibration, points: Sequence[PointResult]) -> np.ndarray:
    """``M[i, j]``: points where claims i and j both hold (diagonal: where i holds)."""
    held = np.array([[bool(r.objectives[k][0]) for k in cal.claims] for r in points], dtype=int)
    return held.T @ held


def tradeoff_figure(cal: Calibration, points: Sequence[PointResult]):
    """Score against each parameter (best point marked); for claims, the pair matrix."""
    from matplotlib.figure import Figure

    numeric = [i for i, q in enumerate(cal.params) if q.numeric]
    choice = [i for i, q in enumerate(cal.params) if not q.numeric]
    n = len(cal.params)
    cols = min(4, n)
    rows = math.ceil(n / cols)
    extra = 1 if cal.objective == "claims" else 0
    fig = Figure(figsize=(3.4 * cols, 2.8 * rows + (5.0 if extra else 0)), layout="constrained")
    gs = fig.add_gridspec(rows + (2 if extra else 0), cols)
    best = best_of(points)
    score = np.array([r.score for r in points])
    ylabel = "claims held" if cal.objective == "claims" else "−(mean relative RMS error)"
    for k, i in enumerate(numeric + choice):
        q = cal.params[i]
        ax = fig.add_subplot(gs[k // cols, k % cols])
        if q.numeric:
            x = np.array([float(r.values[i]) for r in points])
            scale, unit = (
                (1e-3, "µs")
                if q.kind == "duration"
                else ((1e-3, "kpps") if q.kind == "rate" else (1.0, ""))
            )
            if q.kind == "duration" and q.high >= 1e6:
                scale, unit = 1e-6, "ms"
            ax.scatter(x * scale, score, s=9, alpha=0.5, color="tab:blue")
            ax.scatter(
                [float(best.values[i]) * scale], [best.score], s=50, color="tab:red", marker="*"
            )
            ax.set_xlabel(f"{q.key} [{unit}]" if unit else q.key)
        else:
            labels = [q.text(v) for v in q.values]
            x = np.array([q.values.index(r.values[i]) for r in points], dtype=float)
            jitter = (np.arange(len(points)) % 7 - 3) * 0.03
            ax.scatter(x + jitter, score, s=9, alpha=0.5, color="tab:blue")
            ax.scatter(
                [q.values.index(best.values[i])], [best.score], s=50, color="tab:red", marker="*"
            )
            ax.set_xticks(range(len(labels)), labels)
            ax.set_xlabel(q.key)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    if extra:
        ax = fig.add_subplot(gs[rows:, :])
        m = pair_matrix(cal, points).astype(float)
        img = ax.imshow(m / max(1, len(points)), cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(cal.claims)), cal.claims, rotation=60, ha="right", fontsize="small")
        ax.set_yticks(range(len(cal.claims)), cal.claims, fontsize="small")
        for a in range(len(cal.claims)):
            for b in range(len(cal.claims)):
                ax.text(
                    b,
                    a,
                    str(int(m[a, b])),
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if m[a, b] < 0.5 * len(points) else "black",
                )
        ax.set_title(f"points (of {len(points)}) where both claims hold; 0 = never together")
        fig.colorbar(img, ax=ax, shrink=0.8, label="share of points")
    fig.suptitle(f"rtshield calibrate {cal.name}: {len(points)} points")
    return fig


def report_md(
    cal: Calibration,
    points: Sequence[PointResult],
    seed: int,
    method: str = "lhs",
) -> str:
    """The report: the same calibration gives the same bytes (its cost is counted in
    simulations; the wall time, which differs from run to run, is the terminal's)."""
    best = best_of(points)
    lines = [
        f"# Calibration {cal.name}",
        "",
        cal.description,
        "",
        f"- file: `{cal.path}`; objective: "
        + (
            f"the claims of the study `{cal.study}` ({len(cal.claims)})"
            if cal.objective == "claims"
            else f"the board's counters ({', '.join(cal.counters)}), {len(cal.counters_t)} seconds"
        ),
        f"- runs per point: {len(cal.runs)}"
        + (f", each shortened to {cal.duration}" if cal.duration else ""),
        (
            f"- search: Latin hypercube and coordinate refinement, seed {seed}, "
            f"{len(points)} points ({sum(r.phase == 'lhs' for r in points)} Latin hypercube, "
            f"{sum(r.phase == 'refine' for r in points)} coordinate refinement"
            if method == "lhs"
            else f"- search: TPE (optuna's tree-structured Parzen estimator), seed {seed}, "
            f"{len(points)} points ({sum(r.phase == 'tpe' for r in points)} proposed by TPE"
        )
        + (", 1 start" if any(r.phase == "start" for r in points) else "")
        + ")"
        + (
            f"; {sum(not r.ok for r in points)} point(s) without a finite score, left out "
            "(their error in points.csv)"
            if any(not r.ok for r in points)
            else ""
        ),
        f"- the best score was first reached at point {best.index} "
        f"({best.index + 1} of {len(points)} points)",
        f"- cost: {len(points) * len(cal.runs)} simulations",
        "",
        f"## Best point (point {best.index}, score {best.score:g})",
        "",
        "| parameter | value | bounds |",
        "|---|---|---|",
    ]
    for q, v in zip(cal.params, best.values, strict=True):
        bounds = (
            ", ".join(q.text(x) for x in q.values)
            if not q.numeric
            else f"{q.text(q.snap(q.low))} … {q.text(q.snap(q.high))}"
        )
        lines.append(f"| `{q.key}` | {q.text(v)} | {bounds} |")
    lines.append("")
    if cal.objective == "claims":
        lines += ["| claim | holds | simulated |", "|---|---|---|"]
        for k in cal.claims:
            h, val = best.objectives[k]
            lines.append(f"| `{k}` | {'yes' if h else '**no**'} | {val} |")
        m = pair_matrix(cal, points)
        lines += [
            "",
            "## Claims across all points",
            "",
            "The best score among the points where a claim holds is the trade-off's price: "
            "below the best overall, making that claim hold costs others.",
            "",
            "| claim | points where it holds | best score where it holds | point |",
            "|---|---|---|---|",
        ]
        for i, k in enumerate(cal.claims):
            with_k = [r for r in points if r.objectives[k][0]]
            top = best_of(with_k) if with_k else None
            lines.append(
                f"| `{k}` | {int(m[i, i])} of {len(points)} | "
                + (f"{top.score:g} | {top.index} |" if top else "– | – |")
            )
        never = [
            (cal.claims[i], cal.claims[j])
            for i in range(len(cal.claims))
            for j in range(i + 1, len(cal.claims))
            if m[i, j] == 0 and m[i, i] > 0 and m[j, j] > 0
        ]
        lines += ["", "Pairs of claims that each hold somewhere but never together:", ""]
        lines += [f"- `{a}` and `{b}`" for a, b in never] or ["- none"]
    else:
        lines += ["| column | relative RMS error |", "|---|---|"]
        lines += [f"| `{c}` | {best.objectives[c]:.4f} |" for c in cal.counters]
    lines += [
        "",
        "Files: `points.csv` (every point), `best.toml` (the best point as snippets), "
        "`tradeoff.png` (score against each parameter"
        + ("; pairs of claims" if cal.objective == "claims" else "")
        + ").",
        "",
    ]
    return "\n".join(lines)


def write_outputs(
    out: Path,
    cal: Calibration,
    points: Sequence[PointResult],
    seed: int,
    method: str = "lhs",
) -> dict[str, Path]:
    """``points.csv``, ``best.toml``, ``report.md`` (numbers first), then ``tradeoff.png``."""
    files = {
        "points": atomic_write(out / "points.csv", points_csv(cal, points)),
        "best": atomic_write(out / "best.toml", best_toml(cal, best_of(points))),
        "report": atomic_write(
            out / "report.md", report_md(cal, points, seed, method)
        ),
    }
    files["figure"] = late_output(
        out,
        "trade-off figure",
        "points.csv, best.toml and report.md are",
        lambda: atomic_write(
            out / "tradeoff.png", png_bytes(tradeoff_figure(cal, [r for r in points if r.ok]))
        ),
    )
    return files
