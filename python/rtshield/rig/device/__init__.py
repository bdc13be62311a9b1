"""``rtshield rig device``: a robustness test of any controller under network storms,
its essential function monitored (docs/rig.md, "Testing any device").

A storm profile (:mod:`rtshield.schema.profile`; the default ships as
``default_profile.toml`` here) names the storms -- each a ramp of rates, sent
through ``--iface`` by trafgen or nmap -- and the monitors, each with pass
criteria. The modules, bottom up: :mod:`.profile` (reading a profile),
:mod:`.storms` (the tools' command lines, the steps under the rate cap),
:mod:`.iface` (the interface, the target's addresses, the achieved rate's
counters), :mod:`.verdict` (statistics, verdicts and recovery from a monitor's
samples); :mod:`.monitors` (the monitors' processes) and :mod:`.record` (the runs
recorded as they finish, which an interrupted test resumes from); :mod:`.run` (the
test);
:mod:`.summary` (``summary.json``, the exit status) and :mod:`.report`
(``report.html``, ``fig_latency.png``).
"""

from __future__ import annotations

from .monitors import Monitor, monitor_argv, start_monitors
from .profile import default_profile, load_profile, select
from .record import discard as discard_record
from .report import latency_figure, write_report
from .run import Options, needs_shaper, planned_seconds, run_test
from .storms import DEFAULT_CAP, Endpoints, Step, plan_steps, storm_argv, tool_of
from .summary import EXIT_FAIL, EXIT_PASS, exit_code, summarize
from .verdict import Criteria, Sample, recovery, samples, window

__all__ = [
    "DEFAULT_CAP",
    "EXIT_FAIL",
    "EXIT_PASS",
    "Criteria",
    "Endpoints",
    "Monitor",
    "Options",
    "Sample",
    "Step",
    "default_profile",
    "discard_record",
    "exit_code",
    "latency_figure",
    "load_profile",
    "monitor_argv",
    "needs_shaper",
    "plan_steps",
    "planned_seconds",
    "recovery",
    "run_test",
    "samples",
    "select",
    "start_monitors",
    "storm_argv",
    "summarize",
    "tool_of",
    "window",
    "write_report",
]
