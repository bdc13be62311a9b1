"""`rtshield rig serve` and `rtshield rig device` on this machine, as root, with the
real tools: a short profile (tests/data/rig/device_smoke.toml: two storms of two
1-second steps, every monitor kind) against the served Linux device, the served lwIP
device (POSIX board) and the served FreeRTOS-Plus-TCP device on the MPS2 board (QEMU),
which send no heartbeat (the profile's optional monitor, skipped with the reason), and
the ways a run ends early. Skips with the reason without root or the tools. Nothing is timed: the
waits are generous limits that only stop a hung test; everything started is stopped and
checked gone (namespaces, the veth, every process carrying the run's tag)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rig_checks import (
    first_line,
    gone,
    needs_root_and,
    needs_trees,
    procs_of,
    rig,
    run_tag,
    serving,
)

from rtshield.rig import freertos, shaper

NEEDED = ["ip", "nft", "timeout", "cc", "trafgen", "chrt", "ping"]
pytestmark = needs_root_and(NEEDED)

PROFILE = Path(__file__).resolve().parent / "data" / "rig" / "device_smoke.toml"


def _queueing(iface: str) -> list[dict]:
    """``iface``'s qdiscs (``tc -j qdisc show``)."""
    out = subprocess.run(["tc", "-j", "qdisc", "show", "dev", iface], capture_output=True,
                         text=True, check=True, timeout=30)  # fmt: skip
    return json.loads(out.stdout)


def _own_queueing(iface: str) -> bool:
    """``iface`` runs on the kernel's own queueing again and no loan of it is recorded (the
    storms' shaper, rtshield.rig.shaper, is gone)."""
    kernels = all(q["handle"] == "0:" for q in _queueing(iface))
    return kernels and not [x for x in shaper.loans_left() if x.name.endswith(f"-{iface}")]


def _wait_shaped(p: subprocess.Popen, iface: str) -> None:
    """Wait until the storms' shaper holds ``iface`` (a run of a step at a rate)."""
    deadline = time.monotonic() + 60
    while not any(q["kind"] == "htb" for q in _queueing(iface)):
        assert p.poll() is None and time.monotonic() < deadline, "no shaper came"
        time.sleep(0.05)


@pytest.fixture
def served():
    """`rig serve linux` in the background; yields its interface."""
    with serving("linux", "--protect", "off") as iface:
        yield iface


def _device_run(tmp_path: Path, iface: str, storms: str = "bcast,syn") -> tuple[dict, Path]:
    """`rig device` with the smoke profile (``storms`` of it) against the served device on
    ``iface``; its summary, checked against what every run must hold, and its folder."""
    out = tmp_path / "dev"
    p = rig("device", "--target", "198.18.0.1", "--iface", iface, "--profile", str(PROFILE),
            "--storms", storms, "--out", str(out))
    stdout, stderr = p.communicate(timeout=180)
    assert p.returncode in (0, 1), stderr
    s = json.loads((out / "summary.json").read_text())
    assert p.returncode == (0 if s["verdict"] == "pass" else 1)
    assert s["baseline"]["monitors"].keys() == s["criteria"].keys()
    assert all(w["verdict"] == "pass" for w in s["baseline"]["monitors"].values())
    assert [st["name"] for st in s["storms"]] == storms.split(",")
    for st in s["storms"]:
        assert st["tool"] == "trafgen" and st["steps"]
        for step in st["steps"]:
            # trafgen paces itself: what the interface sent is what was asked
            assert 0.8 * step["rate_asked"] <= step["rate_achieved"] <= 1.2 * step["rate_asked"]
            assert step["monitors"].keys() == s["criteria"].keys()
            # the step rule: up to `repeat` runs, a monitor fails the step when it failed
            # `fail_runs` of them (the profile's default: 2 of 3)
            assert s["rule"] == {"repeat": 3, "fail_runs": 2}
            # two runs decide unless they split; fewer when the device was not back
            back = all(v is not None for v in step["runs"][-1]["recovery_s"].values())
            assert 2 <= len(step["runs"]) <= 3 if back else len(step["runs"]) <= 2
            for n, w in step["monitors"].items():
                assert w["samples"] > 0 and w["verdict"] in ("pass", "fail")
                fails = sum(r["monitors"][n]["verdict"] == "fail" for r in step["runs"])
                assert (w["runs"], w["runs_failed"]) == (len(step["runs"]), fails)
                assert w["verdict"] == ("fail" if fails >= 2 else "pass")
                assert w["samples"] == sum(r["monitors"][n]["samples"] for r in step["runs"])
            failed = any(w["verdict"] == "fail" for w in step["monitors"].values())
            assert step["verdict"] == ("fail" if failed else "pass")
        first = next((x for x in st["steps"] if x["verdict"] == "fail"), None)
        assert st["breaking_rate"] == (first["rate_asked"] if first else None)
        assert st["recovery_s"] is None or st["recovery_s"] >= 0
    assert (out / "report.html").read_text().count("<h2>") == 2 + len(s["storms"])
    assert (out / "fig_latency.png").stat().st_size > 1000
    assert not procs_of(run_tag(p.pid))
    assert _own_queueing(iface)  # the storms' shaper is gone
    return s, out


