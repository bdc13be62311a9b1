"""Design of a scenario's interrupt-level knobs, each answer checked by simulation.

``rtshield design SCENARIO.toml --knob KEY`` answers, for the device and
protection a scenario describes, the most generous value of one protection
parameter that keeps the critical task (and every periodic task) schedulable
(Regehr & Duongsaa §5; Danicki et al. §2.2 for the mitigations):

=========================  =====================  ===============================
knob                       protection             answer
=========================  =====================  ===============================
``driver.queue``           Queue Mitigation       largest queue size Q
``mitigation.capacity``    Burst Mitigation       largest packets per slice K
``mitigation.burst``       bursty limiter         largest burst N per timer period
``mitigation.period``      bursty limiter         shortest timer period for N
``mitigation.min_interarrival``  strict limiter   shortest minimum interarrival
``mitigation.window``      countdown (hardware)   shortest window
``traffic.rate``           none, Hysteresis,      highest packet rate the device
                           Budget Mitigation      survives (no parameter of these
                                                  bounds the interrupt load)
=========================  =====================  ===============================

The search runs on the analysis of :func:`.model.system_from_scenario` (the
one mapping) and relies on monotonicity (:func:`.search.boundary`), as
:mod:`.design` does. Then the simulator runs the scenario with *worst-case
traffic* for the protection (:func:`.worstcase.worst_case_traffic`) at the
boundary and one step beyond it: the safe value must show no miss; the report
gives the analytic margin, the simulated one, and what the simulation shows
one step beyond.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from rtshield.errors import UsageError
from rtshield.units import format_ns

from .knobtable import KNOBS
from .model import bound_system, system_from_scenario
from .report import Report, analyze_system
from .search import (
    MAX_COUNT,
    MAX_DURATION_NS,
    analyse_scenario,
    answer_head,
    boundary,
    safe,
    why_unsafe,
)
from .system import ModelInfeasible
from .worstcase import on_source, tcp_flow, worst_case_traffic

__all__ = ["KNOBS", "KnobDesign", "default_knob", "design_knob", "worst_case_traffic"]

_DEFAULT = {
    "queue": "driver.queue",
    "burst": "mitigation.capacity",
    "bursty": "mitigation.burst",
    "strict": "mitigation.min_interarrival",
    "countdown": "mitigation.window",
    "polling": "mitigation.period",
    "none": "traffic.rate",
    "hysteresis": "traffic.rate",
    "budget": "traffic.rate",
}


def default_knob(sc) -> str:
    """The knob of the scenario's protection (the first one :data:`KNOBS` lists)."""
    return _DEFAULT[sc.mitigation.kind]


@dataclass
class SimPoint:
    """The simulator at one value of the knob (worst-case traffic)."""

    value: int
    max_response_ns: int
    misses: int
    deadline_ns: int

    @property
    def margin_ns(self) -> int:
        return self.deadline_ns - self.max_response_ns

    def as_dict(self) -> dict:
        return {
            "value": self.value,
            "max_response_us": self.max_response_ns / 1000,
            "misses": self.misses,
            "margin_us": self.margin_ns / 1000,
        }


