"""Parameter sweeps: a grid of ``--set KEY=v1,v2,…`` values over one scenario.

Each ``--set`` names one axis; a single value is a fixed override for every
point. A key is ``SECTION.KEY`` (``driver.queue``) or, for the entries of
``[[flows]]``, ``[[tasks]]`` and ``[[sources]]``, ``SECTION.NAME.KEY``
(``flows.syn.peak``). The grid is the Cartesian product of the axes, in the
order given, the last axis varying fastest. Every point is an ordinary run
(its own folder, summary and report); the sweep adds ``sweep.csv`` and
``sweep.json`` (one row per point: the swept values, whether the critical
task met every deadline, its worst response time, lateness and margin, and
the key numbers), the boundary of the safe region along each axis, and a
figure of those numbers against the first axis, one line per combination of
the others.

The grid is :mod:`rtshield.sweep.grid`, the rows, boundaries, tables and
figure :mod:`rtshield.sweep.results`. The points run on Dask
(:func:`run_points`, :mod:`rtshield.sweep.run`): a local cluster of one worker
process per core by default, or a user's cluster by its scheduler address.
Results are written as points finish; a point whose folder already holds the
results of the same scenario (same hash, files unchanged) is not run again.
"""

from rtshield.sweep.grid import (
    LIST_SECTIONS,
    MAX_POINTS,
    Axis,
    check_key,
    expand,
    point_label,
    point_scenario,
    scenario_hash,
    split_values,
)
from rtshield.sweep.results import (
    ANSWER_COLUMNS,
    SWEEP_METRICS,
    answer,
    boundaries,
    sweep_figure,
    sweep_rows,
    write_figure,
    write_tables,
)
from rtshield.sweep.run import POINT_FILE, PointResult, resumable, run_points, simulate_point

__all__ = [
    "ANSWER_COLUMNS",
    "LIST_SECTIONS",
    "MAX_POINTS",
    "POINT_FILE",
    "SWEEP_METRICS",
    "Axis",
    "PointResult",
    "answer",
    "boundaries",
    "check_key",
    "expand",
    "point_label",
    "point_scenario",
    "resumable",
    "run_points",
    "scenario_hash",
    "simulate_point",
    "split_values",
    "sweep_figure",
    "sweep_rows",
    "write_figure",
    "write_tables",
]
