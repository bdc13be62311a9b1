"""``twin.json``: the simulation against the real FreeRTOS target, quantity by quantity,
built from a synthetic but complete rig output folder (no root: the real runs are
:func:`test_rig_freertos._fake_run`'s target output, the simulations the engine's)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rig_checks import rig_error
from test_rig_freertos import SCEN, _fake_run

from rtshield import cli
from rtshield.calibrate import read_counters
from rtshield.rig import freertos
from rtshield.rig.freertos.twin import TOLERANCES, Tolerance

ROOT = Path(__file__).resolve().parents[1]


def _folder(tmp_path: Path) -> Path:
    """A finished `rig freertos-tcp` folder: both variants under a SYN flood (the fake
    target's attack loses half the hp flow and misses two deadlines; unprotected, the
    stack runs out of buffers), the scenario simulated as the rig does."""
    out = tmp_path / "out"
    dev = freertos.load_device(SCEN, 6, phase_s=1.0)
    runs = []
    for protect in (False, True):
        raw, _, rd = _fake_run(out, protect)
        s = freertos.summarize(raw, dev, rd)
        (rd / "summary.json").write_text(json.dumps(s))
        (rd / "device.json").write_text(json.dumps(raw["device"]))
        runs.append(s)
    sim = freertos.simulate_variants(dev, out)
    pps = freertos.measured_syn_rate(runs)
    sim_syn = freertos.simulate_variants(dev.at_flood_rate(pps), out, "-rig-rate")
    own = freertos.simulate_own_rates(out)
    comp = freertos.comparison(runs, sim, dev, sim_syn, pps, own)
    (out / "comparison.json").write_text(json.dumps(comp))
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return _folder(tmp_path_factory.mktemp("twin"))


def _by(twin: dict, run: str, model: str = "preset") -> dict[str, dict]:
    return {q["name"]: q for q in twin["quantities"] if q["run"] == run and q["model"] == model}


def test_twin_json_has_every_quantity_with_its_tolerance(folder):
    twin = json.loads(freertos.write_twin(folder).read_text())
    assert {r["run"] for r in twin["runs"]} == {"protected-syn", "unprotected-syn"}
    # a SYN run is held against the simulation at the SYN rate it measured (1000 pkt/s)
    # on the scenario's preset and, the fake run being the POSIX board's, on the board's
    assert {r["simulation"] for r in twin["runs"]} == {
        "sim/protected-syn-own-rate/summary.json",
        "sim/unprotected-syn-own-rate/summary.json",
        "sim/protected-syn-own-rate-board/summary.json",
        "sim/unprotected-syn-own-rate-board/summary.json",
    }
    assert twin["board_preset"] == "posix-freertos-tcp"
    assert {r["model"] for r in twin["runs"]} == {"preset", "board"}
    scen = (folder / "sim" / "protected-syn-own-rate" / "scenario.toml").read_text()
    assert 'rates = [\n    "0pps",\n    "1000pps",\n    "0pps",\n]' in scen
    board = (folder / "sim" / "protected-syn-own-rate-board" / "scenario.toml").read_text()
    assert 'platform = "posix-freertos-tcp"' in board and "1000pps" in board
    assert 'platform = "posix-freertos-tcp"' not in scen
    texts = {t.text for t in TOLERANCES.values()}
    for q in twin["quantities"]:
        assert {"name", "sim", "real", "tolerance", "agrees"} <= set(q), q
        assert q["tolerance"] in texts and isinstance(q["agrees"], bool)
    for run in ("protected-syn", "unprotected-syn"):
        names = set(_by(twin, run))
        assert {
            "frames at the NIC",
            "hp: delivered fraction",
            "critical task: deadlines missed",
            "critical task: cycle time p50",
            "critical task: cycle time p99",
            "network work: CPU per frame at the NIC",
        } <= names, names
    assert twin["disagree"] == [
        f"{q['run']} ({q['model']}): {q['name']}" for q in twin["quantities"] if not q["agrees"]
    ]


def test_claims_are_held_against_each_runs_own_rate(folder):
    """comparison.json's claims of a SYN run come from the simulation twin.json holds the
    run against: the scenario with the flood at the rate that run measured."""
    comp = json.loads((folder / "comparison.json").read_text())
    syn = [c for c in comp["claims"] if c["attack"] == "syn"]
    assert syn and all(c["simulated_flood"] == "this run's measured SYN rate" for c in syn)
    for c in syn:
        run = f"{c['variant']}-syn"
        sim = json.loads((folder / "sim" / f"{run}-own-rate" / "summary.json").read_text())
        assert c["sim"]["misses"] == sim["critical"]["misses"]
        hp = sim["flows"]["hp"]
        if c["variant"] == "unprotected":  # the protected claim reads the share differently
            assert c["sim"]["hp_ratio"] == pytest.approx(hp["delivered"] / hp["offered"])
        own = comp["simulation_at_own_rate"][run]
        assert own["syn_pps"] == json.loads(
            (folder / "runs" / run / "summary.json").read_text()
        )["traffic"]["flood_in_pps"]
        assert own["hp"]["offered"] == hp["offered"]


def test_quantities_are_read_from_both_sides(folder):
    twin = freertos.build_twin(folder)
    sim = json.loads((folder / "sim" / "protected-syn-own-rate" / "summary.json").read_text())
    q = _by(twin, "protected-syn")
    # the real hp flow over the three phases: 200 + 100 + 200 of 600
    hp = q["hp: delivered fraction"]
    assert hp["real"] == pytest.approx(500 / 600, abs=1e-4)
    f = sim["flows"]["hp"]
    assert hp["sim"] == pytest.approx(f["delivered"] / f["offered"], abs=1e-4)
    assert hp["agrees"] is (abs(hp["sim"] - hp["real"]) <= 0.05)
    # the fake target missed two deadlines in the attack; the verdict is compared
    m = q["critical task: deadlines missed"]
    assert m["real"] == 2 and m["sim"] == sim["critical"]["misses"]
    assert m["agrees"] is (sim["critical"]["misses"] > 0)
    # frames at the NIC: 10 000 a second in each of the three phases
    assert q["frames at the NIC"]["real"] == 30000
    assert q["frames at the NIC"]["sim"] == sim["totals"]["offered"]
    # the libshield drops of the fake run: 10 per 100 ms by the flow server
    assert q["drops: flow_server"]["real"] == 300
    # network CPU per frame: the IP task's 30 ms and libshield's 15 ms in the RX interrupt
    # (shield_ns: the tick hook runs in whichever thread the tick hit) over 30 000 frames
    assert q["network work: CPU per frame at the NIC"]["real"] == pytest.approx(1.5)


def test_a_drop_the_simulator_cannot_count_disagrees_with_the_reason(folder):
    u = _by(freertos.build_twin(folder), "unprotected-syn")
    d = u[f"drops: {freertos.STACK_EXHAUSTED}"]
    assert d["sim"] is None and d["real"] == 30 and d["agrees"] is False
    assert "stack's own network buffers" in d["why"]
    # what was lost, whatever the reason, is compared all the same
    sim = json.loads((folder / "sim" / "unprotected-syn-own-rate" / "summary.json").read_text())
    total = u["drops: all reasons"]
    assert total["real"] == 30 and total["sim"] == sum(sim["totals"]["dropped"].values())


def test_the_boards_model_loses_in_the_stacks_buffers(folder):
    """On the board's model the driver queue is the stack's 64 network buffers: what the
    model drops there is compared with what the real stack lost for want of a buffer."""
    twin = freertos.build_twin(folder)
    u = _by(twin, "unprotected-syn", "board")
    sim = json.loads(
        (folder / "sim" / "unprotected-syn-own-rate-board" / "summary.json").read_text()
    )
    d = u[f"drops: {freertos.STACK_EXHAUSTED}"]
    assert d["real"] == 30 and d["sim"] == sim["totals"]["dropped"]["queue_full"]
    assert "drops: queue_full" not in u
    assert d["agrees"] is (abs(d["sim"] - 30) <= 10)
    # the scenario's preset has no such buffers: the real-only reason, with its why
    p = _by(twin, "unprotected-syn")[f"drops: {freertos.STACK_EXHAUSTED}"]
    assert p["sim"] is None and "network buffers" in p["why"]
    # the board's tick: ten ticks of 1.11 ms per cycle, on the real target's measured tick
    assert u["critical task: cycle time p50"]["sim"] == pytest.approx(11_100, rel=0.01)


def test_an_attack_the_simulator_does_not_model_says_so(folder, tmp_path):
    out = tmp_path / "arp"
    (out / "runs").mkdir(parents=True)
    (out / "sim").mkdir()
    s = json.loads((folder / "runs" / "protected-syn" / "summary.json").read_text())
    s["attack"] = "arp"
    (out / "runs" / "protected-arp").mkdir()
    (out / "runs" / "protected-arp" / "summary.json").write_text(json.dumps(s))
    for v in ("protected", "protected-rig-rate"):
        (out / "sim" / v).mkdir()
        (out / "sim" / v / "summary.json").write_text(
            (folder / "sim" / v / "summary.json").read_text()
        )
    twin = freertos.build_twin(out)
    assert twin["runs"][0]["simulation"] == "sim/protected/summary.json"  # the scenario's flood
    bad = [q for q in twin["quantities"] if not q["agrees"]]
    assert bad and all(q["why"] for q in bad)
    assert any("ARP flood" in q["why"] for q in bad)


def test_an_arp_flood_is_held_against_a_syn_flood_at_its_rate(folder, tmp_path):
    """An attack the simulator does not model is simulated as a SYN flood at the rate
    that run measured (its frames at the NIC then comparable), and says so."""
    out = tmp_path / "arp"
    shutil.copytree(folder / "sim", out / "sim")
    run = out / "runs" / "protected-arp"
    shutil.copytree(folder / "runs" / "protected-syn", run)
    s = json.loads((run / "summary.json").read_text())
    s["attack"] = "arp"
    s["traffic"]["flood_in_pps"] = 1500.0
    (run / "summary.json").write_text(json.dumps(s))
    twin = json.loads(freertos.write_twin(out).read_text())
    r = {x["model"]: x for x in twin["runs"]}
    assert r["preset"]["simulation"] == "sim/protected-arp-own-rate/summary.json"
    assert r["board"]["simulation"] == "sim/protected-arp-own-rate-board/summary.json"
    assert "ARP flood" in r["preset"]["simulated"] and "1,500 pkt/s" in r["preset"]["simulated"]
    scen = (out / "sim" / "protected-arp-own-rate" / "scenario.toml").read_text()
    assert '"1500pps"' in scen
    bad = [q for q in twin["quantities"] if not q["agrees"]]
    assert bad and all("no model of the ARP flood" in q["why"] for q in bad)


@pytest.mark.parametrize(
    ("tol", "sim", "real", "agrees"),
    [
        (Tolerance("points", 0.05, 0, ""), 0.95, 1.0, True),
        (Tolerance("points", 0.05, 0, ""), 0.949, 1.0, False),
        (Tolerance("relative", 0.10, 10, ""), 110, 100, True),
        (Tolerance("relative", 0.10, 10, ""), 111, 100, False),
        (Tolerance("relative", 0.10, 10, ""), 0, 10, True),  # the floor
        (Tolerance("relative", 0.10, 10, ""), 0, 11, False),
        (Tolerance("verdict", 0, 0, ""), 3, 1, True),
        (Tolerance("verdict", 0, 0, ""), 0, 1, False),
        (Tolerance("period", 0.10, 0, ""), 10_000, 11_000, True),  # a 10 ms period
        (Tolerance("period", 0.10, 0, ""), 10_000, 11_001, False),
    ],
)
def test_tolerances(tol, sim, real, agrees):
    assert tol.agrees(sim, real, period_us=10_000) is agrees


def test_docs_state_every_tolerance():
    text = (ROOT / "docs" / "rig.md").read_text()
    for kind, t in TOLERANCES.items():
        assert f"`{kind}`" in text and t.text in text, kind


def test_counters_csv_fits_calibrate(folder):
    """The run's per-second counters on the simulator's timeline, readable as
    `rtshield calibrate`'s counters: the two misses in the attack's second."""
    freertos.write_twin(folder)
    path = folder / "runs" / "protected-syn" / "counters.csv"
    t, cols = read_counters(path, "test")
    assert t == (0.0, 1.0, 2.0)
    assert cols["offered"] == (10000.0, 10000.0, 10000.0)
    assert cols["processed"] == (1000.0, 1000.0, 1000.0)
    assert cols["cycles"] == (100.0, 100.0, 100.0)
    assert cols["misses"] == (0.0, 2.0, 0.0)


def test_report_names_what_disagrees(folder):
    twin = json.loads(freertos.write_twin(folder).read_text())
    comp = json.loads((folder / "comparison.json").read_text())
    text = freertos.write_report(folder, comp, [], twin).read_text()
    assert "Does the simulation predict the real target?" in text
    n = len(twin["disagree"])
    assert n and f"{n} of {len(twin['quantities'])} quantities disagree" in text
    assert text.count("DISAGREES") == n
    assert '<img src="fig_twin.png"' in text
    assert (folder / "fig_twin.png").read_bytes()[:4] == b"\x89PNG"


def test_rig_report_rebuilds_twin_json(folder, tmp_path, capsys):
    (folder / "twin.json").unlink(missing_ok=True)
    assert cli.main(["rig", "report", str(folder)]) == 0
    assert json.loads((folder / "twin.json").read_text())["quantities"]
    aside = tmp_path / "aside"
    aside.mkdir()
    moved = [folder / "sim" / d for d in ("unprotected-rig-rate", "unprotected-syn-own-rate")]
    for d in moved:
        shutil.move(d, aside / d.name)
    try:  # without the SYN rate's simulations the run falls back to the scenario's flood
        twin = freertos.build_twin(folder)
        assert "sim/unprotected/summary.json" in {r["simulation"] for r in twin["runs"]}
        # rig report simulates the run's own rate again from the variant's scenario
        assert cli.main(["rig", "report", str(folder)]) == 0
        assert (folder / "sim" / "unprotected-syn-own-rate" / "summary.json").is_file()
        shutil.rmtree(folder / "sim" / "unprotected-syn-own-rate")
        shutil.move(folder / "sim" / "unprotected", aside / "unprotected")
        msg = rig_error(capsys, ["rig", "report", str(folder)])
        assert "sim/unprotected/summary.json" in msg and "twin.json" in msg
    finally:
        for d in aside.iterdir():
            shutil.move(d, folder / "sim" / d.name)


def test_each_run_gets_a_calibration_file_that_calibrate_runs(folder, tmp_path):
    """`rtshield calibrate` on a run's counters: the scenario the run was held against,
    its counters, the fit's parameters within their bounds (docs/decisions/twin.md)."""
    from rtshield.calibrate import load_calibration

    freertos.write_twin(folder)
    f = folder / "calibrate" / "unprotected-syn.toml"
    cal = load_calibration(f)
    assert cal.objective == "counters"
    assert [q.key for q in cal.params] == [k for k, *_ in freertos.fit.FIT_PARAMETERS]
    assert set(cal.counters) == set(freertos.fit.FIT_COLUMNS)
    assert cal.counters["misses"] == (0.0, 2.0, 0.0)
    fit = tmp_path / "fit"
    assert cli.main(["calibrate", str(f), "--out", str(fit), "--budget", "4", "--jobs", "1"]) == 0
    best = (fit / "best.toml").read_text()
    assert "driver_per_packet" in best and "isr_per_packet" in best
    # the fitted costs held against every run: the run fitted on, the others held out
    assert cli.main(["rig", "report", str(folder), "--fitted", str(fit / "best.toml")]) == 0
    twin = json.loads((folder / "twin.json").read_text())
    assert twin["fit"]["fitted_on"] == "unprotected-syn"
    assert set(twin["fit"]["costs"]) == {"isr_per_packet", "driver_per_packet"}
    held = {(r["run"], r["model"]): r["held_out"] for r in twin["runs"]}
    assert held == {
        ("unprotected-syn", "preset"): None,
        ("unprotected-syn", "board"): None,
        ("unprotected-syn", "fitted"): False,
        ("protected-syn", "preset"): None,
        ("protected-syn", "board"): None,
        ("protected-syn", "fitted"): True,
    }
    # the fit is of the board's model (the calibration's scenario): its costs on the board
    assert "own-rate-board/scenario.toml" in f.read_text()
    fitted = [r["simulation"] for r in twin["runs"] if r["model"] == "fitted"]
    assert fitted and all(x.endswith("-board-fitted/summary.json") for x in fitted)
    scen = (folder / "sim" / "protected-syn-own-rate-board-fitted" / "scenario.toml").read_text()
    assert "[costs]" in scen and twin["fit"]["costs"]["driver_per_packet"] in scen
    assert 'platform = "posix-freertos-tcp"' in scen
    assert "fitted, held out" in (folder / "report.html").read_text()
    # the same fit on another folder (a later rig run): every run there is held out
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    for d in (other / "sim").glob("*-fitted"):
        shutil.rmtree(d)
    assert cli.main(["rig", "report", str(other), "--fitted", str(fit / "best.toml")]) == 0
    twin = json.loads((other / "twin.json").read_text())
    assert twin["fit"]["fitted_on"] is None
    assert {r["held_out"] for r in twin["runs"] if r["model"] == "fitted"} == {True}


