"""`rtshield design --scenario` for the receive path (issue 10 item 8): the
per-flow server for a required rate, the global limit, the NIC timers of a
multiqueue queue — with libshield's formulas, each answer simulated."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.analysis import native
from rtshield.analysis.rxdesign import design_global_limit, design_nic_queue, design_server
from rtshield.errors import UsageError
from rtshield.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
HP = ROOT / "scenarios" / "examples" / "behnke_hp_with_flood.toml"
MQ = ROOT / "scenarios" / "examples" / "multiqueue_table2.toml"
EXP3 = ROOT / "scenarios" / "behnke_software" / "exp3_modified.toml"


def test_server_for_a_required_rate():
    d = design_server(load_scenario(HP), "hp", 1000)
    assert d.confirmed, d.text()
    c, p = d.answer["capacity"], d.answer["server_period_ns"]
    assert c == native.ds_budget_for_rate(1000, p) and c * 1e9 / p >= 1000
    assert d.margin_ns() >= 0
    assert any("one step beyond" in n and "not schedulable" in n for n in d.notes)


def test_server_is_simulated_with_the_designed_budget():
    """The checks run the flow behind the server the design found, not the scenario's own
    (here 1 packet per 100 ms, which would refuse nearly all of 1000 pkt/s)."""
    sc = load_scenario(HP)
    hp = next(f for f in sc.flows if f.name == "hp")
    tight = dataclasses.replace(hp, capacity=1, server_period_ns=100_000_000)
    sc = dataclasses.replace(sc, flows=tuple(tight if f is hp else f for f in sc.flows))
    d = design_server(sc, "hp", 1000)
    assert d.confirmed, d.text()
    assert " 0 refused by its server" in d.checks[0][0]


def test_server_refuses_a_rate_the_critical_task_cannot_afford():
    sc = load_scenario(HP)
    heavy = dataclasses.replace(sc, critical=dataclasses.replace(sc.critical, work_ns=9_000_000))
    d = design_server(heavy, "hp", 100_000)
    assert not d.answer and not d.confirmed


def test_global_limit():
    sc = load_scenario(EXP3)
    sc = dataclasses.replace(sc, critical=dataclasses.replace(sc.critical, work_ns=6_000_000))
    d = design_global_limit(sc)
    assert d.confirmed, d.text()
    g = d.answer["global_capacity"]
    assert 1 < g < 1_000_000 and d.margin_ns() >= 0


def test_nic_timers_by_the_rules():
    sc = load_scenario(MQ)
    d = design_nic_queue(sc, "q1", 150, 50_000_000)
    assert d.confirmed, d.text()
    a = d.answer
    wcpd = native.nic_wcpd(sc.costs["driver_per_packet"], [q.size for q in sc.nic.queues])
    assert a["wcpd_ns"] == wcpd
    assert a["absolute_ns"] == 50_000_000 - wcpd  # t_d < t_qf here: the delay bound wins
    assert a["packet_ns"] == a["absolute_ns"]


def test_nic_timers_bounded_by_the_worker_mailbox():
    """A batch larger than the receiving worker's mailbox is lost: t_qf uses it."""
    sc = load_scenario(MQ)
    d = design_nic_queue(sc, "q3", 50, 2_000_000_000)
    assert d.confirmed, d.text()
    wcpd = d.answer["wcpd_ns"]
    assert d.answer["t_qf_ns"] == native.nic_t_qf(16, round(1e9 / 50))
    assert d.answer["absolute_ns"] == d.answer["t_qf_ns"] - wcpd


def test_nic_no_window():
    d = design_nic_queue(load_scenario(MQ), "q0", 200, 10_000_000)
    assert not d.answer and "t_P" in d.notes[0]


def test_wrong_scenarios_are_named():
    with pytest.raises(UsageError, match="no flow 'x'"):
        design_server(load_scenario(HP), "x", 10)
    with pytest.raises(UsageError, match="no global limit"):
        design_global_limit(load_scenario(HP))
    with pytest.raises(UsageError, match="not multiqueue"):
        design_nic_queue(load_scenario(HP), "q0", 10, 10**6)
    with pytest.raises(UsageError, match="no \\[\\[nic.queues\\]\\] named"):
        design_nic_queue(load_scenario(MQ), "q9", 10, 10**6)


def test_cli():
    env = None  # the rtshield under test: installed, or the checkout via PYTHONPATH
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "rtshield", "design", "--scenario", *map(str, a)],
        capture_output=True, text=True, env=env, timeout=120)
    p = run(HP, "--knob", "flow.hp.server", "--rate", "1000pps")
    assert p.returncode == 0 and "confirmed: yes" in p.stdout, p.stdout + p.stderr
    p = run(MQ, "--knob", "nic.queue.q1", "--rate", "150pps")
    assert p.returncode == 2 and "needs --max-delay" in p.stderr and p.stderr.count("\n") == 1
    p = run(HP, "--knob", "flow.hp.server")
    assert p.returncode == 2 and "needs --rate" in p.stderr


def test_server_of_a_flow_below_the_flood_is_not_confirmed():
    """A flow at the flood's level gets nothing through: the simulation refutes
    the rate guarantee although the critical task is safe."""
    sc = load_scenario(HP)
    low = dataclasses.replace(
        sc,
        flows=tuple(dataclasses.replace(f, priority=1) if f.name == "hp" else f for f in sc.flows),
        tasks=tuple(dataclasses.replace(t, priority=1) if t.name == "hp_rx" else t
                    for t in sc.tasks),
    )
    d = design_server(low, "hp", 1000)
    assert not d.confirmed
    assert any("does not run above it" in n for n in d.notes)
