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

import dataclasses
import math
from dataclasses import dataclass, field
from fractions import Fraction

from rtshield.units import format_ns

__all__ = [
    "MAX_BUSY_JOBS", "MAX_WINDOW_NS", "Task", "TaskResult", "Result", "analyze",
    "inherit_jitter", "level_demand", "utilization",
]

#: The analysis of one task gives up (docs/analysis.md §1, "Bounded analysis")
#: when its busy window holds more than this many of its own jobs, or when its
#: fixed points take more than this many steps in all — each step that does not
#: end an iteration adds at least one job of some task to the window, so the
#: busy window then holds more than this many jobs. Such a task is unschedulable
#: when the utilization at its priority is at least 1 (the busy window need not
#: end), else reported "busy window beyond N jobs: not analysed".
MAX_BUSY_JOBS = 100_000
#: ... or when a window it iterates grows past this length (2^62 ns, about 146
#: years): a safety net under the job limit, so that no iteration works on
#: numbers without end; reported "busy window beyond 2^62 ns: not analysed".
MAX_WINDOW_NS = 1 << 62


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
    ``cap`` — an arrival curve's bound on the same activations (the traffic
    that can reach the task, :class:`.curves.Demand`): the demand in a window
    is the smaller of the two, and a task with ``T=None`` is bounded by the
    cap alone.
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
    #: a further bound on the task's activations and demand in any window (an
    #: arrival curve, :class:`.curves.Demand`): it needs ``jobs(w)``, ``release(q)``,
    #: ``demand(w)`` and ``load``; the demand taken is the smaller of the two bounds
    cap: object | None = None
    #: for an unbounded task: what would bound it (named in its verdict)
    hint: str = ""
    #: the task whose completion releases this one's activations (the bursty
    #: limiter's bursts and driver after its timer's handler, which clears the
    #: counter at its end): ``J`` then grows by that task's response jitter, its
    #: WCRT less its C — how late the completion can come after its own release
    #: (holistic analysis: a release that inherits the predecessor's jitter)
    after: str | None = None
    #: the most that inherited jitter can be whatever the predecessor's response
    #: (e.g. one period for the bursty limiter's tick handler, which arms the next
    #: tick after it runs); required with ``after``
    after_max: int | None = None

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
    analysed: bool = True  # False: the busy window passed MAX_BUSY_JOBS (not decided)

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

    @property
    def not_analysed(self) -> list[TaskResult]:
        """Tasks with a deadline whose busy window passed :data:`MAX_BUSY_JOBS`: no
        verdict (a best-effort task's own response decides nothing)."""
        return [r for r in self.tasks if not r.analysed and r.task.deadline is not None]

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


def _load(t: Task, i: Task | None = None) -> Fraction | None:
    """Long-term CPU share of ``t`` (exact) as the analysis of ``i`` sees it; None if
    unbounded. A task that runs ``once`` per busy window only for tasks above its
    ``bounded_above`` is, for the others, its arrival curve's load."""
    if t.C == 0 or (t.once and _classic(t, i)):
        return Fraction(0)
    classic = Fraction(t.C, t.T) if t.T is not None and t.T > 0 and not t.once else None
    capped = t.cap.load if t.cap is not None else None
    if classic is None:
        return capped
    return classic if capped is None else min(classic, capped)


def utilization(tasks: list[Task]) -> float:
    """Sum of C/T over periodic tasks (or the long-term load of a task's arrival
    curve, when smaller); ``inf`` if one is unbounded. Summed in floating point in
    the tasks' order (the reported figure); verdicts use the exact :func:`_load`."""
    u = 0.0
    for t in tasks:
        if t.once or t.C == 0:
            continue
        capped = t.cap.load if t.cap is not None else None
        if t.T is None or t.T <= 0:
            if capped is None:
                return math.inf
            u += float(capped)
        elif capped is not None and capped < Fraction(t.C, t.T):
            u += float(capped)
        else:
            u += t.C / t.T
    return u


def _interferes(j: Task, i: Task) -> bool:
    """Does ``j`` interfere with ``i`` as a higher-or-equal priority task?"""
    return j is not i and j.rank() >= i.rank()


def _bounded_for(j: Task, i: Task) -> bool:
    capped = j.cap is not None and j.cap.load is not None
    if j.T is None and not j.once:
        return j.C == 0 or capped
    if j.bounded_above is not None and i.level == "thread":
        return i.priority > j.bounded_above or capped
    return True


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _classic(j: Task, i: Task | None) -> bool:
    """Does ``j``'s own (C, T, J) model bound it for ``i``?"""
    if j.once:
        return i is None or j.bounded_above is None or i.level != "thread" or (
            i.priority > j.bounded_above
        )
    return j.T is not None


