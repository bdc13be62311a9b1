"""What a monitor's samples say: statistics and a verdict per window, and the recovery
after a storm.

A monitor's records (:mod:`rtshield.rig.probes`) become *samples* ``(t, good,
value)``: for a request (modbus, icmp, udp, tcp) one per request, at its send
time, *good* when it was answered normally within the monitor's ``latency``,
``value`` the time to the answer; for a heartbeat one per interval between two
arrivals, at the later arrival, *good* when the interval is within ``jitter``
of the ``period``, ``value`` the interval. A window passes when at least
``within`` of its samples are good and no stretch without a good sample is
longer than ``max_gap``.

A step runs up to ``repeat`` times (:class:`Rule`): each run is judged as a window,
and the step fails a monitor that failed at least ``fail_runs`` of its runs (by
default a majority); its statistics are those of every run's samples pooled
(:func:`pooled`, :func:`step_result`). Pure functions of the records: the tests
give them records; ``rtshield rig device`` gives them the monitors' files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rtshield.schema.profile import MonitorEntry, ProfileTable

__all__ = [
    "Criteria", "Rule", "Sample", "errors_after", "longest", "pooled", "recovery", "samples",
    "step_result", "window",
]

STATUS_NONE, STATUS_OK, STATUS_ERROR = 0, 1, 2
#: Good samples in a row (after the last bad one) that make a monitor recovered.
RECOVERED_AFTER = 3


@dataclass(frozen=True)
class Criteria:
    """A monitor's pass criteria, in ns (``limit``: its latency, or a heartbeat's jitter)."""

    name: str
    kind: str
    limit_ns: int
    within: float
    max_gap_ns: int
    recover_ns: int
    timeout_ns: int
    period_ns: int | None = None

    @classmethod
    def of(cls, m: MonitorEntry) -> Criteria:
        if m.kind == "heartbeat":
            period = int(m.period or 0)
            jitter = m.jitter if m.jitter is not None else period // 2
            # a heartbeat's records are final when they arrive: no timeout to wait for
            return cls(m.name, m.kind, int(jitter), m.within, m.max_gap, m.recover, 0, period)
        return cls(m.name, m.kind, m.latency, m.within, m.max_gap, m.recover, m.timeout)

    def as_dict(self) -> dict[str, Any]:
        d = {
            "kind": self.kind,
            ("jitter_ms" if self.kind == "heartbeat" else "latency_ms"): self.limit_ns / 1e6,
            "within": self.within,
            "max_gap_s": self.max_gap_ns / 1e9,
            "recover_s": self.recover_ns / 1e9,
        }
        if self.period_ns is not None:
            d["period_ms"] = self.period_ns / 1e6
        else:
            d["timeout_ms"] = self.timeout_ns / 1e6
        return d


@dataclass(frozen=True)
class Rule:
    """How a step's runs make its verdict: the step runs up to ``repeat`` times, and
    fails a monitor that failed at least ``fail_runs`` of them."""

    repeat: int
    fail_runs: int

    @classmethod
    def of(cls, p: ProfileTable) -> Rule:
        return cls(p.repeat, p.fail_runs_or_default)

    def fails(self, failed: int) -> bool:
        """Whether a monitor that failed ``failed`` runs fails the step."""
        return failed >= self.fail_runs

    def decided(self, runs: int, failed: int) -> bool:
        """Whether a monitor that failed ``failed`` of ``runs`` runs has its step verdict:
        no further run could change it."""
        return (runs >= self.repeat or failed >= self.fail_runs
                or runs - failed > self.repeat - self.fail_runs)

    def as_dict(self) -> dict[str, int]:
        return {"repeat": self.repeat, "fail_runs": self.fail_runs}


@dataclass(frozen=True)
class Sample:
    t: int  #: ns, CLOCK_MONOTONIC
    good: bool
    value: int | None  #: ns: the time to the answer, or a heartbeat's interval
    status: int  #: 0 no answer, 1 answered, 2 an error reply


def samples(records: Sequence[Sequence[int]], c: Criteria) -> list[Sample]:
    """A monitor's records as samples, in time order."""
    recs = sorted((int(a), int(b), int(s)) for a, b, s in records)
    if c.kind == "heartbeat":
        assert c.period_ns is not None
        out = []
        for (t0, _, _), (t1, _, _) in zip(recs, recs[1:], strict=False):
            iv = t1 - t0
            out.append(Sample(t1, abs(iv - c.period_ns) <= c.limit_ns, iv, STATUS_OK))
        return out
    out = []
    for sent, answered, status in recs:
        value = answered - sent if status == STATUS_OK and answered else None
        good = value is not None and value <= c.limit_ns
        out.append(Sample(sent, good, value, status))
    return out


def _q(sorted_vals: Sequence[float], q: float) -> float | None:
    if not sorted_vals:
        return None
    return round(sorted_vals[min(len(sorted_vals) - 1, int(q * len(sorted_vals)))], 3)


def max_gap_ns(ss: Sequence[Sample], lo: int, hi: int) -> int:
    """The longest stretch of ``[lo, hi)`` without a good sample."""
    goods = [s.t for s in ss if s.good and lo <= s.t < hi]
    edges = [lo, *goods, hi]
    return max(b - a for a, b in zip(edges, edges[1:], strict=False))


def window(ss: Sequence[Sample], lo: int, hi: int, c: Criteria) -> dict[str, Any]:
    """The statistics and the verdict of the samples in ``[lo, hi)``."""
    return pooled([(ss, lo, hi)], c)


