"""``rtshield analyze SYSTEM.toml [--json]``: worst-case response times."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="worst-case response-time analysis of a SYSTEM.toml",
        description=(
            "Expand interrupt sources, mitigations and servers into tasks (Regehr & Duongsaa "
            "§5.2; Danicki et al. §2.2; Behnke et al. §2.4) and compute every task's worst-case "
            "response time under fixed-priority preemptive scheduling; check the NIC "
            "moderation rules (Behnke et al. §7.3.2). Exit status 0 if schedulable, 1 if not."
        ),
    )
    p.add_argument("system", help="system description (TOML), see docs/analysis.md")
    p.add_argument("--json", action="store_true", help="print the result as JSON (times in µs)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from rtshield.analysis import analyze_system, load_system
    from rtshield.analysis.system import naming_file

    with naming_file(args.system):
        rep = analyze_system(load_system(args.system))
    if args.json:
        print(json.dumps(rep.to_json(), indent=2))
    else:
        print(rep.table())
    return 0 if rep.schedulable else 1