def _demand(j: Task, w: int, i: Task | None = None, closed: bool = False) -> int:
    """Most CPU time ``j``'s activations take in a window of ``w`` (half-open, or
    closed ``[0, w]``): the smaller of its (C, T, J) model and its cap."""
    best = None
    if _classic(j, i):
        if j.once:
            best = j.C
        elif closed:
            best = ((w + j.J) // j.T + 1) * j.C
        else:
            best = _ceil(w + j.J, j.T) * j.C
    if j.cap is not None:
        v = j.cap.demand(w + 1 if closed else w)
        if v is not None and (best is None or v < best):
            best = v
    assert best is not None, j.name  # _bounded_for() excluded it
    return best


def level_demand(i: Task, tasks: list[Task], w: int) -> int | None:
    """The CPU time the first job of ``i`` can meet in a window of ``w`` after a
    critical instant: its blocking term, its own cost and every interfering task's
    demand (the right-hand side of the preemptive recurrence, q = 0). None when an
    interfering task is unbounded. The first job's response time is the least
    ``w`` with ``level_demand(w) <= w`` (for the report's figure)."""
    total = i.B + i.C
    for j in tasks:
        if not _interferes(j, i) or j.C == 0:
            continue
        if not _bounded_for(j, i):
            return None
        total += _demand(j, w, i)
    return total


class _Beyond(Exception):
    """A busy window passed :data:`MAX_BUSY_JOBS` (``what``: the limit it passed, as
    the report says it) or :data:`MAX_WINDOW_NS`."""

    def __init__(self, what: str = f"{MAX_BUSY_JOBS} jobs"):
        super().__init__(what)
        self.what = what


class _Budget:
    """Fixed-point steps left for the analysis of one task (:data:`MAX_BUSY_JOBS`)."""

    def __init__(self) -> None:
        self.left = MAX_BUSY_JOBS

    def step(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _Beyond


def _iterate(start: int, f, limit: int | None, budget: _Budget):
    """Least fixed point of ``w = f(w)`` from ``start`` (at most it); returns
    (w, passed_limit). ``start`` itself is checked against the limit, and every
    step is counted against the task's ``budget``."""
    w = start
    while True:
        if limit is not None and w > limit:
            return w, True
        budget.step()
        nxt = f(w)
        if nxt == w:
            return w, False
        if nxt > MAX_WINDOW_NS:
            raise _Beyond("2^62 ns")
        w = nxt


def _beyond(i: Task, u: Fraction, what: str) -> TaskResult:
    if u >= 1:
        return TaskResult(
            i,
            None,
            False,
            f"utilization at or above this priority is {float(u):.3f} >= 1: the busy window "
            f"does not end within {what}",
        )
    return TaskResult(
        i, None, False, f"busy window beyond {what}: not analysed", analysed=False
    )


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
    own_cap = i.T is None and not i.once and i.cap is not None and i.cap.load is not None
    if i.T is None and not i.once and not own_cap:
        if i.C == 0:
            return TaskResult(i, 0, True)
        return TaskResult(
            i,
            None,
            False,
            "unbounded: no minimum interarrival time" + (f" ({i.hint})" if i.hint else ""),
        )
    hp = [j for j in hp if j.C > 0]  # no demand, no job of any weight

    nonpre = i.level == "isr" and not nesting
    if nonpre:
        # No other handler preempts; a lower-priority handler may have started.
        lower = [k for k in tasks if k is not i and k.level == "isr" and k.rank() < i.rank()]
        blocking = max([i.B] + [k.C if k.chunk is None else k.chunk for k in lower])
    else:
        blocking = i.B

    loads = [_load(j, i) for j in hp] + [_load(i, i)]
    u_exact = sum((v for v in loads if v is not None), Fraction(0))
    u = float(u_exact)
    if u_exact > 1:
        return TaskResult(i, None, False, f"utilization at or above this priority is {u:.3f} > 1")
    d = i.deadline

    budget = _Budget()

    def own_jobs(w: int) -> int:
        if i.once:
            return 1
        if own_cap:
            return i.cap.jobs(w) or 0
        n = max(0, _ceil(w + i.J, i.T))
        capped = i.cap.jobs(w) if i.cap is not None else None
        return n if capped is None else min(n, capped)

    def release(q: int) -> int | None:
        """The earliest release of job q after the critical instant (classic: qT − J)."""
        if i.once:
            return 0 if q == 0 else None
        if own_cap:
            return i.cap.release(q)
        # with a period, the period's release even when a curve spaces the jobs wider:
        # an earlier release only lengthens R_q (safe), and δ⁻ of a long curve is dear
        return q * i.T - i.J

    def job(q: int, w_prev: int | None):
        """Job q of the busy period: (its finishing or start point, its response,
        whether it passed the deadline); None when no job q is ever released."""
        rel = release(q)
        if rel is None:
            return None
        limit = None if d is None else d + rel
        if nonpre:

            def f(s: int) -> int:
                return blocking + q * i.C + sum(_demand(j, s, i, closed=True) for j in hp)

            lo = blocking + q * i.C
            start = lo if w_prev is None else max(lo, w_prev + i.C)
            s, passed = _iterate(start, f, None if limit is None else limit - i.C, budget)
            return s, s + i.C - rel, passed

        def f(w: int) -> int:
            return blocking + (q + 1) * i.C + sum(_demand(j, w, i) for j in hp)

        lo = blocking + (q + 1) * i.C
        start = lo if w_prev is None else max(lo, w_prev + i.C)
        w, passed = _iterate(start, f, limit, budget)
        return w, w - rel, passed

    def missed(q: int, r: int) -> TaskResult:
        return TaskResult(
            i,
            None,
            False,
            f"response time passed the deadline ({format_ns(r)} > {format_ns(d)}) "
            f"at job {q + 1}",
            lower_bound=r,
            jobs=q + 1,
        )

    try:
        if not i.once and blocking + i.C + sum(j.C for j in hp) == 0:
            return TaskResult(i, 0, True)
        # The first job, bounded by its deadline: a miss needs no busy period.
        w_prev, worst, passed = job(0, None)
        if passed:
            return missed(0, worst)
        # Level-i busy period: how many jobs of i it holds (it is at least the first
        # job's window, a fixed point below it, so the iteration may start there).
        if i.once:
            q_count = 1
        else:

            def busy(w: int) -> int:
                return blocking + sum(_demand(j, w, i) for j in hp) + own_jobs(w) * i.C

            first = blocking + i.C + sum(min(j.C, _demand(j, 1, i)) for j in hp)
            # preemptive: L ≥ w_0; non-preemptive: L ≥ s_0 + C (both pre-fixed points)
            start = first if nonpre and i.C == 0 else max(first, w_prev + (i.C if nonpre else 0))
            length, _ = _iterate(start, busy, None, budget)
            q_count = max(1, own_jobs(length))
            if q_count > MAX_BUSY_JOBS:
                raise _Beyond
        for q in range(1, q_count):
            got = job(q, w_prev)
            if got is None:
                break
            w_prev, r, passed = got
            if passed:
                return missed(q, r)
            worst = max(worst, r)
    except _Beyond as e:
        return _beyond(i, u_exact, e.what)
    ok = d is None or worst <= d
    reason = "" if ok else f"WCRT {format_ns(worst)} > deadline {format_ns(d)}"
    return TaskResult(i, worst, ok, reason, jobs=q_count)


#: Rounds of :func:`inherit_jitter` before it takes every ``after_max`` (each round
#: that does not end it raises some inherited jitter, which ``after_max`` bounds).
INHERIT_ROUNDS = 20


def inherit_jitter(tasks: list[Task], nesting: bool = False) -> list[Task]:
    """``tasks`` with the jitter each task released by another's completion
    (:attr:`Task.after`) inherits from it: ``J + min(R_after - C_after, after_max)``,
    iterated to a fixed point (a predecessor's response may depend on its dependants'
    jitter: the inherited jitter only grows, and ``after_max`` bounds it). A
    predecessor without a finite bound, or no fixed point within
    :data:`INHERIT_ROUNDS` rounds: ``after_max``."""
    deps = [t for t in tasks if t.after is not None]
    if not deps:
        return list(tasks)
    byname = {t.name: t for t in tasks}
    for t in deps:
        if t.after not in byname or t.after_max is None:
            raise ValueError(f"{t.name}: released after {t.after!r}: no such task or no bound")
    extra = dict.fromkeys((t.name for t in deps), 0)

    def with_extra() -> list[Task]:
        return [dataclasses.replace(t, J=t.J + extra[t.name]) if t.name in extra else t
                for t in tasks]

    for _ in range(INHERIT_ROUNDS):
        cur = with_extra()
        ordered = sorted(cur, key=lambda t: t.rank(), reverse=True)
        now = {t.name: t for t in cur}
        grew = False
        for t in deps:
            p = now[t.after]
            r = _analyze_one(p, ordered, nesting)
            late = t.after_max if r.wcrt is None else min(max(0, r.wcrt - p.C), t.after_max)
            if late > extra[t.name]:
                extra[t.name], grew = late, True
        if not grew:
            return cur
    extra = {t.name: t.after_max for t in deps}
    return with_extra()


def analyze(tasks: list[Task], *, nesting: bool = False) -> Result:
    """Analyse every task; results in priority order, highest first.

    ``nesting`` says whether interrupt handlers may preempt each other. A task
    released by another's completion (:attr:`Task.after`) is analysed with the
    jitter it inherits (:func:`inherit_jitter`).
    """
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"duplicate task names: {', '.join(dup)}")
    tasks = inherit_jitter(tasks, nesting)
    ordered = sorted(tasks, key=lambda t: t.rank(), reverse=True)
    res = Result(utilization=utilization(tasks))
    res.unbounded = [
        t.name
        for t in tasks
        if t.T is None and not t.once and t.C > 0 and (t.cap is None or t.cap.load is None)
    ]
    for t in ordered:
        r = _analyze_one(t, ordered, nesting)
        if t.best_effort and not r.schedulable and r.analysed:
            # No deadline to miss: report the missing bound, do not fail the system.
            r = TaskResult(t, None, True, f"no finite bound: {r.reason}", r.lower_bound, r.jobs)
        elif t.best_effort and not r.analysed:
            # Nothing depends on its own response time: say so, do not fail the system.
            r = TaskResult(t, None, True, r.reason, jobs=r.jobs, analysed=False)
        res.tasks.append(r)
    return res