def pooled(
    parts: Sequence[tuple[Sequence[Sample], int, int]], c: Criteria
) -> dict[str, Any]:
    """The statistics and the verdict of several windows together (the runs of a step,
    each ``(samples, lo, hi)``: the samples in ``[lo, hi)`` count; each window on its own
    clock, as the runs of a resumed test, measured in several attempts, are): their good
    fraction and quantiles pooled, the longest gap of any window."""
    mine = [s for ss, lo, hi in parts for s in ss if lo <= s.t < hi]
    n = len(mine)
    good = sum(s.good for s in mine)
    vals = sorted(s.value / 1e6 for s in mine if s.value is not None)
    gap = max(max_gap_ns(ss, lo, hi) for ss, lo, hi in parts)
    frac = good / n if n else 0.0
    why = []
    if not n:
        why.append("no sample")
    elif frac < c.within:
        why.append(f"{100 * frac:.0f} % good < {100 * c.within:.0f} %")
    if gap > c.max_gap_ns:
        why.append(f"gap {gap / 1e9:.2f} s > {c.max_gap_ns / 1e9:g} s")
    out: dict[str, Any] = {
        "verdict": "fail" if why else "pass",
        "why": "; ".join(why),
        "samples": n,
        "good": good,
        "good_fraction": round(frac, 4),
        "max_gap_s": round(gap / 1e9, 3),
    }
    if c.kind == "heartbeat":
        assert c.period_ns is not None
        jit = sorted(abs(s.value - c.period_ns) / 1e6 for s in mine if s.value is not None)
        out["interval_ms"] = {"p50": _q(vals, 0.5), "min": _q(vals, 0.0), "max": _q(vals, 1.0)}
        out["jitter_ms"] = {"p50": _q(jit, 0.5), "p95": _q(jit, 0.95), "p99": _q(jit, 0.99),
                            "max": _q(jit, 1.0)}
    else:
        out["timeouts"] = sum(1 for s in mine if s.status == STATUS_NONE)
        out["errors"] = sum(1 for s in mine if s.status == STATUS_ERROR)
        out["late"] = sum(1 for s in mine if s.value is not None and not s.good)
        out["latency_ms"] = {"p50": _q(vals, 0.5), "p95": _q(vals, 0.95), "p99": _q(vals, 0.99),
                             "max": _q(vals, 1.0)}
    return out


def step_result(
    runs: Sequence[dict[str, Any]], pooled_stats: dict[str, Any], rule: Rule, counted: bool = True
) -> dict[str, Any]:
    """A monitor's result of one step: the verdict by ``rule`` from its runs' windows
    (:func:`window`, in run order), with the statistics of the runs' samples pooled
    (:func:`pooled`); ``counted`` false: the monitor is informational in this storm (its
    verdict decides nothing)."""
    failed = [(i, w) for i, w in enumerate(runs, 1) if w["verdict"] == "fail"]
    fail = rule.fails(len(failed))
    why = ""
    if failed:
        why = (f"{len(failed)} of {len(runs)} runs failed"
               + ("" if fail else f", the step fails at {rule.fail_runs}") + ": "
               + "; ".join(f"run {i}: {w['why']}" for i, w in failed))
    return {
        **pooled_stats,
        "verdict": "fail" if fail else "pass",
        "why": why,
        "runs": len(runs),
        "runs_failed": len(failed),
        "counted": counted,
    }


def longest(recoveries: Sequence[float | None]) -> float | None:
    """The longest of several recovery times; ``None`` when one of them is (not back)."""
    if any(r is None for r in recoveries):
        return None
    return max((r for r in recoveries if r is not None), default=0.0)


def headline_ms(stats: dict[str, Any]) -> float | None:
    """The one number the figure plots for a window: the 95th percentile of the latency
    (a heartbeat's: of its jitter)."""
    return (stats.get("latency_ms") or stats.get("jitter_ms") or {}).get("p95")


def recovery(ss: Sequence[Sample], t_end: int, horizon: int, c: Criteria) -> float | None:
    """Seconds from ``t_end`` (a storm's end) to the first good sample after which the
    monitor stayed good (no bad sample, no stretch without a good one longer than
    ``max_gap``) for at least :data:`RECOVERED_AFTER` samples up to ``horizon``; 0 when
    it was never bad after ``t_end``; ``None`` when it has not recovered by ``horizon``.
    """
    start: int | None = None
    run = 0
    bad = False
    prev = t_end
    for s in ss:
        if not t_end <= s.t < horizon:
            continue
        if not s.good:
            start, run, bad = None, 0, True
            continue
        if s.t - prev > c.max_gap_ns:
            start, run, bad = s.t, 1, True
        elif start is None:
            start, run = s.t, 1
        else:
            run += 1
        prev = s.t
    if start is None or run < RECOVERED_AFTER or horizon - prev > c.max_gap_ns:
        return None
    return round((start - t_end) / 1e9, 3) if bad else 0.0


def errors_after(ss: Sequence[Sample], t_end: int, recovery_s: float | None) -> int:
    """The error answers among the samples sent from ``t_end`` (a storm's end) until the
    monitor recovered ``recovery_s`` later (``None``: not back, every later sample): a
    TCP monitor's refused connections (the device's RST to the SYN: its listener's backlog
    full, docs/rig.md "The connect monitor after a storm"), a UDP echo's port
    unreachable, a MODBUS exception."""
    until = None if recovery_s is None else t_end + round(recovery_s * 1e9)
    return sum(1 for s in ss
               if s.status == STATUS_ERROR and s.t >= t_end and (until is None or s.t < until))
