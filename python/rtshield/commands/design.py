"""``rtshield design FILE [--json]``: the safe boundary of one protection parameter.

A system file names its open parameter with ``"?"``. With ``--scenario`` the
file is a simulator scenario, and ``--knob`` names the interrupt-level knob
(default: the one of its protection); every answer is then checked by
simulating the boundary and one step beyond it.
"""

from __future__ import annotations

import json
from typing import Annotated

from rtshield.analysis.knobtable import KNOBS
from rtshield.clitools import Seed, arg, opt
from rtshield.commands.analyze import Json, scenario_overrides

HELP = (
    'For a system where one protection parameter is written "?" (a strict limiter\'s '
    "min_interarrival, a bursty limiter's burst or burst_period, a server's budget, a "
    "Burst Mitigation capacity, a Queue Mitigation queue, or a shared timer's rate), "
    "find the boundary at which every task stays schedulable, with the margin, and "
    "simulate it. With --scenario, the file is a scenario and --knob names the "
    "parameter (" + ", ".join(KNOBS) + "; for the receive path flow.NAME.server with "
    "--rate, rx.global_capacity, nic.queue.NAME with --rate and --max-delay); the answer "
    "is checked in the simulator with worst-case traffic. Exit status 0 if a safe value "
    "exists and the simulation (when run) confirms it, 1 if not."
)


EPILOG = (
    "\b\nexample: rtshield design my_system.toml   (one value in it written \"?\")\n"
    "         rtshield design scenarios/danicki2021/burst.toml --scenario"
)


def options(
    system: Annotated[
        str, arg("SYSTEM", 'system description (TOML) with one value written "?"')],
    scenario: Annotated[bool, opt(
        "--scenario", "the file is a scenario for 'rtshield run': design a knob of its "
        "device")] = False,
    knob: Annotated[str | None, opt(
        "--knob", "with --scenario: the parameter to design (default: the protection's "
        "own)", "KEY")] = None,
    no_simulate: Annotated[bool, opt(
        "--no-simulate", "skip the simulation of the boundary")] = False,
    rate: Annotated[str | None, opt(
        "--rate", "with --knob flow.NAME.server or nic.queue.NAME: the flow's rate "
        "(e.g. 1000pps)", "RATE")] = None,
    max_delay: Annotated[str | None, opt(
        "--max-delay", "with --knob nic.queue.NAME: the delay the receiving process "
        "allows (e.g. 50ms)", "TIME")] = None,
    json: Json = False,
    seed: Seed = None,
) -> None:
    ...


def handle(args) -> int:
    from rtshield.errors import UsageError

    overrides = scenario_overrides(args)
    if args.scenario:
        return _run_scenario(args, overrides)
    if args.knob or args.rate or args.max_delay:
        raise UsageError("--knob, --rate and --max-delay apply to a scenario (add --scenario)")
    from rtshield.analysis.design import design_system, simulate_design
    from rtshield.analysis.system import load_system, naming_file

    with naming_file(args.system):
        system = load_system(args.system)
        d = design_system(system)
        if not args.no_simulate:
            simulate_design(system, d)
    if args.json:
        print(json.dumps(d.to_json(), indent=2))
    else:
        print(d.text())
    refuted = d.simulated.get("confirmed") is False
    return 0 if d.value is not None and not refuted else 1


def _run_scenario(args, overrides=None) -> int:
    from rtshield.analysis.knobs import design_knob
    from rtshield.analysis.system import naming_file
    from rtshield.errors import UsageError
    from rtshield.scenario import load_scenario

    sc = load_scenario(args.system, overrides, overrides_origin="--seed")
    knob = args.knob or ""
    rx = knob.startswith(("flow.", "nic.queue.")) or knob == "rx.global_capacity"
    if not rx and (args.rate or args.max_delay):
        raise UsageError(
            "--rate and --max-delay apply to --knob flow.NAME.server or nic.queue.NAME"
        )
    with naming_file(args.system):
        d = _rx(sc, knob, args) if rx else design_knob(sc, args.knob, simulate=not args.no_simulate)
    if args.json:
        print(json.dumps(d.to_json(), indent=2))
    else:
        print(d.text())
    if rx:
        ok = d.confirmed
    else:
        ok = d.value is not None and (d.sim_safe is None or d.confirmed)
    return 0 if ok else 1


def _rx(sc, knob: str, args):
    """The receive-path questions (analysis/rxdesign.py): always simulated."""
    from rtshield.analysis import rxdesign
    from rtshield.errors import UsageError
    from rtshield.units import duration_ns, rate_hz

    def need_rate() -> float:
        if not args.rate:
            raise UsageError(f"--knob {knob}: needs --rate (the flow's packets per second)")
        return rate_hz(args.rate, "--rate")

    if knob == "rx.global_capacity":
        return rxdesign.design_global_limit(sc)
    parts = knob.split(".")
    if knob.startswith("flow.") and len(parts) == 3 and parts[2] == "server":
        return rxdesign.design_server(sc, parts[1], need_rate())
    if knob.startswith("nic.queue.") and len(parts) == 3:
        if not args.max_delay:
            raise UsageError(f"--knob {knob}: needs --max-delay (the delay the process allows)")
        return rxdesign.design_nic_queue(
            sc, parts[2], need_rate(), duration_ns(args.max_delay, "--max-delay")
        )
    raise UsageError(
        f"--knob {knob}: unknown (receive path: flow.NAME.server, rx.global_capacity, "
        "nic.queue.NAME)"
    )
