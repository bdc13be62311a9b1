"""``rtshield demo --out DIR [--study NAME]``: reproduce the papers' studies in one report.

Without ``--study`` every study runs: Danicki et al. into DIR itself (its
comparative report, ``comparison.json`` and ``runs/``, as ``--study danicki``
writes them), Behnke et al.'s software approach into ``DIR/behnke_software/``, the
hardware approach into ``DIR/behnke_hardware/``,
and ``DIR/report.html`` becomes one page with a table of contents and every
study's figures and claims table.
"""

from __future__ import annotations

import argparse
import html
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from rtshield.clitools import Jobs, Out, Seed, check_choice, opt
from rtshield.commands.compare import Sets, run_and_report
from rtshield.errors import UsageError
from rtshield.studies import STUDIES

log = logging.getLogger(__name__)

#: Where ``rtshield demo`` (all studies) writes the Behnke software study, inside DIR.
BEHNKE_SOFTWARE_DIR = "behnke_software"
#: Where ``rtshield demo`` (all studies) writes the Regehr study, inside DIR.
REGEHR_DIR = "regehr2005"
BEHNKE_HARDWARE_DIR = "behnke_hardware"

#: The study's configurations in the order of the paper's Section 3.
DANICKI_ORDER = (
    "scheduler_equal",
    "scheduler_critical_high",
    "burst",
    "hysteresis",
    "budget",
    "queue_100",
    "queue_500",
    "queue_750",
)

INTRO = (
    "Danicki, Haug, Behnke, Mädje, Thamsen: <i>Detecting and Mitigating Network Packet "
    "Overloads on Real-Time Devices in IoT Systems</i> (EdgeSys 2021), Section 3, simulated. "
    "A critical task computes a fixed amount of work every 10 ms on the core that also takes "
    "one interrupt per packet and runs the network driver, while a pyramid-shaped flood rises "
    "to 150 000 packets/s and back. Eight configurations: the FreeRTOS scheduler alone with "
    "equal priorities and with the critical task above the driver, then Burst, Hysteresis, "
    "Budget and Queue Mitigation (queues of 100, 500 and 750 packets). Each panel shows what "
    "the paper's Figures 6–8 show: packets sent, received and processed per second, and the "
    "critical task's completed cycles and accumulated lateness per second."
)


def study_dir(name: str = "danicki2021") -> Path:
    """The folder of a shipped study: inside the installed package, else the source tree."""
    here = Path(__file__).resolve().parent.parent
    for cand in (here / "scenarios" / name, here.parent.parent / "scenarios" / name):
        if cand.is_dir() and any(cand.glob("*.toml")):
            return cand
    raise UsageError(f"demo: the study scenarios/{name} is not installed with this package")


def study_files(name: str = "danicki2021", folder: Path | None = None) -> list[Path]:
    """The study's scenario files (in ``folder``, default the shipped study), in the
    paper's order (others after, sorted)."""
    d = folder if folder is not None else study_dir(name)
    files = {p.stem: p for p in d.glob("*.toml")}
    ordered = [files.pop(n) for n in DANICKI_ORDER if n in files]
    return ordered + [files[k] for k in sorted(files)]


HELP = (
    "Run the studies and write one report DIR/report.html with a table of contents. "
    "danicki: the eight configurations of Danicki et al. (EdgeSys 2021) §3 — the "
    "FreeRTOS scheduler with equal and with unequal priorities, Burst, Hysteresis, "
    "Budget and Queue Mitigation with queues of 100, 500 and 750 (each run's outputs "
    "under DIR/runs/). behnke-software: Behnke et al.'s software approach, §6 "
    "Experiments 1-3 (Figures 9-11) on the Zynq-7000 preset (its files under "
    f"DIR/{BEHNKE_SOFTWARE_DIR}/, or in DIR with --study behnke-software). "
    "behnke-hardware: Behnke et al.'s hardware approach, §8 (Figures 14-16): four MODBUS/TCP "
    "workers behind a multiqueue NIC with per-queue interrupt moderation on the ESP32 (its "
    f"files under DIR/{BEHNKE_HARDWARE_DIR}/, or in DIR with --study behnke-hardware). regehr: "
    "Regehr & Duongsaa's interrupt schedulers, Figures 1-2, §6.4 and the Ethernut of §7 "
    f"(its files under DIR/{REGEHR_DIR}/, or in DIR with --study regehr). Each study "
    "ends with its claims table: the paper's value, the simulated one, a verdict."
)


