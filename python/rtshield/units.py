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
from fractions import Fraction

from rtshield.errors import UsageError

#: The longest duration accepted: 2**63 - 1 ns (about 292 years), so every
#: time fits the simulator's and libshield's 64-bit nanosecond clocks.
MAX_DURATION_NS = 2**63 - 1
#: The highest rate accepted: one event per nanosecond.
MAX_RATE_HZ = 1_000_000_000
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
_RATE_UNITS_HZ = {"hz": 1, "khz": 1_000, "mhz": 1_000_000, "pps": 1, "pkt/s": 1, "/s": 1}

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


#: Decimal exponents beyond this (after the mantissa's digits) are not
#: expanded: a larger value is "too long" or "too high" at once, a smaller
#: non-zero one is below every limit (and 0 ns as a duration). Keeps
#: ``"1e999999999s"`` from building a billion-digit integer.
_MAX_MAGNITUDE = 40


def _decimal(text: str) -> tuple[int, int]:
    """The decimal ``text`` (``"1.5e-3"``) as ``(digits, exponent)``: its value is
    ``digits * 10**exponent``, exactly."""
    mant, _, exp = text.lower().partition("e")
    whole, _, frac = mant.partition(".")
    return int((whole + frac) or "0"), int(exp or "0") - len(frac)


def _magnitude(digits: int, e: int) -> int:
    """The number of digits before the decimal point of ``digits * 10**e``
    (negative: zeros after it), for ``digits > 0``."""
    return len(str(digits)) + e


def _div_round(n: int, d: int) -> int:
    """``n / d`` (``n >= 0``, ``d > 0``) rounded to the nearest integer, ties to even."""
    q, r = divmod(n, d)
    return q + 1 if 2 * r > d or (2 * r == d and q % 2 == 1) else q


def exact_number(text: str) -> Fraction | None:
    """The decimal ``text`` (digits, fraction, exponent: ``"1.5e-3"``) as an exact
    fraction; ``None`` when it is beyond 10^40. A non-zero value below 10^-40
    is returned as 10^-50 (every check against a limit gives the same answer)."""
    digits, e = _decimal(text)
    if digits == 0:
        return Fraction(0)
    magnitude = _magnitude(digits, e)
    if magnitude > _MAX_MAGNITUDE:
        return None
    if magnitude < -_MAX_MAGNITUDE:
        return Fraction(1, 10**50)
    return Fraction(digits * 10**e) if e >= 0 else Fraction(digits, 10**-e)


def duration_ns(value: object, key: str, *, clock_hz: float | None = None) -> int:
    """Parse a duration such as ``"10ms"`` into integer nanoseconds.

    Exact: the decimal number times its unit is computed in integer
    arithmetic (no float), then rounded to the nearest nanosecond (ties to
    even), so every duration up to :data:`MAX_DURATION_NS` (2^63 − 1 ns,
    ``"9223372036854775807ns"``) is read as written. ``key`` names the
    setting in error messages. ``"Ncyc"`` needs ``clock_hz``. Raises
    :class:`UsageError` for a bare number, an unknown unit, a negative value
    or one beyond :data:`MAX_DURATION_NS`.
    """
    value = _quantity_text(value, key, "duration", '"10ms" or "250us"')
    m = _DUR_RE.match(value)
    if not m:
        raise UsageError(f"{key}: cannot read {value!r} as a duration (units: ns, us, ms, s, cyc)")
    (digits, e), unit = _decimal(m.group(1)), m.group(2)
    too_long = UsageError(
        f"{key}: {value!r} is too long (at most {MAX_DURATION_NS} ns, about 292 years)"
    )
    if unit == "cyc":
        if not clock_hz or not math.isfinite(clock_hz) or clock_hz < 0:
            raise UsageError(f"{key}: {value!r} is in CPU cycles but no clock frequency is set")
        num, den = Fraction(clock_hz).as_integer_ratio()
        scale_num, scale_den = 1_000_000_000 * den, num  # ns per cycle
    else:
        scale_num, scale_den = _TIME_UNITS_NS[unit], 1
    if digits == 0:
        return 0
    magnitude = _magnitude(digits, e)
    if magnitude > _MAX_MAGNITUDE:
        raise too_long
    if magnitude < -_MAX_MAGNITUDE:
        return 0  # below 10^-40 of a unit: far below half a nanosecond
    if e >= 0:
        ns = _div_round(digits * 10**e * scale_num, scale_den)
    else:
        ns = _div_round(digits * scale_num, 10**-e * scale_den)
    if ns > MAX_DURATION_NS:
        raise too_long
    return ns


def rate_fraction(value: object, key: str) -> Fraction:
    """Parse a rate such as ``"4kHz"``, ``"30000pps"`` or ``"600/20ms"`` into events per
    second, exactly (the number times its unit, or over its interval, in integer
    arithmetic); at most :data:`MAX_RATE_HZ`."""
    value = _quantity_text(value, key, "rate", '"4kHz" or "30000pps"')
    hz: Fraction | None = None
    m = _RATE_RE.match(value)
    too_high = UsageError(f"{key}: {value!r} is too high (at most {MAX_RATE_HZ:g} per second)")
    if m:
        num = exact_number(m.group(1))
        if num is None:
            raise too_high
        hz = num * _RATE_UNITS_HZ[m.group(2).lower()]
    m = None if m else _PER_RE.match(value)
    if m:
        per_ns = duration_ns(m.group(2).strip(), key)
        if per_ns <= 0:
            raise UsageError(f"{key}: the interval in {value!r} must be positive")
        num = exact_number(m.group(1))
        if num is None:
            raise too_high
        hz = num * 1_000_000_000 / per_ns
    if hz is None:
        raise UsageError(
            f"{key}: cannot read {value!r} as a rate (units: Hz, kHz, pps, or N/<duration>)"
        )
    if hz > MAX_RATE_HZ:
        raise too_high
    return hz


def rate_hz(value: object, key: str) -> float:
    """Parse a rate such as ``"4kHz"``, ``"30000pps"`` or ``"600/20ms"`` into events/s:
    :func:`rate_fraction` (exact), then the nearest float (what the simulator takes)."""
    return float(rate_fraction(value, key))


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
