"""`rtshield design --scenario`: every interrupt-level knob (issue 11 item 4),
each answer checked by simulating its boundary with worst-case traffic."""

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.analysis.knobs import KNOBS, design_knob, worst_case_traffic
from rtshield.errors import UsageError
from rtshield.scenario import Mitigation, load_scenario

ROOT = Path(__file__).resolve().parent.parent
DANICKI = ROOT / "scenarios" / "danicki2021"


def _sc(name):
    return load_scenario(DANICKI / f"{name}.toml")


def _check(d, beyond_misses: bool | None):
    assert d.value is not None, d.note
    assert d.margin_ns() is not None and d.margin_ns() >= 0
    assert d.sim_safe is not None and d.sim_safe.misses == 0, d.text()
    # the simulated worst never exceeds the analysed one at the boundary
    crit = d.report.result.by_name("critical")
    assert d.sim_safe.max_response_ns <= crit.wcrt
    assert d.unsafe_value is not None and d.unsafe_reason
    if beyond_misses is not None:
        assert (d.sim_beyond.misses > 0) == beyond_misses, d.text()


def test_danicki_queue_size_agrees_with_the_simulator():
    """The analysis' largest queue is exactly the simulator's: Q safe, Q + 1 misses."""
    d = design_knob(_sc("queue_500"))
    assert d.knob == "driver.queue"
    _check(d, beyond_misses=True)
    assert d.unsafe_value == d.value + 1
    sc = _sc("queue_500")
    isr = sc.costs["isr_entry_exit"] + sc.costs["isr_per_packet"]
    # (Q + 1) ISR runs fit the slack, (Q + 2) do not (up to the ticks in one period)
    slack = sc.critical.period_ns - sc.critical.work_ns
    tick = sc.costs["isr_entry_exit"] + sc.platform.tick_isr_ns
    ticks = sc.critical.period_ns // sc.platform.tick_ns + 1
    assert (d.value + 1) * isr <= slack < (d.value + 2) * isr + ticks * tick


def test_danicki_burst_capacity_confirmed():
    d = design_knob(_sc("burst"))
    assert d.knob == "mitigation.capacity"
    _check(d, beyond_misses=True)
    sc = _sc("burst")
    isr = sum(sc.costs[k] for k in ("isr_entry_exit", "isr_per_packet", "mitigation_isr"))
    # two capacities back to back (Danicki's "up to twice as large") fit the slack
    assert 2 * d.value * isr <= sc.critical.period_ns - sc.critical.work_ns


def test_danicki_budget_rate_confirmed():
    """Budget Mitigation: no parameter bounds the ISR load; design answers the
    highest packet rate it tolerates, and the simulator confirms it."""
    d = design_knob(_sc("budget"))
    assert d.knob == "traffic.rate"
    _check(d, beyond_misses=None)  # equal priorities: the analysis is pessimistic here
    sc = _sc("budget")
    isr = sc.costs["isr_entry_exit"] + sc.costs["isr_per_packet"]
    assert isr < d.value  # a rate the ISR alone could not sustain is never proposed


@pytest.mark.parametrize(
    "mit,knob,tight",
    [
        (Mitigation("bursty", burst=100, period_ns=5_000_000), "mitigation.burst", False),
        (Mitigation("bursty", burst=100, period_ns=5_000_000), "mitigation.period", False),
        (Mitigation("strict", min_interarrival_ns=50_000), "mitigation.min_interarrival", False),
        (Mitigation("countdown", window_ns=50_000), "mitigation.window", True),
    ],
    ids=lambda x: getattr(x, "kind", x) if not isinstance(x, bool) else str(x),
)
def test_limiter_knobs_confirmed(mit, knob, tight):
    sc = dataclasses.replace(_sc("queue_500"), mitigation=mit)
    d = design_knob(sc, knob)
    _check(d, beyond_misses=True if tight else None)


def test_hysteresis_and_no_protection_rate():
    # without a protection the traffic is all there is: one step beyond misses
    _check(design_knob(_sc("scheduler_critical_high")), beyond_misses=True)
    # Hysteresis turns the line off: the analysis counts one arrival latched meanwhile,
    # which the evenly spaced worst case does not send (one ISR of pessimism)
    d = design_knob(_sc("hysteresis"))
    _check(d, beyond_misses=None)
    none = design_knob(dataclasses.replace(_sc("hysteresis"), mitigation=Mitigation("none")),
                       simulate=False)
    assert d.value > none.value  # the latched arrival: a longer interarrival is needed


def test_knob_must_fit_the_protection():
    with pytest.raises(UsageError, match="applies to mitigation burst"):
        design_knob(_sc("queue_500"), "mitigation.capacity")
    with pytest.raises(UsageError, match="unknown"):
        design_knob(_sc("queue_500"), "driver.priority")
    assert set(KNOBS) >= {"driver.queue", "mitigation.capacity", "mitigation.burst",
                          "mitigation.period", "traffic.rate"}


def test_worst_case_burst_traffic_opens_a_slice_then_floods():
    sc = worst_case_traffic(_sc("burst"))
    assert [f.name for f in sc.flows] == ["open", "flood"]
    # exactly one packet in the opening flow
    pts = sc.flows[0].schedule(sc.duration_ns)
    (t0, r0), (t1, r1) = pts[1], pts[2]
    assert r1 == 0 and (t1 - t0) * r0 / 1e9 == pytest.approx(1.5)


def test_cli_json(tmp_path):
    env = None  # the rtshield under test: installed, or the checkout via PYTHONPATH
    p = subprocess.run(
        [sys.executable, "-m", "rtshield", "design", "--scenario", str(DANICKI / "queue_100.toml"),
         "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["knob"] == "driver.queue" and out["simulated"]["confirmed"]
    assert out["simulated"]["beyond"]["misses"] > 0
    p = subprocess.run(
        [sys.executable, "-m", "rtshield", "design", str(DANICKI / "queue_100.toml"), "--knob",
         "driver.queue"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--scenario" in p.stderr


def test_one_source_scenarios_and_polling():
    """Regehr's scenarios give their one interrupt source as a [[sources]] entry
    (its own handler work and limit): mapped as the source's values; the
    polling baseline's period is designed and confirmed."""
    reg = ROOT / "scenarios" / "regehr2005"
    d = design_knob(load_scenario(reg / "fig_polling.toml"))
    assert d.knob == "mitigation.period"
    _check(d, beyond_misses=None)
    sc = load_scenario(reg / "fig_strict.toml")
    d = design_knob(sc)
    assert d.knob == "mitigation.min_interarrival"
    _check(d, beyond_misses=None)
    # the answer reached the source: the simulated check ran with the source's limit set
    from rtshield.analysis.knobs import _with

    assert _with(sc, d.knob, d.value).sources[0].min_interarrival_ns == d.value
