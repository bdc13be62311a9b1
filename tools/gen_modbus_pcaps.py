#!/usr/bin/env python3
"""Write the MODBUS/TCP captures the Behnke hardware study replays.

Four receive traces, one per worker of the device (Behnke et al. §8.4: four
worker processes, each bound to its own MODBUS/TCP socket, flows of about
50 to 200 packets per second, §8.6): what the device's NIC receives from a
PLC that polls it cyclically. Each poll cycle is one request — three cycles
in four a Read Holding Registers (function 3, ten registers), every fourth
a Write Multiple Registers (function 16, four registers) — and each request
acknowledges the device's response to the previous one (its TCP ack number
advances by that response's length), as in a request/response exchange on
one connection. The responses leave the device and are not in a receive
trace. The poll period carries a PLC scan jitter of +-5 %.

Frames are built with scapy's MODBUS/TCP layers (scapy.contrib.modbus) and
written with scapy's pcap writer: classic pcap, Ethernet, microsecond
timestamps from a fixed base. Everything is drawn from a fixed seed, so the
files are the same bytes on every run (tests/test_pcap_gen.py checks the
shipped ones against a fresh run).

    tools/gen_modbus_pcaps.py [--out DIR]   (default: scenarios/behnke_hardware)
    tools/gen_modbus_pcaps.py --bursty DIR  (the bursty capture of scenarios/worstcase)
"""

from __future__ import annotations

import argparse
import random
import sys
from decimal import Decimal
from pathlib import Path

from scapy.contrib.modbus import (
    ModbusADURequest,
    ModbusPDU03ReadHoldingRegistersRequest,
    ModbusPDU10WriteMultipleRegistersRequest,
)
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.utils import PcapWriter

#: (file, the worker socket's port, requests per second). The rates span the
#: 50 (queue 0) to 200 (queue 3) packets per second of Behnke §8.6.
FLOWS = (
    ("modbus_q0.pcap", 502, 50),
    ("modbus_q1.pcap", 1502, 100),
    ("modbus_q2.pcap", 2502, 150),
    ("modbus_q3.pcap", 3502, 200),
)
SPAN_S = 2  #: seconds per capture (replayed in a loop)
JITTER = 0.05  #: PLC scan jitter, fraction of the poll period
SEED = 2024
BASE_S = 1_767_225_600  #: first timestamp: 2026-01-01T00:00:00Z
# The device's addresses are the simulator's (sim/src/frame.c: 192.0.2.1 and
# 02:72:74:73:00:01); the PLC is its default source host 192.0.2.100, whose
# MAC the simulator derives as 02:00 + the IPv4 address. TEST-NET-1 (RFC 5737).
PLC_MAC, DEVICE_MAC = "02:00:c0:00:02:64", "02:72:74:73:00:01"
PLC_IP, DEVICE_IP = "192.0.2.100", "192.0.2.1"
READ_REGS = 10  #: registers per read
WRITE_REGS = 4  #: registers per write


def _response_len(write: bool) -> int:
    """TCP payload of the device's response: MBAP (7) + the PDU."""
    if write:
        return 7 + 5  # function, start address, quantity
    return 7 + 2 + 2 * READ_REGS  # function, byte count, registers


def requests(port: int, times_us: list[int]) -> list[Ether]:
    """Poll requests to ``port`` at ``times_us`` (µs from BASE_S): three Read Holding
    Registers in four, every fourth a Write Multiple Registers, each acknowledging
    the device's response to the previous one."""
    sport = 49152 + port % 1000
    seq, ack = 1, 1
    frames = []
    for k, t_us in enumerate(times_us):
        write = k % 4 == 3
        if write:
            pdu = ModbusPDU10WriteMultipleRegistersRequest(
                startAddr=100, outputsValue=[(k * 7 + i) & 0xFFFF for i in range(WRITE_REGS)]
            )
        else:
            pdu = ModbusPDU03ReadHoldingRegistersRequest(startAddr=0, quantity=READ_REGS)
        adu = ModbusADURequest(transId=(k + 1) & 0xFFFF, unitId=1) / pdu
        pkt = (
            Ether(src=PLC_MAC, dst=DEVICE_MAC)
            / IP(src=PLC_IP, dst=DEVICE_IP, id=(port + k) & 0xFFFF, flags="DF")
            / TCP(sport=sport, dport=port, flags="PA", seq=seq, ack=ack, window=8192)
            / adu
        )
        pkt.time = Decimal(BASE_S) + Decimal(t_us) / Decimal(1_000_000)
        frames.append(pkt)
        seq += len(bytes(adu))
        ack += _response_len(write)
    return frames


def capture(port: int, rate: int, rng: random.Random) -> list[Ether]:
    """One flow's receive trace: SPAN_S seconds of poll requests."""
    period_us = 1_000_000 // rate
    times = []
    for k in range(SPAN_S * rate):
        jitter = int(round(rng.uniform(-JITTER, JITTER) * period_us))
        times.append(k * period_us + jitter + period_us // 2)
    return requests(port, times)


def bursty_times(
    cycles: int, burst: int, spacing_us: int, period_us: int, rng: random.Random
) -> list[int]:
    """A PLC that polls in bursts: every ``period_us`` (+-5 % scan jitter) it sends
    ``burst`` requests, one every ``spacing_us`` (+-25 %), then waits — a capture
    whose mean rate is far below its rate within a burst (the traffic arrival
    curves are for, docs/analysis.md)."""
    times = []
    for c in range(cycles):
        start = c * period_us + int(round(rng.uniform(-JITTER, JITTER) * period_us))
        t = max(start, times[-1] + 1 if times else 0)
        for _ in range(burst):
            times.append(t)
            t += max(1, int(round(spacing_us * rng.uniform(0.75, 1.25))))
    return [t + period_us for t in times]  # the first cycle's jitter stays after BASE_S


def write(path: Path, frames: list[Ether]) -> None:
    w = PcapWriter(str(path), linktype=1, sync=False)
    for pkt in frames:
        w.write(pkt)
    w.close()


#: The bursty capture of scenarios/worstcase/capture_*.toml: 25 cycles of 1.1 s,
#: 40 requests about 110 us apart in each (40 frames in about 4.4 ms, 36 per second on
#: average).
BURSTY = ("modbus_bursty.pcap", 502, 25, 40, 110, 1_100_000, 2026)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = Path(__file__).resolve().parent.parent
    ap.add_argument("--out", type=Path, default=here / "scenarios" / "behnke_hardware")
    ap.add_argument("--bursty", type=Path, metavar="DIR",
                    help="write the bursty capture (scenarios/worstcase) into DIR instead")
    args = ap.parse_args(argv)
    if args.bursty is not None:
        name, port, cycles, burst, spacing, period, seed = BURSTY
        args.bursty.mkdir(parents=True, exist_ok=True)
        path = args.bursty / name
        write(path, requests(port, bursty_times(cycles, burst, spacing, period,
                                                random.Random(seed))))
        print(f"{path}: {cycles * burst} frames, {path.stat().st_size} bytes")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    for name, port, rate in FLOWS:
        path = args.out / name
        write(path, capture(port, rate, rng))
        print(f"{path}: {SPAN_S * rate} frames, {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
