"""Parameter sweeps: a grid of ``--set KEY=v1,v2,…`` values over one scenario.

Each ``--set`` names one axis; a single value is a fixed override for every
point. A key is ``SECTION.KEY`` (``driver.queue``) or, for the entries of
``[[flows]]``, ``[[tasks]]`` and ``[[sources]]``, ``SECTION.NAME.KEY``
(``flows.syn.peak``). The grid is the Cartesian product of the axes, in the
order given, the last axis varying fastest, made one point at a time.

Every point's results go into one table, ``sweep.csv`` (in grid order, as
points finish) and ``sweep.parquet``: the point's index, the swept values,
whether the critical task met every deadline, its worst response time,
lateness and margin, the key numbers and the scenario's hash. The sweep adds
the boundary of the safe region along each axis, a figure of the key numbers,
and a report showing the extremes and the boundary's points, each with its
own folder (every point's with ``--keep-runs``).

The grid is :mod:`rtshield.sweep.grid`, the table :mod:`rtshield.sweep.table`,
the safe region, the shown points and the figure :mod:`rtshield.sweep.results`.
The points run on Dask (:func:`run_sweep`, :mod:`rtshield.sweep.run`): a local
cluster of one worker process per core by default, or a user's cluster by its
scheduler address. A point whose row in the previous table holds the results
of the same scenario (same index, same hash) is not run again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rtshield._lazy import reexport

if TYPE_CHECKING:
    from rtshield.sweep.grid import (
        LIST_SECTIONS,
        Axis,
        Grid,
        check_key,
        expand,
        make_grid,
        point_label,
        point_scenario,
        scenario_hash,
        split_values,
    )
    from rtshield.sweep.results import (
        MAX_SHOWN,
        boundaries,
        boundaries_of,
        shown_points,
        sweep_figure,
        sweep_rows,
        write_figure,
        write_safe_region,
    )
    from rtshield.sweep.run import (
        MAX_KEPT_RUNS,
        MAX_POINTS,
        POINT_FILE,
        PointResult,
        Sweep,
        folder_name,
        resumable,
        run_sweep,
        simulate_point,
        validate,
    )
    from rtshield.sweep.table import ANSWER_COLUMNS, HASH_COLUMN, SWEEP_METRICS, answer

__all__ = [
    "ANSWER_COLUMNS",
    "HASH_COLUMN",
    "LIST_SECTIONS",
    "MAX_KEPT_RUNS",
    "MAX_POINTS",
    "MAX_SHOWN",
    "POINT_FILE",
    "SWEEP_METRICS",
    "Axis",
    "Grid",
    "PointResult",
    "Sweep",
    "answer",
    "boundaries",
    "boundaries_of",
    "check_key",
    "expand",
    "folder_name",
    "make_grid",
    "point_label",
    "point_scenario",
    "resumable",
    "run_sweep",
    "scenario_hash",
    "shown_points",
    "simulate_point",
    "split_values",
    "sweep_figure",
    "sweep_rows",
    "validate",
    "write_figure",
    "write_safe_region",
]


#: Which module of the package holds each name: only that one is imported when the
#: name is first used, so that ``rtshield sweep --help`` (which reads ``limits``) does
#: not import every other one (numpy, Dask, the figures).
_HOMES = {
    "ANSWER_COLUMNS": "table",
    "Axis": "grid",
    "Grid": "grid",
    "HASH_COLUMN": "table",
    "LIST_SECTIONS": "grid",
    "MAX_KEPT_RUNS": "run",
    "MAX_POINTS": "run",
    "MAX_SHOWN": "results",
    "POINT_FILE": "run",
    "PointResult": "run",
    "SWEEP_METRICS": "table",
    "Sweep": "run",
    "answer": "table",
    "boundaries": "results",
    "boundaries_of": "results",
    "check_key": "grid",
    "expand": "grid",
    "folder_name": "run",
    "make_grid": "grid",
    "point_label": "grid",
    "point_scenario": "grid",
    "resumable": "run",
    "run_sweep": "run",
    "scenario_hash": "grid",
    "shown_points": "results",
    "simulate_point": "run",
    "split_values": "grid",
    "sweep_figure": "results",
    "sweep_rows": "results",
    "validate": "run",
    "write_figure": "results",
    "write_safe_region": "results",
}

__getattr__, __dir__ = reexport(__name__, _HOMES, __all__)
