"""Arrival curves (rtshield.analysis.curves, issue 26): each pattern's η⁺(Δ)
bounds the arrivals the simulator actually makes (read from its event trace),
exactly where the curve is exact (constant flows, captures), and δ⁻(n) is its
pseudo-inverse; the protections' admitted curves are libshield's."""

from __future__ import annotations

import itertools
from fractions import Fraction

import dpkt
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtshield.analysis import native
from rtshield.analysis.curves import (
    Delayed,
    Latched,
    Min,
    Periodic,
    Steps,
    Sum,
    Trace,
    Unbounded,
    flow_curve,
    line_curve,
)
from rtshield.engine import TRACE_KINDS, simulate
from rtshield.scenario import loads_scenario

ARRIVAL = TRACE_KINDS.index("arrival")


def _scenario(flows: str, duration_ms: int = 20):
    return loads_scenario(
        f"""
[scenario]
name = "curves"
platform = "esp32-freertos"
duration = "{duration_ms}ms"
bin = "{duration_ms}ms"
seed = 1
[critical]
period = "10ms"
work = "1us"
[driver]
queue = 100000
[nic]
kind = "edge"
[mitigation]
kind = "none"
{flows}
""",
        "curves.toml",
    )


def _arrivals(sc) -> dict[int, np.ndarray]:
    """Arrival times per flow index, from the simulator's trace."""
    res = simulate(sc, trace=1_000_000)
    tr = res.trace
    assert res.trace_lost == 0
    arr = tr[tr["kind"] == ARRIVAL]
    return {int(i): np.sort(arr["t_ns"][arr["arg"] == i].astype(np.int64)) for i in set(arr["arg"])}


def _max_window(times: np.ndarray, delta: int) -> int:
    """Most of ``times`` in any window [t, t + delta) (brute force over starts)."""
    if times.size == 0:
        return 0
    ends = np.searchsorted(times, times + delta, side="left")
    return int((ends - np.arange(times.size)).max())


DELTAS = (1, 999, 10_000, 33_333, 100_000, 250_001, 1_000_000, 3_000_000)


def _flow(name, pattern_keys: str) -> str:
    return f'[[flows]]\nname = "{name}"\n{pattern_keys}\n'


# ---------------------------------------------------------------- evenly spaced


@pytest.mark.parametrize("rate", [1000.0, 14000.0, 33333.3, 150000.0, 7.0e5 / 3])
def test_constant_flow_is_exact(rate):
    sc = _scenario(_flow("a", f'pattern = "constant"\nrate = "{rate!r}pps"\nbegin = "37us"'))
    (t,) = _arrivals(sc).values()
    c = flow_curve(sc.flows[0], sc.duration_ns)
    assert isinstance(c, Periodic)
    for d in DELTAS:
        # the run's windows reach the curve (⌈Δ / G⌉, the worst phase of the gap's
        # fraction) or one less when that phase does not come within the run
        assert c.eta(d) - 1 <= _max_window(t, d) <= c.eta(d), d
    # δ⁻ is the pseudo-inverse: n arrivals fit in Δ exactly when δ⁻(n) < Δ
    for n in (2, 3, 10, 57):
        if n > t.size:
            continue
        dn = c.delta_min(n)
        assert c.eta(dn + 1) >= n > c.eta(dn)
        # the run's closest n arrivals: δ⁻(n) = ⌊(n − 1) G⌋ or a nanosecond more
        assert dn <= int((t[n - 1 :] - t[: t.size - n + 1]).min()) <= dn + 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rates=st.lists(
        st.one_of(st.just(0.0), st.floats(2000, 200_000)), min_size=1, max_size=6
    ),
    every_us=st.integers(50, 3000),
    begin_us=st.integers(0, 500),
)
def test_steps_bound_the_simulated_arrivals(rates, every_us, begin_us):
    rs = ", ".join(f'"{r!r}pps"' for r in rates)
    sc = _scenario(
        _flow("s", f'pattern = "steps"\nrates = [{rs}]\nstep_every = "{every_us}us"\n'
                   f'begin = "{begin_us}us"')
    )
    arr = _arrivals(sc)
    t = arr.get(0, np.zeros(0, dtype=np.int64))
    c = flow_curve(sc.flows[0], sc.duration_ns)
    for d in DELTAS:
        got = _max_window(t, d)
        bound = c.eta(d)
        assert got <= bound, (d, got, bound)
        # the envelope is tight up to the one arrival a step change can add
        if t.size and d < every_us * 1000:
            assert bound <= max(got, 1) + 1 + d // (every_us * 1000), (d, got, bound)


