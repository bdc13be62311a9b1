"""Run scenarios and write their results: one run, or several in parallel processes.

The order of writing is the order of value: ``summary.json`` first, then the
time series (CSV, Parquet), then the figures, then ``report.html`` — so a
failure late (a figure, a full disk) never loses the numbers already computed.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtshield._native import NativeError
from rtshield.errors import OutputError, UsageError
from rtshield.outputs import (
    abort_out_dir,
    atomic_write,
    check_out_dir,
    claim_dir,
    finish_out_dir,
    format_summary_json,
    in_command_output,
    in_staging,
    prepare_out_dir,
    read_manifest,
    record_outputs,
    write_summary,
    write_timeseries,
    written,
)
from rtshield.report import RunEntry, compare_report, run_report
from rtshield.scenario import Scenario, load_scenario, parse_scenario
from rtshield.tomlfile import read_toml_text

__all__ = [
    "RunOutcome",
    "compare",
    "figure_workers",
    "finish_jobs",
    "late_output",
    "run_jobs",
    "run_many",
    "run_one",
    "safe_name",
    "simulate",
    "write_run",
]


@dataclass(frozen=True)
class RunOutcome:
    """A finished run: what the report needs plus the time series and the wall time."""

    entry: RunEntry
    timeseries: Mapping[str, Any]
    out_dir: Path
    wall_s: float
    #: ``{name: sha256}`` of the files the run wrote into ``out_dir`` (its manifest).
    files: Mapping[str, str] = field(default_factory=dict)


def simulate(scenario: Scenario, progress: Callable[[float, float], None] | None = None) -> Any:
    """Call the engine (:func:`rtshield.engine.simulate`)."""
    try:
        from rtshield.engine import simulate as engine_simulate
    except ImportError as e:
        raise UsageError(
            f"engine: the simulation engine is not available in this build ({e})"
        ) from None
    try:
        return engine_simulate(scenario, progress=progress)
    except NativeError as e:  # a broken install: say so in one line
        raise UsageError(f"engine: {e}") from None


def late_output(
    out_dir: str | Path, what: str, saved: str, fn: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``fn`` (a figure or a report) after the numbers are on disk.

    Any failure (matplotlib, a full disk, a bug) becomes one
    :class:`OutputError` line naming ``out_dir``, what failed and what is
    already ``saved``, instead of a traceback.
    """
    try:
        return fn(*args, **kwargs)
    except (OutputError, UsageError):
        raise
    except Exception as e:  # noqa: BLE001 — reported, never swallowed
        detail = " ".join(f"{type(e).__name__}: {e}".split())
        raise OutputError(
            f"{out_dir}: writing the {what} failed ({detail}); {saved} already written"
        ) from None


def write_run(
    scenario: Scenario,
    result: Any,
    out_dir: str | Path,
    *,
    figures: bool = True,
    pool: cf.Executor | None = None,
) -> RunEntry:
    """Write every output of one run into ``out_dir`` (which must exist).

    The numbers first; a failing figure or report raises :class:`OutputError`
    with ``summary.json`` and the time series already on disk. ``figures``
    false leaves out the run's own PNG figures (its report then has none);
    matplotlib is then not even imported. With ``pool`` (:func:`figure_workers`)
    the figures are drawn in its processes, the same bytes.
    """
    out = Path(out_dir)
    saved = "summary.json and the time series are"
    if figures:
        from rtshield import figures as drawing  # looked up when called: tests replace them
        from rtshield.engine_config import on_ticks  # loaded by the run already

        # the period the task keeps: ticks of a late tick are longer
        period_us = on_ticks(scenario, scenario.critical.period_ns) / 1e3
        # a pool draws while the numbers are written here (they are still written first)
        drawn = late_output(
            out, "figures", "nothing is", lambda: drawing.submit_run_figures(
                drawing.run_figure_jobs(result, scenario.name, period_us), pool),
        ) if pool is not None else None
    summary = result.summary()
    write_summary(out, summary)
    write_timeseries(out, result.timeseries)
    figs: dict[str, Path] = {}
    if figures:
        figs = late_output(
            out,
            "figures",
            saved,
            drawing.run_figures,
            result,
            scenario.name,
            out,
            period_us=period_us,
            **({"pool": pool, "drawing": drawn} if pool is not None else {}),
        )
    entry = RunEntry(scenario=scenario, summary=summary, figures=figs)
    late_output(out, "report", saved, run_report, out, entry)
    return entry


