"""The key numbers of a run's summary, as rows for terminal tables and reports, and the
terminal tables themselves (rich).

Every verb's terminal summary is a :func:`print_table`: columns with units in
their headings, numbers right-aligned with thousands separators (``fmt_value``),
the first column left-aligned. No cell is ever wrapped: on a terminal a table
wider than the terminal is printed as several tables one under the other, each
with the label column and as many of the other columns as fit (labels are cut
with … only when one column does not fit beside them); into a pipe or a file the
same table is plain text at its natural width (:func:`text_table`), cells
separated by ``│``. rich is imported when a table is drawn.
"""

from __future__ import annotations

import io
import numbers
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

__all__ = [
    "METRICS", "flow_delivery", "fmt_value", "key_metrics", "print_table", "text_table",
]


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


def _critical_measured(s: Mapping[str, Any], min_cycles: int = 1) -> Callable[[Any], Any]:
    """``v`` if the critical task gave the quantity a value, else None (shown "—"):
    lateness needs a cycle that ended or a missed deadline, cycle times two cycles
    (the time between consecutive cycle ends), a response time one cycle."""
    cycles = _get(s, "critical", "cycles") or 0
    misses = _get(s, "critical", "misses") or 0
    ok = cycles >= min_cycles if min_cycles > 0 else (cycles or misses)
    return lambda v: v if ok else None


def _lateness(key: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda s: _critical_measured(s, 0)(_get(s, "critical", key))


def _cycle_time(q: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda s: _critical_measured(s, 2)(_get(s, "critical", "cycle_time_us", q))


#: (label, getter, kind) — kind selects the formatting: count, pct, us. A getter
#: returns None (shown "—") for a quantity the run never measured.
METRICS: tuple[tuple[str, Callable[[Mapping[str, Any]], Any], str], ...] = (
    ("packets sent", lambda s: _get(s, "totals", "offered"), "count"),
    ("interrupts raised", lambda s: _get(s, "totals", "irq_raised"), "count"),
    ("interrupts lost", lambda s: _get(s, "totals", "irq_lost"), "count"),
    ("packets received", lambda s: _get(s, "totals", "received"), "count"),
    ("packets processed", lambda s: _get(s, "totals", "processed"), "count"),
    ("packets dropped", _dropped, "count"),
    ("critical cycles", lambda s: _get(s, "critical", "cycles"), "count"),
    ("deadline misses", lambda s: _get(s, "critical", "misses"), "count"),
    ("worst cycle lateness", _lateness("lateness_max_pct"), "pct"),
    ("worst 1-bin accumulated lateness", _lateness("lateness_bin_max_pct"), "pct"),
    ("total accumulated lateness", _lateness("lateness_sum_pct"), "pct"),
    ("cycle time p50", _cycle_time("p50"), "us"),
    ("cycle time p99", _cycle_time("p99"), "us"),
    ("cycle time max", _cycle_time("max"), "us"),
)


def flow_delivery(f: Any) -> str:
    """A flow's delivered of its offered packets ("8 087 of 9 999"); "—" without counts."""
    if not isinstance(f, Mapping) or f.get("offered") is None:
        return "—"
    return f"{fmt_value(f.get('delivered'), 'count')} of {fmt_value(f.get('offered'), 'count')}"


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
    """``(label, formatted value)`` rows of one summary: :data:`METRICS`, each flow's
    delivered of its offered packets, then the CPU shares."""
    rows = [(label, fmt_value(get(summary), kind)) for label, get, kind in METRICS]
    flows = summary.get("flows")
    if isinstance(flows, Mapping):
        rows += [(f"flow {name} delivered", flow_delivery(flows[name]))
                 for name in sorted(flows)]
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
    max_widths: Mapping[int, int] | None = None,
    by_column: bool = True,
):
    """The rich table. No cell wraps: a number is never broken across lines; a column
    in ``max_widths`` (a label) is cut with an ellipsis to that width instead.

    ``by_column``: each column is one cell of one row, its values one per line (a
    row of one-line cells is a line either way, so the table is drawn the same, in
    a third of the time: rich's cost is per cell); a row with a value of several
    lines needs rows of their own (``False``, and always then)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    t = Table(
        box=box.MINIMAL,
        title=None if title is None else Text(title, style="bold"),  # text, not markup
        title_justify="left",
        title_style="bold",
        header_style="bold",
        pad_edge=False,
        highlight=False,
    )
    for i, h in enumerate(header):  # headings as text too: a scenario may be named "q[/x]"
        just = "left" if i == 0 or i in left else "right"
        t.add_column(Text(str(h)), justify=just, no_wrap=True, overflow="ellipsis",
                     max_width=(max_widths or {}).get(i))
    cells = [[str(c) for c in r] for r in rows]
    # (not when the last row is empty: a text ending in a line break ends a line early)
    if by_column and rows and any(cells[-1]) and all(
            len(r) == len(header) and not any("\n" in c for c in r) for r in cells):
        t.add_row(*(Text("\n".join(r[i] for r in cells)) for i in range(len(header))))
        return t
    for r in cells:  # as text, not markup: a scenario key's [section] must show
        t.add_row(*(Text(c) for c in r))
    return t


def _render(table: Any, width: int = 100_000, styled: bool = False) -> str:
    """The table as text ``width`` columns wide (ANSI styles with ``styled``), without
    the box's top and bottom ends (lines of only ╷ or ╵)."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system="standard" if styled else None,
                      force_terminal=styled, highlight=False)
    console.print(table, crop=False)
    lines = [ln.rstrip() for ln in buf.getvalue().splitlines()]
    plain = [_ANSI.sub("", ln) for ln in lines] if styled else lines
    return "\n".join(ln for ln, p in zip(lines, plain, strict=True) if p.strip(" ╷╵"))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _width(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(_ANSI.sub("", ln)) for ln in text.splitlines()), default=0)


