"""The device's console: what the target prints, each line with the host time it came.

Every board prints ``ready`` once its stack is up and its sockets are bound and
``done`` after its last record; the MPS2 board also prints ``sync GUEST_NS
TICKS`` with each 100 ms snapshot (``rig/freertos/mps2-an385/board.c``). Other
lines (an error line of the application, QEMU's "The guest is now late")
are kept for an error message. :class:`Console` reads them in a thread, so a
line's host time is when it arrived, not when the rig got round to reading
it, and copies every line to a file (``console.log`` of the run);
:func:`host_to_device` maps the rig's phase bounds onto the
target's clock with the ``sync`` lines (guest time falls behind the host's
while QEMU cannot keep up with a flood: docs/decisions/mps2-board.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np

from rtshield.rig.timing import mono_ns

__all__ = ["Console", "host_to_device"]


class Console:
    """A device process's stdout, read line by line in a daemon thread."""

    def __init__(self, stream: IO[str] | None, log: Path | None = None):
        self._cv = threading.Condition()
        self.log = log
        self.words: dict[str, int] = {}  # "ready"/"done" -> host ns it arrived
        self.syncs: list[tuple[int, int, int]] = []  # (host ns, guest ns, ticks)
        self.other: list[str] = []
        self.last_ns = mono_ns()  # when the last line came
        self._closed = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str] | None) -> None:
        # bytes, decoded leniently: a stray byte on the console must not end the reading
        src = getattr(stream, "buffer", stream)
        out = open(self.log, "w") if self.log else None  # noqa: SIM115 (closed below)
        try:
            for raw in src or ():
                t = mono_ns()
                line = (raw.decode(errors="replace") if isinstance(raw, bytes) else raw).strip()
                if out:
                    out.write(f"{t} {line}\n")
                    out.flush()
                with self._cv:
                    self.last_ns = t
                    parts = line.split()
                    sync = len(parts) == 3 and parts[0] == "sync"
                    if sync and parts[1].isdigit() and parts[2].isdigit():
                        self.syncs.append((t, int(parts[1]), int(parts[2])))
                    elif line in ("ready", "done"):
                        self.words.setdefault(line, t)
                    elif line:
                        self.other = (self.other + [line])[-20:]
                    self._cv.notify_all()
        except (OSError, ValueError):  # the pipe closed under us: the process was stopped
            pass
        finally:
            if out:
                out.close()
            with self._cv:
                self._closed = True
                self._cv.notify_all()

    def wait(self, word: str, timeout_s: float, stall_s: float | None = None) -> bool:
        """Wait up to ``timeout_s`` for the line ``word``, and with ``stall_s`` no longer
        than that after the last line of any kind (a guest that still prints its sync
        lines is slow, not stuck); False when it did not come (or the process closed its
        output first)."""
        end = mono_ns() + int(timeout_s * 1e9)
        with self._cv:
            while word not in self.words and not self._closed:
                now = mono_ns()
                left = (end - now) / 1e9
                if stall_s is not None:
                    left = min(left, stall_s - (now - self.last_ns) / 1e9)
                if left <= 0:
                    break
                self._cv.wait(min(left, 0.5))
            return word in self.words

    def progress(self, seconds: float) -> str:
        """How far the device's clock got, for an error message: its last ``sync`` line's
        time since the first, of the ``seconds`` it was to run, and how long ago that line
        came ("" without sync lines: the POSIX board)."""
        with self._cv:
            if not self.syncs:
                return ""
            (h0, g0, _), (h1, g1, _) = self.syncs[0], self.syncs[-1]
        return (
            f"; its clock reached {(g1 - g0) / 1e9:.1f} s of {seconds:g} s in "
            f"{(h1 - h0) / 1e9:.0f} s, the last sync line {(mono_ns() - h1) / 1e9:.0f} s ago"
        )

    def last_other(self) -> str | None:
        """The last line that was neither ``ready``, ``sync`` nor ``done`` (an error line)."""
        with self._cv:
            return self.other[-1] if self.other else None


def host_to_device(
    syncs: Sequence[tuple[int, int, int]], host_ns: Sequence[int]
) -> list[int]:
    """The device clock's time at each of ``host_ns``, read off the ``sync`` lines (host
    time each arrived, guest time it names): linear between two lines, one ns per ns
    beyond the first or last (the guest never runs ahead of the host). Without sync
    lines the device's clock is the host's (the POSIX board)."""
    if not syncs:
        return [int(h) for h in host_ns]
    s = sorted(syncs)
    hs = np.array([x[0] for x in s], dtype=np.float64)
    gs = np.array([x[1] for x in s], dtype=np.float64)
    out = []
    for h in host_ns:
        if h <= hs[0]:
            g = gs[0] - (hs[0] - h)
        elif h >= hs[-1]:
            g = gs[-1] + (h - hs[-1])
        else:
            g = float(np.interp(h, hs, gs))
        out.append(int(round(g)))
    return out