EPILOG = (
    "\b\nexample: rtshield demo --out demo-report\n"
    "         rtshield demo --study behnke-software --out behnke\n"
    "         cp -r scenarios/danicki2021 mine  # then edit mine/*.toml\n"
    "         rtshield demo --study danicki --scenarios mine --out mine-report"
)


def options(
    out: Out,
    study: Annotated[str | None, opt(
        "--study", "run one study only (default: all of them)", "|".join(STUDIES))] = None,
    scenarios: Annotated[str | None, opt(
        "--scenarios", "run on the scenario files in DIR instead of the shipped ones: with "
        "--study, a copy of that study's folder under scenarios/, edited; without, a copy "
        "of scenarios/ (one folder per study). docs/cli.md lists the files each study "
        "needs", "DIR")] = None,
    jobs: Jobs = 2,
    run_figures: Annotated[bool, opt(
        "--run-figures", "also draw each configuration's own figures (the report needs "
        "only the comparative ones)")] = False,
    set: Sets = [],  # noqa: B006 - typer reads the default, it is never mutated
    seed: Seed = None,
) -> None:
    if study is not None:
        check_choice(study, "--study", tuple(STUDIES))


def claims_section(outcomes, counts: list | None = None) -> list[tuple[str, str]]:
    """The report section that sets each claim of §3 beside the simulated value
    (``counts``, when given, receives ``(claims that hold, claims checked)``)."""
    from rtshield.studies import danicki2021

    runs = {
        o.out_dir.name: danicki2021.from_outcome(o.entry.summary, o.timeseries) for o in outcomes
    }
    verdicts = danicki2021.evaluate(runs)
    n_ok = sum(v.holds is True for v in verdicts)
    n_run = sum(v.holds is not None for v in verdicts)
    print(f"demo: {n_ok} of {n_run} claims of Danicki et al. §3 hold (docs/validation.md)")
    if counts is not None:
        counts.append((n_ok, n_run))
    return [("Claims of Danicki et al. §3 against this run", danicki2021.verdicts_html(verdicts))]


def _danicki(args: argparse.Namespace, out: Path, counts: list | None = None) -> int:
    t0 = time.perf_counter()
    folder = _folder(args, "danicki")
    files = study_files(folder=folder)
    intro = INTRO
    if folder is not None:
        intro += (
            f" The scenario files are the user's, from <code>{html.escape(str(folder))}</code>"
            " (not the shipped ones)."
        )
    rc = run_and_report(
        files,
        out,
        args.jobs,
        "Danicki et al. (EdgeSys 2021) §3, reproduced by rtshield",
        intro,
        args.set,
        label="demo",
        sections=lambda outcomes: claims_section(outcomes, counts),
        run_figures=getattr(args, "run_figures", False),
    )
    print(f"demo: {len(files)} configurations in {time.perf_counter() - t0:.1f} s wall")
    return rc


