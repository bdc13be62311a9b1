"""``summary.json`` of ``rtshield rig device``, and the exit status it gives.

``storms`` is a list, one entry per storm run: ``name``, ``kind``, ``tool``,
``steps`` (per step ``rate_asked`` -- packets/s the tool was told, ``null`` for
an uncapped ``"max"`` --, ``rate_achieved``, ``tx_pps`` and ``host_rst_pps`` (the
means of its runs), ``profile_rate``, ``capped``, ``verdict``, ``failed`` (the
counted monitors that failed it), ``monitors`` (per monitor its statistics over
every run's samples pooled, ``verdict`` by the profile's rule, ``why``, ``runs``,
``runs_failed`` and ``counted``: false when the monitor is informational in this
storm) and ``runs`` (per run ``window_s``, ``attempt``, the rates, ``verdict``,
``monitors``: per monitor the run's statistics and verdict, ``recovery_s`` and
``errors_after`` -- the error answers after the run until the monitor recovered, a TCP
monitor's refused connections -- per monitor)),
``monitors`` (per monitor over the storm: ``verdict``, ``counted``,
``failed_at``, ``recovery_s`` -- the longest after any run of the storm --,
``recovered``, ``errors_after`` -- the most after any run), ``informational`` (the
monitors that decide nothing in this storm), ``breaking_rate`` (the rate of the first
step a counted monitor failed, ``null`` when none did), ``breaking_step``, ``recovery_s``
(the slowest monitor's, ``null`` when one was not back within the profile's
``wait_recovery``) and ``verdict``. ``rule``: the step rule (``repeat``,
``fail_runs``). ``skipped``: the ``optional`` monitors the device
had no good sample of in the baseline, each with why (they are in no step; ``criteria``
holds the monitors used, each with its ``informational_in``). ``attempts``: how many
times the test was started before it finished (1; more when it was interrupted and
resumed, :mod:`.record`): each run's ``attempt`` says which measured it, the baseline
is the last one's. Times are seconds since the monitors of the attempt started.
``system`` is the test host's (kernel, CPU, load at the start and the end, the tools'
versions), as in the other rig outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rtshield.schema.profile import ProfileFile

from .verdict import Criteria, Rule

__all__ = ["EXIT_FAIL", "EXIT_PASS", "exit_code", "summarize"]

EXIT_PASS, EXIT_FAIL = 0, 1


def _rel(window_ns: list[int], t0: int) -> list[float]:
    return [round((t - t0) / 1e9, 3) for t in window_ns]


def summarize(
    raw: dict[str, Any], prof: ProfileFile, profile_path: Path, options: dict[str, Any]
) -> dict[str, Any]:
    """The summary of a finished test (``raw``: :func:`.run.run_test`'s result)."""
    t0 = raw["t0_ns"]
    runs = [r for s in raw["storms"] for st in s["steps"] for r in st["runs"]]
    # the attempts in the order they started; this one, which measured the baseline, last
    attempts = [*sorted({r["started"] for r in runs} - {raw["started"]}), raw["started"]]
    number = {a: i for i, a in enumerate(attempts, 1)}
    storms = []
    for s in raw["storms"]:
        steps = [
            {**st, "runs": [{**{k: v for k, v in r.items() if k != "started"},
                             "attempt": number[r["started"]]} for r in st["runs"]]}
            for st in s["steps"]
        ]
        storms.append({**s, "steps": steps})
    failed = [s["name"] for s in storms if s["verdict"] == "fail"]
    base = raw["baseline"]
    skipped = raw.get("skipped", {})
    return {
        "command": "rtshield rig device",
        "system": raw["system"],
        "target": raw["target"],
        "iface": raw["iface"],
        "source": raw["source"],
        "target_mac": raw["target_mac"],
        "profile": {
            "path": str(profile_path),
            "name": prof.profile.name or profile_path.stem,
            "description": prof.profile.description,
            "stop_at_failure": prof.profile.stop_at_failure,
        },
        "rule": Rule.of(prof.profile).as_dict(),
        "options": options,
        "criteria": {
            m.name: {**Criteria.of(m).as_dict(), "informational_in": m.informational_in}
            for m in prof.monitor if m.name not in skipped
        },
        "skipped": skipped,
        "baseline": {
            "window_s": _rel(base["window_ns"], t0),
            "tx_pps": base["tx_pps"],
            "host_rst_pps": base["host_rst_pps"],
            "monitors": base["monitors"],
        },
        "storms": storms,
        "not_run": raw["not_run"],
        "attempts": len(attempts),
        "failed": failed,
        "verdict": "fail" if failed or raw["not_run"] else "pass",
    }


def exit_code(summary: dict[str, Any]) -> int:
    """0 when every monitor passed every step and recovered after every storm, else 1."""
    return EXIT_PASS if summary["verdict"] == "pass" else EXIT_FAIL
