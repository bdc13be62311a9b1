"""A sweep's one table: a row per point (its index, the swept values, the
answer, the key numbers, the scenario hash), written into ``sweep.csv`` in
grid order as points finish, and ``sweep.parquet`` from it at the end.

The table is written in grid order as points finish, and is what a re-run
resumes from (a point whose row there has the same index and scenario hash is
not run again): the rules of :class:`~rtshield.livetable.LiveTable`, which a
calibration's record and a device test's record use too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rtshield.livetable import LiveTable
from rtshield.outputs import commit_file
from rtshield.sweep.grid import Axis

__all__ = [
    "ANSWER_COLUMNS",
    "HASH_COLUMN",
    "SWEEP_METRICS",
    "TABLE",
    "LiveTable",
    "answer",
    "header",
    "numbers",
    "row",
    "write_parquet",
]

#: The table's file in the sweep's folder.
TABLE = "sweep.csv"

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

#: The first column: the point's index in the grid (0, 1, …; the last axis fastest).
INDEX_COLUMN = "point"
#: The last column: SHA-256 of the point's validated scenario (what a re-run checks).
HASH_COLUMN = "scenario_sha256"

#: Column types of sweep.parquet (the swept keys are strings, as written).
_INTEGERS = ("offered", "received", "processed", "delivered", "irq_lost", "cycles", "misses")
_FLOATS = (
    "worst_response_us",
    "margin_us",
    "lateness_max_pct",
    "lateness_bin_max_pct",
    "lateness_sum_pct",
    "cycle_time_max_us",
)


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
    # a response time exists only once a cycle ended (never measured: None, "—")
    worst = crit.get("max_response_us") if cycles else None
    safe = bool(misses == 0 and cycles) if misses is not None else None
    margin = None if worst is None else round(period_us - float(worst), 3)
    return {
        "safe": safe,
        "worst_response_us": worst,
        "margin_us": margin,
        "lateness_max_pct": crit.get("lateness_max_pct"),
    }


def numbers(summary: Mapping[str, Any], period_us: float | None) -> dict[str, Any]:
    """A point's answer (when its period is known) and its SWEEP_METRICS."""
    row: dict[str, Any] = {} if period_us is None else answer(summary, period_us)
    for col, path in SWEEP_METRICS:
        row.setdefault(col, _get(summary, path))
    return row


def header(axes: Sequence[Axis]) -> list[str]:
    """The columns of sweep.csv."""
    metrics = [c for c, _ in SWEEP_METRICS if c not in ANSWER_COLUMNS]
    return [INDEX_COLUMN, *(a.key for a in axes), *ANSWER_COLUMNS, *metrics, HASH_COLUMN]


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def row(columns: Sequence[str], index: int, point: Mapping[str, str], axes: Sequence[Axis],
        nums: Mapping[str, Any], digest: str) -> list[str]:
    """The cells of one point's row of the table with ``columns``."""
    vals = {INDEX_COLUMN: index, **{a.key: point[a.key] for a in axes}, **nums,
            HASH_COLUMN: digest}
    return [_cell(vals.get(c)) for c in columns]


def write_parquet(out_dir: Path, columns: Sequence[str]) -> Path:
    """``sweep.parquet`` from ``sweep.csv``: the same rows and columns, typed
    (the swept keys as strings), read and written in batches."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    types = {}
    for c in columns:
        if c in ("point", *_INTEGERS):
            types[c] = pa.int64()
        elif c in _FLOATS:
            types[c] = pa.float64()
        elif c == "safe":
            types[c] = pa.bool_()
        else:
            types[c] = pa.string()
    src = Path(out_dir) / TABLE
    dst = Path(out_dir) / "sweep.parquet"
    tmp = dst.with_name(".sweep.parquet.tmp")
    reader = pacsv.open_csv(
        src,
        read_options=pacsv.ReadOptions(block_size=1 << 20),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False),
    )
    schema = pa.schema([(c, types[c]) for c in columns])
    try:
        with pq.ParquetWriter(tmp, schema) as w:
            for batch in reader:
                w.write_table(pa.Table.from_batches([batch]).select(columns).cast(schema))
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return commit_file(dst)
