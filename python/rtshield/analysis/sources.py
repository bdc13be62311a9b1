"""Interrupt-source models: one source → its analysis tasks (Regehr & Duongsaa §5.2).

Symbols (Table 2 of the paper; values come from the platform cost table):
``t_int`` interrupt prologue/epilogue, ``t_poll`` poll the device, ``t_setup``
arm a one-shot timer, ``t_expire`` take a timer interrupt, ``t_flip`` set or
clear an enable bit, ``t_count`` count and compare, ``t_clear`` clear the
counter; ``t_work`` is the handler's own work (``work`` in the system file).

* pure interrupts: interarrival 0 in the worst case — unbounded unless a
  rate is asserted (then ``C = t_int + t_work``, ``T = 1/rate``);
* pure polling: ``C = t_expire + t_poll + t_work``, ``T = t_arrival``;
* strict scheduler: handler ``C = t_int + t_flip + t_setup + t_work`` and
  re-enable timer ``C = t_expire + t_flip``, both ``T = t_arrival``;
* bursty scheduler: timer ``C = t_expire + t_clear + t_flip`` and a burst
  ``C = N (t_int + t_work + t_count) + t_flip``, both ``T`` = burst period;
  the burst has jitter ``T - C`` (or, with ``burst_model = "double"``, twice
  the WCET and no jitter); on a shared timer (§3.5) the timer clears every
  source's counter: ``C = t_expire + k (t_clear + t_flip)``;
* hardware scheduler: ``C = t_int + t_work``, ``T = t_arrival``.

Derived tasks are interrupt-level and *best effort*: their own response time
is reported, the deadlines that matter are those of the threads below them.

Traffic. A source may carry the arrival curve of the traffic that reaches its
line (``Source.arrivals``, from a scenario's flows): each task then also gets
a cap (:class:`.curves.Demand`) — the interrupts the CPU can see are at most
the traffic's, through the protection's gate (an arrival latched while the
line is off, :func:`.curves.gated`), and at most what libshield says the
protection admits (:class:`.curves.Admitted`). A pure interrupt is then
bounded by its traffic alone, or unbounded (a Poisson flow) with the knob that
would bound it named.
"""

from __future__ import annotations

from fractions import Fraction

from rtshield.errors import UsageError

from . import native
from .curves import Admitted, Curve, demand, seen
from .rta import Task
from .system import ModelInfeasible, Source, System, Timer

__all__ = [
    "expand_source",
    "expand_timer",
    "burst_of",
    "timer_sources",
    "admitted_curve",
    "cleared_after",
    "line_seen",
]



def admitted_curve(system: System, src: Source) -> Curve | None:
    """What the protection of ``src`` lets through in any window, from libshield's
    admission bounds (None: the model has no such bound, e.g. a pure interrupt)."""
    m = src.model
    if m == "strict" and src.min_interarrival:
        T = src.min_interarrival
        return Admitted(lambda d: native.strict_max_irqs(T, d), Fraction(1, T),
                        f"strict limiter: one per {T} ns")
    if m == "hardware" and src.min_interarrival:
        W = src.min_interarrival
        return Admitted(lambda d: native.countdown_max_irqs(W, d), Fraction(1, W),
                        f"countdown filter: one per {W} ns")
    if m == "bursty":
        try:
            N, P = burst_of(system, src), _period(system, src)
        except UsageError:
            return None
        # libshield's bound, N (⌈Δ / P⌉ + 1), at Δ + P: a clearing comes at most one
        # period late (the tick's handler arms the next tick after it runs,
        # cleared_after()), so clearings are at least 0 apart and a tick in between
        return Admitted(lambda d: native.bursty_max_irqs(N, P, d + P), Fraction(N, P),
                        f"bursty limiter: {N} per {P} ns")
    return None


