"""What the plan-driven studies share: points, the worker pool, claims and verdicts, the
files a study writes and the HTML pieces of its report.

:mod:`rtshield.studies.behnke_software`, :mod:`~rtshield.studies.behnke_hardware` and
:mod:`~rtshield.studies.regehr2005` each define a ``Plan``, the ``points`` it runs, the
tables of their summaries (``Results``), the paper's ``CLAIMS`` (each with the reason
it does not hold here, where it does not; ``evaluate``, ``verdicts_html``) and what
their report shows (``HEADING``, ``INTRO``, ``CLAIMS_OF``, ``FIGURES``, ``csv_tables``,
``TITLE``); the scaffolding around them, running a study and writing its files and
report, lives here once.
:mod:`~rtshield.studies.danicki2021` shares the verdicts and their evaluation.
"""

from __future__ import annotations

import base64
import concurrent.futures as cf
import csv
import html
import io
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

from rtshield.errors import UsageError
from rtshield.figures import png_bytes
from rtshield.outputs import (
    atomic_write,
    finish_out_dir,
    format_summary_json,
    prepare_out_dir,
    recorded_on_failure,
)
from rtshield.progress import ProgressBar
from rtshield.report import _page
from rtshield.runner import _ignore_sigint
from rtshield.scenario import load_scenario

R = TypeVar("R")

# ------------------------------------------------------------------ scenarios


def study_dir(name: str, marker: str = "*.toml") -> Path:
    """``scenarios/NAME``: inside the installed package, else the source tree; the folder
    must hold a file matching ``marker``."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "scenarios" / name, here.parent.parent / "scenarios" / name):
        if cand.is_dir() and any(cand.glob(marker)):
            return cand

    raise UsageError(f"demo: the study scenarios/{name} is not installed with this package")


def merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, tables merged one level deep (copies)."""
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in base.items()}
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = dict(v) if isinstance(v, Mapping) else v
    return out


# ------------------------------------------------------------------ points


@dataclass(frozen=True)
class Point:
    """One run: a name, a scenario file, the overrides that make it this point."""

    name: str
    path: str
    overrides: dict[str, Any]
    series: bool = False  #: keep the per-second time series (long runs: scheduled first)


