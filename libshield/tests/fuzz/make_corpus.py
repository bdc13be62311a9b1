#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (deterministic; re-run after
changing it and commit the output):

  corpus/fuzz_classifier/  valid frames: ARP, ICMP echo, TCP SYN, UDP,
                           VLAN-tagged UDP, an IPv4 fragment, IPv4 with
                           options, IPv6, and truncated copies of them
  corpus/fuzz_flow_queue/  operation sequences (3 bytes per operation)
"""

import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent
MACS = bytes.fromhex("020000000001") + bytes.fromhex("020000000002")


def eth(ethertype, payload, vlan=None):
    hdr = MACS
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    frame = hdr + struct.pack("!H", ethertype) + payload
    return frame + bytes(max(0, 60 - len(frame)))


def ipv4(proto, l4, src="10.0.0.2", frag=0, options=b""):
    ihl = 5 + len(options) // 4
    total = ihl * 4 + len(l4)
    src_b = bytes(int(x) for x in src.split("."))
    hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 0x1234, frag, 64, proto, 0, src_b,
                      bytes([10, 0, 0, 1]))
    return hdr + options + l4


def udp(sport, dport, payload=b"modbus"):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def tcp_syn(sport, dport):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x02, 1024, 0, 0)


def arp():
    return struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + MACS[6:] + bytes([10, 0, 0, 2]) + bytes(6) + bytes(
        [10, 0, 0, 1])


def frames():
    yield "arp", eth(0x0806, arp())
    yield "icmp_echo", eth(0x0800, ipv4(1, struct.pack("!BBHHH", 8, 0, 0, 1, 1) + b"ping"))
    yield "tcp_syn_502", eth(0x0800, ipv4(6, tcp_syn(40000, 502)))
    yield "udp_502", eth(0x0800, ipv4(17, udp(40000, 502)))
    yield "udp_502_src", eth(0x0800, ipv4(17, udp(40000, 502), src="192.168.0.1"))
    yield "udp_unbound", eth(0x0800, ipv4(17, udp(40000, 9999)))
    yield "vlan_udp_502", eth(0x0800, ipv4(17, udp(40000, 502)), vlan=0x2005)
    yield "vlan_arp", eth(0x0806, arp(), vlan=5)
    yield "fragment_mf", eth(0x0800, ipv4(17, udp(40000, 502, b"x" * 32), frag=0x2000))
    yield "fragment_offset", eth(0x0800, ipv4(17, b"y" * 24, frag=0x0003))
    yield "ipv4_options", eth(0x0800, ipv4(17, udp(1, 502), options=bytes([1, 1, 1, 0])))
    yield "ipv6", eth(0x86DD, bytes([0x60]) + bytes(39))


def main():
    cdir = HERE / "corpus" / "fuzz_classifier"
    cdir.mkdir(parents=True, exist_ok=True)
    for name, frame in frames():
        (cdir / f"{name}.bin").write_bytes(frame)
        # Truncated copies: inside the IPv4 header and inside the ports.
        (cdir / f"{name}_trunc30.bin").write_bytes(frame[:30])
        (cdir / f"{name}_trunc36.bin").write_bytes(frame[:36])
    qdir = HERE / "corpus" / "fuzz_flow_queue"
    qdir.mkdir(parents=True, exist_ok=True)
    # nbufs, ring, threshold, then (op, a, b) triples.
    take_push_pop = bytes([16, 8, 4]) + bytes(
        [0, 0, 0, 1, 0, 0x48, 0, 1, 0, 1, 1, 0x18, 4, 0, 0, 5, 0, 0, 6, 0, 0, 3, 0, 0])
    (qdir / "take_push_pop.bin").write_bytes(take_push_pop)
    fill = bytes([32, 16, 8]) + b"".join(bytes([0, b, 0, 1, b, (b * 37) & 0xFF]) for b in range(16))
    (qdir / "fill_then_recycle.bin").write_bytes(fill + bytes([3, 0, 0] * 6 + [4, 0, 0] * 6))
    # Driver script: byte 3 is the global capacity (mod 8) and, in bit 3, the
    # short circuit (driver_mix: off, driver_mix_sc: on).
    driver = bytes([20, 10, 3, 4]) + b"".join(bytes([b % 2, b, (b * 11) & 0xFF]) for b in range(30))
    tail = bytes([2, 0, 1, 3, 0, 1, 4, 0, 1, 5, 0, 200])
    (qdir / "driver_mix.bin").write_bytes(driver + tail)
    (qdir / "driver_mix_sc.bin").write_bytes(bytes([20, 10, 3, 4 | 8]) + driver[4:] + tail)


if __name__ == "__main__":
    main()
