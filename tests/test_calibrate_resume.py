"""rtshield calibrate resumes an interrupted calibration exactly.

A calibration is stopped by Ctrl-C after a few points (the engine call of the
next point raises it), then run again: the points it evaluated are read back
from the record kept beside --out, only the missing ones are simulated (the
engine's calls are counted: each one is a real simulation), and every file
written is byte for byte that of an uninterrupted run — for both searches.
A different calibration never reads the record back: it says so in one line
and starts afresh; TPE with another --budget reads its points back
(docs/decisions/calibrate-resume.md).
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import pytest
from test_calibrate import _board, _cal

from rtshield import cli
from rtshield.calibrate import RECORD
from rtshield.calibrate import points as search_points
from rtshield.clitools import Terminated
from rtshield.progress import ProgressBar

BUDGET = {"lhs": 8, "tpe": 14}  # tpe: more points than its 10 random start-up trials


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Path:
    """The counters calibration of test_calibrate, every run shortened to the board's
    first two seconds (one 2 s scenario a point): its file."""
    tmp = tmp_path_factory.mktemp("board")
    csv_path = _board(tmp)
    csv_path.write_text("".join(csv_path.read_text().splitlines(keepends=True)[:3]))
    cal = _cal(tmp, budget=8)
    cal.write_text(cal.read_text().replace("[calibration]\n", '[calibration]\nduration = "2s"\n'))
    return cal


def calibrate(monkeypatch, capsys, cal: Path, out: Path, *extra, stop_after: int | None = None,
              stop: BaseException | None = None, on_stop=None):
    """``rtshield calibrate`` in this process; ``stop`` (Ctrl-C) raised as the engine is
    called for the ``stop_after + 1``-th time, after ``on_stop()``. Returns (exit status,
    engine calls, stdout, stderr, the progress bar's texts)."""
    real = search_points.simulate
    calls = []

    def engine(*a, **k):
        if stop_after is not None and len(calls) >= stop_after:
            if on_stop is not None:
                on_stop()
            raise stop or KeyboardInterrupt()
        calls.append(1)
        return real(*a, **k)

    texts = []
    bar_call = ProgressBar.__call__

    def bar(self, done, total):
        bar_call(self, done, total)
        texts.append(self.text())

    monkeypatch.setattr(search_points, "simulate", engine)
    monkeypatch.setattr(ProgressBar, "__call__", bar)
    capsys.readouterr()
    try:
        rc = cli.main(["calibrate", str(cal), "--out", str(out), "--jobs", "1", *map(str, extra)])
    finally:
        monkeypatch.setattr(search_points, "simulate", real)
        monkeypatch.setattr(ProgressBar, "__call__", bar_call)
    o, e = capsys.readouterr()
    return rc, len(calls), o, e, texts


def files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def record_rows(d: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((d / RECORD).open()))


@pytest.fixture(scope="module")
def wholes(board, tmp_path_factory) -> dict[str, dict[str, bytes]]:
    """Every file of an uninterrupted calibration, per search."""
    tmp = tmp_path_factory.mktemp("whole")
    got = {}
    for search, budget in BUDGET.items():
        out = tmp / search
        assert cli.main(["calibrate", str(board), "--out", str(out), "--jobs", "1", "--quiet",
                         "--search", search, "--budget", str(budget)]) == 0
        got[search] = files(out)
        assert len(record_rows(out)) == budget
    return got


@pytest.mark.parametrize(("search", "stop", "status"), [
    ("lhs", KeyboardInterrupt(), 130),  # Ctrl-C
    ("tpe", Terminated(), 143),  # SIGTERM
])
def test_an_interrupted_calibration_resumes_exactly(board, wholes, tmp_path, monkeypatch,
                                                    capsys, search, stop, status):
    n = BUDGET[search]
    args = ("--search", search, "--budget", n)
    out = tmp_path / "cal"
    staged = tmp_path / ".cal.rtshield-staging"

    def crash():
        """What a crash (the process killed now) would leave: the staging folder as it
        is on disk while the calibration runs, beside another --out."""
        shutil.copytree(staged, tmp_path / ".crash.rtshield-staging")

    rc, ran, _, err, _ = calibrate(monkeypatch, capsys, board, out, *args, stop_after=5,
                                   stop=stop, on_stop=crash)
    assert (rc, ran) == (status, 5) and "interrupted" in err
    assert not out.exists()  # all or nothing: the evaluated points wait beside it
    assert [r["point"] for r in record_rows(staged)] == ["0", "1", "2", "3", "4"]
    # each point was on disk as it finished, before the command stopped
    crashed = tmp_path / "crash"
    assert record_rows(tmp_path / ".crash.rtshield-staging") == record_rows(staged)
    rc, ran, _, _, _ = calibrate(monkeypatch, capsys, board, crashed, *args)
    assert (rc, ran) == (0, n - 5) and files(crashed) == wholes[search]

    rc, ran, text, err, bar = calibrate(monkeypatch, capsys, board, out, *args)
    assert rc == 0 and err == ""
    assert ran == n - 5  # only the missing points were simulated
    assert f"5 of {n} points were already recorded for {out} and not simulated again" in text
    assert any(f"/{n} points, 5 resumed" in t for t in bar)  # the progress says so
    assert files(out) == wholes[search]  # every byte of an uninterrupted run
    assert not staged.exists()

    # a finished calibration's record is read back too: nothing is simulated again
    rc, ran, text, _, _ = calibrate(monkeypatch, capsys, board, out, *args)
    assert (rc, ran) == (0, 0) and f"{n} of {n} points were already recorded" in text
    assert files(out) == wholes[search]


def test_a_failed_calibration_keeps_its_points(board, tmp_path, monkeypatch, capsys):
    """A point that fails (here: the engine call raises, as when the cluster's workers
    are lost) ends the calibration; the points that finished stay recorded."""
    out = tmp_path / "cal"
    with pytest.raises(RuntimeError, match="workers lost"):
        calibrate(monkeypatch, capsys, board, out, stop_after=3,
                  stop=RuntimeError("workers lost"))
    assert not out.exists()
    assert len(record_rows(tmp_path / ".cal.rtshield-staging")) == 3


def test_tpe_reads_its_points_back_for_a_larger_budget(board, wholes, tmp_path, monkeypatch,
                                                       capsys):
    out = tmp_path / "cal"
    rc, ran, _, _, _ = calibrate(monkeypatch, capsys, board, out, "--search", "tpe",
                                 "--budget", 8)
    assert (rc, ran) == (0, 8)
    eight = files(out)
    rc, ran, text, err, _ = calibrate(monkeypatch, capsys, board, out, "--search", "tpe",
                                      "--budget", BUDGET["tpe"])
    assert (rc, ran, err) == (0, BUDGET["tpe"] - 8, "")
    assert f"8 of {BUDGET['tpe']} points were already recorded" in text
    assert files(out) == wholes["tpe"]
    # and back to the smaller budget: its points are the first of the record
    rc, ran, _, err, _ = calibrate(monkeypatch, capsys, board, out, "--search", "tpe",
                                   "--budget", 8)
    assert (rc, ran, err) == (0, 0, "") and files(out) == eight


def test_the_key_names_the_version_and_the_search(board, monkeypatch):
    """rtshield's version, and optuna's for TPE, are part of a calibration's key."""
    from rtshield.calibrate import load_calibration, record

    cal = load_calibration(board)
    key = {m: record.calibration_key(cal, m, 3, 8) for m in ("lhs", "tpe")}
    monkeypatch.setattr(record, "__version__", "0.0.0-other")
    assert record.calibration_key(cal, "lhs", 3, 8) != key["lhs"]
    monkeypatch.undo()
    monkeypatch.setattr(record, "version", lambda name: "0.0-other")
    assert record.calibration_key(cal, "tpe", 3, 8) != key["tpe"]
    assert record.calibration_key(cal, "lhs", 3, 8) == key["lhs"]


def test_a_different_calibration_starts_afresh_saying_so(board, tmp_path, monkeypatch, capsys):
    """Each change below makes another calibration: the record is not read back (one
    warning line), and the new calibration's record holds only its own points."""
    tmp = tmp_path / "files"
    tmp.mkdir()
    for f in ("cal.toml", "board.csv", "model.toml"):
        (tmp / f).write_bytes((board.parent / f).read_bytes())
    cal = tmp / "cal.toml"
    out = tmp_path / "cal"
    staged = tmp_path / ".cal.rtshield-staging"

    def step(*args, changed: bool):
        rc, ran, _, err, _ = calibrate(monkeypatch, capsys, cal, out, *args, stop_after=2)
        lines = err.strip().splitlines()
        assert (rc, ran, lines[-1]) == (130, 2, "rtshield: interrupted")
        if changed:
            assert lines[:-1] == [
                f"rtshield: warning: {out}: the points recorded there are of another calibration "
                "(its file, the files it reads, --search, --seed or --budget differ): "
                "starting afresh"
            ]
        else:
            assert lines[:-1] == []
        rows = record_rows(staged)
        keys = {r["calibration_sha256"] for r in rows}
        assert len(keys) == 1
        return rows, keys.pop()

    rows, key = step(changed=False)
    assert len(rows) == 2
    # the same calibration again: the two points are read back, two more simulated
    rows, same = step(changed=False)
    assert same == key and len(rows) == 4
    seen = {key}
    board_csv = tmp / "board.csv"
    changes = [
        ("--seed", 4),  # the seed
        ("--search", "tpe"),  # the search
        ("--budget", 9),  # the budget of the Latin hypercube (its size is a share of it)
    ]
    for args in changes:
        rows, key = step(*args, changed=True)
        assert len(rows) == 2 and key not in seen  # nothing of the other calibration kept
        seen.add(key)
        rows, key = step(changed=True)  # back to the file's own: afresh again
    # the objective's data: one counter of the board changed
    lines = board_csv.read_text().splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0] + ",1"
    board_csv.write_text("\n".join(lines) + "\n")
    rows, key = step(changed=True)
    assert key not in seen
    seen.add(key)
    # a file it reads: the scenario of the objective
    model = tmp / "model.toml"
    model.write_text(model.read_text().replace("seed = 1", "seed = 2", 1))
    rows, key = step(changed=True)
    assert key not in seen
    seen.add(key)
    # the calibration file itself
    cal.write_text(cal.read_text().replace('name = "board"', 'name = "board2"'))
    rows, key = step(changed=True)
    assert len(rows) == 2 and key not in seen


def test_a_claims_point_is_read_back_as_it_was_recorded(board, tmp_path):
    """A study's claims (holds, simulated value) and a non-finite score come back exactly."""
    from rtshield.calibrate import PointRecord, load_calibration, scenarios

    cal = load_calibration(board)
    scs = scenarios(cal, (9_000,))
    results = [(2.0, {"queue500": (True, "0 misses"), "burst_cap": (False, "12 misses")}, 0.5),
               (float("nan"), {"processed": float("inf")}, 0.25)]
    rec = PointRecord(tmp_path, cal, "lhs", 3, 8)
    for i, r in enumerate(results):
        assert rec.recall(i, (9_000,), scs) is None
        rec.keep(i, r)
    rec.close(True)
    again = PointRecord(tmp_path, cal, "lhs", 3, 8)
    back = [again.recall(i, (9_000,), scs) for i in range(2)]
    again.close(True)
    assert back[0] == (2.0, results[0][1], 0.0)  # no worker time: it cost nothing now
    assert math.isnan(back[1][0]) and back[1][1:] == ({"processed": float("inf")}, 0.0)