def test_pyramid_bounds_the_simulated_arrivals():
    sc = _scenario(
        _flow("p", 'pattern = "pyramid"\nstart = "0pps"\npeak = "120000pps"\nstep = "20000pps"\n'
                   'step_every = "2ms"'),
        duration_ms=30,
    )
    (t,) = _arrivals(sc).values()
    c = flow_curve(sc.flows[0], sc.duration_ns)
    for d in DELTAS:
        assert _max_window(t, d) <= c.eta(d) <= _max_window(t, d) + 1


def test_flows_add_without_a_phase():
    """Two 10 kpps flows 3 µs apart arrive in pairs: the sum of their curves bounds
    the pairs, and one evenly spaced 20 kpps stream (the old model) does not."""
    sc = _scenario(
        _flow("a", 'pattern = "constant"\nrate = "10000pps"')
        + _flow("b", 'pattern = "constant"\nrate = "10000pps"\nbegin = "3us"')
    )
    arr = _arrivals(sc)
    both = np.sort(np.concatenate(list(arr.values())))
    c = line_curve(sc.flows, sc.duration_ns)
    assert isinstance(c, Sum)
    even = Periodic(Fraction(10**9, 20_000))
    for d in DELTAS:
        assert _max_window(both, d) <= c.eta(d)
    assert _max_window(both, 3001) == 2 > even.eta(3001)


# ---------------------------------------------------------------- captures


def _frame() -> bytes:
    return bytes(dpkt.ethernet.Ethernet(src=b"\x02\0\0\0\0\1", dst=b"\x02\0\0\0\0\x0a",
                                        type=0x88B5, data=b"\0" * 46))


def _write(path, times_ns):
    with open(path, "wb") as fh:
        w = dpkt.pcap.Writer(fh, nano=True)
        for t in times_ns:
            w.writepkt(_frame(), ts=t / 1e9 + 1000)


@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_capture_curve_is_exact_for_the_replay(tmp_path, loop, scale):
    rng = np.random.default_rng(7)
    gaps = np.where(rng.random(300) < 0.2, rng.integers(1, 2_000, 300),
                    rng.integers(20_000, 400_000, 300))
    times = np.cumsum(gaps)
    _write(tmp_path / "b.pcap", times.tolist())
    sc = _scenario(
        _flow("cap", f'pattern = "pcap"\nfile = "{tmp_path / "b.pcap"}"\nscale = {scale}\n'
                     f"loop = {'true' if loop else 'false'}\nbegin = \"1ms\""),
        duration_ms=120,
    )
    (t,) = _arrivals(sc).values()
    c = flow_curve(sc.flows[0], sc.duration_ns)
    assert isinstance(c, Trace)
    for d in DELTAS + (50_000_000,):
        got = _max_window(t, d)
        assert got <= c.eta(d), d
        if not loop:  # one pass, all replayed within the run: exactly the trace's maximum
            assert got == c.eta(d), d


def test_trace_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        times = np.sort(rng.integers(0, 5_000, rng.integers(1, 40)))
        period = int(times[-1]) + int(rng.integers(1, 300))
        looped = Trace(times.tolist(), period)
        one = Trace(times.tolist())
        ext = np.concatenate([times + k * period for k in range(12)])
        for d in (1, 7, 50, 333, 999, period, period + 1, 3 * period - 2):
            assert one.eta(d) == _max_window(times, d)
            # every window of the periodic extension, away from its ends
            starts = ext[ext < 6 * period]
            ends = np.searchsorted(ext, starts + d, side="left")
            assert looped.eta(d) == int((ends - np.searchsorted(ext, starts)).max())
        for n in range(2, 2 * times.size + 2):
            dn = looped.delta_min(n)
            assert looped.eta(dn + 1) >= n > looped.eta(dn)


