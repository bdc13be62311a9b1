"""Outputs of a run with Behnke et al.'s receive path, against a stand-in result.

The stand-in has the shape :func:`rtshield.engine.simulate` gives a run with
``[rx]`` (an ``rx`` summary section, per-flow drops by reason, the
``polling_s`` and ``net_prio_max`` columns), so the summary, time series,
figures and report are tested without the engine's receive path.
"""

import json

import numpy as np
import pytest
from scenario_texts import HP_LP_FLOWS

from rtshield import figures, runner
from rtshield.outputs import ordered_columns
from rtshield.result import Result
from rtshield.scenario import loads_scenario

SCENARIO = """
[scenario]
name = "fake_rx"
platform = "zynq7000-freertos-tcp"
duration = "4s"

[rx]
global_capacity = 3
global_period = "2ms"
poll_priority = 1
""" + HP_LP_FLOWS

REASONS = ("line_disabled", "irq_overrun", "ring_full", "queue_full", "mitigation",
           "mailbox_full", "nic_unregistered", "nic_queue_full", "recycled", "short_circuit",
           "flow_server", "global_limit", "no_socket")
PATHS = ("regular", "short_circuit", "prio_raise", "recycle", "rejected")


def fake_result(rx=True):
    n = 4
    ts = {
        "t_s": np.arange(n, dtype=float),
        "offered": np.full(n, 20500, dtype=np.int64),
        "received": np.full(n, 20000, dtype=np.int64),
        "processed": np.full(n, 600, dtype=np.int64),
        "delivered": np.full(n, 500, dtype=np.int64),
        "cycles": np.full(n, 100, dtype=np.int64),
        "lateness_pct": np.zeros(n),
        "polling_s": np.array([0.0, 0.25, 0.5, 0.0]) if rx else np.zeros(n),
        "net_prio_max": np.array([1, 5, 5, 1], dtype=np.int64) if rx else np.zeros(n, int),
    }
    for r in REASONS:
        ts[f"dropped_{r}"] = np.zeros(n, dtype=np.int64)
    drops = dict.fromkeys(REASONS, 0)
    lp_drops = dict(drops, short_circuit=70000, recycled=5000, global_limit=2000)
    flows = {
        "hp": {"offered": 2000, "received": 2000, "processed": 2000, "delivered": 2000,
               "dropped": 0, "dropped_by": dict(drops),
               "latency_us": {"p50": 20.0, "p99": 40.0, "p999": 45.0, "max": 50.0}},
        "lp": {"offered": 80000, "received": 78000, "processed": 400, "delivered": 400,
               "dropped": 77000, "dropped_by": lp_drops,
               "latency_us": {"p50": 900.0, "p99": 5000.0, "p999": 6000.0, "max": 7000.0}},
    }
    return Result(
        scenario="fake_rx", seed=1, duration_s=4.0, bin_s=1.0,
        totals={"offered": 82000, "irq_raised": 30000, "isr_runs": 30000, "irq_lost": 0,
                "received": 80000, "processed": 2400, "delivered": 2400,
                "dropped": dict(drops, short_circuit=70000, recycled=5000, global_limit=2000),
                "irq_per_packet": 0.375},
        critical={"cycles": 400, "misses": 0, "lateness_max_pct": 0.0,
                  "lateness_bin_max_pct": 0.0, "lateness_sum_pct": 0.0,
                  "cycle_time_us": {"min": 9000.0, "p50": 10000.0, "p99": 10100.0,
                                    "max": 10200.0}},
        flows=flows,
        cpu={"isr_rx": 0.1, "critical": 0.2, "driver": 0.05, "polling": 0.01, "idle": 0.64},
        mitigation={"name": "none", "parameters": {}, "counters": {}},
        tasks={"critical": {"jobs": 400}, "polling": {"jobs": 0}},
        engine={},
        timeseries=ts,
        cycle_time_hist=(np.array([9000.0, 10000.0, 11000.0]), np.array([10, 390])),
        flow_latency_hist={},
        rx=({"paths": {p: {"count": 1000 * (k + 1), "cpu_s": 0.001 * (k + 1)}
                       for k, p in enumerate(PATHS)},
             "polls": 1500, "poll_cpu_s": 0.003, "prio_changes": 4000, "to_poll": 1200,
             "in_flight": 3000, "polling_s": 0.75} if rx else None),
    )


