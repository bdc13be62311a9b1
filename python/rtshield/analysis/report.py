"""Whole-system analysis: expand a :class:`System` into tasks, run the
response-time analysis, check the NIC rules, and render the result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rtshield.errors import UsageError

from . import rta
from .mitigations import expand_global_limit, expand_mitigation, expand_nic, expand_server
from .nic_rules import Check, check_nic
from .sources import expand_source, expand_timer
from .system import System

__all__ = ["Report", "expand_system", "analyze_system"]

_REGEHR = {"pure", "polling", "strict", "bursty", "hardware"}


def expand_system(system: System) -> list[rta.Task]:
    """All analysis tasks of a system: plain tasks, then what each source,
    shared timer, server, the global limit and the NIC expand into."""
    tasks = list(system.tasks)
    if system.tick and "tick" in system.costs and "tick_isr" in system.costs:
        tasks.append(
            rta.Task(
                "tick",
                system.costs["tick_isr"],
                system.costs["tick"],
                None,
                0,
                0,
                system.tick_priority,
                "isr",
                "platform",
                "RTOS tick interrupt (platform tick, tick_isr)",
                best_effort=True,
            )
        )
    for src in system.sources:
        if src.model in _REGEHR:
            tasks += expand_source(system, src)
        else:
            tasks += expand_mitigation(system, src)
    for timer in system.timers:
        tasks += expand_timer(system, timer)
    for server in system.servers:
        tasks += expand_server(server)
    if system.global_limit is not None:
        tasks += expand_global_limit(system.global_limit)
    if system.nic is not None:
        tasks += expand_nic(system.nic)
    seen: set[str] = set()
    for t in tasks:
        if t.name in seen:
            raise UsageError(
                f"{t.name}: two analysis tasks have this name (a task, source, "
                "timer or server name clashes with a generated one)"
            )
        seen.add(t.name)
    return tasks


@dataclass
class Report:
    system: System
    result: rta.Result
    nic_checks: list[Check] = field(default_factory=list)
    nic_values: dict = field(default_factory=dict)

    @property
    def schedulable(self) -> bool:
        return self.result.schedulable and all(c.ok for c in self.nic_checks)

    @property
    def undecided(self) -> bool:
        """No task is unschedulable, but one with a deadline was not analysed (its busy
        window passed :data:`.rta.MAX_BUSY_JOBS`)."""
        decided_bad = any(
            not r.schedulable and r.analysed for r in self.result.tasks
        ) or not all(c.ok for c in self.nic_checks)
        return bool(self.result.not_analysed) and not decided_bad

    @property
    def exit_code(self) -> int:
        """``rtshield analyze``'s status: 0 schedulable, 1 not, 3 not analysed
        (docs/analysis.md §1, "Bounded analysis")."""
        if self.schedulable:
            return 0
        return 3 if self.undecided else 1

    def to_json(self) -> dict:
        def us(v):
            return None if v is None else v / 1000

        tasks = []
        for r in self.result.tasks:
            t = r.task
            d = {
                "name": t.name,
                "C_us": us(t.C),
                "T_us": us(t.T),
                "J_us": us(t.J),
                "D_us": us(t.deadline),
                "priority": t.priority,
                "level": t.level,
                "wcrt_us": us(r.wcrt),
                "schedulable": r.schedulable,
            }
            if t.origin:
                d["origin"] = t.origin
            if t.B:
                d["B_us"] = us(t.B)
            if r.reason:
                d["reason"] = r.reason
            if t.note:
                d["model"] = t.note
            if not r.analysed:
                d["analysed"] = False
            if t.cap is not None:
                d["arrivals"] = t.cap.curve.label
            tasks.append(d)
        u = self.result.utilization
        out = {
            "system": self.system.name,
            "tasks": tasks,
            "utilization": None if math.isinf(u) else u,
            "schedulable": self.schedulable,
        }
        if self.nic_checks:
            out["nic"] = {"checks": [c.as_dict() for c in self.nic_checks], **self.nic_values}
        if self.undecided:
            out["not_analysed"] = [r.task.name for r in self.result.not_analysed]
        lines = self.traffic()
        if lines:
            out["traffic"] = lines
        return out

    def traffic(self) -> list[dict]:
        """Per source with a stated traffic: its arrival curve and what its protection
        admits (labels), for the report."""
        from .sources import admitted_curve

        out = []
        for src in self.system.sources:
            if src.arrivals is None:
                continue
            adm = admitted_curve(self.system, src)
            out.append(
                {
                    "source": src.name,
                    "traffic": src.arrivals.label,
                    "bounded": src.arrivals.bounded,
                    "admitted": None if adm is None else adm.label,
                }
            )
        g = self.system.global_limit
        if g is not None and g.arrivals is not None:
            from .mitigations import global_limit_admitted

            out.append(
                {
                    "source": "global_limit",
                    "traffic": g.arrivals.label,
                    "bounded": g.arrivals.bounded,
                    "admitted": global_limit_admitted(g).label,
                }
            )
        return out

    def table(self) -> str:
        from rtshield.tables import text_table

        def f(v):
            if v is None:
                return "-"
            return f"{v / 1000:,.3f}".rstrip("0").rstrip(".").replace(",", " ")

        head = ["task", "level", "priority", "C (µs)", "T (µs)", "J (µs)", "D (µs)",
                "WCRT (µs)", "verdict"]
        rows = []
        for r in self.result.tasks:
            t = r.task
            if not r.analysed:
                verdict = "NOT ANALYSED: " + r.reason
            elif r.schedulable and t.deadline is None:
                verdict = "bounded" if r.wcrt is not None else "UNBOUNDED: " + r.reason
            elif r.schedulable:
                verdict = "ok"
            else:
                verdict = "MISS: " + r.reason
            if t.once:
                T = "once"
            elif t.T is not None:
                T = f(t.T)
            else:
                T = "curve" if t.cap is not None else "unbounded"
            rows.append(
                [
                    t.name,
                    t.level,
                    str(t.priority),
                    f(t.C),
                    T,
                    f(t.J),
                    f(t.deadline),
                    f(r.wcrt),
                    verdict,
                ]
            )
        lines = [text_table(head, rows, left=(1, 8))]
        u = self.result.utilization
        lines.append("")
        lines.append(f"utilization: {'unbounded' if math.isinf(u) else f'{u:.4f}'}")
        for c in self.nic_checks:
            lines.append(f"nic {c.rule}: {'pass' if c.ok else 'FAIL'}  {c.inequality}")
        if self.nic_values:
            lines.append(f"nic memory: {self.nic_values['memory_bytes']} B")
        for tr in self.traffic():
            lines.append(
                f"arrivals {tr['source']}: {tr['traffic']}"
                + ("" if tr["admitted"] is None else f"; admitted at most: {tr['admitted']}")
            )
        if self.undecided:
            why = "; ".join(
                f"{r.task.name}: {r.reason.removesuffix(': not analysed')}"
                for r in self.result.not_analysed
            )
            lines.append(f"schedulable: not analysed ({why})")
        else:
            lines.append(f"schedulable: {'yes' if self.schedulable else 'no'}")
        return "\n".join(lines)


def analyze_system(system: System) -> Report:
    """Expand, analyse, check the NIC rules."""
    tasks = expand_system(system)
    result = rta.analyze(tasks, nesting=system.nesting)
    rep = Report(system, result)
    if system.nic is not None:
        rep.nic_checks, rep.nic_values = check_nic(system.nic, result.min_slack())
    return rep