def test_device_against_the_served_linux_device(tmp_path, served):
    s, _ = _device_run(tmp_path, served)
    assert s["criteria"].keys() == {"modbus", "ping", "connect", "echo", "heartbeat"}
    assert s["skipped"] == {}
    # the heartbeat is the control task's: one per 10 ms
    beat = s["baseline"]["monitors"]["heartbeat"]
    assert 9 <= beat["interval_ms"]["p50"] <= 11


MPS2_TOOLS = ["qemu-system-arm", "arm-none-eabi-gcc", "patch"]


@pytest.mark.parametrize(
    "stack, board",
    [
        pytest.param("lwip", "posix", marks=[needs_trees(freertos.Target("lwip", "posix")),
                                             *needs_root_and(["gcc", "ethtool"])]),
        pytest.param("plustcp", "mps2-an385", marks=[
            needs_trees(freertos.Target("plustcp", "mps2-an385")),
            *needs_root_and(["ethtool", *MPS2_TOOLS])]),
    ],
)
def test_device_against_a_served_freertos_device(tmp_path, stack, board):
    """The rig's FreeRTOS device application served (protected): every monitor of the
    profile but the heartbeat passes the baseline -- the UDP echo on port 7 included --
    and the heartbeat, which the device does not send, is skipped with the reason. One
    storm (the SYN storm at the device's listener), to keep the smoke short."""
    target = freertos.Target(stack, board)
    freertos.build_images(target, freertos.find_tree(None, target), say=lambda m: None)
    with serving(target.verb, "--board", board, "--protect", "on", offset=2) as iface:
        s, out = _device_run(tmp_path, iface, storms="syn")
    assert s["criteria"].keys() == {"modbus", "ping", "connect", "echo"}
    assert list(s["skipped"]) == ["heartbeat"]
    assert "no sample in the baseline" in s["skipped"]["heartbeat"]
    assert "optional" in s["skipped"]["heartbeat"]
    echo = s["baseline"]["monitors"]["echo"]
    assert echo["samples"] > 0 and echo["errors"] == 0  # answered, not ICMP unreachable
    assert "Skipped, optional monitors the device does not offer: heartbeat: no sample" in (
        out / "report.html").read_text()


