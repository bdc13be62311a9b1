"""`rtshield rig serve linux` and `rtshield rig device` on this machine, as root, with the
real tools: a short profile (tests/data/rig/device_smoke.toml: two storms of two
1-second steps, every monitor kind) against the served Linux device, and the ways a
run ends early. Skips with the reason without root or the tools. Nothing is timed: the
waits are generous limits that only stop a hung test; everything started is stopped and
checked gone (namespaces, the veth, every process carrying the run's tag)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rig_checks import needs_root_and, procs_of, rig, run_tag

from rtshield.rig import harness

NEEDED = ["ip", "nft", "timeout", "cc", "trafgen", "chrt", "ping"]
pytestmark = needs_root_and(NEEDED)

PROFILE = Path(__file__).resolve().parent / "data" / "rig" / "device_smoke.toml"


def _line(p: subprocess.Popen, timeout_s: float) -> str:
    r, _, _ = select.select([p.stdout], [], [], timeout_s)
    return p.stdout.readline().strip() if r else ""


def _gone(tag: str, iface: str) -> list[str]:
    left = harness.leftovers()
    return ([n for n in left["netns"] if tag in n] + procs_of(tag)
            + ([iface] if Path(f"/sys/class/net/{iface}").exists() else []))


@pytest.fixture
def served():
    """`rig serve linux` in the background; yields its interface; stopped with Ctrl-C."""
    iface = f"rtsdut{os.getpid() % 1000}"
    p = rig("serve", "linux", "--iface", iface, "--protect", "off")
    tag = run_tag(p.pid)
    try:
        line = _line(p, 120)
        assert line == f"target 198.18.0.1 on interface {iface}", (line, p.stderr.read()
                                                                    if p.poll() else "")
        yield iface
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert "rig serve: stopped" in out
        deadline = time.monotonic() + 10
        while _gone(tag, iface) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _gone(tag, iface)


def test_device_against_the_served_linux_device(tmp_path, served):
    out = tmp_path / "dev"
    p = rig("device", "--target", "198.18.0.1", "--iface", served, "--profile", str(PROFILE),
            "--out", str(out))
    stdout, stderr = p.communicate(timeout=180)
    assert p.returncode in (0, 1), stderr
    s = json.loads((out / "summary.json").read_text())
    assert p.returncode == (0 if s["verdict"] == "pass" else 1)
    assert s["baseline"]["monitors"].keys() == {"modbus", "ping", "connect", "echo",
                                                "heartbeat"}
    assert all(w["verdict"] == "pass" for w in s["baseline"]["monitors"].values())
    assert [st["name"] for st in s["storms"]] == ["bcast", "syn"]
    for st in s["storms"]:
        assert st["tool"] == "trafgen" and st["steps"]
        for step in st["steps"]:
            # trafgen paces itself: what the interface sent is what was asked
            assert 0.8 * step["rate_asked"] <= step["rate_achieved"] <= 1.2 * step["rate_asked"]
            assert step["monitors"].keys() == s["criteria"].keys()
            for w in step["monitors"].values():
                assert w["samples"] > 0 and w["verdict"] in ("pass", "fail")
            failed = any(w["verdict"] == "fail" for w in step["monitors"].values())
            assert step["verdict"] == ("fail" if failed else "pass")
        first = next((x for x in st["steps"] if x["verdict"] == "fail"), None)
        assert st["breaking_rate"] == (first["rate_asked"] if first else None)
        assert st["recovery_s"] is None or st["recovery_s"] >= 0
    # the heartbeat is the control task's: one per 10 ms
    beat = s["baseline"]["monitors"]["heartbeat"]
    assert 9 <= beat["interval_ms"]["p50"] <= 11
    assert (out / "report.html").read_text().count("<h2>") >= 4
    assert (out / "fig_latency.png").stat().st_size > 1000
    assert not procs_of(run_tag(p.pid))


def _storming(p: subprocess.Popen, timeout_s: float = 60) -> None:
    """Read ``p``'s output until a storm step started."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = _line(p, 5)
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
    assert any("trafgen" in x for x in procs_of(tag))  # a storm runs
    p.send_signal(sig)
    p.communicate(timeout=30)
    assert p.returncode == code
    assert not procs_of(tag)


def test_after_sigkill_rig_clean_stops_what_was_left(tmp_path):
    """``rig clean`` kills every rig process and namespace: the test's own served device
    goes too, and ``rig serve`` says so and leaves nothing."""
    iface = f"rtsdut{os.getpid() % 1000 + 1}"
    srv = rig("serve", "linux", "--iface", iface)
    try:
        assert _line(srv, 120).startswith("target 198.18.0.1")
        p = rig("device", "--target", "198.18.0.1", "--iface", iface, "--profile",
                str(PROFILE), "--out", str(tmp_path / "dev"))
        tag = run_tag(p.pid)
        _storming(p)
        p.kill()
        p.communicate(timeout=30)
        assert procs_of(tag)  # the monitors and the storm outlive a SIGKILL ...
        c = subprocess.run([sys.executable, "-m", "rtshield", "rig", "clean"],
                           capture_output=True, text=True, timeout=60)
        assert c.returncode == 0 and "killed" in c.stdout
        assert not procs_of(tag)  # ... until rig clean
        _, err = srv.communicate(timeout=60)
        assert srv.returncode == 2 and "the device's process ended" in err
    finally:
        if srv.poll() is None:
            srv.send_signal(signal.SIGINT)
            srv.communicate(timeout=60)
    assert not _gone(run_tag(srv.pid), iface)
