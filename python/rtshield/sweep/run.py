"""Running a sweep on Dask (:mod:`rtshield.cluster`): a local cluster of one
worker process per core by default, or a user's cluster by its scheduler
address.

The points are made one at a time from the grid, validated all before any
runs, then streamed to the workers, up to :data:`BATCH` points a Dask task and
a bounded number of tasks in flight; each worker
sends back the point's summary, whose row goes into ``sweep.csv`` in grid
order as the point finishes (:mod:`rtshield.sweep.table`). Nothing of a
point is kept but its row, so the client's memory does not grow with the
grid. A point's own folder (``runs/NAME``: summary, time series, report,
figures) is written for every point with ``keep_runs``, and otherwise only
for the points the report shows (:func:`rtshield.sweep.results.shown_points`),
simulated again after the stream: the same scenario gives the same numbers.

A re-run into the same folder resumes: a point whose row in the previous
``sweep.csv`` has the same index and scenario hash is not run again, nor is
a folder that already holds the results of the same scenario. The sweep
writes into the staging folder beside ``--out`` (:mod:`rtshield.outputs`,
resumable): the previous table is the one a failed sweep left there, else the
one in ``--out`` (read, never changed); a point's folder starts with the
earlier results of that folder of ``--out``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.cluster import Cluster, stream
from rtshield.errors import UsageError
from rtshield.outputs import (
    atomic_write,
    claim_dir,
    prepare_out_dir,
    read_manifest,
    record_outputs,
    written,
)
from rtshield.outputs import shown as shown_path
from rtshield.report import RunEntry
from rtshield.runner import RunOutcome, safe_name, simulate, write_run
from rtshield.sweep import results, table
from rtshield.sweep.grid import Grid, point_label, point_scenario, scenario_hash
from rtshield.sweep.limits import MAX_KEPT_RUNS, MAX_POINTS, MAX_SHOWN

__all__ = [
    "MAX_KEPT_RUNS",
    "MAX_POINTS",
    "POINT_FILE",
    "PointResult",
    "Sweep",
    "folder_name",
    "resumable",
    "run_sweep",
    "simulate_point",
    "validate",
]

#: Each point's record of what it is: the scenario hash its results belong to.
POINT_FILE = "point.json"

#: The most points of one Dask task: a task costs Dask a few milliseconds of the
#: client's, the scheduler's and the worker's time, a point of a full Danicki
#: scenario about 70 ms of the engine's; 16 points make Dask's share small and
#: a task short (about a second), so the workers stay evenly busy to the end.
BATCH = 16


def _batch_size(n: int, workers: int) -> int:
    """The points of one task in a sweep of ``n`` points on ``workers`` workers: up to
    :data:`BATCH`, at least eight tasks a worker (a small grid: one point a task)."""
    return max(1, min(BATCH, n // (8 * max(1, workers))))


@dataclass(frozen=True)
class PointResult:
    """What a worker sends back for one point: the numbers and every file's bytes."""

    summary: dict[str, Any]
    timeseries: dict[str, Any]
    files: dict[str, bytes]  #: name → content, written by the client into the point's folder
    figures: dict[str, str]  #: figure key → file name among ``files``
    wall_s: float


def simulate_point(scenario: Any, figures: bool = False) -> PointResult:
    """Simulate one point and render its outputs (on a Dask worker).

    The files are rendered in a temporary folder on the worker and sent back
    as bytes, so workers need no access to the client's ``--out`` folder
    (a user's cluster may run on other machines).
    """
    import tempfile

    t0 = time.perf_counter()
    result = simulate(scenario)
    with tempfile.TemporaryDirectory(prefix="rtshield-point-") as tmp:
        entry = write_run(scenario, result, tmp, figures=figures)
        files = {
            p.name: p.read_bytes()
            for p in sorted(Path(tmp).iterdir())
            if p.is_file() and not p.name.startswith(".")
        }
        figs = {k: Path(v).name for k, v in entry.figures.items()}
    return PointResult(
        dict(entry.summary), dict(result.timeseries), files, figs, time.perf_counter() - t0
    )