# ---------------------------------------------------------------- operations


def test_poisson_is_unbounded_and_named():
    sc = _scenario(_flow("noise", 'pattern = "poisson"\nrate = "5000pps"')
                   + _flow("a", 'pattern = "constant"\nrate = "1000pps"'))
    c = line_curve(sc.flows, sc.duration_ns)
    assert c.eta(1000) is None and not c.bounded and c.rate is None
    assert "noise is Poisson" in c.reason
    assert isinstance(flow_curve(sc.flows[0], sc.duration_ns), Unbounded)


def test_operations():
    p = Periodic(100)
    assert [p.eta(d) for d in (0, 1, 100, 101)] == [0, 1, 1, 2]
    assert Latched(p).eta(1) == 2 and Latched(p).eta(0) == 0
    assert Latched(p, 5).delta_min(6) == 0 and Latched(p, 5).delta_min(7) == 100
    assert Delayed(p, 50).eta(60) == 2 and Delayed(p, 50).delta_min(2) == 50
    m = Min((Latched(p), Periodic(1000)))
    assert m.eta(150) == 1 and m.delta_min(2) == 1000
    assert Sum((p, Periodic(30))).eta(100) == 1 + 4
    assert Periodic(Fraction(10**9, 3)).delta_min(4) == 10**9
    assert Periodic(10, jitter=25).eta(1) == 3 and Periodic(10, jitter=25).delta_min(3) == 0
    for c in (Sum((p, Periodic(Fraction(77, 3)))), Steps([(0, 0.0), (50, 2e7), (500, 1e6)])):
        for n in range(2, 40):
            dn = c.delta_min(n)
            assert c.eta(dn + 1) >= n > c.eta(dn)


def test_admitted_curves_are_libshields():
    for d in (1, 249, 250, 251, 10_000):
        assert native.strict_max_irqs(250, d) == -(-d // 250)
        assert native.countdown_max_irqs(250, d) == -(-d // 250)
        assert native.bursty_max_irqs(4, 1000, d) == 4 * (-(-d // 1000) + 1)
        assert native.burst_mit_max_packets(3, 500, d) == 3 * (-(-d // 500) + 1)
        assert native.global_limit_max_packets(3, 500, d) == 3 * (-(-d // 500) + 1)
        assert native.nic_max_irqs(30, 20, 0, d) == -(-d // 20)
    assert native.strict_max_irqs(0, 5) is None and native.nic_max_irqs(30, 20, 2, 5) is None


@pytest.mark.parametrize("N, P, C", list(itertools.product((1, 4), (1000, 3333), (10, 250))))
def test_task_models_never_exceed_what_libshield_admits(N, P, C):
    """Regehr & Duongsaa's bursty task (one burst of N per P, jitter P − C) asks for no
    more interrupts in any window than libshield's admission bound allows."""
    for w in range(1, 4 * P, 7):
        bursts = -(-(w + P - C) // P)
        assert N * bursts <= native.bursty_max_irqs(N, P, w)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 3_000_000), st.sampled_from([0.0, 1_000.0, 7_777.7,
                                                                   30_000.0, 150_000.0])),
             min_size=1, max_size=8),
    st.lists(st.integers(1, 20_000_000), min_size=1, max_size=40),
)
def test_kept_values_answer_as_an_evaluation_would(steps, windows):
    """Steps keeps what it evaluated and answers a window between two kept ones of the
    same value without evaluating (η⁺ never decreases): in any order of windows, the
    answers are those of a curve that evaluates each window afresh."""
    t, points = 0, []
    for length, rate in steps:
        points.append((t, rate))
        t += length
    kept = Steps(points)
    for w in windows:
        assert kept.eta(w) == Steps(points).eta(w)
    vals = [kept.eta(w) for w in sorted(windows)]
    assert vals == sorted(vals)
