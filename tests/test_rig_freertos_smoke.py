"""`rtshield rig freertos-tcp` on this machine, as root, with the real stack and tools.

A protected and an unprotected run under a 2-second hping3 SYN flood, and a
run killed midway. The two runs are one ``--calibrate`` run: a whole run (runs,
simulations, comparison, twin, report), then the board's fit; the smoke test checks
the run's results, the calibrate test the fit. Skips with the reason without root, the tools, the
FreeRTOS trees or a compiler. Nothing is timed: the waits are generous limits
that only stop a hung test.
"""

from __future__ import annotations

import json
import signal

import pytest
from rig_checks import links_left, needs_root_and, needs_trees, procs_of, read_runs, rig, run_tag

from rtshield.calibrate import read_counters
from rtshield.rig import freertos

NEEDED = ["ip", "nft", "taskset", "timeout", "gcc", "ethtool", "hping3", "ping"]

pytestmark = [*needs_root_and(NEEDED), needs_trees(freertos.Target())]

SMOKE = ["--attacks", "syn", "--phase-seconds", "2", "--break-seconds", "0.5"]


@pytest.fixture(scope="module")
def built():
    """Build the target once (cached by rtshield) so the runs below measure runs."""
    return freertos.build_target(freertos.find_tree(None), say=lambda m: None)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory, built):
    """One `rig freertos-tcp --calibrate` smoke run, shared by the smoke and the calibrate
    test: (its folder, the process, its standard output, its standard error)."""
    out = tmp_path_factory.mktemp("ft") / "cal"
    p = rig("freertos-tcp", "--calibrate", *SMOKE, "--out", str(out))
    stdout, stderr = p.communicate(timeout=240)
    return out, p, stdout, stderr


def _fit_refused(stderr: str) -> bool:
    """The one line --calibrate ends with (exit 2) when a fitted number is outside its
    physical bounds, after every result of the runs was written."""
    lines = stderr.strip().splitlines()
    return bool(lines) and lines[-1].startswith("rtshield: error: rig fit: ") and (
        "not physical" in stderr)


def test_smoke_protected_and_unprotected(calibrated):
    """The runs' results. The run is the shared --calibrate run, which writes all of them
    before it fits the board: it exits 0, or 2 only for a refused fit (checked by
    test_calibrate_writes_the_boards_preset)."""
    out, p, stdout, stderr = calibrated
    assert p.returncode == 0 or (p.returncode == 2 and _fit_refused(stderr)), stderr
    assert "[1/2] unprotected-syn: attack" in stdout  # progress
    runs = read_runs(out, "syn")
    for v, s in runs.items():
        # frames reached the target, and the flood among them
        assert s["totals"]["offered"] > 1000, v
        assert s["traffic"]["flood_in"] > 1000, v
        assert s["phases"]["attack"]["frames_at_nic"] > 1000, v
        assert s["critical"]["cycles"] > 0, v
    prot = runs["protected"]["phases"]["attack"]
    # libshield dropped flood frames, with their reasons counted
    shield = {
        k: v for k, v in prot["dropped"].items() if k not in ("ring_full", freertos.STACK_EXHAUSTED)
    }
    assert sum(shield.values()) > 1000, prot["dropped"]
    assert runs["unprotected"]["totals"]["dropped"]["flow_server"] == 0
    # while delivering the high-priority flow
    hp = prot["flows"]["hp"]
    assert hp["offered"] and hp["delivered"] >= 0.9 * hp["offered"], hp
    comp = json.loads((out / "comparison.json").read_text())
    assert comp["claims"] and {r["run"] for r in comp["runs"]} == {
        "unprotected-syn",
        "protected-syn",
    }
    assert (out / "report.html").read_text().count("<table>") >= 2
    assert (out / "fig_syn.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "sim" / "protected" / "summary.json").is_file()
    # the simulation at the SYN rate the rig measured; each SYN run's claims are held
    # against its own rate's
    assert comp["simulation_at_rig_rate"]["syn_pps"] > 0
    assert (out / "sim" / "protected-rig-rate" / "summary.json").is_file()
    assert {c["simulated_flood"] for c in comp["claims"]} == {"this run's measured SYN rate"}
    assert set(comp["simulation_at_own_rate"]) == {"unprotected-syn", "protected-syn"}
    assert (out / "sim" / "protected-syn-own-rate" / "summary.json").is_file()
    # the simulation against the real target, quantity by quantity: the schema, not the
    # agreement (real timings vary under load; one run's agreement: docs/decisions/twin.md)
    twin = json.loads((out / "twin.json").read_text())
    assert {r["run"] for r in twin["runs"]} == {"unprotected-syn", "protected-syn"}
    # on the scenario's preset and on the POSIX board's own model
    assert {r["model"] for r in twin["runs"]} == {"preset", "board"}
    texts = {t.text for t in freertos.TOLERANCES.values()}
    for q in twin["quantities"]:
        assert {"name", "sim", "real", "tolerance", "agrees"} <= set(q), q
        assert q["tolerance"] in texts and isinstance(q["agrees"], bool), q
    names = {q["name"] for q in twin["quantities"]}
    assert {"hp: delivered fraction", "critical task: deadlines missed",
            "network work: CPU per frame at the NIC"} <= names, names  # fmt: skip
    assert "Does the simulation predict the real target?" in (out / "report.html").read_text()
    for v in runs:
        t, cols = read_counters(out / "runs" / f"{v}-syn" / "counters.csv", "smoke")
        assert len(t) == 6 and sum(cols["offered"]) > 1000, (v, cols)
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []


def test_killed_run_leaves_nothing(tmp_path, built):
    """SIGTERM in the attack: the run cleans up after itself. (SIGKILL followed by
    `rig clean` is the shared harness's, tested by test_rig_smoke.py and
    test_rig_clean_owners.py, so it is not run a second time here.)"""
    args = ["--attacks", "syn", "--phase-seconds", "1", "--break-seconds", "0"]
    p = rig("freertos-tcp", *args, "--variants", "protected", "--out", str(tmp_path / "k"))
    assert p.stdout is not None
    for line in p.stdout:
        if "attack:" in line:
            break
    p.send_signal(signal.SIGTERM)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode != 0
    assert "Traceback" not in stderr
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []


def test_calibrate_writes_the_boards_preset(calibrated):
    """`--calibrate`: the runs, then DIR/board.toml, a preset of the board with every
    fitted number's provenance; or, when a fit is outside its physical bounds (two short
    runs on a loaded host can be), one line and exit 2 with the runs kept."""
    from rtshield.rig.freertos.fit import BOARD_FITTED
    from rtshield.scenario import parse_preset

    out, p, stdout, stderr = calibrated
    assert set(read_runs(out, "syn")) == {"unprotected", "protected"}
    if p.returncode == 2:
        assert _fit_refused(stderr), stderr
        assert not (out / "board.toml").exists()
        return
    assert p.returncode == 0, stderr
    text = (out / "board.toml").read_text()
    plat, _, _ = parse_preset(text, "board.toml")
    assert plat.name == "posix-freertos-tcp"
    for key in BOARD_FITTED:
        assert "# measured: " in next(x for x in text.splitlines() if x.startswith(key)), key
    assert "--calibrate" in text and f"{out}/runs/ (protected-syn, unprotected-syn)" in text
    assert "board.toml" in stdout
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []
