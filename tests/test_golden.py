"""Existing scenarios give the same numbers as before the receive path was added.

``tests/data/golden/NAME.json`` are the ``summary.json`` of
``scenarios/danicki2021/NAME.toml`` or ``scenarios/examples/NAME.toml`` written
before the receive path, the multiqueue NIC and the new drop reasons existed.
Every leaf value in a golden file must be equal in today's summary (built by
the same function ``rtshield run`` writes it with); keys added since (new drop
reasons, per-flow ``received`` …) are allowed.
"""

import json
from pathlib import Path

import pytest

from rtshield.outputs import normalize
from rtshield.runner import simulate
from rtshield.scenario import load_scenario

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "data" / "golden"


def scenario_of(name: str) -> Path:
    for folder in ("danicki2021", "examples"):
        p = REPO / "scenarios" / folder / f"{name}.toml"
        if p.is_file():
            return p
    raise FileNotFoundError(name)


def leaves(d, path=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from leaves(v, (*path, k))
    else:
        yield path, d


def lookup(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return KeyError
        d = d[k]
    return d


@pytest.mark.parametrize("golden", sorted(p.stem for p in GOLDEN.glob("*.json")))
def test_summary_matches_golden(golden):
    want = json.loads((GOLDEN / f"{golden}.json").read_text())
    # summary.json's own normalisation (rtshield run writes format_summary_json(summary()))
    got = normalize(simulate(load_scenario(scenario_of(golden))).summary())
    diffs = [
        f"{'.'.join(p)}: golden {v!r}, now {lookup(got, p)!r}"
        for p, v in leaves(want)
        if lookup(got, p) != v
    ]
    assert not diffs, "\n".join(diffs[:20])
