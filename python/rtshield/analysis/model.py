"""One model, two answers: a simulator scenario as the analysis' task and
interrupt model.

:func:`system_from_scenario` is the one mapping from a scenario (the file
``rtshield run`` simulates) to a :class:`~.system.System` (what ``rtshield
analyze`` and ``rtshield design`` analyse). ``analyze`` and ``design`` use it
when they are given a scenario file, and the cross-check
(:func:`cross_check`) uses it to set the simulator's observation beside the
analytic bound of the same scenario. docs/analysis.md §9 describes it; the
choices are in docs/decisions/analysis-model.md.

Costs: each analysed interrupt costs what the engine charges for it
(:mod:`.costs`, which maps the scenario's cost table into Regehr & Duongsaa's
symbols).

Arrivals. A scenario's traffic bounds the interrupts: with one interrupt per
packet (the edge NIC) the line cannot fire more often than packets arrive.
Each flow is an arrival curve (:func:`.curves.flow_curve`: η⁺(Δ), the most
packets in any window Δ), the flows on one line add with no phase assumed,
and the source carries that curve (``Source.arrivals``): what the CPU sees is
the smaller of it (through the protection's gate) and what the protection
admits (:mod:`.sources`, :mod:`.mitigations`). A Poisson flow has no finite
curve: an unprotected source is then unbounded, and the report names the
knob that would bound it.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

from rtshield.errors import UsageError

from . import native
from .costs import engine_costs, platform_costs, rx_isr_hooked, rx_isr_work
from .curves import demand, flow_curve, line_curve, seen
from .mitigations import mitigation_seen
from .report import Report, analyze_system
from .rta import Task
from .sources import LATE_NOTE, cleared_after, line_seen
from .system import GlobalLimit, Server, Source, System, Timer

__all__ = [
    "ENGINE_KIND",
    "platform_costs",
    "fold_source",
    "rx_isr_hooked",
    "traffic_min_interarrival",
    "traffic_peak_rate",
    "KNOBS_TO_BOUND",
    "system_from_scenario",
    "simulate_scenario",
    "CrossCheck",
    "bound_system",
    "cross_check",
]

#: Scenario ``[mitigation] kind`` → analysis source model.
ENGINE_KIND = {
    "none": "pure",
    "strict": "strict",
    "bursty": "bursty",
    "countdown": "hardware",
    "burst": "burst_mitigation",
    "queue": "queue_mitigation",
    "hysteresis": "hysteresis_mitigation",
    "budget": "budget_mitigation",
    "polling": "polling",
}


def fold_source(sc):
    """A scenario with one ``[[sources]]`` entry as the same scenario without it:
    the source's handler work becomes ``isr_per_packet`` and its own burst or
    minimum interarrival the mitigation's (what the engine applies to it)."""
    if len(sc.sources) != 1:
        return sc
    from rtshield.scenario import CostTable

    src = sc.sources[0]
    m = sc.mitigation
    if src.burst is not None:
        m = dataclasses.replace(m, burst=src.burst)
    if src.min_interarrival_ns is not None:
        m = dataclasses.replace(m, min_interarrival_ns=src.min_interarrival_ns)
    costs = CostTable({**dict(sc.costs), "isr_per_packet": src.isr_work_ns})
    flows = tuple(dataclasses.replace(f, source=None) for f in sc.flows)
    return dataclasses.replace(sc, sources=(), mitigation=m, costs=costs, flows=flows)


def traffic_peak_rate(sc) -> float | None:
    """The flows' highest total rate over the run (pkt/s); None when a flow is
    Poisson (no peak) or nothing arrives."""
    if any(f.random for f in sc.flows):
        return None
    points = sorted({t for f in sc.flows for t, _ in f.schedule(sc.duration_ns)})
    peak = max((sum(f.rate_at(t, sc.duration_ns) for f in sc.flows) for t in points), default=0.0)
    return peak if peak > 0 else None


