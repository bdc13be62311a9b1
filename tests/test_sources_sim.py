"""Several RX interrupt sources from scenario files, through the simulator.

Regehr & Duongsaa §6.4: two sources behind bursty interrupt schedulers that
share one 200 Hz timer (§3.5), bursts 5 and 7, "resulting in maximum average
arrival rates of 1 kHz and 1.4 kHz". scenarios/examples/regehr_two_sources.toml
reproduces the setting; regehr_two_sources_none.toml is the unprotected
baseline of Figure 3.
"""

from pathlib import Path

import numpy as np
import pytest
from scenario_texts import mote, two_source_flows

from rtshield.engine import TRACE_KINDS, simulate
from rtshield.scenario import load_scenario, loads_scenario

EX = Path(__file__).resolve().parent.parent / "scenarios" / "examples"
DELIVER = TRACE_KINDS.index("deliver")
TIMER_HZ = 200  # §6.4


def _admitted_per_second(res, n_flows, n_bins):
    """Packets each flow's handler completed, per 1 s bin (from the trace)."""
    tr = res.trace
    assert res.trace_lost == 0
    d = tr[tr["kind"] == DELIVER]
    out = np.zeros((n_flows, n_bins), dtype=np.int64)
    for f in range(n_flows):
        t = d["t_ns"][d["arg"] == f]
        out[f] = np.bincount((t // 10**9).astype(np.int64), minlength=n_bins)[:n_bins]
    return out


@pytest.fixture(scope="module")
def protected():
    sc = load_scenario(EX / "regehr_two_sources.toml")
    return sc, simulate(sc, trace=400_000)


@pytest.fixture(scope="module")
def unprotected():
    sc = load_scenario(EX / "regehr_two_sources_none.toml")
    return sc, simulate(sc, trace=400_000)


def test_the_files_are_paper_setting():
    sc = load_scenario(EX / "regehr_two_sources.toml")
    assert sc.mitigation.kind == "bursty" and sc.mitigation.period_ns == 10**9 // TIMER_HZ
    assert [(s.name, s.burst) for s in sc.sources] == [("A", 5), ("B", 7)]
    base = load_scenario(EX / "regehr_two_sources_none.toml")
    assert base.mitigation.kind == "none"
    assert [f.schedule(base.duration_ns) for f in base.flows] == \
        [f.schedule(sc.duration_ns) for f in sc.flows]


def test_admitted_rates_never_exceed_burst_times_200hz(protected):
    """§6.4's bound: A ≤ 5 × 200 = 1000/s and B ≤ 7 × 200 = 1400/s in every second."""
    sc, res = protected
    adm = _admitted_per_second(res, len(sc.flows), sc.bins)
    for i, f in enumerate(sc.flows):
        burst = next(s.burst for s in sc.sources if s.name == f.source)
        limit = burst * TIMER_HZ
        # one second holds 200 timer periods; a burst straddling a bin edge
        # can add at most one more burst
        assert adm[i].max() <= limit + burst, (f.name, adm[i])
        assert adm[i].sum() <= limit * sc.duration_ns // 10**9 + burst, (f.name, adm[i])
        for b in range(sc.bins):
            offered = f.rate_at(b * 10**9, sc.duration_ns)
            if offered >= 2 * limit:
                # overload: the scheduler admits its whole budget, not less
                assert adm[i][b] >= 0.99 * limit, (f.name, b, adm[i])
            elif offered <= 0.8 * limit:
                # below the bound nothing is limited
                assert abs(adm[i][b] - offered) <= 1, (f.name, b, adm[i])


def test_without_protection_the_rates_follow_the_offered_load(unprotected, protected):
    """The baseline exceeds the bound (so the check above can fail)."""
    sc, res = unprotected
    adm = _admitted_per_second(res, len(sc.flows), sc.bins)
    for i, f in enumerate(sc.flows):
        limit = (5, 7)[i] * TIMER_HZ
        assert adm[i].max() > 3 * limit, (f.name, adm[i])
    # and the protected run keeps the critical task on time, the baseline does not
    assert res.critical["misses"] > 0
    assert protected[1].critical["misses"] == 0


def test_shared_timer_costs_one_interrupt_per_period(protected):
    sc, res = protected
    fires = res.mitigation["counters"]["timer_fires"]
    assert abs(fires - TIMER_HZ * sc.duration_ns // 10**9) <= 1
    # isr_timer: t_expire (isr_entry_exit) + timer_isr per fire, on one shared timer
    per_fire = sc.costs["isr_entry_exit"] + sc.costs["timer_isr"]
    assert res.cpu["isr_timer"] == pytest.approx(fires * per_fire / sc.duration_ns, abs=1e-6)


ENGINE = (
    mote("map", "1s", "1ms")
    + """
[[sources]]
name = "A"
isr_work = "250cyc"
isr_only = true

[[sources]]
name = "B"
isr_work = "0cyc"
isr_only = true
"""
    + two_source_flows("1kHz", "2kHz")
)


def test_each_source_has_its_own_isr_cost_and_no_driver():
    sc = loads_scenario(ENGINE, "map.toml")
    res = simulate(sc)
    entry = sc.costs["isr_entry_exit"]
    got = res.cpu["isr_rx"] * sc.duration_ns
    na, nb = res.flows["a"]["offered"], res.flows["b"]["offered"]
    assert na > 990 and nb > 1990
    # A's handler costs entry + 250 cycles (62.5 us), B's entry alone
    assert got == pytest.approx(na * (entry + 62_500) + nb * entry, abs=1000)  # cpu: 1e-6 s
    assert res.flows["a"]["delivered"] == na and res.flows["b"]["delivered"] == nb
    assert res.totals["processed"] == 0 and res.cpu["driver"] == 0.0
    # swapping the works moves the cost with the source
    res2 = simulate(loads_scenario(ENGINE.replace('"250cyc"', '"X"').replace('"0cyc"', '"250cyc"')
                                   .replace('"X"', '"0cyc"'), "map2.toml"))
    got2 = res2.cpu["isr_rx"] * sc.duration_ns
    assert got2 == pytest.approx(na * entry + nb * (entry + 62_500), abs=1000)


def test_flows_without_isr_only_go_through_the_driver():
    sc = loads_scenario(ENGINE.replace("isr_only = true", "isr_only = false"), "drv.toml")
    res = simulate(sc)
    assert res.totals["processed"] == res.totals["received"] > 2900
    assert res.cpu["driver"] > 0


def test_strict_sources_run_end_to_end(tmp_path):
    """Per-source strict limiters from a file, through `rtshield run`."""
    import json
    import subprocess
    import sys

    text = (ENGINE.replace("[[sources]]", "[mitigation]\nkind = \"strict\"\n\n[[sources]]", 1)
            .replace('isr_work = "250cyc"', 'isr_work = "250cyc"\nmin_interarrival = "2ms"')
            .replace('isr_work = "0cyc"', 'isr_work = "0cyc"\nmin_interarrival = "1ms"'))
    p = tmp_path / "strict.toml"
    p.write_text(text, encoding="utf-8")
    sc = load_scenario(p)
    assert [s.min_interarrival_ns for s in sc.sources] == [2_000_000, 1_000_000]
    assert sc.mitigation.parameters() == {}  # every source gives its own
    out = subprocess.run([sys.executable, "-m", "rtshield", "run", str(p), "--out",
                          str(tmp_path / "o")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    summ = json.loads((tmp_path / "o" / "summary.json").read_text())
    # A offered 1 kHz behind a 2 ms limiter: at most 500/s; B at 2 kHz behind 1 ms: 1000/s
    assert 450 <= summ["flows"]["a"]["delivered"] <= 501
    assert 900 <= summ["flows"]["b"]["delivered"] <= 1001
    html = (tmp_path / "o" / "report.html").read_text()
    assert "source A" in html and "min_interarrival 2ms" in html


def test_overhead_at_the_papers_measured_point(protected, unprotected):
    """§6.4: at 400 and 781 Hz the schedulers add 1.1 % CPU (measured).

    The model's overhead at that point (the first second of both files) is the
    shared timer, 200 × (t_expire + 2 (t_clear + t_flip)), plus t_count per
    admitted interrupt; Table 2's constants give 0.85 %, within half a point
    of the measurement (the model leaves out the enable-bit flips, see
    docs/analysis.md).
    """
    sc, on = protected
    _, off = unprotected

    def isr_share(res):
        return res.timeseries["cpu_isr_rx"][0] + res.timeseries["cpu_isr_timer"][0]

    overhead = isr_share(on) - isr_share(off)
    k = sc.costs
    model = (TIMER_HZ * (k["isr_entry_exit"] + k["timer_isr"])
             + (400 + 781) * k["mitigation_isr"]) / 1e9
    assert overhead == pytest.approx(model, abs=2e-4)
    assert abs(overhead - 0.011) < 0.005
