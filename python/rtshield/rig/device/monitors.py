"""The monitors of a run as processes: one per ``[[monitor]]`` of the profile, started
through the rig's :class:`~rtshield.rig.harness.Processes` (tagged, bounded by
``timeout``), each appending its final samples to ``DIR/monitors/<name>.bin``.

MODBUS/TCP is polled by :mod:`rtshield.rig.modbus_client` (read-only: it never
writes a register); ICMP, UDP, TCP and the heartbeat by :mod:`rtshield.rig.probes`.
They run SCHED_FIFO (:data:`MONITOR_PRIORITY`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rtshield.rig import modbus_client, probes
from rtshield.rig.harness import Processes
from rtshield.schema.profile import MonitorEntry

from .verdict import Criteria, Sample, samples

__all__ = ["MONITOR_PRIORITY", "Monitor", "monitor_argv", "start_monitors"]

#: The monitors run SCHED_FIFO at this priority (``chrt``): they are the measurement, and
#: the host's own load must not show as the device's latency. Below the served Linux
#: device's control task (80), above everything a test host runs normally.
MONITOR_PRIORITY = 40


def monitor_argv(
    m: MonitorEntry, target: str, iface: str | None, records: Path, end_ns: int,
    source: str | None = None, t0_ns: int = 0,
) -> list[str]:
    """The command line of monitor ``m`` of ``target`` through ``iface``, writing its
    samples to ``records`` from ``t0_ns`` (0: at once) until ``end_ns`` (``source``: this
    host's address, which a heartbeat must come to)."""
    if m.kind == "modbus":
        spec = {
            "dst": target,
            "port": m.port_or_default,
            "rate": m.rate,
            "timeout_ns": m.timeout,
            "t0_ns": t0_ns,
            "end_ns": end_ns,
            "out": str(records.with_suffix(".all")),
            "live": str(records),
            "address": m.address,
            "count": m.count,
            "unit": m.unit,
            "write_every": 0,
        }
        script = modbus_client.__file__
    else:
        spec = {
            "kind": m.kind,
            "dst": target,
            "port": m.port_or_default,
            "size": m.size,
            "rate": m.rate,
            "timeout_ns": m.timeout,
            "t0_ns": t0_ns,
            "end_ns": end_ns,
            "out": str(records),
        }
        if m.kind == "heartbeat" and source:
            spec["bind"] = source
        script = probes.__file__
    if iface:
        spec["iface"] = iface
    return [sys.executable, str(Path(script)), json.dumps(spec)]


@dataclass
class Monitor:
    """One running monitor: its entry, criteria, process and records file."""

    entry: MonitorEntry
    criteria: Criteria
    records: Path
    popen: subprocess.Popen | None = None

    @property
    def name(self) -> str:
        return self.entry.name

    def samples(self) -> list[Sample]:
        return samples(probes.read_records(str(self.records)), self.criteria)

    def started(self) -> bool:
        """Whether the monitor has written a record (a heartbeat: received one)."""
        try:
            return self.records.stat().st_size >= probes.RECORD.size
        except OSError:
            return False


def start_monitors(
    procs: Processes,
    entries: Sequence[MonitorEntry],
    target: str,
    iface: str | None,
    out_dir: Path,
    end_ns: int,
    limit_s: float,
    source: str | None = None,
) -> list[Monitor]:
    """Start every monitor (their records in ``out_dir``); they run until ``end_ns`` or
    until stopped."""
    out_dir.mkdir(parents=True, exist_ok=True)
    mons = []
    for m in entries:
        rec = out_dir / f"{m.name}.bin"
        for stale in (rec, rec.with_suffix(".all")):
            stale.unlink(missing_ok=True)
        p = procs.start(
            ["chrt", "-f", str(MONITOR_PRIORITY), *monitor_argv(m, target, iface, rec, end_ns,
                                                                source)],
            limit_s=limit_s,
            name=f"monitor.{m.name}",
            stop_signal="TERM",
        )
        mons.append(Monitor(m, Criteria.of(m), rec, p))
    return mons
