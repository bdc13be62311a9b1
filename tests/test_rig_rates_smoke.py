"""`rtshield rig lwip --rates` on this machine, as root: the floods at a chosen rate reach
the device at about that rate (a full-rate flood reaches it at tens of thousands of
frames a second on this board) and spread over the second, not in a burst, the runs are
named and recorded with the rate asked and the rate at the device's link, and nothing is
left behind (the attacker's interface gets its queueing back). One unprotected run per
attack, 1-second phases, in the namespaces the rig creates. Skips with the reason without
root, the tools, the trees or a compiler.

Nothing is timed: the waits only stop a hung test, and the bounds hold on a loaded host.
The rate: within half to one and a half times the rate asked (the shaper holds it; a
loaded host loses some of it, never half). The spread is judged where the flood was sent
and when: at the device's link (each frame's kernel arrival time, device.json
``link_frames``, 100 ms bins of the host's clock) over the whole bins of the attack phase.
No bin may hold half a second's frames (the rate asked / 2): paced frames put a tenth of
a second's in each, beside the scenario's own flows; a tool that sends each second's
frames in one burst puts the whole second's in one bin or two, so one holds at least
half. The device's own 100 ms snapshots cannot judge it: they count frames when the
device's receive thread reads them and are 100 ticks apart, and on a loaded host that
thread runs late and the ticks lag (measured under 12 CPU hogs on 2 cores: snapshots 300
to 430 ms apart holding up to 948 frames of an even flood at 1 500/s).
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


def _whole_bins(link: dict, bounds: list[int]) -> list[int]:
    """The frames of each whole ``bin_ns`` bin of ``link`` (device.json ``link_frames``)
    inside the phase ``bounds`` ([start, end) ns on the same clock)."""
    t0, width, frames = link["t0_ns"], link["bin_ns"], link["frames"]
    first = -(-(bounds[0] - t0) // width)  # the first bin that starts in the phase
    last = (bounds[1] - t0) // width  # the first bin that ends after it
    return [frames[i] if i < len(frames) else 0 for i in range(max(0, first), last)]


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
        # evenly: no 100 ms at the device's link took half a second's flood (a tool that
        # sends each second's frames in one burst puts a whole second's in one or two)
        link = json.loads((out / "runs" / name / "device.json").read_text())["link_frames"]
        attack, before = (_whole_bins(link, s["bounds_ns"][k]) for k in (1, 0))
        assert len(attack) >= 8, (attack, link["t0_ns"], s["bounds_ns"])
        assert max(attack) < RATE / 2, attack
        # and the bins saw the flood: the attack's hold at least half the frames asked for
        # more than as many bins of the idle phase before it (the scenario's own flows)
        assert sum(attack) - sum(before[: len(attack)]) > RATE / 2 * len(attack) / 10, (
            attack,
            before,
        )
        # the run is simulated at its own rate and held against it under its own name
        assert (out / "sim" / f"{name}-own-rate" / "summary.json").is_file(), name
    twin = json.loads((out / "twin.json").read_text())
    names = {f"unprotected-{a}-{RATE}pps" for a in ("syn", "arp")}
    assert {r["run"] for r in twin["runs"]} == names
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []
