"""`rtshield sweep` on Dask: flow keys, the per-point answer, the safe region's
boundary, a sweep on a ``distributed.LocalCluster`` and the resume path."""

import csv
import json
from pathlib import Path

import pytest
from cli_checks import error_line

from rtshield import cli, sweep
from rtshield.errors import UsageError
from rtshield.tomlfile import read_toml_text

ROOT = Path(__file__).resolve().parent.parent
STEPS = ROOT / "scenarios" / "examples" / "constant_flood.toml"


@pytest.fixture(scope="module")
def flood(tmp_path_factory) -> Path:
    """constant_flood.toml with its flood at one constant rate (a key to sweep)."""
    text = STEPS.read_text()
    for old, new in (
        ('pattern = "steps"', 'pattern = "constant"'),
        ('rates = ["60000pps", "0pps"]', 'rate = "60000pps"'),
        ('step_every = "10s"', ""),
        ('begin = "1s"', 'begin = "0s"'),
    ):
        assert old in text
        text = text.replace(old, new)
    p = tmp_path_factory.mktemp("scenario") / "flood.toml"
    p.write_text(text)
    return p


def test_flow_keys_are_axes_and_change_only_their_flow(flood):
    axes, points = sweep.expand(["flows.flood.rate=1000pps,90000pps", "driver.queue=50"])
    assert [a.key for a in axes] == ["flows.flood.rate"]
    assert sweep.point_label(points[1], axes) == "flood.rate=90000pps"
    data, text = read_toml_text(flood)
    lo = sweep.point_scenario(data, text, str(flood), points[0])
    hi = sweep.point_scenario(data, text, str(flood), points[1])
    assert (lo.flows[0].rate_pps, hi.flows[0].rate_pps) == (1000.0, 90000.0)
    assert lo.driver.queue == hi.driver.queue == 50
    assert data["flows"][0]["rate"] == "60000pps"  # the file's document is not changed
    assert sweep.scenario_hash(lo) != sweep.scenario_hash(hi)
    again = sweep.point_scenario(data, text, str(flood), points[0])
    assert sweep.scenario_hash(again) == sweep.scenario_hash(lo)


@pytest.mark.parametrize(
    "item,msg",
    [
        ("flows.nosuch.rate=1,2", "no [[flows]] entry named 'nosuch'"),
        ("flows.flood.name=a,b", "cannot be swept"),
    ],
)
def test_flow_key_errors(item, msg, flood):
    data, text = read_toml_text(flood)
    _, points = sweep.expand([item])
    with pytest.raises(UsageError, match=msg.replace("[", r"\[").replace("]", r"\]")):
        sweep.point_scenario(data, text, str(flood), points[0])


@pytest.mark.parametrize("item", ["flows.rate=1,2", "driver.queue.x=1,2", "flows.a.b.c=1,2"])
def test_key_shapes(item):
    with pytest.raises(UsageError, match="SECTION.NAME.KEY"):
        sweep.expand([item])


def test_answer_columns():
    summ = {
        "critical": {"misses": 0, "cycles": 10, "max_response_us": 7000.0, "lateness_max_pct": 0.0}
    }
    assert sweep.answer(summ, 10000.0) == {
        "safe": True,
        "worst_response_us": 7000.0,
        "margin_us": 3000.0,
        "lateness_max_pct": 0.0,
    }
    late = {
        "critical": {
            "misses": 3,
            "cycles": 10,
            "max_response_us": 12500.0,
            "lateness_max_pct": 25.0,
        }
    }
    assert sweep.answer(late, 10000.0)["safe"] is False
    assert sweep.answer(late, 10000.0)["margin_us"] == -2500.0
    starved = {"critical": {"misses": 0, "cycles": 0, "max_response_us": None}}
    assert sweep.answer(starved, 10000.0)["safe"] is False


