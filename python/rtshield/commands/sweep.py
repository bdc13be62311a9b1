"""``rtshield sweep SCENARIO.toml --set KEY=v1,v2,… --out DIR``: a parameter grid on Dask."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Annotated

from rtshield import sweep
from rtshield.clitools import Jobs, Out, ScenarioFile, Seed, opt, set_option
from rtshield.commands.compare import print_table
from rtshield.errors import UsageError
from rtshield.outputs import recorded_on_failure
from rtshield.progress import ProgressBar
from rtshield.runner import compare, finish_jobs, late_output
from rtshield.tables import fmt_value
from rtshield.tables import print_table as _print_table
from rtshield.tomlfile import read_toml_text

MAX_POINTS = sweep.MAX_POINTS
#: Above this many points the comparative figures (one panel or line per
#: point) are not drawn: the sweep's own figure summarises the grid.
MAX_COMPARE_FIGURE_POINTS = 12


HELP = (
    "Run SCENARIO once per point of a parameter grid, in parallel on Dask: a local "
    "cluster of one worker process per core (or --jobs N), or your cluster with "
    "--scheduler. Each --set KEY=v1,v2,… is one axis (a single value is a fixed override); "
    "KEY is SECTION.KEY (driver.queue) or, for an entry of [[flows]], [[tasks]] or "
    "[[sources]], SECTION.NAME.KEY (flows.syn.peak). The grid is their product. "
    "Writes DIR/sweep.csv and DIR/sweep.json (one row per point: the swept values, "
    "whether the critical task met every deadline, its worst response time, margin "
    "and lateness, and the key numbers), DIR/safe_region.json (where the safe region "
    "ends along each axis), DIR/sweep.png, DIR/report.html, and each point's own "
    "outputs under DIR/runs/NAME/, written as points finish. Re-running into the same "
    "DIR skips every point whose results are there for the same scenario. Every point "
    "is validated before anything runs. "
    f"At most {MAX_POINTS} points: the grid is counted (the product of the axes' "
    "lengths) before any point is built."
)


#: ``--set`` of sweep: one axis of the grid.
Axes = set_option(
    "one axis of the grid, or a fixed override when given one value (repeatable)",
    metavar="KEY=V1,V2,…",
)


SHORT_HELP = "run one scenario over a grid of parameter values (on Dask)"
EPILOG = (
    "\b\nexample: rtshield sweep scenarios/danicki2021/burst.toml "
    "--set mitigation.capacity=300,600,1200,2400\n"
    "         --set flows.syn.peak=50000pps,150000pps --out out/burst-capacity"
)


def options(
    scenario: ScenarioFile,
    out: Out,
    set: Axes = [],  # noqa: B006 - typer reads the default, it is never mutated
    jobs: Jobs = None,
    scheduler: Annotated[str | None, opt(
        "--scheduler", "run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (its "
        "workers need rtshield installed; they send results back, no shared folder "
        "needed)", "ADDRESS")] = None,
    run_figures: Annotated[bool, opt(
        "--run-figures", "also draw each point's own figures (the sweep's report needs "
        "only its own)")] = False,
    seed: Seed = None,
) -> None:
    ...


def handle(args) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
    if args.scheduler is not None and not args.scheduler.strip():
        raise UsageError("--scheduler: empty address (e.g. tcp://HOST:8786)")
    # through the input door: each way the path can fail named, at once
    data, text = read_toml_text(args.scenario)
    axes, points = sweep.expand(args.set)  # counted before a point is built
    labels = [sweep.point_label(pt, axes) for pt in points]
    scenarios = []
    for pt, label in zip(points, labels, strict=True):
        try:
            scenarios.append(sweep.point_scenario(data, text, str(args.scenario), pt))
        except UsageError as e:
            raise UsageError(f"{e} (in point {label})") from None
    bar = ProgressBar(
        "sweep",
        phases=[("simulating", len(points), "points done"), ("tables, figure and report", 1)],
    )
    out = Path(args.out)
    with bar:
        outcomes, resumed = sweep.run_points(
            scenarios,
            labels,
            points,
            args.out,
            workers=args.jobs or os.cpu_count() or 1,
            scheduler=args.scheduler,
            figures=args.run_figures,
            on_done=lambda d, n, _o: bar(d, n),
        )
        with recorded_on_failure(out):  # a failed command removes nothing
            bar.phase("tables, figure and report")
            report, rows, bounds = _write_sweep(args, axes, points, scenarios, outcomes, out)
        bar.finish()
    finish_jobs(out, outcomes)
    _print_table(
        [a.key for a in axes] + [h for h, _, _ in ANSWER_CELLS],
        [[r[a.key] for a in axes] + [_cell(r.get(c), kind) for _, c, kind in ANSWER_CELLS]
         for r in rows],
        title="per point: did the critical task meet every deadline?",
        keys=len(axes),  # a table split to fit the terminal repeats the swept values
    )
    if len(outcomes) <= 8:
        print()
        print_table(outcomes)
    print()
    if bounds:
        _print_table(
            ["axis", "other settings", "safe region"],
            [[b["axis"], ", ".join(f"{k} = {v}" for k, v in b["others"].items()) or "—",
              b["verdict"]] for b in bounds],
            title="safe region (the critical task meets every deadline)",
            left=(1, 2),
        )
    else:
        print("safe region: undefined (no point ended a critical cycle)")
    if resumed:
        print(f"{resumed} of {len(points)} points were already in {out} and not run again")
    print(f"report: {report}")
    return 0


#: The answer columns of the terminal table: (heading with unit, sweep.csv column, format).
ANSWER_CELLS = (
    ("safe", "safe", "verdict"),
    ("worst response (µs)", "worst_response_us", "num"),
    ("margin (µs)", "margin_us", "num"),
    ("worst lateness", "lateness_max_pct", "pct"),
    ("misses", "misses", "count"),
)


def _cell(v, kind: str) -> str:
    if kind == "verdict":
        return {True: "yes", False: "NO"}.get(v, "—")
    return fmt_value(v, kind)


def _safe_region_html(bounds) -> str:
    if not bounds:
        return "<p>No point ended a critical cycle: the safe region is undefined.</p>"
    rows = []
    for b in bounds:
        where = ", ".join(f"{k} = {v}" for k, v in b["others"].items()) or "—"
        rows.append(
            f"<tr><td>{html.escape(b['axis'])}</td><td>{html.escape(where)}</td>"
            f"<td>{html.escape(b['verdict'])}</td></tr>"
        )
    return (
        "<p>Safe: the critical task met every deadline (no miss, at least one cycle ended). "
        "Along each swept axis, for each setting of the others:</p>"
        "<table><tr><th>axis</th><th>other settings</th><th>safe region</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _write_sweep(args, axes, points, scenarios, outcomes, out: Path):
    """sweep.csv, sweep.json, safe_region.json, the figure and the report."""
    periods = [sc.critical.period_ns / 1e3 for sc in scenarios]
    rows = sweep.sweep_rows(axes, points, [o.entry.summary for o in outcomes], periods)
    bounds = sweep.boundaries(axes, rows)
    sweep.write_tables(out, rows, bounds)
    fig = late_output(
        out,
        "sweep figure",
        "sweep.csv, sweep.json and every point's results are",
        sweep.write_figure,
        out,
        axes,
        rows,
    )
    intro = (
        f"Sweep of {html.escape(args.scenario)} over "
        + "; ".join(html.escape(f"{a.key} ∈ {{{', '.join(a.values)}}}") for a in axes)
        + f": {len(points)} points."
    )
    report = compare(
        outcomes,
        out,
        "rtshield sweep",
        intro,
        extra_figures={
            "sweep": (fig, f"Key numbers against {axes[0].key}, one line per other setting")
        },
        extra_sections=[("Safe region", _safe_region_html(bounds))],
        figures=len(points) <= MAX_COMPARE_FIGURE_POINTS,
    )
    return report, rows, bounds