def run_points(
    pts: Sequence[Point],
    run_point: Callable[[Point], tuple[str, dict[str, Any]]],
    jobs: int = 2,
    on_done: Callable[[int, int], None] | None = None,
    chunksize: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every point with ``run_point`` (a module-level function), ``jobs`` at a time in
    worker processes; ``{name: summary}`` in the order of ``pts``.

    Every point's scenario is validated in this process first, so a bad override fails
    before anything runs. Points with ``series`` (the long ones) start first, so they do
    not finish last alone. ``chunksize`` None: big chunks, for points that take
    milliseconds each and whose round trips would dominate.
    """

    for pt in pts:
        load_scenario(pt.path, pt.overrides, overrides_origin="--set")
    res: dict[str, dict[str, Any]] = {}
    if jobs <= 1 or len(pts) <= 1:
        for i, pt in enumerate(pts):
            name, summ = run_point(pt)
            res[name] = summ
            if on_done:
                on_done(i + 1, len(pts))
        return res
    order = sorted(pts, key=lambda p: not p.series)
    chunk = chunksize or max(1, len(order) // (jobs * 4))
    with cf.ProcessPoolExecutor(max_workers=jobs, initializer=_ignore_sigint) as pool:
        for i, (name, summ) in enumerate(pool.map(run_point, order, chunksize=chunk)):
            res[name] = summ
            if on_done:
                on_done(i + 1, len(order))
    return {pt.name: res[pt.name] for pt in pts}


# ------------------------------------------------------------------ claims


@dataclass(frozen=True)
class Claim(Generic[R]):
    """One of a paper's claims and the check that compares it with a study's results."""

    key: str
    text: str  #: the paper's claim, with its section
    paper: str  #: the paper's value
    check: Callable[[R], tuple[bool, str]]
    #: why the claim does not hold in the simulator, where it does not (docs/validation.md)
    why_not: str | None = None


@dataclass(frozen=True)
class Verdict:
    """One claim checked against a run; ``holds`` is None when what it needs did not run."""

    claim: Any  #: the study's claim (a :class:`Claim`, or Danicki's own)
    holds: bool | None
    value: str


#: The errors of a check that finds too few points to decide (a shortened plan).
TOO_FEW: tuple[type[Exception], ...] = (ValueError, ZeroDivisionError)


def evaluate(claims: Sequence[Any], results: Any, needs: str = "",
             too_few: tuple[type[Exception], ...] = TOO_FEW) -> list[Verdict]:
    """Check every claim against ``results``. A KeyError (a point or run not in
    ``results``) makes the verdict "not run here (needs ``needs``NAME)"; an error of
    ``too_few``, "not enough points"."""
    out = []
    for c in claims:
        try:
            ok, value = c.check(results)
        except KeyError as e:
            out.append(Verdict(c, None, f"not run here (needs {needs}{e.args[0]})"))
            continue
        except too_few:
            out.append(Verdict(c, None, "not enough points in this run to check it"))
            continue
        out.append(Verdict(c, bool(ok), value))
    return out


def why_not(v: Verdict) -> str | None:
    """Why a claim does not hold (None unless it does not)."""
    return v.claim.why_not if v.holds is False else None


def verdicts_html(verdicts: Sequence[Verdict], authors: str) -> str:
    """The claims table of a study's report: claim, paper, simulated, verdict, why not."""
    mark = {True: ("ok", "holds"), False: ("no", "does not hold"), None: ("", "not run")}
    rows = []
    for v in verdicts:
        cls, word = mark[v.holds]
        cells = "".join(
            f"<td>{html.escape(x)}</td>" for x in (v.claim.text, v.claim.paper, v.value)
        )
        why = html.escape(why_not(v) or "")
        rows.append(f'<tr>{cells}<td class="{cls}">{word}</td><td>{why}</td></tr>')
    head = "".join(
        f"<th>{h}</th>" for h in (f"claim ({authors})", "paper", "simulated", "verdict", "why not")
    )
    n_ok = sum(v.holds is True for v in verdicts)
    n_run = sum(v.holds is not None for v in verdicts)
    return (
        f"<p>{n_ok} of the {n_run} claims checked here hold in this run "
        "(docs/validation.md).</p>"
        '<div class="tablewrap claims"><table><thead><tr>' + head + "</tr></thead><tbody>"
        + "".join(rows) + "</tbody></table></div>"
    )


# ------------------------------------------------------------------ report pieces


def body_head(level: int, title: str, intro: str, claims_of: str,
              claims_html: str) -> tuple[str, list[str]]:
    """The start of a study's report body, headings from ``level``: its title, its
    introduction and its claims table. Returns the tag of its sections' headings
    (``h2`` at level 1) and the parts (HTML)."""
    h1, h2 = f"h{level}", f"h{level + 1}"
    return h2, [
        f"<{h1}>{title}, reproduced by rtshield</{h1}>",
        f'<p class="meta">{intro}</p>',
        f"<{h2}>Claims of {claims_of} against this run</{h2}>",
        claims_html,
    ]



def png(fig) -> bytes:
    return png_bytes(fig)


def img(data: bytes, alt: str) -> str:
    return (
        f'<img alt="{html.escape(alt)}" '
        f'src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">'
    )


def figure_section(h2: str, title: str, figs: Mapping[str, bytes], key: str,
                   note: str = "") -> list[str]:
    """The start of a report section on figure ``key`` of ``figs``: its heading ``title``
    (tag ``h2``), the figure, and ``note`` (HTML) under it when given."""
    parts = [f"<{h2}>{title}</{h2}>", img(figs[key], key)]
    if note:
        parts.append(f'<p class="note">{note}</p>')
    return parts


def body_html(study: ModuleType, r: Any, verdicts: Sequence[Verdict],
              figs: Mapping[str, bytes], level: int = 1) -> str:
    """``study``'s report body, headings from ``level``: :func:`body_head` (its
    ``HEADING``, ``INTRO``, ``CLAIMS_OF`` and ``verdicts_html``), then a section for each
    of its ``FIGURES`` drawn (in ``figs``), with its note and the rest of the section
    from the results ``r``."""
    h2, parts = body_head(level, study.HEADING, study.INTRO, study.CLAIMS_OF,
                          study.verdicts_html(verdicts))
    for f in study.FIGURES:
        if f.key in figs:
            parts += figure_section(h2, f.title, figs, f.key, f.note)
            if f.more is not None:
                parts += f.more(r)
    return "\n".join(parts)


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in header)
    b = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows
    )
    return (
        f'<div class="tablewrap"><table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table></div>'
    )


