"""pcap-replay flows of ``rtshield rig freertos-tcp``: the rewriting of a
capture's frames to the rig's addresses, the bounded replay file (the
simulator's frame times), and the flow in the target's config and summary."""

from __future__ import annotations

import socket
from pathlib import Path
from types import SimpleNamespace

import dpkt
import pytest

from rtshield.rig import freertos, harness, pcap_replay

PCAP_SCEN = Path(freertos.default_scenario()).with_name("pcap_device.toml")
CAPTURE = Path(__file__).resolve().parent.parent / "scenarios/behnke_hardware/modbus_q0.pcap"
ADDR = {
    "src_mac": "02:00:00:00:00:02",
    "dst_mac": "02:00:00:00:00:01",
    "src_ip": harness.ATTACKER_ADDR,
    "dst_ip": harness.DEVICE_ADDR,
}


def _frames():
    with open(CAPTURE, "rb") as f:
        return [bytes(b) for _, b in dpkt.pcap.Reader(f)]


def test_rewrite_addresses_and_checksums():
    orig = _frames()[0]
    new = pcap_replay.rewrite(orig, **ADDR)
    e = dpkt.ethernet.Ethernet(new)
    assert e.dst == bytes.fromhex("020000000001") and e.src == bytes.fromhex("020000000002")
    ip = e.data
    assert socket.inet_ntoa(ip.dst) == harness.DEVICE_ADDR
    assert socket.inet_ntoa(ip.src) == harness.ATTACKER_ADDR
    o = dpkt.ethernet.Ethernet(orig).data
    assert bytes(ip.data.data) == bytes(o.data.data)  # the MODBUS payload untouched
    assert (ip.data.sport, ip.data.dport, ip.data.seq) == (o.data.sport, o.data.dport, o.data.seq)
    assert len(new) == len(orig)
    # the checksums are right for the new addresses: recomputing them changes nothing
    chk = dpkt.ethernet.Ethernet(new)
    chk.data.sum = 0
    chk.data.data.sum = 0
    assert bytes(chk) == new
    assert ip.sum != o.sum and ip.data.sum != o.data.sum


def test_rewrite_keeps_non_ip_frames_past_the_macs():
    arp = bytes(12) + b"\x08\x06" + bytes(range(28))
    new = pcap_replay.rewrite(arp, **ADDR)
    assert new[:12] == bytes.fromhex("020000000001020000000002") and new[12:] == arp[12:]


def _flow(**kw) -> SimpleNamespace:
    """What prepare() reads of a scenario's pcap flow (rtshield.scenario.Flow's fields)."""
    return SimpleNamespace(
        **{"pcap": str(CAPTURE), "scale": 1.0, "skip_ns": 0, "loop": False, **kw}
    )


def test_replay_file_is_the_simulators_replay_bounded_by_the_run(tmp_path):
    from rtshield.pcap import read_pcap, replay

    out = tmp_path / "f.bin"
    n = pcap_replay.prepare(_flow(), out, 100.0, **ADDR)  # one pass (no loop): every frame
    rp = replay(read_pcap(str(CAPTURE)))
    got = pcap_replay.read_frames(str(out))
    assert n == len(got) == len(rp.times_ns) == 100
    assert [t for t, _ in got] == list(rp.times_ns)
    # looped and cut at the run's end: frames due before 5 s only
    n = pcap_replay.prepare(_flow(loop=True), out, 5.0, **ADDR)
    got = pcap_replay.read_frames(str(out))
    assert all(t < 5e9 for t, _ in got) and got[-1][0] > 4.5e9
    assert n == len(got) > 200  # ~50 pkt/s for 5 s: more than two passes
    lp = replay(read_pcap(str(CAPTURE)), loop=True)
    assert got[100][0] == lp.period_ns + lp.times_ns[0]
    # scale halves the gaps
    pcap_replay.prepare(_flow(scale=2.0), out, 100.0, **ADDR)
    half = pcap_replay.read_frames(str(out))
    assert half[-1][0] == pytest.approx(rp.times_ns[-1] / 2, abs=1)


def test_replay_count_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(pcap_replay, "MAX_FRAMES", 7)
    out = tmp_path / "f.bin"
    assert pcap_replay.prepare(_flow(loop=True), out, 100.0, **ADDR) == 7
    assert len(pcap_replay.read_frames(str(out))) == 7


def test_pcap_scenario_maps_to_the_target():
    dev = freertos.load_device(PCAP_SCEN, stock_priority=6)
    scn = dev.variants["unprotected"]
    assert [f.name for f in freertos.pcap_flows(scn)] == ["plc_replay"]
    # relative to the scenario file (the checkout's, or the installed package's copy)
    replayed = Path(freertos.pcap_flows(scn)[0].pcap)
    assert replayed == PCAP_SCEN.parent.parent.parent / "scenarios/behnke_hardware/modbus_q0.pcap"
    assert replayed.read_bytes() == CAPTURE.read_bytes()
    assert "plc_replay" not in [f["name"] for f in freertos.udp_flows(scn)]
    assert freertos.modbus_flows(scn) == []
    text = freertos.target_config(
        scn, False, ifname="x", mac="02:00:00:00:00:01", out=Path("/tmp/x"), seconds=9
    )
    assert "plc_replay" not in text  # bind = false: no socket of its own
