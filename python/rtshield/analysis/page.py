"""``rtshield analyze --out DIR``: the analysis as a page (``report.html``) with its
figure (``curves.png``): every interrupt line's arrival curves — the traffic's,
what its protection admits (libshield's admission bound), what reaches the CPU —
and, beside them, the demand each thread with a deadline meets in a window after
a critical instant, with its worst-case response time where demand meets time;
then the response-time table and the curves' descriptions (docs/analysis.md,
"Arrival curves")."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from rtshield.outputs import atomic_write
from rtshield.units import format_ns

from . import rta
from .mitigations import burst_mit_admitted, global_limit_admitted
from .report import Report
from .sources import admitted_curve

__all__ = ["figure_data", "write_page"]

#: Windows the figure samples.
_POINTS = 400


def _span(rep: Report) -> int:
    """The figure's longest window: past every thread's WCRT and deadline."""
    longest = 0
    for r in rep.result.tasks:
        if r.task.level == "thread":
            for v in (r.wcrt, r.task.deadline):
                if v is not None:
                    longest = max(longest, v)
    return max(int(longest * 1.25), 1_000_000)


def _admitted(rep: Report, src):
    adm = admitted_curve(rep.system, src)
    if adm is None and src.model == "burst_mitigation" and src.capacity and src.slice:
        adm = burst_mit_admitted(src.capacity, src.slice)
    return adm


def _eval(curve, windows: np.ndarray) -> np.ndarray | None:
    if curve is None or not curve.bounded:
        return None
    return np.array([curve.eta(int(w)) or 0 for w in windows], dtype=float)


def figure_data(rep: Report):
    """(windows, arrival lines, demand lines, curve descriptions) of ``rep``."""
    from rtshield.figures.curves import ArrivalLine, DemandLine

    windows = np.linspace(0, _span(rep), _POINTS).astype(np.int64)
    tasks = [r.task for r in rep.result.tasks]
    arrivals, described = [], []
    for src in rep.system.sources:
        if src.arrivals is None:
            continue
        seen = next((t.cap.curve for t in tasks
                     if t.origin == src.name and t.cap is not None), None)
        adm = _admitted(rep, src)
        for kind, curve in (("traffic", src.arrivals), ("admitted", adm), ("seen", seen)):
            if curve is None:
                continue
            arrivals.append(ArrivalLine(src.name, kind, _eval(curve, windows)))
            described.append((src.name, kind, curve.label if curve.bounded else
                              f"unbounded: {curve.reason}"))
    g = rep.system.global_limit
    if g is not None and g.arrivals is not None:
        for kind, curve in (("traffic", g.arrivals), ("admitted", global_limit_admitted(g))):
            arrivals.append(ArrivalLine("global limit", kind, _eval(curve, windows)))
            described.append(("global limit", kind, curve.label))
    demands = []
    for r in rep.result.tasks:
        t = r.task
        if t.level != "thread" or t.deadline is None:
            continue
        ys = [rta.level_demand(t, tasks, int(w)) for w in windows]
        if any(v is None for v in ys):
            continue
        demands.append(DemandLine(t.name, np.array(ys, dtype=float), r.wcrt))
    return windows, arrivals, demands, described


def _rows(rep: Report) -> list[list[str]]:
    rows = []
    for r in rep.result.tasks:
        t = r.task
        if not r.analysed:
            verdict = "not analysed: " + r.reason
        elif r.schedulable:
            verdict = "ok" if t.deadline is not None else (
                "bounded" if r.wcrt is not None else "unbounded: " + r.reason)
        else:
            verdict = "miss: " + r.reason
        rows.append([t.name, t.level, str(t.priority), format_ns(t.C),
                     "-" if t.deadline is None else format_ns(t.deadline),
                     "-" if r.wcrt is None else format_ns(r.wcrt), verdict])
    return rows


def write_page(rep: Report, out_dir: str | Path, title: str) -> Path:
    """Write ``out_dir/curves.png`` and ``out_dir/report.html``; the page's path."""
    from rtshield.figures.curves import curves_figure
    from rtshield.figures.layout import save_png
    from rtshield.report import figure, page, render

    out = Path(out_dir)
    windows, arrivals, demands, described = figure_data(rep)
    png = save_png(curves_figure(windows, arrivals, demands, title), out / "curves.png")
    u = rep.result.utilization
    verdict = ("not analysed" if rep.undecided else "yes" if rep.schedulable else "no")
    body = render(
        "analysis.html.j2",
        title=title,
        verdict=verdict,
        utilization="unbounded" if math.isinf(u) else f"{u:.4f}",
        fig=figure(png, "Left: each interrupt line's arrival curves η⁺(Δ), the most "
                   "arrivals in any window Δ (dotted in the legend: no finite curve). "
                   "Right: the CPU time each thread's first job meets in a window Δ "
                   "after a critical instant, against Δ; its WCRT (dashed) is where "
                   "the demand first falls to the diagonal."),
        rows=_rows(rep),
        curves=described,
        checks=[(c.rule, "pass" if c.ok else "FAIL", c.inequality) for c in rep.nic_checks],
    )
    note = ("Every number on this page comes from rtshield's worst-case analysis of the "
            "file it names (docs/analysis.md): libshield's admission bounds and the "
            "traffic's arrival curves; nothing on it is simulated.")
    return atomic_write(out / "report.html", page(f"rtshield analyze: {title}", body, note))
