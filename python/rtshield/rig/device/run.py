"""One robustness test: the baseline, the storms' ramps, the recovery after each run.

The monitors run from the start to the end. The **baseline** (the profile's
``baseline``, after one second in which the monitors connect) must pass every
monitor, or the test stops before the first storm: the target does not answer (an
``optional`` monitor without a good sample in it is skipped instead, with the
reason: the device does not offer what it watches).
Then, storm by storm, each **step** runs up to ``repeat`` times (the profile's;
:class:`.verdict.Rule`). A **run** sends the storm's tool for ``step`` seconds
at the step's rate, then waits ``pause`` (at least the longest monitor timeout,
so that the run's samples are all in); the run's verdict per monitor is over the
samples sent while the tool ran. Then the test waits until every monitor is good
again (:func:`.verdict.recovery`), so that each run starts from a recovered
device: the runs are independent trials. The step fails a monitor that failed
``fail_runs`` of its runs (a majority by default); the runs stop once no further
run could change a counted monitor's verdict. A monitor ``informational_in`` the
storm's kind is judged and shown but decides nothing. With ``stop_at_failure``
(the default) a storm's ramp ends at its first failed step. A monitor passes a
storm's recovery when it was good again within its ``recover`` after every run of
the storm; a target that is not back within the profile's ``wait_recovery``
(default 60 s, plus the time the samples take to come in) ends the test (the
remaining storms are not run).

Each run is recorded as it finishes (:mod:`.record`). The same test started again
into the same ``--out`` after an interruption measures the baseline again (the
device may have rebooted: the test goes on only when it answers) and then asks for
its runs in the same order, reading back each one recorded for that point of the
test instead of running it: the steps' and storms' results come from the same code,
on the recorded runs' measurements (:func:`judge_run` is the one place a run's
measurements become its verdict).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield.outputs import shown as shown_path
from rtshield.rig.harness import Processes
from rtshield.rig.host import RigError, read_text, system_info
from rtshield.rig.shaper import Loan, lend
from rtshield.rig.timing import mono_ns, sleep_until
from rtshield.schema.profile import ProfileFile, StormEntry

from . import iface as link
from .monitors import Monitor, start_monitors
from .record import Measured, RunRecord, test_parts
from .storms import (
    Endpoints,
    Step,
    largest_frame,
    plan_steps,
    storm_argv,
    storm_match,
    tool_of,
)
from .verdict import Rule, errors_after, pooled, recovery, step_result, window
from .verdict import longest as longest_recovery

__all__ = [
    "Options", "Run", "Trial", "judge_run", "measure_run", "needs_shaper", "planned_seconds",
    "run_once", "run_recorded", "run_storms", "run_test",
]

#: Seconds the monitors get to connect before the baseline starts: at least the first,
#: at most the second (a monitor without a record by then fails the baseline).
WARMUP_S = (1.0, 10.0)
#: How often the recovery wait looks at the samples (s).
POLL_S = 0.25


@dataclass
class Options:
    target: str
    iface: str
    cap: float | None
    out: Path
    say: Callable[[str], None] = print


def _s(ns: int) -> float:
    return ns / 1e9


def _ramp(prof: ProfileFile, storm: StormEntry) -> tuple[list[Any], int, int]:
    return (
        storm.rates if storm.rates is not None else prof.ramp.rates,
        storm.step if storm.step is not None else prof.ramp.step,
        storm.pause if storm.pause is not None else prof.ramp.pause,
    )


def _lag_ns(prof: ProfileFile) -> int:
    """How long after a sample's send its record may come in (the longest timeout)."""
    return max(m.timeout if m.kind != "heartbeat" else 0 for m in prof.monitor) + 300_000_000


def _recovery_wait_ns(prof: ProfileFile) -> int:
    longest = max(prof.profile.wait_recovery, *(m.recover for m in prof.monitor))
    return longest + _lag_ns(prof) + 10**9