def test_boundaries_along_each_axis():
    axes = [sweep.Axis("flows.f.rate", ("10", "20", "30")), sweep.Axis("driver.queue", ("1", "2"))]
    safe = {
        ("10", "1"): True,
        ("20", "1"): True,
        ("30", "1"): False,
        ("10", "2"): True,
        ("20", "2"): True,
        ("30", "2"): True,
    }
    rows = [{"flows.f.rate": r, "driver.queue": q, "safe": s} for (r, q), s in safe.items()]
    got = {(b["axis"], tuple(b["others"].values())): b for b in sweep.boundaries(axes, rows)}
    assert got[("flows.f.rate", ("1",))]["transitions"] == [("20", "30", "safe→unsafe")]
    assert got[("flows.f.rate", ("1",))]["verdict"] == "safe up to 20, unsafe from 30"
    assert got[("flows.f.rate", ("2",))]["verdict"] == "safe throughout (10 … 30)"
    assert got[("driver.queue", ("30",))]["verdict"] == "unsafe up to 1, safe from 2"
    assert got[("driver.queue", ("10",))]["transitions"] == []


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import logging

    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as c:
        yield c


def _sweep(flood, out, scheduler, *sets):
    args = [
        "sweep",
        str(flood),
        "--set",
        "scenario.duration=1s",
        "--out",
        str(out),
        "--scheduler",
        scheduler,
    ]
    for s in sets:
        args += ["--set", s]
    return cli.main(args)


def test_sweep_on_a_local_cluster_and_resume(tmp_path, capsys, cluster, flood):
    out = tmp_path / "sw"
    addr = cluster.scheduler_address
    assert _sweep(flood, out, addr, "flows.flood.rate=1000pps,100000pps", "driver.queue=5,200") == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [(r["flows.flood.rate"], r["driver.queue"]) for r in rows] == [
        ("1000pps", "5"),
        ("1000pps", "200"),
        ("100000pps", "5"),
        ("100000pps", "200"),
    ]
    for r in rows:  # the answer agrees with each point's own summary
        summ = json.loads((out / "runs" / _folder(r) / "summary.json").read_text())
        assert int(r["misses"]) == summ["critical"]["misses"]
        assert (r["safe"] == "True") == (summ["critical"]["misses"] == 0)
        period_us = 10_000.0
        assert float(r["margin_us"]) == pytest.approx(
            period_us - summ["critical"]["max_response_us"]
        )
    region = json.loads((out / "safe_region.json").read_text())
    assert {b["axis"] for b in region} == {"flows.flood.rate", "driver.queue"}
    assert "safe region" in text and "report:" in text
    # the terminal's per-point table says what sweep.csv says, with units in the headings
    cells = [[c.strip() for c in ln.split("│")] for ln in text.splitlines() if "│" in ln]
    head = next(c for c in cells if c[:2] == ["flows.flood.rate", "driver.queue"])
    assert head[2:] == ["safe", "worst response (µs)", "margin (µs)", "worst lateness", "misses"]
    shown = {(c[0], c[1]): c for c in cells if len(c) == len(head) and c is not head}
    for r in rows:
        c = shown[(r["flows.flood.rate"], r["driver.queue"])]
        assert c[2] == ("yes" if r["safe"] == "True" else "NO")
        assert c[6].replace(" ", "") == r["misses"]
        assert float(c[4].replace(" ", "")) == pytest.approx(float(r["margin_us"]), abs=0.05)
    assert "Safe region" in (out / "report.html").read_text()

    # the same sweep again: nothing runs, the files are the very same
    stamp = {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("summary.json")}
    assert _sweep(flood, out, addr, "flows.flood.rate=1000pps,100000pps", "driver.queue=5,200") == 0
    assert "4 of 4 points were already" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in stamp} == stamp

    # a changed or damaged point runs again, the others do not
    victim = out / "runs" / "flood.rate_1000pps_queue_5" / "summary.json"
    victim.write_text(victim.read_text().replace('"misses"', '"misses" ', 1))
    assert (
        _sweep(
            flood,
            out,
            addr,
            "flows.flood.rate=1000pps,100000pps",
            "driver.queue=5,200",
            "critical.period=10ms",
        )
        == 0
    )
    assert "3 of 4 points were already" in capsys.readouterr().out
    assert json.loads(victim.read_text())["critical"]["misses"] == 0
    assert victim.stat().st_mtime_ns != stamp[victim]
    assert all(p.stat().st_mtime_ns == t for p, t in stamp.items() if p != victim)


def _folder(row):
    return f"flood.rate_{row['flows.flood.rate']}_queue_{row['driver.queue']}"


