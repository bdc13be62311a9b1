"""``rtshield demo --out DIR``: reproduce the Danicki et al. study in one report."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rtshield.commands.compare import add_set_option, run_and_report
from rtshield.errors import UsageError
from rtshield.outputs import OUT_HELP

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
        help="reproduce the Danicki et al. study: eight configurations, one report",
        description=(
            "Run the eight configurations of Danicki et al. (EdgeSys 2021) §3 — the FreeRTOS "
            "scheduler with equal and with unequal priorities, Burst, Hysteresis, Budget and "
            "Queue Mitigation with queues of 100, 500 and 750 — two at a time, and write one "
            "comparative report DIR/report.html (plus each run's outputs under DIR/runs/)."
        ),
        epilog="example: rtshield demo --out demo-report",
    )
    p.add_argument("--out", metavar="DIR", required=True, help=OUT_HELP)
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


def handle(args: argparse.Namespace) -> int:
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
