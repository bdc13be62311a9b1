"""Analysis versus simulation for a system file: the system as a scenario.

A system file (``rtshield analyze SYSTEM.toml``) states the analysis'
parameters — each thread's C and T, each interrupt source's model and costs.
To simulate it, :func:`scenario_of` writes the same device as a simulator
scenario, and the one mapping from a scenario to the analysis model
(:func:`rtshield.analysis.model.system_from_scenario`, docs/analysis.md §9)
is the only statement of how the scenario's device costs become analysis
parameters: :func:`scenario_of` checks that the scenario, mapped back,
bounds every thread of the system by at most the system's own WCRT (the
engine folds Regehr & Duongsaa's t_flip, t_setup and t_clear into its other
charges, so a mapped bound can be lower by those flips, never higher), and
refuses a system it cannot write so (:class:`SimUnsupported`, naming why).

The worst case is the scenario's own (:func:`rtshield.analysis.worstcase.worst_case_traffic`,
the traffic ``rtshield design --scenario`` simulates): synchronous release of
the critical task with the source's maximal bursts around it — a flood whose
first admitted interrupt meets a release (pure interrupts at the asserted
rate, strict limiter, hardware scheduler, Queue Mitigation); N interrupts just
before a limiter tick and N right after (bursty, and several bursty sources on
one shared timer: all bursts back to back); K − 1 packets just before a Burst
Mitigation slice ends and K right after.

Writing the system as a scenario (the inverse direction):

* every thread a periodic task with D = T; the lowest-priority thread is the
  scenario's critical task (its release is the one the worst case aligns), the
  others ``[[tasks]]``, all above the driver (priority 0);
* the interrupt source an ``isr_only`` ``[[sources]]`` entry (the handler does
  all the work), its protection the ``[mitigation]`` kind of
  :data:`rtshield.analysis.model.ENGINE_KIND`; Queue Mitigation keeps the
  driver, which drains the queue below every thread;
* the costs with ``isr_entry_exit`` 0: the handler's ``isr_work`` is t_int +
  work, ``mitigation_isr`` and ``timer_isr`` what §5.2 adds per interrupt and
  per timer interrupt for the source's model, the tick's whole interrupt
  ``tick_isr`` (a system without a tick: a platform without one).
"""

from __future__ import annotations

import dataclasses
import math

from rtshield.errors import UsageError

from .model import ENGINE_KIND, bound_system, simulate_scenario, system_from_scenario
from .report import Report, analyze_system
from .sources import burst_of
from .system import Source, System
from .worstcase import worst_case_traffic

__all__ = ["SimUnsupported", "scenario_of", "worst_case", "run_worst_case", "compare", "check"]

#: Source model → scenario ``[mitigation] kind``: the inverse of model.ENGINE_KIND,
#: for the models a simulated worst case is built for.
_KINDS = {
    model: kind
    for kind, model in ENGINE_KIND.items()
    if model in ("pure", "strict", "bursty", "hardware", "burst_mitigation", "queue_mitigation")
}

#: A preset's costs the scenario sets so that nothing else is charged.
_ZERO = ("mitigation_driver", "mitigation_report", "mitigation_poll", "isr_rx_batch",
         "driver_wake", "driver_handover")

#: The preset of a system file that names none (its costs are all overridden).
_DEFAULT_PLATFORM = "atmega103-tinyos"


class SimUnsupported(Exception):
    """The simulator cannot express this system (the message names the feature)."""


def _ticks(system: System) -> bool:
    return bool(system.tick and system.costs.get("tick") and "tick_isr" in system.costs)


def _sources(system: System) -> list[Source]:
    """The system's sources in engine order (highest interrupt priority first)."""
    srcs = sorted(system.sources, key=lambda x: -x.priority)
    if len(srcs) <= 1:
        if system.timers:
            raise SimUnsupported("simulator: a [[timer]] serves several bursty sources only")
        return srcs
    if len(system.timers) != 1:
        raise SimUnsupported(
            f"simulator: several sources only as bursty schedulers on one shared timer; "
            f"the system has {len(srcs)} sources and {len(system.timers) or 'no'} [[timer]]"
        )
    timer = system.timers[0]
    for src in srcs:
        if src.model != "bursty" or src.timer != timer.name:
            raise SimUnsupported(
                f"simulator: several sources only as bursty schedulers on one "
                f"shared timer; source {src.name} is {src.model!r}"
                + (f" on timer {src.timer!r}" if src.timer else "")
            )
    if timer.period is None:
        raise SimUnsupported(f"timer {timer.name}: open period")
    return srcs


