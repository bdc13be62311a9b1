"""The rig's FreeRTOS targets as a stack on a board, without root: the targets' facts and
errors, the phases mapped onto the guest's clock with the MPS2 board's ``sync`` lines, a
run's summary and claims in guest time (the emulated NIC's drops counted apart), and
the command line's ``--board``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rig_checks import rig_error
from test_rig_freertos import _fake_run

from rtshield.errors import UsageError
from rtshield.rig import freertos, harness
from rtshield.rig.freertos import board, console, summary

MPS2 = freertos.Target("plustcp", "mps2-an385")


def test_targets_name_their_build_images_and_clock():
    posix = freertos.Target()
    assert (posix.verb, posix.clock, posix.emulated) == ("freertos-tcp", "host", False)
    assert posix.image("protected") == posix.image("unprotected") == "rts_freertos_device"
    assert (MPS2.clock, MPS2.build_mode[1]) == ("guest", "mps2-build")
    lw = freertos.Target("lwip")
    assert lw.verb == "lwip" and lw.build_mode == ("freertos_build.sh", "lwip-build")
    # lwIP's usual driver and the adapter need different builds of lwIP
    assert lw.image("protected") != lw.image("unprotected")
    assert any(t.startswith("lwip/") for t in lw.trees)
    # the MPS2 board's LAN9118 driver comes from FreeRTOS-Plus-TCP's tree, whatever the stack
    assert any("Plus-TCP" in t for t in freertos.Target("lwip", "mps2-an385").trees)
    with pytest.raises(UsageError, match="--board esp32"):
        freertos.Target("lwip", "esp32")


def test_each_board_has_its_device(tmp_path, monkeypatch):
    assert freertos.default_scenario() == freertos.default_scenario(freertos.Target())
    mps2 = freertos.default_scenario(MPS2)
    assert mps2.parent.name == "mps2-an385" and mps2.is_file()
    dev = freertos.load_device(mps2, 6)
    # the global limit bounds the LAN9118's copy in the interrupt (docs/decisions/mps2-board.md)
    assert dev.variants["protected"].rx.global_capacity > 0
    assert dev.variants["unprotected"].rx is None
    monkeypatch.delenv(freertos.TREE_ENV, raising=False)
    (tmp_path / "FreeRTOS-Kernel").mkdir()
    (tmp_path / "FreeRTOS-Kernel" / "tasks.c").write_text("")
    with pytest.raises(harness.RigError, match="rig lwip: no lwip tree"):
        freertos.find_tree(str(tmp_path), freertos.Target("lwip"))


def test_the_mps2_config_path_may_not_hold_a_blank(tmp_path):
    w = board.Wiring(ifname="lan9118", mac=board.GUEST_MAC, tap="rtsrigXt", bridge="rtsrigXb")
    argv = board.device_argv(MPS2, Path("/i.elf"), tmp_path / "d.conf", w)
    assert argv[0].endswith("tools/mps2_run.sh") and "tap,ifname=rtsrigXt," in argv[-1]
    with pytest.raises(harness.RigError, match="blank"):
        board.device_argv(MPS2, Path("/i.elf"), tmp_path / "a b" / "r" / "x" / "d.conf", w)
    # the POSIX program takes any path
    assert board.device_argv(freertos.Target(), Path("/p"), Path("/a b/d.conf"), w)[1] == (
        "/a b/d.conf")


def test_host_phases_onto_the_guest_clock():
    assert console.host_to_device([], [5, 7]) == [5, 7]  # POSIX: one clock
    # the guest at half the host's pace between 1 s and 3 s of host time
    syncs = [(1_000_000_000, 100, 1), (3_000_000_000, 1_000_000_100, 1000)]
    got = console.host_to_device(syncs, [2_000_000_000, 0, 4_000_000_000])
    assert got[0] == 500_000_100
    # beyond the lines: a ns per ns (the guest never runs ahead of the host)
    assert got[1] == 100 - 1_000_000_000 and got[2] == 2_000_000_100


def _guest(raw: dict, rd: Path, speed: float = 0.5, g0: int = 3_000_000_000) -> dict:
    """The fake run of test_rig_freertos moved onto a guest clock running at ``speed`` of
    the host's: the cycles and snapshots re-timed, the phases mapped, TAP samples added."""
    t0 = raw["bounds_ns"][0][0]

    def g(h: int) -> int:
        return int(g0 + (h - t0) * speed) if h else 0

    cyc = np.fromfile(rd / "cycles.bin", dtype="<u8").reshape(-1, 4).astype(np.int64)
    np.array([[g(int(x)) for x in row] for row in cyc], dtype="<u8").tofile(rd / "cycles.bin")
    d = raw["device"]
    for s in d["snapshots"]:
        s["t_ns"] = g(s["t_ns"])
    raw["device_bounds_ns"] = [[g(a), g(b)] for a, b in raw["bounds_ns"]]
    raw["target"] = {"stack": "plustcp", "board": "mps2-an385", "clock": "guest"}
    # the NIC took 1000 frames per 100 ms snapshot; 500 more per attack snapshot into the TAP
    tap = [("start", 0), ("idle_before", 0), ("idle_before_end", 10_000),
           ("attack", 10_000), ("attack_end", 25_000), ("idle_after", 25_000),
           ("idle_after_end", 35_000), ("end", 35_000)]  # fmt: skip
    raw["tap"] = [{"at": w, "tx_packets": n, "tx_dropped": 0} for w, n in tap]
    d["netif"]["nic_frames"] = 30_000
    taken = d["flows"]["hp"]["delivered"]  # every frame of the flow the driver took
    d["flows"]["hp"]["shield"] = dict.fromkeys(("queued", "recycled", "server_drops"), 0)
    d["flows"]["hp"]["shield"].update(frames=taken, server_admitted=taken)
    d["late_on_clock"] = 0
    return raw


