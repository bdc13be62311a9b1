"""lwIP on the MPS2 board (``mps2-an385-freertos-lwip``) against the runs it was measured
on and a held-out run (tests/data/rig/board/mps2-an385-freertos-lwip*/,
docs/decisions/twin-mps2.md, "lwIP on the MPS2 board"): the same LAN9118 interface as
Plus-TCP's, so its FIFO copy lies on the Plus-TCP runs' instruction line; its configured
numbers are the lwIP build's; unprotected it refuses frames only for want of an input
message; ``twin.json`` holds the runs against the board's model fed the frames the emulated
NIC passed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_board_presets import DATA, ROOT, _define

from rtshield.rig.freertos import write_twin
from rtshield.rig.freertos.fit import BOARD_DROPS, board_preset
from rtshield.rig.freertos.summary import IP_QUEUE_FULL, NIC_FIFO_FULL
from rtshield.rig.freertos.twin import EMULATOR_FIFO
from rtshield.scenario import load_platform

LWIP = "mps2-an385-freertos-lwip"
HELD = f"{LWIP}-heldout"
TCP = "mps2-an385-freertos-tcp"
SIMS = ROOT / "tests" / "data" / "rig" / "board-sim"
NAMES = ("protected-arp", "protected-syn", "unprotected-arp", "unprotected-syn")
OPTS = ROOT / "libshield" / "port" / "lwip" / "lwipopts.h"


def _device(kept: str, run: str) -> dict:
    return json.loads((DATA / kept / run / "device.json").read_text())


def test_the_kept_runs_are_lwip_on_the_mps2_board():
    for kept in (LWIP, HELD):
        for r in NAMES:
            summary = json.loads((DATA / kept / r / "summary.json").read_text())
            assert (summary["stack"], board_preset(summary)) == ("lwip", LWIP)
    assert BOARD_DROPS[LWIP] == {"queue_full": IP_QUEUE_FULL}


def test_the_presets_configured_numbers_are_the_lwip_builds():
    """The driver queue is tcpip_thread's input messages, its priority the stock build's
    tcpip_thread's, the pool and ring the board's lwIP build, the clock QEMU's rate."""
    plat, _, defaults = load_platform(LWIP)
    assert defaults["driver"]["queue"] == _define(OPTS, "MEMP_NUM_TCPIP_MSG_INPKT")
    build = (ROOT / "tools" / "freertos_build.sh").read_text()
    assert defaults["driver"]["priority"] == int(re.search(r"-DTCPIP_THREAD_PRIO=(\d+)", build)[1])
    cm3 = r'flags=\("\$\{cm3_flags\[@\]\}" -g\) opts=\(-DRTS_POOL_MAX_BUFS=(\d+)\)'
    pool = int(re.search(cm3, build)[1])  # the lwIP build's MPS2 branch
    assert defaults["rx"]["buffers"] == pool and defaults["nic"]["ring"] == pool - pool // 8
    shift = int(re.search(r"shift=(\d+)", (ROOT / "tools" / "mps2_run.sh").read_text())[1])
    assert plat.clock_hz == 1_000_000_000 // 2**shift


def test_the_fifo_copy_is_plustcps_instruction_line():
    """One interface, one cost: the least-squares line of instructions a frame and a FIFO
    word over Plus-TCP's four MPS2 runs gives every lwIP run's copy time to 0.1 %."""
    rows = [_device(TCP, r)["netif"] for r in NAMES]
    a = np.array([[n["nic_copy_frames"], n["nic_copy_words"]] for n in rows], dtype=float)
    b = np.array([n["nic_copy_ns"] / 32 for n in rows])
    (per_frame, per_word), *_ = np.linalg.lstsq(a, b, rcond=None)
    words = []
    for kept in (LWIP, HELD):
        for r in NAMES:
            n = _device(kept, r)["netif"]
            line = n["nic_copy_frames"] * per_frame + n["nic_copy_words"] * per_word
            assert line == pytest.approx(n["nic_copy_ns"] / 32, rel=1e-3), (kept, r)
            words.append(n["nic_copy_words"] / n["nic_copy_frames"])
    assert max(words) - min(words) > 10  # the runs' mixes differ: the line is tested


def test_unprotected_lwip_refuses_frames_only_for_want_of_an_input_message():
    """What the preset's driver queue stands on: every frame the stock driver lost, it lost
    because tcpip_thread's input messages were all in use (lwIP's tcpip_inpkt_err), never
    for want of a pbuf (the pool below its size)."""
    pool = _define(ROOT / "rig" / "freertos" / "lwip" / "lwipopts.h", "PBUF_POOL_SIZE")
    for kept in (LWIP, HELD):
        for r in ("unprotected-arp", "unprotected-syn"):
            d = _device(kept, r)
            stack = dict(zip(d["stack"]["names"], d["stack"]["values"], strict=True))
            assert d["netif"]["ip_queue_full"] == stack["tcpip_inpkt_err"] > 1000
            assert d["netif"]["stack_exhausted"] == 0 and stack["pbuf_pool_err"] == 0
            assert stack["pbuf_pool_max_used"] < pool


def _folder(tmp_path: Path, kept: str) -> Path:
    out = tmp_path / "out"
    for r in NAMES:
        shutil.copytree(DATA / kept / r, out / "runs" / r)
    for v in ("protected", "unprotected"):
        shutil.copytree(SIMS / kept / v, out / "sim" / v)
    return out


@pytest.mark.parametrize("kept", [LWIP, HELD])
def test_twin_on_lwips_mps2_model(tmp_path, kept):
    """Agrees where twin-mps2.md says it does (frames at the NIC, libshield's drops, the
    protected flows on the frames the NIC passed, the misses verdict, the median cycle,
    the network CPU a frame); the FIFO's drops are not compared; the flows' fractions of
    what the host sent name the emulator; the stock driver's refusals are over-predicted
    (by 15-25 %) and say the ceiling is the CPU."""
    out = _folder(tmp_path, kept)
    twin = json.loads(write_twin(out).read_text())
    assert twin["board_preset"] == LWIP
    q = {(x["run"], x["name"]): x for x in twin["quantities"] if x["model"] == "board"}
    for r in NAMES:
        for name in ("frames at the NIC", "critical task: deadlines missed",
                     "critical task: cycle time p50", "network work: CPU per frame at the NIC"):
            assert q[(r, name)]["agrees"], (r, name)  # fmt: skip
        assert (r, f"drops: {NIC_FIFO_FULL}") not in q
        for flow in ("hp", "bulk"):
            assert EMULATOR_FIFO in (q[(r, f"{flow}: delivered fraction")]["why"] or "")
    for r in ("protected-arp", "protected-syn"):
        assert q[(r, "drops: flow_server")]["agrees"]
        for flow in ("hp", "bulk"):
            assert q[(r, f"{flow}: delivered fraction of the frames the NIC passed")]["agrees"]
    # every quantity the board's model misses says why (the done-when of the twin)
    assert [k for k, x in q.items() if not x["agrees"] and not x["why"]] == []
    drops = q[("unprotected-syn", f"drops: {IP_QUEUE_FULL}")]
    assert 1.15 * drops["real"] < drops["sim"] < 1.25 * drops["real"]
    assert "ceiling is its CPU (ethif and tcpip_thread" in drops["why"]
