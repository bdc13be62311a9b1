"""Calibrate the unknown parameters of a device model: ``rtshield calibrate``.

A calibration file (TOML, format in ``docs/calibrate.md``) declares the
unknown parameters, each with physical bounds and a unit, and one objective:

* ``kind = "claims"``: the published claims of a study
  (``rtshield.studies.NAME``: its ``RUNS`` and ``evaluate``, the one home of
  each claim's check and tolerance). A point's score is the number of claims
  that hold.
* ``kind = "counters"``: a user's own per-second counters, measured on the
  board (a CSV with ``t_s`` and any of :data:`COUNTER_COLUMNS`), matched by
  the simulated time series of one scenario. A point's score is minus the
  mean relative RMS error over the columns.

The search is bounded and deterministic for a given ``--seed``: a Latin
hypercube over the box, then coordinate refinement around the best point
(each numeric parameter moved by ± a step that halves when no move helps;
each choice parameter tried at its other values), or, with ``--search tpe``,
optuna's tree-structured Parzen estimator, asked four points at a time.
Points run on Dask (:mod:`rtshield.cluster`: ``jobs`` local workers or a
user's scheduler; one job: in this process); each point runs every scenario
of the objective through the runner's engine call
(:func:`rtshield.runner.simulate`).

The file and a point's scenarios are :mod:`rtshield.calibrate.file`, the
search :mod:`rtshield.calibrate.points`, the record of the evaluated points
that a re-run resumes from :mod:`rtshield.calibrate.record`; the outputs (:func:`write_outputs`,
:mod:`rtshield.calibrate.results`): ``points.csv`` (every point, every
parameter, every objective), ``best.toml`` (the best point as snippets to
paste into a preset and the scenarios), ``tradeoff.png`` (score against each
parameter; how often each pair of claims holds together) and ``report.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rtshield._lazy import reexport

if TYPE_CHECKING:
    from rtshield.calibrate.file import (
        COUNTER_COLUMNS,
        Calibration,
        Param,
        load_calibration,
        read_counters,
        scenarios,
    )
    from rtshield.calibrate.limits import MAX_BUDGET
    from rtshield.calibrate.points import (
        BUDGET_PREFIX,
        MIN_STEP,
        SEARCHES,
        PointResult,
        best_of,
        evaluate_point,
        search,
    )
    from rtshield.calibrate.record import RECORD, PointRecord, calibration_key
    from rtshield.calibrate.results import (
        best_toml,
        pair_matrix,
        points_csv,
        report_md,
        tradeoff_figure,
        write_outputs,
    )

__all__ = [
    "BUDGET_PREFIX",
    "COUNTER_COLUMNS",
    "MAX_BUDGET",
    "MIN_STEP",
    "SEARCHES",
    "Calibration",
    "Param",
    "PointRecord",
    "PointResult",
    "RECORD",
    "best_of",
    "best_toml",
    "calibration_key",
    "evaluate_point",
    "load_calibration",
    "pair_matrix",
    "points_csv",
    "read_counters",
    "report_md",
    "scenarios",
    "search",
    "tradeoff_figure",
    "write_outputs",
]


#: Which module of the package holds each name: only that one is imported when the
#: name is first used, so that ``rtshield calibrate --help`` (which reads ``limits``)
#: does not import every other one (the scenarios, the search's numpy, the figures).
_HOMES = {
    "BUDGET_PREFIX": "points",
    "COUNTER_COLUMNS": "file",
    "Calibration": "file",
    "MAX_BUDGET": "limits",
    "MIN_STEP": "points",
    "Param": "file",
    "PointRecord": "record",
    "PointResult": "points",
    "RECORD": "record",
    "SEARCHES": "points",
    "best_of": "points",
    "best_toml": "results",
    "calibration_key": "record",
    "evaluate_point": "points",
    "load_calibration": "file",
    "pair_matrix": "results",
    "points_csv": "results",
    "read_counters": "file",
    "report_md": "results",
    "scenarios": "file",
    "search": "points",
    "tradeoff_figure": "results",
    "write_outputs": "results",
}

__getattr__, __dir__ = reexport(__name__, _HOMES, __all__)
