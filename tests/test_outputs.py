"""Result writers, figures, report and progress bar, against a small stand-in result.

The stand-in (``FakeResult``) lives only in the tests: it has the shape of
:mod:`rtshield.result` (``summary()``, ``timeseries``, ``cycle_time_hist``) so
the writers can be tested without running the engine.
"""

import io
import json
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtshield import figures, outputs, runner
from rtshield.errors import OutputError, UsageError
from rtshield.progress import ProgressBar
from rtshield.scenario import loads_scenario
from rtshield.tables import key_metrics, text_table

SCENARIO = """
[scenario]
name = "fake_queue"
description = "Writers test"
source = "Danicki et al. §3, Figure 8"
notes = "Paper: the lateness <remained> at zero."
platform = "esp32-freertos"
duration = "5s"
[driver]
queue = 500
[mitigation]
kind = "queue"
[[flows]]
name = "syn"
pattern = "pyramid"
start = "0pps"
peak = "20000pps"
step = "10000pps"
step_every = "1s"
"""


class FakeResult:
    def __init__(self, n=5, scale=1.0):
        t = np.arange(n, dtype=float)
        offered = np.array([0, 10000, 20000, 10000, 0][:n], dtype=np.int64)
        self.timeseries = {
            "t_s": t,
            "offered": offered,
            "irq_raised": offered,
            "isr_runs": offered,
            "irq_lost": np.zeros(n, dtype=np.int64),
            "received": offered,
            "processed": (offered * 0.9).astype(np.int64),
            "delivered": (offered * 0.9).astype(np.int64),
            "dropped_queue_full": (offered * 0.1).astype(np.int64),
            "cycles": np.array([100, 100, 90, 100, 100][:n], dtype=np.int64),
            "lateness_pct": np.array([0.0, 0.0, 12.5 * scale, 0.0, 0.0][:n]),
            "lateness_max_pct": np.array([0.0, 0.0, 3.25, 0.0, 0.0][:n]),
            "misses": np.array([0, 0, 7, 0, 0][:n], dtype=np.int64),
            "cpu_isr": np.array([0.0, 0.1, 0.2, 0.1, 0.0][:n]),
            "rx_disabled_s": np.zeros(n),
        }
        edges = np.arange(0, 20001, 500, dtype=float)
        counts = np.zeros(len(edges) - 1)
        counts[20] = 480
        counts[21] = 10
        self.cycle_time_hist = (edges, counts)
        self.flow_latency_hist = {"syn": (np.array([1.0, 10.0, 100.0, 1000.0]),
                                          np.array([5, 30, 1]))}
        self._scale = scale

    def summary(self):
        return {
            "scenario": "fake_queue",
            "seed": 1,
            "duration_s": 5.0,
            "totals": {"offered": np.int64(40000), "irq_raised": 40000, "isr_runs": 40000,
                       "irq_lost": 0, "received": 40000, "processed": 36000,
                       "delivered": 36000, "dropped": {"queue_full": 4000}},
            "critical": {"cycles": 490, "misses": 7, "lateness_max_pct": 3.25,
                         "lateness_bin_max_pct": 12.5 * self._scale,
                         "lateness_sum_pct": 12.5 * self._scale,
                         "cycle_time_us": {"min": 9999.0, "p50": 10000.0, "p99": 10325.0,
                                           "max": 10325.0}},
            "flows": {"syn": {"offered": 40000, "delivered": 36000, "dropped": 4000,
                              "latency_us": {"p50": 55.5, "p99": 900.0, "max": 1200.0}}},
            "cpu": {"isr": 0.08, "critical": 0.4, "driver": np.float64(1 / 3)},
            "mitigation": {"name": "queue", "parameters": {"queue": 500},
                           "counters": {"disables": 12}},
        }


@pytest.fixture
def scenario():
    return loads_scenario(SCENARIO, "fake.toml")


