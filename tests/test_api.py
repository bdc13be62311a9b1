"""The notebook API (rtshield.simulate/analyze/design/sweep); its documented examples run in
tests/test_docs_run.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import rtshield
from rtshield.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
QUEUE = REPO / "scenarios" / "danicki2021" / "queue_500.toml"
STRICT = REPO / "scenarios" / "analysis" / "regehr_avr_strict.toml"


def test_the_four_calls_are_at_the_package_top():
    for name in ("simulate", "analyze", "design", "sweep"):
        assert name in rtshield.__all__ and callable(getattr(rtshield, name))
    with pytest.raises(AttributeError):
        rtshield.no_such_call  # noqa: B018
    # rtshield.sweep is also the module of the --set grid helpers: both uses hold.
    from rtshield import sweep

    assert sweep is rtshield.sweep and callable(sweep) and callable(sweep.expand)


def test_simulate_returns_the_time_series_as_a_dataframe():
    run = rtshield.simulate(QUEUE, {"driver.queue": 20}, duration="3s")
    ts = run.timeseries
    assert isinstance(ts, pd.DataFrame) and len(ts) == 3
    assert list(ts.columns) == list(run.result.timeseries)
    assert ts["t_s"].tolist() == [0.0, 1.0, 2.0]
    assert int(ts["offered"].sum()) == run.summary["totals"]["offered"]
    assert run.scenario.driver.queue == 20
    table = run.to_arrow()
    assert isinstance(table, pa.Table) and table.column_names == list(ts.columns)
    assert run.misses == run.summary["critical"]["misses"]
    assert run.met_every_deadline == (run.misses == 0)


def test_overrides_reach_flow_entries_as_sweep_does():
    run = rtshield.simulate(QUEUE, {"flows.syn.peak": "20000pps", "driver.queue": 20},
                            duration="3s")
    (syn,) = run.scenario.flows
    assert syn.peak_pps == 20000 and run.scenario.driver.queue == 20
    with pytest.raises(UsageError, match="no \\[\\[flows\\]\\] entry named 'nope'"):
        rtshield.simulate(QUEUE, {"flows.nope.peak": "1pps"})
    flag = rtshield.simulate(QUEUE, {"scenario.seed": 4}, duration="1s")
    assert flag.scenario.seed == 4


def test_simulate_is_deterministic_and_the_seed_matters():
    a = rtshield.simulate(QUEUE, duration="2s", seed=3).timeseries
    b = rtshield.simulate(QUEUE, duration="2s", seed=3).timeseries
    pd.testing.assert_frame_equal(a, b)


def test_simulate_bad_input_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        rtshield.simulate(tmp_path / "missing.toml")
    with pytest.raises(UsageError, match="SECTION.KEY"):
        rtshield.simulate(QUEUE, {"queue": 20})
    with pytest.raises(UsageError, match="driver"):
        rtshield.simulate(QUEUE, {"driver.queue": -5})


def test_simulation_write_gives_the_run_outputs(tmp_path):
    run = rtshield.simulate(QUEUE, duration="2s")
    report = run.write(tmp_path / "out")
    assert report.is_file() and (tmp_path / "out" / "summary.json").is_file()


def test_sweep_table_has_one_row_per_point_with_a_verdict():
    res = rtshield.sweep(QUEUE, {"driver.queue": [10, 500]}, {"scenario.duration": "2s"})
    t = res.table
    from rtshield.sweep import ANSWER_COLUMNS

    assert t["driver.queue"].tolist() == [10, 500]
    assert list(t.columns[1 : 1 + len(ANSWER_COLUMNS)]) == list(ANSWER_COLUMNS)
    assert len(res.runs) == 2
    for i, run in enumerate(res.runs):
        assert t["misses"][i] == run.misses
        assert t["safe"][i] == run.met_every_deadline
        assert t["margin_us"][i] == run.margin_us
        assert t["processed"][i] == run.summary["totals"]["processed"]
    assert res.runs[0].scenario.driver.queue == 10
    with pytest.raises(UsageError, match="grid is empty"):
        rtshield.sweep(QUEUE, {})


def test_analyze_and_design(tmp_path):
    a = rtshield.analyze(STRICT)
    assert a.schedulable is True
    assert set(a.tasks["name"]) >= {"ext.irq", "background"}
    assert "schedulable" in str(a)
    system = tmp_path / "open.toml"
    system.write_text(STRICT.read_text().replace('max_rate = "4kHz"', 'max_rate = "?"'))
    d = rtshield.design(system)
    assert d.value is not None and d.margin_ns is not None and d.margin_ns >= 0
    assert d.to_json()["param"] == "source.ext.min_interarrival"