def test_summary_on_the_guest_clock(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    host = freertos.summarize(raw, dev, rd)
    raw = _guest(json.loads(json.dumps(raw)), rd)
    s = freertos.summarize(raw, dev, rd)
    assert (s["board"], s["clock"]) == ("mps2-an385", "guest")
    ph = s["phases"]
    # the same cycles, snapshots and sends as on the host, each on its own clock
    for p in freertos.PHASES:
        assert ph[p]["critical"]["misses"] == host["phases"][p]["critical"]["misses"]
        assert ph[p]["flows"]["hp"] == host["phases"][p]["flows"]["hp"]
        assert ph[p]["device_seconds"] == pytest.approx(0.5)
    assert ph["attack"]["dropped"]["flow_server"] == host["phases"]["attack"]["dropped"][
        "flow_server"]
    # the two late cycles ended more than a period after their release on the guest's clock
    # too (half the host's lateness: the fake's times were halved)
    assert ph["attack"]["critical"]["late_on_clock"] == 0
    assert ph["attack"]["critical"]["missed_or_late"] == 2
    # the emulated NIC: frames into the TAP minus frames the driver took
    assert ph["attack"]["frames_into_nic"] == 15_000
    assert ph["attack"]["dropped"][freertos.NIC_FIFO_FULL] == 15_000 - ph["attack"]["frames_at_nic"]
    assert s["totals"]["offered"] == 35_000
    assert s["totals"]["dropped"][freertos.NIC_FIFO_FULL] == 5_000
    assert s["flows"]["hp"]["latency_us"] == {"p50": None, "p99": None, "max": None}
    assert s["flows"]["hp"]["taken_by_driver"] == s["flows"]["hp"]["delivered"]


def test_guest_claims_count_what_the_driver_took(tmp_path):
    """On the emulated board the high-priority claim reads: every frame of the flow the
    driver took from the NIC was delivered (the NIC's own drops are the board's); a late
    cycle on the guest clock counts as a miss."""
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(_guest(raw, rd), dev, rd)
    sim = {"critical": {"misses": 0, "cycles": 300, "lateness_max_pct": 0.0}, "flows": {"hp": {
        "offered": 100, "delivered": 60, "dropped_by": {"ring_full": 40}}}}  # fmt: skip
    c = {x["claim"].split(": ", 1)[1]: x for x in freertos.claims({"protected": sim}, [s], "hp")}
    kept = c["the high-priority flow keeps being delivered (every frame of it the driver took "
             "from the NIC)"]  # fmt: skip
    assert kept["simulation"] and kept["real_stack"] and kept["confirmed"]
    # the fake's attack lost two deadlines: not confirmed on the real stack
    assert c["the critical task misses no deadline"]["real_stack"] is False
    comp = freertos.comparison([s], {"protected": sim}, dev)
    assert comp["target"]["board"] == "mps2-an385"
    assert comp["runs"][0]["hp_taken_by_driver"] == s["flows"]["hp"]["taken_by_driver"]


@pytest.mark.parametrize("verb", ["freertos-tcp", "lwip"])
def test_cli_board_is_checked(capsys, tmp_path, verb):
    msg = rig_error(capsys, ["rig", verb, "--board", "esp32", "--out", str(tmp_path / "o")])
    assert "--board" in msg and "mps2-an385" in msg
    assert not (tmp_path / "o").exists()


def test_cli_lwip_not_root(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    msg = rig_error(capsys, ["rig", "lwip", "--board", "mps2-an385", "--out", str(tmp_path / "o")])
    assert "needs root" in msg


def _lwip(raw: dict) -> dict:
    """The fake run as lwIP's: its own counters beside the interface's, whole run and in
    each 100 ms snapshot (pbuf_pool_max_used a level, the rest counts)."""
    raw["target"] = {"stack": "lwip", "board": "posix", "clock": "host"}
    names = ["pbuf_pool_err", "pbuf_pool_max_used", "tcpip_inpkt_err", "link_drop"]
    d = raw["device"]
    for i, s in enumerate(d["snapshots"]):
        s["stack"] = [0, min(48, 10 + i), 7 * i, 7 * i]
    d["stack"] = {"names": names, "values": d["snapshots"][-1]["stack"]}
    d["threads_cpu_ns"] = {"tcpip_threa#5": 20_000_000, "rts-lwip-rx#6": 10_000_000,
                           "critical#7": 600_000_000}  # fmt: skip
    return raw


def test_plustcp_levels_are_levels(tmp_path):
    """FreeRTOS-Plus-TCP's own levels (rts_net_plustcp.c): the buffers' and the IP queue's
    high-water marks and the buffers in use when asked, each phase's value at its end."""
    raw, dev, rd = _fake_run(tmp_path, protect=False)
    names = ["buffers_max_used", "ip_queue_max_used", "buffers_used_now"]
    d = raw["device"]
    for i, snap in enumerate(d["snapshots"]):
        snap["stack"] = [min(64, 2 * i), min(60, i), i % 7]
    d["stack"] = {"names": names, "values": d["snapshots"][-1]["stack"]}
    s = freertos.summarize(raw, dev, rd)
    att = s["phases"]["attack"]["stack_counters"]  # snapshots 10 to 20
    assert att == {"buffers_max_used": 40, "ip_queue_max_used": 20, "buffers_used_now": 20 % 7}


def test_lwip_counters_beside_libshields(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=False)
    s = freertos.summarize(_lwip(raw), dev, rd)
    assert (s["target"], s["stack"]) == ("lwip", "lwip")
    assert s["stack_counters"] == {"pbuf_pool_err": 0, "pbuf_pool_max_used": 40,
                                   "tcpip_inpkt_err": 210, "link_drop": 210}  # fmt: skip
    att = s["phases"]["attack"]["stack_counters"]
    # counts are the phase's (snapshots 10 to 20), a level its value at the phase's end
    assert att["tcpip_inpkt_err"] == 70 and att["link_drop"] == 70
    assert att["pbuf_pool_max_used"] == 30
    # lwIP's protocol processing: tcpip_thread and the adapter's receive task
    assert s["cpu_per_frame_ns"]["ip_task"] == pytest.approx(30_000_000 / 3000)
    comp = freertos.comparison([s], {}, dev)
    assert comp["runs"][0]["stack_counters_attack"]["tcpip_inpkt_err"] == 70
    html = freertos.write_report(tmp_path, comp, []).read_text()
    assert "lwIP under real floods" in html and "Where the frames were lost" in html
    assert "lwIP: tcpip_inpkt_err" in html


def test_lwip_udp_mailbox_drops_are_mailbox_full(tmp_path):
    """The device's count of the datagrams a UDP socket's full mailbox dropped is the
    simulator's mailbox_full, whole run and per phase; lwIP's mbox_err (every refused
    mailbox post, TCP's deferrals too) stays a stack counter, mapped to no reason."""
    from rtshield.engine import enum_names

    raw, dev, rd = _fake_run(tmp_path, protect=False)
    raw = _lwip(raw)
    d = raw["device"]
    d["stack"]["names"] += ["mbox_err", summary.LWIP_MAILBOX_FULL]
    for i, snap in enumerate(d["snapshots"]):
        snap["stack"] += [5 * i, 3 * i]
    d["stack"]["values"] = d["snapshots"][-1]["stack"]
    s = freertos.summarize(raw, dev, rd)
    assert summary.MAILBOX_FULL in enum_names("rtsim_drop", "RTSIM_DROP_")
    last = len(d["snapshots"]) - 1
    assert s["totals"]["dropped"][summary.MAILBOX_FULL] == 3 * last
    assert s["phases"]["attack"]["dropped"][summary.MAILBOX_FULL] == 30  # snapshots 10 to 20
    assert s["phases"]["attack"]["stack_counters"]["mbox_err"] == 50
    assert "mbox_err" not in s["phases"]["attack"]["dropped"]
    # a run without the count (Plus-TCP, or an lwIP run recorded before it) claims none
    praw, _, prd = _fake_run(tmp_path / "p", protect=False)
    plain = freertos.summarize(_lwip(praw), dev, prd)
    assert summary.MAILBOX_FULL not in plain["phases"]["attack"]["dropped"]


def test_plustcp_reports_no_stack_counters(tmp_path):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    s = freertos.summarize(raw, dev, rd)
    assert s["stack_counters"] == {} and "stack_counters" not in s["phases"]["attack"]
    html = freertos.write_report(tmp_path, freertos.comparison([s], {}, dev), []).read_text()
    assert "FreeRTOS-Plus-TCP under real floods" in html
    assert "Where the frames were lost" not in html


def test_console_reads_the_boards_lines():
    import io

    c = console.Console(io.StringIO(
        "ready\nsync 1000000000 1000\nWarning: The guest is now late by 1.0 to 2.0 seconds\n"
        "sync 3000000000 3000\ndone\n"))  # fmt: skip
    assert c.wait("done", 10) and c.wait("ready", 1)
    assert [g for _, g, _ in c.syncs] == [1_000_000_000, 3_000_000_000]
    assert c.last_other().startswith("Warning: The guest is now late")
    assert "reached 2.0 s of 14 s" in c.progress(14)
    assert console.Console(io.StringIO("ready\n")).progress(14) == ""  # POSIX: no sync lines


def test_console_gives_up_on_a_silent_guest():
    """A guest that prints nothing for ``stall_s`` is stuck: waiting for ``done`` ends then,
    not at the (long) limit a slow guest is given."""
    import os

    r, w = os.pipe()
    os.write(w, b"ready\nsync 5 5\n")
    try:
        c = console.Console(os.fdopen(r, "r"))
        assert c.wait("ready", 10)
        assert c.wait("done", 600, stall_s=0.5) is False
    finally:
        os.close(w)


def test_a_cycle_belongs_to_the_phase_it_was_released_in(tmp_path):
    """A cycle released near the attack's end and held past it (a stock path still
    draining the flood) is the attack's miss, not the next phase's."""
    raw, dev, rd = _fake_run(tmp_path, protect=False)
    cyc = np.fromfile(rd / "cycles.bin", dtype="<u8").reshape(-1, 4).astype(np.int64)
    rel = cyc[199, 0]  # released 10 ms before the attack ends
    cyc[199, 2], cyc[199, 3] = rel + 300_000_000, rel + 10_000_000  # ends 290 ms after it
    cyc.astype("<u8").tofile(rd / "cycles.bin")
    s = freertos.summarize(raw, dev, rd)
    assert [s["phases"][p]["critical"]["misses"] for p in freertos.PHASES] == [0, 3, 0]
    assert s["phases"]["attack"]["critical"]["lateness_max_pct"] == pytest.approx(2900.0)


def test_each_target_names_the_tools_its_build_runs():
    assert freertos.Target().build_tools == ["gcc", "patch"]  # Plus-TCP is patched
    assert freertos.Target("lwip").build_tools == ["gcc"]
    assert freertos.Target("lwip", "mps2-an385").build_tools == ["arm-none-eabi-gcc", "patch"]
    assert "qemu-system-arm" in MPS2.run_tools
    assert "qemu-system-arm" not in freertos.Target().run_tools
