"""The scenario schema's parts: the words and limits it reads through the binding,
its error line, its value types and the base of its tables.

The simulator's enums (``PROTOCOLS``, ``NIC_KINDS``, ``SIM_MITIGATIONS``,
``BURSTY_TIMERS``) are read here when the schema is first imported: pydantic
builds its ``Literal`` types from them. Limits that libshield or the
simulator fix (flows, NIC queues, priority levels, pool size…) are read
through the binding (:func:`rtshield._native.native_limits`) when a file is
validated, never written here.

Every failure is a pydantic ``ValidationError``; :func:`usage_error` turns its
first error into one :class:`~rtshield.errors.UsageError` line naming the
file and the key: ``FILE: [section] key: what is wrong``, or ``FILE:
flows.NAME.key: what is wrong`` for an entry of an array of tables that its
name identifies (the form ``rtshield sweep`` takes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sized
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
)

from rtshield import _native, units
from rtshield.errors import UsageError
from rtshield.schema import vocabulary
from rtshield.schema.base import (
    DURATION_SCHEMA,
    MAX_PRIORITY,
    NAME_RE,
    NAME_SCHEMA,
    RATE_SCHEMA,
    TomlTable,
    check_name,
    context_of,
    duration_ns,
    fail,
    message,
    rate_hz,
)
from rtshield.schema.vocabulary import reserved_name

#: The simulator's and libshield's enums the models' ``Literal`` types are built
#: from, read through the binding now (the vocabulary says which enum each is):
#: a flow's protocols, the NIC kinds, the mitigation kinds the simulator has
#: (:data:`MITIGATION_KINDS` gives each its keys) and the bursty limiter's
#: ``[mitigation] timer`` modes (Regehr & Duongsaa §3.3).
PROTOCOLS: tuple[str, ...] = vocabulary.PROTOCOLS
NIC_KINDS: tuple[str, ...] = vocabulary.NIC_KINDS
SIM_MITIGATIONS: tuple[str, ...] = vocabulary.SIM_MITIGATIONS
BURSTY_TIMERS: tuple[str, ...] = vocabulary.BURSTY_TIMERS


def limits() -> dict[str, int]:
    """libshield's and the simulator's limits, through the binding (see
    :func:`rtshield._native.native_limits`; looked up there so that tests can
    replace it)."""
    return _native.native_limits()


# --------------------------------------------------------------------------- errors


def within(value: int, lo: int, hi: int, *at: str | int) -> None:
    """``value`` must lie in ``[lo, hi]`` (a bound known only with the other tables)."""
    if not lo <= value <= hi:
        bound = f"at least {lo}" if value < lo else f"at most {hi}"
        raise fail(f"must be {bound}, got {value}", *at)


def at_most(entries: Sized, limit: str, what: str, *at: str | int) -> None:
    """At most ``limits()[limit]`` ``entries``, a limit of libshield or the simulator
    (``what``: the entries in the message, ``"flows"``; ``at``: the key path)."""
    n = limits()[limit]
    if len(entries) > n:
        raise fail(f"at most {n} {what}, got {len(entries)}", *at)


def choice_first(data: Any, key: str, choices: Any, *, required: bool = True) -> None:
    """Check a table's discriminating ``key`` (a kind, pattern) before its other keys:
    a string among ``choices`` (missing: an error when ``required``)."""
    if not isinstance(data, Mapping) or (not required and key not in data):
        return
    value = data.get(key)
    if value is None and required:
        raise fail("missing", key)
    if not isinstance(value, str):
        raise fail(f"expected a string, got {value!r}", key)
    if value not in choices:
        raise fail(f"{value!r} is not one of: {', '.join(choices)}", key)


def require(table: Any, keys: tuple[str, ...], *at: str | int) -> None:
    """Each of ``keys`` must be set (not None) in ``table`` (at key path ``at``)."""
    for k in keys:
        if getattr(table, k) is None:
            raise fail("missing", *at, k)


#: Arrays of tables of a scenario file.
_ARRAYS = ("flows", "tasks", "sources")
#: Arrays of tables nested in a table (``[[nic.queues]]``).
_NESTED_ARRAYS = ("queues",)


def _place(loc: tuple[str | int, ...]) -> tuple[str, str | None, bool]:
    """``(section, key, array)`` of a location: ``("flows", 0, "rate")`` →
    ``("flows #1", "rate", False)``; ``("flows",)`` → ``("flows", None, True)``."""
    if not loc:
        return "", None, False
    section = str(loc[0])
    i = 1
    while i < len(loc):
        part = loc[i]
        if isinstance(part, int):
            section += f" #{part + 1}"
            i += 1
        elif part in _NESTED_ARRAYS and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            section += f".{part}"
            i += 1
        else:
            return section, str(part), i == 1 and section in _ARRAYS
    return section, None, section in _ARRAYS and len(loc) == 1


def _by_name(loc: tuple[str | int, ...], doc: Mapping[str, Any] | None) -> str | None:
    """``flows.hp.rate``: a key of an entry of ``[[flows]]``, ``[[tasks]]`` or
    ``[[sources]]`` by the entry's name, as ``rtshield sweep`` takes it; None where
    the name cannot say which entry (missing, invalid, reserved, given twice, or
    itself the key at fault): the entry is then named by its position."""
    if doc is None or len(loc) < 2 or loc[0] not in _ARRAYS or not isinstance(loc[1], int):
        return None
    if len(loc) > 2 and loc[2] == "name":
        return None
    entries = doc.get(str(loc[0]))
    if not isinstance(entries, list) or loc[1] >= len(entries):
        return None
    names = [e.get("name") if isinstance(e, Mapping) else None for e in entries]
    name = names[loc[1]]
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or reserved_name(name):
        return None
    if names.count(name) > 1:
        return None
    return f"{loc[0]}.{name}" + (f".{loc[2]}" if len(loc) > 2 else "")


def usage_error(
    e: ValidationError,
    origin: str,
    origins: Mapping[tuple[str, ...], str] | None = None,
    doc: Mapping[str, Any] | None = None,
) -> UsageError:
    """The first error of ``e`` as one line: ``ORIGIN: [section] key: message``, or
    ``ORIGIN: flows.NAME.key: message`` for a key of a named entry of an array of
    tables in ``doc`` (the validated document; see :func:`_by_name`).

    ``origins`` maps ``(section, key)`` (or ``(section,)``) to the file a
    value came from (``--set``, the preset's defaults); others are ``origin``.
    Unknown keys are reported before other errors of the same table, as a
    misspelt key is what usually makes a required one look missing.
    """
    errors = e.errors(include_url=False)
    first = errors[0]
    for other in errors:
        if other["type"] == "extra_forbidden" and other["loc"][:-1] == first["loc"][:-1]:
            first = other
            break
    loc = tuple(first["loc"]) + tuple((first.get("ctx") or {}).get("at") or ())
    section, key, array = _place(loc)
    where = (first.get("ctx") or {}).get("origin")
    if where is None:
        origins = origins or {}
        head = tuple(p for p in loc[:2] if isinstance(p, str))
        where = origins.get(head) or origins.get(head[:1]) or origin
    msg = message(first)
    named = _by_name(loc, doc)
    if named is not None:
        return UsageError(f"{where}: {named}: {msg}")
    if not section:
        return UsageError(f"{where}: {msg}")
    if key is not None:
        shown = f"[[{section}]]" if array else f"[{section}]"
        return UsageError(f"{where}: {shown} {key}: {msg}")
    if array:
        return UsageError(f"{where}: [[{section}]]: {msg}")
    return UsageError(f"{where}: [{section}]: {msg}")


# --------------------------------------------------------------------------- unit types


def _duration_validator(positive: bool):
    def check(value: Any, info: ValidationInfo) -> int:
        ns = duration_ns(value, info)
        if positive and ns <= 0:
            raise fail(f"must be longer than zero, got {value!r}")
        return ns

    return check


#: A duration (``"10ms"``, ``"250us"``, ``"79cyc"``) in integer nanoseconds, longer than zero.
Duration = Annotated[
    int, BeforeValidator(_duration_validator(True)), WithJsonSchema(DURATION_SCHEMA)
]
#: A duration that may be zero (``"0us"``).
Span = Annotated[int, BeforeValidator(_duration_validator(False)), WithJsonSchema(DURATION_SCHEMA)]


def _rate_validator(arrivals: bool):
    def check(value: Any) -> float:
        r = rate_hz(value)
        if not math.isfinite(r) or r < 0:
            raise fail(f"must be a finite, non-negative rate, got {value!r}")
        if arrivals and 0 < r < units.MIN_RATE_HZ:
            raise fail(
                f"must be 0 or at least {units.MIN_RATE_HZ:g} per second (one packet in "
                f"about 11.6 days), got {value!r}"
            )
        return r

    return check


#: An arrival rate in packets per second (``"30000pps"``): 0 or at least
#: :data:`rtshield.units.MIN_RATE_HZ`.
Rate = Annotated[float, BeforeValidator(_rate_validator(True)), WithJsonSchema(RATE_SCHEMA)]
#: A rate increment (a pyramid's step): any non-negative rate.
RateStep = Annotated[float, BeforeValidator(_rate_validator(False)), WithJsonSchema(RATE_SCHEMA)]


def _fraction(value: Any) -> float:
    v = value
    if isinstance(v, str) and v.strip().endswith("%"):
        try:
            v = float(v.strip()[:-1]) / 100.0
        except ValueError:
            raise fail(f"cannot read {value!r} as a percentage") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise fail(f'expected a fraction such as 0.1 or "10%", got {value!r}')
    if not 0.0 <= v <= 1.0:
        raise fail(f"must lie between 0 and 1 (0% and 100%), got {value!r}")
    return float(v)


#: A fraction in [0, 1]: a number (``0.1``) or a percentage (``"10%"``).
Fraction = Annotated[
    float,
    BeforeValidator(_fraction),
    WithJsonSchema(
        {
            "oneOf": [{"type": "number", "minimum": 0, "maximum": 1}, {"type": "string"}],
            "format": "fraction",
        }
    ),
]


def _name_validator(what: str):
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise fail(f"expected a string, got {value!r}")
        check_name(value, f"{what} name")
        if reserved_name(value):
            raise fail(
                f"{value!r} is reserved (the outputs' own names: critical, driver, polling, "
                "idle, idle_coreN, isr_…); choose another"
            )
        return value

    return check


def Name(what: str) -> Any:  # noqa: N802 - a type
    """An identifier naming a ``what`` (flow, task, source, queue):
    :data:`~rtshield.schema.vocabulary.NAME_RULE`, not one of the outputs' reserved names."""
    return Annotated[
        str,
        BeforeValidator(_name_validator(what)),
        WithJsonSchema(NAME_SCHEMA),
    ]


def Int(lo: int, hi: int) -> Any:  # noqa: N802 - a type
    """A whole number in ``[lo, hi]``."""
    return Annotated[int, Field(ge=lo, le=hi)]


Priority = Int(0, MAX_PRIORITY)
U32 = Int(0, 2**32 - 1)


# --------------------------------------------------------------------------- tables


class Table(TomlTable, strict=True):
    """A table of a scenario or preset: strict types (``"5"`` is not a number)."""


def user_wrote(info: ValidationInfo, section: str, key: str) -> bool:
    """Whether the user wrote ``[section] key`` (not the preset's defaults)."""
    own = context_of(info).get("own")
    return True if own is None else (section, key) in own


def check_core(core: int, info: ValidationInfo, key: str = "core") -> None:
    plat = context_of(info).get("platform")
    if plat is not None and core >= plat.cores:
        raise fail(f"platform {plat.name} has {plat.cores} core(s), numbered from 0", key)
