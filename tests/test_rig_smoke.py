"""The rig on this machine, as root, with the real tools: a short smoke run and kills.

Skips (with the reason) without root or without the tools; CI runs as root
with the tools from tools/install.sh. Nothing here is timed: the runs are
bounded by the rig itself, the waits by generous limits that only stop a hung
test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest
from rig_checks import links_left, needs_root_and, procs_of, rig, run_tag

NEEDED = ["ip", "nft", "taskset", "timeout", "cc", "hping3"]

pytestmark = needs_root_and(NEEDED)

SMOKE = ["--attacks", "syn", "--load", "off", "--phase-seconds", "2", "--break-seconds", "0.5"]


def _wait_for_line(p: subprocess.Popen, needle: str) -> list[str]:
    """Read stdout until a line contains ``needle`` (or the process ends)."""
    seen = []
    assert p.stdout is not None
    for line in p.stdout:
        seen.append(line)
        if needle in line:
            return seen
    pytest.fail(f"the rig ended before '{needle}': {''.join(seen)[-800:]}")


def test_smoke_single_core_and_pinned(tmp_path):
    out = tmp_path / "rig"
    p = rig("linux", "--select", "SF,DF", *SMOKE, "--out", str(out))
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    cells = {c["cell"]: c for c in summary["cells"]}
    assert sorted(cells) == ["DF-syn-noload", "SF-syn-noload"]
    for name, c in cells.items():
        assert c["status"] == "ok", c.get("reason")
        # the flood was delivered to the device
        assert c["traffic"]["syn_in"] > 0, name
        assert c["traffic"]["offered"] > 0, name
        # cycle times were recorded for every phase
        for ph in ("idle_before", "attack", "idle_after"):
            assert c["phases"][ph]["cycles"] > 0, (name, ph)
        assert (out / "runs" / name / "summary.json").is_file()
        assert (out / f"hist_{name}.png").stat().st_size > 1000
    assert cells["SF-syn-noload"]["cpus"]["device_rx"] == cells["SF-syn-noload"]["cpus"]["control"]
    assert cells["DF-syn-noload"]["cpus"]["device_rx"] != cells["DF-syn-noload"]["cpus"]["control"]
    tables = (out / "tables.txt").read_text()
    assert "Table 1 layout" in tables and "SF" in tables and "DF" in tables
    assert "SYN flooding" in (out / "report.html").read_text()
    assert summary["system"]["kernel"]
    # nothing left behind: namespaces (with their veths, qdiscs, nft tables), processes
    assert links_left(run_tag(p.pid)) == []
    assert procs_of(run_tag(p.pid)) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_killed_mid_attack_leaves_nothing(tmp_path, sig):
    p = rig("linux", "--select", "SF", *SMOKE, "--no-figures", "--out", str(tmp_path / "k"))
    _wait_for_line(p, "attack (hping3)")
    p.send_signal(sig)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, stderr  # 130 for Ctrl-C, 143 for SIGTERM
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert links_left(run_tag(p.pid)) == []
    assert procs_of(run_tag(p.pid)) == []  # no flood tool, listener or control task left


def test_sigkill_then_rig_clean(tmp_path):
    """SIGKILL leaves the namespaces; `rig clean` removes them (their owner has ended)
    and touches nothing else."""
    keep = f"rtskeep-{os.getpid()}"  # not the rig's prefix: must survive `rig clean`
    subprocess.run(["ip", "netns", "add", keep], check=True)
    try:
        p = rig("linux", "--select", "SF", *SMOKE, "--no-figures", "--out", str(tmp_path / "k"))
        _wait_for_line(p, "attack (hping3)")
        p.kill()
        p.communicate(timeout=60)
        tag = run_tag(p.pid)
        assert links_left(tag), "a SIGKILLed run cannot clean up; its namespaces should remain"
        assert procs_of(tag), "its listener and control task should still run (until timeout)"
        c = rig("clean")
        cout, cerr = c.communicate(timeout=120)
        assert c.returncode == 0, cerr
        assert f"rtsrig-{tag}-dev" in cout
        assert links_left(tag) == []
        assert procs_of(tag) == []
        ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert keep in ns
    finally:
        subprocess.run(["ip", "netns", "del", keep], check=False)
