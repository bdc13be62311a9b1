"""``rtshield sweep SCENARIO.toml --set SECTION.KEY=v1,v2,… --out DIR``: a parameter grid."""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from rtshield import sweep
from rtshield.commands.compare import print_table
from rtshield.errors import UsageError
from rtshield.outputs import OUT_HELP, record_outputs
from rtshield.progress import ProgressBar
from rtshield.runner import compare, finish_jobs, late_output, run_jobs
from rtshield.scenario import parse_overrides
from rtshield.tables import text_table
from rtshield.tomlfile import read_text

MAX_POINTS = 256


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run one scenario over a grid of parameter values",
        description=(
            "Run SCENARIO once per point of a parameter grid, in parallel. Each --set "
            "SECTION.KEY=v1,v2,… is one axis (a single value is a fixed override); the grid is "
            "their product. Writes DIR/sweep.csv and DIR/sweep.json (one row per point: the "
            "swept values and the key numbers), DIR/sweep.png (processed packets, deadline "
            "misses and worst lateness against the first axis), DIR/report.html, and each "
            "point's own outputs under DIR/runs/NAME/. Every point is validated before "
            "anything runs."
        ),
        epilog="example: rtshield sweep scenarios/danicki2021/burst.toml "
        "--set mitigation.capacity=300,600,1200,2400 --out out/burst-capacity",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=V1,V2,…",
        help="one axis of the grid, or a fixed override when given one value (repeatable)",
    )
    p.add_argument("--out", metavar="DIR", required=True, help=OUT_HELP)
    p.add_argument(
        "--jobs", type=int, default=2, metavar="N", help="points run at the same time (default 2)"
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
    if not Path(args.scenario).exists():
        raise UsageError(f"{args.scenario}: no such scenario file")
    read_text(args.scenario)  # a special or oversized file: one line, at once
    axes, points = sweep.expand(args.set)
    if len(points) > MAX_POINTS:
        raise UsageError(
            f"--set: the grid has {len(points)} points; at most {MAX_POINTS} "
            "(sweep fewer values, or split the sweep)"
        )
    specs = []
    for pt in points:
        overrides = parse_overrides([f"{k}={v}" for k, v in pt.items()])
        specs.append((args.scenario, overrides, sweep.point_label(pt, axes)))
    bar = ProgressBar("sweep", unit="points done")
    try:
        outcomes = run_jobs(specs, args.out, jobs=args.jobs, on_done=lambda d, n, _o: bar(d, n))
    finally:
        bar.close()
    out = Path(args.out)
    try:
        report, rows = _write_sweep(args, axes, points, outcomes, out)
    except BaseException:
        record_outputs(out)  # a failed command removes nothing
        raise
    finish_jobs(out, outcomes)
    cols = [a.key for a in axes] + ["processed", "misses", "lateness_bin_max_pct"]
    print(text_table(cols, [[str(r[c]) for c in cols] for r in rows]))
    if len(outcomes) <= 8:
        print_table(outcomes)
    print(f"report: {report}")
    return 0


def _write_sweep(args, axes, points, outcomes, out: Path):
    """sweep.csv, sweep.json, the sweep figure and the report; returns (report, rows)."""
    rows = sweep.sweep_rows(axes, points, [o.entry.summary for o in outcomes])
    sweep.write_tables(out, rows)
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
    )
    return report, rows