def test_fitted_without_costs_is_one_line(folder, tmp_path, capsys):
    bad = tmp_path / "best.toml"
    bad.write_text("[platform]\ntick = '1ms'\n")
    msg = rig_error(capsys, ["rig", "report", str(folder), "--fitted", str(bad)])
    assert "no [costs] table" in msg


def test_an_emulated_nic_counts_what_it_was_handed(folder, tmp_path):
    """The MPS2 board: the frames handed to its emulated NIC (its FIFO's drops among
    them) are the frames at the NIC, as every frame offered reaches the simulated NIC."""
    out = tmp_path / "mps2"
    shutil.copytree(folder / "sim", out / "sim")
    s = json.loads((folder / "runs" / "protected-syn" / "summary.json").read_text())
    s["clock"] = "guest"
    for k, p in enumerate(freertos.PHASES):
        s["phases"][p]["frames_into_nic"] = s["phases"][p]["frames_at_nic"] + 100 * k
    (out / "runs" / "protected-syn").mkdir(parents=True)
    (out / "runs" / "protected-syn" / "summary.json").write_text(json.dumps(s))
    q = _by(freertos.build_twin(out), "protected-syn")
    assert q["frames at the NIC"]["real"] == 30000 + 100 + 200
    assert (
        q["critical task: cycle time p99"]["why"] is None
        or "host" not in q["critical task: cycle time p99"]["why"]
    )


