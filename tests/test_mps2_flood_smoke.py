"""The MPS2 board's stock image under a flood, as root: ``tools/mps2_flood_smoke.sh``
(QEMU on a TAP in a namespace of its own, hping3 SYN flood) on ``rts_mps2_stock.elf``,
FreeRTOS-Plus-TCP's own MPS2_AN385 interface with the project's patches, and the same
script stopped by SIGTERM midway. The device image's protected and unprotected variants
under a flood are the rig's (``tests/test_rig_mps2_smoke.py``: ``rtshield rig freertos-tcp
--board mps2-an385``), not run twice here. Skips with the reason without root, the
tools, the FreeRTOS trees or the Cortex-M3 compiler. Nothing is timed: the waits are
limits that only stop a hung test, and "after the flood" is the guest's (the script polls
until the image ends: on a busy host the guest falls behind the host's clock)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from rig_checks import needs_root_and

from rtshield.rig import freertos, harness

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tools" / "mps2_flood_smoke.sh"
NEEDED = ["ip", "hping3", "ping", "qemu-system-arm", "arm-none-eabi-gcc", "patch", "timeout"]
MPS2 = freertos.Target("plustcp", "mps2-an385")

pytestmark = needs_root_and(NEEDED)


@pytest.fixture(scope="module")
def image() -> Path:
    """The device image, with the stock image beside it: the rig's build and cache, shared
    with the rig's smoke."""
    try:
        tree = freertos.find_tree(None, MPS2)
    except harness.RigError as e:
        pytest.skip(str(e))
    return freertos.build_images(MPS2, tree, say=lambda m: None)["protected"]


def _left(pid: int) -> list[str]:
    """The namespace and the QEMU of the smoke script with process id ``pid``, if left."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    left = [line.split()[0] for line in ns.splitlines() if line.startswith(f"rtsm{pid}")]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return left + [a for a in ps.splitlines() if "qemu-system-arm" in a and f"rtsm{pid}t" in a]


def test_flood_on_the_stock_image(tmp_path, image):
    out = tmp_path / "smoke"
    # the script waits for the guest (which falls behind on a busy host) within this bound
    env = {**os.environ, "RTS_SMOKE_VARIANTS": "stock", "RTS_SMOKE_LIMIT_S": "100"}
    p = subprocess.run([str(SMOKE), str(image), str(out)], capture_output=True, text=True,
                       timeout=120, check=False, env=env)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    s = json.loads((out / "stock" / "summary.json").read_text())
    assert all(s["checks"].values()), s["checks"]
    # the upstream interface with patches 0001 and 0002 took the flood and answered after it
    assert s["nic_frames"] > 1000 and s["ping_after"] >= 1
    assert s["modbus_polls"]["after"][1] > 0
    assert sum(s["shield_drops"].values()) == 0  # no libshield in it
    assert "mps2_flood_smoke stock: 6/6 checks hold" in p.stdout
    assert not (out / "protected").exists() and not (out / "unprotected").exists()


def test_sigterm_leaves_nothing(tmp_path, image):
    """SIGTERM while the image runs: the script stops QEMU and removes its namespace."""
    out = tmp_path / "killed"
    p = subprocess.Popen([str(SMOKE), str(image), str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)  # fmt: skip
    console = out / "protected" / "console"
    for _ in range(300):
        if console.is_file() and "ready" in console.read_text():
            break
        time.sleep(0.1)
    assert _left(p.pid), "the image never started"
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode == 143
    assert _left(p.pid) == []
