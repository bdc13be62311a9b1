"""Self-contained HTML reports: one run (``report.html``) or a comparison of several.

Everything a reader needs is in the one file: the figures are embedded as
base64 PNG, followed by the key numbers, the scenario's provenance (its
``source``), its parameters and costs, and the scenario file itself. Written
atomically (:func:`rtshield.outputs.atomic_write`).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield import __version__, units
from rtshield.outputs import atomic_write, normalize
from rtshield.tables import fmt_value, key_metrics

__all__ = ["RunEntry", "compare_report", "run_report", "scenario_parameters"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;
max-width:1300px;color:#222;line-height:1.4;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}
h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}
td{white-space:nowrap}td:first-child,th{white-space:normal}
th:first-child,td:first-child{text-align:left}thead th{background:#f3f3f3}
img{max-width:100%;height:auto;display:block;margin:.5em 0}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.85em}
.tablewrap{overflow-x:auto}.claims td,.claims th{white-space:normal;text-align:left}
.claims td.no{color:#a00;font-weight:600}.claims td.ok{color:#070}
.meta{color:#555}.note{color:#555;font-size:.9em}
"""


@dataclass(frozen=True)
class RunEntry:
    """One run as the report shows it."""

    scenario: Any  #: rtshield.scenario.Scenario
    summary: Mapping[str, Any]
    figures: Mapping[str, Path]  #: name → PNG path
    link: str | None = None  #: relative link to the run's own report, if any
    label: str | None = None  #: column heading (default: the scenario's name)

    @property
    def title(self) -> str:
        return self.label or self.scenario.name


def _e(x: Any) -> str:
    return html.escape(str(x))


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = [
        '<div class="tablewrap"><table><thead><tr>',
        *(f"<th>{_e(h).replace('_', '_<wbr>')}</th>" for h in header),
        "</tr></thead><tbody>",
    ]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def scenario_parameters(s: Any) -> list[tuple[str, str]]:
    """The scenario's settings as ``(name, value)`` rows, with units."""
    f = units.format_ns
    rows = [
        ("platform", f"{s.platform.name} — {s.platform.description}"),
        ("duration / bin", f"{f(s.duration_ns)} / {f(s.bin_ns)}"),
        ("seed", str(s.seed)),
        (
            "critical task",
            f"period {f(s.critical.period_ns)}, work {f(s.critical.work_ns)}, "
            f"priority {s.critical.priority}, core {s.critical.core}",
        ),
        (
            "driver",
            f"priority {s.driver.priority}, RX queue {s.driver.queue} packets, "
            f"core {s.driver.core}",
        ),
        ("NIC", s.nic.kind + (f", ring {s.nic.ring}" if s.nic.ring else "")),
        (
            "mitigation",
            s.mitigation.kind
            + "".join(f", {k} = {v}" for k, v in s.mitigation.parameters().items()),
        ),
    ]
    for q in getattr(s.nic, "queues", ()):
        mod = [
            f"{label} {f(v)}"
            for label, v in (("absolute", q.absolute_ns), ("packet", q.packet_ns))
            if v is not None
        ]
        if q.frames is not None:
            mod.append(f"frames {q.frames}")
        rows.append(
            (f"NIC queue {q.name}", ", ".join([f"{q.size} descriptors", *(mod or ["unmoderated"])]))
        )
    rx = getattr(s, "rx", None)
    if rx is not None:
        parts = [
            f"{rx.buffers} buffers",
            f"{rx.cache} cache invalidation",
            "short circuit " + ("on" if rx.short_circuit else "off"),
            "recycle below "
            + (str(rx.recycle_below) if rx.recycle_below is not None else "libshield's default"),
        ]
        if rx.global_capacity:
            parts.append(
                f"global limit {rx.global_capacity} per {f(rx.global_period_ns or 0)}, "
                f"polling task priority {rx.poll_priority}"
            )
        rows.append(("receive path", ", ".join(parts)))
    for src in getattr(s, "sources", ()):
        lim = []
        if src.burst is not None:
            lim.append(f"burst {src.burst}")
        if src.min_interarrival_ns is not None:
            lim.append(f"min_interarrival {f(src.min_interarrival_ns)}")
        rows.append(
            (
                f"source {src.name}",
                ", ".join(
                    [f"RX line {src.index}", f"ISR work {f(src.isr_work_ns)} per packet", *lim]
                    + (["handled in the ISR (no driver)"] if src.isr_only else [])
                ),
            )
        )
    for fl in s.flows:
        if fl.pattern == "pyramid":
            shape = (
                f"pyramid {fl.start_pps:g} → {fl.peak_pps:g} pps in steps of "
                f"{fl.step_pps:g} every {f(fl.step_every_ns or 0)}"
            )
        elif fl.pattern == "steps":
            shape = (
                f"steps {', '.join(f'{r:g}' for r in fl.rates_pps or ())} pps every "
                f"{f(fl.step_every_ns or 0)}"
            )
        else:
            shape = f"{fl.pattern} {fl.rate_pps:g} pps"
        on = f", on source {fl.source}" if getattr(fl, "source", None) else ""
        if getattr(fl, "nic_queue", None):
            on += f", NIC queue {fl.nic_queue}"
        if rx is not None:
            on += f", priority {fl.priority}" + ("" if fl.bind else ", no socket")
            if fl.capacity:
                on += f", server {fl.capacity} per {f(fl.server_period_ns or 0)}"
            if fl.queue:
                on += f", queue {fl.queue}"
        rows.append((f"flow {fl.name}", f"{fl.protocol}/{fl.dst_port}, {fl.size} B, {shape}{on}"))
    for t in s.tasks:
        rows.append((f"task {t.name}", f"{t.kind}, priority {t.priority}, core {t.core}"))
    return rows


