"""Result files of a run: ``summary.json``, ``timeseries.csv`` and ``timeseries.parquet``.

The formats are the ones ARCHITECTURE.md commits to ("Interfaces the project
commits to"). Two properties matter more than anything else here:

* **Deterministic bytes.** The same scenario and seed give a byte-identical
  ``summary.json``: keys are sorted, floats are rounded to
  :data:`FLOAT_DIGITS` significant digits and written the same way every
  time, numpy scalars become plain numbers, non-finite values become
  ``null``.
* **Never lose results.** Every file is written to a temporary file in the
  same directory and renamed over the target, so a crash or a full disk leaves
  either the old file or the new one, never half of one. Callers write the
  numbers (summary, time series) before the figures and the report.

What a *result* is: any object with ``summary() -> dict`` and ``timeseries ->
dict[str, numpy.ndarray]`` (one entry per bin), as :mod:`rtshield.result`
defines.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.errors import UsageError

__all__ = [
    "FLOAT_DIGITS",
    "OUT_HELP",
    "atomic_write",
    "format_summary_json",
    "normalize",
    "ordered_columns",
    "prepare_out_dir",
    "prune_stale",
    "timeseries_csv",
    "write_summary",
    "write_timeseries",
]

#: Significant digits kept for floats in summary.json and timeseries.csv.
FLOAT_DIGITS = 9

_TOTALS = ("offered", "irq_raised", "isr_runs", "irq_lost", "received", "processed", "delivered")


#: ``--help`` text of every verb's ``--out``.
OUT_HELP = (
    "output directory: created if missing; an existing one must be empty or hold "
    "earlier rtshield results, which are replaced (docs/outputs.md)"
)

#: The file that marks a directory as rtshield's output directory.
MARKER = ".rtshield-out"

#: What rtshield writes; only these are removed as stale by :func:`prune_stale`.
OUTPUT_SUFFIXES = (".json", ".csv", ".parquet", ".png", ".html")

#: Coarse file clock vs ``time.time_ns()``: 50 ms, far more than a kernel tick
#: and far less than the start-up of the next rtshield process.
_MTIME_SLACK_NS = 50_000_000


def prepare_out_dir(path: str | Path, option: str = "--out") -> Path:
    """Create the output directory if needed, check it is writable and mark it.

    An existing directory is used only if it is empty or was written by
    rtshield before (it holds :data:`MARKER`), so the results of a run are
    never mixed into an unrelated folder. Raises :class:`UsageError` naming
    ``option`` when it cannot be used.
    """
    if not str(path).strip():
        raise UsageError(f"{option}: empty path; name the output directory")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option}: {p} exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
        foreign = not (p / MARKER).is_file() and any(p.iterdir())
    except OSError as e:
        raise UsageError(f"{option}: cannot create {p}: {e.strerror or e}") from None
    if foreign:
        raise UsageError(
            f"{option}: {p} is not empty and holds no earlier rtshield results; "
            "give a new or empty directory"
        )
    try:
        (p / MARKER).write_text(
            "written by rtshield; its results are replaced by the next run into this directory\n"
        )
    except OSError as e:
        raise UsageError(f"{option}: cannot write into {p}: {e.strerror or e}") from None
    return p


def prune_stale(out_dir: str | Path, since_ns: int) -> list[Path]:
    """Remove results an earlier run left in ``out_dir`` (after this run succeeded).

    A result file (:data:`OUTPUT_SUFFIXES`) not rewritten since ``since_ns``
    (``time.time_ns()`` when this command started) came from an earlier run —
    another scenario in ``runs/``, a figure this run does not draw — and would
    be mixed with the new results. File times come from the kernel's coarse
    clock, which may lag ``time.time_ns()`` by a tick, hence
    :data:`_MTIME_SLACK_NS`. Returns the removed files.
    """
    root = Path(out_dir)
    cutoff = since_ns - _MTIME_SLACK_NS
    removed = []
    for f in sorted(root.rglob("*")):
        if f.is_file() and f.suffix in OUTPUT_SUFFIXES and f.stat().st_mtime_ns < cutoff:
            f.unlink()
            removed.append(f)
    runs = root / "runs"
    if runs.is_dir():
        for d in runs.iterdir():
            if d.is_dir() and all(c.name == MARKER for c in d.iterdir()):
                (d / MARKER).unlink(missing_ok=True)
                d.rmdir()
    return removed


def atomic_write(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return p


def _round_float(x: float) -> float | None:
    if not math.isfinite(x):
        return None
    if x == 0.0:
        return 0.0
    return float(f"{x:.{FLOAT_DIGITS}g}")


def normalize(obj: Any) -> Any:
    """Plain JSON types, floats rounded (:data:`FLOAT_DIGITS`), NaN/inf → ``None``."""
    if isinstance(obj, Mapping):
        return {str(k): normalize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [normalize(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [normalize(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _round_float(float(obj))
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"summary value of type {type(obj).__name__} cannot be written as JSON")


def format_summary_json(summary: Mapping[str, Any]) -> str:
    """The exact text of ``summary.json``: sorted keys, 2-space indent, final newline."""
    return (
        json.dumps(
            normalize(summary), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False
        )
        + "\n"
    )


def write_summary(out_dir: str | Path, summary: Mapping[str, Any]) -> Path:
    """Write ``out_dir/summary.json`` atomically."""
    return atomic_write(Path(out_dir) / "summary.json", format_summary_json(summary))


def ordered_columns(names: list[str] | tuple[str, ...] | Any) -> list[str]:
    """Columns in a stable, readable order: ``t_s``, the totals, drops, critical, CPU, rest."""
    fixed = ("t_s",) + _TOTALS
    crit = ("cycles", "lateness_pct", "lateness_max_pct", "misses")

    def key(n: str) -> tuple[int, int, str]:
        if n in fixed:
            return (0, fixed.index(n), n)
        if n.startswith("dropped_"):
            return (1, 0, n)
        if n in crit:
            return (2, crit.index(n), n)
        if n.startswith("cpu_"):
            return (3, 0, n)
        if n == "rx_disabled_s":
            return (4, 0, n)
        return (5, 0, n)

    return sorted(names, key=key)


def _columns(ts: Mapping[str, Any]) -> tuple[list[str], dict[str, np.ndarray]]:
    cols = {k: np.asarray(v) for k, v in ts.items()}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise ValueError(f"time series columns differ in length: {sorted(lengths)}")
    return ordered_columns(cols), cols


def _cell(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = _round_float(float(v))
    if f is None:
        return ""
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def timeseries_csv(ts: Mapping[str, Any]) -> str:
    """The text of ``timeseries.csv``: a header row, then one row per bin."""
    order, cols = _columns(ts)
    buf = io.StringIO()
    buf.write(",".join(order) + "\n")
    n = len(cols[order[0]]) if order else 0
    for i in range(n):
        buf.write(",".join(_cell(cols[c][i]) for c in order) + "\n")
    return buf.getvalue()


def write_timeseries(out_dir: str | Path, ts: Mapping[str, Any]) -> list[Path]:
    """Write ``timeseries.csv`` and ``timeseries.parquet`` atomically; return their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    paths = [atomic_write(out / "timeseries.csv", timeseries_csv(ts))]
    order, cols = _columns(ts)
    table = pa.table({c: pa.array(cols[c]) for c in order})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    paths.append(atomic_write(out / "timeseries.parquet", sink.getvalue().to_pybytes()))
    return paths
