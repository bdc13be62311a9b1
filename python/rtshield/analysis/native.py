"""The computations that libshield owns, reached through the binding.

libshield (C) is the single home of the bursty limiter's rate rounding for a
shared timer and of its inverse, the timer for a burst (Regehr & Duongsaa
§3.5), the deferrable server's demand bound (Behnke et al. §2.4), the NIC
parameter rules and memory function (Behnke et al. §7.3.2, §7.3.4), the
admission bound of every protection — the most interrupts or packets it lets
through in any window Δ, its arrival curve η⁺(Δ) (``rts_*_max_irqs()``,
``rts_*_max_packets()``) — and of which hooks each protection does work in
(``rts_shield_hooks()``). The
analysis and ``rtshield design`` call them here and nowhere else; there is no
Python copy of any of these formulas. The native library is part of every
rtshield install (``rtshield._native``), so a missing library is an
installation error, not a reason to fall back.
"""

from __future__ import annotations

import functools

from rtshield.errors import UsageError

__all__ = [
    "round_burst",
    "lowest_timer_hz",
    "ds_demand",
    "strict_max_irqs",
    "countdown_max_irqs",
    "bursty_max_irqs",
    "burst_mit_max_packets",
    "global_limit_max_packets",
    "nic_max_irqs",
    "ds_budget_for_rate",
    "nic_wcpd",
    "nic_t_qf",
    "nic_t_abs_max",
    "nic_check",
    "nic_violations",
    "nic_memory_bytes",
    "shield_hooked",
]


_U64_MAX = 2**64 - 1
_U32_MAX = 2**32 - 1


def _u64(x: int) -> int:
    """Saturate a time to libshield's ``rts_time_ns`` range, as libshield's own arithmetic does."""
    return min(max(int(x), 0), _U64_MAX)


def _lib():
    from rtshield._native import load

    return load()


def _whole(x: float) -> int | None:
    n = round(x)
    return n if abs(x - n) < 1e-9 and 1 <= n <= _U32_MAX else None


def _whole_rate(rate_hz: float) -> int:
    """A source's rate as libshield's burst rounding takes it: whole Hz, 1 to 2^32-1."""
    r = _whole(rate_hz)
    if r is None:
        raise UsageError(
            f"max_rate: {rate_hz:g} Hz is not a whole number of Hz (1 to 2^32-1), "
            "which libshield's burst rounding takes"
        )
    return r


def round_burst(
    rate_hz: float, timer_hz: float | None = None, *, period_ns: int | None = None
) -> int:
    """Burst size that lets a source reach ``rate_hz`` with a counter cleared by a shared timer.

    Regehr & Duongsaa §3.5: rates are rounded *up* to a multiple of the shared
    timer's frequency (324, 200, 754 Hz on 110 Hz → 3, 2, 7). A timer of a
    whole number of Hz goes to libshield's ``rts_bursty_burst_sizes()``; a
    timer given as a period that is no whole number of Hz (3 ms) to
    ``rts_bursty_burst_for_period()``. The source's rate must be whole Hz, as
    libshield takes it.
    """
    r = _whole_rate(rate_hz)
    ffi, lib = _lib()
    out = ffi.new("uint32_t[1]")
    t = None if timer_hz is None else _whole(timer_hz)
    if t is not None:
        rates = ffi.new("uint32_t[1]", [r])
        err = lib.rts_bursty_burst_sizes(rates, 1, t, out, ffi.NULL)
    else:
        if period_ns is None:
            if not timer_hz or timer_hz <= 0:
                raise UsageError("timer: the frequency must be positive")
            period_ns = round(1e9 / timer_hz)
        err = lib.rts_bursty_burst_for_period(r, _u64(period_ns), out)
    if err != 0:
        raise UsageError(
            f"max_rate: {r} Hz on this timer gives a burst libshield cannot represent "
            "(above 2^32-1 interrupts)"
        )
    return int(out[0])


def lowest_timer_hz(rate_hz: float, max_burst: int) -> int:
    """Lowest whole-Hz shared timer at which a source of ``rate_hz`` gets a burst of at
    most ``max_burst`` (Regehr & Duongsaa §3.5: ⌈rate / max_burst⌉), libshield's
    ``rts_bursty_pick_timer_hz()`` with every frequency allowed."""
    r = _whole_rate(rate_hz)
    ffi, lib = _lib()
    out = ffi.new("uint32_t[1]")
    rates = ffi.new("uint32_t[1]", [r])
    if lib.rts_bursty_pick_timer_hz(rates, 1, min(int(max_burst), _U32_MAX), ffi.NULL, 0, out):
        raise UsageError(f"burst: {max_burst} is not a burst libshield takes (1 to 2^32-1)")
    return int(out[0])