def _fitted(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None,
    left: Sequence[int],
    keys: int,
    width: int | None,
) -> list[Any]:
    """The table as rich tables that each fit ``width`` columns (None: one table at its
    natural width). The first ``keys`` columns (the labels) start every table; the
    other columns are split into consecutive groups, as many per table as fit — a
    stacked layout, so that no cell is ever wrapped. Where even the labels and one
    column are too wide, the labels are cut (…) to fit."""
    n = len(header)
    keys = max(1, min(keys, n))

    def make(cols: Sequence[int], first: bool, cut: Mapping[int, int] | None = None) -> Any:
        return _table(
            [header[i] for i in cols],
            [[r[i] for i in cols] for r in rows],
            title if first else None,
            [j for j, i in enumerate(cols) if i in left],
            cut,
        )

    if width is None or _width(_render(make(range(n), True))) <= width:
        return [make(range(n), True)]
    groups: list[list[int]] = []
    for c in range(keys, n):
        if groups and _width(_render(make([*range(keys), *groups[-1], c], False))) <= width:
            groups[-1].append(c)
        else:
            groups.append([c])
    out = []
    for g, cols in enumerate(groups):
        cols = [*range(keys), *cols]
        excess = _width(_render(make(cols, g == 0))) - width
        cut = None
        if excess > 0:  # one column and the labels: cut the labels, never the numbers
            from rich.cells import cell_len

            natural = max(cell_len(str(x)) for x in [header[0], *(r[0] for r in rows)])
            cut = {0: max(4, natural - excess)}
        out.append(make(cols, g == 0, cut))
    return out


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    left: Sequence[int] = (),
    width: int | None = None,
    keys: int = 1,
) -> str:
    """The table as plain text: the title, the heading, a rule, one line per row; the
    first column (and those in ``left``: words, not numbers) left-aligned, the others
    right-aligned. At its natural width, or, given ``width``, as several tables one
    under the other that each fit it (:func:`_fitted`: the first ``keys`` columns
    repeated in each)."""
    return "\n\n".join(_render(t) for t in _fitted(header, rows, title, left, keys, width))


def print_table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    file: TextIO | None = None,
    left: Sequence[int] = (),
    keys: int = 1,
) -> None:
    """Print the table on ``file`` (standard output). On a terminal it fits the
    terminal's width (:func:`text_table` with the terminal's width; styled by rich);
    while a progress bar holds the terminal, its lines go above the bar. Into a pipe
    or a file it is :func:`text_table` at its natural width."""
    out = file if file is not None else sys.stdout
    if not getattr(out, "isatty", lambda: False)():
        print(text_table(header, rows, title, left, keys=keys), file=out)
        return
    from rich.console import Console

    tables = _fitted(header, rows, title, left, keys, Console(file=out).width)
    if hasattr(out, "rich_proxied_file"):
        # a live progress bar redirects standard output: write through it, so that
        # the table's lines go above the bar instead of onto the bar's line
        out.write("\n\n".join(_render(t, styled=True) for t in tables) + "\n")
        out.flush()
        return
    console = Console(file=out, highlight=False)
    for i, t in enumerate(tables):
        if i:
            console.print()
        console.print(t)