def _plan_study(module: str, name: str, paper: str):
    """The runner of a plan-driven study module (:mod:`rtshield.studies.behnke_software`,
    ``behnke_hardware``, ``regehr2005``): :func:`rtshield.studies.common.run_and_write`."""

    def run(args: argparse.Namespace, out: Path) -> StudyRun:
        import importlib

        from rtshield.scenario import parse_overrides
        from rtshield.studies import common

        study = importlib.import_module(f"rtshield.studies.{module}")
        if args.jobs < 1:
            raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
        plan = study.Plan(overrides=parse_overrides(list(args.set)) or {})
        folder = _folder(args, name)
        report, body, verdicts, wall = common.run_and_write(
            study, out, plan, jobs=args.jobs, folder=folder, bar_label=f"demo {name}"
        )
        if folder is not None:
            body = _name_folder(report, body, study.study_dir().name, Path(folder))
        n_ok = sum(v.holds is True for v in verdicts)
        n_run = sum(v.holds is not None for v in verdicts)
        print(f"demo: {n_ok} of {n_run} claims of {paper} hold (docs/validation.md)")
        print(f"demo: {name}, {len(study.points(plan, folder))} runs in {wall:.1f} s wall; "
              f"report: {report}")
        return StudyRun(body, list(verdicts))

    return run


def _name_folder(report: Path, body: str, shipped: str, folder: Path) -> str:
    """The study's report names its scenario folder (``scenarios/NAME/``): with
    ``--scenarios`` it is the user's, so the report names that one instead (and
    the output folder's manifest records the report as rewritten)."""
    from rtshield.outputs import atomic_write, record_outputs

    was, now = f"<code>scenarios/{shipped}/", f"<code>{html.escape(str(folder))}/"
    page = report.read_text(encoding="utf-8")
    if was in page:
        atomic_write(report, page.replace(was, now, 1))
        record_outputs(report.parent)
    return body.replace(was, now, 1)


#: ``{study name: module}`` of the studies run from a plan of points.
PLAN_MODULES = {
    "behnke-software": "behnke_software",
    "behnke-hardware": "behnke_hardware",
    "regehr": "regehr2005",
}


def required_files(study: str) -> list[str]:
    """The files ``--scenarios DIR`` must hold for ``study``: the ones the shipped
    study reads (its scenario files; the hardware study's captures are named by
    its ``device.toml`` and checked when it is read)."""
    if study == "danicki":
        return [f"{n}.toml" for n in DANICKI_ORDER]
    import importlib

    mod = importlib.import_module(f"rtshield.studies.{PLAN_MODULES[study]}")
    shipped = mod.study_dir()
    return sorted(
        {Path(p.path).relative_to(shipped).as_posix() for p in mod.points(mod.Plan(), shipped)}
    )


def check_scenarios(study: str, folder: str | Path) -> Path:
    """``--scenarios DIR`` for ``study``, checked before anything runs or is written:
    a folder holding every file of :func:`required_files`, each a valid scenario.
    Anything wrong is one :class:`UsageError` line naming the folder or the file."""
    from rtshield.inputs import input_folder, resolve_input
    from rtshield.scenario import load_scenario

    d = Path(folder)
    need = required_files(study)
    try:
        input_folder(d, "folder of scenarios")
    except UsageError as e:
        raise UsageError(
            f"--scenarios: {e} (the {study} study needs a folder holding {', '.join(need)})"
        ) from None
    for name in need:
        if not os.path.lexists(d / name):
            raise UsageError(
                f"--scenarios: {d / name}: missing (the {study} study needs "
                f"{', '.join(need)})"
            )
        try:
            resolve_input(d / name, "scenario file")
        except UsageError as e:
            raise UsageError(f"--scenarios: {e}") from None
    for name in need:
        load_scenario(d / name)  # one line naming the file and the key
        log.debug("--scenarios: %s is a valid scenario", d / name)
    if study in PLAN_MODULES:
        import importlib

        mod = importlib.import_module(f"rtshield.studies.{PLAN_MODULES[study]}")
        try:
            mod.points(mod.Plan(), d)
        except KeyError as e:  # a section or entry the study edits is gone
            raise UsageError(
                f"--scenarios: {d}: the {study} study reads {e.args[0]!r}, which the "
                "edited files no longer have"
            ) from None
    return d


