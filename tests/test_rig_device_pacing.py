"""`rtshield rig device`'s storms held evenly at their rate, as root, in two network
namespaces this test creates (the test host's and the target's, a veth between them):
one run of a step (the code the test runs, in the host's namespace) reaches the target
evenly and at the rate asked while other traffic of the interface passes unshaped; the
ARP and Ethernet storms' frames are told apart too; the interface has its own queueing
back after the runs and, through ``rig clean`` run in another namespace, after a SIGKILL
of ``rig device``; an interface with a qdisc of the user's own is refused with one line
and left as it was. (tests/test_rig_device_smoke.py checks the queueing is back after a
whole test and after SIGTERM or Ctrl-C mid-step.) Skips with the reason without root or
the tools. Nothing is timed: the waits only stop a hung test; the bounds are wide (the
rate within a fifth of the rate asked, no 100 ms with more than three times its share).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rig_checks import needs_root_and, procs_of, run_tag

from rtshield.rig import shaper

NEEDED = ["ip", "tc", "nsenter", "timeout", "trafgen", "chrt", "ping"]
pytestmark = needs_root_and(NEEDED)

RATE = 1000  # frames/s: 100 in each 100 ms when even, all of them in one when a burst
HOST, TARGET = "10.77.0.2", "10.77.0.1"
PROFILE = Path(__file__).resolve().parent / "data" / "rig" / "device_paced.toml"


def _sh(*argv: str, ns: str | None = None) -> str:
    pre = ["ip", "netns", "exec", ns] if ns else []
    return subprocess.run([*pre, *argv], capture_output=True, text=True, check=True,
                          timeout=30).stdout  # fmt: skip


def _qdiscs(ns: str, dev: str) -> list[dict]:
    return json.loads(_sh("tc", "-j", "qdisc", "show", "dev", dev, ns=ns))


def _shaped(ns: str, dev: str) -> bool:
    return any(q["kind"] == "htb" for q in _qdiscs(ns, dev))


def _wait_shaped(ns: str, dev: str, p: subprocess.Popen, limit_s: float = 30) -> None:
    deadline = time.monotonic() + limit_s
    while not _shaped(ns, dev):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "the storm's shaper never came"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def link():
    """Namespaces ``a`` (the test host: interface ``ia``) and ``b`` (the target: ``ib``)."""
    n = os.getpid() % 100000
    a, b, ia, ib = f"rtsev{n}a", f"rtsev{n}b", f"rtsev{n}a", f"rtsev{n}b"
    for ns in (a, b):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "link", "add", ia, "netns", a, "type", "veth", "peer", "name",
                        ib, "netns", b], check=True)  # fmt: skip
        for ns, dev, addr in ((a, ia, HOST), (b, ib, TARGET)):
            _sh("sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", ns=ns)
            _sh("ip", "addr", "add", f"{addr}/24", "dev", dev, ns=ns)
            _sh("ip", "link", "set", dev, "up", ns=ns)
        _sh("ping", "-c", "1", "-W", "2", TARGET, ns=a)  # the neighbour entry
        yield {"a": a, "b": b, "ia": ia, "ib": ib}
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], check=False)


# One run of a step of each storm, as `rig device` runs it (run.run_once under the
# interface's loan), in the host's namespace; prints one JSON line per run.
RUNS = """
import json, sys
from rtshield.rig import harness
from rtshield.rig.device import iface, run, storms
from rtshield.rig.shaper import lend
from rtshield.schema.profile import ProfileFile

dev, target, mac, rate = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
ep = storms.Endpoints(dev, iface.iface_mac(dev), iface.route_source(target, dev), mac, target)
runs = [(k.split(":"), float(s)) for k, s in (a.split("=") for a in sys.argv[5:])]
udp = {"port": 9}
prof = ProfileFile.model_validate({
    "storm": [{"name": "".join(k), "kind": k[0],
               **({**udp, "size": int(k[1])} if len(k) > 1 else udp if k[0] == "udp" else {})}
              for k, _ in runs],
    "monitor": [{"name": "m", "kind": "icmp"}],
})
with harness.Processes() as procs, lend(dev) as loan:
    for st, (_, s) in zip(prof.storm, runs):
        _, _, rec = run.run_once(procs, st, storms.Step(rate, rate, False), st.name, ep,
                                 int(s * 1e9), 0.0, loan)
        print(json.dumps({"kind": st.kind, "seconds": s, **rec}), flush=True)
"""

# The target's received frames in each 100 ms, until its input ends.
COUNT = """
import select, sys, time
p = f"/sys/class/net/{sys.argv[1]}/statistics/rx_packets"
v, t = [int(open(p).read())], time.monotonic()
print("counting", flush=True)
while True:
    t += 0.1
    done, _, _ = select.select([sys.stdin], [], [], max(0.0, t - time.monotonic()))
    v.append(int(open(p).read()))
    if done:
        break