def run_one(
    scenario: Scenario,
    out_dir: str | Path,
    progress: Callable[[float, float], None] | None = None,
    *,
    figures: bool = True,
    pool: cf.Executor | None = None,
) -> RunOutcome:
    """Simulate ``scenario`` and write its outputs into ``out_dir`` (its own
    figures unless ``figures`` is false; drawn in ``pool``'s processes if given).

    Inside a command's output folder (``rtshield run``'s, a run folder of
    ``compare``) the command moves it into place; an ``out_dir`` of its own is
    written all or nothing here (:func:`~rtshield.outputs.prepare_out_dir`)."""
    own = not in_command_output(out_dir)
    out = prepare_out_dir(out_dir)
    try:
        t0 = time.perf_counter()
        result = simulate(scenario, progress=progress)
        try:
            entry = write_run(scenario, result, out, figures=figures, pool=pool)
        finally:  # listed: a failure later removes nothing
            record_outputs(out)
        files = written(out)
        if own:
            finish_out_dir(out)
            out = Path(out_dir)
    finally:
        if own:
            abort_out_dir(out)  # nothing if it was moved into place
    return RunOutcome(entry, dict(result.timeseries), out, time.perf_counter() - t0, files)


def _die_with(parent: int) -> None:
    """End this process when ``parent`` ends, however it ends (SIGKILL too): Linux's
    PR_SET_PDEATHSIG; a parent already gone ends it at once. Without it a worker
    whose run was killed would wait on its pipe for ever."""
    import ctypes
    import os
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:
        os._exit(1)


def _figure_worker(parent: int) -> None:
    """A figure worker's start: it ends with ``parent`` (:func:`_die_with`); Ctrl-C
    and SIGTERM are the parent's business (:func:`_ignore_sigint`; both were
    blocked across the fork, so neither reaches the worker before this), and
    matplotlib is imported now, while the parent still validates and simulates."""
    _die_with(parent)
    _ignore_sigint()
    try:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401

        import rtshield.figures  # noqa: F401
    except Exception:  # noqa: BLE001, S110 — the figure job imports them again and says why
        pass


@contextlib.contextmanager
def figure_workers() -> Iterator[cf.Executor | None]:
    """Processes that draw one run's figures (:func:`run_one`'s ``pool``), one per
    CPU beyond this process's, at most two, forked now so that they import matplotlib
    while this process validates the scenario and simulates (this process then
    never imports it); stopped when the block ends, however it ends.

    In a process that has matplotlib imported already (a resident server's child,
    :mod:`rtshield.daemon`) the workers import nothing and this process only waits
    for them once the results exist: one per CPU then (on two or more), at most four.

    ``None`` (figures drawn in this process) on one CPU or where processes cannot
    be forked. Call it before any other thread starts: a fork copies only the
    calling thread.
    """
    import multiprocessing
    import os
    import sys

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    warm = "matplotlib.backends.backend_agg" in sys.modules
    workers = (min(4, cpus) if cpus > 1 else 0) if warm else min(2, cpus - 1)
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - Windows
        ctx = None
    if workers < 1 or ctx is None:
        yield None
        return
    import numpy  # noqa: F401 — the run needs it anyway; forked, the workers have it too

    pool = cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_figure_worker, initargs=(os.getpid(),)
    )
    try:
        with _forking():  # start them now
            for _ in range(workers):
                pool.submit(int)
        yield pool
    except BaseException:  # a failure, Ctrl-C: the workers are ended, not waited for
        _stop_workers(pool)
        raise
    # idle workers leave at once; the pool's own thread is joined
    pool.shutdown(wait=True, cancel_futures=True)


