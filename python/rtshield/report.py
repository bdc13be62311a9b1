"""Self-contained HTML reports: one run (``report.html``) or a comparison of several.

Everything a reader needs is in the one file: a table of contents, the key
numbers, the figures (embedded as base64 PNG), the scenario's provenance (its
``source``), its parameters and costs, and the scenario file itself. The
pages are rendered from jinja2 templates shipped in ``rtshield/templates``
with autoescaping on: text from scenarios and summaries is escaped, HTML
built by rtshield is passed in as :class:`markupsafe.Markup`. Numbers carry
their units and thousands separators (a narrow no-break space); yes/no
values read as words, never as Python's ``True``/``None``. Written
atomically (:func:`rtshield.outputs.atomic_write`); the same run gives the
same bytes.
"""

from __future__ import annotations

import base64
import functools
import html
import math
import numbers
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield import units
from rtshield._version import __version__
from rtshield.outputs import atomic_write, normalize
from rtshield.tables import fmt_value, key_metrics

__all__ = [
    "RunEntry",
    "compare_report",
    "fmt_number",
    "figure",
    "fmt_named",
    "page",
    "receive_path_text",
    "render",
    "run_report",
    "scenario_file",
    "scenario_parameters",
    "setup_rows",
    "verdict_table",
]

_TEMPLATES = Path(__file__).resolve().parent / "templates"
#: A narrow no-break space: the thousands separator of every number in a report.
_NNBSP = "\u202f"
_DIGIT_GAP = re.compile(r"(?<=\d) (?=\d{3}(?!\d))")


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


# ------------------------------------------------------------------ formatting


def _group(text: str) -> str:
    """Thousands separators as narrow no-break spaces ("2 250 000" → "2 250 000")."""
    return _DIGIT_GAP.sub(_NNBSP, text)


def fmt_number(v: Any, unit: str = "") -> str:
    """One value for a report cell: grouped digits, its unit, words for yes/no/none.

    Integers keep every digit; other numbers show at most four significant
    decimals (``0.1``, ``2.489425`` → ``2.4894``, ``84060.1``).
    """
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, numbers.Real):
        return str(v)
    if isinstance(v, numbers.Integral) or (float(v).is_integer() and abs(v) < 1e15):
        text = f"{int(v):,}"
    elif not math.isfinite(float(v)):
        return "—"
    else:
        x = float(v)
        digits = max(0, 4 - max(0, int(math.floor(math.log10(abs(x)))) + 1)) if x else 0
        text = f"{x:,.{max(digits, 1)}f}".rstrip("0").rstrip(".")
    text = text.replace(",", _NNBSP)
    return f"{text}\u00a0{unit}" if unit else text


#: Key suffixes in a summary and the unit their values carry.
_SUFFIX_UNITS = (("_pct", "%"), ("_us", "µs"), ("_ns", "ns"), ("_pps", "packets/s"),
                 ("_s", "s"))


def fmt_named(key: str, v: Any) -> str:
    """A summary value by its key: ``rx_disabled_s`` → seconds, ``*_pct`` → %, …"""
    if isinstance(v, str) or isinstance(v, bool) or v is None:
        return fmt_number(v)
    for suffix, unit in _SUFFIX_UNITS:
        if key.endswith(suffix):
            return units.format_ns(float(v)) if unit == "ns" else fmt_number(v, unit)
    return fmt_number(v)


def _label(key: str) -> str:
    """A summary key as a row label: ``line_disables`` → ``line disables``."""
    for suffix, _ in _SUFFIX_UNITS:
        if key.endswith(suffix):
            key = key[: -len(suffix)]
            break
    return key.replace("_", " ")


def template_cache_dir() -> Path | None:
    """The folder of the compiled report templates (jinja2's bytecode cache):
    ``$XDG_CACHE_HOME/rtshield/templates`` (an absolute ``XDG_CACHE_HOME``), by
    default ``~/.cache/rtshield/templates``; ``None`` where it cannot be made or
    written, or is another user's (the templates are then compiled on every run,
    as without a cache)."""
    import os

    try:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # XDG: absolute only
        d = base / "rtshield" / "templates"
        d.mkdir(parents=True, exist_ok=True)
        # compiled code is loaded from there: only from a folder of this user's
        mine = not hasattr(os, "getuid") or d.stat().st_uid == os.getuid()
    except (OSError, RuntimeError, KeyError):  # no home folder, read-only, not a folder
        return None
    return d if mine and os.access(d, os.W_OK | os.X_OK) else None


