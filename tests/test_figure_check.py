"""The figure check (rtshield.figures.check): matplotlib's own geometry after drawing.

First the check itself, on figures built to have each problem (so that it can
fail); then every figure that `rtshield demo`, the README's `rtshield compare`
and a sweep write, checked as they are written (RTSHIELD_CHECK_FIGURES=FILE:
one line per figure checked, one per problem): no legend over plotted data, no
text outside the canvas, no marker cut by its axes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rtshield.figures.check import ENV, FigureProblem, check_if_asked, figure_problems

ROOT = Path(__file__).resolve().parent.parent


def _figure(**kw):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3), **kw)
    return fig, fig.subplots()


def test_a_clean_figure_has_no_problem():
    fig, ax = _figure(layout="constrained")
    ax.plot([0, 1, 2], [0, 5, 3], marker="o", label="a line")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("packets")
    fig.legend(loc="outside right upper")
    assert figure_problems(fig) == []


def test_a_legend_over_a_line_is_found():
    fig, ax = _figure(layout="constrained")
    ax.plot([0, 10], [9, 9], label="high")  # crosses the whole axes at the top
    ax.plot([0, 10], [1, 1], label="low")
    ax.set_ylim(0, 10)
    ax.legend(loc="upper left")
    found = figure_problems(fig)
    assert any("legend covers the line 'high'" in p for p in found), found
    # the same legend below the data covers nothing
    ax.legend(loc="center")
    assert not any("legend covers" in p for p in figure_problems(fig))


def test_a_legend_over_bars_is_found():
    fig, ax = _figure(layout="constrained")
    ax.bar([0, 1, 2], [10, 10, 10], label="packets")
    ax.legend(loc="upper right")
    found = figure_problems(fig)
    assert any("legend covers the rectangle" in p for p in found), found


def test_text_outside_the_canvas_is_found():
    fig, ax = _figure()
    fig.subplots_adjust(left=0.0)  # no room for the y tick labels and label
    ax.plot([0, 1], [0, 250_000])
    ax.set_ylabel("packets processed")
    found = figure_problems(fig)
    assert any("reach past the canvas's left edge" in p for p in found), found
    fig2, ax2 = _figure(layout="constrained")
    ax2.plot([0, 1], [0, 1])
    fig2.text(0.98, 0.5, "a note that runs past the right edge")
    found = figure_problems(fig2)
    assert any("'a note that runs past the right edge' reaches past the canvas's right edge"
               in p for p in found), found


def test_a_marker_cut_by_its_axes_is_found():
    fig, ax = _figure(layout="constrained")
    ax.plot([1, 2, 3], [0, 5, 10], marker="o", label="points")
    ax.set_ylim(0, 10)  # the first and the last point sit on the axes' edges
    found = figure_problems(fig)
    assert any("a marker of 'points' is cut" in p for p in found), found
    ax.set_ylim(-1, 11)
    assert figure_problems(fig) == []


def test_check_if_asked_raises_or_records(tmp_path, monkeypatch):
    fig, ax = _figure(layout="constrained")
    ax.bar([0, 1], [5, 5], label="x")
    ax.legend(loc="upper right")
    monkeypatch.delenv(ENV, raising=False)
    check_if_asked(fig, 100)  # not asked: nothing
    monkeypatch.setenv(ENV, "1")
    with pytest.raises(FigureProblem, match="legend covers"):
        check_if_asked(fig, 100)
    log = tmp_path / "figures.txt"
    monkeypatch.setenv(ENV, str(log))
    check_if_asked(fig, 100)
    lines = log.read_text().splitlines()
    assert lines[0].startswith("checked ") and lines[1].startswith("problem: ")


# ------------------------------------------------------------------ every figure written


def _run(args, cwd, log):
    env = {**os.environ, ENV: str(log)}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


@pytest.fixture(scope="module")
def written(tmp_path_factory, demo_output):
    """`rtshield demo` (the shared run, tests/conftest.py), the README's compare and a
    sweep, every figure checked as it is written: (their folders, the check's record lines,
    compare's standard output)."""
    if shutil.which("rtshield") is None:
        pytest.skip("rtshield is not on the PATH")
    demo, _, demo_log = demo_output
    tmp = tmp_path_factory.mktemp("written")
    log = tmp / "figures.txt"
    cmp = _run(["rtshield", "compare",
                str(ROOT / "scenarios/examples/behnke_hp_with_flood.toml"),
                str(ROOT / "scenarios/examples/behnke_hp_with_flood_unprotected.toml"),
                "--out", "hp-vs-flood"], tmp, log)
    _run(["rtshield", "sweep", str(ROOT / "scenarios/danicki2021/burst.toml"),
          "--set", "mitigation.capacity=300,600,1200", "--set", "driver.queue=100,500",
          "--set", "scenario.duration=12s", "--out", "sweep"], tmp, log)
    lines = demo_log.read_text().splitlines() + log.read_text().splitlines()
    return (demo, tmp), lines, cmp.stdout


def test_every_figure_of_demo_compare_and_sweep_passes_the_check(written):
    folders, lines, _ = written
    problems = [ln for ln in lines if ln.startswith("problem: ")]
    assert not problems, "\n".join(problems)
    # every PNG written was checked as it was drawn
    pngs = [p for d in folders for p in d.rglob("*.png")]
    checked = [ln for ln in lines if ln.startswith("checked ")]
    assert len(pngs) >= 25
    assert len(checked) >= len(pngs), (len(checked), len(pngs))
    names = {p.name for p in pngs}
    for name in ("compare_packets.png", "compare_flows.png", "sweep.png", "fig9.png",
                 "fig14.png", "fig15.png", "fig1.png", "fig2.png", "flows.png"):
        assert name in names, name


def _row(text: str, label: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(label))
    return [c.strip() for c in line.split("│")[1:]]


def test_the_readme_compare_shows_the_receive_path_and_each_flow(written):
    """README: with the receive path every high-priority packet is delivered; through
    the original stack not. The terminal's and the report's side-by-side tables show
    which run has the receive path, and each flow's delivered of offered packets."""
    (_, tmp), _, stdout = written
    comp = json.loads((tmp / "hp-vs-flood" / "comparison.json").read_text())
    hp = {name: s["flows"]["hp"] for name, s in comp.items()}
    prot, bare = hp["behnke_hp_with_flood"], hp["behnke_hp_with_flood_unprotected"]
    assert prot["delivered"] == prot["offered"] > bare["delivered"]
    assert _row(stdout, "receive path") == ["on: lazy, short circuit", "off"]
    assert _row(stdout, "flow hp delivered") == [
        f"{x['delivered']:,} of {x['offered']:,}".replace(",", " ") for x in (prot, bare)]
    html = (tmp / "hp-vs-flood" / "report.html").read_text()
    assert "on: lazy, short circuit" in html and "flow hp delivered" in html
