#!/usr/bin/env python3
"""Where a ``rtshield run`` process's time goes, step by step, in one process.

    python bench/start_phases.py [--repeat 3] [--figures] [--baseline OTHER/python]

Imports and does, in the order a ``rtshield run scenarios/danicki2021/
queue_500.toml`` does them, each step of the run: the command line's
libraries (typer, pydantic), the verb's module, the scenario's schema,
numpy, the engine's run, the numbers, the Parquet writer, the report; with
``--figures`` also matplotlib and each figure drawn to PNG bytes. Prints each
step's wall and CPU seconds (the median of ``--repeat`` fresh processes), then
Python's own start and the whole process, a profile of the start-up to read
beside ``bench/scale.py --only start``. Like that benchmark, it first compiles
the bytecode of the rtshield package it times, as an installation does.
Needs rtshield importable (``PYTHONPATH=python``).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
Q500 = REPO / "scenarios" / "danicki2021" / "queue_500.toml"


def _cpu(r: resource.struct_rusage) -> float:
    return r.ru_utime + r.ru_stime


def steps(figures: bool) -> list[tuple[str, float, float]]:
    """The steps of one run in this (fresh) process: (name, wall s, CPU s)."""
    import gc
    import tempfile

    gc.disable()  # as `rtshield run` runs (clitools.no_cyclic_gc), so that no step gets
    # a full collection of what the steps before it imported
    marks: list[tuple[str, float, float]] = []
    t = [time.perf_counter(), time.process_time()]

    def mark(name: str) -> None:
        w, c = time.perf_counter(), time.process_time()
        marks.append((name, w - t[0], c - t[1]))
        t[:] = [w, c]

    import typer
    import typer.main

    mark("import typer")
    import pydantic.main  # noqa: F401

    mark("import pydantic")
    import rtshield.commands.run  # noqa: F401

    mark("import the run verb (runner, report, outputs)")
    from rtshield import cli

    # as cli.main does first, before numpy is imported (an older checkout has no such step)
    getattr(cli, "single_threaded_blas", lambda: None)()
    args = ["run", str(Q500), "--out", "unused", "--quiet", "--no-figures"]
    cmd = typer.main.get_command(cli._app_for(args))
    cmd.make_context("rtshield", args)  # typer builds a pydantic TypeAdapter per option
    mark("the command line: build the verb's command, parse the arguments")
    import rtshield.schema.preset  # noqa: F401
    import rtshield.schema.scenario_file  # noqa: F401

    mark("import the scenario schema (pydantic models)")
    from rtshield.scenario import load_scenario

    scenario = load_scenario(Q500)
    mark("read and validate queue_500.toml")
    import numpy  # noqa: F401

    mark("import numpy")
    from rtshield import engine

    result = engine.simulate(scenario)
    mark("load the engine and simulate (32 s, 2.25 M packets)")
    from rtshield.outputs import prepare_out_dir, write_summary, write_timeseries

    out = prepare_out_dir(Path(tempfile.mkdtemp()) / "o")
    summary = result.summary()
    write_summary(out, summary)
    mark("summary.json")
    import pyarrow.parquet  # noqa: F401

    mark("import pyarrow.parquet")
    write_timeseries(out, result.timeseries)
    mark("timeseries.csv and .parquet")
    if figures:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401

        mark("import matplotlib")
        from rtshield.figures.run import run_figure_jobs, run_figure_png

        for name, args in run_figure_jobs(result, scenario.name, 1000.0):
            if run_figure_png(name, *args) is not None:
                mark(f"draw {name}.png")
    import jinja2  # noqa: F401

    mark("import jinja2")
    from rtshield.report import RunEntry, run_report

    run_report(out, RunEntry(scenario=scenario, summary=summary, figures={}))
    mark("report.html")
    return marks


def _child(figures: bool, pythonpath: str | None) -> tuple[list, float, float]:
    """One fresh child process's steps, its wall and CPU seconds (with its threads)."""
    cmd = [sys.executable, __file__, "--child", *(["--figures"] if figures else [])]
    env = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    wall = time.perf_counter() - t0
    return json.loads(out), wall, _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - _cpu(before)


def _paired(repeat: int, figures: bool, baseline: str) -> None:
    """This checkout's children and ``baseline``'s (another checkout's ``python/``) in
    turn, so that a drift of the machine's speed hits both alike: median CPU-s."""
    import rtshield

    now = str(Path(rtshield.__file__).resolve().parent.parent)
    trees = {"before": str(Path(baseline).resolve()), "now": now}
    for tree in trees.values():
        compileall.compile_dir(str(Path(tree) / "rtshield"), quiet=1)
    runs: dict[str, list] = {k: [] for k in trees}
    whole: dict[str, list[float]] = {k: [] for k in trees}
    for _ in range(repeat):
        for tag, tree in trees.items():
            steps_, _, cpu = _child(figures, tree)
            runs[tag].append(steps_)
            whole[tag].append(cpu)
    print("| step | before CPU s | now CPU s |\n|---|---:|---:|")

    def med(tag: str, f) -> float:
        return statistics.median(f(r) for r in runs[tag])

    for i, (name, _, _) in enumerate(runs["now"][0]):
        print(f"| {name} | {med('before', lambda r, i=i: r[i][2]):.3f} | "
              f"{med('now', lambda r, i=i: r[i][2]):.3f} |")
    print(f"| all steps | {med('before', lambda r: sum(s[2] for s in r)):.3f} | "
          f"{med('now', lambda r: sum(s[2] for s in r)):.3f} |")
    print(f"| the whole child process (CPU of the process and its threads) | "
          f"{statistics.median(whole['before']):.3f} | {statistics.median(whole['now']):.3f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--figures", action="store_true")
    ap.add_argument("--baseline", help="also time the rtshield of this python/ folder (another "
                    "checkout's), child by child in turn with this one; prints CPU-s only")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(steps(args.figures)))
        return 0
    if args.baseline:
        _paired(args.repeat, args.figures, args.baseline)
        return 0
    # as installed: rtshield's bytecode compiled, whatever PYTHONDONTWRITEBYTECODE says
    # (without, the child would compile every rtshield module it imports, every time)
    import rtshield

    compileall.compile_dir(str(Path(rtshield.__file__).parent), quiet=1)
    runs, starts, whole = [], [], []
    for _ in range(args.repeat):
        steps_, wall, cpu = _child(args.figures, None)
        runs.append(steps_)
        whole.append((wall, cpu))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        starts.append((time.perf_counter() - t0,
                       _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - _cpu(before)))
    print("| step | wall s | CPU s |\n|---|---|---|")
    for i, (name, _, _) in enumerate(runs[0]):
        w = statistics.median(r[i][1] for r in runs)
        c = statistics.median(r[i][2] for r in runs)
        print(f"| {name} | {w:.3f} | {c:.3f} |")
    tw = statistics.median(sum(s[1] for s in r) for r in runs)
    tc = statistics.median(sum(s[2] for s in r) for r in runs)
    print(f"| all steps (Python's own start not included) | {tw:.3f} | {tc:.3f} |")
    print(f"| Python's own start (`python -c pass`) | "
          f"{statistics.median(w for w, _ in starts):.3f} | "
          f"{statistics.median(c for _, c in starts):.3f} |")
    print(f"| the whole child process (start, steps, exit) | "
          f"{statistics.median(w for w, _ in whole):.3f} | "
          f"{statistics.median(c for _, c in whole):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
