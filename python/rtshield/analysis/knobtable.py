"""The knobs ``rtshield design --scenario --knob KEY`` designs (:mod:`.knobs`): a table
of plain values, in a module of its own so that ``rtshield design --help``, which
lists them, imports no part of the analysis.
"""

from __future__ import annotations

#: knob → (mitigation kinds it applies to, "count"/"duration", search direction)
KNOBS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "driver.queue": (("queue",), "count", "largest"),
    "mitigation.capacity": (("burst",), "count", "largest"),
    "mitigation.burst": (("bursty",), "count", "largest"),
    "mitigation.period": (("bursty", "polling"), "duration", "smallest"),
    "mitigation.min_interarrival": (("strict",), "duration", "smallest"),
    "mitigation.window": (("countdown",), "duration", "smallest"),
    "traffic.rate": (("none", "hysteresis", "budget"), "duration", "smallest"),
}
