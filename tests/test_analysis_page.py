"""``rtshield analyze --out DIR`` (issue 26, "Show it"): the analysis as a page with a
figure of each line's arrival curves — the traffic's, what the protection admits,
what reaches the CPU — and the demand beside the response times."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

from rtshield.analysis import rta
from rtshield.analysis.model import system_from_scenario
from rtshield.analysis.page import figure_data
from rtshield.analysis.report import analyze_system
from rtshield.figures.check import figure_problems
from rtshield.figures.curves import curves_figure
from rtshield.scenario import Mitigation, load_scenario

ROOT = Path(__file__).resolve().parent.parent


def _report(path: Path, **change):
    sc = load_scenario(path)
    if change:
        sc = dataclasses.replace(sc, **change)
    return analyze_system(system_from_scenario(sc))


def test_the_figure_draws_the_curves_the_analysis_used():
    """The capture behind a strict limiter: the traffic line is the capture's curve,
    the admitted one libshield's bound, the line reaching the CPU the curve the
    handler's demand was capped with, at every sampled window; the critical task's
    demand has fallen to the diagonal at its WCRT and not before."""
    rep = _report(ROOT / "scenarios" / "worstcase" / "capture.toml")
    windows, arrivals, demands, described = figure_data(rep)
    src = rep.system.sources[0]
    by_kind = {a.kind: a for a in arrivals if a.source == src.name}
    assert by_kind["traffic"].y is not None
    want = [src.arrivals.eta(int(w)) for w in windows]
    assert by_kind["traffic"].y.tolist() == want
    irq = next(r.task for r in rep.result.tasks if r.task.origin == src.name and r.task.cap)
    assert by_kind["seen"].y.tolist() == [irq.cap.curve.eta(int(w)) for w in windows]
    assert all(k in {d[1] for d in described} for k in by_kind)
    crit = next(d for d in demands if d.task == "critical")
    w = crit.wcrt
    tasks = [r.task for r in rep.result.tasks]
    t = next(x for x in tasks if x.name == "critical")
    assert rta.level_demand(t, tasks, w) <= w
    assert all(rta.level_demand(t, tasks, v) > v for v in range(1, w, max(1, w // 50)))
    fig = curves_figure(windows, arrivals, demands, "capture")
    assert figure_problems(fig) == []


def test_a_poisson_line_without_protection_is_drawn_unbounded():
    rep = _report(ROOT / "scenarios" / "examples" / "modbus_with_flood.toml",
                  mitigation=Mitigation("none"))
    _, arrivals, demands, described = figure_data(rep)
    traffic = [a for a in arrivals if a.kind == "traffic"]
    assert traffic and all(a.y is None for a in traffic)
    assert any(d[2].startswith("unbounded: ") and "Poisson" in d[2] for d in described)
    assert not [d for d in demands if d.task == "critical"]  # no finite demand to draw


def test_analyze_out_writes_the_page(tmp_path):
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "rtshield", "analyze",
                        str(ROOT / "scenarios" / "worstcase" / "multiflow.toml"), "--scenario",
                        "--out", str(out)], capture_output=True, text=True,
                       env={**os.environ, "RTSHIELD_CHECK_FIGURES": "1"})
    assert p.returncode == 0, p.stderr
    page = (out / "report.html").read_text()
    png = (out / "curves.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in page and "Arrival curves" in page
    assert "flow poll: constant 10000 pkt/s" in page and "nothing on it is simulated" in page
