"""``rtshield run SCENARIO --out DIR``: simulate one scenario and write its results."""

from __future__ import annotations

import logging
import sys
from contextlib import nullcontext
from typing import Annotated

from rtshield.clitools import Out, ScenarioFile, Seed, no_cyclic_gc, opt, set_option

HELP = (
    "Simulate one scenario file (schema: docs/scenarios.md) on the device model, "
    "print its key numbers, and write into DIR: summary.json, timeseries.csv, "
    "timeseries.parquet, packets.png, critical.png, cycle_time.png, latency.png (when "
    "packets were delivered) and report.html. "
    "A malformed scenario is rejected with one line naming the key (exit 2) before "
    "anything runs or is written."
)


#: ``--set`` of run: one setting of the file.
SetOne = set_option(
    "override one setting of the file, e.g. --set driver.queue=750 "
    "--set scenario.duration=10s (repeatable)"
)


EPILOG = (
    "\b\nexample: rtshield run scenarios/danicki2021/queue_500.toml --out out/q500\n"
    "         rtshield run scenarios/examples/constant_flood.toml --seed 7 --out out/seed7"
)


def options(
    scenario: ScenarioFile,
    out: Out,
    set: SetOne = [],  # noqa: B006 - typer reads the default, it is never mutated
    no_figures: Annotated[bool, opt(
        "--no-figures", "write the numbers and the report without the PNG figures (faster; "
        "matplotlib is not loaded)")] = False,
    seed: Seed = None,
) -> None:
    ...


log = logging.getLogger(__name__)


def handle(args) -> int:
    # one run: the libraries it writes with, its figures; the figures' processes are
    # forked first (before any thread) and import matplotlib while this one simulates;
    # what a run writes with is imported here, not by `rtshield run --help`
    from rtshield.runner import figure_workers

    with no_cyclic_gc(), figure_workers() if not args.no_figures else nullcontext() as pool:
        return _run(args, pool)


def _run(args, pool) -> int:
    from rtshield.outputs import finish_out_dir, prepare_out_dir, recorded_on_failure
    from rtshield.progress import ProgressBar
    from rtshield.report import setup_rows
    from rtshield.runner import run_one
    from rtshield.scenario import load_scenario, parse_overrides
    from rtshield.tables import key_metrics, print_table

    scenario = load_scenario(
        args.scenario, parse_overrides(args.set) or None, overrides_origin="--set"
    )
    log.debug("%s: %s, seed %d", args.scenario, scenario.name, scenario.seed)
    out = prepare_out_dir(args.out)
    log.debug("writing into %s", out)
    # the simulation reports seconds simulated; at its end the bar moves on to the
    # figures and the report (run_one writes them)
    bar = ProgressBar(
        f"run {scenario.name}",
        phases=[
            ("simulating", 4, "s simulated"),
            ("writing the report" if args.no_figures else "drawing figures, writing the report", 1),
        ],
        enabled=False if args.quiet else None,
    )
    with bar:
        with recorded_on_failure(out):  # a failed run removes nothing
            outcome = run_one(
                scenario, out, progress=bar, figures=not args.no_figures, pool=pool
            )
        bar.finish()
    finish_out_dir(out)
    if not args.quiet:
        print(f"{scenario.name}: {scenario.description}".rstrip(": "))
        print_table(["", scenario.name],
                    [*setup_rows([scenario]), *key_metrics(outcome.entry.summary)])
        print(
            f"results: {out}/ (report: {out / 'report.html'}), {outcome.wall_s:.1f} s wall",
            file=sys.stdout,
        )
    return 0