def line_seen(system: System, src: Source) -> Curve | None:
    """The interrupts of ``src`` that can reach the CPU in any window: its traffic
    (``src.arrivals``) through the protection — a pure interrupt sees it as it is,
    a hardware filter delays it without regard to the CPU (a greedy shaper keeps
    the traffic's curve); a limiter that turns the line off lets one latched
    arrival more through (:func:`.curves.gated`; the strict limiter holds it at
    most t_min) — and at most what libshield says the protection admits. None:
    no traffic stated."""
    m = src.model
    if m == "pure":
        return seen(src.arrivals, False)
    if m == "hardware":
        return seen(src.arrivals, False, admitted_curve(system, src))
    hold = src.min_interarrival if m == "strict" else None
    adm = None if m == "polling" else admitted_curve(system, src)
    return seen(src.arrivals, True, adm, hold=hold, backlog=src.backlog)


#: how the bursty limiter's release jitter reads in the report (docs/analysis.md §2)
LATE_NOTE = " + the timer handler's lateness"


def cleared_after(system: System, src: Source) -> dict:
    """The bursty limiter's counter is cleared by its timer's handler, at the end of
    it, and a handler runs when the CPU lets it: with nesting off a tick that comes
    while another handler runs (an RX interrupt of this very line) is handled when
    that one ends, so one clearing can come late by the timer handler's response
    jitter (WCRT − C) and the next ones on time, and the bursts after them come
    that much less than a period after it. The tasks released by the clearings (the
    bursts, the driver's packets) inherit that lateness as release jitter
    (:attr:`.rta.Task.after`). Whatever the timer's response, libshield's tick
    handler clears the counters and arms the timer for the next tick of the
    period's grid after the instant it runs (``rts_bursty_on_tick_isr()``), so two
    clearings are separated by a tick: no more than one period late
    (``after_max``)."""
    P = _period(system, src)
    timer = src.timer if src.timer is not None else f"{src.name}.timer"
    return {"after": timer, "after_max": P}


def _cap(system: System, src: Source, cost: int, every: tuple[int, int] | None = None):
    """The cap of one of ``src``'s tasks: ``cost`` per interrupt the CPU can see."""
    return demand(line_seen(system, src), cost, every)


def _isr(name: str, C: int, T: int | None, prio: int, origin: str, note: str, **kw) -> Task:
    return Task(
        name, C, T, None, kw.pop("J", 0), 0, prio, "isr", origin, note, best_effort=True, **kw
    )


def timer_sources(system: System, timer: Timer) -> list[Source]:
    return [s for s in system.sources if s.timer == timer.name]


def burst_of(system: System, src: Source) -> int:
    """Burst size of a bursty source, rounded from max_rate on a shared timer (§3.5)."""
    if src.burst is not None:
        return src.burst
    if src.max_rate_hz is not None and src.timer is not None:
        timer = next(t for t in system.timers if t.name == src.timer)
        if timer.period is None:
            raise UsageError(f"timer.{timer.name}.period: open, cannot round source {src.name}")
        return native.round_burst(src.max_rate_hz, timer.rate_hz, period_ns=timer.period)
    raise UsageError(f'source.{src.name}.burst: open ("?"); use `rtshield design`')


def _period(system: System, src: Source) -> int:
    if src.timer is not None:
        timer = next(t for t in system.timers if t.name == src.timer)
        if timer.period is None:
            raise UsageError(f'timer.{timer.name}.period: open ("?"); use `rtshield design`')
        return timer.period
    if src.burst_period is None:
        raise UsageError(f'source.{src.name}.burst_period: open ("?"); use `rtshield design`')
    return src.burst_period


