"""The record of a device test's runs, which the same test run again into the same
``--out`` reads back instead of measuring them again (docs/decisions/rig-device-resume.md).

The test writes into the staging folder beside ``--out``, kept when it fails or is
interrupted (:func:`~rtshield.outputs.prepare_out_dir`, resumable). As each run
finishes (after its recovery wait), its monitors' samples in its window go into
:data:`SAMPLES` (one file per run), then its row into :data:`RECORD` — both synced —
through a :class:`~rtshield.livetable.LiveTable`, the one home of how such a table is
written, closed on an interruption and merged after a crash. A run interrupted
before it was recorded has no row: the next attempt measures it again.

A row holds what the run measured (:class:`Measured`: the interface's rates, the
recovery times, its window and attempt; at full precision) with the SHA-256 of its
samples' file, the test's key (:func:`test_key`) and the digest of the run: the key,
the run's index in the test and its storm, step, rate and try. What the run says
(its windows, its verdict) is not recorded: it is made again by the same code. The test reads the
record back as it goes: the runs it asks for, in its order, come from the rows with
the same digest (their samples checked) as long as they match, and are measured
otherwise; since what it does next depends only on the runs' results, a test told
the recorded runs goes on exactly as the uninterrupted test would have. A record of
another test is never read back: one warning line naming what differs, and the test
starts afresh. A finished test leaves no record (:func:`discard`): the same command
into its folder measures again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield._version import __version__
from rtshield.livetable import LiveTable
from rtshield.outputs import atomic_write, in_staging, remove_ours, shown
from rtshield.schema.profile import ProfileFile, StormEntry

from .storms import Step
from .verdict import Sample

__all__ = ["COLUMNS", "RECORD", "SAMPLES", "Measured", "RunRecord", "discard", "test_key",
           "test_parts"]

log = logging.getLogger("rtshield.rig")

#: The record's table in the test's folder (hidden: its format is rtshield's own).
RECORD = ".rig-device-runs.csv"
#: The folder of the runs' samples, one JSON file per run, named by its index.
SAMPLES = ".rig-device-samples"
#: The table's columns: the run's index first and its digest last (what LiveTable checks).
COLUMNS = ("run", "storm", "step", "try", "result", "test", "test_sha256", "run_sha256")

#: How the line saying that the record is of another test names each part of the key.
PART_NAMES = {
    "rtshield": "the rtshield version",
    "profile": "the profile (its storms, monitors, ramp or rule; or --storms, --monitors)",
    "target": "--target",
    "iface": "--iface",
    "max_rate": "--max-rate",
    "target_mac": "the target's MAC address",
    "monitors": "the monitors used (an optional one skipped or not)",
}


@dataclass
class Measured:
    """What one run of a step measured: the interface's rates
    (:func:`.run.run_once`'s), each monitor's samples in the run's window ``span`` and
    its recovery time after it, and the attempt that measured it (``t0``: when its
    monitors started, on the clock of ``span``; ``started``: its wall-clock start, ns).
    What the run says — its windows, its verdict — is made from this by
    :func:`.run.judge_run`, whether it was measured or read back."""

    rates: dict[str, Any]
    samples: dict[str, list[Sample]]
    span: tuple[int, int]
    recovery_s: dict[str, float | None]
    t0: int
    started: int
    #: each monitor's error answers after the run until it recovered
    #: (:func:`.verdict.errors_after`)
    errors_after: dict[str, int]
    recorded: bool = False  #: read back from the record, not measured by this attempt


def test_parts(
    prof: ProfileFile, target: str, iface: str, cap: float | None, mac: str,
    monitors: list[str],
) -> dict[str, Any]:
    """What decides what a test measures, part by part (:data:`PART_NAMES`): the profile
    as selected (every value; not its name and description), the target and its MAC
    address, the interface, the rate cap and the monitors used (without the optional
    ones the baseline skipped), with rtshield's version."""
    data = prof.model_dump(mode="json")
    for key in ("name", "description"):
        data["profile"].pop(key, None)
    text = json.dumps(data, sort_keys=True)
    return {
        "rtshield": __version__,
        "profile": hashlib.sha256(text.encode()).hexdigest(),
        "target": target,
        "iface": iface,
        "max_rate": cap,
        "target_mac": mac,
        "monitors": list(monitors),
    }


def test_key(parts: Mapping[str, Any]) -> str:
    """SHA-256 of a test's parts (:func:`test_parts`)."""
    return hashlib.sha256(json.dumps(dict(parts), sort_keys=True).encode()).hexdigest()


def _samples_json(run: Measured) -> bytes:
    data = {n: [[s.t, int(s.good), s.value, s.status] for s in ss]
            for n, ss in run.samples.items()}
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _samples_of(raw: bytes) -> dict[str, list[Sample]]:
    return {n: [Sample(int(t), bool(g), None if v is None else int(v), int(st))
                for t, g, v, st in ss] for n, ss in json.loads(raw).items()}


class RunRecord:
    """The record of one test's runs in the folder ``out_dir`` it writes (its staging
    folder: a finished test's record is never read back)."""

    def __init__(self, out_dir: Path, parts: Mapping[str, Any]) -> None:
        self.out = Path(out_dir)
        self.parts = dict(parts)
        self.key = test_key(parts)
        self.table = LiveTable(self.out, COLUMNS, name=RECORD, sync=True)
        self.resumed = 0  #: runs read back, not measured
        self._pending: dict[int, tuple[list[str], str]] = {}
        first = self.table.peek
        #: the parts (:data:`PART_NAMES`) in which the recorded test differs: read nothing
        self.changed: list[str] = []
        #: the record holds runs of this test (some may be read back)
        self.resuming = first is not None and first[-2] == self.key
        if first is not None and not self.resuming:
            try:
                old = json.loads(first[-3])
            except ValueError:
                old = {}
            self.changed = [k for k in PART_NAMES if old.get(k) != self.parts.get(k)]
            self.table.forget()
            what = ", ".join(PART_NAMES[k] for k in self.changed) or "its options"
            log.warning(
                "%s: the interrupted test recorded there differs in %s: starting afresh, "
                "every run measured again", shown(self.out), what
            )

    def _digest(self, index: int, storm: str, step: int, rate: float | None, k: int) -> str:
        text = f"{self.key}\n{index}\n{storm}\n{step}\n{rate!r}\n{k}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _samples_path(self, index: int) -> Path:
        return self.out / SAMPLES / f"{index:05d}.json"

    def recall(
        self, index: int, storm: StormEntry, i: int, step: Step, k: int
    ) -> Measured | None:
        """Run ``index`` of the test — try ``k`` of step ``i`` of ``storm`` — as recorded
        (its row kept for the next attempt), or ``None``: it must be measured, then
        given to :meth:`keep`."""
        d = self._digest(index, storm.name, i, step.rate, k)
        row = self.table.previous(index, d)
        run = None if row is None else self._decode(index, row[4])
        if run is None:
            self._pending[index] = ([str(index), storm.name, str(i), str(k)], d)
            return None
        self.table.put(index, row)
        self.resumed += 1
        return run

    def _decode(self, index: int, cell: str) -> Measured | None:
        """A row's run with its samples; ``None`` when the row or its samples' file is
        not what was recorded (then the run is measured again)."""
        try:
            d = json.loads(cell)
            raw = self._samples_path(index).read_bytes()
            if hashlib.sha256(raw).hexdigest() != d["samples_sha256"]:
                return None
            lo, hi = d["span_ns"]
            return Measured(dict(d["rates"]), _samples_of(raw), (int(lo), int(hi)),
                            dict(d["recovery_s"]), int(d["t0_ns"]), int(d["started"]),
                            dict(d["errors_after"]), recorded=True)
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def keep(self, index: int, run: Measured) -> None:
        """Record run ``index`` (asked for by :meth:`recall`) now that it has finished:
        its samples' file first, then its row, each synced."""
        head, d = self._pending.pop(index)
        raw = _samples_json(run)
        path = self._samples_path(index)
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, raw, track=False)
        cell = json.dumps({
            "rates": run.rates, "recovery_s": run.recovery_s, "span_ns": list(run.span),
            "errors_after": run.errors_after,
            "t0_ns": run.t0, "started": run.started,
            "samples_sha256": hashlib.sha256(raw).hexdigest(),
        }, sort_keys=True)
        test = json.dumps(self.parts, sort_keys=True)
        self.table.put(index, [*head, cell, test, self.key, d])

    def trial(self, measure: Callable[[StormEntry, Step, int, int], Measured]
              ) -> Callable[[StormEntry, Step, int, int], Measured]:
        """``measure`` (the run of try ``k`` of step ``i`` of a storm) through the record:
        a run recorded for this point of the test is read back, any other measured and
        recorded. The runs are numbered in the order the test asks for them."""
        count = itertools.count()

        def run(storm: StormEntry, step: Step, i: int, k: int) -> Measured:
            index = next(count)
            got = self.recall(index, storm, i, step, k)
            if got is None:
                got = measure(storm, step, i, k)
                self.keep(index, got)
            return got

        return run

    def close(self, complete: bool) -> None:
        """Close the table (not ``complete``: every recorded run is kept, for the next
        attempt, and one line says so)."""
        self.table.close(complete)
        if not complete and self.table.rows:
            log.warning(
                "rig device: the test is incomplete: %d runs are recorded, kept for the same "
                "command into %s, which resumes it (%s keeps its earlier results until then)",
                self.table.rows, shown(self.out), shown(self.out),
            )


def discard(out_dir: Path) -> None:
    """Remove a finished test's record from its folder: the same command into the same
    ``--out`` then measures again."""
    out = in_staging(out_dir)
    remove_ours(out / RECORD)
    shutil.rmtree(out / SAMPLES, ignore_errors=True)
