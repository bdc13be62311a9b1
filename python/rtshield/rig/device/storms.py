"""The storms of a profile as the tools' command lines, and a storm's steps.

Every storm but the scan is sent by **trafgen** (netsniff-ng): it builds every
frame a storm needs -- Ethernet frames of an unused EtherType, ARP requests and
replies, ICMP echo requests, IPv4 fragments that never complete or overlap, TCP
SYNs, UDP datagrams -- with its checksums, so no frame needs scapy. A step at a
rate runs trafgen at full speed through the interface's queueing discipline
(``-q``), where a shaper holds the storm's frames to the rate, evenly spaced
(:mod:`rtshield.rig.pacing`, lent by :mod:`rtshield.rig.shaper`); trafgen's own
``--rate`` is not used: it sends each second's frames in one burst at the start
of the second. The shaper tells the storm's frames from every other frame of the
interface by the storm's own headers (:func:`storm_match`): the Ethernet storms'
EtherType, the ARP storms' padding (:data:`ARP_PAD`), the IPv4 storms' TTL to the
target (:data:`STORM_TTL`). Scans are **nmap**'s (SYN scan,
``--min-rate``/``--max-rate``), repeated until the step ends. trafgen is told not
to touch the host's IRQ affinity (``-Q``) nor its socket memory limits
(``--no-sock-mem``).

A step at ``"max"`` runs at ``--max-rate``'s cap (:data:`DEFAULT_CAP` by default),
held there like any other rate; with no cap it runs the tool at full speed
(trafgen straight to the driver, bypassing the queueing discipline, nmap at its
``-T5`` pace), unshaped.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rtshield.rig.pacing import nmap_pace
from rtshield.schema.profile import MAX, StormEntry

__all__ = [
    "DEFAULT_CAP",
    "Endpoints",
    "Step",
    "largest_frame",
    "plan_steps",
    "storm_argv",
    "storm_match",
    "tool_of",
]

#: ``--max-rate``'s default, packets/s: no step sends faster unless the user raises it.
DEFAULT_CAP = 50_000.0
#: An EtherType no stack handles (IEEE 802 local experimental 1): the Ethernet storms'.
EXPERIMENTAL_ETHERTYPE = 0x88B5
#: The IPv4 all-hosts group's MAC (224.0.0.1): every IPv4 host's NIC accepts it.
ALL_HOSTS_MAC = "01:00:5e:00:00:01"
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"
#: The TTL of the IPv4 storms' frames: no host's default (64 on Linux, 128 on Windows, 255
#: on many embedded stacks), so the shaper tells them from this host's own IPv4 frames to
#: the target (the monitors', the kernel's RSTs).
STORM_TTL = 250
#: The byte the ARP storms' frames are padded with to the Ethernet minimum (60 bytes, as a
#: NIC pads them on the wire anyway): the kernel's own ARP frames carry no such padding.
ARP_PAD = 0x5A
#: The bytes of that padding (an ARP payload of 28 bytes in a 42-byte frame).
_ARP_PAD_LEN = 60 - 42
_TRAFGEN_OPTS = ["--cpus", "1", "-Q", "--no-sock-mem", "-C"]


@dataclass(frozen=True)
class Endpoints:
    """Who sends through which interface to whom (this host's and the target's addresses)."""

    iface: str
    src_mac: str
    src_ip: str
    dst_mac: str
    dst_ip: str


@dataclass(frozen=True)
class Step:
    """One step of a ramp: the rate the profile asks (``"max"`` or packets/s), the rate
    the tool is told (``None``: full speed) and whether ``--max-rate`` lowered it."""

    profile_rate: Any
    rate: float | None
    capped: bool

    def as_dict(self) -> dict[str, Any]:
        return {"profile_rate": self.profile_rate, "rate_asked": self.rate, "capped": self.capped}


def tool_of(kind: str) -> str:
    """The program that sends storms of ``kind``."""
    return "nmap" if kind == "nmap" else "trafgen"


def plan_steps(rates: Sequence[Any], cap: float | None) -> list[Step]:
    """A ramp's steps under the cap ``cap`` (packets/s; ``None``: no cap): a rate above it,
    and ``"max"``, become the cap; a step the cap makes equal to the one before it is
    left out."""
    out: list[Step] = []
    for r in rates:
        if r == MAX:
            step = Step(MAX, cap, cap is not None)
        elif cap is not None and r > cap:
            step = Step(r, cap, True)
        else:
            step = Step(r, float(r), False)
        if out and out[-1].rate is not None and out[-1].rate == step.rate:
            continue
        out.append(step)
    return out


def _eth(ep: Endpoints, dst: str, ethertype: int | None = None) -> str:
    kind = f", type={ethertype:#06x}" if ethertype is not None else ""
    return f"eth(da={dst}, sa={ep.src_mac}{kind})"


def _ipv4(ep: Endpoints, extra: str = "") -> str:
    return f"ipv4(sa={ep.src_ip}, da={ep.dst_ip}, ttl={STORM_TTL}{extra})"


def trafgen_packet(storm: StormEntry, ep: Endpoints) -> str:
    """trafgen's packet configuration of a storm: one packet (two for the overlapping
    fragments, sent in turn and sharing their identification counter)."""
    k = storm.kind
    to_dev = _eth(ep, ep.dst_mac)
    if k in ("eth_broadcast", "eth_multicast"):
        dst = BROADCAST_MAC if k == "eth_broadcast" else ALL_HOSTS_MAC
        return f"{{ {_eth(ep, dst, EXPERIMENTAL_ETHERTYPE)}, fill(0x00, 46) }}"
    pad = f"fill({ARP_PAD:#04x}, {_ARP_PAD_LEN})"
    if k == "arp_request":
        return (f"{{ {_eth(ep, BROADCAST_MAC)}, arp(op=request, smac={ep.src_mac}, "
                f"sip={ep.src_ip}, tip={ep.dst_ip}), {pad} }}")
    if k == "arp_reply":
        return (f"{{ {to_dev}, arp(op=reply, smac={ep.src_mac}, sip={ep.src_ip}, "
                f"tmac={ep.dst_mac}, tip={ep.dst_ip}), {pad} }}")
    if k == "icmp_echo":
        return (f"{{ {to_dev}, {_ipv4(ep)}, icmp4(type=8, code=0, id=29281, seq=dinc()), "
                "fill(0x00, 18) }")
    if k == "ipv4_frag_incomplete":  # a first fragment (UDP header and 24 bytes), MF set
        return (f"{{ {to_dev}, {_ipv4(ep, ', id=dinc(), mf, proto=17')}, "
                "udp(sp=dinc(1024, 65535), dp=9), fill(0x00, 24) }")
    if k == "ipv4_frag_overlap":  # bytes 0-31 and 24-47 of one datagram
        first = (f"{{ {to_dev}, {_ipv4(ep, ', id=dinc(), mf, proto=17')}, "
                 "udp(sp=dinc(1024, 65535), dp=9), fill(0x41, 24) }")
        second = f"{{ {to_dev}, {_ipv4(ep, ', id=dinc(), frag=3, proto=17')}, fill(0x42, 24) }}"
        return f"{first} {second}"
    if k == "tcp_syn":
        return (f"{{ {to_dev}, {_ipv4(ep)}, tcp(sp=dinc(1024, 65535), dp={storm.port}, syn, "
                "seq=drnd(), window=65535) }")
    if k == "udp":
        fill = f", fill(0x00, {storm.size})" if storm.size else ""
        return f"{{ {to_dev}, {_ipv4(ep)}, udp(sp=dinc(1024, 65535), dp={storm.port}){fill} }}"
    raise ValueError(f"no trafgen packet for storm kind {k!r}")


def largest_frame(storm: StormEntry) -> int:
    """The bytes of ``storm``'s largest frame (its Ethernet header on): the UDP storm's
    grows with its payload; every other storm's fit in 100."""
    return 14 + 20 + 8 + storm.size if storm.kind == "udp" else 100


