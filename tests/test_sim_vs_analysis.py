"""One model, two answers (issue 11 item 3): every shipped worst-case scenario
is analysed through the one mapping (rtshield.analysis.model) and simulated;
the simulated worst response time never exceeds the analytic bound, and comes
within 5 % of it: every variant is built to hit the worst case (issue 26 kept
this at 95 %, with variants of several flows on one line and of a capture).

scenarios/worstcase/ holds a worst-case variant of every Danicki
configuration and of every analysis example of scenarios/analysis/ (but the
NIC rules of behnke_multiqueue, NO_TWIN below). The analysis examples
themselves are simulated by tests/test_analysis_vs_sim.py, through the same
mapping (rtshield.analysis.simcheck writes a system file as a scenario).
"""

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

from rtshield.analysis.curves import Periodic
from rtshield.analysis.model import (
    bound_system,
    cross_check,
    platform_costs,
    system_from_scenario,
    traffic_min_interarrival,
)
from rtshield.analysis.report import analyze_system
from rtshield.analysis.system import load_platform
from rtshield.errors import UsageError
from rtshield.scenario import Mitigation, available_platforms, load_scenario
from rtshield.scenario import load_platform as scenario_platform

ROOT = Path(__file__).resolve().parent.parent
WORST = sorted((ROOT / "scenarios" / "worstcase").glob("*.toml"))
CLOSENESS = 0.95


def test_every_danicki_configuration_has_a_worst_case_variant():
    danicki = {p.name for p in (ROOT / "scenarios" / "danicki2021").glob("*.toml")}
    assert danicki and danicki <= {p.name for p in WORST}


@pytest.mark.parametrize("path", WORST, ids=lambda p: p.stem)
def test_simulated_worst_within_the_bound(path):
    c = cross_check(load_scenario(path))
    assert c.observed["critical"] > 0
    # every worst-case variant is built to hit the worst case: within 5 %
    assert not c.problems(CLOSENESS), c.problems(CLOSENESS)


def test_queue_bound_is_q_plus_one_isr_runs_and_one_tick_of_pessimism():
    """Queue Mitigation, Q = 500: the analysis charges (Q + 1) ISR runs and
    every tick in the window; the engine's first tick comes 1 ms after the
    release, so the simulation sees exactly one tick interrupt less."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "queue_500.toml")
    c = cross_check(sc)
    k = sc.costs
    isr = k["isr_entry_exit"] + k["isr_per_packet"]
    tick = k["isr_entry_exit"] + sc.platform.tick_isr_ns
    assert c.bounds["critical"] - c.observed["critical"] == tick
    ticks = c.observed["critical"] // sc.platform.tick_ns  # ticks at 1, 2, ... ms
    assert c.observed["critical"] == sc.critical.work_ns + 501 * isr + ticks * tick


def test_burst_sees_more_than_one_capacity():
    """The worst-case Burst Mitigation run sees nearly two capacities back to back."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "burst.toml")
    c = cross_check(sc)
    isr = sum(sc.costs[k] for k in ("isr_entry_exit", "isr_per_packet", "mitigation_isr"))
    assert c.observed["critical"] > sc.critical.work_ns + 1.8 * sc.mitigation.capacity * isr


def test_mapping_charges_what_the_engine_charges():
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "burst.toml")
    s = system_from_scenario(sc)
    k = sc.costs
    rep = analyze_system(s)
    t = {r.task.name: r.task for r in rep.result.tasks}
    per = k["isr_entry_exit"] + k["isr_per_packet"] + k["mitigation_isr"]
    assert t["rx.burst"].C == sc.mitigation.capacity * per
    assert t["rx.slice"].C == k["isr_entry_exit"] + k["timer_isr"]
    assert t["tick"].C == k["isr_entry_exit"] + sc.platform.tick_isr_ns
    # the queue mitigation has no per-frame hook in the ISR: no mitigation_isr
    sq = system_from_scenario(load_scenario(ROOT / "scenarios" / "worstcase" / "queue_100.toml"))
    tq = {r.task.name: r.task for r in analyze_system(sq).result.tasks}
    assert tq["rx.irq"].C == 101 * (k["isr_entry_exit"] + k["isr_per_packet"])