def point_summary(scenario: Any) -> dict[str, Any]:
    """Simulate one point and return its summary only (on a Dask worker)."""
    return simulate(scenario).summary()


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _read_timeseries(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    return {name: t.column(name).to_numpy() for name in t.column_names}


def resumable(point_dir: Path, digest: str, figures: bool = False) -> bool:
    """True when ``point_dir`` holds complete results of the scenario with hash
    ``digest``: its ``point.json`` names that hash (and says the run's figures
    were drawn, when ``figures``), and ``summary.json``, ``timeseries.parquet``
    and ``report.html`` are there, unchanged since rtshield wrote them (their
    SHA-256 in the folder's manifest)."""
    try:
        rec = json.loads((point_dir / POINT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(rec, dict) or rec.get("scenario_sha256") != digest:
        return False
    if figures and rec.get("figures") is not True:
        return False
    files = read_manifest(point_dir)[0]
    need = (POINT_FILE, "summary.json", "timeseries.parquet", "report.html")
    return all(n in files and _sha256(point_dir / n) == files[n] for n in need)


def _resume(scenario: Any, point_dir: Path) -> RunOutcome:
    """The outcome of a point already computed, read back from its folder."""
    files = read_manifest(point_dir)[0]
    summary = json.loads((point_dir / "summary.json").read_text(encoding="utf-8"))
    figs = {
        name[: -len(".png")]: point_dir / name for name in sorted(files) if name.endswith(".png")
    }
    return RunOutcome(
        RunEntry(scenario=scenario, summary=summary, figures=figs),
        _read_timeseries(point_dir / "timeseries.parquet"),
        point_dir,
        0.0,
        files,
    )


def _store(
    scenario: Any, digest: str, values: Mapping[str, str], res: PointResult, d: Path, figures: bool
) -> RunOutcome:
    """Write a finished point's files into its folder (atomically, each recorded)."""
    prepare_out_dir(d)
    for name, data in res.files.items():
        atomic_write(d / name, data)
    # last: only a complete point is ever taken as done by a later run
    rec = {"scenario_sha256": digest, "values": dict(values), "figures": figures}
    atomic_write(d / POINT_FILE, json.dumps(rec, indent=2, sort_keys=True) + "\n")
    record_outputs(d)
    figs = {k: d / name for k, name in res.figures.items()}
    return RunOutcome(
        RunEntry(scenario=scenario, summary=res.summary, figures=figs),
        res.timeseries,
        d,
        res.wall_s,
        written(d),
    )


def folder_name(point: Mapping[str, str], grid: Grid) -> str:
    """The name of a point's folder under ``runs/``: its swept values
    (``capacity_600``, ``syn.peak_50000pps``), with a digest of them when the
    name had to drop characters or be shortened."""
    label = point_label(point, grid.axes)
    name = safe_name(label, set())
    if name != label.replace("=", "_").replace(",", "_") or len(name) >= 100:
        name = f"{name[:90]}-{hashlib.sha256(label.encode()).hexdigest()[:8]}"
    return name


@dataclass(frozen=True)
class Sweep:
    """A finished sweep: where its table is and what the report needs."""

    grid: Grid
    table: Path  #: sweep.csv
    rows: int  #: rows in the table (points that did not fail)
    resumed: int  #: points whose rows were in the previous table
    shown: list[RunOutcome]  #: the points the report shows, in grid order
    shown_index: list[int]
    bounds: list[dict[str, Any]]
    cols: dict[str, np.ndarray]  #: safe, margin_us and the figure's columns, in grid order
    failed: list[tuple[int, BaseException]]  #: (point index, its error), in finishing order


def validate(grid: Grid, base: tuple[Any, str, str], bar: Any = None) -> None:
    """Validate every point (a :class:`UsageError` names the first bad one)."""
    data, text, origin = base
    n = len(grid)
    for i, point in enumerate(grid):
        try:
            point_scenario(data, text, origin, point)
        except UsageError as e:
            raise UsageError(f"{e} (in point {point_label(point, grid.axes)})") from None
        if bar is not None and (i % 64 == 63 or i == n - 1):
            bar(i + 1, n)


def run_sweep(
    grid: Grid,
    base: tuple[Any, str, str],
    out_dir: str | Path,
    *,
    workers: int = 1,
    scheduler: str | None = None,
    keep_runs: bool = False,
    figures: bool = False,
    bar: Any = None,
    shown_limit: int = MAX_SHOWN,
) -> Sweep:
    """Run every point of ``grid`` on Dask into ``out_dir`` (validated already:
    :func:`validate`; the folder made by :func:`~rtshield.outputs.prepare_out_dir`).
    ``base`` is the scenario's ``(document, text, file name)``.

    Rows go into ``sweep.csv`` as points finish, then ``sweep.parquet`` is
    written and the safe region, the shown points and their folders found. If a
    point fails, the others still run to the end (the table is written) and
    the first failure is in :attr:`Sweep.failed`. ``bar``: a
    :class:`~rtshield.progress.ProgressBar` with the phases "simulating" and
    "the shown points".
    """
    data, text, origin = base
    axes = grid.axes
    n = len(grid)
    out = Path(out_dir)
    given = shown_path(out)  # the --out this staging folder becomes
    if not (given / "runs").exists() or "runs" in read_manifest(given)[1]:
        claim_dir(out, "runs")
    columns = table.header(axes)
    # a grid the report shows whole: every point's folder as it finishes
    keep = keep_runs or n <= shown_limit
    failed: list[tuple[int, BaseException]] = []
    resumed = 0
    with Cluster(scheduler, workers) as cluster:
        batch = _batch_size(n, cluster.workers)
        live = table.LiveTable.resuming(
            out,
            columns,
            name=table.TABLE,
            # room for every point in flight (twice the workers' tasks), and as many again
            room=max(64, 4 * batch * cluster.workers),
        )

        def jobs() -> Iterator[Any]:
            nonlocal resumed
            for i, point in enumerate(grid):
                while not live.has_room():
                    yield None
                sc = point_scenario(data, text, origin, point)
                digest = scenario_hash(sc)
                prev = live.previous(i, digest)
                d = _point_dir(out, folder_name(point, grid)) if keep else None
                if prev is not None and (d is None or resumable(d, digest, figures)):
                    live.put(i, prev)
                    resumed += 1
                    if d is not None:
                        claim_dir(out, f"runs/{d.name}")
                    continue
                if d is not None:
                    yield (i, point, sc, digest, d), (simulate_point, sc, figures)
                else:
                    yield (i, point, sc, digest, d), (point_summary, sc)

        complete = False
        try:
            for (i, point, sc, digest, d), res, err in stream(
                cluster, _call, jobs(), batch=batch
            ):
                if err is not None:
                    failed.append((i, err))
                    live.put(i, None)
                    continue
                if d is not None:
                    claim_dir(out, f"runs/{d.name}")
                    summary = _store(sc, digest, point, res, d, figures).entry.summary
                else:
                    summary = res
                nums = table.numbers(summary, sc.critical.period_ns / 1e3)
                live.put(i, table.row(columns, i, point, axes, nums, digest))
                if bar is not None:
                    bar(live.next, n)
            complete = True
        finally:
            live.close(complete)
        if bar is not None:
            bar(n, n)
        table.write_parquet(out, columns)
        cols = _columns(out, n)
        bounds = results.boundaries_of(axes, cols["safe"])
        shown_index = results.shown_points(n, bounds, cols["margin_us"], shown_limit)
        shown = _shown(cluster, grid, base, out, shown_index, figures, bar)
    return Sweep(grid, live.path, live.rows, resumed, shown, shown_index, bounds, cols, failed)


def _point_dir(out: Path, name: str) -> Path:
    """A point's folder ``runs/NAME`` in the staging folder ``out``, holding the
    earlier results of that folder of ``--out`` (:func:`~rtshield.outputs.prepare_out_dir`),
    so that a finished point is not run again."""
    d = prepare_out_dir(out / "runs" / name)
    claim_dir(out, f"runs/{name}")
    return d


def _call(fn: Any, *args: Any) -> Any:
    """A job on a worker: ``fn(*args)`` (the point's simulation)."""
    return fn(*args)


def _columns(out: Path, n: int) -> dict[str, np.ndarray]:
    want = ("safe", "margin_us", *results.FIGURE_COLUMNS)
    got = results.read_columns(out, want)
    return {
        c: results.states(n, got["point"], got[c], -1 if c == "safe" else np.nan) for c in want
    }


def _shown(
    cluster: Cluster,
    grid: Grid,
    base: tuple[Any, str, str],
    out: Path,
    index: Sequence[int],
    figures: bool,
    bar: Any,
) -> list[RunOutcome]:
    """The folders of the points the report shows: read back when they hold the
    same scenario's results, else simulated again (on the cluster) and written."""
    data, text, origin = base
    done: dict[int, RunOutcome] = {}
    todo = []
    for i in index:
        point = grid[i]
        sc = point_scenario(data, text, origin, point)
        digest = scenario_hash(sc)
        d = _point_dir(out, folder_name(point, grid))
        if resumable(d, digest, figures):
            done[i] = _resume(sc, d)
        else:
            todo.append(((i, point, sc, digest, d), (simulate_point, sc, figures)))
    if bar is not None:
        bar.phase("the shown points")
        bar(len(done), len(index))
    for (i, point, sc, digest, d), res, err in stream(cluster, _call, todo):
        if err is not None:
            raise err
        done[i] = _store(sc, digest, point, res, d, figures)
        if bar is not None:
            bar(len(done), len(index))
    record_outputs(out)
    return [done[i] for i in index]
