"""Analysis versus simulation: run the simulator with the worst case the
analysis assumes and compare the observed maximum response times with the
computed WCRTs.

The worst-case pattern (docs/analysis.md §8): every analysed thread is
released at the same instant (synchronous release), and the interrupt source
delivers its maximal bursts around that instant —

* pure interrupts at an asserted rate, strict limiter, hardware scheduler: a
  flood whose first admitted interrupt coincides with the release;
* bursty limiter: the limiter's timer ticks at k·P from time 0; the flood
  starts N interrupts before the first tick, so N run just before it and N
  right after it (the back-to-back case the jitter T − C covers);
* Burst Mitigation: one packet opens a slice at time ``p0``; the flood starts
  so that the remaining K − 1 run just before the slice ends and K more right
  after it (Danicki's 2 × capacity);
* several bursty sources on one shared timer (Regehr & Duongsaa §3.5): every
  source floods from the same instant, so all their bursts (N_1 + … + N_k
  interrupts, highest interrupt priority first) run back to back just before
  the first tick and again right after each tick.

The system is mapped onto the engine's C configuration (``rtsim.h``) with
costs that make each simulated interrupt cost what the analysis charges for it
(entry/exit folded into the per-packet cost). What the engine cannot express
raises :class:`SimUnsupported` naming the missing feature, so the tests skip
with that reason and start running once the engine has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .report import Report, analyze_system
from .sources import burst_of
from .system import Source, System

__all__ = ["SimUnsupported", "Plan", "worst_case_plan", "run_worst_case", "compare"]

#: sim mitigation kind for each source model
_KINDS = {
    "pure": "RTSIM_MIT_NONE",
    "strict": "RTSIM_MIT_STRICT",
    "bursty": "RTSIM_MIT_BURSTY",
    "hardware": "RTSIM_MIT_COUNTDOWN",
    "burst_mitigation": "RTSIM_MIT_BURST",
    "queue_mitigation": "RTSIM_MIT_QUEUE",
}


class SimUnsupported(Exception):
    """The simulator cannot express this system (the message names the feature)."""


@dataclass
class Plan:
    """Worst-case arrivals: the release instant and the flows (piecewise rates)."""

    release_ns: int
    horizon_ns: int
    flows: list[list[tuple[int, float]]] = field(default_factory=list)  # [(t_ns, pps)]
    isr_ns: int = 0  # CPU time of one RX interrupt in the simulator (first source)
    #: several sources on a shared timer: the sources in engine order (index =
    #: RX line, highest interrupt priority first), each one's interrupt cost,
    #: and the engine source each flow arrives on; empty for one source
    sources: list[Source] = field(default_factory=list)
    source_isr_ns: list[int] = field(default_factory=list)
    flow_source: list[int] = field(default_factory=list)
    timer_period_ns: int = 0


def _costs(system: System, src: Source | None) -> dict[str, int]:
    """Engine costs so that each simulated interrupt costs what the analysis charges."""
    c = lambda k: system.cost(k, f"source.{src.name}" if src else "system")  # noqa: E731
    out = dict(isr_entry_exit=0, isr_per_packet=0, mitig_isr=0, timer_isr=0, tick_isr=0)
    if system.tick and "tick_isr" in system.costs:
        out["tick_isr"] = system.costs["tick_isr"]
    if src is None:
        return out
    out["isr_per_packet"] = c("t_int") + src.work
    if src.model == "strict":
        out["mitig_isr"] = c("t_flip") + c("t_setup")
        out["timer_isr"] = c("t_expire") + c("t_flip")
    elif src.model == "bursty":
        out["mitig_isr"] = c("t_count")
        out["timer_isr"] = c("t_expire") + c("t_clear") + c("t_flip")
    elif src.model == "burst_mitigation":
        out["mitig_isr"] = c("t_count")
        out["timer_isr"] = c("t_expire") + c("t_flip")
    return out


#: RX interrupt sources of the engine (RTSIM_MAX_SOURCES in rtsim.h)
MAX_SIM_SOURCES = 4


def _shared_timer_sources(system: System) -> list[Source]:
    """The sources of a shared-timer system, in engine order; [] when there is one source.

    The engine's bursty limiter serves every RX source from one periodic timer
    (rtsim.h, docs/model.md), so the sources must all be bursty schedulers on
    the system's one shared ``[[timer]]``.
    """
    if not system.timers and len(system.sources) <= 1:
        return []
    if not system.timers:
        raise SimUnsupported(
            f"simulator: several sources only as bursty schedulers on one "
            f"shared timer; the system has {len(system.sources)} sources "
            "and no [[timer]]"
        )
    if len(system.timers) != 1:
        raise SimUnsupported(
            f"simulator: one shared timer only (the engine's bursty limiter "
            f"has one); the system has {len(system.timers)} timers"
        )
    timer = system.timers[0]
    if not system.sources:
        raise SimUnsupported("simulator: a timer without sources")
    if len(system.sources) > MAX_SIM_SOURCES:
        raise SimUnsupported(
            f"simulator: at most {MAX_SIM_SOURCES} RX interrupt sources; the "
            f"system has {len(system.sources)}"
        )
    for src in system.sources:
        if src.model != "bursty" or src.timer != timer.name:
            raise SimUnsupported(
                f"simulator: several sources only as bursty schedulers on one "
                f"shared timer; source {src.name} is {src.model!r}"
                + (f" on timer {src.timer!r}" if src.timer else "")
            )
        if src.driver_work:
            raise SimUnsupported("simulator: driver work is not mapped (driver_work)")
    if timer.period is None:
        raise SimUnsupported(f"timer {timer.name}: open period")
    # engine line 0 is dispatched first: the highest analysis priority
    return sorted(system.sources, key=lambda x: -x.priority)


def _check_expressible(system: System) -> Source | None:
    multi = _shared_timer_sources(system)
    if system.servers or system.global_limit or system.nic:
        raise SimUnsupported(
            "simulator: no deferrable servers, global limit or NIC queues in rtsim_config"
        )
    if any(t.level == "isr" for t in system.tasks):
        raise SimUnsupported("simulator: no user interrupt tasks (only RX, timers, tick)")
    if len([t for t in system.tasks]) > 7:
        raise SimUnsupported("simulator: at most 7 periodic tasks besides the driver")
    src = system.sources[0] if system.sources else None
    if _ticks(system) and (src is None or src.model == "burst_mitigation" or multi):
        raise SimUnsupported(
            "simulator: the tick is simulated only with one source other than Burst "
            "Mitigation (its clock is tick-quantized); use tick = false"
        )
    if multi:
        return multi[0]
    if src is not None:
        if src.model not in _KINDS:
            raise SimUnsupported(f"simulator: source model {src.model!r} has no mitigation kind")
        if src.model == "pure" and src.min_interarrival is None:
            raise SimUnsupported("an unbounded source has no worst case to simulate")
        if src.model == "queue_mitigation":
            low = min((t.priority for t in system.tasks), default=0)
            if src.driver_priority is None or src.driver_priority >= low:
                raise SimUnsupported("simcheck: the driver must be below every analysed thread")
        elif src.driver_work:
            raise SimUnsupported("simulator: driver work is not mapped (driver_work)")
    return src


def _ticks(system: System) -> bool:
    return bool(system.tick and system.costs.get("tick"))


def worst_case_plan(system: System) -> Plan:
    """The arrival pattern and release instant the analysis assumes (see module doc)."""
    src = _check_expressible(system)
    periods = [t.T for t in system.tasks]
    span = 3 * max(periods) if periods else 10**7
    if src is None:
        return Plan(0, span)
    k = _costs(system, src)
    isr = k["isr_per_packet"] + k["mitig_isr"]
    gap = max(1, isr // 4)  # flood: the line is always pending again when an ISR ends
    flood = 1e9 / gap
    if src.model == "pure":
        T = src.min_interarrival
        release = T
        # first arrival one period after the flow starts (the engine's rule)
        return Plan(release, release + span, [[(0, 1e9 / T)]], isr)
    multi = _shared_timer_sources(system)
    if multi:
        return _shared_timer_plan(system, multi, span)
    if src.model in ("strict", "hardware", "queue_mitigation"):
        release = 1_000_000
        return Plan(release, release + span, [[(release - gap, flood)]], isr)
    if src.model == "bursty":
        P, N = src.burst_period, src.burst
        if P is None or N is None:
            raise SimUnsupported("bursty source without its own burst period")
        # the N-th interrupt ends 1 ns before the tick: nothing else fits between
        start = P - N * isr - gap - 1
        if start <= gap:
            raise SimUnsupported("burst longer than its period")
        return Plan(start + gap, start + gap + span, [[(start, flood)]], isr)
    # Burst Mitigation: one packet at p0 opens a slice.
    S, K = src.slice, src.capacity
    p0 = 1000
    one = [(0, 1e9 / p0), (p0 + p0 // 2, 0.0)]  # exactly one arrival, at p0
    start = p0 + S - (K - 1) * isr - gap - 1
    if start <= p0 + p0:
        raise SimUnsupported("capacity too large for the slice")
    return Plan(start + gap, start + gap + span, [one, [(start, flood)]], isr)


def _shared_timer_plan(system: System, srcs: list[Source], span: int) -> Plan:
    """Every source floods from one instant: all bursts end 1 ns before the first tick."""
    P = system.timers[0].period
    assert P is not None
    isrs = [_costs(system, s)["isr_per_packet"] + _costs(system, s)["mitig_isr"] for s in srcs]
    total = sum(burst_of(system, s) * c for s, c in zip(srcs, isrs, strict=True))
    gap = max(1, min(isrs) // 4)  # every line is pending again when its ISR ends
    start = P - total - gap - 1
    if start <= gap:
        raise SimUnsupported("the bursts of the shared timer's sources exceed its period")
    flows = [[(start, 1e9 / gap)] for _ in srcs]
    return Plan(
        start + gap,
        start + gap + span,
        flows,
        isrs[0],
        sources=list(srcs),
        source_isr_ns=isrs,
        flow_source=list(range(len(srcs))),
        timer_period_ns=P,
    )


def _shared_timer_cost(system: System, n: int) -> int:
    """The shared timer's handler (Regehr §3.5): t_expire + n (t_clear + t_flip)."""
    c = lambda k: system.cost(k, "timer")  # noqa: E731
    return c("t_expire") + n * (c("t_clear") + c("t_flip"))


