"""The interface the storms go through and the target behind it: checks, addresses,
and the counters the achieved rate is measured with.

The target must be on the interface's own link (the route to it goes through
``--iface`` without a gateway): the storms are Ethernet frames to its MAC. The
rate a step achieved is what the interface transmitted (its ``tx_packets``
counter, as ``ip -s link`` shows) minus the RSTs this host's TCP sent meanwhile
(``OutRsts`` of ``/proc/net/snmp``: the kernel's answers to the SYN-ACKs of a
SYN storm or a scan) minus the monitors' own packets, as measured in the
baseline.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from rtshield.rig.host import RigError, failure_line
from rtshield.rig.timing import mono_ns

__all__ = ["Counters", "check_target", "iface_mac", "neighbour_mac", "route_source"]

SYS_NET = Path("/sys/class/net")


def check_target(target: str) -> str:
    """``target`` must be a unicast IPv4 address."""
    try:
        a = ipaddress.IPv4Address(target)
    except ValueError:
        raise RigError(f"rig device: --target {target!r} is not an IPv4 address") from None
    if a.is_multicast or a.is_unspecified or a.is_loopback or str(a) == "255.255.255.255":
        raise RigError(f"rig device: --target {target} is not a device's unicast address")
    return str(a)


def _ip_json(*argv: str) -> list[dict]:
    p = subprocess.run(["ip", "-j", *argv], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        msg = failure_line(p)
        raise RigError(f"rig device: ip {' '.join(argv)}: {msg}")
    try:
        return json.loads(p.stdout or "[]")
    except ValueError:
        return []


def route_source(target: str, iface: str) -> str:
    """This host's address towards ``target``, which must be on ``iface``'s link."""
    if not (SYS_NET / iface).is_dir():
        raise RigError(f"rig device: --iface {iface}: no such interface")
    state = (SYS_NET / iface / "operstate").read_text().strip()
    flags = int((SYS_NET / iface / "flags").read_text().strip(), 16)
    if not flags & 1:  # IFF_UP
        raise RigError(f"rig device: --iface {iface} is down (operstate {state})")
    routes = _ip_json("route", "get", target)
    r = routes[0] if routes else {}
    if r.get("dev") != iface:
        raise RigError(
            f"rig device: the route to {target} goes through {r.get('dev', 'no interface')}, "
            f"not --iface {iface}"
        )
    if r.get("gateway"):
        raise RigError(
            f"rig device: {target} is behind the router {r['gateway']}; the target must be "
            f"on {iface}'s own link"
        )
    if not r.get("prefsrc"):
        raise RigError(f"rig device: --iface {iface} has no IPv4 address towards {target}")
    return r["prefsrc"]


def iface_mac(iface: str) -> str:
    return (SYS_NET / iface / "address").read_text().strip()


def neighbour_mac(target: str, iface: str) -> str | None:
    """The target's MAC from this host's neighbour table, if it answered ARP."""
    for n in _ip_json("neigh", "show", target, "dev", iface):
        if n.get("lladdr") and "FAILED" not in n.get("state", []):
            return n["lladdr"]
    return None


def _tx_packets(iface: str) -> int:
    return int((SYS_NET / iface / "statistics" / "tx_packets").read_text())


def _out_rsts() -> int:
    lines = Path("/proc/net/snmp").read_text().splitlines()
    for head, vals in zip(lines, lines[1:], strict=False):
        if head.startswith("Tcp:") and vals.startswith("Tcp:"):
            return int(dict(zip(head.split(), vals.split(), strict=False))["OutRsts"])
    return 0


@dataclass(frozen=True)
class Counters:
    """A sample of the interface's transmitted packets and the host's RSTs."""

    t_ns: int
    tx: int
    rsts: int

    @classmethod
    def read(cls, iface: str) -> Counters:
        try:
            return cls(mono_ns(), _tx_packets(iface), _out_rsts())
        except (OSError, ValueError) as e:
            raise RigError(
                f"rig device: cannot read the counters of --iface {iface} (gone?): "
                f"{getattr(e, 'strerror', None) or e}"
            ) from None

    def rates(self, later: Counters, over_ns: int | None = None) -> tuple[float, float]:
        """Packets/s transmitted, and RSTs/s sent, between this sample and ``later``, per
        second of ``over_ns`` (default: the time between the two samples)."""
        dt = max(1e-9, (over_ns if over_ns is not None else later.t_ns - self.t_ns) / 1e9)
        return (later.tx - self.tx) / dt, (later.rsts - self.rsts) / dt
