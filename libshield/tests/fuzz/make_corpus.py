#!/usr/bin/env python3
"""Write the seed corpora of the fuzz targets (deterministic; re-run after
changing it and commit the output):

  corpus/fuzz_classifier/  valid frames: ARP, ICMP echo, TCP SYN, UDP,
                           VLAN-tagged UDP, an IPv4 fragment, IPv4 with
                           options, IPv6, and truncated copies of them
  corpus/fuzz_flow_queue/  operation sequences (3 bytes per operation)
  corpus/fuzz_nic_moderation/  NIC scripts (bind, frames, timers expiring,
                           reconfiguration, release) and parameter checks
  corpus/fuzz_sim_config/  the front end's configuration shapes (edge NIC,
                           receive path, multiqueue NIC; each mitigation)
                           unedited, and with a few fields edited
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
    # Shield phase with priority changes: op 2 is setsockopt(priority).
    prio = bytes([24, 12, 5, 0x88]) + b"".join(
        bytes([0x10, b, b % 3, 2, 4 + b % 3, (b * 5) % 33, 0, b + 1, 2]) for b in range(12))
    (qdir / "shield_prio_change.bin").write_bytes(prio + bytes([3, 0, 0] * 4))

    ndir = HERE / "corpus" / "fuzz_nic_moderation"
    ndir.mkdir(parents=True, exist_ok=True)
    # First byte: time (0 = 0 ns); op 0 binds (proto sel, port sel, size u16,
    # frames, t_abs, t_pack as time selectors, flow, prio); ops 6..9 send
    # frames after a step (sel < 0x80: sel x 100 ns), burst, proto, port.
    t_small, t_3b = 0x04, 0x01  # 1 ns; then 3-byte times
    bind_udp = bytes([0, 0, 0, 0, 0, 16, 4, t_3b, 0, 0xC3, 0x50, t_3b, 0, 0x27, 0x10, 4, 9])
    bind_tcp = bytes([0, 1, 1, 0, 8, 0, t_3b, 0, 0x4E, 0x20, t_small, 5, 3])
    frames_udp = bytes([6, 10, 7, 0, 0])
    frames_tcp = bytes([7, 100, 3, 1, 1])
    flood = bytes([0]) + bind_udp + bind_tcp + frames_udp * 6 + frames_tcp * 4
    (ndir / "bind_and_flood.bin").write_bytes(flood)
    reconf = bytes([2, 0, 0, 0, 2, 1, 0, 3, t_small, 0]) + bytes([3, 1]) + bytes([1, 0, 0])
    (ndir / "reconfigure_release.bin").write_bytes(
        bytes([0]) + bind_udp + bind_tcp + frames_udp * 3 + reconf + frames_tcp * 3)
    near_top = bytes([0, 0, 0, 0, 0, 8, 2, 3, 0, 10, 3, 0, 20, 2, 1, 1])
    late_frames = bytes([6, 0x83, 0, 0, 4, 0, 0]) * 3
    (ndir / "timers_near_top.bin").write_bytes(bytes([3, 0, 0, 0x3F]) + near_top + late_frames)
    params = bytes([0xC0, 1, 0x10, 3, 0]) + bytes(
        [0, 8, 1, 0, 0, 100, 1, 0, 0x27, 0x10, 1, 0, 0x13, 0x88, 1, 0, 3, 0xE8])
    (ndir / "params_check.bin").write_bytes(params)

    sdir = HERE / "corpus" / "fuzz_sim_config"
    sdir.mkdir(parents=True, exist_ok=True)
    # Byte 0: base (mod 3: edge, receive path, multiqueue; div 3 mod 8: the
    # mitigation kind); byte 1: edits (mod 16), each (field, [index], value).
    for base in range(24):
        (sdir / f"base_{base:02d}.bin").write_bytes(bytes([base, 0]))
    # One edit: fields[50] (flows[].rates_pps[0] in fuzz_sim_config.c's table;
    # re-check the index when the table changes), flow 1, 1e9 frames/s.
    (sdir / "multiqueue_flood.bin").write_bytes(bytes([2, 1, 50, 0x01, 0x21]))
    # The campaign's finding of 26 November 2026 (sim.test_config_fuzz,
    # test_multiqueue_superseded_timers): fields[94] (nic_queues[].t_pack_ns)
    # of queue 1 = 1 ns, fields[51] (flows[].rates_pps[1]) of flow 1 = 1e9.
    (sdir / "multiqueue_superseded_timers.bin").write_bytes(bytes([2, 2, 94, 1, 0x05, 51, 1, 0x21]))
    # Its second (test_rearmed_timer_flood): the receive path with Burst
    # Mitigation, flow 0 at 1e12 frames/s, no ISR entry cost.
    (sdir / "rearmed_timer_flood.bin").write_bytes(
        bytes([0x34, 0xE5, 0x30, 0xE5, 0x18, 0x32, 0x18, 0xE5, 0x18, 0x36, 0x18, 0x0F]))
    # Its third (test_every_cost_non_negative): a negative deferred
    # invalidation cost, which delivered packets before they arrived.
    (sdir / "negative_cost.bin").write_bytes(bytes.fromhex(
        "5b3433113818c6901bffffffffffffffcc902300a0620000ffffffffffffffff"
        "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
    ))


if __name__ == "__main__":
    main()