def run_worst_case(system: System) -> dict[str, int]:
    """Simulate the worst case; maximum observed response time (ns) per thread."""
    from rtshield._native import load

    plan = worst_case_plan(system)
    src = system.sources[0] if system.sources else None
    ffi, lib = load()
    if not hasattr(lib, "rtsim_create"):
        raise SimUnsupported("simulator: not in this build (rtsim_create missing)")
    cfg = ffi.new("rtsim_config *")
    cfg.duration_ns = plan.horizon_ns
    cfg.bin_ns = plan.horizon_ns
    cfg.seed = 1
    cfg.n_cores = 1
    # the tick (whole interrupt in tick_isr, entry/exit 0 below): ticks at k * tick,
    # so one falls on the release instant (a multiple of the tick, see the plan)
    cfg.tick_ns = system.costs["tick"] if _ticks(system) else 0
    cfg.time_slicing = 0
    cfg.nic_kind = lib.RTSIM_NIC_EDGE
    cfg.queue_capacity = src.queue if src is not None and src.queue else 1 << 16
    k = _costs(system, src)
    cfg.costs.isr_entry_exit_ns = k["isr_entry_exit"]
    cfg.costs.isr_per_packet_ns = k["isr_per_packet"]
    cfg.costs.mitig_isr_ns = k["mitig_isr"]
    cfg.costs.timer_isr_ns = k["timer_isr"]
    cfg.costs.tick_isr_ns = k["tick_isr"]
    if plan.sources:
        # one engine source per analysed source; the handler does all the work
        # (an interrupt-level task), so no driver sees these packets
        cfg.n_sources = len(plan.sources)
        for j, s in enumerate(plan.sources):
            d = cfg.sources[j]
            d.isr_per_packet_ns = _costs(system, s)["isr_per_packet"]
            d.burst = burst_of(system, s)
            d.isr_only = 1
        cfg.costs.timer_isr_ns = _shared_timer_cost(system, len(plan.sources))
    cfg.costs.driver_per_packet_ns = (
        src.driver_work if src is not None and src.driver_work else 1000
    )
    threads = sorted(system.tasks, key=lambda t: t.priority)
    low = threads[0].priority if threads else 0
    names = []
    for i, t in enumerate(threads):
        d = cfg.tasks[i]
        d.kind = lib.RTSIM_TASK_PERIODIC
        d.priority = t.priority - low + 1  # the driver takes priority 0, below all
        d.period_ns, d.work_ns, d.offset_ns = t.T, t.C, plan.release_ns
        d.critical = 1 if i == 0 else 0
        if t.deadline != t.T:
            raise SimUnsupported("simulator: periodic tasks have D = T only")
        names.append(t.name)
    n = len(threads)
    if plan.flows:
        cfg.tasks[n].kind = lib.RTSIM_TASK_DRIVER
        cfg.tasks[n].priority = 0
        n += 1
    cfg.n_tasks = n
    cfg.n_flows = len(plan.flows)
    for i, pts in enumerate(plan.flows):
        f = cfg.flows[i]
        f.pattern = lib.RTSIM_PAT_PIECEWISE
        f.size = 60
        f.start_ns = 0
        if plan.flow_source:
            f.source = plan.flow_source[i]
        pts = ([(0, 0.0)] if pts[0][0] > 0 else []) + pts
        f.n_rates = len(pts)
        for j, (t_ns, pps) in enumerate(pts):
            f.rate_t_ns[j] = t_ns
            f.rates_pps[j] = pps
    m = cfg.mitigation
    kind = _KINDS[src.model] if src else "RTSIM_MIT_NONE"
    if not hasattr(lib, kind):
        raise SimUnsupported(f"simulator: no {kind}")
    m.kind = getattr(lib, kind)
    if src is not None:
        if src.model == "strict":
            m.min_interarrival_ns = src.min_interarrival
        elif src.model == "bursty" and plan.sources:
            m.burst, m.period_ns = burst_of(system, src), plan.timer_period_ns
        elif src.model == "bursty":
            m.burst, m.period_ns = src.burst, src.burst_period
        elif src.model == "hardware":
            m.window_ns = src.min_interarrival
        elif src.model == "burst_mitigation":
            m.slice_ns, m.capacity = src.slice, src.capacity
    err = lib.rtsim_config_error(cfg)
    if err != ffi.NULL:
        raise SimUnsupported(
            f"simulator: {ffi.string(err).decode()} (mitigation {src.model if src else 'none'})"
        )
    sim = lib.rtsim_create(cfg)
    if sim == ffi.NULL:
        raise SimUnsupported("simulator: rtsim_create failed")
    try:
        bins = ffi.new("rtsim_bin[4]")
        t = 0
        while t < plan.horizon_ns:
            t = min(plan.horizon_ns, t + plan.horizon_ns // 4 + 1)
            if lib.rtsim_run_until(sim, t) != 0:
                raise RuntimeError("simulator: run failed")
            lib.rtsim_take_bins(sim, bins, 4)
        out = {}
        st = ffi.new("rtsim_task_stats *")
        for i, name in enumerate(names):
            lib.rtsim_task_stats_get(sim, i, st)
            out[name] = int(st.max_response_ns)
        return out
    finally:
        lib.rtsim_destroy(sim)


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