def _check_expressible(system: System) -> list[Source]:
    if system.servers or system.global_limit or system.nic:
        raise SimUnsupported(
            "simulator: no deferrable servers, global limit or NIC queues in a system file "
            "(write the device as a scenario: rtshield analyze --scenario)"
        )
    threads = list(system.tasks)
    if any(t.level == "isr" for t in threads):
        raise SimUnsupported("simulator: no user interrupt tasks (only RX, timers, tick)")
    if not threads:
        raise SimUnsupported("simulator: no thread to observe")
    for t in threads:
        if t.deadline != t.T or t.J or t.B:
            raise SimUnsupported(f"simulator: task {t.name}: periodic tasks have D = T only")
    srcs = _sources(system)
    for src in srcs:
        if src.model not in _KINDS:
            raise SimUnsupported(f"simulator: source model {src.model!r} has no mitigation kind")
        if src.model == "pure" and src.min_interarrival is None:
            raise SimUnsupported("an unbounded source has no worst case to simulate")
        own_timer = src.burst is not None and src.burst_period is not None
        if src.model == "bursty" and len(srcs) == 1 and not own_timer:
            raise SimUnsupported("bursty source without its own burst and period")
        if src.driver_work and src.model != "queue_mitigation":
            raise SimUnsupported("simulator: driver work is not mapped (driver_work)")
    return srcs


def _ns(v: int) -> str:
    return f'"{int(v)}ns"'