def test_summary_json_is_sorted_rounded_and_stable():
    s = FakeResult().summary()
    s["critical"]["odd"] = float("nan")
    text = outputs.format_summary_json(s)
    assert text == outputs.format_summary_json(FakeResult().summary() | {
        "critical": s["critical"]})
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["cpu"]["driver"] == 0.333333333  # 9 significant digits
    assert data["critical"]["odd"] is None
    assert data["totals"]["offered"] == 40000 and isinstance(data["totals"]["offered"], int)
    assert text.endswith("}\n")


def test_normalize_rejects_unknown_types():
    with pytest.raises(TypeError):
        outputs.normalize({"x": object()})


def test_timeseries_csv_and_parquet(tmp_path):
    ts = FakeResult().timeseries
    paths = outputs.write_timeseries(tmp_path, ts)
    assert [p.name for p in paths] == ["timeseries.csv", "timeseries.parquet"]
    lines = (tmp_path / "timeseries.csv").read_text().splitlines()
    header = lines[0].split(",")
    assert header[:8] == ["t_s", "offered", "irq_raised", "isr_runs", "irq_lost", "received",
                          "processed", "delivered"]
    assert header.index("dropped_queue_full") < header.index("cycles") < header.index(
        "lateness_pct") < header.index("cpu_isr") < header.index("rx_disabled_s")
    assert len(lines) == 6
    row2 = dict(zip(header, lines[3].split(","), strict=True))
    assert row2["offered"] == "20000" and row2["lateness_pct"] == "12.5" and row2["t_s"] == "2"
    table = pq.read_table(tmp_path / "timeseries.parquet")
    assert table.column_names == header
    assert table.column("offered").to_pylist() == [0, 10000, 20000, 10000, 0]


def test_timeseries_columns_must_agree():
    with pytest.raises(ValueError):
        outputs.timeseries_csv({"t_s": [0, 1], "offered": [1]})


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    outputs.atomic_write(target, "old\n")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", boom)
    with pytest.raises(OutputError, match=r"summary.json: cannot write: No space left on device"):
        outputs.atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_prepare_out_dir(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="--out: .* not a directory"):
        outputs.prepare_out_dir(f)
    with pytest.raises(UsageError, match="--out: cannot create"):
        outputs.prepare_out_dir(f / "sub")
    d = outputs.prepare_out_dir(tmp_path / "a" / "b")
    # the staging folder beside --out, marked as rtshield's and as a staging folder
    assert d == tmp_path / "a" / ".b.rtshield-staging"
    assert sorted(p.name for p in d.iterdir()) == [outputs.MARKER, outputs.STAGING_MARK]
    assert not (tmp_path / "a" / "b").exists()  # nothing claims to be the results yet
    outputs.atomic_write(tmp_path / "a" / "b" / "x.json", "{}\n")  # written into staging
    assert (d / "x.json").is_file()
    outputs.finish_out_dir(tmp_path / "a" / "b")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b"]
    assert sorted(p.name for p in (tmp_path / "a" / "b").iterdir()) == [outputs.MARKER, "x.json"]