def _body_of(page: str) -> str:
    """The body of a report page written by rtshield.report (without its closing note)."""
    start = page.find("<body>")
    end = page.rfind('<p class="note">Written by rtshield')
    if start < 0 or end < 0:
        return ""
    return page[start + len("<body>") : end]


@dataclass(frozen=True)
class StudyRun:
    """What one study leaves for the combined report."""

    body: str  #: the study's report body (HTML, without page frame)
    verdicts: list  #: its claim verdicts (objects with ``holds``: True/False/None)
    toc_note: str = ""  #: extra HTML after the study's entry in the table of contents
    claims: tuple[int, int] | None = None  #: (claims that hold, claims checked), when not verdicts

    def claim_counts(self) -> tuple[int, int] | None:
        if self.verdicts:
            return (sum(v.holds is True for v in self.verdicts),
                    sum(v.holds is not None for v in self.verdicts))
        return self.claims


def _run_danicki(args: argparse.Namespace, out: Path) -> StudyRun:
    counts: list[tuple[int, int]] = []
    rc = _danicki(args, out, counts)
    if rc:
        raise SystemExit(rc)
    body = _body_of((out / "report.html").read_text(encoding="utf-8"))
    body = body.replace(
        "<h2>Claims of Danicki et al.", '<h2 id="claims-danicki">Claims of Danicki et al.', 1
    )
    return StudyRun(
        body,
        [],
        ' (<a href="#claims-danicki">claims</a>; each configuration\'s own report under '
        "<code>runs/</code>)",
        claims=counts[0] if counts else None,
    )


#: ``{study name: (runner, folder inside DIR when every study runs)}``, in report
#: order. The first study writes into DIR itself (its report becomes the first
#: section of DIR/report.html); each other one into its own folder. A runner takes
#: the parsed arguments and its output folder and returns a :class:`StudyRun`.
RUNNERS: dict[str, tuple[Callable[[argparse.Namespace, Path], StudyRun], str]] = {
    "danicki": (_run_danicki, ""),
    "behnke-software": (
        _plan_study(PLAN_MODULES["behnke-software"], "behnke-software", "Behnke et al. §6"),
        BEHNKE_SOFTWARE_DIR,
    ),
    "behnke-hardware": (
        _plan_study(PLAN_MODULES["behnke-hardware"], "behnke-hardware", "Behnke et al. §8"),
        BEHNKE_HARDWARE_DIR,
    ),
    "regehr": (_plan_study(PLAN_MODULES["regehr"], "regehr", "Regehr & Duongsaa"), REGEHR_DIR),
}


def _combined(out: Path, runs: dict[str, StudyRun]) -> Path:
    """DIR/report.html: a table of contents, then every study."""
    from rtshield.outputs import atomic_write
    from rtshield.report import _page

    toc, sections = [], []
    for name, run in runs.items():
        sub = RUNNERS[name][1]
        note = run.toc_note
        if run.verdicts:
            ok = sum(v.holds is True for v in run.verdicts)
            checked = sum(v.holds is not None for v in run.verdicts)
            note += f" ({ok} of {checked} claims hold"
            if sub:
                note += (
                    f"; its files in <code>{html.escape(sub)}/</code>, "
                    f'<a href="{html.escape(sub)}/report.html">own report</a>'
                )
            note += ")"
        toc.append(f'<li><a href="#{name}">' + html.escape(STUDIES[name]) + "</a>" + note + "</li>")
        sections.append(f'<section id="{name}">' + run.body + "</section>")
    body = (
        "<h1>rtshield demo: the papers' studies, simulated</h1>"
        '<p class="meta">Every study runs the published experiment on the simulated device '
        "and sets each claim of the paper beside the simulated value with a verdict; "
        "docs/validation.md explains the claims that do not hold.</p>"
        "<h2>Contents</h2><ol>" + "".join(toc) + "</ol>" + "<hr>".join(sections)
    )
    return atomic_write(out / "report.html", _page("rtshield demo: the papers' studies", body))


