"""The rig's clock and the length of its procedure.

Every target runs the same procedure: idle before, attack, idle after, each
``phase_s`` long, with a break of ``break_s`` after each of the first two. The
phases, the counters and the targets' records share one clock,
CLOCK_MONOTONIC (:func:`mono_ns`).
"""

from __future__ import annotations

import time

__all__ = ["mono_ns", "procedure_s", "sleep_until"]


def procedure_s(phase_s: float, break_s: float) -> float:
    """The length of a run: idle before, attack, idle after (``phase_s`` each) with a
    break of ``break_s`` after each of the first two."""
    return 3 * phase_s + 2 * break_s


def mono_ns() -> int:
    """CLOCK_MONOTONIC in ns: the clock of the phases, the counters and the targets' records."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def sleep_until(t_ns: int) -> None:
    """Sleep until :func:`mono_ns` reaches ``t_ns`` (in steps of at most 0.2 s)."""
    while (dt := (t_ns - mono_ns()) / 1e9) > 0:
        time.sleep(min(dt, 0.2))