def safe_name(name: str, taken: set[str]) -> str:
    """A file-system-safe, unique folder name derived from a scenario name."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:100] or "run"
    cand, i = base, 2
    while cand in taken:
        cand, i = f"{base}-{i}", i + 1
    taken.add(cand)
    return cand


def prepare_run_dirs(
    out_dir: str | Path, names: Sequence[str], *, resumable: bool = False
) -> tuple[Path, list[Path]]:
    """Prepare the output directory ``out_dir`` with a folder ``runs/NAME`` for each of
    ``names`` (made file-system safe and unique). Every directory is checked before any
    is created; ``runs`` and each run folder are recorded as rtshield's (``runs`` only
    when rtshield made it). Returns (the folder to write in — the staging folder of
    ``out_dir`` — and the run folders in it); ``resumable``: see
    :func:`~rtshield.outputs.prepare_out_dir`."""
    given = check_out_dir(out_dir)
    taken: set[str] = set()
    labels = [safe_name(n, taken) for n in names]
    for name in labels:
        check_out_dir(given / "runs" / name)
    runs_ours = not (given / "runs").exists() or "runs" in read_manifest(given)[1]
    out = prepare_out_dir(out_dir, resumable=resumable)
    if runs_ours:
        claim_dir(out, "runs")
    dirs = []
    for name in labels:
        dirs.append(prepare_out_dir(out / "runs" / name))
        claim_dir(out, f"runs/{name}")
    record_outputs(out)
    return out, dirs


_STOPS = frozenset({2, 15})  # SIGINT, SIGTERM (the signal module is imported when used)


@contextlib.contextmanager
def _forking() -> Iterator[None]:
    """Around the first ``submit`` of a forking pool (which forks every worker): Ctrl-C
    and SIGTERM wait, in this process, until the block ends; a worker starts with
    both blocked, so neither runs this process's handlers in it before
    :func:`_ignore_sigint` has set its own."""
    import signal

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _ignore_sigint() -> None:
    """Worker start-up: Ctrl-C goes to the parent, which stops the workers itself.

    Without this every worker would print its own KeyboardInterrupt traceback.
    SIGTERM gets its default action back (the parent's handler, inherited by a
    forked worker, would unwind the worker like Ctrl-C). Both are then unblocked
    (forked inside :func:`_forking`, the worker started with them blocked).
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Cancel queued runs and end running ones (their files are written atomically).

    The workers are ended first, then the pool is shut down and its thread joined:
    shut down without waiting, its thread could still be cleaning up when the
    interpreter exits and ``concurrent.futures`` then woke it through a pipe
    already closed (a traceback after ``rtshield: interrupted``)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
    pool.shutdown(wait=True, cancel_futures=True)


def _worker(job: tuple[str, Mapping[str, Any] | None, str, bool]) -> RunOutcome:
    path, overrides, out, figures = job
    return run_one(load_scenario(path, overrides, overrides_origin="--set"), out, figures=figures)


def run_many(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    jobs: int = 2,
    overrides: Mapping[str, Any] | None = None,
    on_done: Callable[[int, int, RunOutcome], None] | None = None,
    figures: bool = True,
) -> list[RunOutcome]:
    """Run several scenario files, ``jobs`` at a time, each into ``out_dir/runs/NAME``.

    All files are validated before anything runs, so a bad file costs nothing.
    Returns the outcomes in the order of ``paths``. ``figures`` false: no
    per-run figures (the comparative report draws its own).
    """
    return run_jobs(
        [(p, overrides, None) for p in paths],
        out_dir,
        jobs=jobs,
        on_done=on_done,
        figures=figures,
    )