def planned_seconds(prof: ProfileFile, cap: float | None, longest: bool = True) -> float:
    """How long the test takes with every step run: at most (``longest``: every step run
    ``repeat`` times, every recovery waited out), or when every step passes in the
    fewest runs the rule allows and the device recovers at once."""
    lag = _lag_ns(prof)
    rule = Rule.of(prof.profile)
    runs = rule.repeat if longest else min(rule.repeat, rule.repeat - rule.fail_runs + 1)
    after = _s(_recovery_wait_ns(prof)) if longest else 0.5
    total = WARMUP_S[1] + _s(prof.profile.baseline) + _s(lag)
    for st in prof.storm:
        rates, step, pause = _ramp(prof, st)
        n = len(plan_steps(rates, cap)) * runs
        total += n * (_s(step) + _s(max(pause, lag)) + after)
    return total


def needs_shaper(prof: ProfileFile, cap: float | None) -> bool:
    """Whether a step of ``prof`` under ``cap`` is held at its rate by a shaper on the
    interface (a packet storm's step at a rate; not the scan, not an uncapped ``"max"``)."""
    return any(
        storm_match(st, _NO_ENDPOINTS) is not None
        and any(step.rate is not None for step in plan_steps(_ramp(prof, st)[0], cap))
        for st in prof.storm
    )


#: Endpoints for questions that do not depend on the addresses.
_NO_ENDPOINTS = Endpoints("", "", "0.0.0.0", "", "0.0.0.0")


@contextlib.contextmanager
def _lent(prof: ProfileFile, opts: Options) -> Iterator[Loan | None]:
    """The interface's queueing lent to the storms for the test, when a step needs it."""
    if not needs_shaper(prof, opts.cap):
        yield None
        return
    with lend(opts.iface) as loan:
        yield loan


def _baseline(mons: list[Monitor], lo: int, hi: int) -> dict[str, Any]:
    return {m.name: window(m.samples(), lo, hi, m.criteria) for m in mons}


def _skip_optional(procs: Processes, mons: list[Monitor], base: dict[str, Any]) -> dict[str, str]:
    """Stop and drop (from ``mons`` and ``base``) every ``optional`` monitor without a good
    sample in the baseline: the device does not offer what it watches. Returns why each
    was skipped."""
    skipped = {}
    for m in list(mons):
        w = base[m.name]
        if m.entry.optional and w["good"] == 0:
            seen = (f"none of its {w['samples']} samples was good" if w["samples"]
                    else "no sample")
            skipped[m.name] = (
                f"{seen} in the baseline: the device does not offer it (optional = true)"
            )
            if m.popen is not None:
                procs.stop(m.popen)
            mons.remove(m)
            del base[m.name]
    return skipped


def _tool_end(procs: Processes, p: subprocess.Popen, held: bool) -> int | None:
    """Stop a storm's tool and return its code: SIGINT (trafgen and nmap end cleanly), or
    SIGKILL for trafgen ``held`` by a shaper (on SIGINT it waits until its ring's frames are
    sent, which the shaper lets out at the step's rate: seconds more of the storm)."""
    procs.stop(p, signal.SIGKILL if held else signal.SIGINT, grace=2.0)
    return p.returncode