def test_unreachable_scheduler_is_one_line(tmp_path, capsys, flood):
    rc = _sweep(flood, tmp_path / "o", "tcp://127.0.0.1:9", "driver.queue=5,6")
    error_line(rc, capsys.readouterr().err, "--scheduler")


def test_a_point_without_figures_has_its_numbers_and_no_png(tmp_path, flood):
    """What a sweep point (and a demo configuration) writes without --run-figures."""
    from rtshield.runner import run_one
    from rtshield.scenario import load_scenario

    sc = load_scenario(flood, {"scenario": {"duration": "1s"}})
    bare = run_one(sc, tmp_path / "bare", figures=False)
    assert {p.suffix for p in (tmp_path / "bare").iterdir() if not p.name.startswith(".")} == {
        ".json",
        ".csv",
        ".parquet",
        ".html",
    }
    assert "data:image/png" not in (tmp_path / "bare" / "report.html").read_text()
    assert bare.entry.figures == {}
    drawn = run_one(sc, tmp_path / "drawn")
    assert (tmp_path / "drawn" / "packets.png").is_file() and "packets" in drawn.entry.figures
    assert bare.entry.summary == drawn.entry.summary


def test_the_progress_bar_keeps_running_through_the_report_phase():
    """demo, compare, sweep: the last phase (figures and report) is one long call
    without updates; the bar keeps being redrawn with that phase's name, and its
    last line says done at 100 %."""
    import io
    import re
    import time

    from rtshield.progress import ProgressBar

    stream = io.StringIO()
    bar = ProgressBar("demo", phases=[("simulating", 8, "runs done"), ("figures and report", 1)],
                      stream=stream, delay=0.0, enabled=True)
    bar(8, 8)
    time.sleep(1.1)  # rich redraws four times a second
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue())
    drawn = [s for s in re.split(r"[\r\n]", plain) if s.startswith("demo: figures and report")]
    assert len(drawn) >= 3 and all("88.9%" in s for s in drawn)
    bar.finish()
    bar.close()
    final = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", stream.getvalue()).rstrip("\n")
    final = re.split(r"[\r\n]", final)[-1]
    assert final.startswith("demo: done") and "100.0%" in final


def test_run_no_figures_writes_the_numbers_and_report_only(tmp_path, flood, rtshield_main):
    out = tmp_path / "o"
    assert rtshield_main("run", flood, "--out", out, "--quiet", "--no-figures",
                         "--set", "scenario.duration=1s") == 0
    names = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert names == {"summary.json", "timeseries.csv", "timeseries.parquet", "report.html"}


def _children(pid: int) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(d.name))
    return found


def test_a_worker_that_dies_under_a_point_is_one_line_and_the_finished_points_are_kept(
        tmp_path):
    """A Dask worker killed while it runs a point (here SIGKILL; an out-of-memory kill or a
    crash alike), with Dask told to give up on a task at its first lost worker: the sweep
    ends with one line naming the point and Dask's KilledWorker, exit 1, no traceback;
    the rows that finished stay beside --out for the same command to resume."""
    import os
    import signal
    import subprocess
    import sys
    import time

    queues = ",".join(str(q) for q in range(100, 1300, 100))  # 12 full queue_500 points
    env = {**os.environ, "RTSHIELD_PROGRESS": "0",
           "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    p = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "sweep",
         str(ROOT / "scenarios" / "danicki2021" / "queue_500.toml"), "--set",
         f"driver.queue={queues}", "--jobs", "1", "--out", str(tmp_path / "o")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    table = tmp_path / ".o.rtshield-staging" / "sweep.csv"
    end = time.monotonic() + 120
    while (not table.is_file() or len(table.read_text().splitlines()) < 2) and (
            p.poll() is None and time.monotonic() < end):
        time.sleep(0.02)  # the first point's row: the worker runs the next ones now
    workers = [c for c in _children(p.pid)
               if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
    assert p.poll() is None and len(workers) == 1, (workers, p.poll())
    os.kill(workers[0], signal.SIGKILL)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("rtshield: error: sweep: point ") and (
        "failed where it ran (KilledWorker: " in err), err
    assert "the same command resumes from them" in err
    rows = table.read_text().splitlines()
    assert 2 <= len(rows) <= 12 and not (tmp_path / "o").exists()
