"""One run of the FreeRTOS target in time: its three phases and the traffic's lead.

Every run goes through idle before, attack, idle after (:data:`PHASES`), each
``phase_s`` long with a break of ``break_s`` after the first two
(:func:`rtshield.rig.timing.procedure_s`); the rig's senders, MODBUS
controllers and replays start before it, and the first phase begins :data:`GO_S` after
the last of them is ready (at most :data:`LEAD_S` after the target's "ready").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rtshield.rig.timing import procedure_s

__all__ = [
    "ATTACK_LABEL",
    "GO_S",
    "LEAD_S",
    "MODBUS_TIMEOUT_S",
    "PHASES",
    "phase_bounds",
    "rate_of",
    "run_name",
    "run_name_of",
]

#: How the report and the progress lines name each attack.
ATTACK_LABEL = {"syn": "hping3 SYN flood", "arp": "ARP flood", "nmap": "nmap full SYN scan"}
PHASES = ("idle_before", "attack", "idle_after")
#: The longest the start of a run may take from the target's "ready" to the first phase
#: (host seconds): the ARP warm-up and the rig's senders, MODBUS controllers and replays
#: each saying they are ready (a Python process takes a few hundred ms on a busy host).
#: The first phase starts :data:`GO_S` after the last of them, not after this bound.
LEAD_S = 10.0
#: From the go the rig gives its senders, controllers and replays (once all said ready)
#: to the first phase: time for each to read it, so that phase is offered in full.
GO_S = 0.05
#: A MODBUS poll's response timeout: an answer later than this counts as a timeout.
MODBUS_TIMEOUT_S = 0.5


def phase_bounds(t0_ns: int, phase_s: float, break_s: float) -> list[tuple[int, int]]:
    """[start, end) in ns of each of :data:`PHASES` when the first starts at ``t0_ns``."""
    P, B = phase_s, break_s
    return [
        (t0_ns, t0_ns + int(P * 1e9)),
        (t0_ns + int((P + B) * 1e9), t0_ns + int((2 * P + B) * 1e9)),
        (t0_ns + int((2 * P + 2 * B) * 1e9), t0_ns + int(procedure_s(P, B) * 1e9)),
    ]


def run_name(variant: str, attack: str, rate: float | None = None) -> str:
    """A run's name (its folder under ``DIR/runs``): ``<variant>-<attack>`` at full rate,
    ``<variant>-<attack>-<N>pps`` with the flood asked for at ``N`` packets/s."""
    return f"{variant}-{attack}" + ("" if rate is None else f"-{round(rate)}pps")


def rate_of(summary: Mapping[str, Any]) -> float | None:
    """The flood rate a run's summary says was asked for (packets/s; ``None``: full rate,
    also for runs recorded before the rig could choose one)."""
    return (summary.get("flood") or {}).get("rate_asked_pps")


def run_name_of(summary: Mapping[str, Any]) -> str:
    """The name of the run a summary records (:func:`run_name`)."""
    return run_name(summary["variant"], summary["attack"], rate_of(summary))
