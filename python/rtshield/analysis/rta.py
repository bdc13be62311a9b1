"""Response-time analysis for fixed-priority scheduling on one core.

Every quantity is an integer number of nanoseconds, so results are exact and
deterministic. A :class:`Task` has a worst-case execution time ``C``, a period
or minimum interarrival ``T``, a release jitter ``J``, a relative deadline
``D`` (constrained or arbitrary) and a blocking term ``B``.

Interrupt handlers (``level="isr"``) run above every thread, whatever the
priority numbers. Among themselves they preempt each other by priority when
nesting is on; with nesting off a handler cannot be preempted by another, so it
is blocked by at most one lower-priority handler that started first and is
analysed with the non-preemptive formulation.

Equations (see docs/analysis.md):

* busy period ``L = B + sum_{j in hep(i)} ceil((L + J_j) / T_j) C_j``;
* preemptive, job ``q`` in the busy period:
  ``w_q = B + (q + 1) C_i + sum_{j in hp(i)} ceil((w_q + J_j) / T_j) C_j``,
  ``R_q = w_q - q T_i + J_i``;
* non-preemptive (handlers with nesting off), start time of job ``q``:
  ``s_q = B + q C_i + sum_{j in hp(i)} (floor((s_q + J_j) / T_j) + 1) C_j``,
  ``R_q = s_q + C_i - q T_i + J_i``;
* ``WCRT = max_q R_q``.

Priority ties count as interference both ways (the pessimistic reading of
round robin among equal priorities).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rtshield.units import format_ns

__all__ = ["Task", "TaskResult", "Result", "analyze", "utilization"]

#: Stop a fixed-point iteration after this many steps (never reached by a
#: converging system of sensible size; guards against pathological inputs).
MAX_ITERATIONS = 1_000_000


@dataclass(frozen=True)
class Task:
    """One schedulable entity of the analysis.

    ``T=None`` means the task is *unbounded*: nothing limits how often it
    arrives (a pure interrupt with no asserted rate, a mitigation without a
    hard bound). Every task it can interfere with is then unschedulable.
    ``once=True`` means the task contributes ``C`` at most once to any busy
    period of the tasks it interferes with (no period).
    ``bounded_above`` — if set, the bound (``T`` or ``once``) holds only for
    analysed threads with a priority strictly above this value; below it the
    task is treated as unbounded (used by Queue Mitigation, whose bound needs
    the driver not to run).
    """

    name: str
    C: int
    T: int | None
    D: int | None = None
    J: int = 0
    B: int = 0
    priority: int = 0
    level: str = "thread"  # "thread" or "isr"
    origin: str = ""  # the source/server this task was expanded from
    note: str = ""
    once: bool = False
    bounded_above: int | None = None
    best_effort: bool = False  # no deadline: only boundedness is checked
    chunk: int | None = None  # longest non-preemptive piece (default C)

    @property
    def deadline(self) -> int | None:
        if self.best_effort:
            return None
        if self.D is not None:
            return self.D
        return self.T

    def rank(self) -> tuple[int, int]:
        """Sort key: handlers above threads, then by priority number."""
        return (1 if self.level == "isr" else 0, self.priority)


@dataclass
class TaskResult:
    task: Task
    wcrt: int | None  # None when no finite bound was found
    schedulable: bool
    reason: str = ""
    lower_bound: int | None = None  # value reached when the iteration passed D
    jobs: int = 0  # jobs examined in the busy period

    @property
    def slack(self) -> int | None:
        d = self.task.deadline
        if self.wcrt is None or d is None:
            return None
        return d - self.wcrt


@dataclass
class Result:
    tasks: list[TaskResult] = field(default_factory=list)
    utilization: float = 0.0
    unbounded: list[str] = field(default_factory=list)

    @property
    def schedulable(self) -> bool:
        return all(r.schedulable for r in self.tasks)

    def by_name(self, name: str) -> TaskResult:
        for r in self.tasks:
            if r.task.name == name:
                return r
        raise KeyError(name)

    def min_slack(self) -> int | None:
        """Smallest D - WCRT over tasks that have a deadline (None if any is unbounded)."""
        vals = []
        for r in self.tasks:
            if r.task.deadline is None:
                continue
            if r.slack is None:
                return None
            vals.append(r.slack)
        return min(vals) if vals else None


def utilization(tasks: list[Task]) -> float:
    """Sum of C/T over periodic tasks; ``inf`` if one is unbounded."""
    u = 0.0
    for t in tasks:
        if t.once or t.C == 0:
            continue
        if t.T is None or t.T <= 0:
            return math.inf
        u += t.C / t.T
    return u


def _interferes(j: Task, i: Task) -> bool:
    """Does ``j`` interfere with ``i`` as a higher-or-equal priority task?"""
    return j is not i and j.rank() >= i.rank()


def _bounded_for(j: Task, i: Task) -> bool:
    if j.T is None and not j.once:
        return j.C == 0
    if j.bounded_above is not None and i.level == "thread":
        return i.priority > j.bounded_above
    return True


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _demand_ceil(j: Task, w: int) -> int:
    if j.once:
        return j.C
    assert j.T is not None
    return _ceil(w + j.J, j.T) * j.C


def _demand_floor1(j: Task, w: int) -> int:
    if j.once:
        return j.C
    assert j.T is not None
    return ((w + j.J) // j.T + 1) * j.C


def _iterate(start: int, f, limit: int | None):
    """Fixed point of ``w = f(w)`` from ``start``; returns (w, passed_limit)."""
    w = start
    for _ in range(MAX_ITERATIONS):
        nxt = f(w)
        if nxt == w:
            return w, False
        w = nxt
        if limit is not None and w > limit:
            return w, True
    return w, True


def _analyze_one(i: Task, tasks: list[Task], nesting: bool) -> TaskResult:
    hp = [j for j in tasks if _interferes(j, i)]
    unb = [j.name for j in hp if not _bounded_for(j, i)]
    if unb:
        return TaskResult(
            i,
            None,
            False,
            f"interfered with by unbounded {', '.join(unb)} (no minimum interarrival)",
        )
    if i.T is None and not i.once:
        if i.C == 0:
            return TaskResult(i, 0, True)
        return TaskResult(i, None, False, "unbounded: no minimum interarrival time")

    nonpre = i.level == "isr" and not nesting
    if nonpre:
        # No other handler preempts; a lower-priority handler may have started.
        lower = [k for k in tasks if k is not i and k.level == "isr" and k.rank() < i.rank()]
        blocking = max([i.B] + [k.C if k.chunk is None else k.chunk for k in lower])
    else:
        blocking = i.B

    u = sum(j.C / j.T for j in hp if not j.once and j.T) + (i.C / i.T if i.T and not i.once else 0)
    if u > 1.0:
        return TaskResult(i, None, False, f"utilization at or above this priority is {u:.3f} > 1")
    d = i.deadline
    # Level-i busy period.
    if i.once:
        q_count = 1
    else:
        assert i.T is not None

        def busy(w: int) -> int:
            return blocking + sum(_demand_ceil(j, w) for j in hp) + _demand_ceil(i, w)

        start = blocking + i.C + sum(j.C for j in hp)
        if start == 0:
            return TaskResult(i, 0, True)
        # The busy period is finite when U <= 1 (U == 1 with synchronous
        # release ends at the hyperperiod); bound the iteration generously.
        length, passed = _iterate(start, busy, None)
        if passed:
            return TaskResult(i, None, False, "busy period does not end (utilization 1)")
        q_count = max(1, _ceil(length + i.J, i.T))

    worst = 0
    for q in range(q_count):
        qT = 0 if i.once else q * i.T  # type: ignore[operator]
        limit = None if d is None else d + qT - i.J
        if nonpre:

            def f(s: int, q=q) -> int:
                return blocking + q * i.C + sum(_demand_floor1(j, s) for j in hp)

            s, passed = _iterate(blocking + q * i.C, f, None if limit is None else limit - i.C)
            r = s + i.C - qT + i.J
        else:

            def f(w: int, q=q) -> int:
                return blocking + (q + 1) * i.C + sum(_demand_ceil(j, w) for j in hp)

            w, passed = _iterate(blocking + (q + 1) * i.C, f, limit)
            r = w - qT + i.J
        if passed:
            return TaskResult(
                i,
                None,
                False,
                f"response time passed the deadline ({format_ns(r)} > {format_ns(d)}) "
                f"at job {q + 1}",
                lower_bound=r,
                jobs=q + 1,
            )
        worst = max(worst, r)
    ok = d is None or worst <= d
    reason = "" if ok else f"WCRT {format_ns(worst)} > deadline {format_ns(d)}"
    return TaskResult(i, worst, ok, reason, jobs=q_count)


def analyze(tasks: list[Task], *, nesting: bool = False) -> Result:
    """Analyse every task; results in priority order, highest first.

    ``nesting`` says whether interrupt handlers may preempt each other.
    """
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"duplicate task names: {', '.join(dup)}")
    ordered = sorted(tasks, key=lambda t: t.rank(), reverse=True)
    res = Result(utilization=utilization(tasks))
    res.unbounded = [t.name for t in tasks if t.T is None and not t.once and t.C > 0]
    for t in ordered:
        r = _analyze_one(t, ordered, nesting)
        if t.best_effort and not r.schedulable:
            # No deadline to miss: report the missing bound, do not fail the system.
            r = TaskResult(t, None, True, f"no finite bound: {r.reason}", r.lower_bound, r.jobs)
        res.tasks.append(r)
    return res