def run_jobs(
    specs: Sequence[tuple[str | Path, Mapping[str, Any] | None, str | None]],
    out_dir: str | Path,
    *,
    jobs: int = 2,
    on_done: Callable[[int, int, RunOutcome], None] | None = None,
    figures: bool = True,
) -> list[RunOutcome]:
    """Run ``(scenario file, overrides, folder name or None)`` jobs, ``jobs`` at a time.

    Each run writes into ``out_dir/runs/NAME`` (NAME defaults to the scenario's
    name, made unique). Every job is validated before anything runs. Returns
    the outcomes in the order of ``specs``. If a run fails, the others still
    run to the end (their results are written) and the first failure is
    raised afterwards.
    """
    scenarios = []
    files: dict[str, tuple[dict[str, Any], str]] = {}  # each file is read once
    for p, o, name in specs:
        try:
            if str(p) not in files:
                files[str(p)] = read_toml_text(p)
            data, text = files[str(p)]
            scenarios.append(
                parse_scenario(data, str(p), overrides=o, text=text, overrides_origin="--set")
            )
        except UsageError as e:
            if name is None:
                raise
            raise UsageError(f"{e} (in point {name})") from None
    out, dirs = prepare_run_dirs(
        out_dir, [name or s.name for s, (_, _, name) in zip(scenarios, specs, strict=True)]
    )
    work = [(str(p), o, str(d), figures) for (p, o, _), d in zip(specs, dirs, strict=True)]
    results: list[RunOutcome | None] = [None] * len(work)
    failed: list[BaseException] = []
    if jobs <= 1 or len(work) == 1:
        for i, job in enumerate(work):
            try:
                results[i] = _worker(job)
            except Exception as e:  # noqa: BLE001 — let the other runs finish first
                failed.append(e)
                continue
            if on_done:
                on_done(i + 1, len(work), results[i])  # type: ignore[arg-type]
    else:
        pool = cf.ProcessPoolExecutor(max_workers=min(jobs, len(work)), initializer=_ignore_sigint)
        try:
            with _forking():  # the first submit forks every worker
                futs = {pool.submit(_worker, job): i for i, job in enumerate(work)}
            done = 0
            for fut in cf.as_completed(futs):
                done += 1
                try:
                    results[futs[fut]] = fut.result()
                except Exception as e:  # noqa: BLE001 — let the other runs finish first
                    failed.append(e)
                    continue
                if on_done:
                    on_done(done, len(work), results[futs[fut]])  # type: ignore[arg-type]
        except BaseException:  # Ctrl-C: stop the workers now, not after their runs
            _stop_workers(pool)
            raise
        pool.shutdown(wait=True)
    if failed:  # every other run's numbers are on disk by now
        raise failed[0]
    return [r for r in results if r is not None]


def finish_jobs(out_dir: str | Path, outcomes: Sequence[RunOutcome]) -> list[Path]:
    """After ``compare``, ``demo`` or ``sweep`` succeeded: each run's folder, then
    ``out_dir``, keep only this command's files (:func:`finish_out_dir`)."""
    removed: list[Path] = []
    for o in outcomes:
        removed += finish_out_dir(o.out_dir, files=o.files)
    return removed + finish_out_dir(out_dir)


def compare(
    outcomes: Sequence[RunOutcome],
    out_dir: str | Path,
    title: str,
    intro: str,
    *,
    extra_figures: Mapping[str, tuple[Path, str]] | None = None,
    extra_sections: Sequence[tuple[str, str]] = (),
    figures: bool = True,
) -> Path:
    """Write the comparative figures, ``comparison.json`` and ``report.html``.

    ``extra_sections`` are ``(heading, html)`` pairs for the report, placed
    after the side-by-side table. ``figures`` false leaves out the
    comparative figures (``extra_figures`` are still shown).
    """
    out = in_staging(out_dir)
    comparison = {o.out_dir.name: o.entry.summary for o in outcomes}
    atomic_write(out / "comparison.json", format_summary_json(comparison))
    runs = [(o.out_dir.name, o.timeseries) for o in outcomes]
    saved = "comparison.json and every run's results are"
    figs: dict[str, Path] = {}
    if figures:
        from rtshield import figures as drawing

        figs = late_output(
            out, "comparison figures", saved, drawing.compare_figures, runs, out
        )
    captions: dict[str, str] = {}
    if extra_figures:
        lead = {key: path for key, (path, _) in extra_figures.items()}
        captions = {key: caption for key, (_, caption) in extra_figures.items()}
        figs = {**lead, **figs}
    entries = [
        RunEntry(
            o.entry.scenario,
            o.entry.summary,
            o.entry.figures,
            link=str(o.out_dir.relative_to(out) / "report.html"),
            label=o.out_dir.name,
        )
        for o in outcomes
    ]
    return late_output(
        out,
        "comparison report",
        saved,
        compare_report,
        out,
        title,
        intro,
        entries,
        figs,
        extra_captions=captions,
        extra_sections=extra_sections,
    )
