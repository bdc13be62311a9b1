"""``rtshield demo --out DIR [--study NAME]``: reproduce the papers' studies in one report.

Without ``--study`` every study runs: Danicki et al. into DIR itself (its
comparative report, ``comparison.json`` and ``runs/``, as ``--study danicki``
writes them), Behnke et al.'s software approach into ``DIR/behnke_software/``,
and ``DIR/report.html`` becomes one page with a table of contents and every
study's figures and claims table.
"""

from __future__ import annotations

import argparse
import html
import time
from pathlib import Path

from rtshield.commands.compare import add_set_option, run_and_report
from rtshield.errors import UsageError
from rtshield.outputs import OUT_HELP
from rtshield.studies import STUDIES

#: Where ``rtshield demo`` (all studies) writes the Behnke software study, inside DIR.
BEHNKE_SOFTWARE_DIR = "behnke_software"

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


def study_files(name: str = "danicki2021") -> list[Path]:
    """The study's scenario files, in the paper's order (others after, sorted)."""
    d = study_dir(name)
    files = {p.stem: p for p in d.glob("*.toml")}
    ordered = [files.pop(n) for n in DANICKI_ORDER if n in files]
    return ordered + [files[k] for k in sorted(files)]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="reproduce the papers' studies (Danicki et al., Behnke et al.): one report",
        description=(
            "Run the studies and write one report DIR/report.html with a table of contents. "
            "danicki: the eight configurations of Danicki et al. (EdgeSys 2021) §3 — the "
            "FreeRTOS scheduler with equal and with unequal priorities, Burst, Hysteresis, "
            "Budget and Queue Mitigation with queues of 100, 500 and 750 (each run's outputs "
            "under DIR/runs/). behnke-software: Behnke et al.'s software approach, §6 "
            "Experiments 1-3 (Figures 9-11) on the Zynq-7000 preset (its files under "
            f"DIR/{BEHNKE_SOFTWARE_DIR}/, or in DIR with --study behnke-software). Each study "
            "ends with its claims table: the paper's value, the simulated one, a verdict."
        ),
        epilog="example: rtshield demo --out demo-report; "
        "rtshield demo --study behnke-software --out behnke",
    )
    p.add_argument("--out", metavar="DIR", required=True, help=OUT_HELP)
    p.add_argument(
        "--study",
        choices=list(STUDIES),
        default=None,
        help="run one study only (default: all of them)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=2,
        metavar="N",
        help="scenarios run at the same time (default 2)",
    )
    add_set_option(p)
    p.set_defaults(handler=handle)


def claims_section(outcomes) -> list[tuple[str, str]]:
    """The report section that sets each claim of §3 beside the simulated value."""
    from rtshield.studies import danicki2021

    runs = {
        o.out_dir.name: danicki2021.from_outcome(o.entry.summary, o.timeseries) for o in outcomes
    }
    verdicts = danicki2021.evaluate(runs)
    n_ok = sum(v.holds is True for v in verdicts)
    n_run = sum(v.holds is not None for v in verdicts)
    print(f"demo: {n_ok} of {n_run} claims of Danicki et al. §3 hold (docs/validation.md)")
    return [("Claims of Danicki et al. §3 against this run", danicki2021.verdicts_html(verdicts))]


def _danicki(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    files = study_files()
    rc = run_and_report(
        files,
        args.out,
        args.jobs,
        "Danicki et al. (EdgeSys 2021) §3, reproduced by rtshield",
        INTRO,
        args.set,
        label="demo",
        sections=claims_section,
    )
    print(f"demo: {len(files)} configurations in {time.perf_counter() - t0:.1f} s wall")
    return rc


def _behnke_software(args: argparse.Namespace, out: Path):
    """Run the Behnke software study into ``out``; returns (report, body, verdicts)."""
    from rtshield.scenario import parse_overrides
    from rtshield.studies import behnke_software

    if args.jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
    plan = behnke_software.Plan(overrides=parse_overrides(list(args.set)) or {})
    report, body, verdicts, wall = behnke_software.run_and_write(out, plan, jobs=args.jobs)
    n_ok = sum(v.holds is True for v in verdicts)
    n_run = sum(v.holds is not None for v in verdicts)
    n = len(behnke_software.points(plan))
    print(f"demo: {n_ok} of {n_run} claims of Behnke et al. §6 hold (docs/validation.md)")
    print(f"demo: behnke-software, {n} runs in {wall:.1f} s wall; report: {report}")
    return report, body, verdicts


def _body_of(page: str) -> str:
    """The body of a report page written by rtshield.report (without its closing note)."""
    start = page.find("<body>")
    end = page.rfind('<p class="note">Written by rtshield')
    if start < 0 or end < 0:
        return ""
    return page[start + len("<body>") : end]


def _combined(out: Path, danicki_body: str, behnke_body: str, behnke_verdicts) -> Path:
    """DIR/report.html: a table of contents, then every study."""
    from rtshield.outputs import atomic_write
    from rtshield.report import _page

    ok = sum(v.holds is True for v in behnke_verdicts)
    run = sum(v.holds is not None for v in behnke_verdicts)
    toc = [
        '<li><a href="#danicki">' + html.escape(STUDIES["danicki"]) + "</a> "
        '(<a href="#claims-danicki">claims</a>; each configuration\'s own report under '
        "<code>runs/</code>)</li>",
        '<li><a href="#behnke-software">' + html.escape(STUDIES["behnke-software"]) + "</a> "
        f"({ok} of {run} claims hold; its files in <code>{BEHNKE_SOFTWARE_DIR}/</code>, "
        f'<a href="{BEHNKE_SOFTWARE_DIR}/report.html">own report</a>)</li>',
    ]
    danicki_body = danicki_body.replace(
        "<h2>Claims of Danicki et al.", '<h2 id="claims-danicki">Claims of Danicki et al.', 1
    )
    body = (
        "<h1>rtshield demo: the papers' studies, simulated</h1>"
        '<p class="meta">Every study runs the published experiment on the simulated device '
        "and sets each claim of the paper beside the simulated value with a verdict; "
        "docs/validation.md explains the claims that do not hold.</p>"
        "<h2>Contents</h2><ol>" + "".join(toc) + "</ol>"
        '<section id="danicki">' + danicki_body + "</section><hr>"
        '<section id="behnke-software">' + behnke_body + "</section>"
    )
    return atomic_write(out / "report.html", _page("rtshield demo: the papers' studies", body))


def handle(args: argparse.Namespace) -> int:
    if args.study == "danicki":
        return _danicki(args)
    if args.study == "behnke-software":
        _behnke_software(args, Path(args.out))
        return 0
    from rtshield.outputs import finish_out_dir, record_outputs

    t0 = time.perf_counter()
    rc = _danicki(args)
    if rc:
        return rc
    out = Path(args.out)
    danicki_body = _body_of((out / "report.html").read_text(encoding="utf-8"))
    _, behnke_body, verdicts = _behnke_software(args, out / BEHNKE_SOFTWARE_DIR)
    try:
        report = _combined(out, danicki_body, behnke_body, verdicts)
    except BaseException:
        record_outputs(out, dirs=[BEHNKE_SOFTWARE_DIR])
        raise
    finish_out_dir(out, dirs=[BEHNKE_SOFTWARE_DIR])
    print(f"demo: {len(STUDIES)} studies in {time.perf_counter() - t0:.1f} s wall; "
          f"report: {report}")
    return 0
