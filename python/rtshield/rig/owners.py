"""Who owns a rig run: a record of the rtshield process that made it, so that
``rtshield rig clean`` removes only what a dead owner left behind.

A run (its tag, :data:`~rtshield.rig.network.TAG_ENV`) is owned by the process
that made its namespaces, interfaces and processes. Its record,
``/run/rtsrig-owner-TAG``, names that process by its id **and its start time**
(field 22 of ``/proc/PID/stat``, clock ticks since boot), so a process id the
kernel has given to another process since is not taken for the owner; and it
lists the folders the run made outside its namespaces (``rig serve``'s work
folder), which ``rig clean`` removes with the rest. The record is written before
the run creates anything and removed after the run removed everything.

A run without a record (one made by an older rtshield) is judged by its tag, the
hexadecimal process id of its owner: alive when that process runs and is an
rtshield command (its command line names rtshield).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from rtshield.rig.network import PREFIX

__all__ = [
    "STATE_DIR",
    "Owner",
    "add_path",
    "claim",
    "owner_of",
    "record_path",
    "records",
    "release",
    "start_time",
    "tag_of_link",
    "tag_of_netns",
]

#: Where the rig keeps what must survive a killed run: owner records, sysctl values.
STATE_DIR = Path("/run")


def record_path(tag: str) -> Path:
    """The owner record of run ``tag``."""
    return STATE_DIR / f"{PREFIX}-owner-{tag}"


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 first)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), ``None`` when it does not
    run (an exited process not yet reaped, a zombie, counts as ended)."""
    f = _stat_fields(pid)
    if not f or len(f) < 20 or f[0] == "Z":
        return None
    return int(f[19])


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


@dataclass
class Owner:
    """The owner of a run: its process and what it made outside its namespaces."""

    tag: str
    pid: int | None
    start: int | None  #: ``None``: no record, judged by the tag
    command: str = ""
    paths: list[str] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        """The owning process still runs (the same process: same id, same start time)."""
        if self.pid is None:
            return False
        now = start_time(self.pid)
        if now is None:
            return False
        if self.start is None:  # no record: by the tag, an rtshield command
            return "rtshield" in _cmdline(self.pid)
        return now == self.start

    def describe(self) -> str:
        """``pid 1234 (rtshield rig linux ...)``."""
        cmd = self.command or _cmdline(self.pid or 0)
        return f"pid {self.pid}" + (f" ({cmd[:100]})" if cmd else "")


def _write(tag: str, rec: dict) -> None:
    path = record_path(tag)
    tmp = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(OSError):  # without root (no /run) a run has no record
        tmp.write_text(json.dumps(rec, sort_keys=True) + "\n")
        os.replace(tmp, path)


def _read(tag: str) -> dict | None:
    try:
        rec = json.loads(record_path(tag).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def claim(tag: str, pid: int | None = None) -> None:
    """Record process ``pid`` (default: this one) as the owner of run ``tag`` (before the
    run makes anything)."""
    pid = os.getpid() if pid is None else pid
    _write(tag, {"pid": pid, "start": start_time(pid), "command": _cmdline(pid), "paths": []})


def add_path(tag: str, path: Path) -> None:
    """Add a folder run ``tag`` made outside its namespaces (removed with the run)."""
    rec = _read(tag)
    if rec is not None:
        rec["paths"] = [*rec.get("paths", []), str(path)]
        _write(tag, rec)


def release(tag: str) -> None:
    """Remove the record of run ``tag`` (everything of the run is gone)."""
    with contextlib.suppress(OSError):
        record_path(tag).unlink()


def owner_of(tag: str | None) -> Owner:
    """The owner of run ``tag``: from its record, else from the tag (an older rtshield's
    run, or a name the rig did not make: ``tag`` ``None`` has no owner)."""
    if tag is None:
        return Owner("?", None, None)
    rec = _read(tag)
    if rec is not None:
        pid, start = rec.get("pid"), rec.get("start")
        paths = [str(p) for p in rec.get("paths", []) if isinstance(p, str)]
        return Owner(tag, pid if isinstance(pid, int) else None,
                     start if isinstance(start, int) else -1, str(rec.get("command", "")),
                     paths)  # fmt: skip
    try:
        pid = int(tag, 16)
    except ValueError:
        return Owner(tag, None, None)
    return Owner(tag, pid, None)


def records() -> list[str]:
    """The tags of every owner record."""
    head = f"{PREFIX}-owner-"
    return sorted(p.name[len(head):] for p in STATE_DIR.glob(f"{head}*"))


def tag_of_netns(name: str) -> str | None:
    """``rtsrig-TAG-dev`` -> ``TAG``."""
    parts = name.split("-")
    return parts[1] if len(parts) == 3 and parts[0] == PREFIX and parts[1] else None


def tag_of_link(name: str) -> str | None:
    """``rtsrigTAGd`` (or ``a``, ``t``, ``b``: veth ends, TAP, bridge) -> ``TAG``."""
    rest = name[len(PREFIX):]
    return rest[:-1] if name.startswith(PREFIX) and len(rest) >= 2 else None
