"""Worst-case analysis and parameter design (Regehr & Duongsaa §5; Behnke et al. §2.4, §7.3).

Public API:

* :func:`load_system` — read and validate a SYSTEM.toml;
* :func:`analyze_system` — expand sources/mitigations/servers into tasks and
  run fixed-priority response-time analysis; returns a :class:`Report`;
* :func:`design_system` — search the safe boundary of the one open (``"?"``)
  parameter;
* :mod:`rtshield.analysis.rta` — the response-time analysis on plain tasks.
"""

from .report import Report, analyze_system, expand_system
from .rta import Task, analyze
from .system import System, load_system

__all__ = ["Report", "System", "Task", "analyze", "analyze_system", "expand_system", "load_system"]