def test_network_cpu_counts_the_device_cpus_network_threads():
    """The network work's CPU per frame: the network, poll and stack tasks (lwIP's stock
    input task `ethif` among them), not the POSIX board's NIC thread (its DMA engine, on a
    host core of its own) nor the application's tasks."""
    from rtshield.rig.freertos.twin import _real_network_cpu_us

    real = {
        "stack": "lwip",
        "netif": {"nic_frames": 1000},
        "threads_cpu_s": {"ethif": 0.002, "tcpip_threa": 0.003, "rts-nic": 0.5,
                          "critical": 2.0, "hp": 0.1},  # fmt: skip
    }
    assert _real_network_cpu_us(real) == pytest.approx(5.0)
    real = {
        "stack": "plustcp",
        "netif": {"nic_frames": 1000},
        "threads_cpu_s": {"rts-net": 0.004, "IP-Task": 0.006, "rts-nic": 0.5, "bulk": 0.3},
    }
    assert _real_network_cpu_us(real) == pytest.approx(10.0)
    # libshield's own time in the RX interrupt counts too (the tick hook's harvest)
    real["netif"]["shield_ns"] = 2_000_000
    assert _real_network_cpu_us(real) == pytest.approx(12.0)


def test_the_boards_reasons_for_what_it_cannot_have():
    """On the board's model a drop in the stack's buffers is compared as one reason, and
    where it, the flows' fractions or the misses disagree, the reason is named: the
    stack's ceiling, the host's stalls, a fit's wall-time cost (docs/decisions/twin.md)."""
    from rtshield.rig.freertos.twin import _quantities

    flows = {"hp": {"offered": 200, "delivered": 200}}
    real = {
        "attack": "syn", "clock": "host", "critical_period_ms": 10.0, "stack": "plustcp",
        "flows": {"hp": {"protocol": "udp"}}, "traffic": {},
        "critical": {"misses": 2, "cycle_time_us": {"p50": 11_000.0, "p99": 24_000.0}},
        "phases": {
            p: {"frames_at_nic": 1000, "flows": {"hp": {"offered": 100, "delivered": 80}},
                "dropped": {freertos.STACK_EXHAUSTED: 300 if p == "attack" else 0}}
            for p in freertos.PHASES
        },
    }  # fmt: skip
    sim = {
        "totals": {"offered": 3000, "dropped": {"queue_full": 0}},
        "flows": flows,
        "critical": {"misses": 0, "cycle_time_us": {"p50": 11_100.0, "p99": 11_200.0}},
    }
    same = freertos.fit.BOARD_DROPS["posix-freertos-tcp"]
    q = {x["name"]: x for x in _quantities(real, sim, "board", same, "")}
    assert "drops: queue_full" not in q
    assert q[f"drops: {freertos.STACK_EXHAUSTED}"]["sim"] == 0
    for name in (f"drops: {freertos.STACK_EXHAUSTED}", "drops: all reasons",
                 "hp: delivered fraction"):  # fmt: skip
        assert not q[name]["agrees"] and "ceiling" in q[name]["why"], q[name]
    assert "stalls" in q["critical task: deadlines missed"]["why"]
    assert "stalls" in q["critical task: cycle time p99"]["why"]
    assert q["critical task: cycle time p50"]["agrees"]
    fitted = {**sim, "critical": {**sim["critical"], "misses": 3}}
    real0 = {**real, "critical": {**real["critical"], "misses": 0}}
    q = {x["name"]: x for x in _quantities(real0, fitted, "fitted", same, "")}
    assert "wall time" in q["critical task: deadlines missed"]["why"]
