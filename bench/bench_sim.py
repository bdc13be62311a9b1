"""Benchmark of the simulator on the Danicki study (issue 4).

Runs ``queue_500.toml`` and ``scheduler_equal.toml`` (the engine only, no
output files) and, with ``--demo``, the whole ``rtshield demo`` as a user
runs it. Prints a Markdown table to paste into ``bench/RESULTS.md``:
wall time, simulated seconds, simulated packets per wall second, and engine
events per wall second when the engine reports an event count.

    python bench/bench_sim.py [--repeat 3] [--demo]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from rtshield.commands.demo import study_dir
from rtshield.runner import simulate
from rtshield.scenario import load_scenario

SCENARIOS = ("queue_500", "scheduler_equal")


def event_count(result) -> int | None:
    """The engine's event count, if it reports one (attribute or summary entry)."""
    for name in ("events", "event_count"):
        v = getattr(result, name, None)
        if isinstance(v, int):
            return v
    eng = getattr(result, "engine", None)
    if isinstance(eng, dict) and isinstance(eng.get("events"), int):
        return eng["events"]
    s = result.summary()
    for key in ("engine", "stats"):
        sub = s.get(key)
        if isinstance(sub, dict) and isinstance(sub.get("events"), int):
            return sub["events"]
    return None


def best_of(scn, repeat: int):
    """Simulate ``scn`` ``repeat`` times; (the best wall seconds, that run's result)."""
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = simulate(scn)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, result)
    assert best is not None
    return best


def bench_one(name: str, repeat: int) -> dict:
    path = study_dir() / f"{name}.toml"
    scn = load_scenario(path)
    wall, result = best_of(scn, repeat)
    s = result.summary()
    offered = s["totals"]["offered"]
    events = event_count(result)
    return {
        "name": name,
        "wall_s": wall,
        "sim_s": scn.duration_ns / 1e9,
        "packets": offered,
        "pkt_per_wall_s": offered / wall,
        "events": events,
        "events_per_wall_s": None if events is None else events / wall,
    }


def bench_demo() -> float:
    exe = shutil.which("rtshield")
    cmd = [exe] if exe else [sys.executable, "-m", "rtshield"]
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        subprocess.run(
            [*cmd, "demo", "--out", os.path.join(d, "demo")], check=True, stdout=subprocess.DEVNULL
        )
        return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per scenario (best is kept)")
    ap.add_argument("--demo", action="store_true", help="also time the whole `rtshield demo`")
    args = ap.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {platform.platform()}"
    )
    print()
    print(
        f"| scenario | simulated | wall (best of {args.repeat}) | packets | packets / wall s "
        "| events | events / wall s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in SCENARIOS:
        r = bench_one(name, args.repeat)
        ev = "—" if r["events"] is None else f"{r['events']:,}"
        evs = "—" if r["events_per_wall_s"] is None else f"{r['events_per_wall_s']:,.0f}"
        print(
            f"| {name} | {r['sim_s']:g} s | {r['wall_s']:.2f} s | {r['packets']:,} | "
            f"{r['pkt_per_wall_s']:,.0f} | {ev} | {evs} |"
        )
    if args.demo:
        print()
        print(
            f"`rtshield demo` (8 configurations, 2 processes, all outputs): "
            f"{bench_demo():.1f} s wall"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
