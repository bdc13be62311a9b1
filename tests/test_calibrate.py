"""rtshield calibrate: a known answer recovered, the CSV objective, the claims objective, bad input.

The synthetic problem's answer is known by construction: the simulator
itself produces a board's counters with a driver cost of 15 µs, and the
search, told only bounds of 5–30 µs, must find 15 µs again from those
counters.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
from cli_checks import error_line
from scenario_texts import danicki_device

from rtshield import calibrate
from rtshield.cli import main
from rtshield.engine import simulate
from rtshield.errors import UsageError
from rtshield.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent

BOARD = (
    """
[scenario]
name = "board"
platform = "esp32-freertos"
duration = "4s"
bin = "1s"
seed = 1
"""
    + danicki_device(100)
    + """
[costs]
driver_per_packet = "{drv}"

[mitigation]
kind = "none"

[[flows]]
name = "flood"
protocol = "tcp"
dst_port = 80
size = 60
pattern = "steps"
rates = ["20000pps", "30000pps", "40000pps", "30000pps"]
step_every = "1s"
"""
)

TRUE_DRIVER_NS = 15_000


def _board(tmp: Path, columns=("received", "processed", "cycles")) -> Path:
    """The board: the scenario with the true driver cost, and its counters as a CSV."""
    (tmp / "truth.toml").write_text(BOARD.format(drv="15us"))
    res = simulate(load_scenario(tmp / "truth.toml"))
    ts = res.timeseries
    with open(tmp / "board.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", *columns])
        for i in range(len(ts["t_s"])):
            w.writerow([f"{ts['t_s'][i]:g}", *(int(ts[c][i]) for c in columns)])
    # The model to calibrate starts from a wrong guess.
    (tmp / "model.toml").write_text(BOARD.format(drv="9us"))
    return tmp / "board.csv"


def _cal(tmp: Path, extra: str = "", budget: int = 30, params: str | None = None) -> Path:
    params = params or (
        '[[parameter]]\nkey = "costs.driver_per_packet"\n'
        'low = "5us"\nhigh = "30us"\nstart = "9us"\n'
    )
    text = (
        f'[calibration]\nname = "board"\nbudget = {budget}\nseed = 3\n\n'
        '[objective]\nkind = "counters"\nscenario = "model.toml"\ncsv = "board.csv"\n'
        f"{extra}\n{params}"
    )
    (tmp / "cal.toml").write_text(text)
    return tmp / "cal.toml"


def test_recovers_a_cost_from_counters_the_simulator_produced(tmp_path):
    _board(tmp_path)
    cal = calibrate.load_calibration(_cal(tmp_path))
    points = calibrate.search(cal, jobs=1)
    best = calibrate.best_of(points)
    assert len(points) <= cal.budget
    assert points[0].phase == "start" and points[0].values == (9_000,)
    assert points[0].score < -0.03  # the wrong guess is visibly wrong
    assert abs(best.values[0] - TRUE_DRIVER_NS) <= 300, best.values
    assert best.score > -0.01


def test_the_search_is_deterministic_for_a_seed(tmp_path):
    _board(tmp_path)
    cal = calibrate.load_calibration(_cal(tmp_path, budget=6))
    a = calibrate.search(cal, jobs=1)
    b = calibrate.search(cal, jobs=2)
    assert [r.values for r in a] == [r.values for r in b]
    assert [r.score for r in a] == [r.score for r in b]
    c = calibrate.search(cal, jobs=1, seed=99)
    assert [r.values for r in c] != [r.values for r in a]


def test_cli_writes_points_best_figure_and_report(tmp_path):
    _board(tmp_path, columns=("processed",))
    path = _cal(tmp_path, budget=5)
    out = tmp_path / "out"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtshield",
            "calibrate",
            str(path),
            "--out",
            str(out),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(open(out / "points.csv")))
    assert len(rows) == 5
    assert set(rows[0]) >= {"point", "phase", "costs.driver_per_packet", "score", "err_processed"}
    best = (out / "best.toml").read_text()
    assert "[costs]" in best and "driver_per_packet = " in best
    assert (out / "tradeoff.png").read_bytes()[:4] == b"\x89PNG"
    assert "relative RMS error" in (out / "report.md").read_text()
    assert "costs.driver_per_packet" in p.stdout


def _fails(args, capsys=None):
    """The command fails with exit status 2 and one ``rtshield: error:`` line.

    In-process through the CLI's ``main`` (the same path as the console script)
    when ``capsys`` is given; in a real subprocess otherwise.
    """
    argv = ["calibrate", *map(str, args)]
    if capsys is not None:
        capsys.readouterr()
        rc = main(argv)
        err = capsys.readouterr().err
    else:
        p = subprocess.run(
            [sys.executable, "-m", "rtshield", *argv], capture_output=True, text=True, timeout=60
        )
        rc, err = p.returncode, p.stderr
    line = error_line(rc, err)
    assert "Traceback" not in err
    return line


BAD = [
    ('[[parameter]]\nkey = "costs.nope"\nlow = "1us"\nhigh = "2us"\n', "unknown cost"),
    (
        '[[parameter]]\nkey = "costs.driver_per_packet"\nlow = "9us"\nhigh = "2us"\n',
        "low must be below high",
    ),
    ('[[parameter]]\nkey = "costs.driver_per_packet"\nlow = "1us"\n', "needs low and high"),
    ('[[parameter]]\nkey = "costs.driver_per_packet"\nlow = 1\nhigh = 2\n', "is a duration"),
    (
        '[[parameter]]\nkey = "costs.driver_per_packet"\nlow = "1us"\nhigh = "2kHz"\n',
        "same kind of unit",
    ),
    ('[[parameter]]\nkey = "platform.time_slicing"\nvalues = [1, 2]\n', "true or false"),
    ('[[parameter]]\nkey = "flows.peak"\nlow = "1pps"\nhigh = "2pps"\n', "has no pyramid flow"),
    ('[[parameter]]\nkey = "driver.queue"\nlow = 0\nhigh = 10\n', "driver"),
    ('[[parameter]]\nkey = "bogus.x"\nlow = 1\nhigh = 2\n', "unknown section"),
    (
        '[[parameter]]\nkey = "costs.driver_per_packet"\nlow = "1us"\nhigh = "2us"\n'
        'start = "5us"\n',
        "outside",
    ),
]


@pytest.mark.parametrize("params,needle", BAD, ids=[b[1] for b in BAD])
def test_bad_parameters_fail_in_one_line(tmp_path, params, needle, capsys):
    _board(tmp_path, columns=("processed",))
    msg = _fails([_cal(tmp_path, params=params), "--out", tmp_path / "o"], capsys)
    assert needle in msg
    assert not (tmp_path / "o").exists()  # nothing ran, nothing written


def test_bad_files_and_options_fail_in_one_line(tmp_path, capsys):
    _board(tmp_path, columns=("processed",))
    good = _cal(tmp_path)
    # One failure through the console entry in a real process, the rest in-process.
    assert "none.toml: no such file" in _fails([tmp_path / "none.toml", "--out", tmp_path / "o"])
    assert "--budget" in _fails([good, "--budget", "0", "--out", tmp_path / "o"], capsys)
    assert "--jobs" in _fails([good, "--jobs", "0", "--out", tmp_path / "o"], capsys)
    (tmp_path / "x.toml").write_text(
        '[calibration]\nname = "x"\n[objective]\nkind = "guess"\n'
        '[[parameter]]\nkey = "critical.work"\nlow = "1ms"\nhigh = "2ms"\n'
    )
    assert '"claims" or "counters"' in _fails(
        [tmp_path / "x.toml", "--out", tmp_path / "o"], capsys
    )
    (tmp_path / "board.csv").write_text("t_s,processed\n0,10\n1,abc\n")
    assert "line 3: processed: not a number" in _fails([good, "--out", tmp_path / "o"], capsys)
    (tmp_path / "board.csv").write_text("t_s,bananas\n0,10\n1,3\n")
    assert "unknown column 'bananas'" in _fails([good, "--out", tmp_path / "o"], capsys)
    (tmp_path / "board.csv").write_text("time,processed\n0,10\n1,3\n")
    assert "no t_s column" in _fails([good, "--out", tmp_path / "o"], capsys)
    (tmp_path / "board.csv").write_text("t_s,processed\n0,10\n7,3\n")  # beyond the 4 s run
    assert "is not a bin start of the simulated run" in _fails(
        [good, "--out", tmp_path / "o"], capsys
    )
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "mine.txt").write_text("keep")
    (tmp_path / "board.csv").write_text("t_s,processed\n0,10\n1,3\n")
    assert "not empty" in _fails([good, "--out", tmp_path / "foreign"], capsys)
    assert (tmp_path / "foreign" / "mine.txt").read_text() == "keep"


def _danicki_calibration() -> str:
    """The shipped Danicki calibration, its scenario folder made absolute (for a copy in
    a temporary folder)."""
    return (ROOT / "scenarios" / "calibration" / "danicki2021.toml").read_text().replace(
        'scenarios = "../danicki2021"', f'scenarios = "{ROOT / "scenarios" / "danicki2021"}"'
    )


def test_claims_objective_counts_the_studys_claims(tmp_path):
    """Two points of the Danicki calibration on 6 s runs: every claim is an objective column."""
    text = _danicki_calibration().replace('duration = "16s"', 'duration = "6s"')
    (tmp_path / "d.toml").write_text(text)
    cal = calibrate.load_calibration(tmp_path / "d.toml")
    from rtshield.studies import danicki2021

    assert cal.claims == tuple(c.key for c in danicki2021.CLAIMS)
    assert [r for r, _, _ in cal.runs] == list(danicki2021.RUNS)
    points = calibrate.search(cal, budget=2, jobs=2)
    assert len(points) == 2
    for r in points:
        assert r.score == sum(h for h, _ in r.objectives.values())
    m = calibrate.pair_matrix(cal, points)
    assert m.shape == (len(cal.claims),) * 2 and (m == m.T).all()
    assert "[costs]" in calibrate.best_toml(cal, calibrate.best_of(points))


def test_unknown_claim_and_study_are_refused(tmp_path):
    base = _danicki_calibration()
    (tmp_path / "a.toml").write_text(base.replace('study = "danicki2021"', 'study = "nosuch"'))
    with pytest.raises(UsageError, match="unknown study 'nosuch'"):
        calibrate.load_calibration(tmp_path / "a.toml")
    (tmp_path / "b.toml").write_text(
        base.replace('scenarios = "', 'claims = ["queue500", "made_up"]\nscenarios = "', 1)
    )
    with pytest.raises(UsageError, match="unknown claim 'made_up'"):
        calibrate.load_calibration(tmp_path / "b.toml")


def test_a_point_sets_the_preset_the_scenario_and_the_pyramid(tmp_path):
    """Each kind of key lands where it belongs; the pyramid keeps its 15 steps."""
    text = _danicki_calibration()
    (tmp_path / "d.toml").write_text(text)
    cal = calibrate.load_calibration(tmp_path / "d.toml")
    keys = [q.key for q in cal.params]
    x = dict(zip(keys, (q.start for q in cal.params), strict=True))
    x.update(
        {
            "flows.peak": 60_000,
            "critical.work": 3_500_000,
            "costs.isr_queue_full": 1_500,
            "platform.time_slicing": False,
            "platform.tick_isr": 4_000,
        }
    )
    scs = calibrate.scenarios(cal, tuple(x[k] for k in keys))
    from rtshield.studies.danicki2021 import RUNS

    assert list(scs) == list(RUNS)
    for run, sc in scs.items():
        assert sc.duration_ns == 16 * 10**9, run
        assert sc.critical.work_ns == 3_500_000
        assert sc.costs["isr_queue_full"] == 1_500 and sc.costs["isr_per_packet"] == 7_000
        assert sc.platform.time_slicing is False and sc.platform.tick_isr_ns == 4_000
        (flow,) = sc.flows
        assert flow.peak_pps == 60_000 and flow.step_pps == pytest.approx(4_000)
    assert scs["burst_high_capacity"].mitigation.capacity == 2000
    assert scs["burst"].mitigation.capacity == 600
    # The files themselves are untouched: the next point starts from them again.
    again = calibrate.scenarios(cal, tuple(q.start for q in cal.params))
    assert again["burst"].flows[0].peak_pps == 150_000
    assert again["burst"].platform.time_slicing is True
    best = calibrate.PointResult(0, "start", tuple(x[k] for k in keys), 12.0, {}, 0.0)
    snippet = calibrate.best_toml(cal, best)
    assert 'peak = "60000pps"' in snippet and 'step = "4000pps"' in snippet
    assert 'isr_queue_full = "1.5us"' in snippet and "time_slicing = false" in snippet
    assert 'work = "3.5ms"' in snippet.split("[defaults.critical]", 1)[1]


def test_a_calibration_file_is_not_a_scenario():
    from rtshield.scenario import load_scenario as load

    with pytest.raises(UsageError, match="calibration file for 'rtshield calibrate'"):
        load(ROOT / "scenarios" / "calibration" / "danicki2021.toml")


def test_tpe_search_recovers_the_cost_and_is_deterministic_on_dask(tmp_path):
    """The adaptive search: the same points for a seed, in this process or on a
    local Dask cluster of two workers; it finds the cost the board was made with.
    The points the workers send back are recorded: read back, they are the same."""
    _board(tmp_path)
    cal = calibrate.load_calibration(_cal(tmp_path, budget=24))
    a = calibrate.search(cal, jobs=1, method="tpe")
    (tmp_path / "rec").mkdir()
    record = calibrate.PointRecord(tmp_path / "rec", cal, "tpe", cal.seed, 24)
    b = calibrate.search(cal, jobs=2, method="tpe", record=record)
    record.close(True)
    assert [(r.values, r.score, r.phase) for r in a] == [(r.values, r.score, r.phase) for r in b]
    again = calibrate.PointRecord(tmp_path / "rec", cal, "tpe", cal.seed, 24)
    c = calibrate.search(cal, jobs=1, method="tpe", record=again)
    again.close(True)
    assert again.resumed == len(b) and not again.other
    assert [(r.values, r.score, r.objectives) for r in c] == [
        (r.values, r.score, r.objectives) for r in b]
    assert a[0].phase == "start" and a[0].values == (9_000,)
    assert {r.phase for r in a[1:]} == {"tpe"}
    assert len({r.values for r in a}) == len(a) <= 24  # distinct points, within the budget
    best = calibrate.best_of(a)
    assert abs(best.values[0] - TRUE_DRIVER_NS) <= 300 and best.score > -0.01
    c = calibrate.search(cal, jobs=1, method="tpe", seed=99)
    assert [r.values for r in c] != [r.values for r in a]


def test_cli_search_tpe_and_a_bad_search(tmp_path, capsys):
    from rtshield import cli

    _board(tmp_path, columns=("processed",))
    path = _cal(tmp_path, budget=6)
    out = tmp_path / "out"
    assert cli.main(["calibrate", str(path), "--out", str(out), "--jobs", "1",
                     "--search", "tpe"]) == 0
    text = capsys.readouterr().out
    assert "first reached after" in text
    rows = list(csv.DictReader((out / "points.csv").open()))
    assert rows[0]["phase"] == "start" and {r["phase"] for r in rows[1:]} == {"tpe"}
    report = (out / "report.md").read_text()
    assert "TPE" in report and "the best score was first reached at point" in report
    rc = cli.main(["calibrate", str(path), "--out", str(tmp_path / "o2"), "--search", "grid"])
    err = capsys.readouterr().err
    assert rc == 2 and "--search" in err and len(err.strip().splitlines()) == 1
