"""What the rig runs against a device: the attacks' tools and the CPU load.

The attacks are those of Section 4 of the industrial-architectures study: a
SYN flood (hping3), an ARP flood (mausezahn) and a full SYN scan (nmap), each
from the attacker's namespace at full rate (:data:`.host.TOOLS` names their
packages). At a chosen rate the same tools run: a flood at full rate with the
attacker's interface letting its frames out at the rate asked
(:func:`flood_shaper`), the scan held at it by nmap (:mod:`.pacing`).
:func:`count_flood_in` reads an attack's own packets from the device's ingress
counters (:class:`.counters.Counters`).
"""

from __future__ import annotations

from typing import Any

from rtshield.errors import UsageError
from rtshield.rig.network import ATTACKER_ADDR, DEVICE_ADDR, LISTEN_PORT
from rtshield.rig.pacing import nmap_pace, shaper_commands

__all__ = [
    "ATTACKS",
    "ATTACK_TOOL",
    "RATE_RANGE",
    "arp_flood_argv",
    "attack_argv",
    "check_rate",
    "count_flood_in",
    "flood_shaper",
    "nmap_scan_argv",
    "parse_rates",
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


#: The rates an attack may be asked for, packets/s: a frame a second up to what a
#: veth pair carries (a full-rate ARP flood reached ~130 000 frames/s at the device).
RATE_RANGE = (1.0, 1_000_000.0)


def check_rate(rate: float, what: str = "--rate") -> float:
    """``rate`` (packets/s) if it is one the rig can send, else :class:`UsageError`."""
    lo, hi = RATE_RANGE
    if not (lo <= rate <= hi):  # also NaN
        raise UsageError(
            f"{what}: {rate:g} pkt/s is outside {lo:g}-{hi:,.0f} pkt/s (a flood's rate)"
        )
    return rate


def parse_rates(text: str, option: str = "--rates") -> list[float | None]:
    """A list of flood rates, packets/s, ``max`` for full rate (``None``), in the order
    given: each a rate :func:`check_rate` accepts, none twice; else :class:`UsageError`."""
    out: list[float | None] = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        if word.lower() == "max":
            rate = None
        else:
            try:
                rate = float(word)
            except ValueError:
                raise UsageError(
                    f"{option}: {word!r} is not a rate (packets/s, or max for full rate)"
                ) from None
            check_rate(rate, option)
            rate = float(round(rate))
        if rate in out:
            raise UsageError(f"{option}: {word} is given twice")
        out.append(rate)
    if not out:
        raise UsageError(f"{option}: give at least one rate (packets/s, or max)")
    return out


def attack_argv(attack: str, iface: str, rate: float | None = None) -> list[str]:
    """The command line of one of :data:`ATTACKS` (``iface``: the attacker's interface,
    for the ARP flood): the tool at full rate; at ``rate`` packets/s the scan is held
    at it by nmap, a flood is the same command (:func:`flood_shaper` holds it)."""
    if rate is not None:
        check_rate(rate)
    if attack == "syn":
        return syn_flood_argv()
    if attack == "arp":
        return arp_flood_argv(iface)
    return nmap_scan_argv() + ([] if rate is None else nmap_pace(rate))


def flood_shaper(attack: str, iface: str, rate: float | None) -> list[list[str]]:
    """The ``tc`` commands that hold ``attack``'s frames leaving ``iface`` to ``rate``
    packets/s (:func:`.pacing.shaper_commands`: the SYNs to the listener, the ARP
    requests), or none (full rate, or the scan, which nmap paces)."""
    if rate is None or attack == "nmap":
        return []
    check_rate(rate)
    match = (
        ["ip", "u32", "match", "ip", "protocol", "6", "0xff", "match", "ip", "dport",
         str(LISTEN_PORT), "0xffff"]
        if attack == "syn"
        else ["arp", "u32", "match", "u32", "0", "0"]
    )  # fmt: skip
    return shaper_commands(iface, rate, match)


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