def expand_source(system: System, src: Source) -> list[Task]:
    """Tasks for one Regehr source model (pure, polling, strict, bursty, hardware)."""
    c = lambda k: system.cost(k, f"source.{src.name}")  # noqa: E731
    n, w, p = src.name, src.work, src.priority
    if src.model == "pure":
        C = c("t_int") + w
        if src.min_interarrival is None:
            cap = _cap(system, src, C)
            if cap is not None:
                return [
                    _isr(f"{n}.irq", C, None, p, n,
                         f"pure interrupts at the traffic's arrival curve ({src.arrivals.label})",
                         cap=cap)
                ]
            return [
                _isr(
                    f"{n}.irq",
                    C,
                    None,
                    p,
                    n,
                    "pure interrupts: unbounded, no rate asserted (Regehr §5.2)"
                    if src.arrivals is None
                    else f"pure interrupts: unbounded, {src.arrivals.reason}",
                    hint=src.hint(),
                )
            ]
        return [
            _isr(
                f"{n}.irq",
                C,
                src.min_interarrival,
                p,
                n,
                "pure interrupts at an asserted maximum rate",
                cap=_cap(system, src, C),
            )
        ]
    if src.model == "polling":
        C = c("t_expire") + c("t_poll") + w
        return [
            _isr(
                f"{n}.poll",
                C,
                src.min_interarrival,
                src.timer_priority,
                n,
                "polling timer: t_expire + t_poll + t_work",
                cap=_cap(system, src, w, every=(src.min_interarrival, c("t_expire") + c("t_poll"))),
            )
        ]
    if src.model == "hardware":
        C = c("t_int") + w
        return [
            _isr(
                f"{n}.irq",
                C,
                src.min_interarrival,
                p,
                n,
                "hardware countdown scheduler: t_int + t_work",
                cap=_cap(system, src, C),
            )
        ]
    if src.model == "strict":
        T = src.min_interarrival
        if T is None:
            raise UsageError(f'source.{n}.min_interarrival: open ("?"); use `rtshield design`')
        return [
            _isr(
                f"{n}.irq",
                c("t_int") + c("t_flip") + c("t_setup") + w,
                T,
                p,
                n,
                "strict: t_int + t_flip + t_setup + t_work",
                cap=_cap(system, src, c("t_int") + c("t_flip") + c("t_setup") + w),
            ),
            _isr(
                f"{n}.timer",
                c("t_expire") + c("t_flip"),
                T,
                src.timer_priority,
                n,
                "strict re-enable timer: t_expire + t_flip",
                # one expiry per admitted interrupt, T after it started (which may be
                # later than T after its arrival: the latched one, not the hold, bounds it)
                cap=demand(
                    seen(src.arrivals, True, admitted_curve(system, src), backlog=src.backlog),
                    c("t_expire") + c("t_flip"),
                ),
            ),
        ]
    if src.model == "bursty":
        N = burst_of(system, src)
        T = _period(system, src)
        per = c("t_int") + w + c("t_count")
        C = N * per + c("t_flip")
        if C > T:
            raise ModelInfeasible(
                f"source.{n}.burst: a burst of {N} takes {C} ns, longer than its period {T} ns"
            )
        tasks = []
        if src.burst_model == "double":
            tasks.append(
                _isr(
                    f"{n}.burst",
                    2 * C,
                    T,
                    p,
                    n,
                    f"bursty N={N}: WCET doubled for back-to-back bursts"
                    f"{LATE_NOTE}",
                    chunk=per + c("t_flip"),
                    cap=_cap(system, src, per + c("t_flip")),
                    **cleared_after(system, src),
                )
            )
        else:
            tasks.append(
                _isr(
                    f"{n}.burst",
                    C,
                    T,
                    p,
                    n,
                    f"bursty N={N}: one arrival per burst, jitter T - C{LATE_NOTE}",
                    J=T - C,
                    chunk=per + c("t_flip"),
                    cap=_cap(system, src, per + c("t_flip")),
                    **cleared_after(system, src),
                )
            )
        if src.timer is None:
            tasks.append(
                _isr(
                    f"{n}.timer",
                    c("t_expire") + c("t_clear") + c("t_flip"),
                    T,
                    src.timer_priority,
                    n,
                    "bursty timer: t_expire + t_clear + t_flip",
                )
            )
        return tasks
    raise AssertionError(src.model)


def expand_timer(system: System, timer: Timer) -> list[Task]:
    """A periodic timer shared by several bursty sources (Regehr §3.5)."""
    srcs = timer_sources(system, timer)
    if not srcs:
        return []
    if timer.period is None:
        raise UsageError(f'timer.{timer.name}.period: open ("?"); use `rtshield design`')
    where = f"timer.{timer.name}"
    C = system.cost("t_expire", where) + len(srcs) * (
        system.cost("t_clear", where) + system.cost("t_flip", where)
    )
    return [
        _isr(
            timer.name,
            C,
            timer.period,
            timer.priority,
            timer.name,
            f"shared timer of {len(srcs)} sources: t_expire + k (t_clear + t_flip)",
        )
    ]
