"""Cycle files of the rig's control task: reading, splitting into phases, statistics, histograms.

The file is written by ``rig/linux/rts_cyclic.c`` (format in its header
comment): a 64-byte header, then one ``(start_ns, end_ns)`` pair of
CLOCK_MONOTONIC timestamps per cycle. The *cycle time* of cycle ``i`` is the
time between its toggle and the previous one, ``start[i] - start[i-1]`` --
what the paper's logic analyser measured between edges of the output. The
*wake-up latency* is ``start[i]`` minus the planned start ``t0 + (i+1)*period``.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "HEADER",
    "MAGIC",
    "POLICIES",
    "CycleFile",
    "cycle_stats",
    "histogram",
    "read_cycles",
    "split_phases",
    "write_cycles",
]

MAGIC = b"RTSCYC1\x00"
#: magic, version, policy, cpu, prio, period_ns, t0_ns, count, overruns, reserved
HEADER = struct.Struct("<8sIIiiqqQQQ")
#: Linux policy numbers -> names used on the command line.
POLICIES = {0: "other", 1: "fifo", 2: "rr", 6: "deadline"}


@dataclass
class CycleFile:
    """The content of one cycle file."""

    policy: str
    cpu: int
    prio: int
    period_ns: int
    t0_ns: int
    overruns: int
    start_ns: np.ndarray
    end_ns: np.ndarray

    @property
    def count(self) -> int:
        return int(self.start_ns.size)

    def cycle_times_ns(self) -> np.ndarray:
        """``start[i] - start[i-1]`` for every cycle (the first against ``t0``)."""
        prev = np.concatenate(([self.t0_ns], self.start_ns[:-1]))
        return self.start_ns - prev

    def latencies_ns(self) -> np.ndarray:
        """Start minus planned start, per cycle."""
        planned = self.t0_ns + self.period_ns * np.arange(1, self.count + 1, dtype=np.int64)
        return self.start_ns - planned


def read_cycles(path: str | Path) -> CycleFile:
    """Read a cycle file; ``ValueError`` naming the file when it is not one or is truncated."""
    data = Path(path).read_bytes()
    if len(data) < HEADER.size or data[:8] != MAGIC:
        raise ValueError(f"{path}: not an rtshield cycle file (bad magic)")
    magic, version, policy, cpu, prio, period, t0, count, overruns, _ = HEADER.unpack_from(data)
    if version != 1:
        raise ValueError(f"{path}: cycle file version {version}, this rtshield reads version 1")
    need = HEADER.size + 16 * count
    if len(data) < need:
        raise ValueError(f"{path}: truncated: {count} cycles announced, {len(data)} bytes")
    rec = np.frombuffer(data, dtype="<i8", count=2 * count, offset=HEADER.size).reshape(-1, 2)
    return CycleFile(
        policy=POLICIES.get(policy, str(policy)),
        cpu=cpu,
        prio=prio,
        period_ns=period,
        t0_ns=t0,
        overruns=overruns,
        start_ns=rec[:, 0].astype(np.int64),
        end_ns=rec[:, 1].astype(np.int64),
    )


def write_cycles(
    path: str | Path,
    start_ns: Sequence[int] | np.ndarray,
    end_ns: Sequence[int] | np.ndarray | None = None,
    *,
    period_ns: int,
    t0_ns: int,
    policy: str = "fifo",
    cpu: int = 0,
    prio: int = 99,
    overruns: int = 0,
) -> Path:
    """Write a cycle file in the C program's format (recorded files for tests and replays)."""
    start = np.asarray(start_ns, dtype="<i8")
    end = start if end_ns is None else np.asarray(end_ns, dtype="<i8")
    code = {v: k for k, v in POLICIES.items()}[policy]
    head = HEADER.pack(MAGIC, 1, code, cpu, prio, period_ns, t0_ns, start.size, overruns, 0)
    body = np.stack([start, end], axis=1).astype("<i8").tobytes()
    p = Path(path)
    p.write_bytes(head + body)
    return p


def split_phases(
    cf: CycleFile, phases: Mapping[str, tuple[int, int]]
) -> dict[str, dict[str, np.ndarray]]:
    """Cycle times and latencies of the cycles that *started* inside each phase ``[t0, t1)``."""
    ct = cf.cycle_times_ns()
    lat = cf.latencies_ns()
    out = {}
    for name, (a, b) in phases.items():
        m = (cf.start_ns >= a) & (cf.start_ns < b)
        out[name] = {"cycle_ns": ct[m], "latency_ns": lat[m]}
    return out


def cycle_stats(cycle_ns: np.ndarray, latency_ns: np.ndarray, period_ns: int) -> dict[str, Any]:
    """Statistics of one phase, times in ms (cycle) and us (latency).

    ``late`` counts cycles whose toggle came after the next planned toggle
    (latency > one period): the output kept its level for a whole cycle.
    """
    n = int(cycle_ns.size)
    if n == 0:
        return {"cycles": 0}
    c = cycle_ns.astype(np.float64) / 1e6
    lat = latency_ns.astype(np.float64) / 1e3
    return {
        "cycles": n,
        "cycle_ms": {
            "min": float(c.min()),
            "mean": float(c.mean()),
            "p50": float(np.percentile(c, 50)),
            "p99": float(np.percentile(c, 99)),
            "p99_9": float(np.percentile(c, 99.9)),
            "max": float(c.max()),
            "std": float(c.std()),
        },
        "latency_us": {
            "mean": float(lat.mean()),
            "p99": float(np.percentile(lat, 99)),
            "p99_9": float(np.percentile(lat, 99.9)),
            "max": float(lat.max()),
        },
        "late": int(np.count_nonzero(latency_ns > period_ns)),
    }


def histogram(cycle_ns: np.ndarray, bin_us: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """Counts of cycle times in bins of ``bin_us`` (edges in ms), for log-count plots."""
    c = np.asarray(cycle_ns, dtype=np.float64) / 1e6
    if c.size == 0:
        return np.array([0.0, bin_us / 1e3]), np.array([0])
    w = bin_us / 1e3
    lo = np.floor(c.min() / w) * w
    hi = (np.floor(c.max() / w) + 1) * w
    nb = int(round((hi - lo) / w))
    edges = lo + w * np.arange(nb + 1)
    counts, _ = np.histogram(c, bins=edges)
    return edges, counts
