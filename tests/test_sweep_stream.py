"""Sweeps of any size: the grid made one point at a time, the one table written
in grid order as points finish, exact resumption after an interruption or a
crash, and a point's folder only for the points the report shows."""

import csv
import hashlib
from pathlib import Path

import pytest

from rtshield import cli, sweep
from rtshield.errors import UsageError
from rtshield.sweep import table
from rtshield.sweep.limits import MAX_POINTS, MAX_SHOWN

ROOT = Path(__file__).resolve().parent.parent
FLOOD = ROOT / "scenarios" / "examples" / "constant_flood.toml"
HEX = "a" * 64


def test_a_grid_of_a_billion_points_is_counted_not_built():
    g = sweep.make_grid(
        ["driver.queue=" + ",".join(str(i) for i in range(1, 1001)),
         "critical.work=" + ",".join(f"{i}us" for i in range(1, 1001)),
         "mitigation.capacity=" + ",".join(str(i) for i in range(1, 1001))],
        max_points=10**9,  # above the command's limit: the grid itself has none
    )
    assert len(g) == 10**9
    assert g[0] == {"driver.queue": "1", "critical.work": "1us", "mitigation.capacity": "1"}
    assert g[10**9 - 1]["mitigation.capacity"] == "1000"
    assert g[1001] == {"driver.queue": "1", "critical.work": "2us", "mitigation.capacity": "2"}
    small = sweep.make_grid(["driver.queue=1,2,3", "scenario.seed=7", "critical.work=1us,2us"])
    assert list(small) == [small[i] for i in range(len(small))]
    with pytest.raises(IndexError):
        small[6]


