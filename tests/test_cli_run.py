"""End-to-end runs of the CLI on the real engine, with shortened scenarios."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.runner import run_one
from rtshield.scenario import load_scenario

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "scenarios" / "danicki2021"
EXAMPLES = REPO / "scenarios" / "examples"


def rtshield(*args):
    return subprocess.run(
        [sys.executable, "-m", "rtshield", *map(str, args)], capture_output=True, text=True
    )


def shortened(src: Path, dst_dir: Path, duration: str, extra: str = "") -> Path:
    """A copy of ``src`` with another duration (and optional text replacements)."""
    text = src.read_text()
    head, rest = text.split("duration = ", 1)
    rest = rest.split("\n", 1)[1]
    text = f'{head}duration = "{duration}"\n{rest}'
    for pair in filter(None, extra.split("|")):
        old, new = pair.split("=>")
        assert old in text
        text = text.replace(old, new)
    dst = dst_dir / src.name
    dst.write_text(text)
    return dst


def test_run_writes_every_output(tmp_path):
    scn = shortened(STUDY / "queue_500.toml", tmp_path, "6s")
    out = tmp_path / "out"
    res = rtshield("run", scn, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "packets processed" in res.stdout and "queue_500" in res.stdout
    for name in (
        "summary.json",
        "timeseries.csv",
        "timeseries.parquet",
        "packets.png",
        "critical.png",
        "report.html",
    ):
        assert (out / name).is_file(), name
    s = json.loads((out / "summary.json").read_text())
    assert s["scenario"] == "queue_500" and s["seed"] == 1 and s["duration_s"] == 6
    for key in (
        "offered",
        "irq_raised",
        "isr_runs",
        "irq_lost",
        "received",
        "processed",
        "delivered",
        "dropped",
    ):
        assert key in s["totals"], key
    for key in (
        "cycles",
        "misses",
        "lateness_max_pct",
        "lateness_bin_max_pct",
        "lateness_sum_pct",
        "cycle_time_us",
    ):
        assert key in s["critical"], key
    assert set(s["critical"]["cycle_time_us"]) >= {"min", "p50", "p99", "max"}
    assert set(s["flows"]) == {"syn"} and "latency_us" in s["flows"]["syn"]
    assert s["mitigation"]["name"] == "queue"
    assert s["totals"]["offered"] > 0 and s["critical"]["cycles"] > 0
    rows = (out / "timeseries.csv").read_text().splitlines()
    assert len(rows) == 1 + 6
    header = rows[0].split(",")
    assert header[0] == "t_s" and "lateness_pct" in header and "cycles" in header
    # The CSV's per-bin counts add up to the summary's totals.
    col = header.index("offered")
    assert sum(int(r.split(",")[col]) for r in rows[1:]) == s["totals"]["offered"]
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "Danicki et al. §3" in html


@pytest.mark.parametrize(
    "src,duration",
    [(STUDY / "scheduler_equal.toml", "5s"), (EXAMPLES / "modbus_with_flood.toml", "6s")],
)
def test_same_scenario_and_seed_give_identical_summary_bytes(tmp_path, src, duration):
    scn = shortened(src, tmp_path, duration)
    a, b = tmp_path / "a", tmp_path / "b"
    assert rtshield("run", scn, "--out", a, "--quiet").returncode == 0
    assert rtshield("run", scn, "--out", b, "--quiet").returncode == 0
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    assert (a / "timeseries.csv").read_bytes() == (b / "timeseries.csv").read_bytes()


def test_another_seed_changes_a_poisson_run(tmp_path):
    one = shortened(EXAMPLES / "modbus_with_flood.toml", tmp_path, "3s")
    (tmp_path / "s2").mkdir()
    two = shortened(
        EXAMPLES / "modbus_with_flood.toml", tmp_path / "s2", "3s", "seed = 42=>seed = 43"
    )
    assert rtshield("run", one, "--out", tmp_path / "a", "--quiet").returncode == 0
    assert rtshield("run", two, "--out", tmp_path / "b", "--quiet").returncode == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert a["seed"] == 42 and b["seed"] == 43
    assert a["flows"]["modbus"]["offered"] != b["flows"]["modbus"]["offered"]


def test_engine_reports_progress(tmp_path):
    scn = load_scenario(STUDY / "queue_100.toml", {"scenario": {"duration": "4s"}})
    calls = []
    run_one(scn, tmp_path, progress=lambda done, total: calls.append((done, total)))
    assert calls, "the engine never called progress"
    assert all(t == pytest.approx(4.0) for _, t in calls)
    assert calls[-1][0] == pytest.approx(4.0)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_compare_two_scenarios(tmp_path):
    a = shortened(STUDY / "queue_100.toml", tmp_path, "4s")
    (tmp_path / "b").mkdir()
    b = shortened(STUDY / "queue_750.toml", tmp_path / "b", "4s")
    out = tmp_path / "cmp"
    res = rtshield("compare", a, b, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "queue_100" in res.stdout and "queue_750" in res.stdout
    comp = json.loads((out / "comparison.json").read_text())
    assert set(comp) == {"queue_100", "queue_750"}
    assert (out / "runs" / "queue_100" / "summary.json").is_file()
    html = (out / "report.html").read_text()
    assert "queue_100" in html and "queue_750" in html
    assert html.count("data:image/png;base64,") >= 4


def test_demo_runs_the_whole_study_from_any_directory(demo_output):
    """The whole demo, run from a folder outside the checkout (the shared run,
    tests/conftest.py: ``demo_output``)."""
    out, stdout, _ = demo_output
    comp = json.loads((out / "comparison.json").read_text())
    assert list(comp) == sorted(comp)  # sorted keys
    # every configuration the study ships, each once
    assert set(comp) == {p.stem for p in STUDY.glob("*.toml")} and len(comp) == 8
    html = (out / "report.html").read_text()
    for name in comp:
        assert name in html
    assert "demo: 8 configurations" in stdout
    # The claims of §3, each with its verdict, in the report and on the terminal.
    assert "Claims of Danicki et al. §3 against this run" in html
    assert html.count("does not hold") >= 1 and html.count("holds") >= 10
    assert "claims of Danicki et al. §3 hold" in stdout
    # Every study in one report with a table of contents (Behnke et al.'s software approach
    # in its own folder: tests/test_study_behnke_software.py checks its claims).
    assert "<h2>Contents</h2>" in html and 'id="behnke-software"' in html
    assert "Claims of Behnke et al. §6 against this run" in html
    assert (out / "behnke_software" / "report.html").is_file()
    assert "claims of Behnke et al. §6 hold" in stdout


def test_set_overrides_a_key_for_one_run(tmp_path):
    out = tmp_path / "o"
    res = rtshield(
        "run",
        STUDY / "queue_500.toml",
        "--out",
        out,
        "--quiet",
        "--set",
        "scenario.duration=3s",
        "--set",
        "driver.queue=20",
    )
    assert res.returncode == 0, res.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["duration_s"] == 3
    assert "RX queue 20 packets" in (out / "report.html").read_text()


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_runs(tmp_path, example):
    res = rtshield("run", example, "--out", tmp_path, "--quiet", "--set", "scenario.duration=4s")
    assert res.returncode == 0, res.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["critical"]["cycles"] > 0
    assert set(s["flows"]) == {f.name for f in load_scenario(example).flows}