def _storming(p: subprocess.Popen, timeout_s: float = 60) -> None:
    """Read ``p``'s output until a storm step started."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = first_line(p, 5)
        if "step 1/" in line:
            time.sleep(0.5)
            return
    pytest.fail("no storm started")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_every_flood_at_once(tmp_path, served, sig, code):
    p = rig("device", "--target", "198.18.0.1", "--iface", served, "--profile", str(PROFILE),
            "--out", str(tmp_path / "dev"))
    tag = run_tag(p.pid)
    _storming(p)
    _wait_shaped(p, served)  # a run of a step, held by the shaper
    assert any("trafgen" in x for x in procs_of(tag))  # a storm runs
    p.send_signal(sig)
    p.communicate(timeout=30)
    assert p.returncode == code
    assert not procs_of(tag)
    assert _own_queueing(served)


def test_after_sigkill_rig_clean_stops_what_was_left(tmp_path):
    """``rig clean`` kills what the SIGKILLed ``rig device`` left (its owner has ended)
    and spares the served device, whose owner (``rig serve``) still runs: it says so in
    one line, and the device serves on until its Ctrl-C, which leaves nothing."""
    iface = f"rtsdut{os.getpid() % 1000 + 1}"
    srv = rig("serve", "linux", "--iface", iface)
    try:
        assert first_line(srv, 120).startswith("target 198.18.0.1")
        p = rig("device", "--target", "198.18.0.1", "--iface", iface, "--profile",
                str(PROFILE), "--out", str(tmp_path / "dev"))
        tag = run_tag(p.pid)
        _storming(p)
        _wait_shaped(p, iface)
        p.kill()
        p.communicate(timeout=30)
        assert procs_of(tag)  # the monitors and the storm outlive a SIGKILL ...
        assert not _own_queueing(iface)  # ... and so does the storms' shaper ...
        c = subprocess.run([sys.executable, "-m", "rtshield", "rig", "clean"],
                           capture_output=True, text=True, timeout=60)
        assert c.returncode == 0 and "killed" in c.stdout
        assert not procs_of(tag)  # ... until rig clean
        assert f"restored the queueing of {iface}" in c.stdout and _own_queueing(iface)
        spared = [x for x in c.stdout.splitlines() if f"rtsrig-{run_tag(srv.pid)}-dev" in x]
        assert len(spared) == 1 and f"pid {srv.pid}" in spared[0], c.stdout
        assert spared[0].startswith("rig clean: spared")
        assert procs_of(run_tag(srv.pid)) and srv.poll() is None  # still serving
    finally:
        if srv.poll() is None:
            srv.send_signal(signal.SIGINT)
        _, err = srv.communicate(timeout=60)
    assert srv.returncode == 0, err
    deadline = time.monotonic() + 10
    while gone(run_tag(srv.pid), iface) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not gone(run_tag(srv.pid), iface)


RESUME = Path(__file__).resolve().parent / "data" / "rig" / "device_resume.toml"


def test_an_interrupted_test_resumes_where_it_stopped(tmp_path, served):
    """Ctrl-C during the second run: the first stays recorded in the staging folder
    beside --out (which is not made); the same command again measures the baseline
    and the second run only, and says so; its summary has both runs, of two attempts,
    and the folder keeps no record (run.py, record.py)."""
    out = tmp_path / "dev"
    argv = ("device", "--target", "198.18.0.1", "--iface", served, "--profile", str(RESUME),
            "--out", str(out))
    p = rig(*argv)
    deadline = time.monotonic() + 60
    while "step 1, run 1:" not in first_line(p, 5):  # the first run is recorded, then said
        assert p.poll() is None and time.monotonic() < deadline, p.stderr.read()
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    assert p.returncode == 130 and not out.exists()
    staging = tmp_path / ".dev.rtshield-staging"
    rows = (staging / ".rig-device-runs.csv").read_text().splitlines()
    assert [r.split(",")[:4] for r in rows] == [["run", "storm", "step", "try"],
                                                ["0", "bcast", "1", "1"]]

    p = rig(*argv)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode in (0, 1), stderr
    assert "resuming the interrupted test recorded in" in stdout
    assert "step 1, run 1: " in stdout and "(recorded by an earlier attempt)" in stdout
    assert "1 of 2 runs were recorded by an earlier, interrupted attempt" in stdout
    s = json.loads((out / "summary.json").read_text())
    runs = [r for st in s["storms"][0]["steps"] for r in st["runs"]]
    assert s["attempts"] == 2 and [r["attempt"] for r in runs] == [1, 2]
    assert all(r["monitors"]["modbus"]["samples"] > 0 for r in runs)
    assert not staging.exists() and not list(out.glob(".rig-device-*"))