def _mitigation_block(summary: Mapping[str, Any]) -> str:
    m = summary.get("mitigation")
    if not isinstance(m, Mapping):
        return ""
    rows = [(k, v) for k, v in sorted(normalize(m).items()) if not isinstance(v, Mapping)]
    for sub in ("parameters", "counters"):
        v = m.get(sub)
        if isinstance(v, Mapping):
            rows += [(f"{sub}: {k}", x) for k, x in sorted(normalize(v).items())]
    return "<h3>Mitigation</h3>" + _table(["", "value"], rows) if rows else ""


def _drops_block(summary: Mapping[str, Any]) -> str:
    d = (
        summary.get("totals", {}).get("dropped")
        if isinstance(summary.get("totals"), Mapping)
        else None
    )
    if not isinstance(d, Mapping) or not d:
        return ""
    return "<h3>Drops by reason</h3>" + _table(["reason", "packets"], sorted(d.items()))


def _flows_block(summary: Mapping[str, Any]) -> str:
    flows = summary.get("flows")
    if not isinstance(flows, Mapping) or not flows:
        return ""
    rows = []
    for name in sorted(flows):
        f = flows[name] if isinstance(flows[name], Mapping) else {}
        lat = f.get("latency_us") if isinstance(f.get("latency_us"), Mapping) else {}
        rows.append(
            [
                name,
                *(fmt_value(f.get(k), "count") for k in ("offered", "delivered", "dropped")),
                *(fmt_value(lat.get(k), "us") for k in ("p50", "p99", "max")),
            ]
        )
    return "<h3>Flows</h3>" + _table(
        ["flow", "offered", "delivered", "dropped", "latency p50", "latency p99", "latency max"],
        rows,
    )


def _rx_block(summary: Mapping[str, Any]) -> str:
    """The receive path's counters and each flow's drops by reason (``[rx]`` runs)."""
    rx = summary.get("rx")
    if not isinstance(rx, Mapping):
        return ""
    out = ["<h3>Receive path</h3>"]
    paths = rx.get("paths")
    if isinstance(paths, Mapping) and paths:
        out.append(
            _table(
                ["ISR path", "frames", "CPU time"],
                [
                    (
                        p,
                        fmt_value(v.get("count"), "count"),
                        f"{float(v.get('cpu_s') or 0.0):.6f} s",
                    )
                    for p, v in paths.items()
                    if isinstance(v, Mapping)
                ],
            )
        )
    rows = [(k, v) for k, v in sorted(normalize(rx).items()) if not isinstance(v, Mapping)]
    if rows:
        out.append(_table(["", "value"], rows))
    flows = summary.get("flows")
    if isinstance(flows, Mapping) and flows:
        reasons: list[str] = []
        for f in flows.values():
            for r, n in (f.get("dropped_by") or {}).items() if isinstance(f, Mapping) else ():
                if n and r not in reasons:
                    reasons.append(r)
        if reasons:
            out.append("<h3>Drops per flow by reason</h3>")
            out.append(
                _table(
                    ["flow", "received", "processed", *reasons],
                    [
                        [
                            name,
                            fmt_value(flows[name].get("received"), "count"),
                            fmt_value(flows[name].get("processed"), "count"),
                            *(
                                fmt_value((flows[name].get("dropped_by") or {}).get(r), "count")
                                for r in reasons
                            ),
                        ]
                        for name in sorted(flows)
                    ],
                )
            )
    return "".join(out)


def _provenance(s: Any) -> str:
    notes = getattr(s, "notes", "")
    return (
        f'<p class="meta"><b>{_e(s.description or s.name)}</b><br>'
        f"Source: {_e(s.source or 'not stated')}<br>"
        + (f"Notes: {_e(notes)}<br>" if notes else "")
        + f"Scenario file: <code>{_e(s.path)}</code> · platform preset "
        f"<code>{_e(s.platform.name)}</code> ({_e(s.platform.source)})</p>"
    )


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
        f'<p class="note">Written by rtshield {__version__}. Every number on this page '
        f"comes from the discrete-event simulation of the scenario above, which calls "
        f"libshield's mitigation code at the driver's hook points.</p></body></html>\n"
    )