@dataclass
class KnobDesign:
    knob: str
    kind: str  # "count" or "duration"
    value: int | None
    report: Report | None
    unsafe_value: int | None = None
    unsafe_reason: str = ""
    note: str = ""
    bound_beyond_ns: int | None = None  # analytic WCRT one step beyond (deadline lifted)
    sim_safe: SimPoint | None = None
    sim_beyond: SimPoint | None = None
    extra: dict = field(default_factory=dict)

    def fmt(self, v: int | None) -> str:
        if v is None:
            return "-"
        if self.knob == "traffic.rate":
            return f"{1e9 / v:.1f} pkt/s (one packet per {format_ns(v)})"
        return format_ns(v) if self.kind == "duration" else str(v)

    def margin_ns(self) -> int | None:
        return None if self.report is None else self.report.result.min_slack()

    @property
    def confirmed(self) -> bool:
        """The simulation at the safe value shows no miss (and stays within the bound)."""
        return self.sim_safe is not None and self.sim_safe.misses == 0

    def to_json(self) -> dict:
        def us(v):
            return None if v is None else v / 1000

        val = self.value
        out = {
            "knob": self.knob,
            "kind": self.kind,
            "value": None if val is None else (val / 1000 if self.kind == "duration" else val),
            "unit": "us" if self.kind == "duration" else "count",
            "margin_us": us(self.margin_ns()),
            "unsafe_value": None
            if self.unsafe_value is None
            else (self.unsafe_value / 1000 if self.kind == "duration" else self.unsafe_value),
            "unsafe_reason": self.unsafe_reason,
            "bound_beyond_us": us(self.bound_beyond_ns),
            "note": self.note,
            "schedulable": val is not None,
            "simulated": {
                "safe": None if self.sim_safe is None else self.sim_safe.as_dict(),
                "beyond": None if self.sim_beyond is None else self.sim_beyond.as_dict(),
                "confirmed": self.confirmed,
            },
        }
        if self.knob == "traffic.rate" and val is not None:
            out["rate_pps"] = 1e9 / val
        out.update(self.extra)
        if self.report is not None:
            out["analysis"] = self.report.to_json()
        return out

    def text(self) -> str:
        lines = answer_head(
            self.knob,
            None if self.value is None else self.fmt(self.value),
            self.note,
            self.unsafe_reason,
            "analysis: margin at this value (smallest D - WCRT)",
            self.margin_ns(),
        )
        if self.value is None:
            return lines[0]
        if self.sim_safe is not None:
            s = self.sim_safe
            lines.append(
                f"  simulated with worst-case traffic: max response {format_ns(s.max_response_ns)}"
                f" (deadline {format_ns(s.deadline_ns)}, margin {format_ns(s.margin_ns)}), "
                f"{s.misses} missed deadlines"
                + (" - confirmed" if s.misses == 0 else " - NOT CONFIRMED")
            )
        if self.unsafe_value is not None:
            lines.append(f"  one step beyond: {self.fmt(self.unsafe_value)}")
            b = self.bound_beyond_ns
            lines.append(
                f"    analysis: {self.unsafe_reason}"
                + ("" if b is None else f"; worst-case response bound {format_ns(b)}")
            )
            if self.sim_beyond is not None:
                s = self.sim_beyond
                lines.append(
                    f"    simulated: max response {format_ns(s.max_response_ns)}, "
                    f"{s.misses} missed deadlines"
                    + (
                        ""
                        if s.misses
                        else " (the analysis' worst case is a bound, reached only by the"
                        " alignment it assumes; see docs/analysis.md §9)"
                    )
                )
        if self.report is not None:
            lines += ["", self.report.table()]
        return "\n".join(lines)


def _with(sc, knob: str, v: int):
    """Scenario ``sc`` with knob set to ``v``."""
    m = sc.mitigation
    if sc.sources and knob in ("mitigation.burst", "mitigation.min_interarrival"):
        # the one [[sources]] entry's own value is what the engine applies
        field_ = "burst" if knob == "mitigation.burst" else "min_interarrival_ns"
        src = dataclasses.replace(sc.sources[0], **{field_: v})
        sc = dataclasses.replace(sc, sources=(src,))
    if knob == "driver.queue":
        return dataclasses.replace(sc, driver=dataclasses.replace(sc.driver, queue=v))
    if knob == "mitigation.capacity":
        return dataclasses.replace(sc, mitigation=dataclasses.replace(m, capacity=v))
    if knob == "mitigation.burst":
        return dataclasses.replace(sc, mitigation=dataclasses.replace(m, burst=v))
    if knob == "mitigation.period":
        return dataclasses.replace(sc, mitigation=dataclasses.replace(m, period_ns=v))
    if knob == "mitigation.min_interarrival":
        return dataclasses.replace(sc, mitigation=dataclasses.replace(m, min_interarrival_ns=v))
    if knob == "mitigation.window":
        return dataclasses.replace(sc, mitigation=dataclasses.replace(m, window_ns=v))
    if knob == "traffic.rate":
        return dataclasses.replace(sc, flows=on_source(sc, (tcp_flow("flood", 1e9 / v, 0),)))
    raise UsageError(f"--knob {knob}: unknown (one of {', '.join(KNOBS)})")


