"""``rtshield run SCENARIO --out DIR``: simulate one scenario and write its results."""

from __future__ import annotations

import argparse

from rtshield.errors import UsageError
from rtshield.scenario import load_scenario


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="simulate one scenario and write summary, time series, figures and report",
        description=(
            "Simulate one scenario file (see docs/scenarios.md) on the device model and "
            "write DIR/summary.json, DIR/timeseries.csv and .parquet, PNG figures and "
            "DIR/report.html. A bad scenario is rejected with one line naming the key."
        ),
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml)")
    p.add_argument("--out", metavar="DIR", required=True, help="output directory")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    scenario = load_scenario(args.scenario)
    try:
        from rtshield.engine import simulate  # noqa: F401
    except ImportError:
        raise UsageError("run: the simulation engine is not available in this build") from None
    raise UsageError(f"run: {scenario.name}: writing results is not implemented yet")
