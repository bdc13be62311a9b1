"""The key numbers of a run's summary, as rows for terminal tables and reports, and the
terminal tables themselves (rich).

Every verb's terminal summary is a :func:`print_table`: columns with units in
their headings, numbers right-aligned with thousands separators (``fmt_value``),
the first column left-aligned. On a terminal rich fits the table to its width;
into a pipe or a file the same table is plain text at its natural width
(:func:`text_table`), cells separated by ``│``. rich is imported when a table is
drawn.
"""

from __future__ import annotations

import io
import numbers
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

__all__ = ["METRICS", "fmt_value", "key_metrics", "print_table", "text_table"]


def _get(d: Mapping[str, Any], *path: str) -> Any:
    cur: Any = d
    for p in path:
        if not isinstance(cur, Mapping) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _dropped(s: Mapping[str, Any]) -> Any:
    d = _get(s, "totals", "dropped")
    if isinstance(d, Mapping):
        return sum(v for v in d.values() if isinstance(v, (int, float)))
    return d


#: (label, getter, kind) — kind selects the formatting: count, pct, us.
METRICS: tuple[tuple[str, Callable[[Mapping[str, Any]], Any], str], ...] = (
    ("packets sent", lambda s: _get(s, "totals", "offered"), "count"),
    ("interrupts raised", lambda s: _get(s, "totals", "irq_raised"), "count"),
    ("interrupts lost", lambda s: _get(s, "totals", "irq_lost"), "count"),
    ("packets received", lambda s: _get(s, "totals", "received"), "count"),
    ("packets processed", lambda s: _get(s, "totals", "processed"), "count"),
    ("packets dropped", _dropped, "count"),
    ("critical cycles", lambda s: _get(s, "critical", "cycles"), "count"),
    ("deadline misses", lambda s: _get(s, "critical", "misses"), "count"),
    ("worst cycle lateness", lambda s: _get(s, "critical", "lateness_max_pct"), "pct"),
    (
        "worst 1-bin accumulated lateness",
        lambda s: _get(s, "critical", "lateness_bin_max_pct"),
        "pct",
    ),
    ("total accumulated lateness", lambda s: _get(s, "critical", "lateness_sum_pct"), "pct"),
    ("cycle time p50", lambda s: _get(s, "critical", "cycle_time_us", "p50"), "us"),
    ("cycle time p99", lambda s: _get(s, "critical", "cycle_time_us", "p99"), "us"),
    ("cycle time max", lambda s: _get(s, "critical", "cycle_time_us", "max"), "us"),
)


def fmt_value(v: Any, kind: str) -> str:
    """Human formatting: thousands separators for counts, one decimal for % and µs
    (``num``: one decimal, no unit, for a column whose heading names it)."""
    if v is None:
        return "—"
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return str(v)
    v = float(v)
    if kind == "count":
        return f"{int(round(v)):,}".replace(",", " ")
    if kind == "pct":
        return f"{v:,.1f} %".replace(",", " ")
    if kind == "us":
        return f"{v:,.1f} µs".replace(",", " ")
    if kind == "num":  # a number in a column whose heading has the unit
        return f"{v:,.1f}".replace(",", " ")
    if kind == "share":
        return f"{100.0 * v:.1f} %"
    return f"{v:g}"


def key_metrics(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, formatted value)`` rows of one summary, CPU shares appended."""
    rows = [(label, fmt_value(get(summary), kind)) for label, get, kind in METRICS]
    cpu = summary.get("cpu")
    if isinstance(cpu, Mapping):
        for ctx in sorted(cpu):
            rows.append((f"CPU share: {ctx}", fmt_value(cpu[ctx], "share")))
    return rows


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None,
    left: Sequence[int] = (),
):
    from rich import box
    from rich.table import Table

    t = Table(
        box=box.MINIMAL,
        title=title,
        title_justify="left",
        title_style="bold",
        header_style="bold",
        pad_edge=False,
        highlight=False,
    )
    for i, h in enumerate(header):
        just = "left" if i == 0 or i in left else "right"
        t.add_column(str(h), justify=just, overflow="fold")
    for r in rows:
        t.add_row(*(str(c) for c in r))
    return t


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    left: Sequence[int] = (),
) -> str:
    """The table as plain text at its natural width: the title, the heading, a rule, one
    line per row; the first column (and those in ``left``: words, not numbers)
    left-aligned, the others right-aligned."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=100_000, color_system=None, force_terminal=False)
    console.print(_table(header, rows, title, left), crop=False)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    # drop the box's top and bottom ends (lines of only ╷ or ╵)
    return "\n".join(ln for ln in lines if ln.strip(" ╷╵"))


def print_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    file: TextIO | None = None,
    left: Sequence[int] = (),
) -> None:
    """Print the table on ``file`` (standard output): fitted and styled by rich on a
    terminal, :func:`text_table` otherwise."""
    out = file if file is not None else sys.stdout
    if getattr(out, "isatty", lambda: False)():
        from rich.console import Console

        Console(file=out, highlight=False).print(_table(header, rows, title, left))
    else:
        print(text_table(header, rows, title, left), file=out)
