"""The key numbers of a run's summary, as rows for terminal tables and reports."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["METRICS", "fmt_value", "key_metrics", "text_table"]


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
    """Human formatting: thousands separators for counts, one decimal for % and µs."""
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


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain monospace table: first column left-aligned, the others right-aligned."""
    cols = len(header)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(cols)]

    def line(r: Sequence[str]) -> str:
        cells = [str(r[0]).ljust(widths[0])]
        cells += [str(r[i]).rjust(widths[i]) for i in range(1, cols)]
        return "  ".join(cells).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(r) for r in rows)])
