"""Parameter design: the most generous value of one open parameter that keeps
every task schedulable (Regehr & Duongsaa §5: "the developer can choose the
limits instead of guessing them").

The open parameter is written ``"?"`` in the system file. Supported:

* ``source.NAME.min_interarrival`` / ``max_rate`` of a strict limiter → the
  smallest minimum interarrival (the highest rate) that is still safe;
* ``source.NAME.burst`` of a bursty limiter (own or shared timer) → the
  largest burst;
* ``server.NAME.budget`` of a deferrable server → the largest budget;
* ``source.NAME.capacity`` of a Burst Mitigation → the largest packets per
  slice;
* ``source.NAME.queue`` of a Queue Mitigation → the largest queue;
* ``source.NAME.burst_period`` / ``burst_rate`` of a bursty limiter on its
  own timer → the shortest timer period for its burst;
* ``timer.NAME.rate`` / ``period`` of a timer shared by bursty sources
  (Regehr §3.5) → every candidate frequency at which a source's rounded
  burst changes, with its utilization; the schedulable one with the lowest
  utilization is chosen. If the sources give fixed bursts instead of rates,
  the shortest safe period.

Every search is :func:`.search.boundary`'s binary search on monotonicity (the
safe values form an interval). The result shows the margin — the smallest
slack ``D - WCRT`` at the boundary — and the first unsafe value with the task
that fails there; :func:`simulate_design` checks it in the simulator
(:mod:`.simcheck`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from rtshield.errors import UsageError
from rtshield.units import format_ns

from . import native
from .report import Report, analyze_system
from .search import MAX_COUNT, MAX_DURATION_NS, answer_head, boundary, safe, why_unsafe
from .simcheck import SimUnsupported, run_worst_case
from .system import ModelInfeasible, OpenParam, System

__all__ = ["Design", "design_system", "shared_timer_candidates"]


@dataclass
class Design:
    param: str
    kind: str  # "duration" or "count"
    value: int | None  # boundary value (ns or count); None if no safe value
    report: Report | None  # the analysis at the boundary
    unsafe_value: int | None = None  # first value beyond the boundary
    unsafe_reason: str = ""
    note: str = ""
    candidates: list[dict] = field(default_factory=list)  # shared-timer choice
    display: str = ""  # how to show the value, when not a plain duration/count
    simulated: dict = field(default_factory=dict)  # simulate_design()'s result

    def margin_ns(self) -> int | None:
        return None if self.report is None else self.report.result.min_slack()

    def _fmt(self, v: int | None) -> str:
        if v is None:
            return "-"
        return format_ns(v) if self.kind == "duration" else str(v)

    def to_json(self) -> dict:
        out = {
            "param": self.param,
            "kind": self.kind,
            "value": None
            if self.value is None
            else (self.value / 1000 if self.kind == "duration" else self.value),
            "unit": "us" if self.kind == "duration" else "count",
            "margin_us": None if self.margin_ns() is None else self.margin_ns() / 1000,
            "unsafe_value": None
            if self.unsafe_value is None
            else (self.unsafe_value / 1000 if self.kind == "duration" else self.unsafe_value),
            "unsafe_reason": self.unsafe_reason,
            "note": self.note,
            "schedulable": self.value is not None,
        }
        if self.candidates:
            out["candidates"] = self.candidates
        if self.simulated:
            out["simulated"] = self.simulated
        if self.report is not None:
            out["analysis"] = self.report.to_json()
        return out

    def text(self) -> str:
        shown = None if self.value is None else self.display or self._fmt(self.value)
        lines = answer_head(
            self.param,
            shown,
            self.note,
            self.unsafe_reason,
            "margin at this value: smallest slack D - WCRT",
            self.margin_ns(),
        )
        if self.value is None:
            return "\n".join(lines)
        if self.unsafe_value is not None:
            lines.append(
                f"  first unsafe value: {self._fmt(self.unsafe_value)} ({self.unsafe_reason})"
            )
        sim = self.simulated
        if sim.get("skipped"):
            lines.append(f"  not simulated: {sim['skipped']}")
        elif sim:
            for n, r in sim["at_value"].items():
                w = "-" if r["wcrt_us"] is None else format_ns(round(r["wcrt_us"] * 1000))
                lines.append(
                    f"  simulated (worst case): {n} {format_ns(round(r['observed_us'] * 1000))}"
                    f" <= WCRT {w}"
                )
            lines.append(f"  confirmed: {'yes' if sim['confirmed'] else 'NO'}")
            if "beyond" in sim:
                over = sim["beyond"]["over_deadline"]
                lines.append(
                    "  simulated one step beyond: "
                    + (
                        "misses (" + ", ".join(over) + ")"
                        if over
                        else "no miss (the analysis' worst case is a bound)"
                    )
                )
        if self.candidates:
            from rtshield.tables import text_table

            rows = [
                [
                    "*" if c.get("chosen") else "",
                    f"{c['timer_hz']:,d}".replace(",", " "),
                    _bursts_text(c["bursts"]),
                    "-" if c["utilization"] is None else f"{c['utilization']:.4f}",
                    "yes" if c["schedulable"] else "no",
                ]
                for c in self.candidates
            ]
            lines.append(
                text_table(
                    ["chosen", "timer (Hz)", "bursts", "utilization", "schedulable"],
                    rows,
                    title="candidates",
                )
            )
        if self.report is not None:
            lines.append("")
            lines.append(self.report.table())
        return "\n".join(lines)


def _target(system: System, op: OpenParam):
    coll = {"source": system.sources, "server": system.servers, "timer": system.timers}[op.section]
    return next(x for x in coll if x.name == op.name)


def _try(system: System, op: OpenParam, setter: Callable[[object, int], None], v: int):
    """Analysis with the open parameter set to ``v``; None if the model is infeasible."""
    s = copy.deepcopy(system)
    setter(_target(s, op), v)
    s.open = None
    try:
        return analyze_system(s)
    except ModelInfeasible as e:
        return e


def _search(system, op, setter, lo: int, hi: int, kind: str, param: str, note: str, largest: bool):
    """The largest (``largest``: the safe set is a prefix) or smallest (a suffix) safe
    value in [lo, hi], by :func:`.search.boundary`, with the analysis at it."""

    def probe(v: int):
        return _try(system, op, setter, v)

    good, bad = boundary(lambda v: safe(probe(v)), lo, hi, largest)
    if good is None:
        at = f"unsafe even at {bad if kind == 'count' else format_ns(bad)}"
        why = why_unsafe(probe(bad))
        return Design(param, kind, None, None, bad, why, (note or at) if largest else at)
    if bad is None:
        end = "safe up to the end of the search range"
        return Design(param, kind, good, probe(good), None, "", (note or end) if largest else note)
    return Design(param, kind, good, probe(good), bad, why_unsafe(probe(bad)), note)


def shared_timer_candidates(rates_hz: list[float], f_min: int = 1) -> list[int]:
    """Whole-Hz timer frequencies at which some source's rounded burst
    ``ceil(rate / f)`` takes a new value (Regehr §3.5): for burst ``n`` the
    lowest such frequency is ``ceil(rate / n)`` (libshield's
    ``rts_bursty_pick_timer_hz()``, :func:`.native.lowest_timer_hz`); any
    frequency in between only adds timer interrupts. Highest first."""
    cands = set()
    for r in rates_hz:
        n = 1
        while n <= MAX_COUNT:
            f = native.lowest_timer_hz(r, n)
            if f < f_min:
                break
            cands.add(f)
            if f == 1:
                break  # every larger burst gets 1 Hz too
            n += 1
    return sorted(cands, reverse=True)


def _design_timer(system: System, op: OpenParam) -> Design:
    timer = _target(system, op)
    srcs = [s for s in system.sources if s.timer == timer.name]
    if not srcs:
        raise UsageError(f"{op.label}: no [[source]] uses this timer")

    def set_period(t, v):
        t.period = v
        t.rate_hz = None

    def set_hz(t, f):
        t.period = round(1e9 / f)
        t.rate_hz = float(f)

    if any(s.max_rate_hz is None for s in srcs):
        # Fixed bursts: a longer timer period only lowers the load.
        d = _search(
            system,
            op,
            set_period,
            1,
            MAX_DURATION_NS,
            "duration",
            op.label,
            "shortest safe timer period for the fixed bursts",
            largest=False,
        )
        if d.value is not None:
            d.note += f" (timer {1e9 / d.value:.3f} Hz)"
        return d
    rates = [s.max_rate_hz for s in srcs]
    # Below the slowest task period's frequency bursts grow without bound in
    # practice; search from 1 Hz up to the highest source rate.
    cands = shared_timer_candidates(rates)[:2000]
    rows, best = [], None
    for f in cands:
        period = round(1e9 / f)
        rep = _try(system, op, set_hz, f)
        bursts = {s.name: native.round_burst(s.max_rate_hz, f) for s in srcs}
        ok = safe(rep)
        u = rep.result.utilization if isinstance(rep, Report) else None
        row = {
            "timer_hz": f,
            "period_us": period / 1000,
            "bursts": bursts,
            "utilization": u,
            "schedulable": ok,
        }
        rows.append(row)
        if ok and (best is None or u < best[1]["utilization"] - 1e-12):
            best = (rep, row, period)
    if best is None:
        return Design(
            op.label,
            "duration",
            None,
            None,
            None,
            "no candidate timer frequency is schedulable",
            "",
            rows[:20],
        )
    best[1]["chosen"] = True
    shown = sorted(rows, key=lambda r: (not r["schedulable"], r["utilization"] or 9e9))[:12]
    if not any(r.get("chosen") for r in shown):
        shown.insert(0, best[1])
    return Design(
        op.label,
        "duration",
        best[2],
        best[0],
        None,
        "",
        f"timer {best[1]['timer_hz']} Hz, bursts {_bursts_text(best[1]['bursts'])}: "
        "the schedulable candidate with the lowest utilization",
        shown,
        display=f"{best[1]['timer_hz']} Hz (period {format_ns(best[2])})",
    )


#: The attribute an open parameter sets (``max_rate`` and ``burst_rate`` are
#: read as their periods).
_ATTR = {
    "budget": "budget",
    "min_interarrival": "min_interarrival",
    "max_rate": "min_interarrival",
    "burst": "burst",
    "queue": "queue",
    "burst_period": "burst_period",
    "burst_rate": "burst_period",
    "capacity": "capacity",
}


def _setter(attr: str) -> Callable[[object, int], None]:
    def set_(obj, v):
        setattr(obj, attr, v)

    return set_


def system_at(system: System, value: int) -> System:
    """``system`` with its open parameter set to ``value`` (not a shared timer's)."""
    op = system.open
    assert op is not None and op.key in _ATTR
    s = copy.deepcopy(system)
    _setter(_ATTR[op.key])(_target(s, op), value)
    s.open = None
    return s


def simulate_design(system: System, d: Design) -> None:
    """Check a design answer in the simulator (simcheck's worst case, docs/analysis.md §8):
    at the boundary no thread may exceed its WCRT or its deadline; one step beyond
    is simulated and reported. Fills ``d.simulated``; a system the engine cannot
    express gets the reason instead."""
    if d.value is None or system.open is None or system.open.key not in _ATTR:
        return
    try:
        at = system_at(system, d.value)
        obs = run_worst_case(at)
    except SimUnsupported as e:
        d.simulated = {"skipped": str(e)}
        return
    rep = d.report
    rows = {}
    ok = True
    for name, o in obs.items():
        r = rep.result.by_name(name)
        dl = r.task.deadline
        rows[name] = {"observed_us": o / 1000, "wcrt_us": None if r.wcrt is None else r.wcrt / 1000}
        ok = ok and r.wcrt is not None and o <= r.wcrt and (dl is None or o <= dl)
    d.simulated = {"at_value": rows, "confirmed": ok}
    if d.unsafe_value is not None:
        try:
            beyond = run_worst_case(system_at(system, d.unsafe_value))
        except SimUnsupported:
            return
        misses = {
            n: o / 1000
            for n, o in beyond.items()
            if (dl := next(t.deadline for t in at.tasks if t.name == n)) is not None and o > dl
        }
        d.simulated["beyond"] = {
            "observed_us": {n: o / 1000 for n, o in beyond.items()},
            "over_deadline": misses,
        }


def design_system(system: System) -> Design:
    """Search the boundary of the system's one open parameter."""
    op = system.open
    if op is None:
        raise UsageError(f'{system.path}: no open parameter; write "?" as the value to design')
    if op.section == "timer":
        return _design_timer(system, op)
    tgt = _target(system, op)

    def largest(attr: str, lo: int, hi: int, kind: str, note: str) -> Design:
        return _search(system, op, _setter(attr), lo, hi, kind, op.label, note, largest=True)

    def smallest_period(attr: str, note: str, per_second: str) -> Design:
        """The smallest safe period ``attr`` of the source, its frequency in the note."""
        param = f"source.{op.name}.{attr}"
        d = _search(
            system, op, _setter(attr), 1, MAX_DURATION_NS, "duration", param, note, largest=False
        )
        if d.value is not None:
            d.note += f" ({per_second} {1e9 / d.value:.3f} Hz)"
        return d

    if op.section == "server":
        return largest("budget", 0, tgt.period, "duration", "largest deferrable-server budget")
    if op.key in ("min_interarrival", "max_rate"):
        return smallest_period(
            "min_interarrival",
            "smallest minimum interarrival of the strict limiter",
            "maximum rate",
        )
    if op.key == "burst":
        return largest("burst", 1, MAX_COUNT, "count", "largest burst size for the bursty limiter")
    if op.key == "queue":
        return largest(
            "queue",
            1,
            MAX_COUNT,
            "count",
            "largest Queue Mitigation queue: (Q + 1) ISR runs fit the slack of every "
            "thread above the driver",
        )
    if op.key in ("burst_period", "burst_rate"):
        return smallest_period(
            "burst_period", "shortest timer period of the bursty limiter for its burst", "timer"
        )
    if op.key == "capacity":
        return largest(
            "capacity", 1, MAX_COUNT, "count", "largest Burst Mitigation capacity per slice"
        )
    raise UsageError(f"{op.label}: cannot design this parameter")


def _bursts_text(bursts) -> str:
    """``{"A": 8, "B": 11}`` as ``A 8, B 11`` (each source's burst per timer period)."""
    if isinstance(bursts, dict):
        return ", ".join(f"{k} {v}" for k, v in bursts.items())
    return str(bursts)