def test_traffic_bounds_the_interrupt_rate():
    """The scenario's flows are the line's arrival curve: Danicki's pyramid peaks at
    150 000 pkt/s, so a window of 1 ms inside its top level holds 150 packets (and a
    window across a level change one more at most); its highest rate is the peak."""
    sc = load_scenario(ROOT / "scenarios" / "danicki2021" / "hysteresis.toml")
    assert traffic_min_interarrival(sc) == int(1e9 // 150_000)
    s = system_from_scenario(sc)
    src = s.sources[0]
    assert src.min_interarrival is None and src.arrivals is not None
    assert 150 <= src.arrivals.eta(1_000_000) <= 151
    assert src.arrivals.eta(2 * 10**9) >= 290_000  # two seconds around the top level
    irq = analyze_system(s).result.by_name("rx.irq").task
    assert irq.cap is not None and irq.T is None


def _bound_with(sc, arrivals) -> int:
    """The critical task's bound when the line's traffic is ``arrivals`` instead."""
    s = system_from_scenario(sc)
    s.sources[0].arrivals = arrivals
    return analyze_system(bound_system(s)).result.by_name("critical").wcrt


def test_several_flows_are_not_one_even_stream():
    """Three flows microseconds apart (issue 26): the simulated response reaches the
    bound of their summed arrival curves, and passes the old model's, which took
    their total rate as one evenly spaced stream."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "multiflow.toml")
    c = cross_check(sc)
    total = sum(f.rate_pps for f in sc.flows)
    even = _bound_with(sc, Periodic(Fraction(1e9 / total)))
    assert c.bounds["critical"] == c.observed["critical"] > even


def test_a_capture_is_its_densest_window_not_its_mean():
    """A capture of 36 frames/s on average with 40 frames in 4.4 ms (issue 26): the
    simulation at its densest burst reaches the capture's arrival curve's bound
    and passes what its mean rate would give."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "capture.toml")
    c = cross_check(sc)
    src = system_from_scenario(sc).sources[0]
    assert src.arrivals.eta(4_400_000) == 40 and src.arrivals.mean_rate * 10**9 < 40
    mean = _bound_with(sc, Periodic(1 / src.arrivals.mean_rate))
    assert c.bounds["critical"] == c.observed["critical"] > mean


def test_poisson_without_protection_names_the_knob():
    """A Poisson flow has no finite curve: without a protection the line is unbounded,
    the critical task below it has no bound, and the report names the knob."""
    sc = load_scenario(ROOT / "scenarios" / "examples" / "modbus_with_flood.toml")
    sc = dataclasses.replace(sc, mitigation=Mitigation("none"))
    rep = analyze_system(system_from_scenario(sc))
    irq = rep.result.by_name("rx.irq")
    assert irq.wcrt is None and "Poisson" in irq.reason and 'kind = "strict"' in irq.reason
    crit = rep.result.by_name("critical")
    assert not crit.schedulable and "unbounded rx.irq" in crit.reason
    assert rep.exit_code == 1


def test_lifted_deadlines_give_a_bound_beyond_the_deadline():
    s = system_from_scenario(load_scenario(ROOT / "scenarios" / "worstcase" / "queue_750.toml"))
    assert analyze_system(s).result.by_name("critical").wcrt is None
    b = analyze_system(bound_system(s)).result.by_name("critical").wcrt
    assert b is not None and b > 10_000_000


@pytest.mark.parametrize("name", available_platforms())
def test_every_preset_carries_the_analysis_costs(name):
    """Every preset gives the analysis t_int, t_expire, t_count, t_flip, t_setup,
    t_clear and the whole tick interrupt: stated, or derived from the simulator's
    charges (rtshield.analysis.model.platform_costs)."""
    _, costs, _ = load_platform(name)
    plat, sim_costs, _ = scenario_platform(name)
    for key in ("t_int", "t_expire", "t_count", "t_flip", "t_setup", "t_clear", "tick_isr"):
        assert key in costs, key
    assert costs["tick_isr"] == sim_costs["isr_entry_exit"] + plat.tick_isr_ns
    if "t_int" not in sim_costs:  # derived: the engine's charge for an interrupt's entry/exit
        assert costs["t_int"] == sim_costs["isr_entry_exit"]
        assert costs["t_expire"] == sim_costs["isr_entry_exit"] + sim_costs["timer_isr"]


def test_derived_costs_keep_stated_ones():
    out = platform_costs(
        {"isr_entry_exit": 10, "timer_isr": 2, "mitigation_isr": 1, "t_int": 7}, 1000, 3
    )
    assert out["t_int"] == 7 and out["t_expire"] == 12 and out["t_count"] == 1
    assert out["tick_isr"] == 13 and out["t_flip"] == 0


def test_unmapped_features_are_named(tmp_path):
    sc = load_scenario(ROOT / "scenarios" / "danicki2021" / "burst.toml")
    import dataclasses

    bad = dataclasses.replace(sc, mitigation=dataclasses.replace(sc.mitigation, also=("queue",)))
    with pytest.raises(UsageError, match=r"\[mitigation\] also"):
        system_from_scenario(bad)


#: Analysis examples without a worst-case scenario, and why (docs/analysis.md §9).
NO_TWIN = {
    "behnke_multiqueue": "NIC rules only: the mapping has no multiqueue NIC "
    "(design --knob nic.queue.NAME simulates them, docs/analysis.md §11)",
    "regehr_avr_strict_design": "regehr_avr_strict with its rate open (\"?\"): design "
    "simulates the boundary it finds (tests/test_analysis_cli.py); the closed file has its twin",
}


def test_every_analysis_example_has_a_twin_or_a_reason():
    examples = {p.stem for p in (ROOT / "scenarios" / "analysis").glob("*.toml")}
    twins = {p.stem for p in WORST}
    assert examples - twins == set(NO_TWIN)


def test_the_multiqueue_nic_is_named_as_unmapped():
    sc = load_scenario(ROOT / "scenarios" / "behnke_hardware" / "device.toml")
    with pytest.raises(UsageError, match=r"\[nic\] kind = 'multiqueue'"):
        system_from_scenario(sc)


def _wcrt(path, name, lifted=False):
    from rtshield.analysis import load_system

    s = load_system(path)
    s.tick = False  # the examples' TinyOS mote and Nut/OS model have no tick term
    s = bound_system(s) if lifted else s
    return analyze_system(s).result.by_name(name).wcrt


def test_ethernut_twin_has_the_examples_bound_plus_the_tick():
    """The Ethernut scenario, mapped, bounds the speaker as the analysis example
    does, plus the Nut/OS tick the example leaves out (1 ms, Table 2's t_expire
    twice: entry/exit and handler) and less the enable-bit flip per burst."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "ethernut.toml")
    twin = analyze_system(bound_system(system_from_scenario(sc))).result.by_name("critical").wcrt
    own = _wcrt(ROOT / "scenarios" / "analysis" / "ethernut.toml", "speaker", lifted=True)
    tick = sc.costs["isr_entry_exit"] + sc.platform.tick_isr_ns
    ticks = -(-twin // sc.platform.tick_ns)
    flips = 2 * sc.costs["t_flip"]  # two bursts in the window
    # (1 ns: the 5-cycle flip is 312.5 ns at 16 MHz, rounded in both files)
    assert abs(twin - (own + ticks * tick - flips)) <= 1


def test_multisource_twin_has_the_examples_bound():
    """The two sources on the shared timer, mapped: the example's bound less
    the enable-bit flip per burst (the engine folds it), at most 3 rounds."""
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "multisource.toml")
    s = system_from_scenario(sc)
    assert [x.name for x in s.sources] == ["A", "B"]
    assert s.sources[0].priority > s.sources[1].priority  # the first entry is served first
    twin = analyze_system(s).result.by_name("critical").wcrt
    own = _wcrt(ROOT / "scenarios" / "analysis" / "multisource.toml", "background")
    tick = sc.costs["isr_entry_exit"] + sc.platform.tick_isr_ns  # the 1 s placeholder tick
    assert own - 6 * sc.costs["t_flip"] <= twin - tick < own


def test_textbook_twin_is_exact_up_to_the_tick():
    sc = load_scenario(ROOT / "scenarios" / "worstcase" / "textbook_three_tasks.toml")
    c = cross_check(sc)
    assert c.bounds == c.observed | {"critical": c.observed["critical"] + 5_000}
    tick = sc.costs["isr_entry_exit"] + sc.platform.tick_isr_ns
    # the textbook's 3, 6 and 20 ms plus the ticks inside each (at 1, 2, ... ms)
    assert c.observed == {"t1": 3_000_000 + 4 * tick, "t2": 6_000_000 + 7 * tick,
                          "critical": 20_000_000 + 20 * tick}


@pytest.mark.parametrize("name", ["regehr_avr_strict", "regehr_avr_strict_work250",
                                  "regehr_avr_bursty", "regehr_avr_bursty_work250"])
def test_scenario_twin_has_the_system_files_bound(name):
    """One model: the scenario, mapped, gives the analysis example's own WCRT
    (the bursty limiter's: less the enable-bit flip per burst, which the
    engine folds into its other charges)."""
    from rtshield.analysis import load_system

    twin = analyze_system(system_from_scenario(
        load_scenario(ROOT / "scenarios" / "worstcase" / f"{name}.toml")))
    own = analyze_system(load_system(ROOT / "scenarios" / "analysis" / f"{name}.toml"))
    a, b = twin.result.by_name("critical").wcrt, own.result.by_name("background").wcrt
    if "strict" in name:
        assert a == b
    else:
        assert b - 12 * 5 * 250 <= a < b  # at most 12 bursts x t_flip (5 cycles of 250 ns)


def test_cli_analyze_scenario_and_simulate():
    import json
    import subprocess
    import sys

    env = None  # the rtshield under test: installed, or the checkout via PYTHONPATH
    wc = ROOT / "scenarios" / "worstcase"

    def run(*a):
        return subprocess.run([sys.executable, "-m", "rtshield", "analyze", *map(str, a)],
                              capture_output=True, text=True, env=env, timeout=120)

    p = run("--scenario", "--simulate", "--json", wc / "queue_750.toml")
    assert p.returncode == 1, p.stderr  # within the bound, but the bound passes the deadline
    out = json.loads(p.stdout)
    (row,) = out["simulated"]
    assert row["task"] == "critical" and row["within_bound"] and 0.9 < row["ratio"] <= 1
    assert out["schedulable"] is False
    p = run("--scenario", wc / "queue_100.toml")
    assert p.returncode == 0 and "critical" in p.stdout
    p = run("--simulate", wc / "queue_100.toml")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
