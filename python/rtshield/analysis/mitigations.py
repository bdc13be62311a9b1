"""Mitigations and servers as arrival models.

* **Burst Mitigation** (Danicki et al. §2.2): fixed slices of length ``S``
  with a packet capacity ``K``; over capacity the RX interrupt stays off until
  the next slice. It is a bursty source with ``N = K`` and ``T = S``; a
  capacity-full burst at the end of one slice followed by another at the start
  of the next (the paper's "up to twice as large") is covered by the jitter
  ``T - C`` of the burst. Per packet the ISR costs ``t_int + work + t_count``
  (the ISR reads the tick count and counts); the re-enable at the slice start
  costs ``t_expire + t_flip``. Driver work for accepted packets is a thread
  with ``C = K · driver_work``, ``T = S``, ``J = S``: its demand in any window
  Δ is ``K · driver_work · (⌈Δ/S⌉ + 1)``, exactly the number of packets the
  slices can let through.
* **Queue Mitigation** (Danicki et al. §2.2): a failed enqueue disables the RX
  interrupt until the driver has emptied the queue. While the driver cannot
  run — during the busy period of any task *above the driver's priority* — at
  most ``Q`` enqueues plus one failed attempt happen: a one-off interference
  of ``(Q + 1)(t_int + work) + t_flip``. For the driver itself and everything
  below it there is no bound (the driver re-enables the line as fast as it
  drains).
* **Hysteresis** and **Budget Mitigation** (Danicki et al. §2.2): no hard
  bound. Both stop networking only when the critical task reports its
  earliness, so the ISR's load depends on the critical task's cooperation and
  on the driver getting the CPU; the paper observed the ISR load drowning the
  driver. They are analysed as pure interrupts (unbounded unless a rate is
  asserted with ``max_rate``).
* **Deferrable server** (Behnke et al. §2.4): budget ``e`` per period ``p``
  as a task ``C = e``, ``T = p``, ``J = p - e``. Its demand in a window Δ,
  ``e ⌈(Δ + p - e)/p⌉``, never exceeds Behnke's bound ``e (⌈Δ/p⌉ + 1)``
  and covers the back-to-back case (budget used at the end of one period and
  again at the start of the next).
* **Global limit** of the receive path (Behnke et al. §5.5): at most
  ``capacity`` packets per period enter through the demultiplexing ISR; the
  ISR load is a burst task as for Burst Mitigation, the polling task a
  thread at its own priority.

Traffic. With an arrival curve on the source (``Source.arrivals``, a
scenario's flows) every task of a mitigation is also capped by what reaches
the CPU (:mod:`.sources` says how): each of these mitigations turns the line
off, so one latched arrival more than the traffic's curve; the accepted
packets are at most libshield's admission bound (Burst Mitigation). Queue
Mitigation and its driver, and Hysteresis and Budget Mitigation, have no
bound of their own: finite traffic bounds them, and below the driver too.
"""

from __future__ import annotations

from fractions import Fraction

from rtshield.errors import UsageError

from . import native
from .curves import Admitted, Curve, demand, seen
from .rta import Task
from .system import GlobalLimit, ModelInfeasible, Nic, Server, Source, System

__all__ = [
    "expand_mitigation",
    "expand_server",
    "expand_global_limit",
    "expand_nic",
    "BOUND_NOTES",
    "burst_mit_admitted",
    "global_limit_admitted",
    "mitigation_seen",
]

#: Per Danicki mitigation: does a hard bound exist? (for docs and reports)
BOUND_NOTES = {
    "burst_mitigation": "bounded: K packets per slice, 2K back to back (jitter T - C)",
    "queue_mitigation": "bounded for tasks above the driver: (Q + 1) ISR runs per driver drain",
    "hysteresis_mitigation": "no hard bound: depends on the critical task's earliness reports",
    "budget_mitigation": "no hard bound: budget comes from the critical task's earliness",
}


