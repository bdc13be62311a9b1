"""A small progress bar on stderr, shown only for work that lasts longer than a second.

:class:`ProgressBar` is a callable ``(done, total)`` — the signature the engine's
``simulate(scenario, progress=...)`` calls periodically — so it can be passed
straight through. It draws nothing for runs shorter than ``delay`` seconds,
nothing when stderr is not a terminal (unless ``RTSHIELD_PROGRESS=1``), and
redraws at most ten times a second.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """``bar(done, total)`` updates; ``bar.close()`` ends the line if anything was drawn."""

    def __init__(
        self,
        label: str,
        unit: str = "s simulated",
        *,
        stream: TextIO | None = None,
        delay: float = 1.0,
        width: int = 30,
        enabled: bool | None = None,
        clock=time.monotonic,
    ) -> None:
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.width = width
        self.clock = clock
        self.t0 = clock()
        self.last = -1.0
        self.drawn = False
        if enabled is None:
            forced = os.environ.get("RTSHIELD_PROGRESS")
            if forced is not None:
                enabled = forced not in ("", "0")
            else:
                enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled
        self._done = 0.0
        self._total = 0.0

    def render(self, done: float, total: float) -> str:
        """The bar's text for ``done`` of ``total`` (no carriage return)."""
        frac = 0.0 if total <= 0 else min(1.0, max(0.0, done / total))
        fill = int(round(frac * self.width))
        bar = "#" * fill + "-" * (self.width - fill)
        return (
            f"{self.label} [{bar}] {100 * frac:5.1f}%  {done:g}/{total:g} {self.unit}  "
            f"{self.clock() - self.t0:.1f}s"
        )

    def __call__(self, done: float, total: float) -> None:
        self._done, self._total = float(done), float(total)
        if not self.enabled:
            return
        now = self.clock()
        if now - self.t0 < self.delay or now - self.last < 0.1:
            return
        self.last = now
        self.stream.write("\r" + self.render(self._done, self._total))
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Blank the bar's line (when drawn), so that a message printed next starts
        clean; the next update draws the bar again."""
        if self.drawn:
            self.stream.write("\r" + " " * len(self.render(self._done, self._total)) + "\r")
            self.stream.flush()

    @contextlib.contextmanager
    def working(self, done: float, total: float, every: float = 0.25) -> Iterator[None]:
        """Show ``done`` of ``total`` and keep the elapsed time running while the
        ``with`` body works (one long call: the figures and the report), from a
        background thread that only redraws."""
        self(done, total)
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(every):
                self(done, total)

        t = threading.Thread(target=tick, name="rtshield-progress", daemon=True)
        t.start()
        try:
            yield
        finally:
            stop.set()
            t.join()

    def close(self) -> None:
        """Draw the final state and end the line (only if the bar was shown).

        The final state is what was last reported: 100 % only when the work
        finished, the point it reached when it was interrupted.
        """
        if self.drawn:
            self.stream.write("\r" + self.render(self._done, self._total) + "\n")
            self.stream.flush()
            self.drawn = False
