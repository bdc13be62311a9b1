"""`rtshield rig lwip --rates` on this machine, as root: the floods at a chosen rate reach
the device at about that rate (a full-rate flood reaches it at tens of thousands of
frames a second on this board) and spread over the second, not in a burst (the device's
100 ms snapshots), the runs are named and recorded with the rate asked and the rate at
the device's link, and nothing is left behind (the attacker's interface gets its
queueing back). One unprotected run per attack, 1-second phases, in the namespaces the
rig creates. Skips with the reason without root, the tools, the trees or a compiler.
Nothing is timed: the waits only stop a hung test; the bounds are wide (the rate within
half to one and a half times the rate asked; no 100 ms with half a second's frames).
"""

from __future__ import annotations

import json

import pytest
from rig_checks import links_left, needs_root_and, needs_trees, procs_of, rig, run_tag

from rtshield.rig import freertos

NEEDED = ["ip", "nft", "taskset", "timeout", "gcc", "ethtool", "hping3", "mausezahn", "tc",
          "ping"]  # fmt: skip
LWIP = freertos.Target("lwip", "posix")
RATE = 1500

pytestmark = [*needs_root_and(NEEDED), needs_trees(LWIP)]


@pytest.fixture(scope="module")
def built():
    """Build both images once (cached by rtshield) so the run below measures a run."""
    return freertos.build_images(LWIP, freertos.find_tree(None, LWIP), say=lambda m: None)


def test_floods_at_a_rate(tmp_path, built):
    out = tmp_path / "rt"
    args = ["--attacks", "syn,arp", "--variants", "unprotected", "--rates", str(RATE),
            "--phase-seconds", "1", "--break-seconds", "0"]  # fmt: skip
    p = rig("lwip", *args, "--out", str(out))
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 0, stderr
    assert f"unprotected-syn-{RATE}pps: attack: hping3 SYN flood at {RATE} pkt/s" in stdout
    for attack in ("syn", "arp"):
        name = f"unprotected-{attack}-{RATE}pps"
        s = json.loads((out / "runs" / name / "summary.json").read_text())
        assert s["attack_tool"] == freertos.ATTACK_TOOL[attack], name
        flood = s["flood"]
        assert flood["rate_asked_pps"] == RATE, flood
        assert flood["at_device_pps"] == s["traffic"]["flood_in_pps"], flood
        assert 0.5 * RATE < flood["at_device_pps"] < 1.5 * RATE, flood
        assert flood["achieved"] == pytest.approx(flood["at_device_pps"] / RATE, abs=1e-3)
        # evenly: no 100 ms snapshot took half a second's flood (a tool that sends each
        # second's frames in one burst puts a whole second's in one or two)
        snaps = json.loads((out / "runs" / name / "device.json").read_text())["snapshots"]
        frames = [
            b["nic_frames"] - a["nic_frames"] for a, b in zip(snaps[:-1], snaps[1:], strict=True)
        ]
        assert max(frames) < RATE / 2, frames
        # the run is simulated at its own rate and held against it under its own name
        assert (out / "sim" / f"{name}-own-rate" / "summary.json").is_file(), name
    twin = json.loads((out / "twin.json").read_text())
    names = {f"unprotected-{a}-{RATE}pps" for a in ("syn", "arp")}
    assert {r["run"] for r in twin["runs"]} == names
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []
