"""Worst-case analysis and parameter design (Regehr & Duongsaa §5; Behnke et al. §2.4, §7.3).

Public API:

* :func:`load_system` — read and validate a SYSTEM.toml;
* :func:`analyze_system` — expand sources/mitigations/servers into tasks and
  run fixed-priority response-time analysis; returns a :class:`Report`;
* :func:`design_system` — search the safe boundary of the one open (``"?"``)
  parameter;
* :func:`system_from_scenario` — the one mapping from a simulator scenario
  to the analysed system (used by ``analyze --scenario``, ``design
  --scenario`` and :func:`cross_check`);
* :func:`cross_check` — analyse and simulate one scenario;
* :mod:`rtshield.analysis.knobs`, :mod:`rtshield.analysis.rxdesign` — design
  of a scenario's knobs, each answer simulated;
* :mod:`rtshield.analysis.rta` — the response-time analysis on plain tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rtshield._lazy import reexport

if TYPE_CHECKING:
    from .model import cross_check, system_from_scenario
    from .report import Report, analyze_system, expand_system
    from .rta import Task, analyze
    from .system import System, load_system

__all__ = [
    "Report",
    "System",
    "Task",
    "analyze",
    "analyze_system",
    "cross_check",
    "expand_system",
    "load_system",
    "system_from_scenario",
]


#: Which module of the package holds each name: only that one is imported when the
#: name is first used, so that ``rtshield design --help`` (which reads ``knobtable``)
#: does not import every other one (the system schema's pydantic models).
_HOMES = {
    "Report": "report",
    "System": "system",
    "Task": "rta",
    "analyze": "rta",
    "analyze_system": "report",
    "cross_check": "model",
    "expand_system": "report",
    "load_system": "system",
    "system_from_scenario": "model",
}

__getattr__, __dir__ = reexport(__name__, _HOMES, __all__)
