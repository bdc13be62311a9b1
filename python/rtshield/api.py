"""The notebook API: simulate, analyse, design and sweep from Python.

``import rtshield`` gives the four calls at the package top::

    import rtshield
    run = rtshield.simulate("scenarios/danicki2021/queue_500.toml",
                            overrides={"scenario.duration": "5s"})
    run.timeseries            # pandas DataFrame, one row per bin
    run.met_every_deadline    # did the critical task meet every deadline?

Each call takes what the command line takes (a scenario or system file, the
same ``SECTION.KEY`` overrides) and returns a typed result whose tables are
pandas DataFrames (``.to_arrow()`` gives the pyarrow Table). They run the
same code as ``rtshield run``, ``analyze``, ``design`` and ``sweep``, without
writing files; bad input raises :class:`rtshield.errors.UsageError` with the
same one-line message.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from rtshield.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from rtshield.analysis.design import Design as _Design
    from rtshield.analysis.report import Report as _Report
    from rtshield.result import Result
    from rtshield.scenario import Scenario

__all__ = ["Analysis", "DesignResult", "Simulation", "SweepResult", "analyze", "design",
           "simulate", "sweep"]

#: A scenario: a file path, or a scenario already loaded with
#: :func:`rtshield.scenario.load_scenario`.
ScenarioLike = Union[str, Path, "Scenario"]
#: Overrides as on the command line: ``{"driver.queue": 750, "scenario.duration": "5s"}``.
Overrides = Mapping[str, Any]


def _raw(value: Any) -> str:
    """A Python value as the text ``--set`` takes (``True`` → ``true``, ``[1, 2]`` → ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(f'"{v}"' if isinstance(v, str) else _raw(v) for v in value) + "]"
    return str(value)


def _points(overrides: Overrides | None, what: str = "overrides") -> dict[str, str]:
    """Overrides as one ``--set`` point: every key checked, every value as text."""
    from rtshield.sweep import check_key

    point = {}
    for key, value in (overrides or {}).items():
        check_key(str(key), f"{key}={value}", what)
        point[str(key)] = _raw(value)
    return point


def _load(scenario: ScenarioLike, overrides: Overrides | None) -> Scenario:
    """The validated scenario with ``overrides`` applied exactly as ``--set`` applies them
    (``SECTION.KEY``, or ``SECTION.NAME.KEY`` for an entry of ``[[flows]]``, …)."""
    from rtshield.scenario import Scenario
    from rtshield.sweep import point_scenario
    from rtshield.tomlfile import read_toml_text

    point = _points(overrides)
    if isinstance(scenario, Scenario):
        if not point:
            return scenario
        if not scenario.path or not Path(scenario.path).is_file():
            raise UsageError("overrides: need a scenario file; this scenario has none")
        scenario = scenario.path
    data, text = read_toml_text(scenario)
    return point_scenario(data, text, str(scenario), point, "overrides")


def _frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({k: list(v) if not hasattr(v, "dtype") else v
                         for k, v in columns.items()})


@dataclass(frozen=True)
class Simulation:
    """One simulated run: the scenario, the engine's result and its tables."""

    scenario: Scenario
    result: Result = field(repr=False)

    @property
    def summary(self) -> dict[str, Any]:
        """What ``summary.json`` holds (plain JSON types)."""
        return self.result.summary()

    @property
    def timeseries(self) -> pd.DataFrame:
        """One row per bin (``t_s`` the bin's start): the columns of ``timeseries.csv``."""
        return _frame(self.result.timeseries)

    def to_arrow(self) -> pa.Table:
        """The time series as a pyarrow Table (what ``timeseries.parquet`` holds)."""
        import pyarrow as pa

        return pa.Table.from_pandas(self.timeseries, preserve_index=False)

    @property
    def misses(self) -> int:
        """Deadline misses of the critical task."""
        return int(self.result.critical.get("misses") or 0)

    @property
    def answer(self) -> dict[str, Any]:
        """What ``rtshield sweep`` answers for a point (:func:`rtshield.sweep.answer`):
        ``safe``, ``worst_response_us``, ``margin_us``, ``lateness_max_pct``."""
        from rtshield.sweep import answer

        return answer(self.summary, self.scenario.critical.period_ns / 1000.0)

    @property
    def met_every_deadline(self) -> bool:
        """Every critical cycle that ended met its deadline, and at least one ended."""
        return bool(self.answer["safe"])

    @property
    def worst_response_us(self) -> float:
        """The critical task's worst response time (µs)."""
        return float(self.answer["worst_response_us"] or 0.0)

    @property
    def margin_us(self) -> float | None:
        """The period minus the worst response time (µs; negative: late)."""
        return self.answer["margin_us"]

    def write(self, out_dir: str | Path) -> Path:
        """Write every output of ``rtshield run`` (summary, series, figures, report) into
        ``out_dir``, all or nothing (docs/outputs.md): written beside it and moved into
        place when complete; a failure leaves ``out_dir`` as it was. Returns the
        report's path."""
        from rtshield.outputs import abort_out_dir, finish_out_dir, prepare_out_dir
        from rtshield.runner import write_run

        out = prepare_out_dir(out_dir)
        try:
            write_run(self.scenario, self.result, out)
            finish_out_dir(out)
        finally:
            abort_out_dir(out)  # after a failure: out_dir keeps its earlier results
        return Path(out_dir) / "report.html"


def simulate(
    scenario: ScenarioLike,
    overrides: Overrides | None = None,
    *,
    seed: int | None = None,
    duration: str | None = None,
) -> Simulation:
    """Simulate a scenario (``rtshield run`` without the files).

    ``overrides`` sets keys as ``--set`` does; ``seed`` and ``duration``
    (``"5s"``) are shorthands for ``scenario.seed`` and ``scenario.duration``.
    """
    from rtshield.runner import simulate as run_engine

    over = dict(overrides or {})
    if seed is not None:
        over["scenario.seed"] = int(seed)
    if duration is not None:
        over["scenario.duration"] = duration
    sc = _load(scenario, over)
    return Simulation(sc, run_engine(sc))


@dataclass(frozen=True)
class Analysis:
    """The worst-case response-time analysis of a system (``rtshield analyze``)."""

    report: _Report = field(repr=False)

    @property
    def schedulable(self) -> bool:
        return bool(self.report.schedulable)

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task, highest priority first; times in µs (``wcrt_us``, ``D_us``, …)."""
        import pandas as pd

        return pd.DataFrame(self.report.to_json()["tasks"])

    def to_json(self) -> dict[str, Any]:
        return self.report.to_json()

    def __str__(self) -> str:
        return self.report.table()


def analyze(system: str | Path) -> Analysis:
    """Analyse a ``SYSTEM.toml`` (docs/analysis.md): every task's worst-case response time."""
    from rtshield.analysis import analyze_system

    return Analysis(_on_system(system, analyze_system))


def _on_system(system: str | Path, fn: Callable[[Any], Any]) -> Any:
    """``fn`` on the loaded ``SYSTEM.toml``; an error in either names the file."""
    from rtshield.analysis.system import load_system, naming_file

    with naming_file(system):
        return fn(load_system(system))


@dataclass(frozen=True)
class DesignResult:
    """The safe boundary of a system's one open parameter (``rtshield design``)."""

    design: _Design = field(repr=False)

    @property
    def value(self) -> int | None:
        """The most generous safe value (ns for a duration, else a count); ``None``: none."""
        return self.design.value

    @property
    def margin_ns(self) -> int | None:
        return self.design.margin_ns()

    def to_json(self) -> dict[str, Any]:
        return self.design.to_json()

    def __str__(self) -> str:
        return self.design.text()


def design(system: str | Path) -> DesignResult:
    """Find the boundary of the parameter written ``"?"`` in a ``SYSTEM.toml``."""
    from rtshield.analysis.design import design_system

    return DesignResult(_on_system(system, design_system))


@dataclass(frozen=True)
class SweepResult:
    """One simulation per point of a grid (``rtshield sweep`` without the files)."""

    keys: tuple[str, ...]
    points: tuple[dict[str, Any], ...]
    runs: tuple[Simulation, ...] = field(repr=False)

    @property
    def table(self) -> pd.DataFrame:
        """One row per point, the columns of ``sweep.csv`` but its first (``point``) and
        last (``scenario_sha256``): the swept keys, the answer
        (``safe``, ``worst_response_us``, ``margin_us``, ``lateness_max_pct``), then the
        key numbers (:data:`rtshield.sweep.SWEEP_METRICS`)."""
        from rtshield.sweep import Axis, sweep_rows

        axes = [Axis(k, tuple(str(p[k]) for p in self.points)) for k in self.keys]
        rows = sweep_rows(
            axes,
            [{k: p[k] for k in self.keys} for p in self.points],
            [r.summary for r in self.runs],
            [r.scenario.critical.period_ns / 1000.0 for r in self.runs],
        )
        return _frame({k: [r[k] for r in rows] for k in rows[0]}) if rows else _frame({})


def _sweep_point(job: tuple[str, dict[str, Any]]) -> Simulation:
    path, over = job
    return simulate(path, over)


def sweep(
    scenario: str | Path,
    grid: Mapping[str, Sequence[Any]],
    overrides: Overrides | None = None,
    *,
    jobs: int = 1,
) -> SweepResult:
    """Simulate every combination of ``grid`` (``{"driver.queue": [100, 500, 750]}``).

    ``overrides`` hold fixed settings for every point; ``jobs`` > 1 runs points
    in that many processes. Points come back in grid order (the last key
    varies fastest), whatever ``jobs`` is.
    """
    if not grid:
        raise UsageError("sweep: the grid is empty; give at least one key with values")
    if jobs < 1:
        raise UsageError(f"sweep: jobs must be at least 1, got {jobs}")
    keys = tuple(grid)
    values = [list(grid[k]) for k in keys]
    for k, v in zip(keys, values, strict=True):
        if not v:
            raise UsageError(f"sweep: {k}: no values")
    _points(dict.fromkeys(keys, ""), "sweep")  # every key is SECTION.KEY or SECTION.NAME.KEY
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]
    job_list = [(str(scenario), {**dict(overrides or {}), **p}) for p in points]
    if jobs == 1 or len(job_list) == 1:
        runs = [_sweep_point(j) for j in job_list]
    else:
        with cf.ProcessPoolExecutor(max_workers=jobs) as pool:
            runs = list(pool.map(_sweep_point, job_list))
    return SweepResult(keys, tuple(points), tuple(runs))
