"""Quantities with explicit units, as written in scenario and system files.

Durations are strings with a unit — ``"10ms"``, ``"250us"``, ``"1.5s"``,
``"79cyc"`` (CPU cycles, converted with a clock frequency) — and rates are
strings with a unit — ``"4kHz"``, ``"30000pps"``, ``"600/20ms"``. A bare number
is rejected for a duration or a rate: the unit is what makes a file readable
and what catches a microsecond mistaken for a millisecond.
"""

from __future__ import annotations

import math
import re

from rtshield.errors import UsageError

#: The longest duration accepted: 2**63 - 1 ns (about 292 years), so every
#: time fits the simulator's and libshield's 64-bit nanosecond clocks.
MAX_DURATION_NS = 2**63 - 1
#: The highest rate accepted: one event per nanosecond.
MAX_RATE_HZ = 1e9
#: The lowest non-zero arrival rate of a scenario's flow: one packet in about
#: 11.6 days (a gap of 10^15 ns, so that even an exponential gap drawn at it
#: fits the simulator's 64-bit nanosecond clock).
MIN_RATE_HZ = 1e-6

_TIME_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
}
_RATE_UNITS_HZ = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "pps": 1.0, "pkt/s": 1.0, "/s": 1.0}

#: A number: digits with an optional fraction, or a fraction alone; an exponent.
#: Written so that no input makes the regular expression backtrack.
_NUM = r"((?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
#: The longest string read as a duration or a rate ("1.5e-3ms" needs 8).
MAX_QUANTITY_CHARS = 64
_DUR_RE = re.compile(r"^\s*" + _NUM + r"\s*(ns|us|µs|ms|s|cyc)\s*$")
_RATE_RE = re.compile(r"^\s*" + _NUM + r"\s*(hz|khz|mhz|pps|pkt/s|/s)\s*$", re.IGNORECASE)
_PER_RE = re.compile(r"^\s*" + _NUM + r"\s*/\s*(.+)$")


def _quantity_text(value: object, key: str, what: str, examples: str) -> str:
    """``value`` as the text of a quantity with a unit (``what``: "duration", "rate";
    ``examples``: two of them, quoted, the first the shortest): a string of at most
    :data:`MAX_QUANTITY_CHARS` characters, else :class:`UsageError` naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, str):
        raise UsageError(f"{key}: expected a {what} with a unit such as {examples}, got {value!r}")
    if len(value) > MAX_QUANTITY_CHARS:
        raise UsageError(
            f"{key}: a {what} of {len(value)} characters; at most {MAX_QUANTITY_CHARS} "
            f"(write it like {examples.split(' or ')[0]})"
        )
    return value


def duration_ns(value: object, key: str, *, clock_hz: float | None = None) -> int:
    """Parse a duration such as ``"10ms"`` into integer nanoseconds.

    ``key`` names the setting in error messages. ``"Ncyc"`` needs ``clock_hz``.
    Raises :class:`UsageError` for a bare number, an unknown unit or a
    negative value.
    """
    value = _quantity_text(value, key, "duration", '"10ms" or "250us"')
    m = _DUR_RE.match(value)
    if not m:
        raise UsageError(f"{key}: cannot read {value!r} as a duration (units: ns, us, ms, s, cyc)")
    num, unit = float(m.group(1)), m.group(2)
    if unit == "cyc":
        if not clock_hz:
            raise UsageError(f"{key}: {value!r} is in CPU cycles but no clock frequency is set")
        ns = num * 1e9 / clock_hz
    else:
        ns = num * _TIME_UNITS_NS[unit]
    if not math.isfinite(ns) or ns > MAX_DURATION_NS:
        raise UsageError(
            f"{key}: {value!r} is too long (at most {MAX_DURATION_NS} ns, about 292 years)"
        )
    return round(ns)


def rate_hz(value: object, key: str) -> float:
    """Parse a rate such as ``"4kHz"``, ``"30000pps"`` or ``"600/20ms"`` into events/s."""
    value = _quantity_text(value, key, "rate", '"4kHz" or "30000pps"')
    hz = None
    m = _RATE_RE.match(value)
    if m:
        hz = float(m.group(1)) * _RATE_UNITS_HZ[m.group(2).lower()]
    m = None if m else _PER_RE.match(value)
    if m:
        per_ns = duration_ns(m.group(2).strip(), key)
        if per_ns <= 0:
            raise UsageError(f"{key}: the interval in {value!r} must be positive")
        hz = float(m.group(1)) * 1e9 / per_ns
    if hz is not None:
        if not math.isfinite(hz) or hz > MAX_RATE_HZ:
            raise UsageError(f"{key}: {value!r} is too high (at most {MAX_RATE_HZ:g} per second)")
        return hz
    raise UsageError(
        f"{key}: cannot read {value!r} as a rate (units: Hz, kHz, pps, or N/<duration>)"
    )


def format_ns(ns: float) -> str:
    """A duration in the most readable unit: ``1500000`` → ``"1.5ms"``."""
    a = abs(ns)
    if a >= 1e9:
        return f"{ns / 1e9:g}s"
    if a >= 1e6:
        return f"{ns / 1e6:g}ms"
    if a >= 1e3:
        return f"{ns / 1e3:g}us"
    return f"{ns:g}ns"
