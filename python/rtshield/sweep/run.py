"""Running a sweep's points on Dask: a local cluster of one worker process per
core by default, or a user's cluster by its scheduler address. Results are
written as points finish; a point whose folder already holds the results of
the same scenario (same hash, files unchanged) is not run again."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError
from rtshield.outputs import atomic_write, read_manifest, record_outputs, written
from rtshield.report import RunEntry
from rtshield.runner import RunOutcome, prepare_run_dirs, simulate, write_run
from rtshield.sweep.grid import scenario_hash

__all__ = ["POINT_FILE", "PointResult", "resumable", "run_points", "simulate_point"]

#: Each point's record of what it is: the scenario hash its results belong to.
POINT_FILE = "point.json"


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


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _read_timeseries(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    return {name: table.column(name).to_numpy() for name in table.column_names}


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


def _resume(scenario: Any, point_dir: Path):
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
):
    """Write a finished point's files into its folder (atomically, each recorded)."""
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


def _client(scheduler: str | None, workers: int):
    """A Dask client: on the user's scheduler, or on a local cluster of
    ``workers`` single-threaded worker processes. Returns ``(client, cluster)``."""
    import logging

    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # an incomplete install: one line, not a traceback
        raise UsageError(
            f"sweep: Dask is not installed ({e}); pip install 'dask[distributed]'"
        ) from None
    if scheduler:
        try:
            return Client(scheduler, timeout="5s"), None
        except (OSError, TimeoutError, ValueError) as e:
            raise UsageError(
                f"--scheduler: cannot reach a Dask scheduler at {scheduler!r} ({e})"
            ) from None
    cluster = LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        # the scheduler's HTTP server on a free port: on 8787, taken by another
        # cluster on the machine, Dask would warn on stderr
        scheduler_kwargs={"dashboard_address": ":0"},
        silence_logs=logging.ERROR,
    )
    return Client(cluster), cluster


def run_points(
    scenarios: Sequence[Any],
    labels: Sequence[str],
    values: Sequence[Mapping[str, str]],
    out_dir: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    figures: bool = False,
    on_done: Callable[[int, int, Any], None] | None = None,
) -> tuple[list[Any], int]:
    """Run every point on Dask, each into ``out_dir/runs/LABEL``.

    ``scenarios`` are validated already. A point whose folder holds the
    results of the same scenario (:func:`resumable`) is read back instead of
    run. The others are submitted at once and written as they finish (then
    ``on_done(done, total, outcome)``). If a point fails, the others still
    run to the end and the first failure is raised afterwards. Returns the
    outcomes in grid order and the number of points resumed.
    """
    out, dirs = prepare_run_dirs(out_dir, labels, resumable=True)
    digests = [scenario_hash(sc) for sc in scenarios]
    results: list[Any] = [None] * len(scenarios)
    todo = []
    done = 0
    for i, (sc, d) in enumerate(zip(scenarios, dirs, strict=True)):
        if resumable(d, digests[i], figures):
            results[i] = _resume(sc, d)
            done += 1
            if on_done:
                on_done(done, len(scenarios), results[i])
        else:
            todo.append(i)
    resumed = done
    failed: list[BaseException] = []
    if todo:
        from distributed import as_completed

        n = workers or os.cpu_count() or 1
        client, cluster = _client(scheduler, min(n, len(todo)))
        futures = []
        try:
            futures = [
                client.submit(
                    simulate_point,
                    scenarios[i],
                    figures,
                    key=f"rtshield-point-{digests[i][:16]}-{i}",
                    pure=False,
                )
                for i in todo
            ]
            index = {f.key: i for f, i in zip(futures, todo, strict=True)}
            for fut in as_completed(futures):
                i = index[fut.key]
                try:
                    res = fut.result()
                except Exception as e:  # noqa: BLE001 — let the other points finish first
                    failed.append(e)
                    continue
                results[i] = _store(scenarios[i], digests[i], values[i], res, dirs[i], figures)
                done += 1
                if on_done:
                    on_done(done, len(scenarios), results[i])
        except BaseException:  # Ctrl-C: cancel what has not run, written points stay
            client.cancel(futures)
            raise
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    if failed:  # every other point's numbers are on disk by now
        raise failed[0]
    return [r for r in results if r is not None], resumed
