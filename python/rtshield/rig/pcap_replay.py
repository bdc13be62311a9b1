"""Replaying a scenario's ``pattern = "pcap"`` flow on the rig.

The replay is the simulator's: :func:`rtshield.pcap.replay` turns the
capture and the flow's ``scale``, ``skip`` and ``loop`` into frame times, so
the rig sends the frames the simulation feeds its NIC, at the same times
from the run's start. Each frame is rewritten to the rig's addresses
(:func:`rewrite`: Ethernet destination and source, IPv4 destination and
source, the IPv4 header checksum and the TCP/UDP checksum recomputed by
dpkt) and the rewritten frames go to a file that the sender — this file run
as a script in the attacker namespace, standard library only — sends
through an ``AF_PACKET`` socket on the attacker's veth at their times.

Bounded: at most :data:`MAX_FRAMES` frames and only those due before the
run's end; the sender stops at ``end_ns`` whatever is left. It prints the
frames it sent per phase and in all (the flow's ``offered``).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Most frames one replay sends in a run (a loop runs until the run ends).
MAX_FRAMES = 1_000_000
_REC = struct.Struct("<QI")  # frame time from the run's start (ns), length; then the bytes


def _mac(text: str) -> bytes:
    return bytes(int(x, 16) for x in text.split(":"))


def rewrite(frame: bytes, *, src_mac: str, dst_mac: str, src_ip: str, dst_ip: str) -> bytes:
    """``frame`` addressed from the rig's attacker to its device.

    Ethernet addresses always; for IPv4, the addresses and the checksums
    (IPv4 header, and TCP or UDP over the new pseudo-header). Other frames
    (ARP, IPv6, ...) keep everything past the Ethernet addresses.
    """
    import dpkt

    eth = dpkt.ethernet.Ethernet(frame)
    eth.dst, eth.src = _mac(dst_mac), _mac(src_mac)
    ip = eth.data
    if isinstance(ip, dpkt.ip.IP):
        ip.src, ip.dst = socket.inet_aton(src_ip), socket.inet_aton(dst_ip)
        ip.sum = 0
        if isinstance(ip.data, (dpkt.tcp.TCP, dpkt.udp.UDP)) and not (ip.mf or ip.offset):
            ip.data.sum = 0  # recomputed by dpkt on packing (unfragmented datagrams only)
    return bytes(eth)


def prepare(
    flow: Any, out: Path, end_s: float, *, src_mac: str, dst_mac: str, src_ip: str, dst_ip: str
) -> int:
    """Write ``flow``'s rewritten replay, frames due before ``end_s``, to ``out``;
    return how many frames it holds."""
    from rtshield.pcap import read_pcap, replay

    rp = replay(read_pcap(flow.pcap), scale=flow.scale, skip_ns=flow.skip_ns, loop=flow.loop)
    end_ns = int(end_s * 1e9)
    offs, acc = [], 0
    for ln in rp.lengths:
        offs.append(acc)
        acc += ln
    m = len(rp.times_ns)
    done: dict[int, bytes] = {}  # frame index -> rewritten (a loop sends them again)
    n = 0
    with open(out, "wb") as f:
        while n < MAX_FRAMES:
            i, rnd = n % m, n // m
            if rnd and not rp.period_ns:
                break  # one pass
            t = rp.times_ns[i] + rnd * rp.period_ns
            if t >= end_ns:
                break
            if i not in done:
                done[i] = rewrite(
                    rp.data[offs[i] : offs[i] + rp.lengths[i]],
                    src_mac=src_mac,
                    dst_mac=dst_mac,
                    src_ip=src_ip,
                    dst_ip=dst_ip,
                )
            fr = done[i]
            f.write(_REC.pack(t, len(fr)) + fr)
            n += 1
    return n


def read_frames(path: str) -> list[tuple[int, bytes]]:
    data = Path(path).read_bytes()
    out, off = [], 0
    while off + _REC.size <= len(data):
        t, n = _REC.unpack_from(data, off)
        off += _REC.size
        out.append((t, data[off : off + n]))
        off += n
    return out


def _mono() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def send(spec: dict[str, Any]) -> dict[str, Any]:
    """Send the frames of ``spec["frames"]`` on ``spec["ifname"]`` from ``spec["t0_ns"]``."""
    frames = read_frames(spec["frames"])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((spec["ifname"], 0))
    if spec.get("go"):  # started ahead: say so, then take t0_ns/end_ns/bounds from the go line
        print("ready", flush=True)
        spec = {**spec, **json.loads(sys.stdin.readline() or "{}")}
    bounds: Sequence[Sequence[int]] = spec["bounds"]
    t0, end = int(spec["t0_ns"]), int(spec["end_ns"])
    sent = [0] * len(bounds)
    total = errors = 0
    for t, fr in frames:
        at = t0 + t
        if at >= end:
            break
        while (dt := at - _mono()) > 0:
            time.sleep(dt / 1e9)
        now = _mono()
        try:
            s.send(fr)
        except OSError:
            errors += 1
            continue
        total += 1
        for k, (lo, hi) in enumerate(bounds):
            if lo <= now < hi:
                sent[k] += 1
    s.close()
    return {"sent": sent, "total": total, "errors": errors}


def main(argv: Sequence[str]) -> int:
    print(json.dumps(send(json.loads(argv[1]))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
