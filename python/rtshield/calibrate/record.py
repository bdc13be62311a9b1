"""The record of a calibration's evaluated points, which a re-run of the same
calibration reads back instead of simulating them again.

Each point's row goes into :data:`RECORD` as the point finishes, synced to
disk, in the folder the command writes (the staging folder beside ``--out``,
kept when the command fails or is interrupted; ``--out`` itself once it has
succeeded). The table is a :class:`~rtshield.livetable.LiveTable`, the one home
of how such a table is written in index order, closed on an interruption, merged
after a crash and found again by the next run.

A row holds the point's score and objectives at full precision (JSON; not its
worker time, so the same calibration gives the same bytes), the key of its
calibration (:func:`calibration_key`) and the digest of the point: the key,
the point's index and values, and the hash of each of its validated
scenarios. A point is read back only when the search proposes the
same values at the same index with the same key: the searches are
deterministic, so told the recorded scores they go on exactly as an
uninterrupted run. Rows of another calibration are never read back: the
command says so in one line and starts afresh (docs/decisions/calibrate-resume.md).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from rtshield._version import __version__
from rtshield.calibrate.file import Calibration, scenarios
from rtshield.calibrate.points import BUDGET_PREFIX
from rtshield.livetable import LiveTable
from rtshield.outputs import shown
from rtshield.sweep.grid import scenario_hash

__all__ = ["COLUMNS", "RECORD", "PointRecord", "calibration_key"]

log = logging.getLogger("rtshield.calibrate")

#: The record's file in the command's folder (hidden: its format is rtshield's own).
RECORD = ".calibrate-points.csv"

#: Its columns: the index first and the point's digest last (what LiveTable checks).
COLUMNS = ("point", "values", "result", "calibration_sha256", "point_sha256")


def calibration_key(cal: Calibration, method: str, seed: int, budget: int) -> str:
    """SHA-256 of everything that decides which points a calibration evaluates and
    what they score: the rtshield version, the calibration file's text, the
    objective's data (the board's counters as read; the study and its claims),
    each run's validated scenario at both corners of the box (every value the
    scenario files and the preset give), the search (with optuna's version for
    ``tpe``), the seed and — for a search not in
    :data:`~rtshield.calibrate.points.BUDGET_PREFIX` — the budget."""
    corners = [
        sorted(
            (run, scenario_hash(sc))
            for run, sc in scenarios(cal, tuple(q.at(u) for q in cal.params)).items()
        )
        for u in (0.0, 1.0)
    ]
    parts = [
        f"rtshield calibrate {__version__}",
        f"file {cal.sha256}",
        f"objective {cal.objective} {cal.study} {cal.claims!r}",
        f"counters {cal.counters_t!r} {sorted(cal.counters.items())!r}",
        f"runs {corners!r}",
        f"search {method}" + (f" optuna {version('optuna')}" if method == "tpe" else ""),
        f"seed {seed}",
        f"budget {'any' if method in BUDGET_PREFIX else budget}",
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _decode(cell: str) -> tuple[float, dict[str, Any], float] | None:
    """A row's result (score, objectives, no worker time: 0); ``None`` if it is not one."""
    try:
        d = json.loads(cell)
        obj = {k: tuple(v) if isinstance(v, list) else float(v) for k, v in d["objectives"].items()}
        return float(d["score"]), obj, 0.0
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


class PointRecord:
    """The record of one calibration's points in the folder ``out_dir`` the command
    writes (:func:`~rtshield.outputs.prepare_out_dir`, resumable)."""

    def __init__(self, out_dir: Path, cal: Calibration, method: str, seed: int, budget: int):
        self.key = calibration_key(cal, method, seed, budget)
        self.table = LiveTable.resuming(Path(out_dir), COLUMNS, name=RECORD, sync=True)
        self.resumed = 0  #: points read back, not simulated
        self._digests: dict[int, tuple[Sequence[Any], str]] = {}
        first = self.table.peek
        #: the record held another calibration's points (none is read back)
        self.other = first is not None and first[-2] != self.key
        if self.other:
            self.table.forget()
            log.warning(
                "%s: the points recorded there are of another calibration (its file, the "
                "files it reads, --search, --seed or --budget differ): starting afresh",
                shown(Path(out_dir)),
            )

    def recall(
        self, index: int, values: Sequence[Any], scs: Mapping[str, Any]
    ) -> tuple[float, dict[str, Any], float] | None:
        """The recorded result of point ``index`` when the record holds it for these
        values and scenarios (then its row is kept; its worker time is 0: it cost
        nothing this time); ``None``: it must be simulated."""
        runs = "\n".join(f"{run} {scenario_hash(sc)}" for run, sc in scs.items())
        digest = hashlib.sha256(f"{self.key}\n{index}\n{tuple(values)!r}\n{runs}".encode())
        d = digest.hexdigest()
        row = self.table.previous(index, d)
        res = None if row is None else _decode(row[2])
        if res is not None:
            self.table.put(index, row)
            self.resumed += 1
            return res
        self._digests[index] = (values, d)
        return None

    def keep(self, index: int, result: tuple[float, Mapping[str, Any], float]) -> None:
        """Record point ``index`` (asked for by :meth:`recall`) as it finishes."""
        values, d = self._digests.pop(index)
        score, obj, _wall = result
        cell = json.dumps({"score": score, "objectives": dict(obj)})
        self.table.put(index, [str(index), json.dumps(list(values)), cell, self.key, d])

    def close(self, complete: bool) -> None:
        """Close the record (not ``complete``: every finished point is kept, for the
        next run)."""
        self.table.close(complete)
