"""The shipped MODBUS/TCP captures are exactly what tools/gen_modbus_pcaps.py writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dpkt
import pytest

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "scenarios" / "behnke_hardware"

pytest.importorskip("scapy")


def test_regenerated_captures_are_byte_identical(tmp_path):
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_modbus_pcaps.py"), "--out",
                    str(tmp_path)], check=True, capture_output=True, timeout=120)
    made = sorted(p.name for p in tmp_path.glob("*.pcap"))
    assert made == sorted(p.name for p in SHIPPED.glob("*.pcap"))
    assert len(made) == 4
    for name in made:
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name


@pytest.mark.parametrize("name, port, rate", [("modbus_q0.pcap", 502, 50),
                                              ("modbus_q3.pcap", 3502, 200)])
def test_captures_are_modbus_polls(name, port, rate):
    with open(SHIPPED / name, "rb") as fh:
        recs = list(dpkt.pcap.Reader(fh))
    assert len(recs) == 2 * rate  # two seconds of polls
    fcs = set()
    for _, raw in recs:
        tcp = dpkt.ethernet.Ethernet(raw).data.data
        assert tcp.dport == port
        # MBAP: protocol id 0, length = unit id + PDU
        assert tcp.data[2:4] == b"\0\0"
        assert int.from_bytes(tcp.data[4:6], "big") == len(tcp.data) - 6
        fcs.add(tcp.data[7])
    assert fcs == {3, 16}
    span = recs[-1][0] - recs[0][0]
    assert abs((len(recs) - 1) / span - rate) < 0.05 * rate


def test_bursty_capture_is_regenerated_byte_identical(tmp_path):
    """scenarios/worstcase/modbus_bursty.pcap: `gen_modbus_pcaps.py --bursty` writes it,
    1000 MODBUS/TCP requests in bursts of 40 about 110 us apart, 36 per second."""
    subprocess.run([sys.executable, str(REPO / "tools" / "gen_modbus_pcaps.py"), "--bursty",
                    str(tmp_path)], check=True, capture_output=True, timeout=120)
    shipped = REPO / "scenarios" / "worstcase" / "modbus_bursty.pcap"
    assert (tmp_path / "modbus_bursty.pcap").read_bytes() == shipped.read_bytes()
    with open(shipped, "rb") as fh:
        ts = [t for t, _ in dpkt.pcap.Reader(fh)]
    assert len(ts) == 1000
    assert 30 < (len(ts) - 1) / (ts[-1] - ts[0]) < 40  # frames per second on average
    assert ts[39] - ts[0] < 0.0055  # a burst: 40 frames within a few ms
