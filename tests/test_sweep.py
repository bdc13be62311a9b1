"""`rtshield sweep`: grid expansion and an end-to-end sweep on the real engine."""

import csv
from pathlib import Path

import pytest
from cli_checks import one_line

from rtshield import sweep
from rtshield.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
BURST = ROOT / "scenarios" / "danicki2021" / "burst.toml"


def test_split_values_respects_brackets_and_quotes():
    assert sweep.split_values("100,500, 750") == ["100", "500", "750"]
    assert sweep.split_values('["1kHz", "2kHz"],"a,b"') == ['["1kHz", "2kHz"]', '"a,b"']
    with pytest.raises(UsageError, match="unbalanced"):
        sweep.split_values("[1,2")
    with pytest.raises(UsageError, match="empty value"):
        sweep.split_values("1,,2")


def test_expand_is_the_product_in_order_last_axis_fastest():
    axes, points = sweep.expand(
        ["driver.queue=100,500", "scenario.duration=4s", "mitigation.capacity=1,2,3"]
    )
    assert [a.key for a in axes] == ["driver.queue", "mitigation.capacity"]
    assert len(points) == 6
    assert points[0] == {
        "driver.queue": "100",
        "scenario.duration": "4s",
        "mitigation.capacity": "1",
    }
    assert [p["mitigation.capacity"] for p in points[:3]] == ["1", "2", "3"]
    assert points[3]["driver.queue"] == "500"
    assert sweep.point_label(points[4], axes) == "queue=500,capacity=2"


@pytest.mark.parametrize(
    "sets,msg",
    [
        (["driver.queue=100"], "nothing to sweep"),
        (["queue=100,200"], "SECTION.KEY"),
        (["driver.queue=1,2", "driver.queue=3,4"], "given twice"),
    ],
)
def test_expand_errors(sets, msg):
    with pytest.raises(UsageError, match=msg):
        sweep.expand(sets)


def test_sweep_burst_capacity_end_to_end(tmp_path, rtshield_main):
    out = tmp_path / "sw"
    assert rtshield_main("sweep", BURST, "--set", "mitigation.capacity=300,2000",
                         "--set", "scenario.duration=12s", "--out", out, "--jobs", 1) == 0
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [r["mitigation.capacity"] for r in rows] == ["300", "2000"]
    low, high = rows
    # A capacity of 300 per 20 ms admits at most 15 000 interrupts per second.
    runs = out / "runs"
    ts = list(csv.DictReader((runs / "capacity_300" / "timeseries.csv").open()))
    assert max(float(r["received"]) for r in ts) <= 15_000
    # A much higher capacity lets more interrupts in and makes the critical task late
    # (Danicki et al. §3), the lower one keeps it on time.
    assert int(high["received"]) > int(low["received"])
    assert int(low["misses"]) == 0 and int(high["misses"]) > 0
    import pyarrow.parquet as pq

    table = pq.read_table(out / "sweep.parquet").to_pylist()
    assert [r["mitigation.capacity"] for r in table] == ["300", "2000"]  # as written: strings
    assert [r["point"] for r in table] == [0, 1]
    assert table[1]["misses"] == int(high["misses"]) and table[0]["safe"] is True
    assert (out / "sweep.png").stat().st_size > 0
    report = (out / "report.html").read_text()
    assert 'alt="sweep"' in report and "Key numbers against mitigation.capacity" in report


def test_sweep_bad_value_is_one_line_and_runs_nothing(tmp_path, capsys):
    out = tmp_path / "bad"
    one_line(capsys, ["sweep", BURST, "--set", "driver.queue=100,lots", "--out", out], "queue")
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())


def test_sweep_missing_file(tmp_path, capsys):
    one_line(capsys, ["sweep", tmp_path / "nope.toml", "--set", "driver.queue=1,2",
                      "--out", tmp_path / "o"], "no such file")


def test_a_point_without_a_finished_cycle_has_no_response_time():
    """A starved critical task never finished a cycle: its worst response and margin
    were never measured (None, "—"), not 0 µs and a whole period of margin."""
    from rtshield.sweep.results import answer

    starved = answer({"critical": {"cycles": 0, "misses": 9, "max_response_us": 0.0,
                                   "lateness_max_pct": 850.0}}, 10_000.0)
    assert starved["safe"] is False
    assert starved["worst_response_us"] is None and starved["margin_us"] is None
    ok = answer({"critical": {"cycles": 100, "misses": 0, "max_response_us": 4_000.0}},
                10_000.0)
    assert ok["safe"] is True and ok["margin_us"] == 6_000.0
