"""``rtshield sweep SCENARIO.toml --set KEY=v1,v2,… --out DIR``: a parameter grid on Dask."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Annotated

from rtshield.clitools import Jobs, Out, ScenarioFile, Seed, opt, set_option
from rtshield.commands.compare import print_table
from rtshield.errors import UsageError, point_failure
from rtshield.progress import ProgressBar
from rtshield.sweep.limits import MAX_KEPT_RUNS, MAX_POINTS, MAX_SHOWN
from rtshield.tables import fmt_value
from rtshield.tables import print_table as _print_table
from rtshield.tomlfile import read_toml_text

HELP = (
    "Run SCENARIO once per point of a parameter grid, in parallel on Dask: a local "
    "cluster of one worker process per core (or --jobs N), or your cluster with "
    "--scheduler. Each --set KEY=v1,v2,… is one axis (a single value is a fixed override); "
    "KEY is SECTION.KEY (driver.queue) or, for an entry of [[flows]], [[tasks]] or "
    "[[sources]], SECTION.NAME.KEY (flows.syn.peak). The grid is their product, made one "
    f"point at a time. At most {MAX_POINTS} points: the grid is counted (the product of the "
    "axes' lengths) before any point is built. Every point's results stream into one "
    "table, DIR/sweep.csv (in grid order, as points finish) and DIR/sweep.parquet: the "
    "swept values, whether the critical task met every deadline, its worst response time, "
    "margin and lateness, and the key numbers. Also DIR/safe_region.json (where the safe "
    "region ends along each axis), DIR/sweep.png and DIR/report.html, which shows the "
    f"extremes and the boundary's points (every point of a grid of at most {MAX_SHOWN}), "
    "each with its own folder DIR/runs/NAME/ (every point's with --keep-runs). Re-running "
    "into the same DIR skips every point whose row is there for the same scenario (a failed "
    "or interrupted sweep keeps its finished points beside DIR for that, and DIR as it was). "
    "Every point is validated before anything runs."
)


#: ``--set`` of sweep: one axis of the grid.
Axes = set_option(
    "one axis of the grid, or a fixed override when given one value (repeatable)",
    metavar="KEY=V1,V2,…",
)


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
    keep_runs: Annotated[bool, opt(
        "--keep-runs", "write every point's own folder DIR/runs/NAME/ (summary, time "
        f"series, report) as it finishes, not only the shown points' (at most "
        f"{MAX_KEPT_RUNS} points)")] = False,
    run_figures: Annotated[bool, opt(
        "--run-figures", "also draw the own figures of each point that has a folder (the "
        "sweep's report needs only its own)")] = False,
    seed: Seed = None,
) -> None:
    ...


def handle(args) -> int:
    # what the sweep runs and writes with: imported here, not by `rtshield sweep --help`
    from rtshield import sweep
    from rtshield.outputs import check_out_dir, prepare_out_dir, recorded_on_failure
    from rtshield.runner import finish_jobs

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
    if args.scheduler is not None and not args.scheduler.strip():
        raise UsageError("--scheduler: empty address (e.g. tcp://HOST:8786)")
    # through the input door: each way the path can fail named, at once
    data, text = read_toml_text(args.scenario)
    grid = sweep.make_grid(args.set)  # counted before a point is built
    n = len(grid)
    if args.keep_runs and n > MAX_KEPT_RUNS:
        raise UsageError(
            f"--keep-runs: the grid has {n} points; every point's folder is kept for at most "
            f"{MAX_KEPT_RUNS} (leave --keep-runs out: every point's numbers are in sweep.csv)"
        )
    check_out_dir(args.out)
    base = (data, text, str(args.scenario))
    bar = ProgressBar(
        "sweep",
        phases=[
            ("validating", max(1, n // 20), "points checked"),
            ("simulating", n, "points done"),
            ("the shown points", max(1, n // 50), "folders"),
            ("tables, figure and report", 1),
        ],
    )
    with bar:
        sweep.validate(grid, base, bar)
        # finished points stay in the staging folder for the next sweep if this one fails
        out = prepare_out_dir(args.out, resumable=True)
        with recorded_on_failure(out):  # a failed command removes nothing
            bar.phase("simulating")
            sw = sweep.run_sweep(
                grid,
                base,
                out,
                workers=args.jobs or os.cpu_count() or 1,
                scheduler=args.scheduler,
                keep_runs=args.keep_runs,
                figures=args.run_figures,
                bar=bar,
            )
            if sw.failed:  # every other point's row is in sweep.csv by now
                raise point_failure("sweep", *sw.failed[0])
            bar.phase("tables, figure and report")
            report = _write_sweep(args, sw, out)
        bar.finish()
    finish_jobs(out, sw.shown)
    _print_results(sw, out)
    print(f"report: {report}")
    return 0


def _print_results(sw, out: Path) -> None:
    """The terminal's summary: the shown points, the counts, the safe region."""
    import numpy as np

    from rtshield import sweep

    axes = sw.grid.axes
    n = len(sw.grid)
    rows = [
        {**{a.key: sw.grid[i][a.key] for a in axes},
         **sweep.answer(o.entry.summary, o.entry.scenario.critical.period_ns / 1e3),
         "misses": (o.entry.summary.get("critical") or {}).get("misses")}
        for i, o in zip(sw.shown_index, sw.shown, strict=True)
    ]
    every = len(sw.shown) == n
    _print_table(
        [a.key for a in axes] + [h for h, _, _ in ANSWER_CELLS],
        [[r[a.key] for a in axes] + [_cell(r.get(c), kind) for _, c, kind in ANSWER_CELLS]
         for r in rows],
        title="per point: did the critical task meet every deadline?" if every else
        "the points the report shows (the extremes and the safe region's boundary; "
        "every point is in sweep.csv)",
        keys=len(axes),  # a table split to fit the terminal repeats the swept values
    )
    if len(sw.shown) <= 8:
        print()
        print_table(sw.shown)
    safe = sw.cols["safe"]
    print(
        f"{n} points: {int(np.sum(safe == 1))} safe, {int(np.sum(safe == 0))} not safe"
        + (f", {n - sw.rows} failed" if sw.rows < n else "")
        + f"; every point in {out / 'sweep.csv'} and sweep.parquet"
    )
    print()
    if sw.bounds:
        shown = sw.bounds[:MAX_PRINTED_LINES]
        _print_table(
            ["axis", "other settings", "safe region"],
            [[b["axis"], ", ".join(f"{k} = {v}" for k, v in b["others"].items()) or "—",
              b["verdict"]] for b in shown],
            title="safe region (the critical task meets every deadline)",
            left=(1, 2),
        )
        if len(sw.bounds) > len(shown):
            print(f"… and {len(sw.bounds) - len(shown)} more lines in {out / 'safe_region.json'}")
    else:
        print("safe region: undefined (no point ended a critical cycle)")
    if sw.resumed:
        print(f"{sw.resumed} of {n} points were already in {out / 'sweep.csv'} and not run again")