# ------------------------------------------------------------------ the study's files


@dataclass(frozen=True)
class Figure:
    """A figure of a study and the section of its report that shows it."""

    key: str  #: its file stem (``KEY.png``) and alt text
    draw: Callable[[Any], Any]  #: the figure of the results
    applies: Callable[[Any], bool]  #: whether the results hold what it shows
    title: str  #: the section's heading
    note: str = ""  #: HTML under the figure
    more: Callable[[Any], list[str]] | None = None  #: the rest of the section (HTML)


def write_study(
    study: ModuleType, out_dir: str | Path, r: Any, verdicts: Sequence[Verdict]
) -> tuple[Path, str]:
    """Write ``study``'s files into ``out_dir``: ``points.json`` (``r.points``), one CSV
    per non-empty table of ``study.csv_tables(r)`` (``{file name: rows}``), ``claims.json``
    (with each failing claim's reason), the ``study.FIGURES`` that apply and
    ``report.html`` (:func:`body_html` under ``study.TITLE``). Returns (report path,
    report body)."""

    out = Path(out_dir)
    # Numbers first.
    atomic_write(out / "points.json", format_summary_json(r.points))
    for name, rows in study.csv_tables(r).items():
        if rows:
            atomic_write(out / name, csv_text(rows))
    claims = [
        {"key": v.claim.key, "claim": v.claim.text, "paper": v.claim.paper, "simulated": v.value,
         "holds": v.holds, "why_not": why_not(v)}
        for v in verdicts
    ]
    atomic_write(out / "claims.json", json.dumps(claims, indent=2, ensure_ascii=False) + "\n")
    figs: dict[str, bytes] = {}
    for f in study.FIGURES:
        if f.applies(r):
            figs[f.key] = png(f.draw(r))
            atomic_write(out / f"{f.key}.png", figs[f.key])
    text = body_html(study, r, verdicts, figs)
    report = atomic_write(out / "report.html", _page(study.TITLE, text))
    return report, text


def run_study(study: ModuleType, plan: Any = None, jobs: int = 2, progress=None,
              folder: Path | None = None) -> Any:
    """Run every point of ``study``'s ``plan`` (default: its full ``Plan()``), from the
    scenarios in ``folder`` (default: the shipped ones), on ``jobs`` processes; returns the
    study's ``Results``. ``progress(done, total)`` is called as points finish."""
    pts = study.points(plan or study.Plan(), folder)
    return study.Results.of(study.run_points(pts, jobs=jobs, on_done=progress))


def run_and_write(study: ModuleType, out_dir: str | Path, plan: Any = None, jobs: int = 2,
                  folder: Path | None = None, bar_label: str = "",
                  ) -> tuple[Path, str, list[Verdict], float]:
    """Run ``study`` (:func:`run_study`) under a progress bar named ``bar_label``, check its
    claims (``study.evaluate``) and write its report into ``out_dir`` (an rtshield output
    directory, :func:`write_study`); the files written so far are recorded when writing
    fails.

    Returns (report path, report body, verdicts, wall seconds).
    """

    t0 = time.perf_counter()
    out = prepare_out_dir(out_dir)
    bar = ProgressBar(bar_label, unit="runs done")
    try:
        r = run_study(study, plan, jobs, lambda d, n: bar(d, n), folder)
    finally:
        bar.close()
    verdicts = study.evaluate(r)
    with recorded_on_failure(out):
        report, body = write_study(study, out, r, verdicts)
    finish_out_dir(out)
    return report, body, verdicts, time.perf_counter() - t0
