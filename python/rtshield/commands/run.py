"""``rtshield run SCENARIO --out DIR``: simulate one scenario and write its results."""

from __future__ import annotations

import argparse
import sys

from rtshield.outputs import OUT_HELP, finish_out_dir, prepare_out_dir, record_outputs
from rtshield.progress import ProgressBar
from rtshield.runner import run_one
from rtshield.scenario import load_scenario, parse_overrides
from rtshield.tables import key_metrics, text_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="simulate one scenario and write summary, time series, figures and a report",
        description=(
            "Simulate one scenario file (schema: docs/scenarios.md) on the device model, "
            "print its key numbers, and write into DIR: summary.json, timeseries.csv, "
            "timeseries.parquet, packets.png, critical.png, cycle_time.png, latency.png (when "
            "packets were delivered) and report.html. "
            "A malformed scenario is rejected with one line naming the key (exit 2) before "
            "anything runs or is written."
        ),
        epilog="example: rtshield run scenarios/danicki2021/queue_500.toml --out out/q500",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml)")
    p.add_argument("--out", metavar="DIR", required=True, help=OUT_HELP)
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override one setting of the file, e.g. --set driver.queue=750 "
        "--set scenario.duration=10s (repeatable)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    p.add_argument(
        "--no-figures",
        action="store_true",
        help="write the numbers and the report without the PNG figures (faster; "
        "matplotlib is not loaded)",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    scenario = load_scenario(
        args.scenario, parse_overrides(args.set) or None, overrides_origin="--set"
    )
    out = prepare_out_dir(args.out)
    bar = ProgressBar(scenario.name, enabled=False if args.quiet else None)
    try:
        outcome = run_one(scenario, out, progress=bar, figures=not args.no_figures)
    except BaseException:
        record_outputs(out)  # a failed run removes nothing
        raise
    finally:
        bar.close()
    finish_out_dir(out)
    if not args.quiet:
        print(f"{scenario.name}: {scenario.description}".rstrip(": "))
        print(text_table(["", scenario.name], key_metrics(outcome.entry.summary)))
        print(
            f"results: {out}/ (report: {out / 'report.html'}), {outcome.wall_s:.1f} s wall",
            file=sys.stdout,
        )
    return 0
