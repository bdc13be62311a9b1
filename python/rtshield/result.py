"""The result of one simulation run: summary, time series, histograms.

:class:`Result` is what :func:`rtshield.engine.simulate` returns. It holds
plain Python and numpy data (no handle on the native engine), so it can be
pickled across processes.

- :meth:`Result.summary` is exactly the content of ``summary.json``
  (docs/outputs.md, the format the project commits to); floats are rounded
  to fixed decimals, so the same scenario and seed give an identical dict.
- :attr:`Result.timeseries` maps column names to one numpy array per bin.
- :attr:`Result.cycle_time_hist` and :attr:`Result.flow_latency_hist` are
  ``(edges_us, counts)`` pairs: ``counts[i]`` values fell in
  ``[edges_us[i], edges_us[i+1])``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Result", "hist_percentile_us"]


def hist_percentile_us(
    edges_us: np.ndarray,
    counts: np.ndarray,
    q: float,
    lo: float | None = None,
    hi: float | None = None,
) -> float:
    """The ``q``-quantile (0..1) of a histogram: the middle of the bin where
    the cumulative count reaches ``q`` of the total, clamped to the exact
    ``[lo, hi]`` when given. 0.0 for an empty histogram."""
    total = int(counts.sum())
    if total == 0:
        return 0.0
    need = max(1, int(np.ceil(q * total)))
    i = int(np.searchsorted(np.cumsum(counts), need))
    i = min(i, len(counts) - 1)
    v = 0.5 * (float(edges_us[i]) + float(edges_us[i + 1]))
    if lo is not None:
        v = max(v, lo)
    if hi is not None:
        v = min(v, hi)
    return v


@dataclass
class Result:
    """One finished run. Build it with :func:`rtshield.engine.simulate`."""

    scenario: str
    seed: int
    duration_s: float
    bin_s: float
    totals: dict[str, Any]
    critical: dict[str, Any]
    flows: dict[str, dict[str, Any]]
    cpu: dict[str, float]
    mitigation: dict[str, Any]
    tasks: dict[str, dict[str, Any]]
    engine: dict[str, Any]
    timeseries: dict[str, np.ndarray] = field(repr=False)
    cycle_time_hist: tuple[np.ndarray, np.ndarray] = field(repr=False)
    flow_latency_hist: dict[str, tuple[np.ndarray, np.ndarray]] = field(repr=False)
    #: Event trace when asked for (``simulate(..., trace=N)``): a structured
    #: array with fields ``t_ns``, ``kind`` (see ``rtshield.engine.TRACE_KINDS``),
    #: ``core``, ``arg``, ``value``; ``None`` otherwise.
    trace: np.ndarray | None = field(default=None, repr=False)
    trace_lost: int = 0  #: records that did not fit the trace buffer
    #: The receive path's counters (``[rx]`` on; see docs/outputs.md), else ``None``.
    rx: dict[str, Any] | None = None
    #: The overload detectors (Danicki §2.1): per detector its ``count`` and
    #: ``first_s`` (when it first fired, ``None``: never); see docs/outputs.md.
    detection: dict[str, dict[str, Any]] | None = None

    def summary(self) -> dict[str, Any]:
        """The ``summary.json`` content: a fresh dict of plain JSON types."""
        out = {
            "scenario": self.scenario,
            "seed": self.seed,
            "duration_s": self.duration_s,
            "totals": self.totals,
            "critical": self.critical,
            "flows": self.flows,
            "cpu": self.cpu,
            "mitigation": self.mitigation,
            "tasks": self.tasks,
        }
        if self.rx is not None:
            out["rx"] = self.rx
        if self.detection is not None:
            out["detection"] = self.detection
        return copy.deepcopy(out)