def test_an_output_folder_is_replaced_in_one_step_without_a_process(tmp_path, monkeypatch):
    """A second run into the same --out swaps the folders (renameat2's exchange on
    Linux), and finishing a folder starts no process (the C library's function is
    looked up among the loaded symbols, not through ``ldconfig -p``: a fork of a large
    process each time)."""
    import subprocess

    started = []

    def no_process(self, args, *rest, **kwargs):
        started.append(args)  # noted: the caller may swallow the error
        raise OSError("finishing an output folder started a process")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    exchanged = []
    real = outputs._rename2

    def rename2(a, b, flags):
        done = real(a, b, flags)
        exchanged.append((flags, done))
        return done

    monkeypatch.setattr(outputs, "_rename2", rename2)
    out = tmp_path / "o"
    for text in ("one\n", "two\n"):
        outputs.prepare_out_dir(out)
        outputs.atomic_write(out / "x.txt", text)
        outputs.finish_out_dir(out)
        assert (out / "x.txt").read_text() == text
    assert started == []
    assert exchanged == [(outputs._RENAME_NOREPLACE, True), (outputs._RENAME_EXCHANGE, True)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_every_file_is_on_disk_before_its_folder_moves_into_place(tmp_path, monkeypatch):
    """The files of a command's --out are synced together when it finishes, each before
    the folder is moved into place; a resumable folder's files (a later command
    reads them from the staging folder) are synced as they are written."""
    events = []
    real_fsync, real_rename2 = os.fsync, outputs._rename2

    def fsync(fd):
        events.append(("synced", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def rename2(a, b, flags):
        events.append(("moved", str(a)))
        return real_rename2(a, b, flags)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(outputs, "_rename2", rename2)
    out = tmp_path / "o"
    staging = outputs.prepare_out_dir(out)
    names = [f"{i}.txt" for i in range(5)]
    for name in names:
        outputs.atomic_write(out / name, name)
    outputs.finish_out_dir(out)
    moved = events.index(("moved", str(staging)))
    synced = {path for kind, path in events[:moved] if kind == "synced"}
    assert {str(staging / n) for n in [*names, outputs.MARKER]} <= synced
    assert [(out / n).read_text() for n in names] == names
    outputs.prepare_out_dir(tmp_path / "r", resumable=True)
    events.clear()
    written = outputs.atomic_write(tmp_path / "r" / "point.json", "{}")
    assert len(events) == 1 and events[0][0] == "synced", events
    assert Path(events[0][1]).parent == written.parent  # its temporary file, before
    assert Path(events[0][1]).name.startswith(".point.json.")  # the rename
    outputs.finish_out_dir(tmp_path / "r")


def test_figures_are_png_and_deterministic(tmp_path):
    r = FakeResult()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = figures.run_figures(r, "fake", tmp_path / "a", period_us=10000)
    b = figures.run_figures(r, "fake", tmp_path / "b", period_us=10000)
    assert set(a) == {"packets", "critical", "cycle_time", "latency"}
    for k in a:
        data = a[k].read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert data == b[k].read_bytes()


def test_no_stale_optional_figures(tmp_path):
    figures.run_figures(FakeResult(), "fake", tmp_path)
    assert (tmp_path / "latency.png").is_file()
    r = FakeResult()
    r.flow_latency_hist = {}
    r.cycle_time_hist = None
    paths = figures.run_figures(r, "fake", tmp_path)
    assert set(paths) == {"packets", "critical"}
    assert not (tmp_path / "latency.png").exists()
    assert not (tmp_path / "cycle_time.png").exists()


def test_cycle_time_figure_skips_empty_histograms():
    assert figures.cycle_time_figure(None, "x") is None
    assert figures.cycle_time_figure(([0, 1, 2], [0, 0]), "x") is None
    assert figures.cycle_time_figure(([0, 1], [0, 0]), "x") is None  # wrong shape


def test_run_report_is_self_contained(tmp_path, scenario):
    entry = runner.write_run(scenario, FakeResult(), tmp_path)
    html = (tmp_path / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 4
    assert ">Flows</h2>" in html and "1\u202f200.0 µs" in html
    assert "fake_queue" in html and "Danicki et al. §3, Figure 8" in html
    assert "RX queue 500 packets" in html
    assert "Notes: Paper: the lateness &lt;remained&gt; at zero." in html
    assert "queue_full" in html and "disables" in html
    assert 'src="http' not in html
    assert entry.summary["critical"]["misses"] == 7
    for name in ("summary.json", "timeseries.csv", "timeseries.parquet", "packets.png"):
        assert (tmp_path / name).is_file()


def test_figures_drawn_in_workers_are_the_bytes_drawn_here(tmp_path):
    with runner.figure_workers() as pool:
        if pool is None:
            pytest.skip("one CPU: no figure workers")
        there = figures.run_figures(FakeResult(), "fake", tmp_path, 1000.0, pool=pool)
        pngs = {name: p.read_bytes() for name, p in there.items()}
    here = figures.run_figures(FakeResult(), "fake", tmp_path, 1000.0)
    assert sorted(here) == sorted(there) and {"packets", "critical", "cycle_time"} <= set(here)
    for name, p in here.items():
        assert p.read_bytes() == pngs[name], name


def test_results_survive_a_figure_failure(tmp_path, scenario, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(figures, "run_figures", broken)
    with pytest.raises(OutputError, match="figure failed"):
        runner.write_run(scenario, FakeResult(), tmp_path)
    assert json.loads((tmp_path / "summary.json").read_text())["seed"] == 1
    assert (tmp_path / "timeseries.csv").is_file()
    assert not (tmp_path / "report.html").exists()


def test_compare_report_has_every_run(tmp_path, scenario):
    outs = []
    for i, scale in enumerate((1.0, 4.0)):
        d = tmp_path / "runs" / f"r{i}"
        d.mkdir(parents=True)
        r = FakeResult(scale=scale)
        e = runner.write_run(scenario, r, d)
        outs.append(runner.RunOutcome(e, r.timeseries, d, 0.0))
    path = runner.compare(outs, tmp_path, "Two runs", "intro text")
    html = path.read_text()
    assert "Two runs" in html and "intro text" in html
    assert "50.0 %" in html and "12.5 %" in html  # both runs' worst-bin lateness
    comp = json.loads((tmp_path / "comparison.json").read_text())
    assert set(comp) == {"r0", "r1"}
    for name in ("compare_packets.png", "compare_critical.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_key_metrics_and_text_table():
    rows = dict(key_metrics(FakeResult().summary()))
    assert rows["packets sent"] == "40 000"
    assert rows["packets dropped"] == "4 000"
    assert rows["worst 1-bin accumulated lateness"] == "12.5 %"
    big = dict(key_metrics({"critical": {"cycles": 3, "lateness_sum_pct": 12345.67}}))
    assert big["total accumulated lateness"] == "12 345.7 %"
    assert rows["cycle time p99"] == "10 325.0 µs"
    assert rows["CPU share: driver"] == "33.3 %"
    assert dict(key_metrics({}))["critical cycles"] == "—"
    t = text_table(["", "a"], [["x", "1"], ["long name", "22"]]).splitlines()
    assert len(t) == 4 and t[3].endswith("22") and t[2].endswith(" 1")
    # a scenario's name is a heading, shown as written (not read as rich's markup)
    assert text_table(["", "q[/x]"], [["[a]", "1"]]).splitlines()[0].endswith(" q[/x]")


def test_quantities_never_measured_read_as_a_dash():
    """A critical task that never ended a cycle nor missed a deadline has no lateness;
    cycle times need two cycles; a flow's delivery is "delivered of offered"."""
    crit = {"cycles": 0, "misses": 0, "lateness_max_pct": 0.0, "lateness_bin_max_pct": 0.0,
            "lateness_sum_pct": 0.0, "cycle_time_us": {"p50": 0.0, "p99": 0.0, "max": 0.0}}
    rows = dict(key_metrics({"critical": crit}))
    for label in ("worst cycle lateness", "total accumulated lateness", "cycle time max"):
        assert rows[label] == "—", label
    assert rows["critical cycles"] == "0" and rows["deadline misses"] == "0"
    one = dict(key_metrics({"critical": {**crit, "cycles": 1}}))
    assert one["worst cycle lateness"] == "0.0 %" and one["cycle time p50"] == "—"
    starved = dict(key_metrics({"critical": {**crit, "misses": 9, "lateness_max_pct": 850.0}}))
    assert starved["worst cycle lateness"] == "850.0 %"
    flows = dict(key_metrics({"flows": {"hp": {"offered": 9999, "delivered": 8087}}}))
    assert flows["flow hp delivered"] == "8 087 of 9 999"


def test_a_wide_table_is_stacked_to_fit_never_breaking_a_number():
    """Wider than the width: several tables, each with the label column and as many
    run columns as fit; every line fits, every cell is whole on one line."""
    names = [f"configuration_{i}" for i in range(8)]
    rows = [["packets sent", *(f"{2_250_000 + i:,}".replace(",", " ") for i in range(8))],
            ["cycle time max", *(f"{8_416_010.5 + i:,.1f} µs".replace(",", " ")
                                 for i in range(8))]]
    natural = text_table(["", *names], rows)
    assert max(len(ln) for ln in natural.splitlines()) > 100
    for width in (100, 60):
        text = text_table(["", *names], rows, width=width)
        lines = text.splitlines()
        assert max(len(ln) for ln in lines) <= width, width
        for cell in [*names, *rows[0][1:], *rows[1][1:]]:
            assert any(cell in ln for ln in lines), (width, cell)
        assert text.count("packets sent") >= 2  # the labels repeat in each table
    # so narrow that one column and the labels do not fit: the labels are cut, not numbers
    tight = text_table(["", *names], rows, width=30).splitlines()
    assert max(len(ln) for ln in tight) <= 30
    assert any("…" in ln for ln in tight)
    assert any("8 416 017.5 µs" in ln for ln in tight)


def test_print_table_on_a_terminal_and_into_a_pipe():
    from rtshield.tables import print_table

    class Tty(io.StringIO):
        def isatty(self):
            return True

    rows = [["packets sent", "59 999"], ["cycle time p99", "10 489.9 µs"]]
    pipe, tty = io.StringIO(), Tty()
    print_table(["", "queue_500"], rows, file=pipe)
    assert pipe.getvalue() == text_table(["", "queue_500"], rows) + "\n"
    print_table(["", "queue_500"], rows, file=tty)
    for cell in ("queue_500", "59 999", "10 489.9 µs", "cycle time p99"):
        assert cell in tty.getvalue()


_CELL = st.text(alphabet=" ab9.%µ—…日[]/\t", max_size=12)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), ncols=st.integers(1, 4), nrows=st.integers(0, 6),
       width=st.one_of(st.none(), st.integers(12, 90)),
       title=st.one_of(st.none(), _CELL))
def test_a_table_drawn_by_column_is_the_one_drawn_row_by_row(data, ncols, nrows, width, title):
    """The terminal tables are drawn with each column as one cell of one row (cheaper:
    rich's cost is per cell); every line must be what a row per line gives, also
    stacked to fit a width, with labels cut, and styled for a terminal."""
    from functools import partial
    from unittest import mock

    from rtshield import tables

    header = data.draw(st.lists(_CELL, min_size=ncols, max_size=ncols))
    rows = data.draw(st.lists(st.lists(_CELL, min_size=ncols, max_size=ncols),
                              min_size=nrows, max_size=nrows))
    left = data.draw(st.lists(st.integers(0, ncols - 1), max_size=2))

    class Tty(io.StringIO):
        def isatty(self):
            return True

    def drawn() -> tuple[str, str]:
        tty = Tty()
        with mock.patch.dict("os.environ", {"COLUMNS": str(width or 200)}):
            tables.print_table(header, rows, title, file=tty, left=left)
        return text_table(header, rows, title, left, width=width), tty.getvalue()

    by_column = drawn()
    with mock.patch.object(tables, "_table", partial(tables._table, by_column=False)):
        by_row = drawn()
    assert by_column == by_row


def _lines(buf):
    """The drawn states of a bar, without terminal codes."""
    import re

    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    return [ln.strip() for ln in re.split(r"[\r\n]", plain) if ln.strip()]


def test_progress_bar_draws_nothing_for_short_work():
    buf = io.StringIO()
    bar = ProgressBar("q", stream=buf, enabled=True, delay=5.0)
    bar(5, 10)
    bar(10, 10)
    bar.close()
    assert buf.getvalue() == ""
    assert bar.state == "done"


def test_progress_bar_stopped_early_says_so_and_not_100_percent():
    buf = io.StringIO()
    bar = ProgressBar("q", unit="runs done", stream=buf, enabled=True, delay=0)
    bar(5, 10)
    bar.close()  # closed at 5 of 10 without finishing
    last = _lines(buf)[-1]
    assert last.startswith("q: stopped") and "50.0%" in last and "5/10 runs done" in last
    assert "100.0%" not in buf.getvalue() and "\n" in buf.getvalue()[-12:]  # line ended


def test_progress_bar_interrupted_says_interrupted():
    buf = io.StringIO()
    bar = ProgressBar("q", phases=[("simulating", 4, "s simulated"), ("report", 1)],
                      stream=buf, enabled=True, delay=0)
    with pytest.raises(KeyboardInterrupt), bar:
        bar(10, 10)  # the simulation is done: the report phase starts
        assert bar.text().startswith("q: report")
        raise KeyboardInterrupt
    last = _lines(buf)[-1]
    assert last.startswith("q: interrupted") and "80.0%" in last, last
    assert "100.0%" not in buf.getvalue()


def test_progress_bar_shows_100_percent_only_when_every_phase_is_done():
    buf = io.StringIO()
    bar = ProgressBar("q", phases=[("simulating", 1, "runs"), ("report", 1)],
                      stream=buf, enabled=True, delay=0)
    bar(9999, 10000)
    assert bar.percent_text().strip() == "50.0%"
    bar(10000, 10000)
    bar.phase("report")
    bar.frac = 0.9999  # a phase all but done still is not 100 %
    assert bar.percent_text().strip() == "99.9%"
    bar.finish()
    bar.close()
    last = _lines(buf)[-1]
    assert last.startswith("q: done") and "100.0%" in last
    assert sum("100.0%" in ln for ln in _lines(buf)) == 1  # only the final state


def test_progress_bar_inside_another_reports_into_it():
    """demo's bar: a study's own bar (made while demo's is open) draws nothing; it
    moves demo's phase, and when it completes demo's next phase starts."""
    buf = io.StringIO()
    outer = ProgressBar("demo", phases=[("a: simulating", 4), ("a: report", 1), ("b", 5)],
                        stream=buf, enabled=True, delay=0)
    inner = ProgressBar("study", unit="runs done", stream=buf, enabled=True, delay=0)
    assert not inner.enabled
    inner(5, 10)
    assert outer.text() == "demo: a: simulating   20.0%  5/10 runs done"
    inner(10, 10)
    inner.close()
    assert outer.text().startswith("demo: a: report   40.0%")
    outer.phase("b")
    outer.finish()
    outer.close()
    assert all(ln.startswith("demo") for ln in _lines(buf))


def test_progress_bar_silent_when_disabled():
    buf = io.StringIO()
    bar = ProgressBar("q", stream=buf, enabled=False, delay=0)
    bar(5, 10)
    bar.close()
    assert buf.getvalue() == ""


@pytest.mark.parametrize(
    "values",
    [
        np.arange(7, dtype=np.int64),
        np.array([1.5, np.nan, -0.0, np.inf, 1e300]),
        np.array([True, False, True, True, False, False, True, False, True]),
        np.array([3, 1 << 40], dtype=np.uint64),
        np.arange(12, dtype=np.int32)[::3],  # not contiguous
        np.array([], dtype=np.float64),
        np.array(["a", "bc"]),  # not a number: pa.array
    ],
)
def test_arrow_array_is_pa_array(values):
    """The Parquet columns are the arrays pa.array gives, without its pandas import."""
    import pyarrow as pa

    ours = outputs._arrow_array(pa, values)
    ref = pa.array(values)
    assert ours.type == ref.type
    assert ours.to_pylist() == ref.to_pylist() or (
        values.dtype.kind == "f" and np.array_equal(ours.to_numpy(), ref.to_numpy(), equal_nan=True)
    )


def test_write_timeseries_without_pandas(tmp_path):
    """Writing the time series does not import pandas (a quarter CPU-second per process)."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from rtshield import outputs\n"
        f"outputs.write_timeseries({str(tmp_path)!r}, "
        "{'t_s': np.arange(3.0), 'offered': np.arange(3), 'flag': np.array([True, False, True])})\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    table = pq.read_table(tmp_path / "timeseries.parquet")
    assert table.column("offered").to_pylist() == [0, 1, 2]
    assert table.column("flag").to_pylist() == [True, False, True]


def test_plain_label_writes_matplotlibs_log_labels_as_plain_text():
    from rtshield.figures.layout import plain_label

    assert plain_label(r"$\mathdefault{10^{2}}$") == "10²"
    assert plain_label(r"$\mathdefault{10^{-12}}$") == "10⁻¹²"
    assert plain_label(r"$\mathdefault{2\times10^{1}}$") == "2×10¹"
    assert plain_label(r"$\mathdefault{-10^{3}}$") == "\N{MINUS SIGN}10³"
    assert plain_label(r"$\mathdefault{0}$") == "0"
    # what it does not know stays as it is (matplotlib draws it as before)
    for other in ("", "250", r"$\mathdefault{10^{2.50}}$", r"$\alpha$"):
        assert plain_label(other) == other


def _tick_labels(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return [[t.get_text() for t in ax.yaxis.get_ticklabels(which="both")] +
            [t.get_text() for t in ax.xaxis.get_ticklabels(which="both")] for ax in fig.axes]


def test_log_axes_show_matplotlibs_ticks_without_mathtext(monkeypatch):
    """The cycle-time and latency figures label their log axes with the very ticks and
    numbers of matplotlib's own labels, in plain text."""
    from rtshield.figures import layout

    r = FakeResult()
    plain = [_tick_labels(figures.cycle_time_figure(r.cycle_time_hist, "x", 1000.0)),
             _tick_labels(figures.latency_figure(r.flow_latency_hist, "x"))]
    monkeypatch.setattr(layout, "plain_log_labels", lambda axis: None)
    own = [_tick_labels(figures.cycle_time_figure(r.cycle_time_hist, "x", 1000.0)),
           _tick_labels(figures.latency_figure(r.flow_latency_hist, "x"))]
    assert any("$" in t for fig in own for ax in fig for t in ax)  # mathtext by default
    assert plain == [[[layout.plain_label(t) for t in ax] for ax in fig] for fig in own]
    assert not any("$" in t for fig in plain for ax in fig for t in ax)


def test_run_figures_never_build_the_mathtext_parser(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import test_outputs as t\n"
        "from rtshield import figures\n"
        "r = t.FakeResult(); r.timeseries['lateness_pct'] *= 100  # symlog lateness\n"
        "figures.run_figures(r, 'fake', sys.argv[2], period_us=1000.0)\n"
        "import matplotlib.mathtext as m; print(m.MathTextParser._parser is None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True"]


@pytest.mark.parametrize("kw", [
    {"fill": True, "baseline": 0.5, "alpha": 0.8},
    {"baseline": 0.5, "lw": 0.8},
    {"baseline": None, "lw": 1.4},
])
@pytest.mark.parametrize("values", [
    [3.0, 0.0, 7.5, 7.5, 1.0, 2.0],
    [5.0, 5.0],
    [1.0, float("nan"), 2.0],  # not finite: ax.stairs itself
    [4.0],  # one bin: ax.stairs itself
])
def test_step_patch_is_ax_stairs(values, kw):
    """The same artist, path, data limits and PNG bytes as ``ax.stairs``."""
    from rtshield.figures import layout

    edges = np.cumsum([1.0, *(0.5 + np.arange(len(values)))])
    drawn = []
    for draw in (lambda ax: ax.stairs(values, edges, **kw),
                 lambda ax: layout.step_patch(ax, values, edges, **kw)):
        fig = layout.new_figure(3.0, 2.0)
        ax = fig.add_subplot()
        patch = draw(ax)
        drawn.append((type(patch), patch.get_path().vertices.tolist(),
                      patch.get_path().codes, ax.dataLim.bounds, layout.png_bytes(fig)))
    (t1, v1, c1, lim1, png1), (t2, v2, c2, lim2, png2) = drawn
    assert t1 is t2 and np.array_equal(np.array(v1), np.array(v2), equal_nan=True)
    assert (c1 is None and c2 is None) or np.array_equal(c1, c2)
    assert lim1 == lim2 and png1 == png2


def _wide(result):
    """``result`` with a cycle-time histogram over decades (log axes) and lateness far
    above 100 % (symlog)."""
    edges = np.geomspace(100.0, 1e7, 41)
    counts = np.zeros(40)
    counts[[3, 20, 39]] = [400, 30, 1]
    result.cycle_time_hist = (edges, counts)
    return result


@pytest.mark.parametrize("result", [FakeResult(), _wide(FakeResult(scale=1000.0))],
                         ids=["linear", "log"])
def test_run_figures_from_the_stock_are_the_bytes_made_anew(result):
    """A resident server makes the run figures' axes and ticks ahead (``stock``); a
    figure drawn from the stock is the figure drawn anew, byte for byte, on linear,
    log and symlog axes; each stocked figure is taken once."""
    from rtshield.figures import layout
    from rtshield.figures.run import run_figure_png

    jobs = figures.run_figure_jobs(result, "fake", 10000.0)
    anew = {name: run_figure_png(name, *args) for name, args in jobs}
    figures.stock_run_figures()
    try:
        assert all(layout._STOCK.values())
        stocked = {name: run_figure_png(name, *args) for name, args in jobs}
        assert not any(layout._STOCK.values()) and not layout._TWINS  # all taken
        again = {name: run_figure_png(name, *args) for name, args in jobs}
    finally:
        layout.unstock()
    assert {"packets", "critical", "cycle_time", "latency"} <= {n for n, b in anew.items() if b}
    assert stocked == anew and again == anew


def test_a_twin_shape_drawn_without_its_twin_is_an_error():
    from rtshield.figures import layout

    shape = layout.Shape(5.0, 3.0, twin=True)
    layout.stock([shape])
    try:
        fig, _ = layout.single_axes(shape)
        with pytest.raises(RuntimeError, match="twin"):
            layout.png_bytes(fig)
    finally:
        layout.unstock()


def test_a_pool_gets_the_longest_figures_first_and_they_are_written_in_file_order(tmp_path):
    """The pool is given the critical figure (twin axes) before the latency and cycle
    time figures (log axes) and the packets last; the futures come back in the
    jobs' order, so the files and the report keep theirs."""
    from concurrent.futures import Future

    class Recording:
        def __init__(self):
            self.names = []

        def submit(self, fn, name, *args):
            self.names.append(name)
            f = Future()
            f.set_result(fn(name, *args))
            return f

    pool = Recording()
    jobs = figures.run_figure_jobs(FakeResult(), "fake", 1000.0)
    futures = figures.submit_run_figures(jobs, pool)
    drawn = [n for n in pool.names if n in ("packets", "critical", "cycle_time", "latency")]
    assert drawn == ["critical", "latency", "cycle_time", "packets"]
    from rtshield.figures.run import run_figure_png

    assert [f.result() for f in futures] == [run_figure_png(n, *a) for n, a in jobs]
    written = figures.run_figures(FakeResult(), "fake", tmp_path, 1000.0, drawing=futures,
                                  pool=pool)
    assert list(written) == [n for n, _ in jobs if n in written]
    assert list(written)[:2] == ["packets", "critical"]
