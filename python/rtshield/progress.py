"""One progress bar on stderr per long operation, through every phase of it (rich).

A :class:`ProgressBar` has named phases with rough weights (their share of the
bar): ``run`` simulates, then draws its figures and writes its report;
``compare`` and ``sweep`` run their points, then write the comparative figures
and report. ``bar(done, total)`` reports the current phase's progress — the
signature the engine's ``simulate(scenario, progress=...)`` and the runners'
``on_done`` call — and a phase that reaches its total hands over to the next
one, so the bar shows 100 % only when the last phase is done.

A bar made while another is open (``rtshield demo`` running a study, which
runs its points) draws nothing itself: it reports into the open bar's current
phase, whose line then names both phases.

When the bar closes, its last line says how the operation ended: "done" at
100 %, "interrupted" (Ctrl-C, SIGTERM) or "failed" at the point it reached —
never 100 % unless the work finished.

It draws nothing for work shorter than ``delay`` seconds, nothing when stderr
is not a terminal (unless ``RTSHIELD_PROGRESS=1``, which also draws it from the
start; ``RTSHIELD_PROGRESS=0`` and
``--quiet`` turn it off), and rich redraws it a few times a second, so the
elapsed time keeps running through a long phase without updates. rich is
imported only when a bar is drawn.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TextIO

__all__ = ["ProgressBar", "active", "write_line"]

log = logging.getLogger("rtshield.progress")

#: The open bars, outermost first: only the outermost one draws.
_OPEN: list[ProgressBar] = []
#: Resolution of the drawn bar (its total, in rich's units).
_STEPS = 1000


def active() -> ProgressBar | None:
    """The outermost open bar, if any."""
    return _OPEN[0] if _OPEN else None


def write_line(text: str) -> bool:
    """Write ``text`` above the drawn bar, if one is drawn (so that the bar stays
    whole); returns false when no bar is drawn (the caller writes it itself)."""
    top = active()
    if top is None or top._progress is None:
        return False
    top._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
    return True


def _forced() -> bool:
    """RTSHIELD_PROGRESS=1: draw a bar even into a file or a pipe."""
    return os.environ.get("RTSHIELD_PROGRESS", "") not in ("", "0")


def _enabled_by_default(stream: TextIO) -> bool:
    forced = os.environ.get("RTSHIELD_PROGRESS")
    if forced is not None:
        return forced not in ("", "0")
    return bool(getattr(stream, "isatty", lambda: False)())


class ProgressBar:
    """``bar(done, total)`` updates the current phase; ``bar.phase(name)`` moves to a
    named phase; ``bar.finish()`` marks the work done; ``bar.close()`` draws the
    final line ("done", "interrupted", "failed" or "stopped") and ends the bar.

    ``phases`` is a sequence of ``(name, weight)`` or ``(name, weight, unit)``;
    without it the bar has one phase counted in ``unit``. A bar is also a context
    manager (it closes on exit).
    """

    def __init__(
        self,
        label: str,
        unit: str = "s simulated",
        *,
        phases: Iterable[tuple[Any, ...]] | None = None,
        stream: TextIO | None = None,
        delay: float = 1.0,
        enabled: bool | None = None,
        width: int | None = None,
    ) -> None:
        self.label = label
        ph = [tuple(p) for p in phases] if phases else [("", 1.0, unit)]
        self.phases: list[tuple[str, float, str]] = [
            (str(p[0]), float(p[1]), str(p[2]) if len(p) > 2 else "") for p in ph
        ]
        self.stream = stream if stream is not None else sys.stderr
        self.index = 0  #: the current phase
        self.frac = 0.0  #: how far the current phase is
        self._count: tuple[float, float] | None = None  #: (done, total) of the current phase
        self._note = ""  #: words after the current phase's count (:meth:`note`)
        self._pushed = 0.0
        self.state: str | None = None  #: "done", "interrupted", "failed", "stopped" once closed
        self.child: ProgressBar | None = None
        self.parent = active()
        self.width = width
        self._progress: Any = None
        self._task: Any = None
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._t0 = time.monotonic()
        self._logged = -1
        if self.parent is not None:
            self.parent._adopt(self)
            self.enabled = False
        else:
            self.enabled = _enabled_by_default(self.stream) if enabled is None else enabled
        _OPEN.append(self)
        if self.enabled:
            if delay <= 0 or _forced():  # forced: drawn from the start, however short
                self._start()
            else:
                self._timer = threading.Timer(delay, self._start)
                self._timer.daemon = True
                self._timer.start()

    # ------------------------------------------------------------ the state

    @property
    def fraction(self) -> float:
        """How far the whole operation is, 0 to 1 (1 only when the last phase is done)."""
        total = sum(w for _, w, _ in self.phases) or 1.0
        before = sum(w for _, w, _ in self.phases[: self.index])
        cur = self.phases[self.index][1] if self.index < len(self.phases) else 0.0
        return min(1.0, (before + cur * self.frac) / total)

    @property
    def complete(self) -> bool:
        return self.index >= len(self.phases)

    def description(self) -> str:
        """The bar's words: the label, the current phase (and a nested bar's), or the end."""
        parts = [self.label]
        if self.state is not None:
            parts.append(self.state)
            return ": ".join(p for p in parts if p)
        if not self.complete:
            name = self.phases[self.index][0]
            if name:
                parts.append(name)
        if self.child is not None:
            inner = self.child.description_inner()
            if inner:
                parts.append(inner)
        return ": ".join(p for p in parts if p)

    def description_inner(self) -> str:
        if self.complete:
            return ""
        name = self.phases[self.index][0]
        if self.child is not None:
            inner = self.child.description_inner()
            return f"{name}: {inner}" if name and inner else name or inner
        return name

    def percent_text(self) -> str:
        """The percentage shown: 100 % only when the work is complete."""
        pct = 100.0 * self.fraction
        if not self.complete:
            pct = min(pct, 99.9)
        return f"{pct:5.1f}%"

    def text(self) -> str:
        """The bar's line without the bar itself (for logs and tests)."""
        detail = self._detail()
        return f"{self.description()}  {self.percent_text()}" + (f"  {detail}" if detail else "")

    def _detail(self) -> str:
        """``done/total unit`` of the current phase (of the nested bar's, if any)."""
        if self.child is not None and self.child._detail():
            return self.child._detail()
        if self._count is None or self.complete:
            return ""
        done, total = self._count
        unit = self.phases[self.index][2]
        count = f"{done:,.6g}/{total:,.6g} {unit}".rstrip()
        return f"{count}, {self._note}" if self._note else count

    # ------------------------------------------------------------ updates

    def __call__(self, done: float, total: float) -> None:
        """The current phase has done ``done`` of ``total``; at its total the next phase starts."""
        if self.complete:
            return
        done, total = float(done), float(total)
        if total > 0 and done >= total:
            with self._lock:
                self._advance()
            self._changed()
            return
        self.frac = 0.0 if total <= 0 else min(1.0, max(0.0, done / total))
        self._count = (done, total)
        # the engine calls this after every bin: pass it on at most 20 times a second
        now = time.monotonic()
        if now - self._pushed >= 0.05:
            self._pushed = now
            self._changed()

    def note(self, text: str) -> None:
        """A few words shown after the current phase's count (``17/60 points, 12
        resumed``) until the phase ends."""
        self._note = text

    def phase(self, name: str) -> None:
        """Start the phase ``name`` (the phases before it count as done)."""
        with self._lock:
            names = [p[0] for p in self.phases]
            if name not in names:
                raise ValueError(f"progress: no phase {name!r} in {names}")
            self.index = names.index(name)
            self.frac, self._count, self._note = 0.0, None, ""
        self._changed()

    def finish(self) -> None:
        """The whole operation is done: 100 %."""
        with self._lock:
            self.index, self.frac, self._count = len(self.phases), 0.0, None
        self._changed()

    def _advance(self) -> None:
        self.index += 1
        self.frac, self._count, self._note = 0.0, None, ""

    def _adopt(self, child: ProgressBar) -> None:
        with self._lock:
            self.child = child

    def _child_changed(self, child: ProgressBar) -> None:
        with self._lock:
            if self.complete:
                return
            self.frac = child.fraction
            if child.complete:
                self.child = None
                self._advance()
        self._changed()

    def _log_phase(self) -> None:
        """``--verbose``: one debug line when a phase starts (with the time so far), so
        that a log without a drawn bar still shows where the time went."""
        if (
            self.parent is not None  # the open bar logs the phases
            or self.index == self._logged
            or not log.isEnabledFor(logging.DEBUG)
        ):
            return
        self._logged = self.index
        what = self.description_inner() if not self.complete else "done"
        log.debug("%s: %s (%.1f s)", self.label, what or "started", time.monotonic() - self._t0)

    def _changed(self) -> None:
        self._log_phase()
        if self.parent is not None:
            self.parent._child_changed(self)
            return
        self._draw()

    # ------------------------------------------------------------ drawing (rich)

    def _start(self) -> None:
        with self._lock:
            if self._progress is not None or self.state is not None:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
            from rich.table import Column

            forced = not getattr(self.stream, "isatty", lambda: False)()
            console = Console(
                file=self.stream,
                force_terminal=True if forced else None,
                width=self.width or (100 if forced else None),
                highlight=False,
            )
            # on a narrow terminal the words give way (…), the numbers stay
            words = Column(no_wrap=True, overflow="ellipsis", ratio=1, min_width=12)
            self._progress = Progress(
                TextColumn("{task.description}", table_column=words),
                BarColumn(bar_width=24),
                TextColumn("{task.fields[pct]}", table_column=Column(no_wrap=True)),
                TextColumn("{task.fields[detail]}", table_column=Column(no_wrap=True)),
                TimeElapsedColumn(table_column=Column(no_wrap=True)),
                console=console,
                refresh_per_second=4,
                # standard output goes through the bar only when it is the same terminal
                redirect_stdout=bool(getattr(sys.stdout, "isatty", lambda: False)()),
                redirect_stderr=False,
            )
            self._task = self._progress.add_task(
                self.description(), total=_STEPS, pct=self.percent_text(), detail=self._detail()
            )
            self._progress.start()
            self._draw()

    def _draw(self) -> None:
        if self._progress is None:
            return
        with self._lock:
            self._progress.update(
                self._task,
                completed=round(_STEPS * self.fraction),
                description=self.description(),
                pct=self.percent_text(),
                detail=self._detail(),
            )

    # ------------------------------------------------------------ the end

    def close(self, exc: BaseException | None = None) -> None:
        """End the bar: its last line says "done" (100 %), or "interrupted" / "failed" /
        "stopped" at the point reached. Called in a ``finally`` or ``with`` exit, it
        tells an interruption (KeyboardInterrupt, SIGTERM) from an error."""
        if self.state is not None:
            return
        exc = exc if exc is not None else sys.exc_info()[1]
        with self._lock:
            if self.complete:
                self.state = "done"
            elif isinstance(exc, KeyboardInterrupt):
                self.state = "interrupted"
            elif exc is not None:
                self.state = "failed"
            else:
                self.state = "stopped"
            if self._timer is not None:
                self._timer.cancel()
        if self in _OPEN:
            _OPEN.remove(self)
        if self.parent is not None:
            with self.parent._lock:
                if self.parent.child is self:
                    self.parent.child = None
            self.parent._draw()
            return
        with self._lock:
            if self._progress is not None:
                self._draw()
                self._progress.stop()
                self._progress = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, typ: object, exc: BaseException | None, tb: object) -> None:
        self.close(exc)
