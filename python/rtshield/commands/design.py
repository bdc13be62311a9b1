"""``rtshield design SYSTEM.toml [--json]``: the safe boundary of one open parameter."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser(
        "design",
        help='find the most generous safe value of the parameter written "?"',
        description=(
            'For a system where one protection parameter is written "?" (a strict limiter\'s '
            "min_interarrival, a bursty limiter's burst, a server's budget, a Burst Mitigation "
            "capacity, or a shared timer's rate), find the boundary at which every task stays "
            "schedulable, with the margin. Exit status 0 if a safe value exists, 1 if not."
        ),
    )
    p.add_argument("system", help='system description (TOML) with one value written "?"')
    p.add_argument("--json", action="store_true", help="print the result as JSON (times in µs)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from rtshield.analysis.design import design_system
    from rtshield.analysis.system import load_system, naming_file

    with naming_file(args.system):
        d = design_system(load_system(args.system))
    if args.json:
        print(json.dumps(d.to_json(), indent=2))
    else:
        print(d.text())
    return 0 if d.value is not None else 1
