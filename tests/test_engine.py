"""The engine through its Python binding: the Result contract, conservation
of packets, determinism, progress reporting and configuration errors."""

from __future__ import annotations

import numpy as np
import pytest

from rtshield.engine import DROP_REASONS, simulate
from rtshield.errors import UsageError
from rtshield.outputs import format_summary_json
from rtshield.scenario import loads_scenario

BASE = """
[scenario]
name = "t"
platform = "esp32-freertos"
duration = "{duration}"
bin = "1s"
seed = {seed}

[critical]
period = "10ms"
work = "4ms"
priority = {crit_prio}

[driver]
priority = 2
queue = {queue}

[mitigation]
kind = "{mitigation}"
{mit_extra}

[[flows]]
name = "syn"
protocol = "tcp"
dst_port = 80
size = 60
pattern = "{pattern}"
{flow_extra}
"""


def scenario(duration="3s", seed=1, crit_prio=3, queue=100, mitigation="none", mit_extra="",
             pattern="constant", flow_extra='rate = "20000pps"'):
    text = BASE.format(duration=duration, seed=seed, crit_prio=crit_prio, queue=queue,
                       mitigation=mitigation, mit_extra=mit_extra, pattern=pattern,
                       flow_extra=flow_extra)
    return loads_scenario(text, "t.toml")


def test_summary_has_the_contract_keys():
    s = simulate(scenario()).summary()
    assert set(s) >= {"scenario", "seed", "duration_s", "totals", "critical", "flows", "cpu",
                      "mitigation"}
    assert set(s["totals"]) >= {"offered", "irq_raised", "isr_runs", "irq_lost", "received",
                                "processed", "delivered", "dropped"}
    assert set(s["critical"]) >= {"cycles", "misses", "lateness_max_pct", "lateness_bin_max_pct",
                                  "lateness_sum_pct", "cycle_time_us"}
    assert set(s["critical"]["cycle_time_us"]) == {"min", "p50", "p99", "max"}
    assert set(s["flows"]["syn"]) == {"offered", "delivered", "dropped", "latency_us"}
    assert set(s["mitigation"]) == {"name", "parameters", "counters"}
    assert s["duration_s"] == 3.0
    # shares of one core; esp32-freertos has two (core 1 only runs its tick)
    assert abs(sum(s["cpu"].values()) - 2.0) < 1e-3
    assert s["cpu"]["idle_core1"] > 0.99


def test_light_load_numbers():
    # 20 kpps for 3 s, critical task alone on its 10 ms period: 300 cycles,
    # none late; every packet is received and processed; ISR + driver cost
    # 20 us per packet: 40 % of the CPU on top of the critical task's 40 %.
    r = simulate(scenario())
    t = r.totals
    assert t["offered"] == 59999  # the first packet one gap after t = 0
    assert t["isr_runs"] == t["offered"] and t["irq_lost"] == 0
    assert t["received"] == t["processed"] == t["delivered"] == t["offered"]
    assert r.critical["cycles"] == 300 and r.critical["misses"] == 0
    assert r.critical["cycle_time_us"]["min"] >= 9_990
    assert r.critical["cycle_time_us"]["max"] <= 10_050  # ISRs make the cycle end jitter
    assert 0.79 < 1.0 - r.cpu["idle"] < 0.82
    assert r.flows["syn"]["latency_us"]["max"] >= 20.0


def test_packets_are_conserved():
    r = simulate(scenario(pattern="constant", flow_extra='rate = "140000pps"', queue=100))
    t = r.totals
    d = t["dropped"]
    assert set(d) == set(DROP_REASONS)
    # edge NIC: every arrival raised the line; it ran the ISR or was lost (one may still be latched)
    assert t["irq_raised"] == t["offered"]
    assert 0 <= t["offered"] - t["isr_runs"] - t["irq_lost"] <= 1
    assert t["irq_lost"] == d["irq_overrun"] + d["line_disabled"]
    # edge NIC: each ISR run receives its packet (one ISR may still be running at the end)
    assert 0 <= t["isr_runs"] - t["received"] <= 1
    # a received packet is queued or dropped; a queued one is processed, except what is
    # still queued at the end (<= 100 + 1 in the driver's hands)
    queued = t["received"] - d["queue_full"] - d["mitigation"]
    assert 0 <= queued - t["processed"] <= 101
    ts = r.timeseries
    assert int(ts["offered"].sum()) == t["offered"]
    assert int(ts["dropped_queue_full"].sum()) == d["queue_full"]


