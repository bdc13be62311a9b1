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

The points run on Dask (:func:`run_points`): a local cluster of one worker
process per core by default, or a user's cluster by its scheduler address.
Results are written as points finish; a point whose folder already holds the
results of the same scenario (same hash, files unchanged) is not run again.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import itertools
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield._version import __version__
from rtshield.errors import UsageError
from rtshield.outputs import atomic_write

__all__ = [
    "ANSWER_COLUMNS",
    "Axis",
    "PointResult",
    "SWEEP_METRICS",
    "boundaries",
    "expand",
    "point_scenario",
    "run_points",
    "scenario_hash",
    "split_values",
    "sweep_figure",
    "sweep_rows",
]

#: Sections whose entries are a list of named tables: ``SECTION.NAME.KEY``.
LIST_SECTIONS = ("flows", "tasks", "sources")

#: The answer columns of sweep.csv, right after the swept keys: whether the
#: critical task met every deadline (``safe``), its worst response time, the
#: margin to its deadline (the period: a cycle must end before the next
#: release) and its worst lateness.
ANSWER_COLUMNS = ("safe", "worst_response_us", "margin_us", "lateness_max_pct")

#: Columns of sweep.csv after the answer: (column, path into summary.json).
SWEEP_METRICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("offered", ("totals", "offered")),
    ("received", ("totals", "received")),
    ("processed", ("totals", "processed")),
    ("delivered", ("totals", "delivered")),
    ("irq_lost", ("totals", "irq_lost")),
    ("cycles", ("critical", "cycles")),
    ("misses", ("critical", "misses")),
    ("lateness_max_pct", ("critical", "lateness_max_pct")),
    ("lateness_bin_max_pct", ("critical", "lateness_bin_max_pct")),
    ("lateness_sum_pct", ("critical", "lateness_sum_pct")),
    ("cycle_time_max_us", ("critical", "cycle_time_us", "max")),
)


@dataclass(frozen=True)
class Axis:
    """One swept setting: ``key`` is ``SECTION.KEY`` or ``SECTION.NAME.KEY``; ``values`` as
    written."""

    key: str
    values: tuple[str, ...]

    @property
    def short(self) -> str:
        """The key without its section: ``queue``, ``syn.peak``."""
        return self.key.split(".", 1)[1]


def _check_key(key: str, item: str, option: str) -> None:
    parts = key.split(".")
    ok = all(parts) and (
        len(parts) == 2
        and parts[0] not in LIST_SECTIONS
        or len(parts) == 3
        and parts[0] in LIST_SECTIONS
    )
    if not ok:
        raise UsageError(
            f"{option}: expected SECTION.KEY=v1,v2,… such as driver.queue=100,500,750, "
            f"or SECTION.NAME.KEY=… for an entry of [[{']], [['.join(LIST_SECTIONS)}]] "
            f"such as flows.syn.peak=50000pps,150000pps, got {item!r}"
        )


def split_values(raw: str, option: str = "--set") -> list[str]:
    """Split ``"100,500,[1, 2]"`` at top-level commas (not inside ``[]``, ``{}`` or quotes)."""
    out: list[str] = []
    depth, quote, cur = 0, "", []
    for ch in raw:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    if quote or depth != 0:
        raise UsageError(f"{option}: unbalanced brackets or quotes in {raw!r}")
    if any(v == "" for v in out):
        raise UsageError(f"{option}: empty value in {raw!r} (write v1,v2,… with no empty item)")
    return out


def expand(sets: Sequence[str], option: str = "--set") -> tuple[list[Axis], list[dict[str, str]]]:
    """``["driver.queue=100,500", "mitigation.kind=queue"]`` → axes and grid points.

    Returns ``(axes, points)``: the axes with more than one value, and each
    point as ``{SECTION.KEY: value}`` over *all* keys (fixed ones included).
    """
    keys: list[str] = []
    values: list[list[str]] = []
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            _check_key("", item, option)
        _check_key(key, item, option)
        if key in keys:
            raise UsageError(f"{option}: {key} is given twice; list all its values in one --set")
        keys.append(key)
        values.append(split_values(raw, option))
    axes = [Axis(k, tuple(v)) for k, v in zip(keys, values, strict=True) if len(v) > 1]
    if not axes:
        raise UsageError(
            f"{option}: nothing to sweep; give at least one setting two or more "
            "values, e.g. --set driver.queue=100,500,750"
        )
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]
    return axes, points


def point_label(point: Mapping[str, str], axes: Sequence[Axis]) -> str:
    """``queue=500,capacity=600``: the swept values of one point, by short key."""
    return ",".join(f"{a.short}={point[a.key]}" for a in axes)


