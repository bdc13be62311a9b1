"""Analysis versus simulation for system files (docs/analysis.md §8).

Each example is written as a simulator scenario (rtshield.analysis.simcheck),
which the one mapping (rtshield.analysis.model) must turn back into the same
analysis model, and runs with the scenario's worst-case traffic — synchronous
release, maximal bursts; the observed maximum response time of every thread
must not exceed the system's WCRT and must come within CLOSENESS of it where
the scenario grids reach the critical instant.

Systems the scenario model cannot express are skipped at run time with the
missing feature in the reason (SimUnsupported).
"""

import dataclasses
from pathlib import Path

import pytest

from rtshield.analysis import load_system
from rtshield.analysis.simcheck import SimUnsupported, check, scenario_of, worst_case

EX = Path(__file__).resolve().parent.parent / "scenarios" / "analysis"
CLOSENESS = 0.95


def _run(system, closeness=CLOSENESS):
    try:
        rep, obs, problems = check(system, closeness)
    except SimUnsupported as e:
        pytest.skip(str(e))
    assert obs, "no thread observed"
    assert not problems, problems
    return rep, obs


def test_textbook_three_tasks_exact():
    rep, obs = _run(load_system(EX / "textbook_three_tasks.toml"), closeness=1.0)
    assert obs == {"t1": 3_000_000, "t2": 6_000_000, "t3": 20_000_000}


def test_burst_mitigation_double_capacity():
    s = load_system(EX / "burst_mitigation.toml")
    rep, obs = _run(s)
    # the observation includes the second slice's burst: more than one capacity
    one_burst = 40 * s.costs["t_int"] + 40 * s.sources[0].work
    assert obs["control"] > 5_000_000 + 1.5 * one_burst


@pytest.mark.parametrize("name", ["regehr_avr_strict", "regehr_avr_strict_work250",
                                  "regehr_avr_bursty", "regehr_avr_bursty_work250"])
def test_regehr_avr(name):
    s = load_system(EX / f"{name}.toml")
    s.tick = False  # TinyOS has no scheduler tick; the preset's 1 s tick is a placeholder
    # work250's bound holds the late clearing: a release on the first of N interrupts
    # whose last starts just before a limiter tick. The 10 ms releases and 1 ms ticks
    # are grids from 0, so every release falls on a tick: one burst of the bound is
    # out of reach (0.93; docs/analysis.md §8). Its twin in scenarios/worstcase/
    # shifts the period to reach it (test_sim_vs_analysis, within 5 %).
    _run(s, closeness=0.9 if name == "regehr_avr_bursty_work250" else CLOSENESS)


def test_ethernut_at_the_designed_burst():
    """ethernut.toml misses 2 ms at N = 15; `design` finds N = 1: simulate that.

    The worst-case flood's interrupt starts 1 ns before a limiter tick (every
    25 ms), so the tick's handler waits for it and the next interrupt runs right
    after the late clearing: two back to back from a release (every 2 ms, and
    50 ms is both), as the bound assumes — within 5 % of it."""
    s = load_system(EX / "ethernut.toml")
    s.tick = False
    s.sources[0] = dataclasses.replace(s.sources[0], burst=1)
    rep, obs = _run(s)
    isr = s.costs["t_int"] + s.sources[0].work + s.costs["t_count"]
    assert obs["speaker"] >= 2 * isr + s.tasks[0].C


def test_ethernut_at_the_papers_burst():
    """N = 15: two bursts back to back around a tick, about 19.5 ms — past the
    2 ms deadline, so compared with the bound at a lifted deadline."""
    from rtshield.analysis.model import bound_system
    from rtshield.analysis.report import analyze_system
    from rtshield.analysis.simcheck import run_worst_case

    s = load_system(EX / "ethernut.toml")
    s.tick = False
    obs = run_worst_case(s)["speaker"]
    bound = analyze_system(bound_system(s)).result.by_name("speaker").wcrt
    assert CLOSENESS * bound <= obs <= bound
    assert obs > 2 * 15 * 600_000  # two bursts of 15 packets of more than 600 us


def test_multisource():
    """Regehr & Duongsaa §6.4: bursts 5 and 7 on one shared 200 Hz timer."""
    s = load_system(EX / "multisource.toml")
    s.tick = False  # TinyOS has no scheduler tick (as in test_regehr_avr)
    rep, obs = _run(s)
    # both bursts hit the 5 ms thread twice (before a tick and after it) with
    # two timer interrupts: a mapping that lost a source would see less
    per = [s.costs["t_int"] + src.work + s.costs["t_count"] for src in s.sources]
    one_round = sum(src.burst * c for src, c in zip(s.sources, per, strict=True))
    assert obs["background"] >= 5_000_000 + 2 * one_round + 2 * s.costs["t_expire"]


def test_worst_case_multisource_ends_all_bursts_before_the_tick():
    s = load_system(EX / "multisource.toml")
    s.tick = False
    sc, names = worst_case(s)
    assert [x.name for x in sc.sources] == ["A", "B"]  # A has the higher priority
    assert names == {"critical": "background"}
    (begin,) = {f.begin_ns for f in sc.flows}
    gap = round(1e9 / sc.flows[0].rate_pps)
    isr = [sc.costs["isr_entry_exit"] + x.isr_work_ns + sc.costs["mitigation_isr"]
           for x in sc.sources]
    total = sum(x.burst * c for x, c in zip(sc.sources, isr, strict=True))
    # the first arrival one gap in; the last interrupt ends 1 ns before a tick
    assert (begin + gap + total + 1) % sc.mitigation.period_ns == 0