def _sim_point(sc, knob: str, v: int, rate_pps: float | None) -> SimPoint:
    from rtshield.engine import simulate

    wc = worst_case_traffic(_with(sc, knob, v), rate_pps)
    res = simulate(wc)
    worst = round(res.critical["max_response_us"] * 1000)
    for t in wc.tasks:
        if t.kind == "periodic" and t.name in res.tasks:
            worst = max(worst, round(res.tasks[t.name]["max_response_us"] * 1000))
    misses = int(res.critical["misses"]) + sum(
        int(res.tasks[t.name]["misses"]) for t in wc.tasks if t.kind == "periodic"
    )
    return SimPoint(v, worst, misses, sc.critical.period_ns)


def design_knob(sc, knob: str | None = None, *, simulate: bool = True) -> KnobDesign:
    """The boundary of ``knob`` for scenario ``sc``; with ``simulate``, checked in the simulator."""
    knob = knob or default_knob(sc)
    if knob not in KNOBS:
        raise UsageError(f"--knob {knob}: unknown (one of {', '.join(KNOBS)})")
    kinds, kind, direction = KNOBS[knob]
    if sc.mitigation.kind not in kinds:
        raise UsageError(
            f"--knob {knob}: applies to mitigation {' or '.join(kinds)}; "
            f"the scenario has {sc.mitigation.kind!r}"
        )
    if knob == "mitigation.period" and sc.mitigation.kind == "bursty" and not sc.mitigation.burst:
        raise UsageError(f"--knob {knob}: the scenario gives no mitigation.burst")
    system_from_scenario(sc)  # names what the mapping cannot express, once
    cache: dict[int, Report | Exception] = {}

    def rep(v: int):
        # a limiter's knob is designed against a flood (the traffic the simulation
        # then sends), not against the scenario's own traffic, which may be gentler
        if v not in cache:
            at = _with(sc, knob, v)
            cache[v] = analyse_scenario(at if knob == "traffic.rate" else worst_case_traffic(at))
        return cache[v]

    lo, hi = (1, MAX_COUNT) if kind == "count" else (1, MAX_DURATION_NS)
    good, bad = boundary(lambda v: safe(rep(v)), lo, hi, direction == "largest")
    notes = {
        "driver.queue": "largest Queue Mitigation queue: (Q + 1) ISR runs fit the slack",
        "mitigation.capacity": "largest Burst Mitigation capacity per slice (2K back to back)",
        "mitigation.burst": "largest burst per timer period of the bursty limiter",
        "mitigation.period": (
            "shortest timer period of the bursty limiter for its burst"
            if sc.mitigation.kind == "bursty"
            else "shortest polling period (Regehr & Duongsaa §2: polling at a fixed rate)"
        ),
        "mitigation.min_interarrival": "shortest minimum interarrival of the strict limiter",
        "mitigation.window": "shortest window of the countdown (hardware) scheduler",
        "traffic.rate": (
            f"highest packet rate with {sc.mitigation.kind!r}: no parameter of it bounds the "
            "interrupt load (docs/analysis.md §3); the traffic must stay below this rate"
        ),
    }
    d = KnobDesign(knob, kind, good, None if good is None else rep(good), bad, note=notes[knob])
    if bad is not None:
        d.unsafe_reason = why_unsafe(rep(bad))
        try:
            lifted = analyze_system(bound_system(system_from_scenario(_with(sc, knob, bad))))
            d.bound_beyond_ns = lifted.result.by_name("critical").wcrt
        except ModelInfeasible:
            d.bound_beyond_ns = None
    if good is None:
        d.note = f"unsafe even at {d.fmt(bad)}"
        return d
    if simulate:
        rate = None
        d.sim_safe = _sim_point(sc, knob, good, rate)
        if bad is not None:
            try:
                system_from_scenario(_with(sc, knob, bad))
                d.sim_beyond = _sim_point(sc, knob, bad, rate)
            except (ModelInfeasible, UsageError):
                d.sim_beyond = None
    return d