def run_once(
    procs: Processes,
    storm: StormEntry,
    step: Step,
    name: str,
    ep: Endpoints,
    step_ns: int,
    base_tx_pps: float,
    loan: Loan | None = None,
) -> tuple[int, int, dict[str, Any]]:
    """Send one run of ``storm`` at ``step``'s rate (held there by a shaper on ``loan``'s
    interface, :func:`.storms.storm_match`; the scan by nmap); return its window and what
    the interface counted."""
    match = storm_match(storm, ep) if step.rate is not None else None
    if match is not None and loan is None:
        raise ValueError(f"a step of {storm.name} at a rate needs the interface's queueing")
    held = match is not None
    with loan.shape(step.rate, match, largest_frame(storm)) if held else contextlib.nullcontext():
        c0 = link.Counters.read(ep.iface)
        p = procs.start(storm_argv(storm, step.rate, ep), limit_s=_s(step_ns) + 1.0, name=name)
        try:
            sleep_until(c0.t_ns + step_ns)
            t_end = mono_ns()
        finally:  # the tool stops before the shaper goes, also on a signal: no burst
            rc = _tool_end(procs, p, held=held)
    c1 = link.Counters.read(ep.iface)
    # per second of the run: the tool sent from its start to t_end, then it was stopped
    tx_pps, rst_pps = c0.rates(c1, over_ns=t_end - c0.t_ns)
    achieved = max(0.0, tx_pps - rst_pps - base_tx_pps)
    return c0.t_ns, t_end, {
        "rate_achieved": round(achieved, 1),
        "tx_pps": round(tx_pps, 1),
        "host_rst_pps": round(rst_pps, 1),
        "seconds": round(_s(t_end - c0.t_ns), 3),
        "tool_exit": rc,
    }


def await_recovery(
    mons: list[Monitor], t_end: int, prof: ProfileFile
) -> dict[str, float | None]:
    """Wait until every monitor is good again after ``t_end`` (a run's end), at most the
    profile's ``wait_recovery`` and the samples' lag; each monitor's recovery time
    (``None``: not back)."""
    lag = _lag_ns(prof)
    deadline = t_end + _recovery_wait_ns(prof)
    while True:
        now = mono_ns()
        # a request's record is in once its timeout has passed; a heartbeat's at once
        rec_s = {
            m.name: recovery(
                m.samples(), t_end, now - (lag if m.criteria.timeout_ns else 0), m.criteria
            )
            for m in mons
        }
        if all(v is not None for v in rec_s.values()) or now >= deadline:
            return rec_s
        sleep_until(now + int(POLL_S * 1e9))


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / len(xs), 1)


#: One run of a step: ``(storm, step, step's index, try)`` -> what it measured
#: (:func:`measure_run`, or read back from the test's record, :mod:`.record`).
Trial = Callable[[StormEntry, Step, int, int], Measured]


@dataclass
class Run:
    """One run of a step: what summary.json says of it (:func:`judge_run`), and what it
    measured (its samples in its window ``got.span`` are what its step's statistics
    pool)."""

    rec: dict[str, Any]
    got: Measured


def _judged(storm: StormEntry, mons: list[Monitor]) -> list[str]:
    """The monitors whose verdicts decide a run of ``storm`` (every monitor when each is
    informational in it)."""
    counted = [m.name for m in mons if storm.kind not in m.entry.informational_in]
    return counted or [m.name for m in mons]


def judge_run(storm: StormEntry, mons: list[Monitor], got: Measured) -> Run:
    """What a run of ``storm`` says from what it measured, whether measured now or read
    back: each monitor's window, the run's verdict, its times from its attempt's start."""
    lo, hi = got.span
    monitors = {m.name: window(got.samples[m.name], lo, hi, m.criteria) for m in mons}
    failed = [n for n in _judged(storm, mons) if monitors[n]["verdict"] == "fail"]
    rec = {
        **got.rates,
        "window_s": [round((lo - got.t0) / 1e9, 3), round((hi - got.t0) / 1e9, 3)],
        "started": got.started,
        "monitors": monitors,
        "verdict": "fail" if failed else "pass",
        "recovery_s": got.recovery_s,
        "errors_after": {m.name: got.errors_after.get(m.name, 0) for m in mons},
    }
    return Run(rec, got)


