#!/usr/bin/env python3
"""Every analysis finishes (issue 26): the wall time of ``rtshield analyze`` on every
shipped system file, on every shipped worst-case scenario (``--scenario``), and on
the system files the issue named as running without end.

    python bench/bench_analyze.py [--repeat 1] [--write]

Each row is one whole ``rtshield analyze`` process (start-up, imports, the
analysis, the printed table), best of ``--repeat``, with its exit status
(0 schedulable, 1 not, 3 a busy window past the analysis' limit: not analysed,
docs/analysis.md §1 "Bounded analysis") and the line that decides it. The
pathological files are written to a temporary directory:

* ``long_busy_period``: a deadline beyond the period and a busy period of about
  10^9 jobs of the interferer (a = 999 999 999 ns every second above b);
* ``huge_blocking``: a blocking term of 10^6 s on a 10 ms task (the start value
  is past the deadline: a miss at job 1, without a step);
* ``utilization_one``: utilization exactly 1 and a busy window that does not end
  within the job limit (every step adds one job);
* ``window_past_2e62``: a blocking term of 2^62 ns with a deadline beyond it (the
  time limit);
* ``own_jobs_near_limit``: a release jitter of 10^7 periods, so that the task's own
  busy window holds more of its jobs than the limit.

``--write`` replaces this benchmark's section of bench/RESULTS.md (machine, load
before and after, commit). Needs ``rtshield`` on PATH (an install, or tools/dev.sh
and the venv's bin with PYTHONPATH=python).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_simpy import commit, load, machine, write_section  # noqa: E402  (bench/ is not a package)

SECTION = "## Every analysis finishes (issue 26)"

#: (name, system file text): the issue's pathological cases and their neighbours.
PATHOLOGICAL = {
    "long_busy_period": (
        '[system]\nname = "long"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "999999999ns"\nperiod = "1s"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1s"\nperiod = "2000000000s"\n'
        'deadline = "1000000000s"\npriority = 1\n'
    ),
    "huge_blocking": (
        '[system]\nname = "block"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "1us"\nperiod = "10us"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1us"\nperiod = "10ms"\nblocking = "1000000s"\n'
        "priority = 1\n"
    ),
    "utilization_one": (
        '[system]\nname = "full"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "999999ns"\nperiod = "1ms"\npriority = 2\n'
        '[[task]]\nname = "c"\nwcet = "200us"\nperiod = "200s"\ndeadline = "1000000000s"\n'
        "priority = 1\n"
    ),
    "window_past_2e62": (
        '[system]\nname = "far"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "1ns"\nperiod = "2ns"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1ns"\nperiod = "10ns"\nblocking = "4611686018427387904ns"\n'
        'deadline = "9000000000000000000ns"\npriority = 1\n'
    ),
    "own_jobs_near_limit": (
        '[system]\nname = "jitter"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "1ns"\nperiod = "10ns"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1ns"\nperiod = "10ns"\njitter = "10000000ns"\n'
        'deadline = "1s"\npriority = 1\n'
    ),
}


def cases(tmp: Path) -> list[tuple[str, list[str]]]:
    """(what the row shows, the arguments of ``rtshield analyze``)."""
    out = []
    for name, text in PATHOLOGICAL.items():
        p = tmp / f"{name}.toml"
        p.write_text(text)
        out.append((f"issue 26: `{name}`", [str(p)]))
    for p in sorted((REPO / "scenarios" / "analysis").glob("*.toml")):
        out.append((f"`scenarios/analysis/{p.name}`", [str(p)]))
    for p in sorted((REPO / "scenarios" / "worstcase").glob("*.toml")):
        out.append((f"`scenarios/worstcase/{p.name}` --scenario", [str(p), "--scenario"]))
    return out


def deciding_line(stdout: str, stderr: str) -> str:
    """The line that says the verdict (``schedulable: ...``), else the error's."""
    for line in stdout.splitlines():
        if line.startswith("schedulable:"):
            return line.strip()
    err = stderr.strip().splitlines()
    return err[-1] if err else "-"


def run(args: list[str], repeat: int) -> tuple[float, int, str]:
    best, rc, line = None, 0, ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(["rtshield", "analyze", *args], capture_output=True, text=True,
                           timeout=600)
        wall = time.perf_counter() - t0
        best = wall if best is None else min(best, wall)
        rc, line = p.returncode, deciding_line(p.stdout, p.stderr)
    return best, rc, line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs of each (best of)")
    ap.add_argument("--write", action="store_true", help="rewrite the section of bench/RESULTS.md")
    a = ap.parse_args(argv)
    load_before = load()
    rows, worst = [], 0.0
    with tempfile.TemporaryDirectory(prefix="rtshield-bench-analyze-") as tmp:
        for what, args in cases(Path(tmp)):
            wall, rc, line = run(args, a.repeat)
            worst = max(worst, wall)
            rows.append(f"| {what} | {wall:.2f} s | {rc} | {line.replace('|', '/')} |")
            print(rows[-1], flush=True)
    text = [
        SECTION,
        "",
        f"`python bench/bench_analyze.py --repeat {a.repeat}`: the whole `rtshield analyze`"
        " process (start-up, imports, analysis, table) on the issue's pathological system"
        " files, every shipped system file and every shipped worst-case scenario; exit"
        " status 0 schedulable, 1 not, 3 not analysed (docs/analysis.md §1, \"Bounded"
        " analysis\").",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()};"
        f" commit `{commit()}`.",
        f"Load before: `{load_before}`; after: `{load()}`.",
        "",
        "| file | wall | exit | verdict |",
        "|---|---:|---:|---|",
        *rows,
        "",
        f"Longest: {worst:.2f} s.",
        "",
    ]
    out = "\n".join(text)
    print(out)
    if a.write:
        print(f"wrote {write_section(SECTION, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