def burst_mit_admitted(capacity: int, slice_ns: int) -> Curve:
    """The packets a Burst Mitigation accepts in any window (libshield's bound), with
    slices at least ``slice_ns`` long in real time."""
    return Admitted(
        lambda d: native.burst_mit_max_packets(capacity, slice_ns, d),
        Fraction(capacity, slice_ns),
        f"Burst Mitigation: {capacity} per {slice_ns} ns slice",
    )


def global_limit_admitted(g: GlobalLimit) -> Curve:
    """The packets a global limit lets the driver take in any window (libshield)."""
    return Admitted(
        lambda d: native.global_limit_max_packets(g.capacity, g.period, d),
        Fraction(g.capacity, g.period),
        f"global limit: {g.capacity} per {g.period} ns",
    )


def mitigation_seen(system: System, src: Source, *, accepted: bool = False) -> Curve | None:
    """The RX interrupts of a Danicki mitigation's line that can reach the CPU in any
    window: the traffic, plus the arrival latched while the mitigation held the
    line off (each of them does); with ``accepted``, the packets a Burst
    Mitigation accepts, at most libshield's bound too. None: no traffic stated."""
    adm = None
    if accepted and src.model == "burst_mitigation" and src.capacity and src.slice:
        res = _resolution(system, src)
        if res < src.slice:
            adm = burst_mit_admitted(src.capacity, src.slice - res)
    return seen(src.arrivals, True, adm, backlog=src.backlog)


def _resolution(system: System, src: Source) -> int:
    """Burst Mitigation's clock resolution: its own, else the tick when analysed."""
    if src.clock_resolution is not None:
        return src.clock_resolution
    return system.costs["tick"] if system.tick and "tick" in system.costs else 0


def _isr(name, C, T, prio, origin, note, **kw) -> Task:
    return Task(
        name, C, T, None, kw.pop("J", 0), 0, prio, "isr", origin, note, best_effort=True, **kw
    )


def _thread(name, C, T, prio, origin, note, **kw) -> Task:
    return Task(
        name, C, T, None, kw.pop("J", 0), 0, prio, "thread", origin, note, best_effort=True, **kw
    )