def _bytecode_cache() -> Any:
    """jinja2's cache of compiled templates in :func:`template_cache_dir`, or ``None``.

    Compiling the templates (parsing them and generating their Python code) is most of
    a report's time; jinja2 keeps each template's code under its name and file, and
    compiles it again when the template's text or the Python version changes, so a
    page is the same with or without the cache. A cache that cannot be written is
    not the run's failure: that template is compiled again next time."""
    import jinja2

    d = template_cache_dir()
    if d is None:
        return None

    class Cache(jinja2.FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: Any) -> None:
            try:
                super().dump_bytecode(bucket)
            except OSError:  # full or read-only: the next run compiles it again
                pass

    return Cache(str(d))


@functools.lru_cache(maxsize=1)
def _env() -> Any:
    import jinja2
    from markupsafe import Markup, escape

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    # Long snake_case headings may break after an underscore.
    env.filters["wbr"] = lambda x: Markup(str(escape(x)).replace("_", "_<wbr>"))
    env.filters["nb"] = lambda x: x if isinstance(x, Markup) else _group(str(x))
    return env


def _markup(text: str) -> Any:
    from markupsafe import Markup

    return Markup(text)


def _png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (0, 0 if it is not a PNG)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return 0, 0
    return struct.unpack(">II", data[16:24])


@dataclass(frozen=True)
class _Fig:
    caption: str
    src: str
    width: int
    height: int
    alt: str


def _fig(path: Path, caption: str, alt: str | None = None) -> _Fig:
    data = Path(path).read_bytes()
    w, h = _png_size(data)
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return _Fig(caption, src, w, h, alt if alt is not None else caption)


def figure(path: Path, caption: str, alt: str | None = None) -> _Fig:
    """A PNG embedded in a page, for a template's ``m.figure`` macro."""
    return _fig(path, caption, alt)


def render(template: str, **context: Any) -> str:
    """A page's body from one of the templates shipped in ``rtshield/templates``
    (autoescaped; HTML built by rtshield goes in as :func:`_markup`'s Markup)."""
    return _env().get_template(template).render(**context)


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


#: The scenarios shipped with rtshield: the package's copy of the repository's scenarios/.
_SHIPPED = Path(__file__).resolve().parent / "scenarios"


def scenario_file(path: str | Path) -> tuple[str, str]:
    """How a report names a scenario file: ``(name, hint)``. A file the user gave, as
    given (no hint); a file shipped with rtshield (a study the demo runs, found inside
    the installed package), as ``scenarios/FOLDER/FILE`` with how to run an edited
    copy (``cp -r scenarios/FOLDER mine``, then ``--scenarios mine``)."""
    p = Path(path)
    if p.is_absolute() and p.parent.parent == _SHIPPED:
        folder = p.parent.name
        return f"scenarios/{folder}/{p.name}", (
            f"shipped with rtshield; to run an edited copy: cp -r scenarios/{folder} mine, "
            f"edit mine/{p.name}, and add --scenarios mine to the demo's command"
        )
    return str(path), ""


def receive_path_text(s: Any) -> str:
    """The scenario's receive path in a few words: "off" (the stack's own path), or
    Behnke et al.'s receive path (``[rx]``: its cache invalidation, short circuit and
    global limit; the full list is :func:`scenario_parameters`)."""
    rx = getattr(s, "rx", None)
    if rx is None:
        return "off"
    parts = [rx.cache]
    if rx.short_circuit:
        parts.append("short circuit")
    if rx.global_capacity:
        parts.append(f"global {rx.global_capacity}/{units.format_ns(rx.global_period_ns or 0)}")
    return "on: " + ", ".join(parts)


def setup_rows(scenarios: Sequence[Any]) -> list[list[str]]:
    """What protects the critical task in each scenario, one row per setting and one
    column per scenario: the rows that open the side-by-side table and the terminal
    summaries (the full list is :func:`scenario_parameters`)."""
    params = [", ".join(f"{k} {v}" for k, v in s.mitigation.parameters().items())
              for s in scenarios]
    rows = [["mitigation", *(s.mitigation.kind for s in scenarios)]]
    if any(params):
        rows.append(["mitigation parameters", *(p or "—" for p in params)])
    rows += [
        ["receive path", *(receive_path_text(s) for s in scenarios)],
        ["priority critical / network",
         *(f"{s.critical.priority} / {s.driver.priority}" for s in scenarios)],
        ["RX queue", *(fmt_value(s.driver.queue, "count") for s in scenarios)],
    ]
    return rows


# ------------------------------------------------------------------ blocks