def _value(key: str, raw: str, option: str) -> Any:
    """``raw`` read as a TOML value, as ``--set`` reads it everywhere."""
    from rtshield.scenario import parse_overrides

    return parse_overrides([f"x.v={raw}"], f"{option}: {key}")["x"]["v"]


def point_scenario(
    data: Mapping[str, Any],
    text: str,
    origin: str,
    point: Mapping[str, str],
    option: str = "--set",
):
    """The validated :class:`~rtshield.scenario.Scenario` of one grid point.

    ``SECTION.KEY`` values are ``--set`` overrides (errors name ``--set``);
    ``SECTION.NAME.KEY`` values replace the key of the entry of
    ``[[SECTION]]`` whose ``name`` is NAME.
    """
    from rtshield.scenario import parse_overrides, parse_scenario

    doc = dict(data)
    plain = []
    for key, raw in point.items():
        section, _, rest = key.partition(".")
        if section not in LIST_SECTIONS:
            plain.append(f"{key}={raw}")
            continue
        name, _, field_ = rest.partition(".")
        entries = doc.get(section)
        if not isinstance(entries, list):
            raise UsageError(f"{option}: {key}: {origin} has no [[{section}]] entries")
        names = [e.get("name") for e in entries if isinstance(e, Mapping)]
        if name not in names:
            raise UsageError(
                f"{option}: {key}: no [[{section}]] entry named {name!r} in {origin} "
                f"(there are: {', '.join(str(n) for n in names) or 'none'})"
            )
        if field_ == "name":
            raise UsageError(f"{option}: {key}: an entry's name cannot be swept")
        if entries is data.get(section):  # copy once, before the first change
            entries = doc[section] = copy.deepcopy(entries)
        entries[names.index(name)][field_] = _value(key, raw, option)
    return parse_scenario(
        doc, origin, overrides=parse_overrides(plain, option), text=text, overrides_origin=option
    )


def scenario_hash(scenario: Any) -> str:
    """SHA-256 of everything that decides a point's results: the validated
    scenario (every value after overrides and preset defaults) and the
    rtshield version."""
    return hashlib.sha256(f"rtshield {__version__}\n{scenario!r}".encode()).hexdigest()


def _get(d: Any, path: Sequence[str]) -> Any:
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def answer(summary: Mapping[str, Any], period_us: float) -> dict[str, Any]:
    """The ANSWER_COLUMNS of one point from its summary and the critical period.

    ``safe``: every critical cycle that ended met its deadline and at least
    one ended (a starved task that never finishes is not safe);
    ``margin_us``: the period minus the worst response time (negative: late).
    """
    crit = summary.get("critical") or {}
    misses = crit.get("misses")
    cycles = crit.get("cycles")
    worst = crit.get("max_response_us")
    safe = bool(misses == 0 and cycles) if misses is not None else None
    margin = None if worst is None else round(period_us - float(worst), 3)
    return {
        "safe": safe,
        "worst_response_us": worst,
        "margin_us": margin,
        "lateness_max_pct": crit.get("lateness_max_pct"),
    }


def sweep_rows(
    axes: Sequence[Axis],
    points: Sequence[Mapping[str, str]],
    summaries: Sequence[Mapping[str, Any]],
    periods_us: Sequence[float] | None = None,
) -> list[dict[str, Any]]:
    """One row per point: the swept values, the answer, then the SWEEP_METRICS columns.

    ``periods_us``: each point's critical period (its deadline); without
    them the answer columns are left out.
    """
    rows = []
    periods = list(periods_us) if periods_us is not None else [None] * len(points)
    for point, summ, period in zip(points, summaries, periods, strict=True):
        row: dict[str, Any] = {a.key: point[a.key] for a in axes}
        if period is not None:
            row.update(answer(summ, period))
        for col, path in SWEEP_METRICS:
            row.setdefault(col, _get(summ, path))
        rows.append(row)
    return rows


def _sort_key(v: str) -> tuple[int, float, str]:
    from rtshield.units import parse_rate

    try:
        return (0, float(v), "")
    except ValueError:
        pass
    try:
        return (0, float(parse_rate(v)), "")
    except (UsageError, ValueError):
        return (1, 0.0, v)


