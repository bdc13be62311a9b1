"""Arrival curves: how many events can come in any window, the way compositional
performance analysis describes a stream (Richter et al.'s event models, as in
pyCPA; the upper arrival curves of Real-Time Calculus).

A :class:`Curve` gives η⁺(Δ) (:meth:`Curve.eta`), the most events in any
half-open window ``[t, t + Δ)`` of Δ integer nanoseconds, and its
pseudo-inverse δ⁻(n) (:meth:`Curve.delta_min`), the least distance between the
first and the last of any n events, so that n events fit in a window of Δ
exactly when δ⁻(n) < Δ. All arithmetic is exact: integers, and fractions for
the gaps of evenly spaced flows (the simulator's ``1e9 / rate`` as the double
it is).

Per traffic pattern of a scenario (:func:`flow_curve`, docs/analysis.md
"Arrival curves" states each with its derivation):

* ``constant``, ``steps``, ``pyramid``: the piecewise-constant rate of
  :meth:`rtshield.scenario.Flow.schedule`, arrivals evenly spaced within each
  rate step, the first one gap after the step starts (what the simulator
  does): :class:`Steps`, the envelope over every placement of the window,
  transitions included; a constant flow is its one-step case, ⌈Δ / G⌉;
* ``pcap``: the capture as it is replayed (``skip``, ``scale``; the same
  :func:`rtshield.pcap.replay` the simulator is given), :class:`Trace`, the
  sliding-window maximum over the capture, and for a looped capture over its
  periodic extension — exact for the trace;
* ``poisson``: no finite curve (:class:`Unbounded`), any number of arrivals
  can fall in any window.

Several flows on one line add (:class:`Sum`): no phase between them is
assumed. A protection's own curve (:class:`Admitted`) comes from libshield
through the binding (:mod:`.native`); what the CPU sees is the minimum
(:class:`Min`) of the traffic's curve, passed through the protection's gate
(:func:`gated`), and the protection's. :class:`Demand` turns a curve into the
CPU time of a task's activations, the form :mod:`.rta` takes.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Iterable
from fractions import Fraction

__all__ = [
    "Curve",
    "Unbounded",
    "Periodic",
    "Steps",
    "Trace",
    "Sum",
    "Min",
    "Latched",
    "Delayed",
    "Admitted",
    "Demand",
    "demand",
    "flow_curve",
    "gated",
    "line_curve",
    "seen",
]

#: The longest span :meth:`Curve.delta_min` searches (about 146 years).
_SEARCH_NS = 1 << 62


def _ceil(x: Fraction | int) -> int:
    return -((-x.numerator) // x.denominator) if isinstance(x, Fraction) else int(x)


class Curve:
    """An upper arrival curve. Subclasses give :meth:`eta` and :attr:`rate`."""

    #: what the curve is, for reports (one line)
    label: str = ""

    def eta(self, delta: int) -> int | None:
        """η⁺(Δ): the most events in any window ``[t, t + Δ)`` (0 for Δ ≤ 0); None:
        no finite bound."""
        raise NotImplementedError

    @property
    def rate(self) -> Fraction | None:
        """Long-term events per ns (lim sup η⁺(Δ)/Δ); None: unbounded."""
        raise NotImplementedError

    @property
    def bounded(self) -> bool:
        return self.rate is not None

    @property
    def reason(self) -> str:
        """Why the curve is unbounded ("" when it is bounded)."""
        return ""

    def eta_closed(self, delta: int) -> int | None:
        """The most events in any closed window ``[t, t + Δ]``."""
        return self.eta(delta + 1)

    def delta_min(self, n: int) -> int | None:
        """δ⁻(n): the least span of any n events (0 for n ≤ 1); None when n events never
        come (a finite trace) or the curve is unbounded."""
        if n <= 1:
            return 0
        if not self.bounded:
            return None
        hi = 1
        while True:
            e = self.eta(hi + 1)
            if e is not None and e >= n:
                break
            if hi >= _SEARCH_NS:
                return None
            hi *= 2
        lo = -1  # eta(lo + 1) < n holds for lo = -1 (an empty window)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.eta(mid + 1) >= n:
                hi = mid
            else:
                lo = mid
        return hi

    def __deepcopy__(self, memo):  # immutable: a copied system shares its curves
        return self


class _Memo(Curve):
    """A curve whose η⁺ is dear to evaluate (:class:`Steps`, :class:`Trace`): each
    window's value is computed once (:meth:`_eta`, for Δ > 0) and kept, sorted by
    window. η⁺ never decreases with Δ, so a window between two kept ones of the
    same value has that value too, without an evaluation (an analysis' fixed
    points ask for many close windows: most are answered so)."""

    def _memo_init(self) -> None:
        self._keys: list[int] = []
        self._vals: list[int] = []

    def eta(self, delta: int) -> int | None:
        if delta <= 0:
            return 0
        keys, vals = self._keys, self._vals
        i = bisect.bisect_left(keys, delta)
        if i < len(keys) and (keys[i] == delta or (i > 0 and vals[i - 1] == vals[i])):
            return vals[i]
        v = self._eta(delta)
        keys.insert(i, delta)
        vals.insert(i, v)
        return v

    def _eta(self, delta: int) -> int:
        raise NotImplementedError


class Unbounded(Curve):
    """No finite curve: any number of events in any window (a Poisson flow)."""

    def __init__(self, reason: str):
        self._reason = reason
        self.label = reason

    def eta(self, delta: int) -> int | None:
        return 0 if delta <= 0 else None

    @property
    def rate(self) -> Fraction | None:
        return None

    @property
    def reason(self) -> str:
        return self._reason


class Periodic(Curve):
    """Periodic with jitter and a least distance (pyCPA's PJd model):
    η⁺(Δ) = min(⌈(Δ + J) / P⌉, ⌈Δ / d⌉) for Δ > 0 (the second term only when d > 0).
    ``period`` may be a fraction of a nanosecond."""

    def __init__(self, period: Fraction | int, jitter: int = 0, dmin: int = 0, label: str = ""):
        if period <= 0:
            raise ValueError("period must be positive")
        self.period = Fraction(period)
        self.jitter = int(jitter)
        self.dmin = int(dmin)
        self.label = label or f"periodic, P = {float(self.period):g} ns, J = {self.jitter} ns"

    def eta(self, delta: int) -> int | None:
        if delta <= 0:
            return 0
        n = _ceil((delta + self.jitter) / self.period)
        if self.dmin > 0:
            n = min(n, -(-delta // self.dmin))
        return n

    def delta_min(self, n: int) -> int | None:
        if n <= 1:
            return 0
        # n events fit in a window of Δ + 1 when (n − 1) P − J < Δ + 1
        d = max(0, math.floor((n - 1) * self.period - self.jitter))
        return max(d, (n - 1) * self.dmin)

    @property
    def rate(self) -> Fraction | None:
        return 1 / self.period


class Steps(_Memo):
    """A piecewise-constant rate with evenly spaced arrivals in each step — the
    simulator's ``constant``, ``steps`` and ``pyramid`` flows.

    ``points`` are the change points ``((t, pps), ...)`` of
    :meth:`rtshield.scenario.Flow.schedule` (the last rate holds for ever); the
    flow is silent before the first. Within the step ``(s, e]`` at gap G the
    arrivals are at ``s + ⌊m G + f⌋``, m = 1, 2, … (f < 1 a carried fraction),
    so any window of ℓ ns inside the step holds at most ⌈ℓ / G⌉ of them, and the
    first ℓ ns of a step the window enters at most ⌈(ℓ + 1) / G⌉ − 1. Summed over
    the steps a window meets, the count is below ``X + 1`` with
    ``X = Σ ℓ_k / G_k + Σ_{entered} 1 / G_k``, so η⁺(Δ) = max over placements of
    ⌈X⌉. X is linear in the window's start between the instants where an edge
    of the window crosses a step boundary, so the maximum is at one of those
    (exact for a constant flow: ⌈Δ / G⌉). The candidates are evaluated at once in
    floating point (numpy), and exactly only where rounding could decide the
    ceiling.
    """

    def __init__(self, points: Iterable[tuple[int, float]], label: str = ""):
        pts = [(int(t), float(r)) for t, r in points]
        if not pts:
            pts = [(0, 0.0)]
        self.label = label
        # step k is (b[k], b[k + 1]] at density rho[k] (arrivals per ns), b[0] = the
        # first point; before it nothing arrives
        self._b = [t for t, _ in pts]
        self._rho = [Fraction(0) if r <= 0 else 1 / Fraction(1e9 / r) for _, r in pts]
        # fluid up to each boundary: F(b[k]) = sum of rho_j * (b[j + 1] - b[j]), j < k
        acc = [Fraction(0)]
        for k in range(1, len(self._b)):
            acc.append(acc[-1] + self._rho[k - 1] * (self._b[k] - self._b[k - 1]))
        self._acc = acc
        # entry bonus: the sum of rho over steps starting at or before b[k]
        bonus = []
        s = Fraction(0)
        for r in self._rho:
            s += r
            bonus.append(s)
        self._bonus = bonus
        import numpy as np

        self._b_np = np.asarray(self._b, dtype=np.int64)
        self._acc_f = np.asarray([float(a) for a in acc])
        self._rho_f = np.asarray([float(r) for r in self._rho])
        self._bonus_f = np.asarray([float(b) for b in bonus])
        # the window's start t where an edge of it crosses a boundary: t = s + o for
        # o in these offsets, and t = s − Δ + o (the window's last instant t + Δ − 1)
        self._near = np.concatenate([self._b_np + o for o in (-1, 0, 1)]
                                    + [np.asarray([self._b[-1] + 1], dtype=np.int64)])
        self._memo_init()

    def _fluid(self, u: int) -> Fraction:
        """Σ_k ρ_k · |(b_k, b_{k+1}] ∩ (−∞, u]|: the arrivals' fluid up to instant u."""
        k = bisect.bisect_left(self._b, u) - 1  # the step holding u (b[k] < u)
        if k < 0:
            return Fraction(0)
        return self._acc[k] + self._rho[k] * (u - self._b[k])

    def _entered(self, lo: int, hi: int) -> Fraction:
        """Σ ρ_k over the steps that start at an instant in [lo, hi]."""
        i = bisect.bisect_left(self._b, lo)
        j = bisect.bisect_right(self._b, hi)
        if j <= i:
            return Fraction(0)
        return self._bonus[j - 1] - (self._bonus[i - 1] if i > 0 else 0)

    def _x(self, t: int, delta: int) -> Fraction:
        last = t + delta - 1
        return self._fluid(last) - self._fluid(t - 1) + self._entered(t, last - 1)

    def _eta(self, delta: int) -> int:
        import numpy as np

        t = np.concatenate([self._near, self._b_np - (delta - 1), self._b_np - delta,
                            self._b_np - (delta - 2)])
        # X in floating point first; exactly (fractions) only where rounding could
        # decide the ceiling, so the result is the exact max of ⌈X⌉
        last = t + (delta - 1)
        x = self._fluid_f(last) - self._fluid_f(t - 1) + self._entered_f(t, last - 1)
        eps = 1e-9 * (abs(float(x.max())) + 1.0)
        lo, hi = np.ceil(x - eps), np.ceil(x + eps)
        sure = lo == hi
        best = int(hi[sure].max()) if sure.any() else 0
        open_ = np.flatnonzero(~sure & (hi > best))
        for k in open_[np.argsort(-hi[open_], kind="stable")]:
            if hi[k] <= best:
                break
            best = max(best, _ceil(self._x(int(t[k]), delta)))
        return best

    def _fluid_f(self, u):
        import numpy as np

        k = np.searchsorted(self._b_np, u, side="left") - 1
        kk = np.maximum(k, 0)
        v = self._acc_f[kk] + self._rho_f[kk] * (u - self._b_np[kk])
        return np.where(k < 0, 0.0, v)

    def _entered_f(self, lo, hi):
        import numpy as np

        i = np.searchsorted(self._b_np, lo, side="left")
        j = np.searchsorted(self._b_np, hi, side="right")
        top = self._bonus_f[np.maximum(j - 1, 0)]
        below = np.where(i > 0, self._bonus_f[np.maximum(i - 1, 0)], 0.0)
        return np.where(j <= i, 0.0, top - below)

    @property
    def rate(self) -> Fraction | None:
        return self._rho[-1]


class Trace(_Memo):
    """A recorded trace: the sliding-window maximum over its event times
    (nanoseconds, sorted), and with ``period`` > 0 over their periodic extension
    (every time plus each multiple of the period: a looped replay). Exact for the
    trace. One evaluation is a vectorised binary search, O(n log n) for n
    events; results are kept."""

    def __init__(self, times: Iterable[int], period: int = 0, label: str = ""):
        import numpy as np

        t = np.asarray(list(times), dtype=np.int64)
        if t.size == 0:
            raise ValueError("a trace needs at least one event")
        t = t - t[0] if period == 0 else t
        self._t = t
        self._n = int(t.size)
        self._period = int(period)
        self._ext = np.concatenate([t, t + self._period]) if self._period else t
        self.label = label
        self._memo_init()

    @property
    def events(self) -> int:
        """Events of one pass."""
        return self._n

    @property
    def mean_rate(self) -> Fraction:
        """Events per ns over one pass (looped: over its period): the mean rate a
        report would quote, far below the curve's short windows for a bursty trace."""
        if self._period:
            return Fraction(self._n, self._period)
        span = int(self._t[-1] - self._t[0])
        return Fraction(self._n - 1, span) if span else Fraction(0)

    def _window(self, r: int) -> int:
        """Most events of the (extended) trace in a window of r ns starting at an event
        of the first pass."""
        import numpy as np

        if r <= 0:
            return 0
        ends = np.searchsorted(self._ext, self._t + r, side="left")
        return int((ends - np.arange(self._n)).max())

    def _eta(self, delta: int) -> int:
        if self._period:
            q, r = divmod(delta, self._period)
            return q * self._n + self._window(r)
        return self._window(min(delta, int(self._t[-1]) + 1))

    def delta_min(self, n: int) -> int | None:
        if n <= 1:
            return 0
        if self._period:
            q, r = divmod(n - 1, self._n)
            return q * self._period + int((self._ext[r : r + self._n] - self._t).min())
        if n > self._n:
            return None
        return int((self._t[n - 1 :] - self._t[: self._n - n + 1]).min())

    @property
    def rate(self) -> Fraction | None:
        return Fraction(self._n, self._period) if self._period else Fraction(0)


class Sum(Curve):
    """Several streams on one line: their curves add (no phase between them is
    assumed, so their densest windows may coincide)."""

    def __init__(self, parts: Iterable[Curve], label: str = ""):
        self.parts = tuple(parts)
        self.label = label or " + ".join(p.label for p in self.parts)

    def eta(self, delta: int) -> int | None:
        total = 0
        for p in self.parts:
            v = p.eta(delta)
            if v is None:
                return None
            total += v
        return total

    @property
    def rate(self) -> Fraction | None:
        rates = [p.rate for p in self.parts]
        return None if any(r is None for r in rates) else sum(rates, Fraction(0))

    @property
    def reason(self) -> str:
        return "; ".join(p.reason for p in self.parts if p.reason)


class Min(Curve):
    """The smaller of several curves: a stream bounded by each of them."""

    def __init__(self, parts: Iterable[Curve], label: str = ""):
        self.parts = tuple(parts)
        self.label = label or " ∧ ".join(p.label for p in self.parts)

    def eta(self, delta: int) -> int | None:
        vals = [v for v in (p.eta(delta) for p in self.parts) if v is not None]
        return min(vals) if vals else None

    def delta_min(self, n: int) -> int | None:
        if n <= 1:
            return 0
        if not self.bounded:
            return None
        ds = [p.delta_min(n) for p in self.parts if p.bounded]
        return None if any(d is None for d in ds) else max(ds)

    @property
    def rate(self) -> Fraction | None:
        rates = [r for r in (p.rate for p in self.parts) if r is not None]
        return min(rates) if rates else None

    @property
    def reason(self) -> str:
        return "" if self.bounded else "; ".join(p.reason for p in self.parts if p.reason)


class _Derived(Curve):
    """A curve made from ``base`` with the same long-term rate and reason."""

    base: Curve

    @property
    def rate(self) -> Fraction | None:
        return self.base.rate

    @property
    def reason(self) -> str:
        return self.base.reason


class Latched(_Derived):
    """The stream plus ``count`` events: arrivals that waited while the interrupt
    line was off (the edge NIC's one pending bit; a descriptor ring's frames) and
    run when it comes back on (η⁺ + count for Δ > 0)."""

    def __init__(self, base: Curve, count: int = 1):
        self.base = base
        self.count = int(count)
        self.label = f"{base.label}, + {self.count} waiting"

    def eta(self, delta: int) -> int | None:
        if delta <= 0:
            return 0
        v = self.base.eta(delta)
        return None if v is None else v + self.count

    def delta_min(self, n: int) -> int | None:
        return 0 if n <= self.count + 1 else self.base.delta_min(n - self.count)


class Delayed(_Derived):
    """The stream with each event delayed by up to J (release jitter): η⁺(Δ + J)."""

    def __init__(self, base: Curve, jitter: int):
        self.base = base
        self.jitter = int(jitter)
        self.label = f"{base.label}, delayed up to {self.jitter} ns"

    def eta(self, delta: int) -> int | None:
        return 0 if delta <= 0 else self.base.eta(delta + self.jitter)

    def delta_min(self, n: int) -> int | None:
        d = self.base.delta_min(n)
        return None if d is None else max(0, d - self.jitter)


class Admitted(Curve):
    """What a protection lets through in any window: libshield's admission bound
    (a ``rts_*_max_*()`` function through :mod:`.native`), ``fn(Δ)``; ``rate`` its
    long-term rate."""

    def __init__(self, fn: Callable[[int], int | None], rate: Fraction, label: str):
        self._fn = functools.lru_cache(maxsize=4096)(fn)
        self._rate = Fraction(rate)
        self.label = label

    def eta(self, delta: int) -> int | None:
        return 0 if delta <= 0 else self._fn(int(delta))

    @property
    def rate(self) -> Fraction | None:
        return self._rate


def gated(traffic: Curve, hold: int | None = None, backlog: int = 1) -> Curve:
    """The arrivals a protection that turns the interrupt line off can release.

    While the line is off an arrival stays latched (the edge NIC's one pending
    bit; ``backlog`` frames of a descriptor ring) and runs when the line comes
    back, so in any window the interrupts are at most the traffic's plus those
    (:class:`Latched`). When the line is never held off longer than ``hold`` ns
    after such an arrival (a strict limiter's ``t_min``), each interrupt is also
    at most ``hold`` after its arrival (:class:`Delayed`); the smaller of the two
    holds.
    """
    if not traffic.bounded:
        return traffic
    latched = Latched(traffic, backlog)
    if hold is None:
        return latched
    return Min((latched, Delayed(traffic, hold)), label=f"{traffic.label}, gated")


def seen(traffic: Curve | None, gate: bool, admitted: Curve | None = None, *,
         hold: int | None = None, backlog: int = 1) -> Curve | None:
    """What reaches the CPU: the traffic (through the protection's ``gate`` when it
    turns the line off, :func:`gated`), and at most what the protection
    ``admitted`` — the minimum of the two curves. None: no traffic stated."""
    if traffic is None:
        return None
    t = gated(traffic, hold, backlog) if gate else traffic
    if admitted is None:
        return t
    return Min((t, admitted), label=f"{t.label} ∧ {admitted.label}")


def demand(curve: Curve | None, cost: int, every: tuple[int, int] | None = None):
    """A :class:`Demand` cap for an :class:`.rta.Task` (None: no curve, or an
    unbounded one, which caps nothing)."""
    if curve is None or not curve.bounded:
        return None
    return Demand(curve, cost, every)


class Demand:
    """A task's CPU demand bounded by an arrival curve: ``cost`` per activation,
    at most ``curve.eta(w)`` activations in any window ``w`` (the ``cap`` of an
    :class:`.rta.Task`). With ``every`` = (P, c), a periodic part: c at each of the
    ⌈w / P⌉ ticks of a timer, and ``cost`` only at the ticks that find an activation
    (a polling timer: the tick always, the handler only for an arrival)."""

    def __init__(self, curve: Curve, cost: int, every: tuple[int, int] | None = None):
        self.curve = curve
        self.cost = int(cost)
        self.every = every

    def jobs(self, w: int) -> int | None:
        return self.curve.eta(w)

    def release(self, q: int) -> int | None:
        """The earliest release of job q (from 0) after the first: δ⁻(q + 1)."""
        return self.curve.delta_min(q + 1)

    def demand(self, w: int) -> int | None:
        n = self.curve.eta(w)
        if n is None:
            return None
        if self.every is None:
            return n * self.cost
        period, base = self.every
        ticks = -(-w // period) if w > 0 else 0
        return ticks * base + min(ticks, n) * self.cost

    @property
    def load(self) -> Fraction | None:
        r = self.curve.rate
        if r is None:
            return None
        if self.every is None:
            return r * self.cost
        period, base = self.every
        return Fraction(base, period) + min(r, Fraction(1, period)) * self.cost

    def __deepcopy__(self, memo):
        return self


# ------------------------------------------------------------------ scenarios


def flow_curve(flow, duration_ns: int) -> Curve:
    """The arrival curve of one scenario flow (:class:`rtshield.scenario.Flow`):
    a :class:`Trace` of its replayed capture, :class:`Unbounded` for Poisson, else
    :class:`Steps` of its schedule within the run."""
    name = flow.name
    if flow.random:
        return Unbounded(f"flow {name} is Poisson: no finite arrival curve")
    if getattr(flow, "pcap", None) is not None:
        from rtshield import pcap

        rp = pcap.replay(
            pcap.read_pcap(flow.pcap), scale=flow.scale, skip_ns=flow.skip_ns, loop=flow.loop
        )
        how = "looped" if rp.period_ns else "one pass"
        return Trace(
            rp.times_ns,
            rp.period_ns,
            label=f"flow {name}: capture, {len(rp.times_ns)} frames ({how})",
        )
    pts = flow.schedule(duration_ns)
    rates = [r for _, r in pts]
    if rates[-1] > 0 and all(r == 0 for r in rates[:-1]):
        # one rate from some instant on (a constant flow): arrivals G = 1e9 / rate apart
        # (the simulator's double), ⌈Δ / G⌉ in any window — Steps' one-step case
        what = (f"constant {rates[-1]:g} pkt/s" if flow.pattern == "constant"
                else f"{flow.pattern}, {rates[-1]:g} pkt/s")
        return Periodic(Fraction(1e9 / rates[-1]), label=f"flow {name}: {what}")
    return Steps(pts, label=f"flow {name}: {flow.pattern}, {len(pts)} rate steps")


def line_curve(flows, duration_ns: int) -> Curve | None:
    """The arrivals on one interrupt line: the sum of its flows' curves (None: no
    flow)."""
    parts = [flow_curve(f, duration_ns) for f in flows]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Sum(parts)