def test_a_grid_over_the_limit_is_refused_before_anything(tmp_path, capsys):
    big = ",".join(str(i) for i in range(1, 4000))
    rc = cli.main(["sweep", str(FLOOD), "--set", f"driver.queue={big}",
                   "--set", f"critical.period={big}", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and f"at most {MAX_POINTS}" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()


def _table(tmp_path, columns=("point", "k", HASH := "scenario_sha256"), room=4):
    return table.LiveTable(tmp_path, list(columns), room=room, name=table.TABLE)


def _lines(path):
    return path.read_text().splitlines()


def test_rows_reach_the_table_in_grid_order_whatever_order_points_finish(tmp_path):
    t = _table(tmp_path)
    t.put(2, ["2", "c", HEX])
    t.put(1, None)  # a failed point: no row
    assert _lines(t.path) == ["point,k,scenario_sha256"]  # waiting for point 0
    assert t.has_room()
    t.put(3, ["3", "d", HEX])
    t.put(4, ["4", "e", HEX])
    t.put(5, ["5", "f", HEX])
    assert not t.has_room()  # four rows wait for point 0: start no further point
    t.put(0, ["0", "a", HEX])
    assert [r.split(",")[0] for r in _lines(t.path)[1:]] == ["0", "2", "3", "4", "5"]
    t.close(complete=True)
    assert t.rows == 5


def test_an_interrupted_table_keeps_what_finished_and_what_the_previous_one_had(tmp_path):
    old = _table(tmp_path)
    for i in range(6):
        old.put(i, [str(i), f"old{i}", hashlib.sha256(str(i).encode()).hexdigest()])
    old.close(complete=True)
    new = _table(tmp_path)
    assert not (tmp_path / "sweep.csv").read_text().count("old")  # moved aside
    h = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(6)]
    row = new.previous(0, h[0])
    assert row[1] == "old0"  # the same scenario: taken
    new.put(0, row)
    assert new.previous(1, "f" * 64) is None  # another scenario: run again
    new.put(2, ["2", "new2", h[2]])  # point 1 still running, 2 finished
    new.close(complete=False)  # Ctrl-C
    keys = [r.split(",")[1] for r in _lines(tmp_path / "sweep.csv")[1:]]
    # 0 resumed, 1 lost (it was running), 2 new, 3-5 the previous table's, not reached yet
    assert keys == ["old0", "new2", "old3", "old4", "old5"]
    assert not (tmp_path / ".sweep-previous.csv").exists()


def test_after_a_crash_both_tables_are_merged_and_a_torn_line_is_dropped(tmp_path):
    cols = "point,k,scenario_sha256"
    (tmp_path / ".sweep-previous.csv").write_text(
        "\n".join([cols] + [f"{i},old{i},{HEX}" for i in range(5)]) + "\n"
    )
    # the crashed run wrote points 0 and 1, and half of point 2's row
    (tmp_path / "sweep.csv").write_text(f"{cols}\n0,new0,{HEX}\n1,new1,{HEX}\n2,new2,aaa")
    t = _table(tmp_path)
    got = [t.previous(i, HEX) for i in range(5)]
    assert [r[1] if r else None for r in got] == ["new0", "new1", "old2", "old3", "old4"]
    t.close(complete=True)


def test_a_previous_table_of_other_columns_resumes_nothing(tmp_path):
    (tmp_path / "sweep.csv").write_text(f"point,other,scenario_sha256\n0,x,{HEX}\n")
    t = _table(tmp_path)
    assert t.previous(0, HEX) is None
    t.close(complete=True)


SETS = ["driver.queue=5,50,400", "flows.flood.rate=1000pps,30000pps,60000pps,90000pps,120000pps",
        "scenario.duration=1s"]


@pytest.fixture(scope="module")
def flood(tmp_path_factory) -> Path:
    """constant_flood.toml with one constant flood (a rate to sweep)."""
    text = FLOOD.read_text()
    for old, new in (('pattern = "steps"', 'pattern = "constant"'),
                     ('rates = ["60000pps", "0pps"]', 'rate = "60000pps"'),
                     ('step_every = "10s"', ""), ('begin = "1s"', 'begin = "0s"')):
        assert old in text
        text = text.replace(old, new)
    p = tmp_path_factory.mktemp("scenario") / "flood.toml"
    p.write_text(text)
    return p


def _args(flood, out, quiet=True):
    args = ["sweep", str(flood), "--out", str(out), "--jobs", "2", *(["--quiet"] * quiet)]
    for s in SETS:
        args += ["--set", s]
    return args


def _interrupted_after_six(flood, out, monkeypatch):
    """The sweep of ``_args`` into ``out``, stopped by Ctrl-C as its 7th point's row is made."""
    from rtshield.sweep import run as sweep_run

    real = sweep_run.table.numbers
    seen = []

    def stop_after_six(summary, period):
        seen.append(1)
        if len(seen) > 6:
            raise KeyboardInterrupt
        return real(summary, period)

    monkeypatch.setattr(sweep_run.table, "numbers", stop_after_six)
    assert cli.main(_args(flood, out)) == 130
    monkeypatch.setattr(sweep_run.table, "numbers", real)


def test_a_sweep_larger_than_the_report_keeps_only_the_shown_folders_and_resumes_exactly(
    tmp_path, flood, monkeypatch, capsys
):
    whole = tmp_path / "whole"
    assert cli.main(_args(flood, whole)) == 0
    rows = list(csv.DictReader((whole / "sweep.csv").open()))
    n = 15
    assert n > MAX_SHOWN and [int(r["point"]) for r in rows] == list(range(n))
    assert [(r["driver.queue"], r["flows.flood.rate"]) for r in rows[:2]] == [
        ("5", "1000pps"), ("5", "30000pps")]
    folders = {p.name for p in (whole / "runs").iterdir()}
    assert 0 < len(folders) <= MAX_SHOWN  # the extremes and the boundary only
    # the extremes: the smallest and the largest margin
    margins = [float(r["margin_us"]) for r in rows]
    for pick in (margins.index(min(margins)), margins.index(max(margins))):
        r = rows[pick]
        assert f"queue_{r['driver.queue']}_flood.rate_{r['flows.flood.rate']}" in folders
    import pyarrow.parquet as pq

    assert pq.read_table(whole / "sweep.parquet").column("misses").to_pylist() == [
        int(r["misses"]) for r in rows]

    # the same sweep interrupted after 6 points, then resumed: the very same table
    part = tmp_path / "part"
    _interrupted_after_six(flood, part, monkeypatch)
    assert not part.exists()  # all or nothing: the finished rows wait beside it
    staged = tmp_path / ".part.rtshield-staging"
    kept = list(csv.DictReader((staged / "sweep.csv").open()))
    assert 1 <= len(kept) <= 6
    assert all(r == rows[int(r["point"])] for r in kept)  # what is there is exact
    capsys.readouterr()
    assert cli.main(_args(flood, part, quiet=False)) == 0  # not quiet: the resumed count is printed
    assert f"{len(kept)} of 15 points were already" in capsys.readouterr().out
    assert (part / "sweep.csv").read_bytes() == (whole / "sweep.csv").read_bytes()
    assert (part / "sweep.parquet").read_bytes() == (whole / "sweep.parquet").read_bytes()
    assert {p.name for p in (part / "runs").iterdir()} == folders
    assert not staged.exists()
    # a finished sweep's own table is resumed from: nothing runs again, the same table
    capsys.readouterr()
    assert cli.main(_args(flood, part, quiet=False)) == 0
    assert "15 of 15 points were already" in capsys.readouterr().out
    assert (part / "sweep.csv").read_bytes() == (whole / "sweep.csv").read_bytes()
    assert not staged.exists()


def _job(x):
    """A job of the stream's test: its value, and the Dask task it ran in."""
    from distributed import get_worker

    if x == 5:
        raise ValueError("job 5 fails")
    return x * x, get_worker().get_current_task()


def test_a_stream_batches_jobs_into_tasks_each_job_its_own_result():
    from rtshield.cluster import Cluster, stream

    def jobs():
        for i in range(11):
            if i == 8:
                yield None  # "no room": the batch being made goes as it is
            yield i, (i,)

    with Cluster(None, 2) as c:
        got = list(stream(c, _job, jobs(), batch=3))
    assert sorted(t for t, _, _ in got) == list(range(11))
    by_tag = {t: (r, e) for t, r, e in got}
    assert isinstance(by_tag[5][1], ValueError) and by_tag[5][0] is None  # only job 5 fails
    assert all(by_tag[i][0][0] == i * i and by_tag[i][1] is None for i in range(11) if i != 5)
    tasks = {i: by_tag[i][0][1] for i in range(11) if i != 5}
    # 0-2, 3-5 (5 failed in it), 6-7 (cut short by None), 8-10: one task each
    assert tasks[0] == tasks[1] == tasks[2] != tasks[3] == tasks[4]
    assert tasks[6] == tasks[7] != tasks[8] == tasks[9] == tasks[10]
    assert len(set(tasks.values())) == 4
    # in a batch, its jobs' results come back in order, together
    order = [t for t, _, _ in got]
    for first in (0, 3, 6, 8):
        k = order.index(first)
        assert order[k : k + (2 if first == 6 else 3)] == list(
            range(first, first + (2 if first == 6 else 3)))


def test_points_batched_into_tasks_give_the_same_table_and_resume_mid_batch(
    tmp_path, flood, monkeypatch
):
    from rtshield.sweep import run as sweep_run

    monkeypatch.setattr(sweep_run, "_batch_size", lambda n, workers: 1)
    one = tmp_path / "one"
    assert cli.main(_args(flood, one)) == 0
    seen_batch = []
    real_stream = sweep_run.stream

    def spy(*a, batch=1, **kw):
        seen_batch.append(batch)
        return real_stream(*a, batch=batch, **kw)

    monkeypatch.setattr(sweep_run, "stream", spy)
    monkeypatch.setattr(sweep_run, "_batch_size", lambda n, workers: 4)
    four = tmp_path / "four"
    assert cli.main(_args(flood, four)) == 0
    assert seen_batch[0] == 4  # the points went four a task
    for name in ("sweep.csv", "sweep.parquet", "safe_region.json"):
        assert (four / name).read_bytes() == (one / name).read_bytes()

    # interrupted at the 7th point, the 3rd of the second batch; resumed: the same table
    part = tmp_path / "part"
    _interrupted_after_six(flood, part, monkeypatch)
    kept = list(csv.DictReader((tmp_path / ".part.rtshield-staging" / "sweep.csv").open()))
    assert 1 <= len(kept) <= 6
    assert cli.main(_args(flood, part)) == 0
    for name in ("sweep.csv", "sweep.parquet"):
        assert (part / name).read_bytes() == (one / name).read_bytes()


def test_keep_runs_writes_every_points_folder(tmp_path, flood):
    out = tmp_path / "kept"
    assert cli.main([*_args(flood, out), "--keep-runs"]) == 0
    assert len(list((out / "runs").iterdir())) == 15
    for d in (out / "runs").iterdir():
        assert (d / "summary.json").is_file() and (d / "point.json").is_file()


def test_bad_point_is_named_before_anything_runs(tmp_path, capsys, flood):
    rc = cli.main(["sweep", str(flood), "--set", "driver.queue=5,0", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "(in point queue=0)" in err
    assert not (tmp_path / "o").exists()


def test_expand_still_lists_the_points():
    axes, points = sweep.expand(["driver.queue=1,2", "critical.work=1us"])
    assert [a.key for a in axes] == ["driver.queue"] and len(points) == 2
    with pytest.raises(UsageError, match="nothing to sweep"):
        sweep.expand(["driver.queue=1"])


def test_the_shown_points_are_the_extremes_and_the_boundary_spread_evenly():
    import numpy as np

    axes = [sweep.Axis("a.x", tuple(str(i) for i in range(10))),
            sweep.Axis("b.y", tuple(str(j) for j in range(8)))]
    safe = np.array([1 if i + j < 9 else 0 for i in range(10) for j in range(8)], dtype=np.int8)
    bounds = sweep.boundaries_of(axes, safe)
    pairs = list(dict.fromkeys(p for b in bounds for p in b["points"]))
    assert len(pairs) > MAX_SHOWN  # more boundary than the report shows
    margin = np.linspace(-5.0, 5.0, 80)
    margin[17] = 99.0  # the largest margin
    shown = sweep.shown_points(80, bounds, margin)
    assert len(shown) == MAX_SHOWN and shown == sorted(shown)
    assert 0 in shown and 17 in shown  # the smallest and the largest margin
    assert pairs[0][0] in shown and pairs[-1][1] in shown  # both ends of the boundary
    assert sweep.shown_points(12, bounds, margin[:12]) == list(range(12))  # small: all
    # every transition of the rows-based form is one of the array form's
    rows = [{"a.x": str(i), "b.y": str(j), "safe": bool(safe[i * 8 + j])}
            for i in range(10) for j in range(8)]
    assert sweep.boundaries(axes, rows) == [
        {k: v for k, v in b.items() if k != "points"} for b in bounds]


def test_the_figure_of_a_large_grid_is_heat_maps():
    import numpy as np

    axes = [sweep.Axis("a.x", tuple(str(i) for i in range(20))),
            sweep.Axis("b.y", tuple(f"{j}pps" for j in range(13)))]
    cols = {c: np.arange(260, dtype=float) for c in ("processed", "misses",
                                                      "lateness_bin_max_pct")}
    cols["misses"][5] = np.nan  # a failed point
    fig = sweep.sweep_figure(axes, cols)
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 3 and panels[0].get_xlabel() == "a.x"
    assert panels[0].images[0].get_array().shape == (13, 20)  # y: the second axis
    few = [axes[0], sweep.Axis("b.y", ("1pps", "2pps"))]
    fig = sweep.sweep_figure(few, {c: np.arange(40, dtype=float) for c in cols})
    assert not any(ax.images for ax in fig.axes)
    assert len(fig.axes[0].lines) == 2  # one line per value of the second axis
