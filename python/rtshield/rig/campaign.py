"""A rig campaign's runs, each kept as it finishes, and a campaign resumed: the cells of
``rig linux`` and the runs of ``rig freertos-tcp`` and ``rig lwip``.

A campaign writes into its output folder's staging folder, kept when the campaign
fails or is interrupted (:func:`rtshield.outputs.prepare_out_dir`, resumable, of the
campaign's own kind). As each run finishes, its folder ``DIR/runs/NAME`` gets, last,
:data:`RUN_RECORD`: the run's parameters (everything that decides its numbers) and
the SHA-256 of its ``summary.json``; and :data:`CAMPAIGN_FILE` says which runs are
finished and which remain (``"complete": false``). When every run is done it says
``"complete": true`` and the folder is moved into place.

The same command into the same ``--out`` resumes an incomplete campaign: a run whose
record has the same parameters, and whose ``summary.json`` is unchanged since the
record was written, is not run again (its summary is read back); every other run
runs. A run folder the campaign does not plan (a run of an earlier attempt with
other options) is removed from the staging folder, and said so. A finished
campaign is never resumed: the same command into its folder measures again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rtshield._version import __version__
from rtshield.outputs import atomic_write, normalize

__all__ = ["CAMPAIGN_FILE", "RUN_RECORD", "Campaign", "file_sha256"]

#: In each run's folder, written last: its parameters and its summary's digest.
RUN_RECORD = "run.json"
#: In the output folder: which runs are finished, which remain, whether it is complete.
CAMPAIGN_FILE = "campaign.json"


def file_sha256(path: Path) -> str | None:
    """SHA-256 of a file, ``None`` when it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def _canonical(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` as they read back from JSON (so a comparison is exact)."""
    return json.loads(json.dumps(normalize({**params, "rtshield": __version__}), sort_keys=True))


def _dump(obj: Any) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


class Campaign:
    """The runs ``plan`` (their names, in order) of command ``who`` in the staging folder
    ``out``; ``say`` prints one progress line."""

    def __init__(self, out: Path, who: str, plan: Sequence[str], argv: Sequence[str],
                 say: Callable[[str], None]) -> None:  # fmt: skip
        self.out, self.who, self.plan, self.say = Path(out), who, list(plan), say
        self.command = " ".join(["rtshield", *argv])
        self.state: dict[str, str] = {}  #: name -> "finished" | "resumed"
        runs = self.out / "runs"
        stale = sorted(d.name for d in runs.iterdir() if d.is_dir()) if runs.is_dir() else []
        stale = [n for n in stale if n not in self.plan]
        for n in stale:
            shutil.rmtree(runs / n)
        if stale:
            say(f"{who}: removed {len(stale)} runs an interrupted campaign into this folder "
                f"left that this one does not plan: {', '.join(stale)}")  # fmt: skip
        self._write(complete=False)

    def _dir(self, name: str) -> Path:
        return self.out / "runs" / name

    def resume(self, name: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """The summary of run ``name`` when an earlier attempt finished it with ``params``
        (its record says so and its ``summary.json`` is unchanged), else ``None`` (and a
        record that does not fit is removed: the run is made again)."""
        d = self._dir(name)
        try:
            rec = json.loads((d / RUN_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        summary = d / "summary.json"
        ok = (
            isinstance(rec, dict)
            and rec.get("params") == _canonical(params)
            and rec.get("summary_sha256") == file_sha256(summary)
        )
        if not ok:
            (d / RUN_RECORD).unlink(missing_ok=True)
            return None
        try:
            s = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        self.state[name] = "resumed"
        self._write(complete=False)
        return s

    def finished(self, name: str, params: Mapping[str, Any]) -> None:
        """Run ``name`` has written its ``summary.json``: record it (last) as finished."""
        d = self._dir(name)
        atomic_write(d / RUN_RECORD, _dump({
            "run": name, "params": _canonical(params),
            "summary_sha256": file_sha256(d / "summary.json")}))  # fmt: skip
        self.state[name] = "finished"
        self._write(complete=False)

    @property
    def resumed(self) -> list[str]:
        return [n for n in self.plan if self.state.get(n) == "resumed"]

    @property
    def done(self) -> int:
        return sum(1 for n in self.plan if n in self.state)

    def complete(self) -> None:
        """Every run is done."""
        self._write(complete=True)

    def stopped(self, why: str, out_name: str) -> str:
        """The campaign stopped early (``why``): record it, and return the one line that
        says so (``out_name``: ``--out`` as the user gave it)."""
        self._write(complete=False, stopped=why)
        return (
            f"{self.who}: the campaign is incomplete: {self.done} of {len(self.plan)} runs "
            f"finished ({why}); they are kept for the same command into {out_name}, which "
            f"runs the others ({out_name} keeps its earlier results until then)"
        )

    def _write(self, complete: bool, stopped: str | None = None) -> None:
        runs = [{"run": n, "state": self.state.get(n, "to run")} for n in self.plan]
        atomic_write(self.out / CAMPAIGN_FILE, _dump({
            "command": self.command, "complete": complete, "runs": runs,
            **({"stopped": stopped} if stopped else {})}))  # fmt: skip