@pytest.mark.parametrize("name", ["textbook_three_tasks", "burst_mitigation", "multisource",
                                  "ethernut", "regehr_avr_strict", "regehr_avr_bursty_work250"])
def test_system_as_scenario_maps_back_to_its_model(name):
    """One mapping: the scenario simcheck writes, through model.system_from_scenario,
    bounds every thread by the system's own WCRT (less the enable-bit flips
    the engine folds into its other charges: one per burst or slice)."""
    from rtshield.analysis.model import bound_system, system_from_scenario
    from rtshield.analysis.report import analyze_system

    s = load_system(EX / f"{name}.toml")
    s.tick = name == "textbook_three_tasks"
    sc, names = scenario_of(s)
    mapped = analyze_system(bound_system(system_from_scenario(sc)))
    own = analyze_system(bound_system(s))
    for sn, tn in names.items():
        a, b = mapped.result.by_name(sn).wcrt, own.result.by_name(tn).wcrt
        assert a <= b and a >= 0.98 * b, (tn, a, b)
        if not any(x.model in ("bursty", "burst_mitigation") for x in s.sources):
            assert a == b, tn


def test_pure_interrupts_at_asserted_rate(tmp_path):
    p = tmp_path / "pure.toml"
    p.write_text('[system]\nplatform = "atmega103-tinyos"\ntick = false\n'
                 '[[source]]\nname = "x"\nmodel = "pure"\nmax_rate = "2kHz"\nwork = "250cyc"\n'
                 '[[task]]\nname = "bg"\nwcet = "3ms"\nperiod = "10ms"\npriority = 1\n')
    _run(load_system(p), closeness=0.99)


def test_worst_case_bursty_straddles_the_tick():
    """The N-th interrupt starts 1 ns before a limiter tick, after a release: the
    tick's handler waits for it, so the counter is cleared one interrupt late and
    the next bursts come that much less than a period later (docs/analysis.md §2)."""
    s = load_system(EX / "regehr_avr_bursty.toml")
    s.tick = False
    sc, _ = worst_case(s)
    (f,) = sc.flows
    gap = round(1e9 / f.rate_pps)
    isr = sc.costs["isr_entry_exit"] + sc.sources[0].isr_work_ns + sc.costs["mitigation_isr"]
    assert (f.begin_ns + gap + (sc.mitigation.burst - 1) * isr + 1) % sc.mitigation.period_ns == 0
    assert f.begin_ns >= 2 * sc.critical.period_ns


def test_hardware_countdown(tmp_path):
    p = tmp_path / "hw.toml"
    p.write_text('[system]\nplatform = "atmega103-tinyos"\ntick = false\n'
                 '[[source]]\nname = "x"\nmodel = "hardware"\nmax_rate = "4kHz"\n'
                 'work = "250cyc"\n'
                 '[[task]]\nname = "bg"\nwcet = "5ms"\nperiod = "10ms"\npriority = 1\n')
    _run(load_system(p), closeness=0.99)


def test_queue_mitigation_once_per_drain(tmp_path):
    """Danicki's Queue Mitigation: a thread above the driver sees Q + 1 ISR runs."""
    p = tmp_path / "q.toml"
    p.write_text('[system]\nplatform = "atmega103-tinyos"\ntick = false\n'
                 '[[source]]\nname = "rx"\nmodel = "queue_mitigation"\nqueue = 20\n'
                 'work = "250cyc"\ndriver_priority = 0\ndriver_work = "100us"\n'
                 '[[task]]\nname = "control"\nwcet = "5ms"\nperiod = "50ms"\npriority = 2\n')
    s = load_system(p)
    rep, obs = _run(s, closeness=0.99)
    isr = s.costs["t_int"] + s.sources[0].work
    assert obs["control"] >= 5_000_000 + 21 * isr  # Q enqueues + 1 failed attempt


def test_other_multisource_shapes_name_what_is_missing(tmp_path):
    """Two strict sources: the engine's multi-source path is the shared bursty timer only."""
    p = tmp_path / "two_strict.toml"
    p.write_text('[system]\nplatform = "atmega103-tinyos"\ntick = false\n'
                 '[[source]]\nname = "a"\nmodel = "strict"\nmin_interarrival = "1ms"\n'
                 'work = "0cyc"\npriority = 2\n'
                 '[[source]]\nname = "b"\nmodel = "strict"\nmin_interarrival = "2ms"\n'
                 'work = "0cyc"\npriority = 1\n'
                 '[[task]]\nname = "bg"\nwcet = "5ms"\nperiod = "10ms"\npriority = 0\n')
    with pytest.raises(SimUnsupported, match="bursty schedulers on one shared timer; "
                                             "the system has 2 sources and no"):
        scenario_of(load_system(p))
    # the same sources on a shared timer: still not bursty
    p.write_text(p.read_text().replace('[[source]]\nname = "a"',
                                       '[[timer]]\nname = "t"\nrate = "200Hz"\n'
                                       '[[source]]\nname = "a"'))
    with pytest.raises(SimUnsupported, match="source a is 'strict'"):
        scenario_of(load_system(p))
