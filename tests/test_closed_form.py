"""Arrivals counted in closed form give exactly the event-by-event results.

The engine counts arrivals that are lost without changing anything but
counters (an edge NIC's RX line already pending or disabled, a full DMA
ring) in bulk instead of one event each (sim/src/engine.c
``lost_arrivals``; docs/decisions/closed-form-arrivals.md). Every shipped
scenario the simulator runs goes through both paths here, and the summary
(what ``summary.json`` holds) and every time series (what the figures draw)
must be identical.
"""

from pathlib import Path

import numpy as np
import pytest

from rtshield.engine import simulate
from rtshield.errors import UsageError
from rtshield.outputs import normalize
from rtshield.scenario import load_scenario

REPO = Path(__file__).resolve().parent.parent


def shipped_scenarios() -> list[Path]:
    """Every scenarios/**.toml that is a simulator scenario (the analysis
    folder holds system descriptions for ``rtshield analyze``, the calibration
    folder calibration files for ``rtshield calibrate``, which the loader
    refuses with a UsageError saying so)."""
    out = []
    for p in sorted((REPO / "scenarios").rglob("*.toml")):
        try:
            load_scenario(p)
        except UsageError as e:
            assert "system description" in str(e) or "calibration file" in str(e), f"{p}: {e}"
            continue
        out.append(p)
    return out


SCENARIOS = shipped_scenarios()


def test_the_shipped_scenarios_are_found():
    folders = {p.parent.name for p in SCENARIOS}
    assert {"danicki2021", "examples", "behnke_software"} <= folders
    assert len(SCENARIOS) >= 20


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_closed_form_equals_event_by_event(path):
    sc = load_scenario(path)
    fast = simulate(sc)
    exact = simulate(sc, exact_arrivals=True)
    assert exact.engine["arrivals_batched"] == 0
    # every arrival the closed form counted is one event fewer
    assert fast.engine["events"] + fast.engine["arrivals_batched"] == exact.engine["events"]
    assert normalize(fast.summary()) == normalize(exact.summary())
    assert fast.timeseries.keys() == exact.timeseries.keys()
    for k, v in exact.timeseries.items():
        np.testing.assert_array_equal(fast.timeseries[k], v, err_msg=k)


def test_the_danicki_pyramid_takes_the_closed_form():
    """The fast path is really taken where the study needs it: most lost
    arrivals of queue_500 are counted without an event."""
    fast = simulate(load_scenario(REPO / "scenarios" / "danicki2021" / "queue_500.toml"))
    lost = fast.summary()["totals"]["irq_lost"]
    assert fast.engine["arrivals_batched"] > lost // 2


def test_a_trace_sees_every_arrival():
    """With a trace every arrival is an event (each has its record)."""
    sc = load_scenario(REPO / "scenarios" / "examples" / "constant_flood.toml")
    traced = simulate(sc, trace=1 << 20)
    assert traced.engine["arrivals_batched"] == 0
    assert normalize(traced.summary()) == normalize(simulate(sc).summary())
