"""The MPS2 board's networked images under a flood, as root: ``tools/mps2_flood_smoke.sh``
(QEMU on a TAP in a namespace of its own, hping3 SYN flood; protected, unprotected and
the upstream interface's stock image), and the same script stopped by SIGTERM midway.
Skips with the reason without root, the tools, the FreeRTOS trees or the Cortex-M3
compiler. Nothing is timed: the waits are limits that only stop a hung test."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from rig_checks import needs_root_and

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tools" / "mps2_flood_smoke.sh"
NEEDED = ["ip", "hping3", "ping", "qemu-system-arm", "arm-none-eabi-gcc", "patch", "timeout"]

pytestmark = needs_root_and(NEEDED)


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mps2")
    p = subprocess.run(
        [str(ROOT / "tools" / "freertos_build.sh"), "mps2-build", str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    if p.returncode == 77:
        pytest.skip(p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stderr[-2000:]
    return out / "rts_mps2_device.elf"


def _left(pid: int) -> list[str]:
    """The namespace and the QEMU of the smoke script with process id ``pid``, if left."""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    left = [line.split()[0] for line in ns.splitlines() if line.startswith(f"rtsm{pid}")]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return left + [a for a in ps.splitlines() if "qemu-system-arm" in a and f"rtsm{pid}t" in a]


def test_flood_protected_unprotected_and_stock(tmp_path, image):
    out = tmp_path / "smoke"
    p = subprocess.run([str(SMOKE), str(image), str(out)], capture_output=True, text=True,
                       timeout=120, check=False)  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    variants = ("protected", "unprotected", "stock")
    runs = {v: json.loads((out / v / "summary.json").read_text()) for v in variants}
    for v, s in runs.items():
        assert all(s["checks"].values()), (v, s["checks"])
        assert s["nic_frames"] > 1000 and s["ping_after"] >= 1, v
    prot = runs["protected"]
    assert prot["critical"]["misses"] == 0 and prot["critical"]["late_on_clock"] == 0
    assert prot["shield_drops"]["flow_server"] > 1000
    assert prot["hp"]["delivered"] == prot["hp"]["taken_by_driver"] > 0
    assert sum(runs["unprotected"]["shield_drops"].values()) == 0
    # the upstream interface with patches 0001 and 0002 took the flood and answered after it
    assert runs["stock"]["ping_after"] >= 1 and runs["stock"]["modbus_polls"]["after"][1] > 0
    assert "mps2_flood_smoke protected: 8/8 checks hold" in p.stdout
    assert "mps2_flood_smoke unprotected: 6/6 checks hold" in p.stdout
    assert "mps2_flood_smoke stock: 6/6 checks hold" in p.stdout


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
