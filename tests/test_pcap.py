"""pcap replay as a traffic source: the frames' times and bytes reach the NIC.

Captures are written here with dpkt's writer (an independent implementation
of the format); the replayed flows are checked through the simulator's own
counters: arrivals, the multiqueue NIC's classification of the real bytes,
scale, skip and loop, and determinism.
"""

from __future__ import annotations

import json

import dpkt
import pytest
from pcap_flows import cap_flow

from rtshield import pcap
from rtshield.engine import simulate
from rtshield.errors import UsageError
from rtshield.scenario import loads_scenario


def udp_frame(dport: int, size: int = 60) -> bytes:
    udp = dpkt.udp.UDP(sport=40000, dport=dport, data=b"")
    udp.ulen = 8
    ip = dpkt.ip.IP(src=bytes([192, 0, 2, 1]), dst=bytes([192, 0, 2, 10]), p=17, data=udp)
    ip.len = 20 + 8
    eth = dpkt.ethernet.Ethernet(src=b"\x02\0\0\0\0\1", dst=b"\x02\0\0\0\0\x0a",
                                 type=dpkt.ethernet.ETH_TYPE_IP, data=ip)
    raw = bytes(eth)
    return raw + b"\0" * max(0, size - len(raw))


def write_pcap(path, frames, *, nano=False, linktype=dpkt.pcap.DLT_EN10MB):
    with open(path, "wb") as fh:
        w = dpkt.pcap.Writer(fh, linktype=linktype, nano=nano)
        for ts, raw in frames:
            w.writepkt(raw, ts=ts)


def scenario(tmp_path, flows: str, duration="1s", queues=None) -> object:
    queues = queues or '[[nic.queues]]\nname = "q0"\nsize = 128\n'
    text = f"""
[scenario]
name = "p"
platform = "esp32-multiqueue-nic"
duration = "{duration}"
bin = "{duration}"
seed = 1
[nic]
kind = "multiqueue"
{queues}
{flows}
"""
    f = tmp_path / "s.toml"
    f.write_text(text)
    from rtshield.scenario import load_scenario

    return load_scenario(f)


def test_read_keeps_exact_times_and_bytes(tmp_path):
    frames = [(1000.000001, udp_frame(7)), (1000.000251, udp_frame(8, 100)),
              (1000.5, udp_frame(9))]
    write_pcap(tmp_path / "a.pcap", frames)
    cap = pcap.read_pcap(tmp_path / "a.pcap")
    assert cap.times_ns == (0, 250_000, 499_999_000)
    assert cap.frames == tuple(raw for _, raw in frames)


def test_nanosecond_capture(tmp_path):
    write_pcap(tmp_path / "n.pcap", [(5.0, udp_frame(7)), (5.000000123, udp_frame(7))],
               nano=True)
    assert pcap.read_pcap(tmp_path / "n.pcap").times_ns == (0, 123)


def test_replay_scale_skip_loop():
    cap = pcap.Capture("x", (0, 100, 200, 300), (b"a" * 14,) * 4)
    rp = pcap.replay(cap, scale=2.0, skip_ns=100)
    assert rp.times_ns == (0, 50, 100)
    assert rp.period_ns == 0
    loop = pcap.replay(cap, loop=True)
    assert loop.period_ns == 400  # span 300 + one mean gap
    with pytest.raises(UsageError, match="passes the last frame"):
        pcap.replay(cap, skip_ns=301)


def test_frames_arrive_and_the_nic_classifies_their_bytes(tmp_path):
    # 10 frames to the bound port 502 and 5 to port 9 (no map entry): the NIC
    # reads each frame's own port, whatever the flow's dst_port says.
    frames = [(i * 0.01, udp_frame(502 if i % 3 else 9)) for i in range(15)]
    write_pcap(tmp_path / "m.pcap", frames)
    sc = scenario(tmp_path, cap_flow("m.pcap"))
    s = simulate(sc).summary()
    f = s["flows"]["cap"]
    assert f["offered"] == 15
    assert f["dropped_by"]["nic_unregistered"] == 5
    assert f["received"] == 10
    assert s["totals"]["irq_raised"] == 10  # q0 is unmoderated: one per mapped frame


def test_scale_and_loop_set_the_count(tmp_path):
    write_pcap(tmp_path / "l.pcap", [(i * 0.1, udp_frame(502)) for i in range(5)])
    flows = cap_flow("l.pcap", "loop = true\nscale = 2.0\n")
    sc = scenario(tmp_path, flows, duration="2s")
    # period 0.5 s / 2 = 0.25 s: frames at 0, 50, ... ms; 8 passes in 2 s
    assert simulate(sc).summary()["flows"]["cap"]["offered"] == 40
    once = scenario(tmp_path, flows.replace("loop = true", "loop = false"), duration="2s")
    assert simulate(once).summary()["flows"]["cap"]["offered"] == 5


def test_replay_is_deterministic(tmp_path):
    write_pcap(tmp_path / "d.pcap", [(i * 0.003, udp_frame(502)) for i in range(50)])
    flows = cap_flow("d.pcap", "loop = true\n") + """
[[tasks]]
name = "w"
kind = "worker"
flow = "cap"
priority = 1
work = "50us"
"""
    a = simulate(scenario(tmp_path, flows)).summary()
    b = simulate(scenario(tmp_path, flows)).summary()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert a["flows"]["cap"]["delivered"] > 0


def test_receive_path_classifies_replayed_bytes(tmp_path):
    # With [rx], libshield's early demultiplexing reads the DMA'd frame: the
    # replayed frames to an unbound port end as no_socket, the bound ones
    # reach the worker.
    frames = [(i * 0.01, udp_frame(502 if i % 2 else 7)) for i in range(20)]
    write_pcap(tmp_path / "r.pcap", frames)
    text = f"""
[scenario]
name = "r"
platform = "zynq7000-freertos-tcp"
duration = "1s"
seed = 1
[rx]
enabled = true
[[flows]]
name = "cap"
protocol = "udp"
dst_port = 502
pattern = "pcap"
file = "{tmp_path / 'r.pcap'}"
[[tasks]]
name = "w"
kind = "worker"
flow = "cap"
priority = 1
work = "10us"
"""
    s = simulate(loads_scenario(text)).summary()
    f = s["flows"]["cap"]
    assert f["offered"] == 20
    assert f["delivered"] == 10
    assert f["delivered"] + f["dropped"] == 20
