"""rtshield against an independent SimPy model, side by side (issue 13, item 1).

Runs one Danicki scenario (default ``scenarios/danicki2021/queue_500.toml``)
three ways and compares them:

1. the SimPy model of ``bench/simpy_danicki.py`` (its own code, no rtshield
   import; ``pip install simpy``), timed once per repeat;
2. the engine alone: ``rtshield.runner.simulate(load_scenario(path))``, the
   scenario parsed once outside the timing, best of ``--repeat``;
3. the whole process a user waits for: ``rtshield run SCENARIO --out TMP``
   (Python start-up, imports, the run, every output file and figure), wall
   time of the subprocess, best of ``--repeat``.

It checks that the counters (offered, received, processed, dropped and each
drop reason, critical cycles and misses, line disables and enables) agree
within 1 % (exit status 1 when they do not), and prints both speed ratios.
With ``--write`` it replaces the "rtshield against SimPy" section of
``bench/RESULTS.md`` with the table, the machine, the load and the commit.

    python bench/bench_simpy.py [SCENARIO] [--repeat 3] [--simpy-repeat 1] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import simpy_danicki  # noqa: E402  (bench/ is not a package)

TOLERANCE = 0.01
SECTION = "## rtshield against SimPy (issue 13, item 1)"


def engine_counters(summary: dict) -> dict:
    tot, crit = summary["totals"], summary["critical"]
    mit = (summary.get("mitigation") or {}).get("counters", {})
    drops = tot["dropped"]
    return {
        "offered": tot["offered"],
        "received": tot["received"],
        "processed": tot["processed"],
        "delivered": tot["delivered"],
        "dropped": sum(drops.values()),
        "line_disabled": drops.get("line_disabled", 0),
        "irq_overrun": drops.get("irq_overrun", 0),
        "queue_full": drops.get("queue_full", 0),
        "irq_lost": tot["irq_lost"],
        "cycles": crit["cycles"],
        "misses": crit["misses"],
        "line_disables": mit.get("line_disables", 0),
        "line_enables": mit.get("line_enables", 0),
    }


def agree(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(abs(a), abs(b))


def run_simpy(path: Path, repeat: int) -> tuple[float, dict]:
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = simpy_danicki.simulate(path)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, res)
    return best


def run_engine(path: Path, repeat: int) -> tuple[float, dict]:
    from bench_sim import best_of

    from rtshield.scenario import load_scenario

    wall, result = best_of(load_scenario(path), repeat)
    return wall, result.summary()


def run_process(path: Path, repeat: int) -> float:
    exe = shutil.which("rtshield")
    cmd = [exe] if exe else [sys.executable, "-m", "rtshield"]
    best = None
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            subprocess.run(
                [*cmd, "run", str(path), "--out", os.path.join(d, "out")],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            wall = time.perf_counter() - t0
        best = wall if best is None else min(best, wall)
    return best


def machine() -> str:
    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def load() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def commit() -> str:
    try:
        c = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain"], capture_output=True, text=True
        ).stdout.strip()
        return f"{c}{' + uncommitted changes' if dirty else ''}" if c else "unknown"
    except OSError:
        return "unknown"


def write_section(section: str, text: str) -> Path:
    """Replace the section headed ``section`` of bench/RESULTS.md with ``text`` (or
    append it); the file's path."""
    res = HERE / "RESULTS.md"
    body = res.read_text()
    pat = re.compile(re.escape(section) + r".*?(?=^## |\Z)", re.S | re.M)
    body = (
        pat.sub(lambda _: text + "\n", body)
        if pat.search(body)
        else body.rstrip("\n") + "\n\n" + text
    )
    res.write_text(body)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "scenario", nargs="?", default=str(REPO / "scenarios" / "danicki2021" / "queue_500.toml")
    )
    ap.add_argument("--repeat", type=int, default=3, help="engine and process runs (best of)")
    ap.add_argument("--simpy-repeat", type=int, default=1, help="SimPy runs (best of)")
    ap.add_argument("--write", action="store_true", help="rewrite the section of bench/RESULTS.md")
    a = ap.parse_args(argv)
    path = Path(a.scenario).resolve()
    load_before = load()

    simpy_wall, sp = run_simpy(path, a.simpy_repeat)
    engine_wall, summary = run_engine(path, a.repeat)
    process_wall = run_process(path, a.repeat)
    load_after = load()
    en = engine_counters(summary)

    rows, ok = [], True
    for k, v in en.items():
        s = sp[k]
        good = agree(v, s)
        ok &= good
        diff = 0.0 if v == s else (s - v) / max(abs(v), abs(s)) * 100
        rows.append(f"| {k} | {v:,} | {s:,} | {diff:+.3f} % | {'yes' if good else '**no**'} |")
    import simpy

    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path

    text = [
        SECTION,
        "",
        f"`python bench/bench_simpy.py {shown} --repeat {a.repeat}` — the SimPy model"
        f" `bench/simpy_danicki.py` (SimPy {simpy.__version__},"
        " its own code, no rtshield import) against the engine alone"
        " (`rtshield.runner.simulate`, best of the repeats, scenario parsed outside the timing)"
        " and against the whole `rtshield run SCENARIO --out TMP` process (output to /dev/null)"
        " (start-up, imports, run, every output file and figure; best of the repeats).",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()};"
        f" commit `{commit()}`.",
        f"Load before: `{load_before}`; after: `{load_after}`.",
        "",
        "| run | wall | SimPy / this |",
        "|---|---:|---:|",
        f"| SimPy model | {simpy_wall:.2f} s | 1 |",
        f"| rtshield engine alone | {engine_wall:.3f} s | **{simpy_wall / engine_wall:.0f}×** |",
        f"| whole `rtshield run` process | {process_wall:.2f} s |"
        f" **{simpy_wall / process_wall:.0f}×** |",
        "",
        "Counters (tolerance 1 %):",
        "",
        "| counter | rtshield | SimPy | difference | agree |",
        "|---|---:|---:|---:|---|",
        *rows,
        "",
    ]
    out = "\n".join(text)
    print(out)
    if a.write:
        print(f"wrote {write_section(SECTION, out)}")
    if not ok:
        print("bench_simpy: counters differ by more than 1 %", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