def ds_demand(budget_ns: int, period_ns: int, delta_ns: int) -> int | None:
    """Behnke et al. §2.4: highest demand of a deferrable server in any window Δ,
    ``e · (⌈Δ / p⌉ + 1)`` (libshield ``rts_dserver_dbf()``); None if unbounded."""
    _, lib = _lib()
    v = int(lib.rts_dserver_dbf(_u64(budget_ns), _u64(period_ns), _u64(delta_ns)))
    return None if v == _U64_MAX else v


def _bound(v) -> int | None:
    """libshield's UINT64_MAX ("no bound") as None."""
    v = int(v)
    return None if v == _U64_MAX else v


def _u32(x: int) -> int:
    return min(max(int(x), 0), _U32_MAX)


def strict_max_irqs(t_min_ns: int, delta_ns: int) -> int | None:
    """Regehr & Duongsaa §5.2: the most interrupts a strict limiter admits in any window
    Δ, ⌈Δ / t_min⌉ (libshield ``rts_strict_max_irqs()``); None if unbounded."""
    _, lib = _lib()
    return _bound(lib.rts_strict_max_irqs(_u64(t_min_ns), _u64(delta_ns)))


def countdown_max_irqs(window_ns: int, delta_ns: int) -> int | None:
    """Regehr & Duongsaa §5.2: the most interrupts a countdown filter of window W delivers
    in any window Δ, ⌈Δ / W⌉ (libshield ``rts_countdown_max_irqs()``, counting 1 ns ticks
    as the simulator does; a window beyond 2^32 − 1 ns is counted in coarser ticks and
    rounded down, which only raises the bound); None if unbounded."""
    _, lib = _lib()
    tick = max(1, -(-int(window_ns) // _U32_MAX))
    return _bound(lib.rts_countdown_max_irqs(_u32(tick), _u32(int(window_ns) // tick),
                                             _u64(delta_ns)))


def bursty_max_irqs(burst: int, period_ns: int, delta_ns: int) -> int | None:
    """Regehr & Duongsaa §5.2: the most interrupts one source of a bursty limiter admits
    in any window Δ, N (⌈Δ / P⌉ + 1) (libshield ``rts_bursty_max_irqs()``; a tick whose
    handler ends up to J late: call it at Δ + J); None if unbounded."""
    _, lib = _lib()
    return _bound(lib.rts_bursty_max_irqs(_u32(burst), _u64(period_ns), _u64(delta_ns)))


def burst_mit_max_packets(capacity: int, slice_ns: int, delta_ns: int) -> int | None:
    """Danicki et al. §2.2: the most packets a Burst Mitigation accepts in any window Δ
    with slices at least S long, K (⌈Δ / S⌉ + 1) (libshield ``rts_burst_mit_max_packets()``);
    None if unbounded."""
    _, lib = _lib()
    return _bound(lib.rts_burst_mit_max_packets(_u32(capacity), _u64(slice_ns), _u64(delta_ns)))


def global_limit_max_packets(capacity: int, period_ns: int, delta_ns: int) -> int | None:
    """Behnke et al. §5.5: the most packets a global limit lets the driver take in any
    window Δ, G (⌈Δ / P⌉ + 1) (libshield ``rts_global_limit_max_packets()``); None if
    unbounded."""
    _, lib = _lib()
    return _bound(lib.rts_global_limit_max_packets(_u32(capacity), _u64(period_ns),
                                                   _u64(delta_ns)))


def nic_max_irqs(t_abs_ns: int, t_pack_ns: int, frames: int, delta_ns: int) -> int | None:
    """Behnke et al. §7.3.2: the most interrupts one moderated NIC queue raises in any
    window Δ, ⌈Δ / min(t_abs, t_pack)⌉ (libshield ``rts_nic_moderation_max_irqs()``); None
    with a frame threshold or no timer (the traffic alone bounds it)."""
    _, lib = _lib()
    return _bound(lib.rts_nic_moderation_max_irqs(_u64(t_abs_ns), _u64(t_pack_ns),
                                                  _u32(frames), _u64(delta_ns)))


def ds_budget_for_rate(rate_per_s: float, period_ns: int) -> int:
    """Budget (packets per period) of a deferrable server that serves ``rate_per_s``:
    ⌈rate · p⌉, at least 1 — the rounding of Regehr & Duongsaa §3.5, libshield's
    ``rts_bursty_burst_for_period()`` (one home for the one formula)."""
    r = _whole(rate_per_s)
    if r is None:
        raise UsageError(f"--rate: {rate_per_s:g} is not a whole number of packets per second")
    ffi, lib = _lib()
    out = ffi.new("uint32_t[1]")
    if lib.rts_bursty_burst_for_period(r, _u64(period_ns), out) != 0:
        raise UsageError(f"--rate: {r} pkt/s over {period_ns} ns exceeds 2^32-1 packets")
    return int(out[0])


def nic_wcpd(t_netstack_ns: int, queue_sizes: list[int]) -> int:
    """Behnke et al. §7.3.2: WCPD = t_netstack · Σ n_q (libshield ``rts_nic_params_wcpd()``)."""
    _, lib = _lib()
    return int(lib.rts_nic_params_wcpd(_u64(t_netstack_ns), _u64(sum(queue_sizes))))


def nic_t_qf(n_q: int, t_p_ns: int) -> int:
    """Time to fill a queue at the maximum rate, t_qf = n_q · t_P
    (libshield ``rts_nic_params_t_qf()``)."""
    _, lib = _lib()
    return int(lib.rts_nic_params_t_qf(min(int(n_q), _U32_MAX), _u64(t_p_ns)))


def nic_t_abs_max(t_d_ns: int, t_qf_ns: int, wcpd_ns: int) -> int:
    """Largest admissible absolute timer, max(t_d, t_qf) − WCPD, or 0 if not positive
    (libshield ``rts_nic_params_t_abs_max()``)."""
    _, lib = _lib()
    return int(lib.rts_nic_params_t_abs_max(_u64(t_d_ns), _u64(t_qf_ns), _u64(wcpd_ns)))


def nic_check(
    t_netstack_ns: int,
    sum_nq: int,
    n_q: int,
    t_p_ns: int,
    t_d_ns: int,
    t_abs_ns: int,
    t_pack_ns: int,
) -> int:
    """One queue against the §7.3.2 bounds: libshield ``rts_nic_params_check()``, the
    OR of ``rts_nic_params_violation`` bits (0: every bound holds)."""
    _, lib = _lib()
    return int(
        lib.rts_nic_params_check(
            _u64(t_netstack_ns),
            _u64(sum_nq),
            min(int(n_q), _U32_MAX),
            _u64(t_p_ns),
            _u64(t_d_ns),
            _u64(t_abs_ns),
            _u64(t_pack_ns),
        )
    )


@functools.cache
def _violation_bits() -> dict[str, int]:
    ffi, _ = _lib()
    return {
        n[len("RTS_NIC_V_") :].lower(): v
        for v, n in ffi.typeof("rts_nic_params_violation").elements.items()
        if n.startswith("RTS_NIC_V_")
    }


def nic_violations(bits: int) -> set[str]:
    """Names of the violation bits (``size``, ``no_window``, ``tabs``, ``tpack_low``,
    ``tpack_high``), read from libshield's ``rts_nic_params_violation`` enum."""
    return {n for n, v in _violation_bits().items() if bits & v}


def nic_memory_bytes(moderated_queues: int, arp_queue: bool = True) -> int:
    """Behnke et al. §7.3.4: on-NIC table memory, m · 30 B + 14 B for the ARP queue
    (libshield ``rts_nic_moderation_memory_bytes()``; without the ARP queue its 14 B are
    left out)."""
    _, lib = _lib()
    m = min(int(moderated_queues), _U32_MAX)
    total = int(lib.rts_nic_moderation_memory_bytes(m))
    return total if arp_queue else total - int(lib.rts_nic_moderation_memory_bytes(0))


@functools.cache
def _shield_hooks(kind: str) -> int:
    """libshield's ``rts_shield_hooks()`` for a shield with protection ``kind``."""
    ffi, lib = _lib()
    sh = ffi.new("rts_shield *")
    # a scenario kind that is no libshield protection (``none``, the simulator's
    # ``polling``) has no bit in ``rts_shield_prot``
    bits = ffi.typeof("rts_shield_prot").relements
    sh.cfg.protections = int(bits.get(f"RTS_SHIELD_{kind.upper()}", 0))
    return int(lib.rts_shield_hooks(sh))


def shield_hooked(kind: str, hook: str) -> bool:
    """Does protection ``kind`` do work in libshield's hook ``hook`` (``RX_ISR``, ``TASK``,
    ``REPORT``…: the ``RTS_SHIELD_HOOK_<hook>`` bit of ``rts_shield_hooks()``)?"""
    _, lib = _lib()
    return bool(_shield_hooks(kind) & getattr(lib, f"RTS_SHIELD_HOOK_{hook}"))