def measure_run(
    procs: Processes,
    prof: ProfileFile,
    storm: StormEntry,
    step: Step,
    index: int,
    k: int,
    mons: list[Monitor],
    ep: Endpoints,
    base_tx_pps: float,
    loan: Loan | None,
    t0: int,
    started: int,
) -> Measured:
    """Try ``k`` of step ``index`` of ``storm`` on the device: the storm, the pause until
    every sample of its window is in, the recovery wait."""
    _, step_ns, pause_ns = _ramp(prof, storm)
    lo, t_end, rates = run_once(procs, storm, step, f"storm.{storm.name}.{index}.{k}", ep,
                                step_ns, base_tx_pps, loan)
    sleep_until(t_end + max(pause_ns, _lag_ns(prof)))
    samples = {m.name: [s for s in m.samples() if lo <= s.t < t_end] for m in mons}
    recovery_s = await_recovery(mons, t_end, prof)
    errors = {m.name: errors_after(m.samples(), t_end, recovery_s[m.name]) for m in mons}
    return Measured(rates, samples, (lo, t_end), recovery_s, t0, started, errors)


def run_step(
    prof: ProfileFile,
    storm: StormEntry,
    step: Step,
    index: int,
    mons: list[Monitor],
    opts: Options,
    trial: Trial,
) -> dict[str, Any]:
    """Run one step of ``storm`` as often as the profile's rule needs; its record: the
    rates (the runs' mean), each monitor's result by the rule, and every run."""
    rule = Rule.of(prof.profile)
    counted = {m.name: storm.kind not in m.entry.informational_in for m in mons}
    judged = _judged(storm, mons)
    runs: list[Run] = []
    while True:
        k = len(runs) + 1
        run = judge_run(storm, mons, trial(storm, step, index, k))
        runs.append(run)
        rec = run.rec
        failed = [n for n in judged if rec["monitors"][n]["verdict"] == "fail"]
        back = all(v is not None for v in rec["recovery_s"].values())
        opts.say(
            f"{storm.name}: step {index}, run {k}: {rec['rate_achieved']:,.0f} pkt/s achieved; "
            + ("every monitor passed" if not failed else "failed: " + ", ".join(
                f"{n} ({rec['monitors'][n]['why']})" for n in failed))
            + ("" if back else "; not back")
            + (" (recorded by an earlier attempt)" if run.got.recorded else "")
        )
        fails = {n: sum(r.rec["monitors"][n]["verdict"] == "fail" for r in runs) for n in judged}
        if not back or all(rule.decided(len(runs), f) for f in fails.values()):
            break
    monitors = {
        m.name: step_result([r.rec["monitors"][m.name] for r in runs],
                            pooled([(r.got.samples[m.name], *r.got.span) for r in runs],
                                   m.criteria),
                            rule, counted[m.name])
        for m in mons
    }
    failed = [n for n, w in monitors.items() if w["counted"] and w["verdict"] == "fail"]
    return {
        **step.as_dict(),
        "rate_achieved": _mean([r.rec["rate_achieved"] for r in runs]),
        "tx_pps": _mean([r.rec["tx_pps"] for r in runs]),
        "host_rst_pps": _mean([r.rec["host_rst_pps"] for r in runs]),
        "verdict": "fail" if failed else "pass",
        "failed": failed,
        "monitors": monitors,
        "runs": [r.rec for r in runs],
    }


