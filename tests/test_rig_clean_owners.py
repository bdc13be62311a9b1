"""`rig clean` spares a run whose owner still runs and removes one whose owner ended.

Real namespaces, veth pairs and processes, made by the test under tags of its own
and always removed. The harness's view of the machine (its namespaces, links,
tagged processes, owner records) is narrowed to those tags, so the test never
touches another session's rig runs, live or not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from rig_checks import needs_root_and

from rtshield import cli
from rtshield.rig import harness, owners

pytestmark = needs_root_and(["ip", "sleep", "env"])


def _sleeper(*prefix: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([*prefix, "sleep", "60"], env=env, start_new_session=True)


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """Three rig runs, each a namespace with a veth pair (one end here) and a tagged
    process in it, a work folder and an owner record: ``live`` (its owner runs),
    ``dead`` (its owner was killed) and ``reused`` (its record names the live process's
    id with another start time: a process id the kernel has given away since)."""
    base = format(os.getpid() % 0xFFFF, "x")
    tags = {k: f"z{k[0]}{base}" for k in ("live", "dead", "reused")}
    monkeypatch.setattr(owners, "STATE_DIR", tmp_path / "run")
    monkeypatch.setattr(harness, "STATE_DIR", tmp_path / "run")
    (tmp_path / "run").mkdir()
    ours = tuple(tags.values())
    for name in ("_netns_list", "_root_links"):
        real = getattr(harness, name)
        monkeypatch.setattr(harness, name, lambda real=real: [
            n for n in real() if any(t in n for t in ours)])
    real_tagged = harness._tagged
    monkeypatch.setattr(harness, "_tagged",
                        lambda: {p: t for p, t in real_tagged().items() if t in ours})
    owner = {"live": _sleeper(), "dead": _sleeper()}
    procs = list(owner.values())
    try:
        for kind, tag in tags.items():
            ns = f"{harness.PREFIX}-{tag}-dev"
            subprocess.run(["ip", "netns", "add", ns], check=True)
            subprocess.run(["ip", "link", "add", f"{harness.PREFIX}{tag}a", "type", "veth", "peer",
                            "name", f"{harness.PREFIX}{tag}d", "netns", ns], check=True)
            procs.append(_sleeper("ip", "netns", "exec", ns,
                                  env={**os.environ, harness.TAG_ENV: tag}))
            owners.claim(tag, owner["dead" if kind == "dead" else "live"].pid)
            work = tmp_path / f"{harness.PREFIX}-work-{tag}"
            work.mkdir()
            owners.add_path(tag, work)
        rec = owners.record_path(tags["reused"])
        data = json.loads(rec.read_text())
        data["start"] -= 1
        rec.write_text(json.dumps(data))
        owner["dead"].kill()
        owner["dead"].wait(10)
        deadline = time.monotonic() + 10  # the tagged processes have their tag by now
        while len(harness._tagged()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        yield tags, owner["live"].pid, tmp_path
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        for tag in tags.values():
            subprocess.run(["ip", "netns", "del", f"{harness.PREFIX}-{tag}-dev"],
                           capture_output=True, check=False)


def _left(tag: str) -> list[str]:
    left = harness.leftovers()
    return [n for n in left["netns"] + left["links"] if tag in n] + [
        str(p) for p in harness.tagged_pids(tag)]


def test_clean_spares_a_live_owner_and_removes_a_dead_ones(runs, capsys):
    tags, live_pid, tmp = runs
    assert all(_left(t) for t in tags.values())
    assert cli.main(["rig", "clean"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the live run: everything left, and one line saying whose it is
    live = tags["live"]
    assert len(_left(live)) == 3  # its namespace, its veth end here, its process
    assert (tmp / f"{harness.PREFIX}-work-{live}").is_dir()
    assert owners.record_path(live).is_file()
    spared = [line for line in out if "spared" in line]
    assert len(spared) == 1, out
    assert f"{harness.PREFIX}-{live}-dev" in spared[0] and f"pid {live_pid}" in spared[0]
    assert "1 processes" in spared[0] and "--force" in spared[0]
    # the dead owner's run and the one whose owner's id was given away: all gone
    for kind in ("dead", "reused"):
        tag = tags[kind]
        assert _left(tag) == [], kind
        assert not (tmp / f"{harness.PREFIX}-work-{tag}").exists(), kind
        assert not owners.record_path(tag).exists(), kind
        assert any(f"{harness.PREFIX}-{tag}-dev" in line for line in out if "removed" in line)
    assert any("killed 2 processes" in line for line in out), out
    # --force: the live run too
    assert cli.main(["rig", "clean", "--force"]) == 0
    assert f"{harness.PREFIX}-{live}-dev" in capsys.readouterr().out
    assert _left(live) == []


def test_a_live_owners_sysctl_is_kept(runs, monkeypatch):
    """The value a run saved before changing a sysctl is restored only once its owner
    has ended."""
    tags, live_pid, tmp = runs
    monkeypatch.setattr(harness, "SYSCTL_DIR", tmp / "sys")
    knob = tmp / "sys" / "kernel" / "sched_rt_runtime_us"
    knob.parent.mkdir(parents=True)
    knob.write_text("950000\n")
    with harness.SysctlOverride("kernel.sched_rt_runtime_us", "-1"):  # this process: alive
        removed = harness.clean()
        assert removed["sysctl"] == [] and knob.read_text().strip() == "-1"
        assert any("kernel.sched_rt_runtime_us" in line for line in removed["spared"])
        state = next((tmp / "run").glob("rtsrig-sysctl-*"))
        old, _ = state.read_text().splitlines()
        state.write_text(f"{old}\nowner {live_pid} {owners.start_time(live_pid) - 1}\n")
        removed = harness.clean()  # a process id given away since: restored
        assert removed["sysctl"] == ["kernel.sched_rt_runtime_us=950000"]
    # A killed run's saved value, taken over by the next run: spared while that one runs.
    knob.write_text("-1\n")
    state.write_text(f"950000\nowner {live_pid} {owners.start_time(live_pid) - 1}\n")
    with harness.SysctlOverride("kernel.sched_rt_runtime_us", "-1"):
        assert harness.clean()["sysctl"] == [] and knob.read_text().strip() == "-1"
    assert knob.read_text().strip() == "950000"  # the value from before the killed run
