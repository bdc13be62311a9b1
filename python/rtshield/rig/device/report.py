"""``report.html`` and ``fig_latency.png`` of ``rtshield rig device``.

The figure sets each monitor's latency (a heartbeat's jitter), the 95th
percentile of each step, against the rate the step achieved, one line per
storm and one panel per monitor, with the monitor's limit dashed and the failed
steps crossed. The page (template ``rig_device.html.j2``) gives the verdict,
the storms with their breaking rates and recoveries, the step rule, the monitors'
criteria (and where a monitor is informational), the baseline and every step with
its runs.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rtshield.outputs import atomic_write
from rtshield.report import figure, page, render

from .verdict import headline_ms

__all__ = ["latency_figure", "write_report"]


def _ms(v: Any) -> str:
    return "—" if v is None else f"{v:,.2f}"


def _pps(v: Any) -> str:
    return "—" if v is None else f"{v:,.0f}"


def latency_figure(out: Path, s: Mapping[str, Any]) -> Path | None:
    """``fig_latency.png``: per monitor, the p95 latency of each step against its
    achieved rate."""
    names = list(s["criteria"])
    if not s["storms"] or not names:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(names), 1, figsize=(7.0, 2.3 * len(names) + 0.6), dpi=100, squeeze=False
    )
    for ax, name in zip(axes[:, 0], names, strict=True):
        crit = s["criteria"][name]
        limit = crit.get("latency_ms", crit.get("jitter_ms"))
        ceiling = crit.get("timeout_ms", crit.get("max_gap_s", 1) * 1e3)
        for storm in s["storms"]:
            xs, ys, bad = [], [], []
            for st in storm["steps"]:
                w = st["monitors"][name]
                y = headline_ms(w)
                xs.append(max(1.0, st["rate_achieved"]))
                ys.append(y if y is not None else ceiling)
                bad.append(w["verdict"] == "fail")
            (line,) = ax.plot(xs, ys, "-o", ms=3, lw=1, label=storm["name"])
            fx = [x for x, b in zip(xs, bad, strict=True) if b]
            fy = [y for y, b in zip(ys, bad, strict=True) if b]
            if fx:
                ax.plot(fx, fy, "x", ms=8, mew=2, color=line.get_color())
        ax.axhline(limit, color="0.3", ls="--", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        what = "jitter" if crit["kind"] == "heartbeat" else "latency"
        ax.set_ylabel(f"{name}\n{what} p95 (ms)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("storm rate achieved (packets/s)")
    axes[0, 0].legend(fontsize=6, ncol=3, loc="upper left")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return atomic_write(out / "fig_latency.png", buf.getvalue())


def _criteria_rows(s: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for name, c in s["criteria"].items():
        if c["kind"] == "heartbeat":
            good = f"interval within {c['jitter_ms']:g} ms of {c['period_ms']:g} ms"
        else:
            good = f"answered within {c['latency_ms']:g} ms (timeout {c['timeout_ms']:g} ms)"
        rows.append([name, c["kind"], good, f"{100 * c['within']:g} %", f"{c['max_gap_s']:g} s",
                     f"{c['recover_s']:g} s"])
    return rows


def _recovered(seconds: float | None) -> str:
    return "not back" if seconds is None else f"{seconds:g} s"


def _errors_after(m: Mapping[str, Any], kind: str) -> str:
    """A monitor's error answers after a storm until it recovered, for its recovery: a TCP
    monitor's are refused connections, a listener's backlog full of half-open ones
    (docs/rig.md, "The connect monitor after a storm")."""
    n = m.get("errors_after") or 0
    if not n:
        return ""
    return f" ({n} refused after the storm)" if kind == "tcp" else f" ({n} error answers after)"


def _lat(w: Mapping[str, Any]) -> Mapping[str, Any]:
    return w.get("latency_ms") or w.get("jitter_ms") or {}


def _informational_failures(st: Mapping[str, Any]) -> str:
    """What the informational monitors of a storm would have said, for its row."""
    shown = [f"{n} failed from {_pps(st['monitors'][n]['failed_at'])}"
             for n in st["informational"] if st["monitors"][n]["failed_at"] is not None]
    return f" (informational: {', '.join(shown)})" if shown else ""


def write_report(out: Path, s: Mapping[str, Any], profile_text: str, fig: Path | None) -> Path:
    """Write ``out/report.html`` from a summary (and the figure, if drawn)."""
    names = list(s["criteria"])
    storms = [
        {
            "cells": [st["name"], st["kind"], st["tool"], str(len(st["steps"])),
                      str(sum(len(x["runs"]) for x in st["steps"])),
                      (_pps(st["breaking_rate"]) if st["breaking_rate"] is not None else "none")
                      + _informational_failures(st),
                      _recovered(st["recovery_s"])],
            "passed": st["verdict"] == "pass",
        }
        for st in s["storms"]
    ]
    details = []
    for st in s["storms"]:
        rows = []
        for i, step in enumerate(st["steps"], 1):
            cells = [str(i), _pps(step["rate_asked"]) if step["rate_asked"] is not None else "max",
                     _pps(step["rate_achieved"]), str(len(step["runs"]))]
            for n in names:
                w = step["monitors"][n]
                mark = "✔" if w["verdict"] == "pass" else "✘"
                cells.append(f"{mark} {w['runs_failed']} of {w['runs']} runs failed; "
                             f"{100 * w['good_fraction']:.0f} % good, p95 "
                             f"{_ms(_lat(w).get('p95'))} ms"
                             + (f" ({w['why']})" if w["why"] else "")
                             + ("" if w["counted"] else " [informational]"))
            rows.append(cells)
        rec = ", ".join(f"{n} {_recovered(v['recovery_s'])}"
                        + _errors_after(v, s["criteria"][n]["kind"])
                        for n, v in st["monitors"].items())
        info = [
            f"{n} is informational in this storm ({st['kind']}): its verdicts are shown but "
            "decide neither a step nor the breaking rate; its recovery after the storm counts"
            + (f". It failed from {_pps(st['monitors'][n]['failed_at'])} pkt/s on"
               if st["monitors"][n]["failed_at"] is not None else ". It passed every step")
            for n in st["informational"]
        ]
        details.append({
            "name": st["name"], "kind": st["kind"], "tool": st["tool"],
            "header": ["step", "asked pkt/s", "achieved pkt/s", "runs", *names], "rows": rows,
            "recovery": rec, "informational": info,
        })
    baseline = [
        [n, w["verdict"], str(w["samples"]), str(w["good"]), _ms(_lat(w).get("p50")),
         _ms(_lat(w).get("p95")), _ms(_lat(w).get("max")), f"{w['max_gap_s']:g}"]
        for n, w in s["baseline"]["monitors"].items()
    ]
    rule = s["rule"]
    informational = [
        f"{n} in {', '.join(c['informational_in'])} storms"
        for n, c in s["criteria"].items() if c["informational_in"]
    ]
    cap = s["options"].get("max_rate")
    body = render(
        "rig_device.html.j2",
        s=s,
        cap="none (--max-rate none)" if cap is None else f"{cap:,.0f} pkt/s",
        verdict_words="pass: every monitor passed every step and recovered"
        if s["verdict"] == "pass"
        else "fail: " + ", ".join(s["failed"] + [f"{n} (not run)" for n in s["not_run"]]),
        storms=storms,
        fig=figure(fig, "The monitors' latency (a heartbeat's jitter), 95th percentile per "
                   "step, against the rate the step achieved; dashed: the monitor's limit; "
                   "×: a step the monitor failed; a step without an answer is drawn at the "
                   "timeout") if fig else None,
        criteria=_criteria_rows(s),
        rule=rule,
        informational=informational,
        baseline=baseline,
        storm_details=details,
        profile_text=profile_text,
    )
    return atomic_write(out / "report.html", page(f"rtshield rig device: {s['target']}", body))

