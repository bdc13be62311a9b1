"""The storms of a profile as the tools' command lines, and a storm's steps.

Every storm but the scan is sent by **trafgen** (netsniff-ng): it holds its
frames to ``--rate N pps`` itself, so the rate asked is the rate sent over each
second (on the development VM, ``hping3 -i u100`` and ``mausezahn -d 100`` sent
about 4 900 and 4 500 of the 10 000 frames/s asked: they sleep between frames) --
but each second's frames leave in one burst at its start, not evenly spaced
(:mod:`rtshield.rig.pacing`, measured on the rig's own targets) -- and it builds
every frame a storm needs -- Ethernet frames of an unused EtherType, ARP
requests and replies, ICMP echo requests, IPv4 fragments that never complete or
overlap, TCP SYNs, UDP datagrams -- with its checksums. Scans are **nmap**'s
(SYN scan, ``--min-rate``/``--max-rate``), repeated until the step ends. No
frame needs scapy. trafgen is told not to touch the host's IRQ affinity
(``-Q``) nor its socket memory limits (``--no-sock-mem``).

A step at ``"max"`` runs the tool at full speed (trafgen without ``--rate``,
nmap at its ``-T5`` pace) unless ``--max-rate`` caps it, which it does by
default (:data:`DEFAULT_CAP`).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rtshield.rig.pacing import nmap_pace, pps
from rtshield.schema.profile import MAX, StormEntry

__all__ = [
    "DEFAULT_CAP",
    "Endpoints",
    "Step",
    "plan_steps",
    "storm_argv",
    "tool_of",
]

#: ``--max-rate``'s default, packets/s: no step sends faster unless the user raises it.
DEFAULT_CAP = 50_000.0
#: An EtherType no stack handles (IEEE 802 local experimental 1): the Ethernet storms'.
EXPERIMENTAL_ETHERTYPE = 0x88B5
#: The IPv4 all-hosts group's MAC (224.0.0.1): every IPv4 host's NIC accepts it.
ALL_HOSTS_MAC = "01:00:5e:00:00:01"
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"
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
    return f"ipv4(sa={ep.src_ip}, da={ep.dst_ip}, ttl=64{extra})"


def trafgen_packet(storm: StormEntry, ep: Endpoints) -> str:
    """trafgen's packet configuration of a storm: one packet (two for the overlapping
    fragments, sent in turn and sharing their identification counter)."""
    k = storm.kind
    to_dev = _eth(ep, ep.dst_mac)
    if k in ("eth_broadcast", "eth_multicast"):
        dst = BROADCAST_MAC if k == "eth_broadcast" else ALL_HOSTS_MAC
        return f"{{ {_eth(ep, dst, EXPERIMENTAL_ETHERTYPE)}, fill(0x00, 46) }}"
    if k == "arp_request":
        return (f"{{ {_eth(ep, BROADCAST_MAC)}, arp(op=request, smac={ep.src_mac}, "
                f"sip={ep.src_ip}, tip={ep.dst_ip}) }}")
    if k == "arp_reply":
        return (f"{{ {to_dev}, arp(op=reply, smac={ep.src_mac}, sip={ep.src_ip}, "
                f"tmac={ep.dst_mac}, tip={ep.dst_ip}) }}")
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


def storm_argv(storm: StormEntry, rate: float | None, ep: Endpoints) -> list[str]:
    """The command line of one step of ``storm`` at ``rate`` packets/s (``None``: full
    speed), through ``ep.iface`` to ``ep.dst_ip``."""
    if storm.kind == "nmap":
        pace = " " + " ".join(nmap_pace(rate)) if rate is not None else ""
        nmap = (
            f"nmap -e {shlex.quote(ep.iface)} -sS -n -Pn -T5 --max-retries 0 "
            f"-p {shlex.quote(storm.ports)}{pace} {shlex.quote(ep.dst_ip)}"
        )
        # one scan after the other until the step's timeout stops the loop
        return ["sh", "-c", f"while :; do {nmap} || sleep 1; done"]
    argv = ["trafgen", "--dev", ep.iface, *_TRAFGEN_OPTS]
    if rate is not None:
        argv += ["--rate", f"{pps(rate)}pps"]
    return [*argv, trafgen_packet(storm, ep)]
