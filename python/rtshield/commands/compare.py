"""``rtshield compare A.toml B.toml … --out DIR``: several scenarios side by side."""

from __future__ import annotations

import html
from typing import Annotated

import typer

from rtshield.clitools import Jobs, Out, Seed, arg, set_option
from rtshield.errors import UsageError
from rtshield.progress import ProgressBar
from rtshield.tables import key_metrics
from rtshield.tables import print_table as _print_table

HELP = (
    "Run two or more scenario files (in parallel) and write DIR/report.html with a "
    "side-by-side table and figures with one panel per run, DIR/comparison.json "
    "(every summary), and each run's own outputs under DIR/runs/NAME/. All files are "
    "validated before anything runs."
)

#: ``--set`` of the verbs that run several scenarios (compare, demo).
Sets = set_option(
    "override one setting in every scenario, e.g. --set scenario.duration=10s (repeatable)"
)


EPILOG = (
    "\b\nexample: rtshield compare scenarios/danicki2021/queue_100.toml "
    "scenarios/danicki2021/queue_750.toml --out out/queues"
)


def options(
    scenarios: Annotated[list[str], arg("SCENARIO...", "scenario files (.toml)")],
    out: Out,
    jobs: Jobs = 2,
    title: Annotated[str, typer.Option("--title", help="report title")] = (
        "rtshield comparison"
    ),
    set: Sets = [],  # noqa: B006 - typer reads the default, it is never mutated
    seed: Seed = None,
) -> None:
    ...


def print_table(outcomes) -> None:
    """The runs side by side, one column per run: what protects each (mitigation,
    receive path, priorities), then its key numbers and each flow's delivery."""
    from rtshield.report import setup_rows

    names = [o.out_dir.name for o in outcomes]
    cols = [dict(key_metrics(o.entry.summary)) for o in outcomes]
    labels = list(dict.fromkeys(lbl for c in cols for lbl in c))
    rows = setup_rows([o.entry.scenario for o in outcomes])
    rows += [[lbl, *(c.get(lbl, "—") for c in cols)] for lbl in labels]
    _print_table(["", *names], rows)


def run_and_report(
    paths,
    out,
    jobs: int,
    title: str,
    intro: str,
    sets=(),
    label: str = "compare",
    sections=None,
    run_figures: bool = True,
) -> int:
    """Run ``paths``, write the comparative report, print the table.

    ``sections``, if given, maps the outcomes to extra ``(heading, html)``
    report sections (the demo's claims table). ``run_figures`` false: each
    run's own figures are not drawn (the comparative figures are).
    """
    if jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {jobs}")
    # what the runs need: imported when they run, not by `rtshield compare --help`
    from rtshield.outputs import recorded_on_failure
    from rtshield.runner import compare, finish_jobs, run_many
    from rtshield.scenario import parse_overrides

    overrides = parse_overrides(list(sets)) or None
    if overrides:
        intro += (
            " Overridden from the command line: " + ", ".join(html.escape(s) for s in sets) + "."
        )
    bar = ProgressBar(
        label,
        phases=[("simulating", len(paths), "runs done"), ("figures and report", 1)],
    )
    with bar:
        outcomes = run_many(
            paths,
            out,
            jobs=jobs,
            overrides=overrides,
            on_done=lambda d, n, _o: bar(d, n),
            figures=run_figures,
        )
        with recorded_on_failure(out):  # a failed command removes nothing
            bar.phase("figures and report")
            extra = sections(outcomes) if sections else ()
            report = compare(outcomes, out, title, intro, extra_sections=extra)
        bar.finish()
    finish_jobs(out, outcomes)
    print_table(outcomes)
    print(f"report: {report}")
    return 0


def handle(args) -> int:
    if len(args.scenarios) < 2:
        raise UsageError("compare: give at least two scenario files (use 'run' for one)")
    intro = "Scenarios: " + ", ".join(html.escape(str(p)) for p in args.scenarios)
    return run_and_report(args.scenarios, args.out, args.jobs, args.title, intro, args.set)