def boundaries(axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Where the safe region ends along each swept axis.

    For every axis and every combination of the other axes' values, the
    points in the axis's order (as written on the command line) are scanned
    for changes of ``safe``. One entry per line of the grid: ``axis``,
    ``others`` (``{key: value}``), ``transitions`` (a list of ``(last value
    before, first value after, "safe→unsafe" or "unsafe→safe")``) and
    ``verdict``: ``"safe throughout"``, ``"unsafe throughout"``, or the
    transitions in words (``"safe up to 40000, unsafe from 50000"``).
    """
    out = []
    by_point = {tuple(r[a.key] for a in axes): r for r in rows}
    for i, axis in enumerate(axes):
        others = [a for j, a in enumerate(axes) if j != i]
        for combo in itertools.product(*(a.values for a in others)) or [()]:
            fixed = dict(zip((a.key for a in others), combo, strict=True))
            line = []
            for v in axis.values:
                key = tuple(v if a.key == axis.key else fixed[a.key] for a in axes)
                r = by_point.get(key)
                if r is not None and r.get("safe") is not None:
                    line.append((v, bool(r["safe"])))
            if not line:
                continue
            trans = [
                (a[0], b[0], "safe→unsafe" if a[1] else "unsafe→safe")
                for a, b in zip(line, line[1:], strict=False)
                if a[1] != b[1]
            ]
            if not trans:
                verdict = "safe throughout" if line[0][1] else "unsafe throughout"
                verdict += f" ({line[0][0]} … {line[-1][0]})" if len(line) > 1 else ""
            else:
                words = []
                first_safe = line[0][1]
                words.append(f"{'safe' if first_safe else 'unsafe'} up to {trans[0][0]}")
                for _, after, kind in trans:
                    words.append(f"{kind.split('→')[1]} from {after}")
                verdict = ", ".join(words)
            out.append(
                {"axis": axis.key, "others": fixed, "transitions": trans, "verdict": verdict}
            )
    return out


def write_tables(
    out_dir: Path,
    rows: Sequence[Mapping[str, Any]],
    bounds: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """``sweep.csv``, ``sweep.json`` and, when given, ``safe_region.json`` (the
    boundaries), written atomically."""
    if not rows:
        return
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write(out_dir / "sweep.csv", buf.getvalue().encode())
    atomic_write(
        out_dir / "sweep.json", (json.dumps(list(rows), indent=2, sort_keys=False) + "\n").encode()
    )
    if bounds is not None:
        doc = [{**b, "transitions": [list(t) for t in b["transitions"]]} for b in bounds]
        atomic_write(
            out_dir / "safe_region.json",
            (json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n").encode(),
        )


def _numeric(values: Sequence[str]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def sweep_figure(axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]):
    """Processed packets, deadline misses and worst per-bin lateness against the first axis.

    One line per combination of the other axes. A numeric first axis is
    plotted on a numeric x axis; otherwise the values are categories.
    """
    from matplotlib.figure import Figure

    first, rest = axes[0], axes[1:]
    xs_num = _numeric(first.values)
    xpos = xs_num if xs_num is not None else list(range(len(first.values)))
    panels = (
        ("processed", "packets processed"),
        ("misses", "deadline misses"),
        ("lateness_bin_max_pct", "worst 1-bin accumulated lateness [%]"),
    )
    # a fixed layout (no constrained-layout passes: a sweep's figure is drawn once per sweep,
    # but on a busy machine those passes cost seconds)
    fig = Figure(figsize=(12.0, 3.6))
    axs = fig.subplots(1, len(panels))
    fig.subplots_adjust(left=0.06, right=0.99, bottom=0.16, top=0.95, wspace=0.28)
    groups = list(itertools.product(*(a.values for a in rest))) or [()]
    for combo in groups:
        sel = [r for r in rows if all(r[a.key] == v for a, v in zip(rest, combo, strict=True))]
        label = (
            ", ".join(f"{a.key.split('.', 1)[1]}={v}" for a, v in zip(rest, combo, strict=True))
            or None
        )
        by_x = {r[first.key]: r for r in sel}
        for ax, (col, _) in zip(axs, panels, strict=True):
            ys = [by_x[v][col] if v in by_x else None for v in first.values]
            ys = [float("nan") if y is None else float(y) for y in ys]
            ax.plot(xpos, ys, marker="o", lw=1.4, label=label)
    for ax, (_, ylabel) in zip(axs, panels, strict=True):
        ax.set_xlabel(first.key)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if xs_num is None:
            ax.set_xticks(xpos, list(first.values))
    if rest:
        axs[0].legend(fontsize="small")
    return fig


def write_figure(out_dir: Path, axes: Sequence[Axis], rows: Sequence[Mapping[str, Any]]) -> Path:
    from rtshield.figures import png_bytes

    return atomic_write(out_dir / "sweep.png", png_bytes(sweep_figure(axes, rows)))


# --------------------------------------------------------------------------- running on Dask

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

    from rtshield.runner import simulate, write_run

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
    from rtshield.outputs import read_manifest

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
    from rtshield.outputs import read_manifest
    from rtshield.report import RunEntry
    from rtshield.runner import RunOutcome

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
    from rtshield.outputs import record_outputs, written
    from rtshield.report import RunEntry
    from rtshield.runner import RunOutcome

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
    from rtshield.runner import prepare_run_dirs

    out, dirs = prepare_run_dirs(out_dir, labels)
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
