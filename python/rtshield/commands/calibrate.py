"""``rtshield calibrate CALIBRATION.toml --out DIR``: search a model's unknown parameters."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

from rtshield import calibrate
from rtshield.calibrate.limits import MAX_BUDGET
from rtshield.clitools import Jobs, Out, arg, check_choice, opt
from rtshield.errors import UsageError
from rtshield.progress import ProgressBar
from rtshield.tables import print_table

HELP = (
    "Search the unknown parameters that CALIBRATION declares (costs, the critical task's "
    "work, the flood's peak, …, each within physical bounds) for the values that best "
    "match its objective: a study's published claims, or a board's per-second counters "
    "(CSV). A Latin hypercube, then coordinate refinement around the best point, or with "
    "--search tpe an adaptive search (optuna's TPE); deterministic for a given --seed. "
    "Points run on Dask: --jobs local workers, or your cluster with --scheduler. "
    "Writes DIR/points.csv (every point and "
    "objective), DIR/best.toml (the best point as snippets for a preset), "
    "DIR/tradeoff.png and DIR/report.md. Each point is recorded as it finishes: the same "
    "command run again (after Ctrl-C, a crash, a failure) reads the points recorded "
    "for DIR back instead of simulating them, and ends as an uninterrupted run. "
    "File format: docs/calibrate.md."
)


EPILOG = (
    "\b\nexample: rtshield calibrate scenarios/calibration/danicki2021.toml "
    "--budget 60 --out out/cal"
)


def options(
    calibration: Annotated[str, arg("CALIBRATION", "calibration file (.toml)")],
    out: Out,
    budget: Annotated[int | None, opt(
        "--budget", f"points to evaluate, 1 to {MAX_BUDGET} (checked before any "
        "point runs; default: the file's budget)", "N")] = None,
    seed: Annotated[int | None, opt(
        "--seed", "seed of the search (default: the file's seed)", "N")] = None,
    jobs: Jobs = 2,
    search: Annotated[str, opt(
        "--search", "lhs: a Latin hypercube, then coordinate refinement (default); tpe: "
        "optuna's tree-structured Parzen estimator, which proposes each batch of points "
        "from the scores so far", "lhs|tpe")] = "lhs",
    scheduler: Annotated[str | None, opt(
        "--scheduler", "run the points on an existing Dask cluster, e.g. "
        "tcp://10.0.0.5:8786 (its workers need rtshield installed, not the calibration's "
        "files)", "ADDRESS")] = None,
) -> None:
    check_choice(search, "--search", ("lhs", "tpe"))
    ...


def handle(args) -> int:
    from rtshield.outputs import finish_out_dir, prepare_out_dir, recorded_on_failure

    if args.jobs < 1:
        raise UsageError(f"--jobs: must be at least 1, got {args.jobs}")
    if args.budget is not None and not 1 <= args.budget <= MAX_BUDGET:
        raise UsageError(f"--budget: must be from 1 to {MAX_BUDGET}, got {args.budget}")
    if args.scheduler is not None and not args.scheduler.strip():
        raise UsageError("--scheduler: empty address (e.g. tcp://HOST:8786)")
    if args.seed is not None and not 0 <= args.seed < 2**63:
        raise UsageError(f"--seed: must be from 0 to 2^63-1, got {args.seed}")
    cal = calibrate.load_calibration(args.calibration)
    budget = cal.budget if args.budget is None else args.budget
    seed = cal.seed if args.seed is None else args.seed
    # before any point runs: the lock (a second writer is refused now, not after
    # the search) and the staging folder, moved into place at the end; a failed or
    # interrupted calibration keeps it, with the points it evaluated, for the next
    out = prepare_out_dir(args.out, resumable=True, kind="calibrate")
    bar = ProgressBar(
        "calibrate", phases=[("searching", 9, "points"), ("writing points, figure and report", 1)]
    )
    t0 = time.perf_counter()
    with bar, recorded_on_failure(out):  # a failed command removes nothing
        record = calibrate.PointRecord(out, cal, args.search, seed, budget)

        def progress(done: int, total: int) -> None:
            if record.resumed:
                bar.note(f"{record.resumed} resumed")
            bar(done, total)

        complete = False
        try:
            points = calibrate.search(
                cal,
                budget=budget,
                seed=seed,
                jobs=args.jobs,
                scheduler=args.scheduler,
                method=args.search,
                progress=progress,
                record=record,
            )
            complete = True
        finally:
            record.close(complete)  # every point that finished stays recorded
        wall = time.perf_counter() - t0
        best = calibrate.best_of(points)  # no finite score at all: one line, exit 2
        bar.phase("writing points, figure and report")
        files = calibrate.write_outputs(out, cal, points, seed, args.search)
        bar.finish()
    finish_out_dir(out)
    rows = [[q.key, q.text(v)] for q, v in zip(cal.params, best.values, strict=True)]
    print_table(["parameter", "best"], rows)
    what = (
        f"{best.score:g} of {len(cal.claims)} claims hold"
        if cal.objective == "claims"
        else f"mean relative RMS error {-best.score:.4f}"
    )
    simulated = len(points) - record.resumed
    worker = sum(r.wall_s for r in points) / max(1, simulated)
    print(
        f"best: point {best.index} of {len(points)} (first reached after {best.index + 1} "
        f"points): {what} ({wall:.1f} s with {args.jobs} job(s), {worker:.2f} s of worker "
        "time per simulated point)"
    )
    if record.resumed:
        print(
            f"{record.resumed} of {len(points)} points were already recorded for {out} "
            "and not simulated again"
        )
    for name in ("best", "points", "figure", "report"):
        print(f"{name}: {Path(files[name])}")
    return 0