def expand_mitigation(system: System, src: Source) -> list[Task]:
    """Tasks for a Danicki mitigation source."""
    c = lambda k: system.cost(k, f"source.{src.name}")  # noqa: E731
    n, p = src.name, src.priority
    if src.model == "burst_mitigation":
        if src.capacity is None:
            raise UsageError(f'source.{n}.capacity: open ("?"); use `rtshield design`')
        K, S = src.capacity, src.slice
        assert S is not None
        # The ISR reads the OS tick count: slice boundaries are only known to
        # one tick, so a slice can be up to one tick shorter in real time.
        res = _resolution(system, src)
        if res >= S:
            raise ModelInfeasible(
                f"source.{n}.slice: the clock resolution ({res} ns, the tick) is not shorter "
                "than the slice; set clock_resolution"
            )
        S = S - res
        per = c("t_int") + src.work + c("t_count")
        C = K * per + c("t_flip")
        if C > S:
            raise ModelInfeasible(
                f"source.{n}.capacity: {K} packets take {C} ns of ISR time, more than the "
                f"slice ({S} ns)"
            )
        tasks = [
            _isr(
                f"{n}.burst",
                C,
                S,
                p,
                n,
                f"Burst Mitigation K={K}: 2K back to back via jitter T - C"
                + (f"; slice shortened by the clock resolution {res} ns" if res else ""),
                J=S - C,
                chunk=per + c("t_flip"),
                # every ISR run takes an arrival, also one refused over capacity
                cap=demand(mitigation_seen(system, src), per + c("t_flip")),
            ),
            _isr(
                f"{n}.slice",
                c("t_expire") + c("t_flip"),
                S,
                src.timer_priority,
                n,
                "slice start: re-enable the RX interrupt",
            ),
        ]
        if src.driver_work:
            tasks.append(
                _thread(
                    f"{n}.driver",
                    K * src.driver_work,
                    S,
                    src.driver_priority or 0,
                    n,
                    "driver work of K packets per slice, jitter S",
                    J=S,
                    cap=demand(mitigation_seen(system, src, accepted=True), src.driver_work),
                )
            )
        return tasks
    if src.model == "queue_mitigation":
        if src.queue is None:
            raise UsageError(f'source.{n}.queue: open ("?"); use `rtshield design`')
        Q = src.queue
        per = c("t_int") + src.work
        tasks = [
            _isr(
                f"{n}.irq",
                (Q + 1) * per + c("t_flip"),
                None,
                p,
                n,
                f"Queue Mitigation Q={Q}: (Q+1) ISR runs per drain; bound holds above "
                f"driver priority {src.driver_priority}",
                once=True,
                bounded_above=src.driver_priority,
                chunk=per + c("t_flip"),
                cap=demand(mitigation_seen(system, src), per + c("t_flip")),
            ),
        ]
        if src.driver_work:
            tasks.append(
                _thread(
                    f"{n}.driver",
                    src.driver_work,
                    None,
                    src.driver_priority or 0,
                    n,
                    "driver: no rate bound (re-enables as fast as it drains)"
                    if src.arrivals is None or not src.arrivals.bounded
                    else "driver: one packet per interrupt the traffic can raise",
                    cap=demand(mitigation_seen(system, src), src.driver_work),
                    hint=src.hint(),
                )
            )
        return tasks
    # Hysteresis / Budget: pure interrupts unless a rate is asserted.
    C = c("t_int") + src.work
    cap = demand(mitigation_seen(system, src), C)
    note = BOUND_NOTES[src.model] + (
        "; analysed at the asserted rate"
        if src.min_interarrival is not None
        else ""
        if cap is None
        else f"; analysed at the traffic's arrival curve ({src.arrivals.label}), + 1 latched"
    )
    return [
        _isr(f"{n}.irq", C, src.min_interarrival, p, n, note, cap=cap,
             hint="" if cap is not None or src.min_interarrival else src.hint())
    ]



def expand_server(server: Server) -> list[Task]:
    """A deferrable server (Behnke §2.4) as a task with jitter p - e."""
    if server.budget is None:
        raise UsageError(f'server.{server.name}.budget: open ("?"); use `rtshield design`')
    e, p = server.budget, server.period
    return [
        _thread(
            server.name,
            e,
            p,
            server.priority,
            server.name,
            "deferrable server: C = e, T = p, J = p - e (back-to-back budgets)",
            J=p - e,
        )
    ]


def expand_global_limit(g: GlobalLimit) -> list[Task]:
    """Behnke §5.5: the ISR admits at most ``capacity`` packets per period. With the
    frames' arrival curve, the ISR also takes at most those that arrive, plus the
    ring's backlog left while the line was off, and at most the limit's bound."""
    C = g.capacity * g.packet_cost
    cap = demand(
        seen(g.arrivals, True, global_limit_admitted(g), backlog=g.backlog), g.packet_cost
    )
    tasks = [
        _isr(
            "global_limit.isr",
            C,
            g.period,
            g.priority,
            "global_limit",
            f"global limit: {g.capacity} packets per period, jitter T - C",
            J=max(0, g.period - C),
            chunk=g.packet_cost,
            cap=cap,
        )
    ]
    if g.polling_work:
        tasks.append(
            _thread(
                "global_limit.poll",
                g.polling_work,
                g.polling_period or g.period,
                g.polling_priority,
                "global_limit",
                "polling task",
            )
        )
    return tasks


def expand_nic(nic: Nic) -> list[Task]:
    """Behnke §7.3.2: every packet-timer expiry of every queue raises an interrupt."""
    if nic.irq_cost is None:
        return []
    return [
        _isr(
            f"nic.{q.name}",
            nic.irq_cost,
            q.t_pack,
            nic.priority,
            "nic",
            "one interrupt per packet-timer expiry (worst case)",
        )
        for q in nic.queues
    ]
