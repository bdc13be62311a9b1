"""The few computations that libshield owns, reached through the binding.

libshield (C) is the single home of the bursty limiter's rate rounding for a
shared timer (Regehr & Duongsaa §3.5), the deferrable server's demand bound
(Behnke et al. §2.4) and the NIC parameter rules and memory function (Behnke
et al. §7.3.2, §7.3.4). The analysis calls them here and nowhere else, so the
rest of the package is pure Python.

While a libshield function is not yet in the installed library (its
component is still on another branch), the Python reference below is used
instead; :func:`sources_of_truth` says which one each name resolves to. The
references implement the same equations and are checked against the native
functions by the tests once both exist.
"""

from __future__ import annotations

__all__ = [
    "round_burst",
    "ds_demand",
    "nic_wcpd",
    "nic_t_abs_max",
    "nic_memory_bytes",
    "sources_of_truth",
]


_U64_MAX = 2**64 - 1


def _u64(x: int) -> int:
    """Saturate a time to libshield's ``rts_time_ns`` range, as libshield's own arithmetic does."""
    return min(max(int(x), 0), _U64_MAX)


def _lib():
    try:
        from rtshield._native import load

        return load()
    except Exception:  # the native library is optional for pure analysis
        return None, None


def _native(name: str):
    _, lib = _lib()
    if lib is None:
        return None
    try:
        return getattr(lib, name)
    except AttributeError:
        return None


_NAMES = {
    "round_burst": "rts_bursty_burst_sizes",
    "ds_demand": "rts_dserver_dbf",
    "nic_wcpd": "rts_nic_wcpd",
    "nic_t_abs_max": "rts_nic_t_abs_max",
    "nic_memory_bytes": "rts_nic_memory_bytes",
}


def sources_of_truth() -> dict[str, str]:
    """Which implementation each helper uses: ``"libshield"`` or ``"python"``."""
    return {k: ("libshield" if _native(v) is not None else "python") for k, v in _NAMES.items()}


def _whole(x: float) -> int | None:
    n = round(x)
    return n if abs(x - n) < 1e-9 and 1 <= n <= 0xFFFFFFFF else None


def round_burst(rate_hz: float, timer_hz: float) -> int:
    """Burst size that lets a source reach ``rate_hz`` with a counter cleared at ``timer_hz``.

    Regehr & Duongsaa §3.5: rates are rounded *up* to a multiple of the shared
    timer's frequency (324, 200, 754 Hz on 110 Hz → 3, 2, 7), i.e.
    ``ceil(rate / timer)``. libshield's ``rts_bursty_burst_sizes()`` works in
    whole Hz; for a fractional rate or timer frequency (a timer period such as
    3 ms) the same rule is evaluated here exactly in rational arithmetic.
    """
    if timer_hz <= 0 or rate_hz <= 0:
        raise ValueError("rates must be positive")
    r, t = _whole(rate_hz), _whole(timer_hz)
    fn = _native("rts_bursty_burst_sizes")
    if fn is not None and r is not None and t is not None:
        ffi, _ = _lib()
        rates = ffi.new("uint32_t[1]", [r])
        out = ffi.new("uint32_t[1]")
        if fn(rates, 1, t, out, ffi.NULL) == 0:
            return int(out[0])
    from fractions import Fraction

    q = Fraction(rate_hz).limit_denominator(10**6) / Fraction(timer_hz).limit_denominator(10**6)
    return max(1, -(-q.numerator // q.denominator))


def ds_demand(budget_ns: int, period_ns: int, delta_ns: int) -> int | None:
    """Behnke et al. §2.4: highest demand of a deferrable server in any window Δ.

    ``d(Δ) = e · (⌈Δ / p⌉ + 1)``, with ``d(0) = 0``; None if unbounded.
    """
    fn = _native("rts_dserver_dbf")
    if fn is not None:
        v = int(fn(budget_ns, period_ns, delta_ns))
        return None if v == 0xFFFFFFFFFFFFFFFF else v
    if delta_ns == 0 or budget_ns == 0:
        return 0
    if period_ns == 0:
        return None
    return budget_ns * (-(-delta_ns // period_ns) + 1)


def nic_wcpd(t_netstack_ns: int, queue_sizes: list[int]) -> int:
    """Behnke et al. §7.3.2: WCPD = t_netstack · Σ n_q (libshield ``rts_nic_wcpd()``)."""
    fn = _native("rts_nic_wcpd")
    if fn is not None:
        return int(fn(_u64(t_netstack_ns), _u64(sum(queue_sizes))))
    return _u64(t_netstack_ns * sum(queue_sizes))


def nic_t_abs_max(t_d_ns: int, t_qf_ns: int, wcpd_ns: int) -> int:
    """Largest admissible absolute timer, max(t_d, t_qf) − WCPD, or 0 if not positive
    (libshield ``rts_nic_t_abs_max()``)."""
    fn = _native("rts_nic_t_abs_max")
    if fn is not None:
        return int(fn(_u64(t_d_ns), _u64(t_qf_ns), _u64(wcpd_ns)))
    return max(0, max(t_d_ns, t_qf_ns) - wcpd_ns)


def nic_memory_bytes(moderated_queues: int, arp_queue: bool = True) -> int:
    """Behnke et al. §7.3.4: on-NIC table memory, m · 30 B + 14 B for the ARP queue
    (libshield ``rts_nic_memory_bytes()``; without the ARP queue its 14 B are left out)."""
    fn = _native("rts_nic_memory_bytes")
    if fn is not None:
        total = int(fn(moderated_queues))
        return total if arp_queue else total - int(fn(0))
    return moderated_queues * 30 + (14 if arp_queue else 0)
