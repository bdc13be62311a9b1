"""The boundary search every design runs, and how its answer starts.

Every search relies on monotonicity (docs/analysis.md §8): a longer
interarrival, a smaller burst, budget or capacity never increases any response
time in the analysis, so the safe values form an interval and a binary search
finds its end exactly (to 1 ns for durations, 1 for counts). One probe is an
analysis (a :class:`~.report.Report`) or the :class:`~.system.ModelInfeasible`
that refused the value; :func:`safe` and :func:`why_unsafe` judge it.
:mod:`.design` (system files), :mod:`.knobs` and :mod:`.rxdesign` (scenarios)
search with :func:`boundary`.
"""

from __future__ import annotations

from collections.abc import Callable

from rtshield.units import format_ns

from .model import system_from_scenario
from .report import Report, analyze_system
from .system import ModelInfeasible

__all__ = [
    "MAX_COUNT",
    "MAX_DURATION_NS",
    "analyse_scenario",
    "answer_head",
    "boundary",
    "safe",
    "why_unsafe",
]

#: Upper end of duration searches: 1000 s.
MAX_DURATION_NS = 1_000 * 10**9
#: Upper end of count searches.
MAX_COUNT = 1_000_000


def answer_head(
    name: str, shown: str | None, note: str, unsafe_reason: str, margin: str, m: int | None
) -> list[str]:
    """The first lines of a design answer: ``name = shown``, its note and the analysed
    margin ``m`` (labelled ``margin``); ``name: no safe value (why)`` alone when
    ``shown`` is None."""
    if shown is None:
        return [f"{name}: no safe value ({note or unsafe_reason})"]
    lines = [f"{name} = {shown}"]
    if note:
        lines.append(f"  {note}")
    lines.append(f"  {margin} = {'-' if m is None else format_ns(m)}")
    return lines


def why_unsafe(rep) -> str:
    """Why one probe is unsafe: the first task that misses, the failing NIC rule, or the
    infeasible model's message ("" when it is safe)."""
    if isinstance(rep, Exception):
        return str(rep)
    for r in rep.result.tasks:
        if not r.schedulable:
            return f"{r.task.name}: {r.reason}"
    for c in rep.nic_checks:
        if not c.ok:
            return f"nic {c.rule}: {c.inequality}"
    return ""


def safe(rep) -> bool:
    """Is one probe of a search (a :class:`Report` or the exception that refused it) safe?"""
    return isinstance(rep, Report) and rep.schedulable


def analyse_scenario(sc) -> Report | Exception:
    """The analysis of scenario ``sc`` (the one mapping), or the :class:`ModelInfeasible`
    that says why a parameter value makes the model impossible."""
    try:
        return analyze_system(system_from_scenario(sc))
    except ModelInfeasible as e:
        return e


def boundary(ok: Callable[[int], bool], lo: int, hi: int, largest: bool):
    """(safe, unsafe) neighbours; safe None if nothing in [lo, hi] is, unsafe None if all are."""
    if largest:
        if not ok(lo):
            return None, lo
        good, step, bad = lo, 1, None
        while good + step <= hi:
            if ok(good + step):
                good += step
                step *= 2
            else:
                bad = good + step
                break
        if bad is None:
            if good < hi and not ok(hi):
                bad = hi
            else:
                return hi if good < hi else good, None
    else:
        if not ok(hi):
            return None, hi
        if ok(lo):
            return lo, None
        good, bad = hi, lo
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good, bad