#: The most lines of the safe region printed (all are in safe_region.json and the report).
MAX_PRINTED_LINES = 20


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
    for b in bounds[:MAX_HTML_LINES]:
        where = ", ".join(f"{k} = {v}" for k, v in b["others"].items()) or "—"
        rows.append(
            f"<tr><td>{html.escape(b['axis'])}</td><td>{html.escape(where)}</td>"
            f"<td>{html.escape(b['verdict'])}</td></tr>"
        )
    more = (
        f"<p>… and {len(bounds) - MAX_HTML_LINES} more lines in safe_region.json.</p>"
        if len(bounds) > MAX_HTML_LINES else ""
    )
    return (
        "<p>Safe: the critical task met every deadline (no miss, at least one cycle ended). "
        "Along each swept axis, for each setting of the others:</p>"
        "<table><tr><th>axis</th><th>other settings</th><th>safe region</th></tr>"
        + "".join(rows)
        + "</table>" + more
    )


#: The most lines of the safe region in the report's table.
MAX_HTML_LINES = 200


def _write_sweep(args, sw, out: Path):
    """safe_region.json, the figure and the report (sweep.csv and sweep.parquet are written)."""
    from rtshield import sweep
    from rtshield.runner import compare, late_output

    axes = sw.grid.axes
    n = len(sw.grid)
    sweep.write_safe_region(out, sw.bounds)
    fig = late_output(
        out,
        "sweep figure",
        "sweep.csv, sweep.parquet and safe_region.json are",
        sweep.write_figure,
        out,
        axes,
        sw.cols,
    )
    shown = (
        "" if len(sw.shown) == n else
        f" The report shows {len(sw.shown)} of them (the extremes and the safe region's "
        "boundary); every point's numbers are in sweep.csv and sweep.parquet."
    )
    intro = (
        f"Sweep of {html.escape(args.scenario)} over "
        + "; ".join(html.escape(f"{a.key} ∈ {{{', '.join(a.values)}}}") for a in axes[:4])
        + (" …" if len(axes) > 4 else "")
        + f": {n} points.{html.escape(shown)}"
    )
    return compare(
        sw.shown,
        out,
        "rtshield sweep",
        intro,
        extra_figures={
            "sweep": (fig, f"Key numbers against {axes[0].key}, one line per other setting")
        },
        extra_sections=[("Safe region", _safe_region_html(sw.bounds))],
    )
