"""``rtshield analyze SYSTEM.toml [--json]``: worst-case response times.

With ``--scenario`` the file is a simulator scenario; the analysis then runs
on its model (:func:`rtshield.analysis.model.system_from_scenario`), the same
one ``design`` and the cross-check use.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rtshield.clitools import OUT_HELP, Seed, arg, opt

HELP = (
    "Expand interrupt sources, mitigations and servers into tasks (Regehr & Duongsaa "
    "§5.2; Danicki et al. §2.2; Behnke et al. §2.4) and compute every task's worst-case "
    "response time under fixed-priority preemptive scheduling; check the NIC "
    "moderation rules (Behnke et al. §7.3.2). A scenario's traffic enters as arrival "
    "curves (the flows' most packets in any window). Exit status 0 if schedulable, 1 if "
    "not, 3 if a task's busy window passed the analysis' limit (not analysed)."
)

#: ``--json`` of analyze and design.
Json = Annotated[bool, typer.Option("--json", help="print the result as JSON (times in µs)")]


EPILOG = (
    "\b\nexample: rtshield analyze scenarios/analysis/textbook_three_tasks.toml\n"
    "         rtshield analyze scenarios/danicki2021/burst.toml --scenario --simulate"
)


def options(
    system: Annotated[str, arg("SYSTEM", "system description (TOML), see docs/analysis.md")],
    scenario: Annotated[bool, opt(
        "--scenario", "the file is a scenario for 'rtshield run': analyse the device it "
        "describes")] = False,
    simulate: Annotated[bool, opt(
        "--simulate", "with --scenario: also simulate the scenario and set each task's "
        "largest simulated response beside its analytic bound")] = False,
    json: Json = False,
    seed: Seed = None,
    out: Annotated[str | None, opt(
        "--out", "also write the analysis as a page, DIR/report.html, with its figure "
        "DIR/curves.png (each line's arrival curves, the demand against time, the "
        "response times); " + OUT_HELP, metavar="DIR")] = None,
) -> None:
    ...


def scenario_overrides(args):
    """The overrides ``--seed`` makes to a scenario (None without it); no scenario, an error."""
    from rtshield.errors import UsageError
    from rtshield.scenario import parse_overrides

    seed = getattr(args, "seed", None)
    if seed is None:
        return None
    if not args.scenario:
        raise UsageError("--seed applies to a scenario (add --scenario)")
    return parse_overrides([f"scenario.seed={seed}"])


def load_model(path, scenario: bool, overrides=None):
    """The analysed system of ``path``: a system file, or with ``scenario`` a scenario's model."""
    from rtshield.analysis import load_system
    from rtshield.analysis.system import naming_file

    if not scenario:
        with naming_file(path):
            return load_system(path)
    from rtshield.analysis.model import system_from_scenario
    from rtshield.scenario import load_scenario

    sc = load_scenario(path, overrides, overrides_origin="--seed")
    with naming_file(path):
        return system_from_scenario(sc)


def handle(args) -> int:
    from rtshield.analysis import analyze_system
    from rtshield.analysis.system import naming_file
    from rtshield.errors import UsageError

    if args.simulate and not args.scenario:
        raise UsageError("--simulate applies to a scenario (add --scenario)")
    if args.simulate:
        return _cross_check(args)
    system = load_model(args.system, args.scenario, scenario_overrides(args))
    with naming_file(args.system):
        rep = analyze_system(system)
    if args.json:
        print(json.dumps(rep.to_json(), indent=2))
    else:
        print(rep.table())
    write_page(args, rep)
    return rep.exit_code


def write_page(args, rep) -> None:
    """With ``--out``: the analysis' page and figure (:mod:`rtshield.analysis.page`)."""
    if getattr(args, "out", None) is None:
        return
    from rtshield.analysis.page import write_page as page
    from rtshield.outputs import finish_out_dir, prepare_out_dir, recorded_on_failure

    out = prepare_out_dir(args.out)
    with recorded_on_failure(out):  # a failed command removes nothing
        path = page(rep, out, rep.system.name)
    finish_out_dir(out)
    if not args.json:
        print(f"report: {path}")


def _cross_check(args) -> int:
    """The analysis and the simulator on one scenario (docs/analysis.md §9)."""
    from rtshield.analysis.model import cross_check
    from rtshield.analysis.system import naming_file
    from rtshield.scenario import load_scenario
    from rtshield.units import format_ns

    sc = load_scenario(args.system, scenario_overrides(args), overrides_origin="--seed")
    with naming_file(args.system):
        c = cross_check(sc)
    rows = []
    for name, obs in c.observed.items():
        b = c.bounds.get(name)
        rows.append(
            {
                "task": name,
                "simulated_us": obs / 1000,
                "bound_us": None if b is None else b / 1000,
                "ratio": None if not b else obs / b,
                "within_bound": b is not None and obs <= b,
            }
        )
    if args.json:
        out = c.report.to_json()
        out["simulated"] = rows
        print(json.dumps(out, indent=2))
    else:
        print(c.report.table())
        print("")
        print("simulated largest response against the analytic bound (deadline lifted):")
        for r in rows:
            b = "-" if r["bound_us"] is None else format_ns(round(r["bound_us"] * 1000))
            ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
            ok = "ok" if r["within_bound"] else "ABOVE THE BOUND"
            print(
                f"  {r['task']}: {format_ns(round(r['simulated_us'] * 1000))} <= {b} "
                f"(ratio {ratio}) {ok}"
            )
    write_page(args, c.report)
    if not all(r["within_bound"] for r in rows):
        return 1
    return c.report.exit_code
