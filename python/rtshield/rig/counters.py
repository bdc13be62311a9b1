"""The rig's packet counters: both veth ends, the device's ingress (nftables) and the
kernel's backlog drops, sampled by :meth:`.harness.Harness.counters`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Counters", "softnet_drops"]


@dataclass
class Counters:
    """A sample of the rig's packet counters (cumulative; subtract two samples)."""

    t_ns: int
    attacker_tx: int = 0
    attacker_rx: int = 0
    device_rx: int = 0
    device_tx: int = 0
    #: nftables counters at the device's ingress: name -> packets.
    nft: dict[str, int] = field(default_factory=dict)
    #: /proc/net/softnet_stat "dropped" summed over CPUs (backlog full; whole machine).
    backlog_drops: int = 0

    def rates(self, later: Counters) -> dict[str, Any]:
        """Packets and packets/s between this sample and ``later``."""
        dt = max(1e-9, (later.t_ns - self.t_ns) / 1e9)
        out: dict[str, Any] = {"seconds": round(dt, 3)}

        def put(name: str, a: int, b: int) -> None:
            out[name] = b - a
            out[name + "_pps"] = round((b - a) / dt, 1)

        put("offered", self.attacker_tx, later.attacker_tx)
        put("device_link_rx", self.device_rx, later.device_rx)
        put("device_replies", self.device_tx, later.device_tx)
        for k in sorted(set(self.nft) | set(later.nft)):
            put(k, self.nft.get(k, 0), later.nft.get(k, 0))
        out["backlog_drops"] = later.backlog_drops - self.backlog_drops
        return out


def softnet_drops() -> int:
    """/proc/net/softnet_stat's "dropped" column summed over CPUs (0 if unreadable)."""
    try:
        lines = Path("/proc/net/softnet_stat").read_text().splitlines()
    except OSError:
        return 0
    return sum(int(line.split()[1], 16) for line in lines if len(line.split()) > 1)