def storm_match(storm: StormEntry, ep: Endpoints) -> list[str] | None:
    """The ``tc filter`` selector (after ``protocol``) of ``storm``'s frames and of no other
    frame of ``ep.iface`` (``None``: the scan, which nmap paces)."""
    k = storm.kind
    if k == "nmap":
        return None
    if k in ("eth_broadcast", "eth_multicast"):
        return [f"{EXPERIMENTAL_ETHERTYPE:#06x}", "u32", "match", "u32", "0", "0"]
    if k in ("arp_request", "arp_reply"):
        word = f"{int.from_bytes(bytes([ARP_PAD]) * 4):#010x}"
        return ["arp", "u32", "match", "u32", word, "0xffffffff", "at", "28"]
    return ["ip", "u32", "match", "ip", "dst", f"{ep.dst_ip}/32", "match", "u8",
            str(STORM_TTL), "0xff", "at", "8"]  # fmt: skip


def storm_argv(storm: StormEntry, rate: float | None, ep: Endpoints) -> list[str]:
    """The command line of one step of ``storm`` at ``rate`` packets/s (``None``: full
    speed), through ``ep.iface`` to ``ep.dst_ip``. At a rate, trafgen sends at full speed
    through the queueing discipline, where the shaper holds it (:func:`storm_match`)."""
    if storm.kind == "nmap":
        pace = " " + " ".join(nmap_pace(rate)) if rate is not None else ""
        nmap = (
            f"nmap -e {shlex.quote(ep.iface)} -sS -n -Pn -T5 --max-retries 0 "
            f"-p {shlex.quote(storm.ports)}{pace} {shlex.quote(ep.dst_ip)}"
        )
        # one scan after the other until the step's timeout stops the loop
        return ["sh", "-c", f"while :; do {nmap} || sleep 1; done"]
    qdisc = ["-q"] if rate is not None else []
    return ["trafgen", "--dev", ep.iface, *_TRAFGEN_OPTS, *qdisc, trafgen_packet(storm, ep)]