def _run_body(e: RunEntry, level: int = 1) -> str:
    s, summ = e.scenario, e.summary
    h = f"h{level}"
    parts = [f"<{h}>{_e(e.title)}</{h}>", _provenance(s)]
    titles = {
        "packets": "Sent, received and processed packets per second",
        "critical": "Completed critical cycles and accumulated lateness per second",
        "cycle_time": "Critical cycle times",
        "latency": "Packet latency per flow",
        "rx_drops": "Receive path: dropped packets per flow, by reason",
        "rx_priority": "Receive path: network task priority and time in polling mode",
        "detection": "Overload detectors: when each fired (Danicki et al. §2.1)",
    }
    for key in (
        "packets",
        "critical",
        "cycle_time",
        "latency",
        "rx_drops",
        "rx_priority",
        "detection",
    ):
        if key in e.figures:
            parts.append(_img(e.figures[key], titles[key]))
    parts.append("<h3>Key numbers</h3>" + _table(["", "value"], key_metrics(summ)))
    parts.append(_drops_block(summ))
    parts.append(_flows_block(summ))
    parts.append(_rx_block(summ))
    parts.append(_mitigation_block(summ))
    parts.append("<h3>Parameters</h3>" + _table(["", "value"], scenario_parameters(s)))
    parts.append(
        "<h3>CPU costs (preset + overrides)</h3>"
        + _table(["activity", "cost"], [(k, units.format_ns(v)) for k, v in s.costs.items()])
    )
    if s.text:
        parts.append(f"<h3>Scenario file</h3><pre>{_e(s.text)}</pre>")
    return "\n".join(p for p in parts if p)


def run_report(out_dir: str | Path, entry: RunEntry) -> Path:
    """Write ``out_dir/report.html`` for one run."""
    page = _page(f"rtshield: {entry.scenario.name}", _run_body(entry))
    return atomic_write(Path(out_dir) / "report.html", page)


def compare_report(
    out_dir: str | Path,
    title: str,
    intro: str,
    entries: Sequence[RunEntry],
    figures: Mapping[str, Path],
    *,
    extra_captions: Mapping[str, str] | None = None,
    extra_sections: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write ``out_dir/report.html`` comparing several runs side by side.

    ``title`` is escaped; ``intro`` and the bodies of ``extra_sections``
    (``(heading, html)`` pairs placed after the side-by-side table) are
    inserted as HTML, so callers escape any text that came from the user.
    """
    names = [e.title for e in entries]
    metric_rows = [key_metrics(e.summary) for e in entries]
    labels = [lbl for lbl, _ in metric_rows[0]] if metric_rows else []
    for rows in metric_rows[1:]:
        for lbl, _ in rows:
            if lbl not in labels:
                labels.append(lbl)
    table_rows = []
    for lbl in labels:
        row = [lbl]
        for rows in metric_rows:
            row.append(dict(rows).get(lbl, "—"))
        table_rows.append(row)
    mit_row = ["mitigation"] + [e.scenario.mitigation.kind for e in entries]
    prio_row = ["priorities critical / driver"] + [
        f"{e.scenario.critical.priority} / {e.scenario.driver.priority}" for e in entries
    ]
    queue_row = ["RX queue"] + [str(e.scenario.driver.queue) for e in entries]
    parts = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">{intro}</p>',
        "<h2>Side by side</h2>",
        _table(["", *names], [mit_row, prio_row, queue_row, *table_rows]),
    ]
    for heading, body in extra_sections:
        parts.append(f"<h2>{_e(heading)}</h2>{body}")
    captions = {
        "packets_grid": "Sent, received and processed packets per second, one panel per "
        "configuration (Danicki et al. Figures 6a/c, 7a/c, 8 style)",
        "critical_grid": "Completed critical cycles per second and accumulated lateness, one "
        "panel per configuration (Figures 6b/d, 7b/d style)",
        "processed": "Packets processed per second, all configurations (dotted: sent)",
        "lateness": "Accumulated lateness of the critical task per bin, all configurations",
        **(extra_captions or {}),
    }
    parts.append("<h2>Figures</h2>")
    for key, path in figures.items():
        parts.append(f"<h3>{_e(captions.get(key, key))}</h3>" + _img(path, key))
    parts.append("<h2>Configurations</h2>")
    for e in entries:
        link = f' <a href="{_e(e.link)}">(own report)</a>' if e.link else ""
        parts.append(_run_body(e, level=3).replace("</h3>", f"{link}</h3>", 1))
    return atomic_write(Path(out_dir) / "report.html", _page(title, "\n".join(parts)))