print(" ".join(str(b - a) for a, b in zip(v, v[1:])), flush=True)
"""


def test_a_step_reaches_the_target_evenly(link):
    a, b, ia, ib = link["a"], link["b"], link["ia"], link["ib"]
    _sh("tc", "qdisc", "add", "dev", ia, "ingress", ns=a)  # the receive side: not touched
    before = _qdiscs(a, ia)
    assert [q["kind"] for q in before] == ["noqueue", "ingress"], before
    mac = _sh("cat", f"/sys/class/net/{ib}/address", ns=b).strip()
    count = subprocess.Popen(["ip", "netns", "exec", b, sys.executable, "-c", COUNT, ib],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    runs = None
    try:
        assert count.stdout.readline().strip() == "counting"
        runs = subprocess.Popen(
            ["ip", "netns", "exec", a, sys.executable, "-c", RUNS, ia, TARGET, mac, str(RATE),
             "udp=1", "arp_request=0.3", "eth_broadcast=0.3", "udp:1472=0.3"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _wait_shaped(a, ia, runs)
        # other traffic of the interface beside the storm: 20 pings, none held back (the
        # shaper's other class carried them)
        _sh("ping", "-c", "20", "-i", "0.01", "-W", "1", TARGET, ns=a)
        classes = _sh("tc", "-s", "class", "show", "dev", ia, ns=a)  # no JSON for classes
        other = re.search(r"class htb 1:1 .*?\n Sent \d+ bytes (\d+) pkt", classes)
        assert other and int(other.group(1)) >= 20, classes  # the 20 echo requests
        stdout, stderr = runs.communicate(timeout=60)
        assert runs.returncode == 0, stderr
        windows = [int(x) for x in count.communicate("end\n", timeout=30)[0].split()]
    finally:
        for p in (count, runs):
            if p is not None and p.poll() is None:
                p.kill()
                p.communicate()
    recs = [json.loads(line) for line in stdout.splitlines()]
    # the last: UDP datagrams of 1 472 bytes, 1 514-byte frames
    assert [r["kind"] for r in recs] == ["udp", "arp_request", "eth_broadcast", "udp"]
    for r in recs:
        # held at the rate asked: a storm whose frames the shaper missed runs at full
        # speed (hundreds of thousands of frames/s); the 1-second run reaches the rate, the
        # 0.3-second ones at least half of it (a tool that starts late on a loaded host
        # loses a larger part of a short run; counted in 1 000-byte units, the 1 514-byte
        # frames reached about a quarter)
        low = 0.8 if r["seconds"] >= 0.9 else 0.5
        assert low * RATE <= r["rate_achieved"] <= 1.2 * RATE, recs
        assert r["tool_exit"] == -signal.SIGKILL, r  # stopped at once: its ring not drained
    share = RATE / 10
    assert max(windows) <= 3 * share, windows  # no burst: trafgen's --rate put ~RATE in one
    # what the host's interface sent (the storms and the pings) reached the target
    sent = sum(r["tx_pps"] * r["seconds"] for r in recs)
    assert 0.8 * sent <= sum(windows) <= 1.2 * sent + share, (sent, windows)
    # spread over the storms' 1.9 seconds, not bunched into a few windows
    assert sum(1 for w in windows if w >= share / 2) >= 12, windows
    assert _qdiscs(a, ia) == before  # the kernel's own queueing again, the ingress kept
    assert not [x for x in shaper.loans_left() if x.name.endswith(f"-{ia}")]
    _sh("tc", "qdisc", "del", "dev", ia, "ingress", ns=a)


def _device(ns: str, dev: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-m", "rtshield", "rig", "device",
         "--target", TARGET, "--iface", dev, "--profile", str(PROFILE), "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@contextlib.contextmanager
def _counting(ns: str, dev: str) -> Iterator[list[int]]:
    """The frames ``dev`` in namespace ``ns`` received in each 100 ms of the block (filled
    in when the block ends)."""
    count = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", COUNT, dev],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    windows: list[int] = []
    try:
        assert count.stdout.readline().strip() == "counting"
        yield windows
        windows += [int(x) for x in count.communicate("end\n", timeout=30)[0].split()]
    finally:
        if count.poll() is None:
            count.kill()
            count.communicate()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_test_gives_the_queueing_back(link, tmp_path, sig):
    """SIGTERM mid-step: the storm stops before the shaper goes (no burst at the target),
    and the queueing is back when rig device exits. SIGKILL: the shaper stays, holding
    what the killed test left running, until ``rig clean`` (run from the host's own
    namespace) kills it and gives the queueing back."""
    a, ia, b, ib = link["a"], link["ia"], link["b"], link["ib"]
    before = _qdiscs(a, ia)
    with _counting(b, ib) as windows:
        p = _device(a, ia, tmp_path / "dev")
        _wait_shaped(a, ia, p)
        time.sleep(0.3)
        p.send_signal(sig)
        p.communicate(timeout=30)
        if sig == signal.SIGTERM:
            assert p.returncode == 143
        else:
            assert _shaped(a, ia)  # a SIGKILL leaves the shaper on ...
            c = subprocess.run([sys.executable, "-m", "rtshield", "rig", "clean"],
                               capture_output=True, text=True, timeout=60)  # fmt: skip
            assert c.returncode == 0, c.stderr
            assert f"restored the queueing of {ia}" in c.stdout, c.stdout
    assert _qdiscs(a, ia) == before  # ... until rig clean
    assert not [x for x in shaper.loans_left() if x.name.endswith(f"-{ia}")]
    assert not procs_of(run_tag(p.pid))
    share = 200 / 10  # the profile's rate
    assert sum(1 for w in windows if w >= share / 2) >= 2, windows  # the storm ran ...
    assert max(windows) <= 3 * share, windows  # ... evenly, also when it was stopped


def test_a_qdisc_of_the_users_own_is_refused_and_left(link, tmp_path):
    a, ia = link["a"], link["ia"]
    _sh("tc", "qdisc", "add", "dev", ia, "root", "handle", "5:", "pfifo", "limit", "77", ns=a)
    try:
        before = _qdiscs(a, ia)
        p = _device(a, ia, tmp_path / "dev")
        _, err = p.communicate(timeout=60)
        assert p.returncode == 2
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        assert f"--iface {ia} has a queueing discipline of its own (pfifo 5: root)" in lines[0]
        assert _qdiscs(a, ia) == before
        assert not (tmp_path / "dev").exists()  # refused before anything was made
    finally:
        _sh("tc", "qdisc", "del", "dev", ia, "root", ns=a)