def run_storm(
    prof: ProfileFile,
    storm: StormEntry,
    mons: list[Monitor],
    opts: Options,
    trial: Trial,
) -> dict[str, Any]:
    """Run one storm's ramp, each step by the profile's rule; return its summary."""
    rates, step_ns, _ = _ramp(prof, storm)
    steps = plan_steps(rates, opts.cap)
    rule = Rule.of(prof.profile)
    done: list[dict[str, Any]] = []
    for i, step in enumerate(steps, 1):
        shown = "max" if step.rate is None else f"{step.rate:,.0f} pkt/s"
        opts.say(f"{storm.name}: step {i}/{len(steps)} at {shown} ({_s(step_ns):g} s, "
                 f"up to {rule.repeat} runs)")
        rec = run_step(prof, storm, step, i, mons, opts, trial)
        done.append(rec)
        runs = rec["runs"]
        opts.say(
            f"{storm.name}: step {i}: {len(runs)} run(s), {rec['rate_achieved']:,.0f} pkt/s "
            "achieved; "
            + ("passed" if not rec["failed"] else "failed: " + ", ".join(
                f"{n} ({rec['monitors'][n]['runs_failed']} of {len(runs)} runs)"
                for n in rec["failed"]))
        )
        if not all(v is not None for v in runs[-1]["recovery_s"].values()):
            break  # the device is not back
        if rec["failed"] and prof.profile.stop_at_failure:
            break
    all_runs = [r for s in done for r in s["runs"]]
    monitors: dict[str, Any] = {}
    for m in mons:
        first = next((s for s in done if s["monitors"][m.name]["verdict"] == "fail"), None)
        counted = storm.kind not in m.entry.informational_in
        r = longest_recovery([x["recovery_s"][m.name] for x in all_runs])
        recovered = r is not None and r <= m.criteria.recover_ns / 1e9
        monitors[m.name] = {
            "verdict": "pass" if (first is None or not counted) and recovered else "fail",
            "counted": counted,
            "failed_at": None if first is None else _rate_of(first),
            "recovery_s": r,
            "recovered": recovered,
            "errors_after": max(x["errors_after"][m.name] for x in all_runs),
        }
    breaking = next((s for s in done if s["verdict"] == "fail"), None)
    recovered_all = all(v["recovered"] for v in monitors.values())
    rec_s = [v["recovery_s"] for v in monitors.values()]
    return {
        "name": storm.name,
        "kind": storm.kind,
        "tool": tool_of(storm.kind),
        "steps": done,
        "monitors": monitors,
        "informational": [n for n, v in monitors.items() if not v["counted"]],
        "breaking_rate": None if breaking is None else _rate_of(breaking),
        "breaking_step": None if breaking is None else done.index(breaking) + 1,
        "recovery_s": longest_recovery(rec_s) if rec_s else 0.0,
        "verdict": "pass" if breaking is None and recovered_all else "fail",
    }


def _rate_of(step: dict[str, Any]) -> float:
    """A step's rate for the breaking rate: the rate asked, or for an uncapped ``"max"``
    step the rate it achieved."""
    return step["rate_asked"] if step["rate_asked"] is not None else step["rate_achieved"]


def run_test(procs: Processes, prof: ProfileFile, opts: Options) -> dict[str, Any]:
    """The whole test; the raw results (:mod:`.summary` turns them into summary.json). The
    interface's queueing is lent to the storms for it (:mod:`rtshield.rig.shaper`)."""
    with _lent(prof, opts) as loan:
        return _run_test(procs, prof, opts, loan)


