#!/usr/bin/env python3
"""Issue 28's targets, measured as whole processes, into bench/RESULTS.md.

    python bench/scale.py [--only start,sweep] [--repeat 10] [--no-server]
                          [--points 10000] [--jobs 2,3] [--write]

* ``start``  the SimPy model of the Danicki device (bench/simpy_danicki.py) on
             ``queue_500`` once, and side by side in the same call the whole
             ``rtshield run scenarios/danicki2021/queue_500.toml`` process with
             its figures and with ``--no-figures``, and ``rtshield --help``,
             each ``--repeat`` times, in turn (median and spread), each in a
             process of its own, and beside them the floor: a process that only
             imports the installed libraries the run imports (found by
             ``-X importtime``), without figures and for the figure worker;
             then (unless ``--no-server``) the same three through a resident
             server (``rtshield server start`` in a runtime folder of its
             own, stopped at the end): the start, the first
             command of each after it, and ``--repeat`` of each, every one a
             whole client process;
* ``sweep``  a two-axis Danicki sweep of ``--points`` points (queue size ×
             peak rate of the pyramid, the full 32 s ``queue_500``) as one
             ``rtshield sweep`` process on a local Dask cluster of each
             ``--jobs`` worker count: wall time, points per second, and the
             peak memory of the client process and of the whole process tree
             (client, scheduler, workers; sampled every 0.2 s).

Each row says whether its target is met, or by how much it is not. The load
average before and after is recorded: on a shared machine a wall time is the
share of the CPUs the run got. ``--write`` replaces this script's sections
of bench/RESULTS.md (one for ``start``, one for ``sweep``). Times the rtshield
of this checkout's ``python/`` when it is built there (tools/dev.sh), else the
importable one, and says which; needs simpy and psutil (a dependency of Dask's
distributed).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
if str(REPO / "python") not in sys.path and not shutil.which("rtshield"):
    sys.path.insert(1, str(REPO / "python"))

SECTION = "## Issue 28: sweeps of any size (`bench/scale.py --only sweep`)"
SECTION_START = "## Issue 28: a run that starts at once (`bench/scale.py --only start`)"
Q500 = REPO / "scenarios" / "danicki2021" / "queue_500.toml"
CPUS = os.cpu_count() or 1


@functools.cache
def _package() -> str:
    """The folder holding the rtshield package this bench times: this checkout's
    ``python/`` when it holds a built package (the native library linked into it,
    as tools/dev.sh does), else whichever rtshield is importable (an installed
    one). Printed once, so a measurement says which code it timed."""
    own = REPO / "python"
    if (own / "rtshield" / "librtshield_native.so").exists():
        pkg = own
    else:
        import rtshield

        pkg = Path(rtshield.__file__).resolve().parent.parent
    print(f"bench/scale.py: timing the rtshield package in {pkg}", file=sys.stderr, flush=True)
    return str(pkg)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    pkg = _package()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg, env.get("PYTHONPATH", "")) if p)
    env["RTSHIELD_PROGRESS"] = "0"
    return env


def _cmd() -> list[str]:
    exe = shutil.which("rtshield")
    return [exe] if exe else [sys.executable, "-m", "rtshield"]


def loadavg() -> str:
    try:
        return ", ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _timed(args: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env or _env())
    return time.perf_counter() - t0


def _compile(folder: str) -> None:
    """Compile the bytecode of the rtshield package in ``folder`` (``python/`` of a
    checkout), as an installation does: a run from a checkout under
    ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module it imports
    anew (about a tenth of a run without figures)."""
    import compileall

    compileall.compile_dir(str(Path(folder) / "rtshield"), quiet=1)


def _libraries(args: list[str], env: dict[str, str]) -> list[str]:
    """The installed libraries' modules that the process ``args`` (and every process
    it forks) imports itself: the outermost module of each chain of imports that
    leaves Python's standard library and rtshield for an installed distribution,
    read from ``-X importtime``'s report (children before parents, two spaces a
    level). Importing exactly these in a process that does nothing else is what
    the command pays for its libraries before any work of its own."""
    import importlib.metadata

    owned = importlib.metadata.packages_distributions()
    p = subprocess.run(args, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows = [(len(m[1]) // 2, m[2]) for m in
            re.finditer(r"^import time:\s+\d+ \|\s+\d+ \| ( *)(\S+)$", p.stderr, re.M)]
    stack: list[tuple[int, bool]] = []
    found = set()
    for depth, name in reversed(rows):  # parents before their children
        while stack and stack[-1][0] >= depth:
            stack.pop()
        lib = name.split(".")[0] in owned and name.split(".")[0] != "rtshield"
        if lib and not (stack and stack[-1][1]):
            found.add(name)
        stack.append((depth, lib))
    return sorted(found)


def m_start(repeat: int, baseline: str | None = None, served: bool = True) -> dict:
    """The three start cases, each ``repeat`` times in turn, each a process of its own
    (``RTSHIELD_SERVER=off``); with ``baseline`` (another checkout's ``python/``
    folder, built), the same commands of that rtshield too, each right after this
    one's. With ``served``, then the same three through a resident server
    (``rtshield server start`` in a runtime folder of its own, stopped at the end):
    the start itself, the first command of each case after it, then ``repeat`` each,
    every one a whole client process."""
    import bench_simpy

    from rtshield.serverlink import PROCESS_DEFAULTS  # what a run sets before numpy

    simpy_s, _ = bench_simpy.run_simpy(Q500, 1)
    envs = {"": {**_env(), "RTSHIELD_SERVER": "off"}}
    if baseline:
        envs["before"] = {**_env(), "PYTHONPATH": str(Path(baseline).resolve())}
    for env in envs.values():  # as installed: rtshield's bytecode compiled, whatever
        _compile(env["PYTHONPATH"].split(os.pathsep)[0])  # PYTHONDONTWRITEBYTECODE says
    walls: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as d:
        py = [sys.executable, "-m", "rtshield"]  # the checkout's, by PYTHONPATH
        runs = {
            "figures": [*py, "run", str(Q500), "--out", f"{d}/f", "--quiet"],
            "bare": [*py, "run", str(Q500), "--out", f"{d}/b", "--quiet", "--no-figures"],
            "help": [*py, "--help"],
        }
        own = envs[""]
        libs = {name: _libraries(runs[name], own) for name in ("bare", "figures")}
        floors = {  # the libraries alone: the run's own, and what its figure worker adds
            "bare": libs["bare"],
            "figures": sorted({m.split(".")[0] for m in libs["figures"]}
                              - {m.split(".")[0] for m in libs["bare"]}),
        }
        floor_env = {**own, **PROCESS_DEFAULTS}
        floor_runs = {f"floor/{name}": [sys.executable, "-c", "import " + ", ".join(mods)]
                      for name, mods in floors.items()}
        for args in runs.values():  # warm the caches (bytecode, the file system)
            for env in envs.values():
                _timed(args, env)
        for args in floor_runs.values():
            _timed(args, floor_env)
        for _ in range(repeat):  # in turn, so a drift of the machine's speed hits all alike
            for name, args in runs.items():
                for tag, env in envs.items():
                    walls.setdefault(f"{name}{'/' + tag if tag else ''}", []).append(
                        _timed(args, env))
            for name, args in floor_runs.items():
                walls.setdefault(name, []).append(_timed(args, floor_env))
        server: dict = {}
        if served:
            server = _m_served(py, runs, repeat, walls, envs)
    return {"simpy_s": simpy_s, "walls": walls, "repeat": repeat, "baseline": baseline,
            "server": server, "floors": floors}


def _m_served(py: list[str], runs: dict[str, list[str]], repeat: int,
              walls: dict[str, list[float]], envs: dict[str, dict[str, str]]) -> dict:
    """``runs`` through a server of their own (``walls[NAME/served]``); the start's time
    and each first command's after it. With a baseline among ``envs`` (tag
    ``before``), its rtshield gets a server of its own too, and each command of it
    runs right after this one's (``walls[NAME/served/before]``). The servers are
    always stopped."""
    with contextlib.ExitStack() as stack:
        served = {}
        for tag, base in envs.items():
            rt = stack.enter_context(tempfile.TemporaryDirectory(prefix="rts-"))
            os.chmod(rt, 0o700)
            env = {**base, "XDG_RUNTIME_DIR": rt, "RTSHIELD_SERVER": "require"}
            stop = [*py, "server", "stop"]
            stack.callback(subprocess.run, stop, env=env, stdout=subprocess.DEVNULL, check=False)
            served[tag] = env
        start_s = first = None
        for tag, env in served.items():
            t = _timed([*py, "server", "start", "--idle", "10"], env)
            f = {name: _timed(args, env) for name, args in runs.items()}
            if not tag:
                start_s, first = t, f
        for _ in range(repeat):
            for name, args in runs.items():
                for tag, env in served.items():
                    walls.setdefault(f"{name}/served{'/' + tag if tag else ''}", []).append(
                        _timed(args, env))
    return {"start_s": start_s, "first": first}


def _tree(proc, cpu: dict[int, float]) -> tuple[int, int]:
    """(RSS of the process, RSS of it and every descendant), in bytes; ``cpu`` gets
    each process's CPU time so far (user + system, seconds) by its pid."""
    import psutil

    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    rss = []
    for c in procs:
        try:
            rss.append(c.memory_info().rss)
            t = c.cpu_times()
            cpu[c.pid] = t.user + t.system
        except psutil.Error:
            rss.append(0)
    return rss[0], sum(rss)


