"""`rtshield rig freertos-tcp` without root: the scenario -> target mapping, the
summary of a run, the claims, the one-line errors, and the simulated side of
the shipped device scenario."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from rig_checks import rig_error, target_text

from rtshield import cli
from rtshield.errors import UsageError
from rtshield.rig import freertos, harness

SCEN = freertos.default_scenario()


def _cfg(text: str) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, *v = line.split()
            out.setdefault(k, []).append(v)
    return out


def _config(variant: str, **kw) -> dict[str, list[list[str]]]:
    return _cfg(target_text(SCEN, variant, **kw))


def test_target_config_carries_the_scenario():
    c = _config("protected")
    assert c["protect"] == [["1"]]
    assert c["crit_period_us"] == [["10000"]] and c["crit_work_us"] == [["2000"]]
    assert c["crit_prio"] == [["4"]] and c["net_prio"] == [["1"]]
    assert c["netmask"] == [["255.255.255.0"]] and c["ip"] == [[harness.DEVICE_ADDR]]
    flows = {f[0]: f[1:] for f in c["flow"]}
    # name: proto port prio capacity server_period_us queue worker_prio work_us
    assert flows["hp"] == ["udp", "5000", "5", "50", "25000", "0", "5", "50"]
    assert flows["bulk"] == ["udp", "6000", "1", "0", "0", "0", "1", "50"]
    assert flows["syn_flood"] == ["tcp", str(harness.LISTEN_PORT), "0", "5", "10000", "0", "1", "0"]
    assert c["short_circuit"] == [["1"]]


def test_unprotected_variant_is_the_stock_path():
    c = _config("unprotected")
    assert c["protect"] == [["0"]]
    assert c["net_prio"] == [["6"]]  # --stock-priority
    assert "short_circuit" not in c
    flows = {f[0]: f[1:] for f in c["flow"]}
    assert flows["hp"][3:6] == ["0", "0", "0"]  # no server, no queue limit


def test_phase_seconds_sets_the_flood_steps_and_duration():
    dev = freertos.load_device(SCEN, 6, phase_s=2.0)
    assert dev.phase_s == 2.0
    for v in dev.variants.values():
        assert v.duration_ns == 6_000_000_000
        flood = next(f for f in v.flows if f.name == "syn_flood")
        assert flood.step_every_ns == 2_000_000_000
    assert freertos.load_device(SCEN, 6).phase_s == 3.0  # the scenario's step_every


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "dev.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("[rx]\nshort_circuit = true", "", "needs an [rx] table"),
        ('period = "10ms"', 'period = "2500us"', "whole number"),
        ("dst_port = 502", "dst_port = 80", "dst_port must be 502"),
        ('step_every = "3s"', 'step_every = "500s"', "must be 1-120 s"),
        ('rate = "200pps"', 'rate = "200pps"\nbegin = "0s"', None),
    ],
)
def test_bad_device_scenarios_are_refused_in_one_line(tmp_path, old, new, needle):
    text = SCEN.read_text()
    assert old in text
    p = _write(tmp_path, text.replace(old, new, 1))
    if needle is None:  # a harmless change: accepted
        target_text(p, out=tmp_path)
        return
    with pytest.raises(UsageError, match=needle.replace("[", r"\[")):
        target_text(p, out=tmp_path)


def test_udp_flow_must_be_constant(tmp_path):
    text = SCEN.read_text().replace(
        'pattern = "constant"\nrate = "500pps"',
        'pattern = "poisson"\nrate = "500pps"',
    )
    assert "poisson" in text
    dev = freertos.load_device(_write(tmp_path, text), 6)
    with pytest.raises(UsageError, match="constant rate"):
        freertos.target_config(
            dev.variants["protected"], True, ifname="i", mac="m", out=tmp_path, seconds=9
        )


def test_missing_trees_name_the_option_and_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(freertos.TREE_ENV, raising=False)
    with pytest.raises(harness.RigError) as e:
        freertos.find_tree(str(tmp_path))
    assert "--freertos-tree" in str(e.value) and freertos.TREE_ENV in str(e.value)
    monkeypatch.setenv(freertos.TREE_ENV, str(tmp_path / "nope"))
    with pytest.raises(harness.RigError, match="RTS_THIRD_PARTY="):
        freertos.find_tree(None)


def test_cli_not_root(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    msg = rig_error(capsys, ["rig", "freertos-tcp", "--out", str(tmp_path / "o")])
    assert "needs root" in msg
    assert not (tmp_path / "o").exists()


def test_cli_missing_tool(capsys, monkeypatch, tmp_path):
    real = shutil.which
    monkeypatch.setattr(harness.os, "geteuid", lambda: 0)
    monkeypatch.setattr(
        harness.shutil, "which", lambda n: None if n == "ethtool" else real(n) or "/x"
    )
    msg = rig_error(capsys, ["rig", "freertos-tcp", "--out", str(tmp_path / "o")])
    assert "ethtool" in msg and "apt-get install ethtool" in msg


def test_cli_missing_trees(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 0)
    monkeypatch.setattr(harness.shutil, "which", lambda n: "/usr/bin/" + n)
    msg = rig_error(
        capsys,
        ["rig", "freertos-tcp", "--freertos-tree", str(tmp_path), "--out", str(tmp_path / "o")],
    )
    assert "--freertos-tree" in msg
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--attacks", "syn,teardrop"],
        ["--variants", "half"],
        ["--phase-seconds", "0.1"],
        ["--phase-seconds", "121"],
        ["--break-seconds", "61"],
    ],
)
def test_cli_bad_options(capsys, tmp_path, args):
    msg = rig_error(capsys, ["rig", "freertos-tcp", *args, "--out", str(tmp_path / "o")])
    assert "freertos-tcp" in msg or "--" in msg


# ------------------------------------------------------------------ summary of a run


def _fake_run(tmp_path: Path, protect: bool) -> tuple[dict, freertos.Device, Path]:
    """A synthetic target output: 10 ms cycles over three 1 s phases, two late
    cycles in the attack; hp datagrams every 5 ms, the attack loses half."""
    dev = freertos.load_device(SCEN, 6, phase_s=1.0)
    run_dir = tmp_path / "runs" / f"{'protected' if protect else 'unprotected'}-syn"
    run_dir.mkdir(parents=True, exist_ok=True)
    t0 = 10_000_000_000
    P = 10_000_000
    bounds = [(t0, t0 + 10**9), (t0 + 10**9, t0 + 2 * 10**9), (t0 + 2 * 10**9, t0 + 3 * 10**9)]
    cyc = []
    for k in range(300):
        rel = t0 + k * P
        start, end, dl = rel + 50_000, rel + 2_050_000, 0
        if k in (150, 151):  # late by 5 ms: lateness 50 %
            end, dl = rel + P + 5_000_000, rel + P
        cyc.append((rel, start, end, dl))
    np.array(cyc, dtype="<u8").tofile(run_dir / "cycles.bin")
    lat = []
    sent = [0, 0, 0]
    for k in range(600):
        s = t0 + k * 5_000_000
        ph = (s - t0) // 10**9
        sent[ph] += 1
        if ph == 1 and k % 2:
            continue
        lat.append((s, s + 100_000))
    np.array(lat, dtype="<u8").tofile(run_dir / "latency_hp.bin")
    n_drop = 6
    snaps = [
        {
            "t_ns": t0 + i * 100_000_000,
            "nic_frames": i * 1000,
            "ring_full": 0,
            "shield_dropped": i * 10,
            "stack_exhausted": 0 if protect else i,
            "ip_queue_full": 0,
            "no_endpoint": 0,
            "to_ip_task": i * 100,
            "tx_frames": i,
            "cycles": i * 10,
            "misses": 0,
            "shield_drops": [0, 0, 0, i * 10 if protect else 0, 0, 0][:n_drop],
            "delivered": [i * 10, 0, 0],
        }
        for i in range(31)
    ]
    device = {
        "protect": int(protect),
        "cycles": 300,
        "misses": 2,
        "netif": {
            "nic_frames": 30000,
            "ring_full": 5,
            "shield_dropped": 300,
            "stack_exhausted": 0 if protect else 30,
            "ip_queue_full": 0,
            "no_endpoint": 0,
            "to_ip_task": 3000,
            "tx_frames": 30,
            "tx_errors": 0,
            "rx_irqs": 3000,
            "shield_ns": 30000 * 500,
            "shield_frames": 30000,
            "to_stack_ns": 3000 * 2000,
            "to_stack_frames": 3000,
        },
        "shield_drops": [0, 0, 0, 300 if protect else 0, 0, 0],
        "threads_cpu_ns": {"IP-Task#101": 30_000_000, "critical#102": 600_000_000, "IP-Task#9": 0},
        "flows": {
            "hp": {
                "proto": "udp",
                "port": 5000,
                "delivered": len(lat),
                "latency_recorded": len(lat),
            },
            "bulk": {"proto": "udp", "port": 6000, "delivered": 0, "latency_recorded": 0},
            "syn_flood": {"proto": "tcp", "port": 502, "delivered": 7, "latency_recorded": 0},
        },
        "snapshots": snaps,
    }
    raw = {
        "variant": "protected" if protect else "unprotected",
        "attack": "syn",
        "bounds_ns": bounds,
        "sent": {"sent": {"hp": sent}, "total": {"hp": sum(sent)}},
        "traffic": {"flood_in": 1000, "flood_in_pps": 1000.0},
        "device": device,
    }
    return raw, dev, run_dir


def test_summary_speaks_the_simulators_vocabulary(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(raw, dev, rd)
    from rtshield.engine import DROP_REASONS

    assert s["totals"]["offered"] == 30000 and s["totals"]["processed"] == 3000
    dropped = s["totals"]["dropped"]
    assert dropped["flow_server"] == 300
    assert dropped[freertos.STACK_EXHAUSTED] == 0  # its own reason, never libshield's
    assert freertos.STACK_EXHAUSTED not in DROP_REASONS
    libshield_reasons = set(dropped) - {freertos.STACK_EXHAUSTED, "ip_event_queue_full"}
    assert libshield_reasons <= set(DROP_REASONS)
    crit = s["critical"]
    assert crit["cycles"] == 300 and crit["misses"] == 2
    assert crit["lateness_max_pct"] == pytest.approx(50.0)
    assert crit["lateness_bin_max_pct"] == pytest.approx(100.0)  # both in the same second
    ph = s["phases"]
    assert [ph[p]["critical"]["misses"] for p in freertos.PHASES] == [0, 2, 0]
    assert [ph[p]["flows"]["hp"]["offered"] for p in freertos.PHASES] == [200, 200, 200]
    assert [ph[p]["flows"]["hp"]["delivered"] for p in freertos.PHASES] == [200, 100, 200]
    assert ph["attack"]["dropped"]["flow_server"] == 100  # snapshot 20 - snapshot 10
    assert ph["idle_before"]["critical"]["wakeup_us"]["p50"] == pytest.approx(50.0)
    assert s["flows"]["hp"]["latency_us"]["p50"] == pytest.approx(100.0)
    assert s["flows"]["hp"]["dropped"] == 100
    assert s["cpu_per_frame_ns"] == {"shield": 500.0, "to_stack": 2000.0, "ip_task": 10000.0}
    assert s["threads_cpu_s"] == {"IP-Task": 0.03, "critical": 0.6}


def test_claims_need_both_sides(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    prot = freertos.summarize(raw, dev, rd)
    sim_ok = {"critical": {"misses": 0}, "flows": {"hp": {"offered": 100, "delivered": 100}}}
    sim_bad = {"critical": {"misses": 3}, "flows": {"hp": {"offered": 100, "delivered": 40}}}
    c = freertos.claims({"protected": sim_ok}, [prot], "hp")
    by = {x["claim"].split(": ", 1)[1]: x for x in c}
    # the fake attack phase lost half the hp flow and missed two deadlines
    assert by["the high-priority flow keeps being delivered"]["simulation"] is True
    assert by["the high-priority flow keeps being delivered"]["real_stack"] is False
    assert not any(x["confirmed"] for x in c)
    raw_u, _, rd_u = _fake_run(tmp_path, protect=False)
    unp = freertos.summarize(raw_u, dev, rd_u)
    c = freertos.claims({"unprotected": sim_bad}, [unp], "hp")
    assert len(c) == 1 and c[0]["confirmed"] is True


def test_report_and_comparison_written(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(raw, dev, rd)
    sim = {
        "protected": {"critical": {"cycles": 1, "misses": 0, "lateness_max_pct": 0.0}, "flows": {}}
    }
    comp = freertos.comparison([s], sim, dev)
    assert comp["hp_flow"] == "hp" and comp["runs"][0]["misses"]["attack"] == 2
    p = freertos.write_report(tmp_path, comp, [s])
    text = p.read_text()
    assert "protected-syn" in text and "not confirmed" in text
    assert '<img src="fig_syn.png"' in text
    assert (tmp_path / "fig_syn.png").read_bytes()[:4] == b"\x89PNG"
    json.dumps(comp)  # plain JSON types


def test_the_shipped_scenario_makes_the_claims_in_simulation(tmp_path):
    """The simulated side of the comparison: protected keeps the hp flow and the
    critical task, unprotected does not (the claims the rig then checks)."""
    dev = freertos.load_device(SCEN, 6, phase_s=1.0)
    sim = freertos.simulate_variants(dev, tmp_path)
    hp = "hp"
    p, u = sim["protected"], sim["unprotected"]
    assert p["critical"]["misses"] == 0
    assert p["flows"][hp]["delivered"] == p["flows"][hp]["offered"] > 0
    assert u["critical"]["misses"] > 0 or u["flows"][hp]["delivered"] < u["flows"][hp]["offered"]
    assert (tmp_path / "sim" / "protected" / "summary.json").is_file()


def test_flood_at_the_rigs_rate(tmp_path):
    dev = freertos.load_device(SCEN, 6, phase_s=1.0).at_flood_rate(25_000)
    for v in dev.variants.values():
        flood = next(f for f in v.flows if f.name == "syn_flood")
        assert flood.rates_pps == (0.0, 25_000.0, 0.0)
        hp = next(f for f in v.flows if f.name == "hp")
        assert hp.rate_pps == 200.0  # the other flows as they were
    raw, dev0, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(raw, dev0, rd)
    assert freertos.measured_syn_rate([s]) == 1000.0
    scen_ok = {
        "protected": {"critical": {"misses": 0}, "flows": {"hp": {"offered": 1, "delivered": 1}}}
    }
    syn_bad = {
        "protected": {"critical": {"misses": 1}, "flows": {"hp": {"offered": 1, "delivered": 1}}}
    }
    c = freertos.claims(scen_ok, [s], "hp", syn_bad)  # a SYN run is held against the rig's rate
    miss = next(x for x in c if "misses no deadline" in x["claim"])
    assert miss["simulation"] is False and miss["simulated_flood"] == "the rig's measured SYN rate"
    s_arp = {**s, "attack": "arp"}
    c = freertos.claims(scen_ok, [s_arp], "hp", syn_bad)  # an ARP flood: the scenario's flood
    miss = next(x for x in c if "misses no deadline" in x["claim"])
    assert miss["simulation"] is True and miss["simulated_flood"] == "the scenario's flood"
    # the run's own simulation (its flood at the rate it measured) before the rig's mean
    own_ok = {"protected-syn": scen_ok["protected"]}
    c = freertos.claims(scen_ok, [s], "hp", syn_bad, own_ok)
    miss = next(x for x in c if "misses no deadline" in x["claim"])
    assert miss["simulation"] is True
    assert miss["simulated_flood"] == "this run's measured SYN rate"
    c = freertos.claims(scen_ok, [s], "hp", scen_ok, {"protected-syn": syn_bad["protected"]})
    assert next(x for x in c if "misses no deadline" in x["claim"])["simulation"] is False
    c = freertos.claims(scen_ok, [s_arp], "hp", syn_bad, own_ok)  # not a SYN run: not its own
    assert next(x for x in c if "misses no deadline" in x["claim"])["simulated_flood"] == (
        "the scenario's flood"
    )


def test_rig_report_rebuilds_a_freertos_report(tmp_path, capsys):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(raw, dev, rd)
    sim = {
        "protected": {"critical": {"cycles": 1, "misses": 0, "lateness_max_pct": 0.0}, "flows": {}}
    }
    (tmp_path / "comparison.json").write_text(json.dumps(freertos.comparison([s], sim, dev)))
    assert cli.main(["rig", "report", str(tmp_path)]) == 0
    assert "protected-syn" in (tmp_path / "report.html").read_text()
    (tmp_path / "comparison.json").write_text('{"runs": []}')
    msg = rig_error(capsys, ["rig", "report", str(tmp_path)])
    assert "comparison.json" in msg


@pytest.mark.parametrize("kind", ["missing", "dir", "bad_toml", "huge"])
def test_hostile_scenario_files_are_one_line(tmp_path, capsys, monkeypatch, kind):
    p = tmp_path / "dev.toml"
    if kind == "dir":
        p.mkdir()
    elif kind == "bad_toml":
        p.write_text("[scenario\nname = 1")
    elif kind == "huge":
        p.write_text("# " + "x" * (2 << 20))
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    argv = ["rig", "freertos-tcp", "--scenario", str(p), "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rtshield: error: "), err
    assert "dev.toml" in err[0] and "needs root" not in err[0]  # the file is checked first
    assert not (tmp_path / "o").exists()


def test_global_limit_and_recycling_reach_the_target(tmp_path):
    text = SCEN.read_text().replace(
        "[rx]\nshort_circuit = true",
        "[rx]\nshort_circuit = false\nrecycle_below = 8\nglobal_capacity = 40\n"
        'global_period = "10ms"\npoll_priority = 3',
    )
    dev = freertos.load_device(_write(tmp_path, text), 6)
    c = _cfg(
        freertos.target_config(
            dev.variants["protected"], True, ifname="i", mac="m", out=tmp_path, seconds=9
        )
    )
    assert c["short_circuit"] == [["0"]] and c["recycle_below"] == [["8"]]
    assert c["global_capacity"] == [["40"]] and c["global_period_us"] == [["10000"]]
    assert c["poll_prio"] == [["3"]]
    u = _cfg(
        freertos.target_config(
            dev.variants["unprotected"], False, ifname="i", mac="m", out=tmp_path, seconds=9
        )
    )
    assert "global_capacity" not in u and "poll_prio" not in u
