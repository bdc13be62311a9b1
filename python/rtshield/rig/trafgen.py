"""Paced frames: trafgen's frames and command line, and nmap's pace.

One home for what the rig sends at a chosen rate. **trafgen** (netsniff-ng) paces
its frames at ``--rate N pps`` itself, so the rate asked is the rate sent (on the
development VM, ``hping3 -i u100`` and ``mausezahn -d 100`` sent about 4 900 and
4 500 of the 10 000 frames/s asked: they sleep between frames); a scan is paced
by nmap's own ``--min-rate``/``--max-rate``. trafgen is told not to touch the
host's IRQ affinity (``-Q``) nor its socket memory limits (``--no-sock-mem``).

Used by the served-device rig's storms (:mod:`rtshield.rig.device.storms`) and by
the attacks of the rig's own targets at a chosen rate (:mod:`rtshield.rig.attacks`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALL_HOSTS_MAC",
    "BROADCAST_MAC",
    "EXPERIMENTAL_ETHERTYPE",
    "Endpoints",
    "arp_request",
    "eth",
    "ipv4",
    "nmap_pace",
    "pps",
    "tcp_syn",
    "trafgen_argv",
]

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


def pps(rate: float) -> int:
    """The whole packets/s a tool is told for ``rate`` (at least 1)."""
    return max(1, round(rate))


def eth(ep: Endpoints, dst: str, ethertype: int | None = None) -> str:
    """trafgen's Ethernet header from ``ep``'s MAC to ``dst``."""
    kind = f", type={ethertype:#06x}" if ethertype is not None else ""
    return f"eth(da={dst}, sa={ep.src_mac}{kind})"


def ipv4(ep: Endpoints, extra: str = "") -> str:
    """trafgen's IPv4 header from ``ep``'s address to the target's."""
    return f"ipv4(sa={ep.src_ip}, da={ep.dst_ip}, ttl=64{extra})"


def arp_request(ep: Endpoints, sip: str | None = None, tip: str | None = None) -> str:
    """A broadcast ARP request from ``ep``'s MAC, for ``tip`` (default the target's
    address) from ``sip`` (default ``ep``'s): with ``sip == tip`` a gratuitous one."""
    return (
        f"{{ {eth(ep, BROADCAST_MAC)}, arp(op=request, smac={ep.src_mac}, "
        f"sip={sip or ep.src_ip}, tip={tip or ep.dst_ip}) }}"
    )


def tcp_syn(ep: Endpoints, port: int) -> str:
    """A TCP SYN to the target's ``port`` from a source port counting up, random sequence."""
    return (
        f"{{ {eth(ep, ep.dst_mac)}, {ipv4(ep)}, tcp(sp=dinc(1024, 65535), dp={port}, syn, "
        "seq=drnd(), window=65535) }"
    )


def trafgen_argv(iface: str, packet: str, rate: float | None) -> list[str]:
    """trafgen sending ``packet`` (its configuration) through ``iface`` at ``rate``
    packets/s (``None``: as fast as it can), until it is stopped."""
    argv = ["trafgen", "--dev", iface, *_TRAFGEN_OPTS]
    if rate is not None:
        argv += ["--rate", f"{pps(rate)}pps"]
    return [*argv, packet]


def nmap_pace(rate: float) -> list[str]:
    """nmap's options that hold a scan at ``rate`` probes/s."""
    return ["--min-rate", str(pps(rate)), "--max-rate", str(pps(rate))]
