"""``summary.json`` of ``rtshield rig device``, and the exit status it gives.

``storms`` is a list, one entry per storm run: ``name``, ``kind``, ``tool``,
``steps`` (per step ``rate_asked`` -- packets/s the tool was told, ``null`` for
an uncapped ``"max"`` --, ``rate_achieved``, ``profile_rate``, ``capped``,
``tx_pps``, ``host_rst_pps``, ``window_s``, ``verdict`` and ``monitors``: per
monitor its statistics and ``verdict``), ``monitors`` (per monitor over the
storm: ``verdict``, ``failed_at``, ``recovery_s``, ``recovered``),
``breaking_rate`` (the rate of the first step in which a monitor failed,
``null`` when none did), ``breaking_step``, ``recovery_s`` (the slowest
monitor's, ``null`` when one was not back within the profile's
``wait_recovery``) and ``verdict``. Times are seconds since the monitors
started. ``system`` is the test host's (kernel, CPU, load at the start and the
end, the tools' versions), as in the other rig outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rtshield.schema.profile import ProfileFile

from .verdict import Criteria

__all__ = ["EXIT_FAIL", "EXIT_PASS", "exit_code", "summarize"]

EXIT_PASS, EXIT_FAIL = 0, 1


def _rel(window_ns: list[int], t0: int) -> list[float]:
    return [round((t - t0) / 1e9, 3) for t in window_ns]


def summarize(
    raw: dict[str, Any], prof: ProfileFile, profile_path: Path, options: dict[str, Any]
) -> dict[str, Any]:
    """The summary of a finished test (``raw``: :func:`.run.run_test`'s result)."""
    t0 = raw["t0_ns"]
    storms = []
    for s in raw["storms"]:
        steps = [
            {**{k: v for k, v in st.items() if k != "window_ns"},
             "window_s": _rel(st["window_ns"], t0)}
            for st in s["steps"]
        ]
        storms.append({**{k: v for k, v in s.items() if k != "end_ns"}, "steps": steps})
    failed = [s["name"] for s in storms if s["verdict"] == "fail"]
    base = raw["baseline"]
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
        "options": options,
        "criteria": {m.name: Criteria.of(m).as_dict() for m in prof.monitor},
        "baseline": {
            "window_s": _rel(base["window_ns"], t0),
            "tx_pps": base["tx_pps"],
            "host_rst_pps": base["host_rst_pps"],
            "monitors": base["monitors"],
        },
        "storms": storms,
        "not_run": raw["not_run"],
        "failed": failed,
        "verdict": "fail" if failed or raw["not_run"] else "pass",
    }


def exit_code(summary: dict[str, Any]) -> int:
    """0 when every monitor passed every step and recovered after every storm, else 1."""
    return EXIT_PASS if summary["verdict"] == "pass" else EXIT_FAIL