def shipped_folder(study: str) -> str:
    """The name of ``study``'s folder under ``scenarios/`` (``danicki2021``, …)."""
    if study == "danicki":
        return study_dir().name
    import importlib

    return importlib.import_module(f"rtshield.studies.{PLAN_MODULES[study]}").study_dir().name


def _folders(args: argparse.Namespace) -> dict[str, Path]:
    """``--scenarios DIR``, checked: with ``--study``, DIR is that study's folder;
    without, DIR holds one folder per study under its shipped name (a copy of
    ``scenarios/``)."""
    given = getattr(args, "scenarios", None)
    if given is None:
        return {}
    if args.study is not None:
        return {args.study: check_scenarios(args.study, given)}
    if not Path(given).is_dir():
        raise UsageError(
            f"--scenarios: {given}: no such folder (without --study it holds one folder per "
            f"study: {', '.join(shipped_folder(n) for n in RUNNERS)})"
        )
    return {n: check_scenarios(n, Path(given) / shipped_folder(n)) for n in RUNNERS}


def _folder(args: argparse.Namespace, study: str) -> Path | None:
    """The user's scenario folder for ``study`` (None: the shipped one)."""
    return (getattr(args, "folders", None) or {}).get(study)


def handle(args: argparse.Namespace) -> int:
    args.folders = _folders(args)
    from rtshield.progress import ProgressBar

    names = [args.study] if args.study is not None else list(RUNNERS)
    phases: list[tuple[str, float]] = []
    for name in names:
        if name in PLAN_MODULES:  # the study's own bar covers its runs; then it writes
            phases += [(f"{name}: simulating", 4), (f"{name}: figures and report", 1)]
        else:  # the comparative run's bar covers its runs, figures and report
            phases.append((name, 5))
    if args.study is None:
        phases.append(("combined report", 0.5))
    bar = ProgressBar("demo", phases=phases, enabled=False if args.quiet else None)
    with bar:
        rc = _handle(args, bar)
        if rc == 0:
            bar.finish()
    return rc


def _handle(args: argparse.Namespace, bar) -> int:
    if args.study is not None:
        runner = RUNNERS[args.study][0]
        from rtshield.outputs import finish_out_dir, held, prepare_out_dir

        # the study writes into the staging folder of DIR; it is moved into place
        # once the study's report (and its folder's name in it) is written
        out = prepare_out_dir(args.out)
        with held(out):
            rc = _danicki(args, out) if args.study == "danicki" else (runner(args, out), 0)[1]
        finish_out_dir(out)
        return rc
    from rtshield.outputs import finish_out_dir, held, prepare_out_dir, record_outputs

    t0 = time.perf_counter()
    # every study writes into the staging folder of DIR (nested), moved into place
    # at the end: one lock, all or nothing
    out = prepare_out_dir(args.out)
    subdirs = [sub for _, sub in RUNNERS.values() if sub]
    runs: dict[str, StudyRun] = {}
    try:
        with held(out):  # moved into place once, when every study is written
            for name, (runner, sub) in RUNNERS.items():
                bar.phase(f"{name}: simulating" if name in PLAN_MODULES else name)
                runs[name] = runner(args, out / sub if sub else out)
            bar.phase("combined report")
            report = _combined(out, runs)
    except BaseException:
        if runs:
            record_outputs(out, dirs=subdirs)
        raise
    finish_out_dir(out, dirs=subdirs)
    from rtshield.tables import print_table

    rows = []
    for name, run in runs.items():
        c = run.claim_counts()
        sub = RUNNERS[name][1]
        own = f"{out / sub / 'report.html'}" if sub else f"{out / 'report.html'} (first section)"
        rows.append([name, "—" if c is None else f"{c[0]} of {c[1]}", own])
    print_table(["study", "claims that hold", "its own report"], rows,
                title="demo: the papers' claims against the simulation", left=(2,))
    print(f"demo: {len(runs)} studies in {time.perf_counter() - t0:.1f} s wall; report: {report}")
    return 0