def test_summary_has_rx_only_when_the_run_has_it():
    assert "rx" in fake_result().summary()
    assert "rx" not in fake_result(rx=False).summary()


def test_drop_reasons_and_trace_kinds_come_from_the_c_enums():
    from rtshield import engine

    assert engine.DROP_REASONS == REASONS
    # the existing names keep their order; the C enum may grow at its end
    assert engine.TRACE_KINDS[:9] == ("arrival", "isr_start", "isr_end", "run", "drop", "line",
                                      "cycle_end", "deliver", "prio")
    assert engine.RX_PATHS == PATHS
    from rtshield._native import load

    ffi, _ = load()
    assert len(engine.DROP_REASONS) == ffi.typeof("rtsim_drop").relements["RTSIM_DROP_COUNT"]
    with pytest.raises(AttributeError):
        engine.NO_SUCH_NAME  # noqa: B018


def test_rx_columns_are_sorted_after_the_fixed_ones():
    cols = ordered_columns(["polling_s", "net_prio_max", "rx_disabled_s", "t_s", "cpu_idle"])
    assert cols == ["t_s", "cpu_idle", "rx_disabled_s", "net_prio_max", "polling_s"]


def test_run_with_rx_writes_the_rx_figures_and_report(tmp_path):
    sc = loads_scenario(SCENARIO, "fake_rx.toml")
    out = tmp_path / "o"
    out.mkdir()
    entry = runner.write_run(sc, fake_result(), out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["rx"]["paths"]["short_circuit"]["count"] == 2000
    assert summary["flows"]["lp"]["dropped_by"]["short_circuit"] == 70000
    assert summary["totals"]["irq_per_packet"] == 0.375
    header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    assert "polling_s" in header and "net_prio_max" in header
    assert {"rx_drops", "rx_priority"} <= set(entry.figures)
    for f in ("rx_drops.png", "rx_priority.png"):
        assert (out / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = (out / "report.html").read_text()
    for needle in ("Receive path", "Drops per flow by reason", "ISR path", "short_circuit",
                   "global limit 3 per 2ms, polling task priority 1", "128 buffers",
                   "lazy cache invalidation"):
        assert needle in html, needle


def test_run_without_rx_removes_stale_rx_figures(tmp_path):
    sc = loads_scenario(SCENARIO, "fake_rx.toml")
    out = tmp_path / "o"
    out.mkdir()
    runner.write_run(sc, fake_result(), out)
    assert (out / "rx_drops.png").is_file()
    entry = runner.write_run(sc, fake_result(rx=False), out)
    assert not (out / "rx_drops.png").exists() and not (out / "rx_priority.png").exists()
    assert "rx_drops" not in entry.figures
    assert "Receive path" not in (out / "report.html").read_text()


def test_rx_drops_figure_is_none_without_drops():
    flows = {"a": {"dropped_by": {"short_circuit": 0}}, "b": {"dropped_by": {}}}
    assert figures.rx_drops_figure(flows, "t") is None
    assert figures.rx_drops_figure({"a": {"dropped_by": {"recycled": 3}}}, "t") is not None


def test_rx_priority_figure_needs_its_columns():
    assert figures.rx_priority_figure({"t_s": np.arange(3.0)}, "t") is None
    fig = figures.rx_priority_figure(
        {"t_s": np.arange(3.0), "net_prio_max": np.array([0, 5, 1]),
         "polling_s": np.array([0.0, 0.5, 1.0])}, "t")
    assert fig is not None and len(fig.axes) == 2