def _run_test(
    procs: Processes, prof: ProfileFile, opts: Options, loan: Loan | None
) -> dict[str, Any]:
    source = link.route_source(opts.target, opts.iface)
    system = system_info(sorted({tool_of(s.kind) for s in prof.storm}))
    limit = planned_seconds(prof, opts.cap) + 60
    t0 = mono_ns()
    started = time.time_ns()  # this attempt's: a resumed test's runs say which measured them
    mons = start_monitors(
        procs, prof.monitor, opts.target, opts.iface, opts.out / "monitors",
        end_ns=t0 + int(limit * 1e9), limit_s=limit + 10, source=source,
    )
    sleep_until(t0 + int(WARMUP_S[0] * 1e9))
    while not all(m.started() for m in mons) and mono_ns() < t0 + int(WARMUP_S[1] * 1e9):
        sleep_until(mono_ns() + int(POLL_S * 1e9))
    lo = mono_ns()
    hi = lo + prof.profile.baseline
    opts.say(f"baseline: the monitors alone for {_s(prof.profile.baseline):g} s")
    c0 = link.Counters.read(opts.iface)
    sleep_until(hi)
    c1 = link.Counters.read(opts.iface)
    sleep_until(hi + _lag_ns(prof))
    base = _baseline(mons, lo, hi)
    skipped = _skip_optional(procs, mons, base)
    for n, why in skipped.items():
        opts.say(f"{n}: skipped: {why}")
    bad = {n: w for n, w in base.items() if w["verdict"] == "fail"}
    if bad:
        raise RigError(
            f"rig device: {opts.target} does not answer as the profile expects before the "
            "first storm: "
            + "; ".join(f"{n} {w['why']} ({w['good']} of {w['samples']} good)"
                        for n, w in bad.items())
            + " (--monitors selects the monitors the device has)"
        )
    base_tx, base_rst = c0.rates(c1)
    mac = link.neighbour_mac(opts.target, opts.iface)
    if mac is None:
        subprocess.run(["ping", "-c", "1", "-W", "1", "-I", opts.iface, opts.target],
                       capture_output=True, check=False)
        mac = link.neighbour_mac(opts.target, opts.iface)
    if mac is None:
        raise RigError(f"rig device: {opts.target} does not answer ARP on {opts.iface}")
    ep = Endpoints(opts.iface, link.iface_mac(opts.iface), source, mac, opts.target)
    opts.say(f"baseline passed: {', '.join(base)}; the target's MAC is {mac}")
    base_pps = max(0.0, base_tx - base_rst)

    def measure(storm: StormEntry, step: Step, i: int, k: int) -> Measured:
        return measure_run(procs, prof, storm, step, i, k, mons, ep, base_pps, loan, t0,
                           started)

    record = RunRecord(opts.out, test_parts(prof, opts.target, opts.iface, opts.cap, mac,
                                            [m.name for m in mons]))
    if record.resuming:
        opts.say(f"resuming the interrupted test recorded in {shown_path(opts.out)}: its "
                 "recorded runs are read back, not run again")
    storms, not_run = run_recorded(prof, mons, opts, record, measure)
    procs.stop_all()  # the monitors write their last samples
    system["loadavg_end"] = read_text("/proc/loadavg")
    return {
        "system": system,
        "target": opts.target,
        "iface": opts.iface,
        "source": source,
        "target_mac": mac,
        "baseline": {"window_ns": [lo, hi], "tx_pps": round(base_tx, 1),
                     "host_rst_pps": round(base_rst, 1), "monitors": base},
        "storms": storms,
        "not_run": not_run,
        "skipped": skipped,
        "t0_ns": t0,
        "started": started,
        "resumed": record.resumed,
    }


def run_recorded(
    prof: ProfileFile, mons: list[Monitor], opts: Options, record: RunRecord, measure: Trial
) -> tuple[list[dict[str, Any]], list[str]]:
    """:func:`run_storms`, each run read back from ``record``, or measured (``measure``)
    and recorded; the record closed however the test ends (an error, Ctrl-C: every run
    that finished stays recorded, the run in progress is not)."""
    complete = False
    try:
        out = run_storms(prof, mons, opts, record.trial(measure))
        complete = True
    finally:
        record.close(complete)
    return out


def run_storms(
    prof: ProfileFile, mons: list[Monitor], opts: Options, trial: Trial
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every storm of ``prof`` in turn, each run by ``trial``: their summaries, and the
    storms not run (the device was not back after one)."""
    storms: list[dict[str, Any]] = []
    not_run: list[str] = []
    for st in prof.storm:
        if storms and storms[-1]["recovery_s"] is None:  # the device is not back
            not_run.append(st.name)
            continue
        storms.append(run_storm(prof, st, mons, opts, trial))
        s = storms[-1]
        opts.say(
            f"{st.name}: {s['verdict']}"
            + (f", breaking rate {s['breaking_rate']:,.0f} pkt/s" if s["breaking_rate"] else "")
            + (f", recovered in {s['recovery_s']:g} s" if s["recovery_s"] is not None
               else ", not back: the remaining storms are not run")
        )
    return storms, not_run
