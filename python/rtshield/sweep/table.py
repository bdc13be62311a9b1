"""A sweep's one table: a row per point (its index, the swept values, the
answer, the key numbers, the scenario hash), written into ``sweep.csv`` in
grid order as points finish, and ``sweep.parquet`` from it at the end.

Rows reach the file in grid order through a small buffer: a point that
finishes before an earlier one waits there (the sweep submits no point more
than the buffer's room ahead of the earliest unfinished one, so the buffer
stays small whatever the grid's size). The table is also what a re-run
resumes from: the previous ``sweep.csv`` is read alongside, row by row, and a
point whose row there has the same index and scenario hash is not run again.
An interrupted sweep closes its table with every row it has and the previous
table's rows it had not reached; after a crash (the process killed), the
next run merges what both files hold.

:class:`LiveTable` is the one home of these rules: a calibration records its
evaluated points in a table of its own through it too
(:mod:`rtshield.calibrate.record`), and resumes from it the same way.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from rtshield.outputs import commit_file, shown
from rtshield.sweep.grid import Axis

__all__ = [
    "ANSWER_COLUMNS",
    "HASH_COLUMN",
    "SWEEP_METRICS",
    "LiveTable",
    "answer",
    "header",
    "numbers",
    "write_parquet",
]

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

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


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


class LiveTable:
    """A table of points in index order, written as points finish, that a re-run
    resumes from: ``sweep.csv`` of one sweep (``name``), or a calibration's record.

    Its first column is the point's index, its last the SHA-256 of what decides
    the point's results (a row is resumed only for the same index and digest).
    ``earlier``: the table of the last finished run into the same ``--out``
    (read when the staging folder holds no table; :meth:`resuming` finds it).
    ``sync``: every row is synced to disk as it is written (for points that are
    expensive to lose), not only when the table is closed.
    """

    def __init__(
        self,
        out_dir: Path,
        columns: Sequence[str],
        room: int = 256,
        earlier: Path | None = None,
        *,
        name: str = "sweep.csv",
        sync: bool = False,
    ) -> None:
        self.path = Path(out_dir) / name
        self.columns = list(columns)
        self.room = room
        self.sync = sync
        self._prev_path = Path(out_dir) / f".{Path(name).stem.lstrip('.')}-previous.csv"
        self._earlier = earlier
        self._prev = self._previous()
        self._peek: list[str] | None = next(self._prev, None)
        self._f: TextIO = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self._w = csv.writer(self._f, lineterminator="\n")
        self._w.writerow(self.columns)
        self._f.flush()
        self.next = 0  #: every point before this one is written (or failed)
        self._buf: dict[int, list[str] | None] = {}
        self._high = -1  #: the highest point done
        self.rows = 0

    @classmethod
    def resuming(
        cls, out_dir: Path, columns: Sequence[str], *, name: str = "sweep.csv",
        room: int = 256, sync: bool = False,
    ) -> LiveTable:
        """The table ``name`` of a command writing into ``out_dir`` (its staging
        folder): resumed from the table a failed run left there, else from the
        table of the last finished run into the same ``--out``."""
        out = Path(out_dir)
        given = shown(out)  # the --out this staging folder becomes
        return cls(out, columns, room, None if given == out else given / name,
                   name=name, sync=sync)

    # ------------------------------------------------------------ the previous table

    def _previous(self) -> Iterator[list[str]]:
        """The rows of the previous table, in grid order; after a crash, the rows
        the crashed run wrote, then those of the table it was resuming. With
        neither, the rows of ``earlier`` (the table of the last finished sweep
        into the same ``--out``, read and never changed)."""
        cur, prev = self.path, self._prev_path
        if prev.exists() and cur.exists():
            merged = prev.with_name(prev.name + ".tmp")
            with open(merged, "w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(self.columns)
                last = -1
                for row in self._read(cur):
                    w.writerow(row)
                    last = int(row[0])
                for row in self._read(prev):
                    if int(row[0]) > last:
                        w.writerow(row)
            os.replace(merged, prev)
            cur.unlink()
        elif cur.exists():
            os.replace(cur, prev)
        if prev.exists():
            yield from self._read(prev)
        elif self._earlier is not None:
            yield from self._read(self._earlier)

    def _read(self, path: Path) -> Iterator[list[str]]:
        """Rows of a table with this sweep's columns, well formed, indices increasing
        (a torn last line, a table of other columns: nothing past what is sound)."""
        try:
            f = open(path, encoding="utf-8", newline="")  # noqa: SIM115
        except OSError:
            return
        with f:
            r = csv.reader(f)
            if next(r, None) != self.columns:
                return
            last = -1
            try:
                for row in r:
                    if len(row) != len(self.columns) or not row[0].isdigit():
                        return
                    if int(row[0]) <= last or not _HEX64.match(row[-1]):
                        return
                    last = int(row[0])
                    yield row
            except (csv.Error, UnicodeDecodeError):
                return

    @property
    def peek(self) -> list[str] | None:
        """The previous table's next row not passed by yet (``None``: no more)."""
        return self._peek

    def forget(self) -> None:
        """Resume nothing from the previous table (it holds another run's points):
        its rows are neither taken nor kept when this table is closed unfinished."""
        self._prev.close()
        self._prev = (row for row in ())
        self._peek = None
        self._prev_path.unlink(missing_ok=True)

    def previous(self, index: int, digest: str) -> list[str] | None:
        """The previous table's row of point ``index`` if it holds the results of the
        scenario with hash ``digest``; rows before ``index`` are passed by."""
        while self._peek is not None and int(self._peek[0]) < index:
            self._peek = next(self._prev, None)
        row = self._peek
        if row is not None and int(row[0]) == index:
            self._peek = next(self._prev, None)
            if row[-1] == digest:
                return row
        return None

    # ------------------------------------------------------------ writing

    def row(self, index: int, point: Mapping[str, str], axes: Sequence[Axis],
            nums: Mapping[str, Any], digest: str) -> list[str]:
        """The cells of one point's row."""
        vals = {INDEX_COLUMN: index, **{a.key: point[a.key] for a in axes}, **nums,
                HASH_COLUMN: digest}
        return [_cell(vals.get(c)) for c in self.columns]

    def has_room(self) -> bool:
        """Whether another point may be started: the buffer of rows waiting for an
        earlier point is not full."""
        return len(self._buf) < self.room

    def put(self, index: int, cells: list[str] | None) -> None:
        """Point ``index`` is done: its row (``None``: it failed, no row)."""
        self._buf[index] = cells
        self._high = max(self._high, index)
        while self.next in self._buf:
            cells = self._buf.pop(self.next)
            if cells is not None:
                self._w.writerow(cells)
                self.rows += 1
            self.next += 1
        self._f.flush()
        if self.sync:
            os.fsync(self._f.fileno())

    def close(self, complete: bool) -> Path:
        """Close the table. Not ``complete`` (an error, Ctrl-C): the rows of points
        that finished after an unfinished one, then the previous table's rows past
        the last point done, are written too, so the next run resumes them."""
        try:
            if not complete:
                for i in sorted(self._buf):
                    if self._buf[i] is not None:
                        self._w.writerow(self._buf[i])
                        self.rows += 1
                self._buf.clear()
                row = self._peek
                while row is not None:
                    if int(row[0]) > self._high:
                        self._w.writerow(row)
                        self.rows += 1
                    row = next(self._prev, None)
                self._peek = None
            self._f.flush()
            os.fsync(self._f.fileno())
        finally:
            self._f.close()
            self._prev.close()
        self._prev_path.unlink(missing_ok=True)
        return commit_file(self.path)


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
    src = Path(out_dir) / "sweep.csv"
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
