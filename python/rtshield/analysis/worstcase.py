"""Worst-case traffic: the flows that drive a scenario's protection to the
analysis' worst case (Regehr & Duongsaa §5; Danicki et al. §2.2).

``rtshield design --scenario`` (:mod:`.knobs`) simulates its answers with this
traffic, and the simulated check of a system file (:mod:`.simcheck`) floods the
scenario it writes with it: synchronous release of the critical task with the
protection's maximal bursts around it (:func:`worst_case_traffic` lists them per
protection).
"""

from __future__ import annotations

import dataclasses

from rtshield.errors import UsageError

from .costs import rx_isr_hooked
from .model import fold_source, traffic_peak_rate

__all__ = ["on_source", "tcp_flow", "worst_case_traffic"]


def tcp_flow(name: str, rate: float | None, begin: int, *, steps=None, step_every=None):
    """A TCP flow from ``begin`` (ns): at a constant ``rate`` (pkt/s), or in ``steps``."""
    from rtshield.scenario import Flow

    if steps is not None:
        return Flow(
            name, "tcp", 80, 60, 0, "steps", begin, rates_pps=steps, step_every_ns=step_every
        )
    return Flow(name, "tcp", 80, 60, 0, "constant", begin, rate_pps=rate)


def _isr_ns(sc) -> int:
    sc = fold_source(sc)
    k = sc.costs
    hook = k["mitigation_isr"] if rx_isr_hooked(sc.mitigation.kind) else 0
    return k["isr_entry_exit"] + k["isr_per_packet"] + hook


def _source_isr_ns(sc, src) -> int:
    """One interrupt of ``[[sources]]`` entry ``src``: entry/exit, its handler, the hook."""
    k = sc.costs
    hook = k["mitigation_isr"] if rx_isr_hooked(sc.mitigation.kind) else 0
    return k["isr_entry_exit"] + src.isr_work_ns + hook


def on_source(sc, flows):
    """Flows that arrive on the scenario's one ``[[sources]]`` entry, if it has one."""
    if not sc.sources:
        return flows
    return tuple(dataclasses.replace(f, source=sc.sources[0].name) for f in flows)


def _aligned_tick(earliest: int, lead: int, per: int, P: int) -> int:
    """The limiter tick (a multiple of ``per``, at or after ``earliest``) whose
    first flood interrupt, ``lead`` before it, is met soonest by a release of
    the critical task (a multiple of ``P``): releases and ticks are fixed grids
    from time 0, so the analysis' critical instant — a release at the flood's
    first interrupt — is reachable only up to this offset."""
    first = -(-earliest // per)
    best = None
    for k in range(first, first + 64):
        start = k * per - lead
        off = -start % P  # the first release at or after the flood's start
        if best is None or off < best[0]:
            best = (off, k * per)
        if off == 0:
            break
    assert best is not None
    return best[1]


def worst_case_traffic(sc, rate_pps: float | None = None):
    """Scenario ``sc`` with its flows replaced by the traffic that drives its
    protection to the analysis' worst case, and a run of a few periods.

    * no limiting parameter (none, Hysteresis, Budget): evenly spaced packets
      at ``rate_pps`` (default: the scenario's own peak) from time 0, so one
      arrives at every release of the critical task;
    * Queue Mitigation, strict, countdown: a flood (a packet every quarter
      ISR) from time 0 into an empty queue and idle limiter;
    * Burst Mitigation: one packet opens a slice; a flood from the third
      release, timed so that the slice ends (tick-quantized) once K − 1
      packets have run, and K more run right after it (Danicki's 2K);
    * bursty limiter: a flood whose N-th interrupt starts 1 ns before a timer
      tick, after a release, so N run before the tick, its handler waits for
      the last of them (a late clearing) and N run right after it.
    """
    m, kind = fold_source(sc).mitigation, sc.mitigation.kind
    P = sc.critical.period_ns
    isr = _isr_ns(sc)
    flood = 1e9 / max(1, isr // 4)
    tick = sc.platform.tick_ns
    r = 2 * P  # a release after the start-up
    if kind in ("none", "hysteresis", "budget"):
        if rate_pps is None:
            rate_pps = traffic_peak_rate(sc) or flood
        flows = (tcp_flow("flood", rate_pps, 0),)
    elif kind in ("queue", "strict", "countdown", "polling"):
        flows = (tcp_flow("flood", flood, 0),)
    elif kind == "burst":
        K, S = m.capacity, m.slice_ns
        end = r + (K - 1) * isr
        if tick:
            end = -(-end // tick) * tick
        p_open = end - S + (tick // 2 if tick else 0)
        while p_open < 0:
            r += P
            end += P
            p_open += P
        e = max(1, (tick or S) // 2)
        # one arrival 2/3 into a step of e, none in the next: exactly one packet at p_open
        open_flow = tcp_flow(
            "open", None, p_open - e * 2 // 3, steps=(1.5e9 / e, 0.0), step_every=e
        )
        flows = (open_flow, tcp_flow("flood", flood, r))
    elif kind == "bursty" and len(sc.sources) > 1:
        # Regehr & Duongsaa §3.5: every source floods from one instant, so the
        # bursts of all of them run back to back (first source first) and end
        # just before a tick of the shared timer
        isrs = [_source_isr_ns(sc, x) for x in sc.sources]
        total = sum((x.burst or m.burst) * c for x, c in zip(sc.sources, isrs, strict=True))
        gap = max(1, min(isrs) // 4)
        per = m.period_ns
        d = total + gap + 1
        t_k = _aligned_tick(r + d, d - gap, per, P)
        flows = tuple(
            dataclasses.replace(tcp_flow(f"flood_{x.name}", 1e9 / gap, t_k - d), source=x.name)
            for x in sc.sources
        )
        span = max(8 * P, r + 4 * P, t_k + 2 * per)
        bins = -(-span // P)
        return dataclasses.replace(sc, flows=flows, duration_ns=bins * P, bin_ns=P)
    elif kind == "bursty":
        N, per = m.burst, m.period_ns
        gap = max(1, isr // 4)
        # first arrival one gap in; the N-th ISR starts 1 ns before the tick, so the
        # tick's handler waits for it and clears the counter one interrupt late
        d = (N - 1) * isr + gap + 1
        t_k = _aligned_tick(r + d, d - gap, per, P)
        flows = (tcp_flow("flood", flood, t_k - d),)
        r = max(r, t_k + per - 4 * P)  # the run lasts two limiter periods past the tick
    else:
        raise UsageError(f"{sc.path}: no worst-case traffic for mitigation {kind!r}")
    flows = on_source(sc, flows)
    span = max(8 * P, r + 4 * P, (m.slice_ns or 0) * 3)
    bins = -(-span // P)
    return dataclasses.replace(sc, flows=flows, duration_ns=bins * P, bin_ns=P)