def test_timeseries_shape():
    r = simulate(scenario(duration="4s"))
    ts = r.timeseries
    for k in ("t_s", "offered", "irq_raised", "isr_runs", "irq_lost", "received", "processed",
              "delivered", "cycles", "lateness_pct", "lateness_max_pct", "misses",
              "rx_disabled_s", "cpu_critical", "cpu_driver", "cpu_isr_rx", "cpu_idle"):
        assert k in ts and len(ts[k]) == 4, k
    for reason in DROP_REASONS:
        assert len(ts[f"dropped_{reason}"]) == 4
    assert list(ts["t_s"]) == [0.0, 1.0, 2.0, 3.0]
    assert list(ts["cycles"]) == [100, 100, 100, 100]
    edges, counts = r.cycle_time_hist
    assert len(edges) == len(counts) + 1 and int(counts.sum()) == 399
    ledges, lcounts = r.flow_latency_hist["syn"]
    assert int(lcounts.sum()) == r.totals["delivered"]
    assert np.all(np.diff(edges) > 0)


def test_same_seed_same_bytes_other_seed_differs():
    poisson = dict(pattern="poisson", flow_extra='rate = "60000pps"', queue=500,
                   mitigation="queue")
    a = format_summary_json(simulate(scenario(seed=7, **poisson)).summary())
    b = format_summary_json(simulate(scenario(seed=7, **poisson)).summary())
    c = format_summary_json(simulate(scenario(seed=8, **poisson)).summary())
    assert a == b
    assert a != c


def test_progress_is_reported_per_bin():
    calls = []
    simulate(scenario(duration="3s"), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]


def test_equal_priorities_time_slice():
    # The driver saturated by a flood, equal priorities: round robin on the
    # tick makes the critical task late; above the driver it is not.
    flood = dict(pattern="constant", flow_extra='rate = "40000pps"')
    eq = simulate(scenario(crit_prio=2, **flood))
    hi = simulate(scenario(crit_prio=3, **flood))
    assert eq.critical["misses"] > 0
    assert hi.critical["misses"] == 0
    assert eq.totals["processed"] > hi.totals["processed"]


def test_mitigation_counters_come_from_the_run():
    r = simulate(scenario(mitigation="burst", mit_extra='slice = "20ms"\ncapacity = 100',
                          flow_extra='rate = "20000pps"'))
    m = r.summary()["mitigation"]
    assert m["name"] == "burst"
    assert m["parameters"] == {"slice": "20ms", "capacity": 100}
    # 400 packets arrive per slice, 100 are taken: the line goes off once per slice
    assert 140 <= m["counters"]["line_disables"] <= 151
    assert m["counters"]["timer_fires"] >= m["counters"]["line_disables"] - 1
    assert r.totals["isr_runs"] <= 3 * 50 * 101


def test_dma_ring_nic():
    text = BASE.format(duration="2s", seed=1, crit_prio=3, queue=100, mitigation="none",
                       mit_extra="", pattern="constant", flow_extra='rate = "20000pps"')
    text = text.replace("[mitigation]", '[nic]\nkind = "dma_ring"\nring = 64\n\n[mitigation]')
    r = simulate(loads_scenario(text, "t.toml"))
    t = r.totals
    assert t["received"] == t["processed"] == t["offered"]
    assert t["isr_runs"] <= t["offered"]


def test_missing_cost_key_names_it(monkeypatch):
    sc = scenario()
    from rtshield import scenario as scn

    costs = dict(sc.costs)
    del costs["driver_per_packet"]
    import dataclasses

    bad = dataclasses.replace(sc, costs=scn.CostTable(costs))
    with pytest.raises(UsageError, match=r"\[costs\] driver_per_packet: missing"):
        simulate(bad)
