"""A table of points in index order, written as points finish, that a re-run resumes
from: the one home of how such a table is written, closed on an interruption, merged
after a crash and found again by the next run.

Rows reach the file in index order through a small buffer: a point that finishes
before an earlier one waits there (the caller starts no point more than the
buffer's room ahead of the earliest unfinished one, so the buffer stays small
whatever the number of points). A re-run reads the previous table alongside, row
by row, and a point whose row there has the same index and digest is not run
again. An interrupted command closes its table with every row it has and the
previous table's rows it had not reached; after a crash (the process killed), the
next run merges what both files hold.

Used by a sweep (``sweep.csv``, :mod:`rtshield.sweep.table`), a calibration (the
record of its points, :mod:`rtshield.calibrate.record`) and a device test (the
record of its runs, :mod:`rtshield.rig.device.record`).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from rtshield.outputs import commit_file, shown

__all__ = ["LiveTable"]

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")


class LiveTable:
    """A table of points in index order, written as points finish, that a re-run
    resumes from (``name`` in ``out_dir``): ``sweep.csv`` of a sweep, the record of a
    calibration's points, the record of a device test's runs.

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
        name: str,
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
        cls, out_dir: Path, columns: Sequence[str], *, name: str,
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