Block = tuple[str, Sequence[str], Sequence[Sequence[Any]]]  #: (heading, header, rows)


def _mitigation_block(summary: Mapping[str, Any]) -> Block | None:
    m = summary.get("mitigation")
    if not isinstance(m, Mapping):
        return None
    rows = [(_label(k), fmt_named(k, v)) for k, v in sorted(normalize(m).items())
            if not isinstance(v, Mapping)]
    for sub in ("parameters", "counters"):
        v = m.get(sub)
        if isinstance(v, Mapping):
            rows += [(f"{sub}: {_label(k)}", fmt_named(k, x))
                     for k, x in sorted(normalize(v).items())]
    return ("Mitigation", ["", "value"], rows) if rows else None


def _drops_block(summary: Mapping[str, Any]) -> Block | None:
    totals = summary.get("totals")
    d = totals.get("dropped") if isinstance(totals, Mapping) else None
    if not isinstance(d, Mapping) or not d:
        return None
    rows = [(k, fmt_number(v)) for k, v in sorted(d.items()) if v]
    if not rows:
        return None
    return ("Drops by reason", ["reason", "packets"], rows)


def _entries(summary: Mapping[str, Any], key: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The named entries of the summary's section ``key`` (flows, tasks, detection) by
    name, an entry that is not a table as an empty one; none when the section is missing."""
    section = summary.get(key)
    if not isinstance(section, Mapping):
        return []
    return [(n, e if isinstance(e, Mapping) else {}) for n, e in sorted(section.items())]


def _flows_block(summary: Mapping[str, Any]) -> Block | None:
    rows = []
    for name, f in _entries(summary, "flows"):
        lat = f.get("latency_us") if isinstance(f.get("latency_us"), Mapping) else {}
        if not f.get("delivered"):  # a latency exists only for a delivered packet
            lat = {}
        rows.append(
            [
                name,
                *(fmt_value(f.get(k), "count") for k in ("offered", "delivered", "dropped")),
                *(fmt_value(lat.get(k), "us") for k in ("p50", "p99", "max")),
            ]
        )
    if not rows:
        return None
    return (
        "Flows",
        ["flow", "offered", "delivered", "dropped", "latency p50", "latency p99", "latency max"],
        rows,
    )


def _tasks_block(summary: Mapping[str, Any]) -> Block | None:
    rows = []
    for name, t in _entries(summary, "tasks"):
        # a response time exists only for a job that finished
        worst = t.get("max_response_us") if t.get("jobs") else None
        rows.append([name, fmt_number(t.get("jobs")), fmt_number(t.get("misses")),
                     fmt_value(worst, "us"), fmt_number(t.get("cpu_s"), "s")])
    if not rows:
        return None
    return ("Tasks", ["task", "jobs", "deadline misses", "worst response", "CPU time"], rows)


_DETECTOR_WORDS = {
    "late": "late critical cycles",
    "irq": "interrupt rate over the threshold",
    "fill": "RX queue fill over the high mark",
}


def _detection_block(summary: Mapping[str, Any]) -> Block | None:
    rows = []
    for name, d in _entries(summary, "detection"):
        first = d.get("first_s")
        rows.append([_DETECTOR_WORDS.get(name, name), fmt_number(d.get("count")),
                     "never" if first is None else fmt_number(first, "s")])
    if not rows:
        return None
    return ("Overload detection", ["detector", "times fired", "first at"], rows)


def _rx_blocks(summary: Mapping[str, Any]) -> list[Block]:
    """The receive path's counters and each flow's drops by reason (``[rx]`` runs)."""
    rx = summary.get("rx")
    if not isinstance(rx, Mapping):
        return []
    out: list[Block] = []
    paths = rx.get("paths")
    if isinstance(paths, Mapping) and paths:
        out.append((
            "Receive path: ISR paths",
            ["ISR path", "frames", "CPU time"],
            [(p, fmt_value(v.get("count"), "count"), fmt_number(float(v.get("cpu_s") or 0), "s"))
             for p, v in paths.items() if isinstance(v, Mapping)],
        ))
    rows = [(_label(k), fmt_named(k, v)) for k, v in sorted(normalize(rx).items())
            if not isinstance(v, Mapping)]
    if rows:
        out.append(("Receive path", ["", "value"], rows))
    flows = summary.get("flows")
    if isinstance(flows, Mapping) and flows:
        reasons: list[str] = []
        for f in flows.values():
            for r, n in (f.get("dropped_by") or {}).items() if isinstance(f, Mapping) else ():
                if n and r not in reasons:
                    reasons.append(r)
        if reasons:
            out.append((
                "Drops per flow by reason",
                ["flow", "received", "processed", *reasons],
                [
                    [
                        name,
                        fmt_value(flows[name].get("received"), "count"),
                        fmt_value(flows[name].get("processed"), "count"),
                        *(fmt_value((flows[name].get("dropped_by") or {}).get(r), "count")
                          for r in reasons),
                    ]
                    for name in sorted(flows)
                ],
            ))
    return out


def verdict_table(rows: Sequence[tuple[Sequence[str], bool | None]],
                  header: Sequence[str]) -> str:
    """A claims table: each row's cells, then its verdict as a mark and a word
    (✔ holds, ✘ does not hold, "not run"). ``header`` names the cells and the
    verdict column last. Returns HTML (cells escaped)."""
    words = {True: ("ok", "holds"), False: ("no", "does not hold"), None: ("", "not run")}
    body = []
    for cells, holds in rows:
        cls, word = words[holds]
        tds = "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
        body.append(f'<tr>{tds}<td class="verdict {cls}">{word}</td></tr>')
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    return (f'<div class="tablewrap claims"><table><thead><tr>{head}</tr></thead><tbody>'
            + "".join(body) + "</tbody></table></div>")


# ------------------------------------------------------------------ pages

#: A heading, with the anchor an earlier pass put before it (if any).
_HEADING = re.compile(
    r'(<a class="anchor" id="([^"]*)"></a>)?<h([1-3])((?:\s[^>]*)?)>(.*?)</h\3>', re.S
)
_ID = re.compile(r'\sid="([^"]*)"')
_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r"<a\s[^>]*>.*?</a>", re.S)


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", html.unescape(text).lower()).strip("-")
    return s[:60] or "section"


def _with_toc(body: str) -> tuple[str, list[tuple[int, str, Any]]]:
    """Give every h1–h3 a target for the table of contents and list them; the
    first heading, the page's title, is left out of the list.

    A heading's own ``id`` is used when it has one. Otherwise an empty
    ``<a class="anchor" id=…>`` goes before it, so the heading's markup stays
    as its author wrote it (callers may still find and edit it), and a body
    that passes through here twice (a study's page inside the demo's page)
    keeps its anchors. Every id is unique on the page.
    """
    taken = set(re.findall(r'\sid="([^"]*)"', body))
    toc: list[tuple[int, str, Any]] = []
    first = True

    def one(m: re.Match) -> str:
        nonlocal first
        anchor, anchor_id, level = m.group(1) or "", m.group(2), int(m.group(3))
        attrs, inner = m.group(4) or "", m.group(5)
        text = " ".join(_TAG.sub("", _LINK.sub("", inner)).split())
        own = _ID.search(attrs)
        if own:
            hid = own.group(1)
        elif anchor_id:
            hid = anchor_id
        else:
            base = hid = _slug(text)
            n = 2
            while hid in taken:
                hid, n = f"{base}-{n}", n + 1
            taken.add(hid)
            anchor = f'<a class="anchor" id="{hid}"></a>'
        if not first and text and text != "Contents":  # a page's own contents list
            toc.append((level, hid, _markup(text)))
        first = False
        return f"{anchor}<h{level}{attrs}>{inner}</h{level}>"

    return _HEADING.sub(one, body), toc


#: Table cells that hold a Python literal rather than a reading (built outside
#: the templates, e.g. by a study's own table code) and what the reader sees.
_LITERAL_CELL = re.compile(r"<td>(True|False|None|nan)</td>")
_CELL_WORDS = {"True": "yes", "False": "no", "None": "—", "nan": "—"}


#: The closing note of a page: where its numbers come from.
SIMULATED = (
    "Every number on this page comes from the discrete-event simulation of the scenarios "
    "it names, which calls libshield's mitigation code at the driver's hook points."
)


def page(title: str, body: str, provenance: str = SIMULATED) -> str:
    """A whole report page around ``body`` (HTML): styles, a table of contents
    built from its headings, and the closing note (``provenance``: where the page's
    numbers come from). A table cell holding only ``True``, ``False``, ``None`` or
    ``nan`` reads yes, no or —."""
    images: list[str] = []  # the embedded figures: out of the passes' way

    def aside(m: re.Match) -> str:
        images.append(m.group(0))
        return f"{_IMAGE_ASIDE}{len(images) - 1}:"

    if _IMAGE_ASIDE not in body:  # (a body with the mark in its text: as it is)
        body = _DATA_URI.sub(aside, body)
    body = _LITERAL_CELL.sub(lambda m: f"<td>{_CELL_WORDS[m.group(1)]}</td>", body)
    body, toc = _with_toc(body)
    text = _env().get_template("page.html.j2").render(
        title=title,
        css=_markup((_TEMPLATES / "report.css").read_text(encoding="utf-8")),
        body=_markup(body),
        toc=toc if len(toc) >= 3 else [],
        version=__version__,
        provenance=provenance,
    )
    return _ASIDE.sub(lambda m: images[int(m.group(1))], text) if images else text


#: An embedded figure (``data:`` URI) of a page body. The page's passes over its
#: headings and cells would otherwise scan every base64 character of the figures
#: (two thirds of writing a run's report): each is set aside for a short mark first
#: and put back in the finished page.
_DATA_URI = re.compile(r"data:image/[a-z+.-]+;base64,[A-Za-z0-9+/=]*")
_IMAGE_ASIDE = "data:rtshield-figure-set-aside-"
_ASIDE = re.compile(re.escape(_IMAGE_ASIDE) + r"([0-9]+):")


def _page(title: str, body: str) -> str:
    """The page frame (kept under this name for the callers that build their own body)."""
    return page(title, body)


#: Captions of a run's figures, in report order.
RUN_FIGURES = {
    "packets": "Sent, received and processed packets per second",
    "critical": "Completed critical cycles and accumulated lateness per second",
    "flows": "Each flow's offered and delivered packets per second, one panel per flow on "
    "its own scale",
    "cycle_time": "Critical cycle times (log counts; log-spaced bins when they span decades)",
    "latency": "Packet latency per flow",
    "rx_drops": "Receive path: dropped packets per flow, by reason",
    "rx_priority": "Receive path: network task priority and time in polling mode",
    "detection": "Overload detectors: when each fired (Danicki et al. §2.1)",
}


def _run_body(e: RunEntry, level: int = 1) -> str:
    s, summ = e.scenario, e.summary
    blocks = [
        _drops_block(summ),
        _flows_block(summ),
        _tasks_block(summ),
        _detection_block(summ),
        *_rx_blocks(summ),
        _mitigation_block(summ),
    ]
    return _env().get_template("run.html.j2").render(
        level=level,
        anchor=None,
        title=e.title,
        link=e.link,
        scenario=s,
        scenario_file=scenario_file(s.path),
        notes=getattr(s, "notes", ""),
        metrics=key_metrics(summ),
        figures=[_fig(e.figures[k], cap) for k, cap in RUN_FIGURES.items() if k in e.figures],
        blocks=[b for b in blocks if b],
        parameters=scenario_parameters(s),
        costs=[(k, units.format_ns(v)) for k, v in s.costs.items()],
    )


def run_report(out_dir: str | Path, entry: RunEntry) -> Path:
    """Write ``out_dir/report.html`` for one run."""
    text = page(f"rtshield: {entry.scenario.name}", _run_body(entry))
    return atomic_write(Path(out_dir) / "report.html", text)


#: Captions of the comparative figures.
COMPARE_FIGURES = {
    "packets_grid": "Sent, received and processed packets per second, one panel per "
    "configuration on shared axes (Danicki et al. Figures 6a/c, 7a/c, 8 style)",
    "critical_grid": "Completed critical cycles per second and accumulated lateness, one "
    "panel per configuration on shared axes (Figures 6b/d, 7b/d style); lateness above "
    "100 % on a logarithmic scale",
    "flows_grid": "Each flow's offered and delivered packets per second: one row per flow "
    "on its own scale, one column per configuration",
    "processed": "Packets processed per second, one panel per configuration (dotted: sent)",
    "lateness": "Accumulated lateness of the critical task per bin, one panel per configuration",
}


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
    side_rows = setup_rows([e.scenario for e in entries])
    for lbl in labels:
        side_rows.append([lbl, *(dict(rows).get(lbl, "—") for rows in metric_rows)])
    captions = {**COMPARE_FIGURES, **(extra_captions or {})}
    runs = [
        {"anchor": _slug(e.title), "body": _markup(_run_body(e, level=3))} for e in entries
    ]
    body = _env().get_template("compare.html.j2").render(
        title=title,
        intro=_markup(intro),
        names=names,
        side_rows=side_rows,
        extra_sections=[(h, _markup(b)) for h, b in extra_sections],
        figures=[_fig(path, captions.get(key, key), alt=key) for key, path in figures.items()],
        runs=runs,
    )
    return atomic_write(Path(out_dir) / "report.html", page(title, body))