def _rate(T: int) -> str:
    """A rate whose evenly spaced arrivals are at least ``T`` ns apart: its gap
    ``1e9 / rate`` (the simulator's double, whose arrival curve the mapping takes)
    is T or a hair more, never less."""
    r = 1e9 / T
    while int(1e9 // r) < T:
        r = math.nextafter(r, 0.0)
    return f'"{r!r}pps"'


def _source_costs(system: System, src: Source) -> tuple[int, int, int]:
    """(handler work, mitigation_isr, timer_isr) in ns so that the scenario's
    interrupts cost what §5.2 charges (entry/exit 0: t_int is in the handler)."""
    c = lambda k: system.cost(k, f"source.{src.name}")  # noqa: E731
    work = c("t_int") + src.work
    if src.model == "strict":
        return work, c("t_flip") + c("t_setup"), c("t_expire") + c("t_flip")
    if src.model == "bursty":
        return work, c("t_count"), c("t_expire") + c("t_clear") + c("t_flip")
    if src.model == "burst_mitigation":
        return work, c("t_count"), c("t_expire") + c("t_flip")
    return work, 0, 0


def scenario_of(system: System):
    """System file ``system`` as a simulator scenario (module doc), and the
    names of its threads: ``(scenario, {scenario task name: system thread name})``.

    Raises :class:`SimUnsupported` when the system cannot be written as a
    scenario, or when the scenario mapped back (the one mapping) would bound a
    thread above the system's own WCRT.
    """
    from rtshield.scenario import load_platform, loads_scenario

    srcs = _check_expressible(system)
    threads = sorted(system.tasks, key=lambda t: t.priority)
    low = threads[0].priority
    span = 3 * max(t.T for t in threads)
    platform = system.platform or _DEFAULT_PLATFORM
    _, preset, _ = load_platform(platform)
    crit, others = threads[0], threads[1:]
    lines = [
        "[scenario]",
        f'name = "{system.name}"',
        f'platform = "{platform}"',
        f"duration = {_ns(span)}",
        f"bin = {_ns(span)}",
        "seed = 1",
        "",
        "[critical]",
        f"period = {_ns(crit.T)}",
        f"work = {_ns(crit.C)}",
        f"priority = {crit.priority - low + 1}",
        "",
    ]
    src = srcs[0] if srcs else None
    work, mit, tmr = _source_costs(system, src) if src else (0, 0, 0)
    costs = {"isr_entry_exit": 0, "isr_per_packet": work, "mitigation_isr": mit,
             "timer_isr": tmr, "driver_per_packet": (src.driver_work if src else 0) or 1000}
    if src is None:
        costs["isr_per_packet"] = 1000  # no flow: never charged
    if srcs[1:]:
        costs["timer_isr"] = _shared_timer_cost(system, len(srcs))
    if "isr_queue_full" in preset:
        costs["isr_queue_full"] = work
    costs.update({k: 0 for k in _ZERO if k in preset})
    lines += ["[costs]"] + [f"{k} = {_ns(v)}" for k, v in costs.items()] + [""]
    queue = src.queue if src is not None and src.queue else 1 << 16
    lines += ["[driver]", "priority = 0", f"queue = {queue}", ""]
    if src is not None:
        lines += ["[mitigation]", f'kind = "{_KINDS[src.model]}"']
        if src.model == "strict":
            lines.append(f"min_interarrival = {_ns(src.min_interarrival)}")
        elif src.model == "hardware":
            lines.append(f"window = {_ns(src.min_interarrival)}")
        elif src.model == "bursty" and srcs[1:]:
            lines.append(f"period = {_ns(system.timers[0].period)}")
        elif src.model == "bursty":
            lines += [f"burst = {src.burst}", f"period = {_ns(src.burst_period)}"]
        elif src.model == "burst_mitigation":
            lines += [f"slice = {_ns(src.slice)}", f"capacity = {src.capacity}"]
        lines.append("")
        if src.model != "queue_mitigation":  # the handler does all the work
            for s in srcs:
                w = _source_costs(system, s)[0]
                lines += ["[[sources]]", f'name = "{s.name}"', f"isr_work = {_ns(w)}",
                          "isr_only = true"]
                if srcs[1:]:
                    lines.append(f"burst = {burst_of(system, s)}")
                lines.append("")
        for s in srcs:
            # a flood that never bounds the limiter (worst_case_traffic shapes it)
            flood = f'"{1e9 / max(1, (work + mit) // 4)!r}pps"'
            rate = _rate(s.min_interarrival) if s.model == "pure" else flood
            lines += ["[[flows]]", f'name = "{s.name}_flow"', 'protocol = "raw"',
                      'pattern = "constant"', f"rate = {rate}"]
            if src.model != "queue_mitigation":
                lines.append(f'source = "{s.name}"')
            lines.append("")
    for t in others:
        lines += ["[[tasks]]", f'name = "{t.name}"', 'kind = "periodic"',
                  f"priority = {t.priority - low + 1}", f"period = {_ns(t.T)}",
                  f"work = {_ns(t.C)}", ""]
    try:
        sc = loads_scenario("\n".join(lines), f"{system.path} (as a scenario)")
    except UsageError as e:
        raise SimUnsupported(f"simulator: {e}") from None
    tick = system.costs["tick"] if _ticks(system) else 0
    tick_isr = system.costs["tick_isr"] if _ticks(system) else 0
    sc = dataclasses.replace(
        sc, platform=dataclasses.replace(sc.platform, tick_ns=tick, tick_isr_ns=tick_isr)
    )
    names = {"critical": crit.name, **{t.name: t.name for t in others}}
    _same_model(system, sc, names)
    return sc, names


def _shared_timer_cost(system: System, n: int) -> int:
    """The shared timer's handler (Regehr §3.5): t_expire + n (t_clear + t_flip)."""
    c = lambda k: system.cost(k, "timer")  # noqa: E731
    return c("t_expire") + n * (c("t_clear") + c("t_flip"))


def _same_model(system: System, sc, names: dict[str, str]) -> None:
    """The scenario, through the one mapping, bounds no thread above the system."""
    try:
        mapped = analyze_system(bound_system(system_from_scenario(sc)))
    except UsageError as e:
        raise SimUnsupported(f"simulator: {e}") from None
    own = analyze_system(bound_system(system))
    for sn, tn in names.items():
        a, b = mapped.result.by_name(sn).wcrt, own.result.by_name(tn).wcrt
        if a is not None and b is not None and a > b:
            raise SimUnsupported(
                f"simulator: the scenario bounds {tn} by {a} ns, above the system's {b} ns "
                "(a cost the scenario model charges that the system does not)"
            )


def worst_case(system: System):
    """The system's scenario with the worst-case traffic, and its thread names."""
    sc, names = scenario_of(system)
    if not sc.flows:
        return sc, names  # threads only: released together at 0
    try:
        return worst_case_traffic(sc), names
    except UsageError as e:
        raise SimUnsupported(f"simulator: {e}") from None


def run_worst_case(system: System) -> dict[str, int]:
    """Simulate the worst case; maximum observed response time (ns) per thread."""
    sc, names = worst_case(system)
    try:
        obs = simulate_scenario(sc)
    except UsageError as e:  # the engine refused the configuration
        raise SimUnsupported(f"simulator: {e}") from None
    return {names[n]: v for n, v in obs.items() if n in names}


def compare(report: Report, observed: dict[str, int], closeness: float) -> list[str]:
    """Problems found: an observation above the WCRT, or below ``closeness`` of it."""
    problems = []
    for name, obs in observed.items():
        r = report.result.by_name(name)
        if r.wcrt is None:
            problems.append(f"{name}: no finite WCRT to compare with (observed {obs} ns)")
        elif obs > r.wcrt:
            problems.append(f"{name}: observed {obs} ns > WCRT {r.wcrt} ns (analysis unsafe)")
        elif obs < closeness * r.wcrt:
            problems.append(
                f"{name}: observed {obs} ns < {closeness:.0%} of WCRT {r.wcrt} ns "
                "(analysis or worst case not tight)"
            )
    return problems


def check(system: System, closeness: float) -> tuple[Report, dict[str, int], list[str]]:
    """Analyse, simulate the worst case, compare."""
    rep = analyze_system(system)
    obs = run_worst_case(system)
    return rep, obs, compare(rep, obs, closeness)
