"""What the rig's tests share: the configuration text of the FreeRTOS target, and for
the smoke tests (``tests/test_rig_smoke.py``, ``tests/test_rig_freertos_smoke.py``,
``tests/test_rig_mps2_smoke.py``, ``tests/test_rig_lwip_smoke.py``) what they need,
starting ``rtshield rig``, reading its runs and finding what a run left behind, and
serving a device (``rig serve``) for the tests of ``rig device`` and of the served devices."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rtshield import cli
from rtshield.rig import freertos, harness


def target_text(scenario: Path, variant: str = "protected", out: Path = Path("/tmp/x"),
                **device) -> str:
    """The FreeRTOS target's configuration text for one variant of a device scenario
    (``device``: more arguments of :func:`freertos.load_device`)."""
    dev = freertos.load_device(scenario, stock_priority=6, **device)
    return freertos.target_config(
        dev.variants[variant],
        variant == "protected",
        ifname="rtsrigXd",
        mac="02:00:00:00:00:01",
        out=out,
        seconds=9,
    )


def rig_error(capsys, argv) -> str:
    """``rtshield ARGV`` (a rig verb) in this process exits with 2 and its last line on
    stderr is ``rtshield: error: rig...``, with no traceback; returns that line."""
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no error message"
    assert err[-1].startswith("rtshield: error: rig")
    assert not any("Traceback" in line for line in err)
    return err[-1]


def needs_root_and(tools: list[str]) -> list[pytest.MarkDecorator]:
    """Skip marks (with the reason) for a test of the rig without root or without one of
    ``tools`` on the PATH."""
    missing = [t for t in tools if shutil.which(t) is None]
    return [
        pytest.mark.skipif(os.geteuid() != 0, reason="the rig needs root (network namespaces)"),
        pytest.mark.skipif(
            bool(missing),
            reason="rig tools missing: " + ", ".join(missing)
            + " (tools/install.sh --rig installs them)",
        ),
    ]


def needs_trees(target: freertos.Target) -> pytest.MarkDecorator:
    """A skip mark (with the reason) for a test of ``target`` without the third-party trees
    its build needs."""
    try:
        freertos.find_tree(None, target)
    except harness.RigError as e:
        return pytest.mark.skipif(True, reason=str(e))
    return pytest.mark.skipif(False, reason="the trees are there")


def read_runs(out: Path, attack: str, variants=("unprotected", "protected")) -> dict:
    """The ``summary.json`` of each variant's run of ``attack`` in a rig output folder."""
    return {
        v: json.loads((out / "runs" / f"{v}-{attack}" / "summary.json").read_text())
        for v in variants
    }


def rig(*args: str, **kw) -> subprocess.Popen:
    """``rtshield rig ARGS`` in a subprocess, its output captured as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "rtshield", "rig", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def run_tag(pid: int) -> str:
    """The name tag the rig derives from its process id (harness.Harness)."""
    return format(pid % 0xFFFFFF, "x")


def links_left(tag: str) -> list[str]:
    """The namespaces and links of the rig run ``tag`` that still exist."""
    left = harness.leftovers()
    return [n for n in left["netns"] + left["links"] if tag in n]


def procs_of(tag: str) -> list[str]:
    """Processes started by the rig run ``tag`` (they carry RTSRIG_TAG=<tag>)."""
    needle = f"{harness.TAG_ENV}={tag}".encode()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes().split(b"\0")
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in env:
            found.append(f"{d.name}: {cmd[:120]}")
    return found


def first_line(p: subprocess.Popen, timeout_s: float) -> str:
    """The next line ``p`` prints within ``timeout_s`` (none: "")."""
    r, _, _ = select.select([p.stdout], [], [], timeout_s)
    return p.stdout.readline().strip() if r else ""


def gone(tag: str, iface: str) -> list[str]:
    """What the rig run ``tag`` (its namespaces, processes) and its interface ``iface`` left."""
    left = harness.leftovers()
    return ([n for n in left["netns"] if tag in n] + procs_of(tag)
            + ([iface] if Path(f"/sys/class/net/{iface}").exists() else []))


@contextlib.contextmanager
def serving(*args: str, offset: int = 0):
    """``rig serve ARGS`` in the background; yields its interface; stopped with Ctrl-C and
    checked gone."""
    iface = f"rtsdut{os.getpid() % 1000 + offset}"
    p = rig("serve", *args, "--iface", iface)
    tag = run_tag(p.pid)
    try:
        line = first_line(p, 300)  # a FreeRTOS target is built first (once, cached)
        assert line == f"target 198.18.0.1 on interface {iface}", (line, p.stderr.read()
                                                                    if p.poll() else "")
        yield iface
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert "rig serve: stopped" in out
        deadline = time.monotonic() + 10
        while gone(tag, iface) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not gone(tag, iface)
