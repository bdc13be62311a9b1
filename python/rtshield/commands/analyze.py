"""``rtshield analyze SYSTEM.toml [--json]``: worst-case response times.

With ``--scenario`` the file is a simulator scenario; the analysis then runs
on its model (:func:`rtshield.analysis.model.system_from_scenario`), the same
one ``design`` and the cross-check use.
"""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="worst-case response-time analysis of a SYSTEM.toml (or of a scenario's device)",
        description=(
            "Expand interrupt sources, mitigations and servers into tasks (Regehr & Duongsaa "
            "§5.2; Danicki et al. §2.2; Behnke et al. §2.4) and compute every task's worst-case "
            "response time under fixed-priority preemptive scheduling; check the NIC "
            "moderation rules (Behnke et al. §7.3.2). Exit status 0 if schedulable, 1 if not."
        ),
    )
    p.add_argument("system", help="system description (TOML), see docs/analysis.md")
    p.add_argument(
        "--scenario",
        action="store_true",
        help="the file is a scenario for 'rtshield run': analyse the device it describes",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON (times in µs)")
    p.set_defaults(handler=run)


def load_model(path, scenario: bool):
    """The analysed system of ``path``: a system file, or with ``scenario`` a scenario's model."""
    from rtshield.analysis import load_system
    from rtshield.analysis.system import naming_file

    if not scenario:
        with naming_file(path):
            return load_system(path)
    from rtshield.analysis.model import system_from_scenario
    from rtshield.scenario import load_scenario

    sc = load_scenario(path)
    with naming_file(path):
        return system_from_scenario(sc)


def run(args) -> int:
    from rtshield.analysis import analyze_system
    from rtshield.analysis.system import naming_file

    system = load_model(args.system, args.scenario)
    with naming_file(args.system):
        rep = analyze_system(system)
    if args.json:
        print(json.dumps(rep.to_json(), indent=2))
    else:
        print(rep.table())
    return 0 if rep.schedulable else 1