def sweep_sets(points: int) -> list[str]:
    side = int(round(points**0.5))
    queues = ",".join(str(10 * (i + 1)) for i in range(side))
    peaks = ",".join(f"{2000 * (i + 1)}pps" for i in range(points // side))
    return [f"driver.queue={queues}", f"flows.syn.peak={peaks}"]


def m_sweep(points: int, jobs: list[int], small: int = 0) -> dict:
    """The sweep on each worker count; with ``small``, first a sweep of that many
    points on the first count (the same command: its memory against the big one's)."""
    import psutil

    out: dict = {"points": points, "runs": {}}
    cases = ([(small, jobs[0])] if small else []) + [(points, n) for n in jobs]
    for size, n in cases:
        with tempfile.TemporaryDirectory() as d:
            args = [*_cmd(), "sweep", str(Q500), "--out", f"{d}/sw", "--jobs", str(n), "--quiet"]
            for s in sweep_sets(size):
                args += ["--set", s]
            peak = [0, 0]
            cpu: dict[int, float] = {}  # each process's CPU seconds, as last sampled
            t0 = time.perf_counter()
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, env=_env())
            proc = psutil.Process(p.pid)
            stop = threading.Event()

            def sample(proc=proc, stop=stop, peak=peak, cpu=cpu) -> None:
                while not stop.is_set():
                    own, total = _tree(proc, cpu)
                    peak[0], peak[1] = max(peak[0], own), max(peak[1], total)
                    stop.wait(0.2)

            t = threading.Thread(target=sample, daemon=True)
            t.start()
            rc = p.wait()
            wall = time.perf_counter() - t0
            stop.set()
            t.join()
            if rc != 0:
                raise SystemExit(f"bench/scale.py: the sweep on {n} workers exited {rc}")
            with open(f"{d}/sw/sweep.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            out["runs"][(size, n)] = {
                "wall_s": wall,
                "client_mb": peak[0] / 2**20,
                "tree_mb": peak[1] / 2**20,
                "rows": len(rows),
                "safe": sum(r["safe"] == "True" for r in rows),
                "folders": len(list(Path(f"{d}/sw/runs").iterdir())),
                "csv_mb": Path(f"{d}/sw/sweep.csv").stat().st_size / 2**20,
                "load_after": loadavg(),
                # what the sweep's processes used (client with scheduler, workers): on
                # a shared machine, with the wall time, the share of the CPUs it got
                "cpu_s": sum(cpu.values()),
                "client_cpu_s": cpu.get(p.pid, 0.0),
            }
            print(f"bench/scale.py: {size} points on {n} workers: {out['runs'][(size, n)]}",
                  file=sys.stderr, flush=True)
    return out


def _med(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"


def verdict(ok: bool, short: str) -> str:
    return "**met**" if ok else f"**not met**: {short}"


def render(res: dict, before: str, after: str, started: str, section: str) -> str:
    """The section of RESULTS.md of one measurement (``res`` holds ``start`` or ``sweep``)."""
    import bench_simpy

    rows = []
    if "start" in res:
        s = res["start"]
        w = s["walls"]
        fig, bare, hlp = (statistics.median(w[k]) for k in ("figures", "bare", "help"))
        rows.append((
            "`rtshield run queue_500` with its figures ≤ 0.6 s wall (1.27 s before)",
            f"median {_med(w['figures'])} of {s['repeat']}; SimPy model "
            f"{s['simpy_s']:.1f} s in the same call: **{s['simpy_s'] / fig:.0f}×**",
            verdict(fig <= 0.6, f"{fig - 0.6:.2f} s over"),
        ))
        rows.append((
            "`rtshield run queue_500 --no-figures` ≤ 0.25 s wall (0.45 s before)",
            f"median {_med(w['bare'])}; **{s['simpy_s'] / bare:.0f}×** the SimPy model",
            verdict(bare <= 0.25, f"{bare - 0.25:.2f} s over"),
        ))
        rows.append((
            "`rtshield --help` < 0.2 s wall",
            f"median {_med(w['help'])}",
            verdict(hlp < 0.2, f"{hlp - 0.2:.2f} s over"),
        ))
        for name, what, target in (("bare", "`run --no-figures` imports", 0.25),
                                   ("figures", "a run's figure worker adds", None)):
            med = statistics.median(w[f"floor/{name}"])
            mods = ", ".join(s["floors"][name])
            rows.append((
                f"the floor: the installed libraries {what}, imported by a process that "
                "does nothing else",
                f"median {_med(w[f'floor/{name}'])}; `python -c \"import {mods}\"`",
                (f"the target ({target} s) is {med - target:.2f} s below this floor"
                 if med > target else f"below the target ({target} s)") if target else
                "in the figure worker, beside the run's own imports",
            ))
        if s.get("server"):
            first = s["server"]["first"]
            for name, what, target in (("figures", "run queue_500 with its figures", 0.6),
                                       ("bare", "run queue_500 --no-figures", 0.25),
                                       ("help", "--help", 0.2)):
                med = statistics.median(w[f"{name}/served"])
                rows.append((
                    f"served by a resident server: `rtshield {what}` "
                    f"{'<' if name == 'help' else '≤'} {target} s wall",
                    f"median {_med(w[f'{name}/served'])} of {s['repeat']}, each a whole "
                    f"client process; the first after `server start` "
                    f"({s['server']['start_s']:.1f} s): {first[name]:.3f} s",
                    verdict(med <= target if name != "help" else med < target,
                            f"{med - target:.2f} s over"),
                ))
        if s.get("baseline"):
            for name, what in (("figures", "run with figures"), ("bare", "run --no-figures"),
                               ("help", "--help")):
                for key, how in ((name, ""), (f"{name}/served", "served, ")):
                    if f"{key}/before" not in w:
                        continue
                    ratios = [a / b for a, b in zip(w[key], w[f"{key}/before"], strict=True)]
                    rows.append((
                        f"{how}{what}: this commit against `{s['baseline']}` (before), "
                        "run by run in turn",
                        f"before: median {_med(w[f'{key}/before'])}; now/before per pair: "
                        f"median **{statistics.median(ratios):.2f}** "
                        f"(min {min(ratios):.2f}, max {max(ratios):.2f})",
                        "the same load for both",
                    ))
    if "sweep" in res:
        sw = res["sweep"]
        for (size, n), r in sw["runs"].items():
            rows.append((
                f"{size:,}-point sweep (queue × peak, full 32 s queue_500), {n} local "
                "Dask workers: < 10 min, peak memory < 1 GB",
                f"{r['wall_s']:.0f} s ({size / r['wall_s']:.1f} points/s); CPU "
                f"{r['cpu_s']:.0f} s ({1e3 * r['cpu_s'] / size:.0f} ms a point; the client and "
                f"scheduler {r['client_cpu_s']:.0f} s): {r['cpu_s'] / r['wall_s'] / CPUS:.0%} "
                f"of the {CPUS} CPUs; peak RSS "
                f"client {r['client_mb']:.0f} MB, whole tree {r['tree_mb']:.0f} MB; "
                f"{r['rows']:,} rows ({r['safe']:,} safe), sweep.csv {r['csv_mb']:.1f} MB, "
                f"{r['folders']} point folders",
                verdict(r["wall_s"] < 600 and r["tree_mb"] < 1024,
                        f"{r['wall_s'] / 60:.1f} min, {r['tree_mb']:.0f} MB; load "
                        f"{r['load_after']} at its end"),
            ))
    lines = [
        section,
        "",
        f"Measured {started} on {bench_simpy.machine()}; commit `{bench_simpy.commit()}`. "
        f"Load average before: {before}; after: {after} (the machine is shared: a wall time "
        "is the share of the CPUs the process got).",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
        "",
    ]
    return "\n".join(lines)


def write_section(text: str, section: str = SECTION) -> Path:
    """Replace the section of bench/RESULTS.md that starts with ``section`` by ``text``
    (or add it at the end)."""
    res = HERE / "RESULTS.md"
    body = res.read_text()
    pat = re.compile(re.escape(section) + r".*?(?=^## |\Z)", re.S | re.M)
    if pat.search(body):
        body = pat.sub(lambda _: text + "\n", body)
    else:
        body = body.rstrip("\n") + "\n\n" + text
    res.write_text(body)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="start,sweep", help="start, sweep or both")
    ap.add_argument("--repeat", type=int, default=10, help="runs of each start case")
    ap.add_argument("--baseline", help="start: also time the rtshield of this python/ folder")
    ap.add_argument("--no-server", dest="served", action="store_false",
                    help="start: without the rows served by a resident server")
    ap.add_argument("--points", type=int, default=10_000, help="points of the sweep")
    ap.add_argument("--jobs", default="2,3", help="local Dask workers of each sweep")
    ap.add_argument("--small", type=int, default=100,
                    help="first a sweep of this many points (memory against the big one); 0: none")
    ap.add_argument("--write", action="store_true", help="replace the section of RESULTS.md")
    args = ap.parse_args(argv)
    todo = [t.strip() for t in args.only.split(",") if t.strip()]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for part, section in (("start", SECTION_START), ("sweep", SECTION)):
        if part not in todo:
            continue
        before = loadavg()
        if part == "start":
            res = {"start": m_start(args.repeat, args.baseline, args.served)}
        else:
            jobs = [int(j) for j in args.jobs.split(",")]
            res = {"sweep": m_sweep(args.points, jobs, args.small)}
        text = render(res, before, loadavg(), started, section)
        print(text)
        if args.write:
            print(f"wrote {write_section(text, section)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