def traffic_min_interarrival(sc) -> int | None:
    """Shortest time between two RX interrupts the scenario's traffic allows (ns),
    were its flows one evenly spaced stream at their highest total rate: one
    packet per ``1/rate`` (rounded down). None when a flow is Poisson or nothing
    arrives. (The analysis itself takes the flows' arrival curves; this is the
    rate a worst-case run sends evenly.)"""
    peak = traffic_peak_rate(sc)
    return None if peak is None else max(1, int(1e9 // peak))


#: Per ``[mitigation] kind``: what bounds the RX line when the traffic does not
#: (a Poisson flow), named in the report of an unbounded source.
_LIMIT = (
    '[mitigation] kind = "strict" (min_interarrival), "bursty" (burst, period), '
    '"countdown" (window) or "burst" (capacity)'
)
KNOBS_TO_BOUND = {
    "none": f"bound it with {_LIMIT}; rtshield design --scenario --knob finds the value",
    "hysteresis": f"Hysteresis Mitigation bounds nothing (docs/analysis.md §3): bound it with "
    f"{_LIMIT}",
    "budget": f"Budget Mitigation bounds nothing (docs/analysis.md §3): bound it with {_LIMIT}",
    "queue": "Queue Mitigation bounds the ISR only above the driver "
    f"([driver] priority): below it, bound it with {_LIMIT}",
}
_RX_KNOB = "bound it with [rx] global_capacity and global_period (Behnke §5.5)"


#: the tick's interrupt priority in a scenario's model: above the protection's timer
#: (2) and the RX line (1), as the engine dispatches them
_TICK_PRIORITY = 3


def _unsupported(sc, what: str) -> UsageError:
    return UsageError(
        f"{sc.path}: {what}: not in the analysis' model of a scenario "
        "(docs/analysis.md §9 lists what is mapped)"
    )


def system_from_scenario(sc) -> System:
    """The analysis model of scenario ``sc`` (a :class:`rtshield.scenario.Scenario`).

    The critical task and the scenario's periodic tasks on the critical
    task's core are threads with D = T; the RX interrupt source and its
    protection become a :class:`Source` (``[mitigation] kind`` →
    :data:`ENGINE_KIND`); the network driver is a thread whose arrivals are
    bounded by the admitted interrupts; the platform's tick is an interrupt.
    What the analysis cannot express (several cores sharing work, several RX
    sources, combined protections, the receive path's flow servers) raises
    :class:`UsageError` naming it.
    """
    shared = len(sc.sources) > 1
    if shared and (sc.mitigation.kind != "bursty" or not all(x.isr_only for x in sc.sources)):
        raise _unsupported(
            sc,
            "[[sources]] (several RX interrupt sources other than isr_only sources "
            "on the bursty limiter's shared timer)",
        )
    isr_only = bool(sc.sources) and sc.sources[0].isr_only
    sc = fold_source(sc)
    m = sc.mitigation
    kind = m.kind
    if m.also:
        raise _unsupported(sc, f"[mitigation] also = {list(m.also)}")
    if sc.nic.kind != "edge" and not (sc.rx is not None and sc.nic.kind == "dma_ring"):
        # a descriptor ring announces a batch per interrupt: charged per frame
        # (entry/exit included) it is bounded by the edge NIC's model, which is
        # done for the receive path, where the global limit counts frames
        raise _unsupported(sc, f"[nic] kind = {sc.nic.kind!r} (only one interrupt per packet)")
    if sc.nic.interrupt != "frame":
        # one RX interrupt per tick for every frame since the last: frames wait up to a
        # tick and reach the driver in batches, which the per-frame model does not bound
        raise _unsupported(
            sc, f"[nic] interrupt = {sc.nic.interrupt!r} (RX interrupts on the tick)"
        )
    if sc.platform.tick_real_ns and sc.platform.tick_real_ns != sc.platform.tick_ns:
        # the periods the RTOS counts in ticks stretch with the late tick; the model's are
        # the nominal ones
        raise _unsupported(sc, "[platform] tick_real (a tick that runs late)")
    core = sc.critical.core
    costs = engine_costs(sc)
    s = System(
        name=sc.name,
        path=sc.path,
        nesting=False,
        clock_hz=sc.platform.clock_hz,
        costs=costs,
        platform=sc.platform.name,
        tick=sc.platform.tick_ns > 0,
        # the engine dispatches the lowest pending line first (sim/src/irq.c): the
        # tick (line 0), then the protection's timers, then the RX lines
        tick_priority=_TICK_PRIORITY,
    )
    report = costs["mitigation_report"] if native.shield_hooked(kind, "REPORT") else 0
    crit = sc.critical
    s.tasks.append(
        Task("critical", crit.work_ns + report, crit.period_ns, crit.period_ns, 0, 0, crit.priority)
    )
    for t in sc.tasks:
        if t.core != core:
            continue
        if t.kind == "periodic" and t.masks_rx and sc.flows and sc.nic.core == core:
            # its jobs hold the RX interrupts off for as long as they run, preempted or
            # not, and (one enable bit) can undo a protection's disable: no blocking
            # model of the handlers, no bound from the protection
            raise _unsupported(sc, f"[[tasks]] {t.name}: masks_rx (a task that masks the RX lines)")
        if t.kind == "periodic":
            s.tasks.append(Task(t.name, t.work_ns, t.period_ns, t.period_ns, 0, 0, t.priority))
        elif t.kind == "background" and t.priority >= crit.priority:
            raise _unsupported(
                sc, f"[[tasks]] {t.name}: an always-ready task at or above the critical task"
            )
        elif t.kind == "worker" and t.priority >= crit.priority and sc.rx is None:
            raise _unsupported(sc, f"[[tasks]] {t.name}: a worker at or above the critical task")
    if not sc.flows or sc.nic.core != core:
        return s  # no RX interrupt on this core
    if shared:
        _shared_timer(sc, s)
        return s
    if sc.rx is not None:
        if kind != "none":
            raise _unsupported(sc, f"[rx] with [mitigation] kind = {kind!r}")
        _rx_path(sc, s, costs)
        return s
    drv = sc.driver
    on_core = drv.core == core and not isr_only  # an isr_only source feeds no driver
    # worst case: every packet wakes the network task and is handed to a worker
    # (driver_wake, driver_handover: docs/model.md)
    drv_work = (
        costs["driver_per_packet"] + costs.get("driver_wake", 0)
        + costs.get("driver_handover", 0)
        + (costs["mitigation_driver"] if native.shield_hooked(kind, "TASK") else 0)
    )
    model = ENGINE_KIND[kind]
    src = Source(
        name="rx",
        model=model,
        priority=1,
        # a timer line is dispatched before the RX line, but for the strict limiter's,
        # whose re-enable takes effect at the expiry and which waits for a pending RX
        # line (the engine's late lines, docs/decisions/regehr.md)
        timer_priority=0 if model == "strict" else 2,
        work=rx_isr_work(costs),
    )
    src.arrivals = line_curve(sc.flows, sc.duration_ns)
    src.knob = KNOBS_TO_BOUND.get(kind, "")
    driver_T: int | None = None  # the driver's minimum interarrival, if it is a plain thread
    if model in ("pure", "hysteresis_mitigation", "budget_mitigation"):
        pass  # the traffic's arrival curve alone bounds the line
    elif model == "strict":
        src.min_interarrival = m.min_interarrival_ns
        driver_T = src.min_interarrival
    elif model == "hardware":
        src.min_interarrival = m.window_ns
        driver_T = src.min_interarrival
    elif model == "polling":
        # Regehr & Duongsaa §5.2: a timer every period finds work at every expiry
        src.min_interarrival = m.period_ns
        driver_T = m.period_ns
    elif model == "bursty":
        src.burst, src.burst_period = m.burst, m.period_ns
    elif model == "burst_mitigation":
        src.slice, src.capacity = m.slice_ns, m.capacity
        if on_core:
            src.driver_work, src.driver_priority = drv_work, drv.priority
    elif model == "queue_mitigation":
        src.queue, src.driver_priority = drv.queue, drv.priority
        if on_core:
            src.driver_work = drv_work
    s.sources.append(src)
    # the driver takes one packet per interrupt the CPU sees (what the ISR takes)
    if model in ("burst_mitigation", "queue_mitigation", "hysteresis_mitigation",
                 "budget_mitigation"):
        taken = mitigation_seen(s, src)
    else:
        taken = line_seen(s, src)
    if on_core and model in (
        "pure",
        "hysteresis_mitigation",
        "budget_mitigation",
        "strict",
        "hardware",
        "polling",
    ):
        # one packet per admitted interrupt, processed by the driver
        s.tasks.append(
            _driver(drv_work, driver_T, drv.priority, "one packet per admitted interrupt",
                    cap=demand(taken, drv_work), hint=src.hint())
        )
    if on_core and model == "hysteresis_mitigation" and m.sleep_ns:
        # the blocked driver wakes after each sleep for one loop iteration (docs/model.md)
        s.tasks.append(
            Task("driver.sleep", costs["mitigation_poll"], m.sleep_ns, None, 0, 0,
                 drv.priority, "thread", "driver",
                 "the blocked driver's loop: mitigation_poll after every sleep",
                 best_effort=True)
        )
    if on_core and model == "bursty":
        s.tasks.append(
            _driver(
                m.burst * drv_work,
                m.period_ns,
                drv.priority,
                "N packets per timer period" + LATE_NOTE,
                J=m.period_ns,
                cap=demand(taken, drv_work),
                **cleared_after(s, src),
            )
        )
    return s


def _shared_timer(sc, s: System) -> None:
    """Several ``isr_only`` sources under the bursty limiter (Regehr & Duongsaa
    §3.5): one bursty source per ``[[sources]]`` entry on one shared timer of
    the limiter's period; the first entry has the highest interrupt priority
    (the engine dispatches its sources in file order). Each interrupt costs
    ``isr_entry_exit + isr_work + mitigation_isr``, the shared timer
    ``isr_entry_exit + timer_isr`` (t_expire, with t_clear and t_flip folded)."""
    m = sc.mitigation
    n = len(sc.sources)
    s.timers.append(Timer("timer", m.period_ns, priority=n + 1))  # above the RX lines
    s.tick_priority = max(s.tick_priority, n + 2)
    for i, x in enumerate(sc.sources):
        s.sources.append(
            Source(
                name=x.name,
                model="bursty",
                priority=n - i,
                timer_priority=n + 1,
                # an isr_only source queues nothing: its own work, and the ISR's body
                work=x.isr_work_ns + sc.costs.get("isr_rx_batch", 0),
                burst=x.burst if x.burst is not None else m.burst,
                timer="timer",
                arrivals=line_curve(
                    [f for f in sc.flows if f.source == x.name], sc.duration_ns
                ),
            )
        )


def rx_frame_isr_ns(sc) -> int:
    """The longest RX interrupt of the receive path: entry/exit and the dearest
    per-frame path (plus the eager invalidation when the cache is eager)."""
    from rtshield.engine import RX_PATHS

    k = sc.costs
    eager = k["invalidate_eager"] if sc.rx.cache == "eager" else 0
    # one per-frame cost per execution path of the C enum rtsim_rx_path (docs/model.md),
    # each frame as if its own interrupt (entry/exit and the ISR's body, isr_rx_batch)
    return (k["isr_entry_exit"] + k.get("isr_rx_batch", 0)
            + max(k[f"rx_path_{p}"] for p in RX_PATHS) + eager)


def rx_packet_task_ns(sc) -> int:
    """The network task's CPU time for one packet of the receive path."""
    k = sc.costs
    lazy = k["invalidate_deferred"] if sc.rx.cache == "lazy" else 0
    # worst case: the packet wakes the network task (driver_wake, docs/model.md)
    return k["driver_per_packet"] + k.get("driver_wake", 0) + lazy


def _rx_path(sc, s: System, costs: dict[str, int]) -> None:
    """Behnke et al.'s receive path (§5): the demultiplexing ISR, bounded by
    the global limit (§5.5) or by the traffic; each flow above the critical
    task as a deferrable server (§2.4) of ``capacity`` packets per server
    period, or, without a server, at its own traffic rate."""
    rx, crit = sc.rx, sc.critical
    frame = rx_frame_isr_ns(sc)
    per = rx_packet_task_ns(sc)
    if rx.global_capacity:
        G, Pg = rx.global_capacity, rx.global_period_ns
        s.global_limit = GlobalLimit(
            capacity=G,
            period=Pg,
            packet_cost=frame,
            priority=1,
            polling_work=costs["poll_batch"]
            + G * (frame - costs["isr_entry_exit"] - costs.get("isr_rx_batch", 0)
                   + costs["poll_per_packet"]),
            polling_period=Pg,
            polling_priority=rx.poll_priority or 0,
            arrivals=line_curve(sc.flows, sc.duration_ns),
            backlog=_ring(sc),
        )
    else:
        src = Source(
            name="rx",
            model="pure",
            priority=1,
            timer_priority=1,
            work=frame - costs["isr_entry_exit"],
        )
        src.arrivals = line_curve(sc.flows, sc.duration_ns)
        src.knob = _RX_KNOB
        s.sources.append(src)
    workers = {t.flow: t for t in sc.tasks if t.kind == "worker"}
    for f in sc.flows:
        w = workers.get(f.name)
        work = per + (w.work_ns if w is not None else 0)
        prio = max(f.priority, w.priority if w is not None else 0)
        if prio < crit.priority and f.priority < crit.priority:
            continue  # below the critical task: no interference
        if f.capacity:
            s.servers.append(Server(f.name, f.capacity * work, f.server_period_ns, prio))
        else:
            # its packets as they arrive, and with a global limit those the ring held
            # while the line was off
            mine = seen(flow_curve(f, sc.duration_ns), bool(rx.global_capacity),
                        backlog=_ring(sc))
            s.tasks.append(
                _driver(work, None, prio, f"flow {f.name}: no server, at its arrival curve",
                        cap=demand(mine, work),
                        hint=f"{mine.reason}; bound it with a deferrable server: capacity "
                        f"and server_period on [[flows]] {f.name} (Behnke §5.6)")
            )
            s.tasks[-1] = dataclasses.replace(s.tasks[-1], name=f"flow_{f.name}", origin=f.name)


def _ring(sc) -> int:
    """Frames a descriptor ring can hold while the line is off (0: no ring)."""
    return sc.nic.ring or 0


def _driver(C: int, T: int | None, prio: int, note: str, J: int = 0, cap=None,
            hint: str = "", **after) -> Task:
    return Task("driver", C, T, None, J, 0, prio, "thread", "driver", note, best_effort=True,
                cap=cap, hint="" if cap is not None or T is not None else hint, **after)


# ------------------------------------------------------------------ cross-check


def simulate_scenario(sc) -> dict[str, int]:
    """Run ``sc`` in the simulator; the largest response time (ns) of every
    analysed periodic thread (the critical task and periodic ``[[tasks]]``)."""
    from rtshield.engine import simulate

    res = simulate(sc)
    out = {"critical": round(res.critical["max_response_us"] * 1000)}
    for t in sc.tasks:
        if t.kind == "periodic" and t.name in res.tasks:
            out[t.name] = round(res.tasks[t.name]["max_response_us"] * 1000)
    return out


@dataclass
class CrossCheck:
    """The analysis and the simulator on one scenario."""

    system: System
    report: Report
    observed: dict[str, int]  # ns per thread
    bounds: dict[str, int | None] = field(default_factory=dict)  # WCRT ns (None: no finite bound)

    def ratio(self, name: str) -> float | None:
        b = self.bounds.get(name)
        return None if not b else self.observed[name] / b

    def problems(self, closeness: float | None) -> list[str]:
        """An observation above its bound; with ``closeness``, one below that share of it."""
        out = []
        for name, obs in self.observed.items():
            b = self.bounds.get(name)
            if b is None:
                out.append(f"{name}: no finite analytic bound (observed {obs} ns)")
            elif obs > b:
                out.append(f"{name}: observed {obs} ns > bound {b} ns (analysis unsafe)")
            elif closeness is not None and obs < closeness * b:
                out.append(f"{name}: observed {obs} ns < {closeness:.0%} of bound {b} ns")
        return out


def bound_system(system: System) -> System:
    """The same system with every thread's deadline lifted to 100 periods.

    The analysis stops a response-time iteration at the deadline (the task
    is unschedulable then); to compare a simulated overrun with its bound the
    cross-check needs the fixed point itself, which exists whenever the
    utilization is below 1 (arbitrary deadlines, docs/analysis.md §1).
    """
    s = copy.deepcopy(system)
    s.tasks = [
        t if t.best_effort or t.T is None else dataclasses.replace(t, D=100 * t.T) for t in s.tasks
    ]
    return s


def cross_check(sc) -> CrossCheck:
    """Analyse scenario ``sc`` (through :func:`system_from_scenario`) and simulate it.

    ``report`` is the verdict at the real deadlines; ``bounds`` the WCRTs with
    the deadlines lifted (:func:`bound_system`), so an overrunning task has a
    bound too.
    """
    system = system_from_scenario(sc)
    rep = analyze_system(system)
    lifted = analyze_system(bound_system(system))
    obs = simulate_scenario(sc)
    bounds = {n: lifted.result.by_name(n).wcrt for n in obs}
    return CrossCheck(system, rep, obs, bounds)
