"""Scenarios for the falsification search of the analysis (tests/test_analysis_falsify.py,
issue 26): what the scenario format allows, drawn by hypothesis, and the checks
that the analysis' bounds hold in the simulator.

A scenario is one core of the ESP32 preset (or the mote's AVR) with the critical
task, sometimes another periodic task above or below it, the driver above, at or
below it, one protection of every kind the analysis maps (none, the strict,
bursty and countdown limiters, polling, Burst, Queue, Hysteresis and Budget
Mitigation, several isr_only sources on the bursty limiter's shared timer) and
one to three flows: constant at random rates and phases, steps, pyramids,
captures (the shipped MODBUS/TCP ones and bursty ones written by
tools/gen_modbus_pcaps.py), Poisson.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import random
import tempfile
from pathlib import Path

from hypothesis import strategies as st

from rtshield.analysis.model import bound_system, simulate_scenario, system_from_scenario
from rtshield.analysis.report import analyze_system
from rtshield.analysis.system import ModelInfeasible
from rtshield.errors import UsageError
from rtshield.scenario import loads_scenario

ROOT = Path(__file__).resolve().parent.parent
SHIPPED_CAPTURES = sorted((ROOT / "scenarios" / "behnke_hardware").glob("modbus_q*.pcap"))
KINDS = (
    "none", "strict", "bursty", "countdown", "polling", "burst", "queue", "hysteresis",
    "budget", "shared",
)


@functools.cache
def bursty_captures() -> tuple[str, ...]:
    """A few bursty MODBUS/TCP captures, written once per process with the project's
    capture writer (tools/gen_modbus_pcaps.py)."""
    spec = importlib.util.spec_from_file_location("gen_modbus_pcaps",
                                                  ROOT / "tools" / "gen_modbus_pcaps.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = Path(tempfile.mkdtemp(prefix="rtshield-falsify-"))
    paths = []
    for k, (cycles, burst, spacing, period) in enumerate(
        ((6, 40, 110, 30_000), (10, 8, 15, 7_000), (4, 120, 40, 40_000), (20, 3, 200, 2_500))
    ):
        p = out / f"bursty{k}.pcap"
        gen.write(p, gen.requests(502, gen.bursty_times(cycles, burst, spacing, period,
                                                        random.Random(k))))
        paths.append(str(p))
    return tuple(paths)


def _us(x: float) -> str:
    return f'"{int(x * 1000)}ns"'


@st.composite
def flow(draw, name: str, period_us: int, protected: bool, source: str | None = None) -> str:
    """One ``[[flows]]`` entry. Poisson only behind a protection (unprotected it is
    unbounded, which the check of its own verdict covers)."""
    kinds = ["constant", "constant", "steps", "pyramid", "pcap"]
    if protected:
        kinds.append("poisson")
    pat = draw(st.sampled_from(kinds))
    # phases: from 0, anywhere, or just before a release of the critical task
    before = draw(st.integers(0, 60))
    begin_ns = draw(st.sampled_from([
        0, 0, draw(st.integers(0, 3 * period_us)) * 1000,
        max(0, draw(st.integers(1, 3)) * period_us * 1000 - before * 1000),
        max(0, draw(st.integers(1, 3)) * period_us * 1000 - before),
    ]))
    lines = ["[[flows]]", f'name = "{name}"', 'protocol = "raw"', f'begin = "{begin_ns}ns"']
    if source is not None:
        lines.append(f'source = "{source}"')
    top = 300_000.0 if protected else 60_000.0
    rate = lambda: draw(st.one_of(st.floats(300.0, 60_000.0), st.floats(300.0, top)))  # noqa: E731
    if pat in ("constant", "poisson"):
        lines += [f'pattern = "{pat}"', f'rate = "{rate()!r}pps"']
    elif pat == "steps":
        rs = draw(st.lists(st.one_of(st.just(0.0), st.floats(300.0, 60_000.0)),
                           min_size=1, max_size=5))
        lines += ['pattern = "steps"', "rates = [" + ", ".join(f'"{r!r}pps"' for r in rs) + "]",
                  f'step_every = "{draw(st.integers(100, 4 * period_us))}us"']
    elif pat == "pyramid":
        start = draw(st.sampled_from([0.0, 500.0]))
        step = draw(st.floats(1000.0, 20_000.0))
        levels = draw(st.integers(1, 6))
        lines += ['pattern = "pyramid"', f'start = "{start!r}pps"',
                  f'peak = "{start + step * levels!r}pps"', f'step = "{step!r}pps"',
                  f'step_every = "{draw(st.integers(200, 2 * period_us))}us"']
    else:
        cap = draw(st.sampled_from(list(map(str, SHIPPED_CAPTURES)) + list(bursty_captures())))
        scale = draw(st.sampled_from([0.5, 1.0, 3.0, 10.0, 40.0]))
        loop = draw(st.booleans())
        lines += ['pattern = "pcap"', f'file = "{cap}"', f"scale = {scale}",
                  f"loop = {'true' if loop else 'false'}"]
    return "\n".join(lines) + "\n"


@st.composite
def scenario_text(draw) -> str:
    platform = draw(st.sampled_from(["esp32-freertos", "esp32-freertos", "ethernut-avr"]))
    period_us = draw(st.sampled_from([2000, 5000, 10_000]))
    work = draw(st.floats(0.05, 0.6)) * period_us
    kind = draw(st.sampled_from(KINDS))
    crit_prio = 3
    drv_prio = draw(st.sampled_from([1, 2, 3, 4]))
    queue = draw(st.sampled_from([5, 50, 500]))
    n_periods = draw(st.integers(4, 10))
    duration = n_periods * period_us
    lines = [
        "[scenario]", 'name = "falsify"', f'platform = "{platform}"',
        f'duration = "{duration}us"', f'bin = "{duration}us"', "seed = 1",
        "[critical]", f'period = "{period_us}us"', f"work = {_us(work)}",
        f"priority = {crit_prio}", "core = 0",
        "[driver]", f"priority = {drv_prio}", f"queue = {queue}", "core = 0",
        "[nic]", 'kind = "edge"', "core = 0",
    ]
    # costs the preset leaves out or sets, drawn: every charge the engine makes must be
    # one the analysis makes
    costs = draw(st.dictionaries(
        st.sampled_from(["isr_queue_full", "isr_rx_batch", "driver_wake", "driver_handover",
                         "mitigation_isr", "timer_isr", "isr_per_packet"]),
        st.integers(1, 40), max_size=3))
    if costs:
        lines.append("[costs]")
        lines += [f'{k} = "{v}us"' for k, v in sorted(costs.items())]
    other = draw(st.sampled_from([None, None, 1, 5]))
    mit = ["[mitigation]"]
    sources = []
    if kind == "shared":
        mit += ['kind = "bursty"', f'period = "{draw(st.integers(300, 5000))}us"',
                f"burst = {draw(st.integers(1, 10))}"]
        for k in range(draw(st.integers(2, 3))):
            sources.append(f'[[sources]]\nname = "s{k}"\nisr_only = true\n'
                           f'isr_work = "{draw(st.integers(1, 15))}us"\n'
                           f"burst = {draw(st.integers(1, 8))}\n")
    else:
        mit.append(f'kind = "{kind}"')
        if kind == "strict":
            mit.append(f'min_interarrival = "{draw(st.integers(15, 600))}us"')
        elif kind == "bursty":
            mit += [f'period = "{draw(st.integers(300, 5000))}us"',
                    f"burst = {draw(st.integers(1, 20))}",
                    f'timer = "{draw(st.sampled_from(["periodic", "lazy"]))}"']
        elif kind == "countdown":
            mit.append(f'window = "{draw(st.integers(15, 600))}us"')
        elif kind == "polling":
            mit.append(f'period = "{draw(st.integers(20, 1000))}us"')
        elif kind == "burst":
            mit += [f'slice = "{draw(st.integers(2, 20))}ms"',
                    f"capacity = {draw(st.integers(1, 60))}"]
        elif kind == "hysteresis":
            mit += ["block_below = 0.1", "unblock_above = 0.5", 'sleep = "1ms"']
        elif kind == "budget":
            mit.append(f"charge_isr = {draw(st.sampled_from(['true', 'false']))}")
    lines += mit
    lines += sources
    if other is not None:
        p2 = draw(st.sampled_from([1000, 3000, 7000, 20_000]))
        lines += ["[[tasks]]", 'name = "other"', 'kind = "periodic"', f"priority = {other}",
                  "core = 0", f'period = "{p2}us"',
                  f"work = {_us(draw(st.floats(0.02, 0.3)) * p2)}"]
    protected = kind not in ("none", "hysteresis", "budget")
    if kind == "shared":
        for k in range(len(sources)):
            for j in range(draw(st.integers(1, 2))):
                lines.append(draw(flow(f"f{k}_{j}", period_us, protected, source=f"s{k}")))
    else:
        for j in range(draw(st.integers(1, 3))):
            lines.append(draw(flow(f"f{j}", period_us, protected)))
    return "\n".join(lines) + "\n"


def load(text: str):
    """The scenario, or None where the format or the simulator refuses the draw (a rate
    change too fine for the simulator, say)."""
    try:
        return loads_scenario(text, "falsify.toml")
    except UsageError:
        return None


@dataclasses.dataclass
class Outcome:
    bounds: dict[str, int | None]
    observed: dict[str, int]
    schedulable: bool

    def above(self) -> list[str]:
        return [
            f"{n}: simulated {o} ns > bound {self.bounds[n]} ns"
            for n, o in self.observed.items()
            if self.bounds.get(n) is not None and o > self.bounds[n]
        ]


def adversarial(sc):
    """``sc`` with the protection's worst-case traffic (rtshield.analysis.worstcase)
    added to its own flows (at most the simulator's eight), or None."""
    from rtshield.analysis.worstcase import worst_case_traffic

    try:
        wc = worst_case_traffic(sc)
    except UsageError:
        return None
    flows = (wc.flows + sc.flows)[:8]
    return dataclasses.replace(wc, flows=flows)


def check(sc) -> Outcome | None:
    """Analyse (deadlines lifted, so an overrun has a bound too) and simulate ``sc``;
    None where the analysis does not model the draw."""
    try:
        system = system_from_scenario(sc)
        lifted = analyze_system(bound_system(system))
        verdict = analyze_system(system)
    except (ModelInfeasible, UsageError):
        return None
    try:
        obs = simulate_scenario(sc)
    except UsageError:
        return None
    bounds = {n: lifted.result.by_name(n).wcrt for n in obs}
    return Outcome(bounds, obs, verdict.schedulable)
