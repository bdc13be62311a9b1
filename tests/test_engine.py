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
    assert set(s["flows"]["syn"]) == {"offered", "received", "processed", "delivered",
                                      "dropped", "dropped_by", "latency_us"}
    assert set(s["flows"]["syn"]["latency_us"]) == {"p50", "p99", "p999", "max"}
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


def test_worker_delivers_its_flow():
    text = BASE.format(duration="2s", seed=1, crit_prio=4, queue=100, mitigation="none",
                       mit_extra="", pattern="constant", flow_extra='rate = "5000pps"')
    text = text.replace("{", "{{").replace("}", "}}") + """
[[tasks]]
name = "modbus_server"
kind = "worker"
priority = 1
core = 0
flow = "syn"
work = "50us"
queue = {mailbox}
"""
    # The worker runs below the critical task: during its 4 ms, 20 messages
    # arrive. A mailbox of 32 holds them; one of 8 overflows every cycle.
    r = simulate(loads_scenario(text.format(mailbox=32), "t.toml"))
    t = r.totals
    assert t["processed"] == t["offered"]
    assert t["delivered"] == t["processed"]  # 5 kpps x 50 us = 25 %: the worker keeps up
    assert t["dropped"]["mailbox_full"] == 0
    assert r.tasks["modbus_server"]["jobs"] == t["delivered"]
    assert r.cpu["modbus_server"] > 0.2
    # latency now includes the worker's 50 us after the ISR and the driver
    assert r.flows["syn"]["latency_us"]["p50"] >= 70.0
    small = simulate(loads_scenario(text.format(mailbox=8), "t.toml")).totals
    assert small["dropped"]["mailbox_full"] >= 200 * 10  # >= 12 of 20 per cycle
    assert small["delivered"] + small["dropped"]["mailbox_full"] == small["processed"]


@pytest.mark.parametrize("kind, extra, max_isr_per_s", [
    ("strict", 'min_interarrival = "250us"', 4_000),
    ("bursty", 'burst = 15\nperiod = "25ms"', 600),
    ("countdown", 'window = "500us"', 2_000),
])
def test_regehr_limiters_from_a_scenario(kind, extra, max_isr_per_s):
    # A 100 kpps flood for 2 s: each limiter caps the RX interrupt rate at
    # its designed value (Regehr & Duongsaa §3.2-3.4), and the critical task
    # above the driver stays on time.
    r = simulate(scenario(duration="2s", mitigation=kind, mit_extra=extra,
                          flow_extra='rate = "100000pps"'))
    runs = r.timeseries["isr_runs"]
    assert int(runs.max()) <= max_isr_per_s + 1
    assert int(runs.min()) >= 0.9 * max_isr_per_s
    assert r.critical["misses"] == 0
    assert r.summary()["mitigation"]["name"] == kind


def test_trace_when_asked_for():
    from rtshield.engine import TRACE_KINDS

    r = simulate(scenario(duration="1s", flow_extra='rate = "1000pps"'), trace=100_000)
    tr = r.trace
    assert r.trace_lost == 0
    kinds = [TRACE_KINDS[k] for k in tr["kind"]]
    assert kinds.count("arrival") == r.totals["offered"]
    assert kinds.count("deliver") == r.totals["delivered"]
    assert kinds.count("cycle_end") == r.critical["cycles"]
    assert np.all(np.diff(tr["t_ns"].astype(np.int64)) >= 0)
    deliver = tr[tr["kind"] == TRACE_KINDS.index("deliver")]
    assert int(deliver["value"].max()) / 1e3 == r.flows["syn"]["latency_us"]["max"]
    assert simulate(scenario(duration="1s")).trace is None


def test_summary_does_not_depend_on_the_hash_seed():
    """Two interpreters with different string-hash seeds (dict and set order
    of str keys could differ) give the same summary.json bytes."""
    import os
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, {tests!r}); from test_engine import scenario; "
            "from rtshield.engine import simulate; from rtshield.outputs import "
            "format_summary_json as f; sys.stdout.write(f(simulate(scenario(seed=5, "
            "pattern='poisson', flow_extra='rate = \"30000pps\"', mitigation='burst', "
            "mit_extra='slice = \"20ms\"\\ncapacity = 600')).summary()))")
    code = code.format(tests=os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True)
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    assert b'"offered"' in outs[0]
