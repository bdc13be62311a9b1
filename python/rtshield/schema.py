"""The scenario schema: pydantic models of every table of a scenario file.

These models *are* the schema: the keys each table takes, their types,
units, ranges and defaults, the documentation of every key (``description``),
and the rules that tie keys together (model validators). :mod:`rtshield.scenario`
validates a file with them and builds its typed :class:`~rtshield.scenario.Scenario`
from the result; ``rtshield schema`` prints their JSON Schema and
``docs/scenarios.md``'s key reference is generated from them
(:func:`markdown_blocks`, written by ``tools/gen_schema_docs.py``). The
system files of ``rtshield analyze`` have theirs in :mod:`rtshield.schema_system`;
what the two share (errors and their wording, unit-carrying values, key
declarations, the whole-file model, the Markdown key table) is
:mod:`rtshield.schema_base`.

Durations and rates keep the syntax of :mod:`rtshield.units` (``"10ms"``,
``"30000pps"``) through annotated types. Limits that libshield or the
simulator fix (flows, NIC queues, priority levels, pool size…) are read
through the binding (:func:`rtshield.scenario.native_limits`) when a file is
validated, never written here.

Every failure is a pydantic ``ValidationError``; :func:`usage_error` turns its
first error into one :class:`~rtshield.errors.UsageError` line naming the
file and the key: ``FILE: [section] key: what is wrong``, or ``FILE:
flows.NAME.key: what is wrong`` for an entry of an array of tables that its
name identifies (the form ``rtshield sweep`` takes).
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping, Sized
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from rtshield import _native, units
from rtshield.errors import UsageError

# The vocabulary (kinds, patterns, keys, names) is rtshield.scenario's, which
# imports this module only when it validates a file (pydantic is not loaded
# by ``import rtshield.scenario``).
from rtshield.scenario import (  # noqa: E402
    ALSO_KINDS,
    DEFAULT_SRC,
    FLOW_RX_ONLY,
    MAX_BINS,
    MAX_PCAP_SCALE,
    MITIGATION_KINDS,
    MULTI_SOURCE_KINDS,
    PATH_QUANTILE_COSTS,
    PATTERN_OPTIONAL,
    PATTERNS,
    PCAP_FRAME_KEYS,
    RX_COST_KEYS,
    TASK_KEYS,
    TASK_KINDS,
    reserved_name,
)
from rtshield.schema_base import (
    DURATION_SCHEMA,
    MAX_PRIORITY,
    NAME_RE,
    NAME_SCHEMA,
    RATE_SCHEMA,
    FileModel,
    TomlTable,
    cell,
    check_name,
    context_of,
    duration_ns,
    fail,
    file_schema,
    key,
    key_table,
    message,
    rate_hz,
    unique_names,
)


def _enum(ctype: str, prefix: str) -> tuple[str, ...]:
    """The names of a simulator or libshield enum, through the binding."""
    return _native.enum_names(ctype, prefix)


#: A flow's protocols and the NIC kinds: the simulator's enums (rtsim.h).
PROTOCOLS = _enum("rtsim_proto", "RTSIM_PROTO_")
NIC_KINDS = _enum("rtsim_nic_kind", "RTSIM_NIC_")
#: The mitigation kinds the simulator has; :data:`MITIGATION_KINDS` gives each its keys.
SIM_MITIGATIONS = _enum("rtsim_mitigation_kind", "RTSIM_MIT_")
#: ``[mitigation] timer`` of the bursty limiter (Regehr & Duongsaa §3.3): libshield's modes.
BURSTY_TIMERS = _enum("rts_bursty_mode", "RTS_BURSTY_TIMER_")


def limits() -> dict[str, int]:
    """libshield's and the simulator's limits, through the binding (see
    :func:`rtshield._native.native_limits`; looked up there so that tests can
    replace it)."""
    return _native.native_limits()


# --------------------------------------------------------------------------- errors


def _within(value: int, lo: int, hi: int, *at: str | int) -> None:
    """``value`` must lie in ``[lo, hi]`` (a bound known only with the other tables)."""
    if not lo <= value <= hi:
        bound = f"at least {lo}" if value < lo else f"at most {hi}"
        raise fail(f"must be {bound}, got {value}", *at)


def _at_most(entries: Sized, limit: str, what: str, *at: str | int) -> None:
    """At most ``limits()[limit]`` ``entries``, a limit of libshield or the simulator
    (``what``: the entries in the message, ``"flows"``; ``at``: the key path)."""
    n = limits()[limit]
    if len(entries) > n:
        raise fail(f"at most {n} {what}, got {len(entries)}", *at)


def _choice_first(data: Any, key: str, choices: Any, *, required: bool = True) -> None:
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


def _require(table: Any, keys: tuple[str, ...], *at: str | int) -> None:
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
    :data:`~rtshield.scenario.NAME_RULE`, not one of the outputs' reserved names."""
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


def _own(info: ValidationInfo, section: str, key: str) -> bool:
    """Whether the user wrote ``[section] key`` (not the preset's defaults)."""
    own = context_of(info).get("own")
    return True if own is None else (section, key) in own


def _cores_check(core: int, info: ValidationInfo, key: str = "core") -> None:
    plat = context_of(info).get("platform")
    if plat is not None and core >= plat.cores:
        raise fail(f"platform {plat.name} has {plat.cores} core(s), numbered from 0", key)


class ScenarioTable(Table):
    """``[scenario]``: what the scenario is, which preset it runs on, and how long."""

    name: str = key(doc="short name, used in tables, figures and file names")
    description: str = key("", doc="one line for the report")
    source: str = key("", doc="provenance: the paper, section and figure this reproduces")
    notes: str = key(
        "", doc="free text shown in reports, e.g. what the paper observed for this configuration"
    )
    platform: str = key(doc="preset name: `python/rtshield/platforms/NAME.toml`")
    duration: Duration = key(doc="simulated time; a whole number of bins")
    bin: Duration = key(
        1_000_000_000,
        doc="measurement bin (Danicki et al. reported every second)",
        toml="1s",
        shown='preset, else `"1s"`',
    )
    seed: Int(0, 2**63 - 1) = key(
        1,
        doc="seed of all randomness (Poisson arrivals); same scenario + seed → identical results",
    )

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> ScenarioTable:
        if not self.name.strip():
            raise fail("must not be empty", "name")
        if len(self.name) > 128 or any(ord(ch) < 32 or ord(ch) == 127 for ch in self.name):
            raise fail(
                "a short name: at most 128 characters, no line breaks or control characters",
                "name",
            )
        dur, b = self.duration, self.bin
        if b > dur and not _own(info, "scenario", "bin"):
            raise fail(
                f"{units.format_ns(dur)} is shorter than the bin ({units.format_ns(b)}, the "
                "preset's default); set [scenario] bin too",
                "duration",
            )
        if b > dur:
            raise fail(
                f"the bin ({units.format_ns(b)}) is longer than the duration "
                f"({units.format_ns(dur)})",
                "bin",
            )
        if dur % b:
            raise fail(
                f"must be a whole number of bins ({units.format_ns(dur)} is not a multiple of "
                f"bin = {units.format_ns(b)})",
                "duration",
            )
        if dur // b > MAX_BINS:
            raise fail(
                f"{units.format_ns(dur)} is {dur // b} bins of {units.format_ns(b)}; at most "
                f"{MAX_BINS} (shorten the run or widen the bin)",
                "duration",
            )
        return self


class CriticalTable(Table):
    """``[critical]``: the periodic critical task (Danicki et al. §3)."""

    period: Duration = key(doc="cycle period, also the relative deadline")
    work: Duration = key(doc="CPU time of one cycle on an otherwise idle core")
    priority: Priority = key(doc="scheduler priority (a higher number is a higher priority)")
    core: Int(0, 2**31 - 1) = key(0, doc="core it runs on")

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> CriticalTable:
        _cores_check(self.core, info)
        return self


class DriverTable(Table):
    """``[driver]``: the network driver task and its RX queue."""

    priority: Priority = key(
        doc="scheduler priority; equal to the critical task's → round robin on the tick"
    )
    queue: Int(1, 1_000_000) = key(doc="RX queue capacity in packets (the queue the ISR fills)")
    core: Int(0, 2**31 - 1) | None = key(None, doc="core it runs on", shown="the critical task's")

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> DriverTable:
        if self.core is not None:
            _cores_check(self.core, info)
        return self


class NicQueueTable(Table):
    """``[[nic.queues]]``: one queue of the multiqueue NIC (Behnke et al. §7.3.2, Table 2)."""

    name: Name("queue") = key(
        doc="unique, an identifier (Names, above); flows name it in `nic_queue`"
    )
    size: Int(1, 65535) = key(doc="descriptors (n_q; Behnke §8.4: 128)")
    absolute: Duration | None = key(
        None,
        doc="absolute timer: an interrupt at most this long after the first packet of a batch",
        shown="off",
    )
    packet: Duration | None = key(
        None, doc="packet timer: an interrupt this long after the last arrival", shown="off"
    )
    frames: Int(1, 65535) | None = key(
        None, doc="an interrupt once this many frames wait", shown="off"
    )


class NicTable(Table):
    """``[nic]``: ``edge`` (an interrupt per packet), ``dma_ring`` (a descriptor ring)
    or ``multiqueue`` (Behnke et al. §7: per-flow queues with moderation)."""

    kind: Literal[NIC_KINDS] = key(  # type: ignore[valid-type]
        "edge",
        doc="`edge`: one interrupt per packet; an arrival while the line is disabled or "
        "already pending is lost (Danicki's GPIO bridge). `dma_ring`: packets land in a "
        "descriptor ring, an interrupt announces them. `multiqueue`: Behnke et al. §7 — a "
        "distribution map sends each registered flow to its own queue, each queue moderates "
        "its interrupts",
        shown='preset, else `"edge"`',
    )
    ring: Int(1, 1_000_000) | None = key(
        None,
        doc="descriptors of `dma_ring`; with `[rx]` (any kind, then required): the buffers of "
        "the pool posted to the NIC, at most `[rx] buffers`. An error for `edge` and "
        "`multiqueue` without `[rx]`",
        shown="required for `dma_ring` and with `[rx]`",
    )
    core: Int(0, 2**31 - 1) | None = key(
        None,
        doc="core that takes the NIC and mitigation-timer interrupts",
        shown="the driver's core",
    )
    queues: list[NicQueueTable] = key(
        doc="`multiqueue` only (required, at least one entry): `[[nic.queues]]`, below",
        factory=list,
        shown="required for `multiqueue`",
    )

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> NicTable:
        if self.kind == "multiqueue":
            if not self.given("queues"):
                raise fail('missing ([[nic.queues]] of kind = "multiqueue")', "queues")
            if not self.queues:
                raise fail('kind = "multiqueue" needs at least one [[nic.queues]] entry', "queues")
            _at_most(self.queues, "nic_queues", "queues", "queues")
            unique_names(self.queues, "{name} is used by two queues", "queues")
        elif self.given("queues") and _own(info, "nic", "queues"):
            raise fail(f'[[nic.queues]] need kind = "multiqueue" (kind is {self.kind!r})', "queues")
        if self.core is not None:
            _cores_check(self.core, info)
        return self


class RxTable(Table):
    """``[rx]``: Behnke et al.'s receive path (§5): early demultiplexing into priority
    flow queues, buffer recycling, priority inheritance, per-flow servers and an
    optional global limit with a polling task."""

    enabled: bool = key(True, doc="`false`: the plain driver queue, as without `[rx]`")
    buffers: int | None = key(
        None,
        doc="packet buffers in the pool shared by the NIC (`[nic] ring` of them posted) and "
        "the flow queues (at most `RTS_POOL_MAX_BUFS`)",
        shown="preset",
    )
    recycle_below: int | None = key(
        None,
        doc="recycle a lower-priority queued buffer when fewer than this many buffers are "
        "posted (Behnke §5.3.2)",
        shown="libshield's share (half the ring)",
        type="integer 0–`ring`",
    )
    short_circuit: bool = key(
        True,
        doc="path (a) of Behnke Figure 8: with the ring low, a frame of the lowest queued "
        "priority is reposted at once (`short_circuit` drop); `false` as in their Figure 9 "
        "footnote 1",
    )
    cache: Literal["lazy", "eager"] = key(
        "lazy",
        doc="`lazy` (the paper's): the ISR reads only the header lines, the network task "
        "invalidates the rest (`invalidate_deferred`); `eager`: the ISR invalidates the whole "
        "frame (`invalidate_eager`)",
    )
    global_capacity: U32 = key(
        0,
        doc="frames per `global_period` taken by interrupt before switching to polling; 0 = "
        "no global limit",
    )
    global_period: Duration | None = key(
        None, doc="the global limit's period", shown="required with a capacity"
    )
    poll_priority: Priority | None = key(
        None,
        doc="priority of the polling task (a task named `polling`, on the driver's core); put "
        "it above any always-ready (`background`) task of that core, or the ring is never "
        "harvested once the limit is reached",
        shown="required with a capacity",
    )


class DetectTable(Table):
    """``[detect]``: Danicki et al.'s overload detectors (§2.1), computed by libshield."""

    slice: Duration | None = key(
        None, doc='time slice of the RX interrupt count, e.g. `"1ms"`', shown="— (off)"
    )
    irq_threshold: U32 = key(
        0, doc="a slice with more RX interrupts than this fires the detector (needs `slice`)"
    )
    fill_high: Int(1, 2**32 - 1) | None = key(
        None,
        doc="RX queue fill (the driver queue, or all flow queues with `[rx]`) that fires the "
        "watermark",
        shown="— (off)",
    )
    fill_low: U32 = key(0, doc="fill at or below which the watermark clears; below `fill_high`")

    @model_validator(mode="after")
    def _check(self) -> DetectTable:
        if self.given("irq_threshold") and self.slice is None:
            raise fail("needs slice (the interrupt count's time slice)", "irq_threshold")
        if self.given("fill_low") and self.fill_high is None:
            raise fail("needs fill_high", "fill_low")
        if self.fill_high is not None and self.fill_low >= self.fill_high:
            raise fail(
                f"must be below fill_high ({self.fill_high}), got {self.fill_low}", "fill_low"
            )
        return self


class MitigationTable(Table):
    """``[mitigation]``: one protection and its parameters; ``also`` adds more of
    Danicki et al.'s. Each kind takes only its own keys (see ``MITIGATION_KINDS``)."""

    kind: Literal[SIM_MITIGATIONS] = key(  # type: ignore[valid-type]
        "none", doc="the protection (table above); each kind takes only its own parameters"
    )
    also: list[Literal[ALSO_KINDS]] = key(  # type: ignore[valid-type]
        doc="further protections of Danicki et al. applied together with `kind` (which must "
        "be one of them); their parameters come from this table",
        factory=list,
        shown="`[]`",
        type="list of `burst`, `hysteresis`, `budget`, `queue`",
    )
    enable_bits: Int(1, 2) | None = key(
        None,
        doc="how the RX line's enable bit is shared (Regehr & Duongsaa §4): `2`, libshield's "
        "gate apart from the application's bit; `1`, one bit both write. Not with `[rx]`",
        shown="`2`",
    )
    slice: Duration | None = key(None, doc="`burst`: the time slice")
    capacity: Int(1, 2**31 - 1) | None = key(None, doc="`burst`: packets per slice")
    block_below: Fraction | None = key(
        None,
        doc="`hysteresis`: block the driver when the critical task's earliness at completion "
        "(a fraction of the period) falls below this",
    )
    unblock_above: Fraction | None = key(
        None, doc="`hysteresis`: unblock it above this earliness; above `block_below`"
    )
    sleep: Duration = key(
        1_000_000,
        doc="`hysteresis`: how long the blocked driver sleeps between checks",
        toml="1ms",
    )
    charge_isr: bool | None = key(
        None,
        doc="`budget`: `true` also charges each RX interrupt's duration to the budget (the "
        "driver's packet work always is)",
        shown="`false`",
    )
    min_interarrival: Duration | None = key(
        None, doc="`strict`: least time between two RX interrupts"
    )
    burst: Int(1, 2**31 - 1) | None = key(None, doc="`bursty`: interrupts per period")
    period: Duration | None = key(None, doc="`bursty`, `polling`: the timer's period")
    timer: Literal[BURSTY_TIMERS] | None = key(  # type: ignore[valid-type]
        None,
        doc="`bursty`: `periodic`, or `lazy`: the timer's interrupt is enabled only while a "
        "source is over its burst",
        shown='`"periodic"`',
    )
    window: Duration | None = key(None, doc="`countdown`: the window")

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        kind = data.get("kind", "none")
        also = data.get("also") if isinstance(data.get("also"), list) else []
        kinds = [k for k in (kind, *also) if isinstance(k, str) and k in MITIGATION_KINDS]
        return ("kind", "also", "enable_bits") + tuple(
            k for kd in kinds for k in MITIGATION_KINDS[kd]
        )

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        kind = data.get("kind", "none")
        allowed = MITIGATION_KINDS.get(kind, ()) if isinstance(kind, str) else ()
        takes = ", ".join(allowed) or "no parameters"
        owners = [k for k, ks in MITIGATION_KINDS.items() if key in ks]
        if owners:
            return (
                f"is a parameter of {' / '.join(owners)}, not of kind = {kind!r} "
                f"(which takes: {takes})"
            )
        return f"unknown key (kind {kind!r} takes: {takes})"

    @model_validator(mode="before")
    @classmethod
    def _also_first(cls, data: Any) -> Any:
        # `kind` and `also` decide which keys are known: check them before the keys.
        _choice_first(data, "kind", SIM_MITIGATIONS, required=False)
        if isinstance(data, Mapping) and "also" in data:
            raw, kind = data["also"], data.get("kind", "none")
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                raise fail(f'expected a list of names such as ["hysteresis"], got {raw!r}', "also")
            if kind not in ALSO_KINDS:
                raise fail(
                    f"combines Danicki et al.'s protections: kind must be one of "
                    f"{', '.join(ALSO_KINDS)} (kind is {kind!r})",
                    "also",
                )
            seen: list[str] = []
            for name in raw:
                if name not in ALSO_KINDS:
                    raise fail(f"{name!r} is not one of: {', '.join(ALSO_KINDS)}", "also")
                if name == kind:
                    raise fail(f"{name!r} is already the kind", "also")
                if name in seen:
                    raise fail(f"{name!r} is listed twice", "also")
                seen.append(name)
        return data


class SourceTable(Table):
    """``[[sources]]``: one RX interrupt source (a line of the edge NIC). Sources are
    numbered in file order; source 0 has the highest interrupt priority."""

    name: Name("source") = key(
        doc="unique, an identifier (Names, above); flows name it in `source`"
    )
    isr_work: Span | None = key(
        None,
        doc="RX handler work per packet of this source (replaces `isr_per_packet`; entry/exit "
        "and the mitigation hook are added as usual)",
        shown="the preset's `isr_per_packet`",
    )
    burst: Int(1, 2**31 - 1) | None = key(
        None,
        doc="`bursty` only: this source's burst; every source's counter is cleared by the "
        "**one** timer of `[mitigation] period` (§3.5)",
        shown="`[mitigation] burst`",
    )
    min_interarrival: Duration | None = key(
        None,
        doc="`strict` only: this source's limiter (each source has its own timer)",
        shown="`[mitigation] min_interarrival`",
    )
    isr_only: bool = key(
        False,
        doc="`true`: the handler does all the work (an interrupt-level task, like a TinyOS "
        "handler): the packet is delivered when the handler ends and never reaches the "
        "driver's queue",
    )


_FLOW_COMMON = (
    "name",
    "protocol",
    "dst_port",
    "src",
    "src_port",
    "size",
    "vlan_pcp",
    "priority",
    "bind",
    "capacity",
    "server_period",
    "queue",
    "nic_queue",
    "pattern",
    "begin",
    "source",
)
_ALL_PATTERN_KEYS = tuple(sorted({k for ks in PATTERNS.values() for k in ks}))


class FlowTable(Table):
    """``[[flows]]``: one traffic flow: what its frames are and its rate over time.
    Each pattern takes its own keys (see ``PATTERNS``) beyond the common ones."""

    name: Name("flow") = key(doc="unique; an identifier (Names, above)")
    pattern: Literal[tuple(PATTERNS)] = key(  # type: ignore[valid-type]
        doc="how the rate varies (patterns below)", type="see below"
    )
    protocol: Literal[PROTOCOLS] = key(  # type: ignore[valid-type]
        "tcp",
        doc="TCP SYN segments, UDP datagrams, ICMP echo requests, ARP requests, or frames of "
        "an unknown EtherType",
    )
    dst_port: Int(0, 65535) = key(0, doc="the device's port (TCP, UDP)")
    src: str = key(
        DEFAULT_SRC,
        doc="source address of its frames (the device is 192.0.2.1)",
        type="IPv4 address",
    )
    src_port: Int(0, 65535) = key(40000, doc="source port (TCP, UDP)")
    size: Int(14, 65535) = key(
        60,
        doc="bytes on the wire; with `[rx]` or the multiqueue NIC from the protocol's headers "
        "to `RTSIM_FRAME_MAX` (Limits, above)",
    )
    vlan_pcp: Int(0, 7) | None = key(
        None,
        doc="present: the frames carry one 802.1Q tag with this priority code point",
        shown="untagged",
    )
    priority: Priority = key(
        0,
        doc="flow priority (for components that classify); with `[rx]` below "
        "`RTS_FLOW_PRIO_LEVELS`, the socket's priority the network task inherits (Behnke §5.4)",
    )
    bind: bool | None = key(
        None,
        doc="a socket is bound to (`protocol`, `dst_port`): with `[rx]` the flow is registered "
        "in libshield's flow table; `false`: no socket of its own — its frames are processed, "
        "then dropped as `no_socket`, unless another flow binds the same protocol and port "
        "(frames are classified by their bytes, so they then reach that socket). Only TCP and "
        "UDP flows have sockets",
        shown="`true` for TCP and UDP",
    )
    capacity: U32 | None = key(
        None,
        doc="`[rx]` only: the flow's deferrable server admits this many packets per "
        "`server_period` (Behnke §5.5); 0 = unlimited",
        shown="unlimited",
    )
    server_period: Duration | None = key(
        None, doc="`[rx]` only: the server's period", shown="required with `capacity` > 0"
    )
    queue: Int(1, 2**31 - 1) | None = key(
        None,
        doc="`[rx]` only: packets the flow's queue may hold",
        shown="the pool",
        type="integer 1–`buffers`",
    )
    nic_queue: str | None = key(
        None,
        doc="multiqueue NIC only: the `[[nic.queues]]` entry the NIC's map sends the flow to; "
        "without it the flow is dropped in the NIC",
        shown="unmapped",
    )
    begin: Span = key(
        0, doc="the flow is silent before; the pattern's clock starts here", toml="0s"
    )
    source: str | None = key(
        None,
        doc="the `[[sources]]` entry the flow arrives on (required with several sources)",
        shown="the only source",
    )
    rate: Rate | None = key(None, doc="`constant`, `poisson`: the rate")
    start: Rate | None = key(None, doc="`pyramid`: first and last level")
    peak: Rate | None = key(None, doc="`pyramid`: top level")
    step: RateStep | None = key(None, doc="`pyramid`: level increment")
    step_every: Duration | None = key(None, doc="`pyramid`, `steps`: how long each level lasts")
    rates: list[Rate] | None = key(None, doc="`steps`: the rates in turn")
    file: str | None = key(
        None,
        doc="the capture, relative to the scenario file's folder: classic pcap (microsecond "
        "or nanosecond timestamps, either byte order), Ethernet link type; pcapng is refused "
        "(convert it with `editcap -F pcap`)",
        shown="required",
    )
    scale: float = key(
        1.0,
        doc="the capture's rate times this: `2.0` halves every gap",
        type="number in (0, 1000]",
    )
    loop: bool = key(
        False,
        doc="replay the capture again and again; one pass lasts the replayed span plus one "
        "mean gap, so an evenly spaced capture loops evenly",
    )
    skip: Span = key(
        0,
        doc="start this far into the capture; frames before are not sent and the replay's "
        "clock starts there",
        toml="0s",
    )

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        pattern = data.get("pattern")
        return _FLOW_COMMON + (PATTERNS.get(pattern, ()) if isinstance(pattern, str) else ())

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        pattern = data.get("pattern")
        if key in _ALL_PATTERN_KEYS and isinstance(pattern, str) and pattern in PATTERNS:
            owners = [p for p, ks in PATTERNS.items() if key in ks]
            return (
                f"belongs to pattern {' / '.join(owners)}, not {pattern!r} "
                f"(which takes: {', '.join(PATTERNS[pattern])})"
            )
        return "unknown key (allowed: " + ", ".join(cls.keys_for(data)) + ")"

    @model_validator(mode="before")
    @classmethod
    def _pattern_first(cls, data: Any) -> Any:
        # the pattern decides which keys are known: check it first
        _choice_first(data, "pattern", PATTERNS)
        if isinstance(data, Mapping) and data["pattern"] == "pcap":
            for k in PCAP_FRAME_KEYS:
                if k in data:
                    raise fail("a pcap flow's frames are the capture's own (drop this key)", k)
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> FlowTable:
        ctx = context_of(info)
        if not ctx.get("rx_on", True):
            for k in FLOW_RX_ONLY:
                if self.given(k):
                    raise fail("only applies with the receive path ([rx])", k)
        nic_kind = ctx.get("nic_kind", "multiqueue")
        if self.nic_queue is not None and nic_kind != "multiqueue":
            raise fail(f'needs [nic] kind = "multiqueue" (kind is {nic_kind!r})', "nic_queue")
        optional = PATTERN_OPTIONAL.get(self.pattern, ())
        _require(self, tuple(k for k in PATTERNS[self.pattern] if k not in optional))
        if self.pattern == "pyramid":
            if self.peak < self.start:
                raise fail("must not be below start", "peak")
            if self.step <= 0:
                raise fail("must be above 0pps", "step")
        if self.pattern == "steps":
            if not self.rates:
                raise fail(
                    'expected a non-empty list of rates such as ["1000pps", "5kHz"]', "rates"
                )
            _at_most(self.rates, "rates", "rates", "rates")
        if self.pattern == "pcap":
            if not self.file:
                raise fail("expected the path of a pcap file", "file")
            if "\0" in self.file:
                raise fail("not a usable file name (it contains a NUL character)", "file")
            if not math.isfinite(self.scale):
                raise fail(f"expected a number such as 2.0, got {self.scale!r}", "scale")
            if not 0 < self.scale <= MAX_PCAP_SCALE:
                raise fail(f"must lie in (0, {MAX_PCAP_SCALE:g}], got {self.scale!r}", "scale")
        try:
            addr = ipaddress.IPv4Address(self.src)
        except ValueError:
            raise fail(
                f'expected an IPv4 address such as "192.0.2.100", got {self.src!r}', "src"
            ) from None
        if int(addr) == 0:
            raise fail("0.0.0.0 is not a source address", "src")
        socketed = self.protocol in ("tcp", "udp")
        if self.bind and not socketed:
            raise fail(
                f"only TCP and UDP flows have sockets (protocol is {self.protocol!r})", "bind"
            )
        return self

    @property
    def bound(self) -> bool:
        """Whether a socket is bound to the flow (``bind``, default: TCP and UDP)."""
        return self.bind if self.bind is not None else self.protocol in ("tcp", "udp")


class TaskTable(Table):
    """``[[tasks]]``: an extra task: ``background`` (always ready), ``periodic`` or
    ``worker`` (receives one flow). Each kind takes its own keys (``TASK_KEYS``)."""

    name: Name("task") = key(doc="unique, an identifier (Names, above)")
    kind: Literal[TASK_KINDS] = key(  # type: ignore[valid-type]
        doc="`background`, `periodic` or `worker` (table above)"
    )
    priority: Priority | None = key(
        None, doc="scheduler priority", shown="`0` for `background`, else required"
    )
    core: Int(0, 2**31 - 1) = key(0, doc="core it runs on")
    period: Duration | None = key(None, doc="`periodic`: its period")
    work: Duration | None = key(None, doc="`periodic`: per cycle; `worker`: per message")
    masks_rx: bool = key(
        False,
        doc="`periodic`: each job masks the RX lines from its start to its end, the "
        "application's mutual exclusion with the handlers of Regehr & Duongsaa §4",
    )
    flow: str | None = key(None, doc="`worker`: the flow it receives (a flow's name)")
    queue: Int(1, 1_000_000) = key(16, doc="`worker`: mailbox capacity, messages")

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        kind = data.get("kind")
        return TASK_KEYS.get(kind, tuple(cls.model_fields)) if isinstance(kind, str) else ()

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        kind = data.get("kind")
        return f"unknown key (kind {kind!r} takes: " + ", ".join(cls.keys_for(data)) + ")"

    @model_validator(mode="before")
    @classmethod
    def _kind_first(cls, data: Any) -> Any:
        _choice_first(data, "kind", TASK_KINDS)
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> TaskTable:
        _cores_check(self.core, info)
        needs = {
            "background": (),
            "periodic": ("priority", "period", "work"),
            "worker": ("priority", "flow", "work"),
        }[self.kind]
        _require(self, needs)
        return self


def _cost_keys_schema(schema: dict[str, Any]) -> None:
    schema["additionalProperties"] = DURATION_SCHEMA


class ScenarioFile(FileModel, strict=True, title="rtshield scenario"):
    """A scenario file: one simulated device under one network load."""

    scenario: ScenarioTable
    costs: dict[str, Span] = Field(
        default_factory=dict,
        description="overrides of the preset's per-activity CPU costs (durations)",
        json_schema_extra=_cost_keys_schema,
    )
    critical: CriticalTable
    driver: DriverTable
    nic: NicTable = Field(default_factory=NicTable)
    rx: RxTable | None = None
    detect: DetectTable = Field(default_factory=DetectTable)
    mitigation: MitigationTable = Field(default_factory=MitigationTable)
    sources: list[SourceTable] = Field(default_factory=list)
    flows: list[FlowTable] = Field(default_factory=list)
    tasks: list[TaskTable] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> ScenarioFile:
        ctx = context_of(info)
        preset_costs: Mapping[str, int] = ctx.get("preset_costs") or {}
        plat = ctx.get("platform")
        for k in self.costs:
            if k not in preset_costs and k not in PATH_QUANTILE_COSTS:
                raise fail(
                    "unknown key (the preset "
                    + (plat.name if plat is not None else "")
                    + " defines: "
                    + ", ".join(preset_costs)
                    + "; and a receive-path cost's quantiles rx_path_NAME_p90/_p99/_p999/_p9999)",
                    "costs",
                    k,
                )
        costs = {**preset_costs, **self.costs}
        self._check_nic_rx(info, costs)
        self._check_sources(costs)
        self._check_mitigation()
        self._check_flows(ctx)
        self._check_tasks()
        return self

    @property
    def rx_on(self) -> bool:
        """Whether the receive path is on (``[rx]`` written and not disabled)."""
        return self.rx is not None and self.rx.enabled

    @property
    def ring(self) -> int | None:
        """The NIC's ring: set for ``dma_ring`` or with ``[rx]``, else None."""
        return self.nic.ring if self.nic.kind == "dma_ring" or self.rx_on else None

    def _check_nic_rx(self, info: ValidationInfo, costs: Mapping[str, int]) -> None:
        nic, rx = self.nic, self.rx
        if nic.kind == "dma_ring" or self.rx_on:
            if nic.ring is None:
                raise fail("missing", "nic", "ring")
        elif nic.ring is not None and _own(info, "nic", "ring"):
            raise fail(
                f'only applies to kind = "dma_ring" or with [rx] (kind is {nic.kind!r}, no [rx])',
                "nic",
                "ring",
            )
        if not self.rx_on:
            return
        assert rx is not None
        plat = context_of(info).get("platform")
        for k in RX_COST_KEYS:
            if k not in costs:
                raise fail(
                    "missing (the receive path, [rx], needs it; see docs/model.md)",
                    "costs",
                    k,
                    origin=plat.path if plat is not None else None,
                )
        lim = limits()
        _require(rx, ("buffers",), "rx")
        _within(rx.buffers, 2, lim["pool_max"], "rx", "buffers")
        ring = nic.ring or 0
        if ring > rx.buffers:
            raise fail(
                f"a pool of {rx.buffers} buffers cannot fill [nic] ring = {ring} (the buffers "
                "posted to the NIC come from the pool)",
                "rx",
                "buffers",
            )
        if rx.recycle_below is not None:
            _within(rx.recycle_below, 0, ring, "rx", "recycle_below")
        # Checked even when the limit is off (capacity 0), which they do not then
        # affect: a sweep over global_capacity = 0, 3, ... keeps one file valid.
        if rx.global_capacity > 0:
            _require(rx, ("global_period", "poll_priority"), "rx")
        if self.driver.priority >= lim["prio_levels"]:
            raise fail(
                f"with [rx] at most {lim['prio_levels'] - 1}: the network task's own "
                f"priority is one of libshield's flow priority levels, got {self.driver.priority}",
                "driver",
                "priority",
            )

    def _check_sources(self, costs: Mapping[str, int]) -> None:
        srcs, mkind = self.sources, self.mitigation.kind
        if not srcs:
            return
        _at_most(srcs, "sources", "sources (RX interrupt lines of the simulated NIC)", "sources")
        if len(srcs) > 1 and mkind not in MULTI_SOURCE_KINDS:
            raise fail(
                f"{len(srcs)} sources need [mitigation] kind {', '.join(MULTI_SOURCE_KINDS)} "
                f"(kind {mkind!r} acts on one RX line)",
                "sources",
            )
        if len(srcs) > 1 and self.nic.kind != "edge":
            raise fail(
                f'{len(srcs)} sources need [nic] kind = "edge" (a {self.nic.kind} NIC has one '
                "interrupt line)",
                "sources",
            )
        unique_names(srcs, "{name} is used by two sources", "sources")
        for i, s in enumerate(srcs):
            for k, owner in (("burst", "bursty"), ("min_interarrival", "strict")):
                if s.given(k) and mkind != owner:
                    raise fail(
                        f'only applies under [mitigation] kind = "{owner}" (kind is {mkind!r})',
                        "sources",
                        i,
                        k,
                    )
            work = s.isr_work if s.isr_work is not None else costs.get("isr_per_packet", 0)
            if work + costs.get("isr_entry_exit", 0) <= 0:
                raise fail(
                    "an RX interrupt must cost CPU time (isr_entry_exit is 0 on this platform)",
                    "sources",
                    i,
                    "isr_work",
                )

    def _check_mitigation(self) -> None:
        mt, sources = self.mitigation, self.sources
        # A parameter that every [[sources]] entry gives for itself may be left out.
        own = {
            "burst": bool(sources) and all(s.burst is not None for s in sources),
            "min_interarrival": bool(sources)
            and all(s.min_interarrival is not None for s in sources),
        }
        required = {
            "burst": ("slice", "capacity"),
            "hysteresis": ("block_below", "unblock_above"),
            "strict": ("min_interarrival",),
            "bursty": ("burst", "period"),
            "countdown": ("window",),
            "polling": ("period",),
        }
        kinds = (mt.kind, *mt.also)
        for kind in kinds:
            for k in required.get(kind, ()):
                if getattr(mt, k) is None and not own.get(k):
                    raise fail("missing", "mitigation", k)
        if "hysteresis" in kinds and mt.unblock_above <= mt.block_below:
            raise fail(
                f"must be greater than block_below ({mt.unblock_above:g} <= "
                f"{mt.block_below:g}): the driver would never stay unblocked",
                "mitigation",
                "unblock_above",
            )

    def _check_flows(self, ctx: Mapping[str, Any]) -> None:
        _at_most(self.flows, "flows", "flows", "flows")
        unique_names(self.flows, "{name} is used by two flows", "flows")
        src_names = [s.name for s in self.sources]
        for i, f in enumerate(self.flows):
            if f.begin >= self.scenario.duration:
                raise fail("is at or after the end of the scenario", "flows", i, "begin")
            if f.source is not None:
                if not self.sources:
                    raise fail(
                        "needs [[sources]] (there are none: every flow arrives on the one RX line)",
                        "flows",
                        i,
                        "source",
                    )
                if f.source not in src_names:
                    raise fail(
                        f"no source named {f.source!r} (sources: {', '.join(src_names)})",
                        "flows",
                        i,
                        "source",
                    )
            elif len(self.sources) > 1:
                raise fail(
                    "missing: with several [[sources]] every flow names its own "
                    f"(sources: {', '.join(src_names)})",
                    "flows",
                    i,
                    "source",
                )
            if f.pattern == "pcap":
                ctx.setdefault("pcap", {})[i] = self._read_capture(f, i, ctx)
            self._check_flow_frame(f, i)
        self._check_captures(ctx)
        if self.rx_on:
            self._check_bound()

    def _read_capture(self, f: FlowTable, i: int, ctx: Mapping[str, Any]) -> Any:
        """The replay of a pcap flow's capture, read and checked now."""
        from rtshield import pcap as _pcap

        path = (Path(ctx.get("base") or Path.cwd()) / str(f.file)).resolve()
        try:
            cap = _pcap.read_pcap(path)
            rp = _pcap.replay(cap, scale=f.scale, skip_ns=f.skip, loop=f.loop)
        except UsageError as e:
            raise fail(str(e), "flows", i, "file") from None
        return path, rp

    def _check_captures(self, ctx: Mapping[str, Any]) -> None:
        """All pcap flows together within the simulator's trace limits."""
        reps = list((ctx.get("pcap") or {}).values())
        if len(reps) < 2:
            return  # one capture was checked against the limits when it was read
        from rtshield import pcap as _pcap  # here: dpkt's import is a tenth of a second

        max_frames, max_bytes, _ = _pcap.trace_limits()
        frames = sum(len(rp.times_ns) for _, rp in reps)
        n_bytes = sum(len(rp.data) for _, rp in reps)
        if frames > max_frames or n_bytes > max_bytes:
            raise fail(
                f"the captures hold {frames} frames and {n_bytes} bytes together; the "
                f"simulator takes at most {max_frames} frames and {max_bytes >> 20} MiB of "
                "frames in one scenario",
                "flows",
            )

    def _check_flow_frame(self, f: FlowTable, i: int) -> None:
        rx, nic = (self.rx if self.rx_on else None), self.nic
        if rx is not None:
            _within(f.priority, 0, limits()["prio_levels"] - 1, "flows", i, "priority")
            if f.bound and f.dst_port == 0:
                raise fail(
                    "a bound socket needs a port 1-65535 (or set bind = false)",
                    "flows",
                    i,
                    "dst_port",
                )
            if f.capacity is not None and f.capacity > 0 and f.server_period is None:
                raise fail(
                    "missing (capacity > 0 needs the server's period)", "flows", i, "server_period"
                )
            if f.server_period is not None and not (f.capacity or 0) > 0:
                raise fail(
                    "only applies with a capacity > 0 (the flow's server)",
                    "flows",
                    i,
                    "server_period",
                )
            if f.queue is not None:
                _within(f.queue, 1, rx.buffers or 0, "flows", i, "queue")
            for k in FLOW_RX_ONLY:
                if f.given(k) and not f.bound:
                    raise fail(
                        "applies to a bound flow's queue (this flow has bind = false)",
                        "flows",
                        i,
                        k,
                    )
        if f.nic_queue is not None:
            qnames = [q.name for q in nic.queues]
            if f.nic_queue not in qnames:
                raise fail(
                    f"no [[nic.queues]] entry named {f.nic_queue!r} (queues: {', '.join(qnames)})",
                    "flows",
                    i,
                    "nic_queue",
                )
        if f.pattern != "pcap" and (rx is not None or nic.kind == "multiqueue"):
            from rtshield._native import load

            _, lib = load()
            vlan = f.vlan_pcp is not None
            proto = getattr(lib, f"RTSIM_PROTO_{f.protocol.upper()}")
            lo = int(lib.rtsim_frame_min(proto, 1 if vlan else 0))
            hi = limits()["frame_max"]
            if not lo <= f.size <= hi:
                tag = " with its 802.1Q tag" if vlan else ""
                raise fail(
                    f"a {f.protocol} frame{tag} is {lo}-{hi} bytes (its headers up to an "
                    f"Ethernet frame), got {f.size}",
                    "flows",
                    i,
                    "size",
                )

    def _check_bound(self) -> None:
        """With ``[rx]``: one socket per (protocol, port), within libshield's flow table."""
        seen: dict[tuple[str, int], str] = {}
        for i, f in enumerate(self.flows):
            if not f.bound:
                continue
            key = (f.protocol, f.dst_port)
            if key in seen:
                raise fail(
                    f"{f.protocol}/{f.dst_port} is already bound by flow {seen[key]!r} (one "
                    "socket per protocol and port; set bind = false on all but one)",
                    "flows",
                    i,
                    "bind",
                )
            seen[key] = f.name
        lim = limits()
        room = lim["flow_max"] - lim["flow_special"]
        if len(seen) > room:
            raise fail(
                f"{len(seen)} bound flows; libshield's flow table holds {room} (RTS_FLOW_MAX "
                f"minus the {lim['flow_special']} special flows)",
                "flows",
                "bind",
            )

    def _check_tasks(self) -> None:
        n = limits()["tasks"]
        polling = self.rx_on and self.rx is not None and self.rx.global_capacity > 0
        if len(self.tasks) > n - 2:
            raise fail(
                f"at most {n - 2} extra tasks (the critical task and the driver take 2 of {n}), "
                f"got {len(self.tasks)}",
                "tasks",
            )
        if polling and len(self.tasks) > n - 3:
            raise fail(
                f"at most {n - 3} extra tasks with the global limit (the critical task, the "
                f"driver and the polling task take 3 of {n}), got {len(self.tasks)}",
                "tasks",
            )
        flows = {f.name: f for f in self.flows}
        # the built-in tasks' names are reserved (Name), so only the extra tasks' can clash
        unique_names(self.tasks, "{name} is already taken", "tasks")
        for i, t in enumerate(self.tasks):
            if t.kind == "worker":
                if t.flow not in flows:
                    raise fail(
                        f"no flow named {t.flow!r} (flows: {', '.join(flows) or 'none'})",
                        "tasks",
                        i,
                        "flow",
                    )
                fl = flows[t.flow]
                if any(s.isr_only for s in self.sources if s.name == fl.source) or (
                    fl.source is None and len(self.sources) == 1 and self.sources[0].isr_only
                ):
                    src = fl.source or self.sources[0].name
                    raise fail(
                        f"{t.flow!r} arrives on source {src!r}, which is isr_only (finished in "
                        "its interrupt handler, no worker receives it)",
                        "tasks",
                        i,
                        "flow",
                    )
            if self.rx_on and t.kind == "worker" and not flows[t.flow].bound:
                raise fail(
                    f"{t.flow!r} has no bound socket (bind = false), so with [rx] no packet of "
                    "it reaches a worker",
                    "tasks",
                    i,
                    "flow",
                )


# --------------------------------------------------------------------------- presets


class PlatformTable(Table):
    """A preset's ``[platform]``: the processor and its RTOS."""

    name: str = Field(description="the preset's name (its file name)")
    description: str = ""
    source: str = Field("", description="where its numbers come from")
    clock_hz: float = Field(gt=0, description="CPU clock, Hz (cycle durations convert with it)")
    cores: int = Field(description="number of cores")
    tick: Duration = Field(description="RTOS tick period")
    tick_isr: Span = Field(description="CPU cost of one tick interrupt")
    time_slicing: bool = Field(True, description="round robin among equal priorities on the tick")

    @model_validator(mode="before")
    @classmethod
    def _clock(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "clock_hz" in data:
            v = data["clock_hz"]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise fail(f"expected a positive number of Hz, got {v!r}", "clock_hz")
        return data

    @model_validator(mode="after")
    def _check(self) -> PlatformTable:
        n = limits()["cores"]
        if not 1 <= self.cores <= n:
            raise fail(f"must lie in 1-{n}, got {self.cores}", "cores")
        return self


#: Keys of the sections a preset's ``[defaults]`` may fill.
DEFAULTABLE: dict[str, tuple[str, ...]] = {
    "scenario": ("bin", "seed", "duration"),
    "critical": tuple(CriticalTable.model_fields),
    "driver": tuple(DriverTable.model_fields),
    "nic": tuple(NicTable.model_fields),
    "rx": tuple(k for k in RxTable.model_fields if k != "enabled"),
}


def _defaults_table(section: str):
    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise fail("expected a table")
        for k in value:
            if k not in DEFAULTABLE[section]:
                raise fail(
                    "unknown key (allowed: " + ", ".join(sorted(DEFAULTABLE[section])) + ")", k
                )
        return value

    return Annotated[
        dict,
        BeforeValidator(check),
        WithJsonSchema(
            {
                "type": "object",
                "propertyNames": {"enum": list(DEFAULTABLE[section])},
                "description": f"defaults of the scenario's [{section}] (same keys and values)",
            }
        ),
    ]


class DefaultsTable(Table):
    """A preset's ``[defaults]``: values a scenario's sections take when they do not set them."""

    scenario: _defaults_table("scenario") = Field(default_factory=dict)
    critical: _defaults_table("critical") = Field(default_factory=dict)
    driver: _defaults_table("driver") = Field(default_factory=dict)
    nic: _defaults_table("nic") = Field(default_factory=dict)
    rx: _defaults_table("rx") = Field(default_factory=dict)

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        return f"unknown section (allowed: {', '.join(DEFAULTABLE)})"


class PresetFile(FileModel, strict=True, title="rtshield platform"):
    """A platform preset (``rtshield/platforms/NAME.toml``)."""

    platform: PlatformTable
    costs: dict[str, Span] = Field(default_factory=dict, description="per-activity CPU costs")
    defaults: DefaultsTable = Field(default_factory=DefaultsTable)


# --------------------------------------------------------------------------- JSON Schema

#: Per kind of task, what it is (the reference's table of kinds).
TASK_DOCS = {
    "background": "always ready; gets the capacity left over",
    "periodic": "a job of work every period",
    "worker": "receives the packets of one flow: work per message from its mailbox",
}
#: Per mitigation kind, what it is and where it comes from.
MITIGATION_DOCS = {
    "none": 'the plain FreeRTOS scheduler (Danicki et al. §3 "Scheduler")',
    "burst": "Danicki et al. §2.2 Burst Mitigation: at most `capacity` packets per `slice`",
    "hysteresis": "Danicki et al. §2.2 Hysteresis Mitigation: `block_below`, `unblock_above` "
    "are fractions of the period (the critical task's earliness at completion)",
    "budget": "Danicki et al. §2.2 Budget Mitigation: the critical task's earliness is the "
    "driver's budget; §4 names the uncharged ISR (`charge_isr`)",
    "queue": "Danicki et al. §2.2 Queue Mitigation (uses `[driver] queue`)",
    "strict": "Regehr & Duongsaa §3.2: at least `min_interarrival` between RX interrupts",
    "bursty": "Regehr & Duongsaa §3.3: `burst` interrupts per `period`",
    "countdown": "Regehr & Duongsaa §3.4",
    "polling": 'Regehr & Duongsaa §2 and §5.2 "pure polling": no interrupt; a timer every '
    "`period` checks the device and handles what waits",
}
#: Per traffic pattern, its rate over time.
PATTERN_DOCS = {
    "constant": "`rate`, arrivals evenly spaced",
    "poisson": "mean `rate`, exponential inter-arrival times drawn from the seed",
    "pyramid": "`start`, `start+step`, … (capped at `peak`), each level for `step_every`, then "
    "the same levels down to `start`, which then holds until the end",
    "steps": "each rate in turn for `step_every`, the last one until the end",
    "pcap": "the frames of a capture at their recorded times (below)",
}


def _only_keys(tag: str, keys_of: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """``if tag == k then only keys_of[k]``, for every ``k``."""
    return [
        {
            "if": {"properties": {tag: {"const": k}}, "required": [tag]},
            "then": {"propertyNames": {"enum": list(keys)}},
        }
        for k, keys in keys_of.items()
    ]


def json_schema(which: str = "scenario") -> dict[str, Any]:
    """The JSON Schema of a scenario file (``which="scenario"``), a system file
    (``"system"``, :mod:`rtshield.schema_system`) or a platform preset
    (``"platform"``), with the limits of this build's libshield and simulator.

    A key a preset's ``[defaults]`` may give is not required here (the file
    alone need not set it); each kind of flow, task and mitigation allows
    only its own keys."""
    if which == "system":
        from rtshield import schema_system

        return schema_system.json_schema()
    model = {"scenario": ScenarioFile, "platform": PresetFile}[which]
    schema = file_schema(model)
    lim = limits()
    props = schema.get("properties", {})
    defs = schema.get("$defs", {})
    if which == "scenario":
        for k, n in (
            ("flows", lim["flows"]),
            ("sources", lim["sources"]),
            ("tasks", lim["tasks"] - 2),
        ):
            props[k]["maxItems"] = n
        schema["required"] = ["scenario"]
        for name, section in (
            ("ScenarioTable", "scenario"),
            ("CriticalTable", "critical"),
            ("DriverTable", "driver"),
            ("NicTable", "nic"),
            ("RxTable", "rx"),
        ):
            d = defs[name]
            for k in d.get("required", []):
                if k in DEFAULTABLE[section]:
                    d["properties"][k].setdefault("x-default", "required (or preset)")
            d["required"] = [k for k in d.get("required", []) if k not in DEFAULTABLE[section]]
            if not d["required"]:
                del d["required"]
        defs["NicTable"]["properties"]["queues"]["maxItems"] = lim["nic_queues"]
        buffers = defs["RxTable"]["properties"]["buffers"]
        buffers.update(minimum=2, maximum=lim["pool_max"])
        defs["FlowTable"]["allOf"] = _only_keys(
            "pattern", {p: _FLOW_COMMON + ks for p, ks in PATTERNS.items()}
        )
        defs["TaskTable"]["allOf"] = _only_keys("kind", TASK_KEYS)
        plain = {k: ("kind", "also", "enable_bits") + ks for k, ks in MITIGATION_KINDS.items()}
        rules = _only_keys("kind", plain)
        for rule in rules:  # with `also`, the keys of those kinds are allowed too
            rule["if"]["not"] = {"required": ["also"]}
        defs["MitigationTable"]["allOf"] = rules
    return schema


# --------------------------------------------------------------------------- Markdown


def markdown_blocks() -> dict[str, str]:
    """The key reference of ``docs/scenarios.md``: one Markdown block per
    ``<!-- schema: NAME -->`` marker, generated from the models."""
    sc = json_schema("scenario")
    # the documented keys of a table are those of the file alone: preset defaults aside
    out = {
        "scenario": key_table(sc, "ScenarioTable"),
        "critical": key_table(sc, "CriticalTable"),
        "driver": key_table(sc, "DriverTable"),
        "nic": key_table(sc, "NicTable"),
        "nic.queues": key_table(sc, "NicQueueTable"),
        "rx": key_table(sc, "RxTable"),
        "detect": key_table(sc, "DetectTable"),
        "sources": key_table(sc, "SourceTable"),
        "flows": key_table(sc, "FlowTable", _FLOW_COMMON),
        "flows.pcap": key_table(sc, "FlowTable", PATTERNS["pcap"]),
        "mitigation.keys": key_table(sc, "MitigationTable"),
        "tasks.keys": key_table(sc, "TaskTable"),
    }
    lim = limits()
    out["limits"] = (
        "Limits (the simulator's fixed arrays, `RTSIM_MAX_*` in "
        "`sim/include/rtsim/rtsim.h`, and libshield's build options in "
        "`libshield/include/rtshield/rts_opts.h`, read through the binding, so a rebuilt "
        f"library moves them): at most {lim['cores']} cores, {lim['flows']} flows, "
        f"{lim['tasks'] - 2} extra tasks ({lim['tasks']} with the critical task and the "
        f"driver; {lim['tasks'] - 3} when the global limit adds its polling task), "
        f"{lim['rates']} rates in a `steps` flow, {lim['sources']} RX interrupt sources, "
        f"{lim['nic_queues']} queues of the multiqueue NIC, {lim['pool_max']} `[rx] buffers` "
        f"(`RTS_POOL_MAX_BUFS`), flow priorities 0–{lim['prio_levels'] - 1} with `[rx]` "
        f"(`RTS_FLOW_PRIO_LEVELS`), {lim['flow_max'] - lim['flow_special']} bound flows "
        f"(`RTS_FLOW_MAX` = {lim['flow_max']} minus the {lim['flow_special']} special ARP, "
        "ICMP, background and default flows); "
        f"frames of at most {lim['frame_max']} bytes (`RTSIM_FRAME_MAX`)."
    )
    rows = ["| kind | parameters | what it is |", "|---|---|---|"]
    for kind, keys in MITIGATION_KINDS.items():
        params = ", ".join(f"`{k}`" for k in keys) or "—"
        rows.append(f"| `{kind}` | {params} | {cell(MITIGATION_DOCS[kind])} |")
    out["mitigation"] = "\n".join(rows)
    rows = ["| pattern | keys | rate over time |", "|---|---|---|"]
    for pattern, keys in PATTERNS.items():
        rows.append(
            f"| `{pattern}` | {', '.join(f'`{k}`' for k in keys)} | {cell(PATTERN_DOCS[pattern])} |"
        )
    out["flows.patterns"] = "\n".join(rows)
    rows = ["| kind | keys | what it is |", "|---|---|---|"]
    for kind, keys in TASK_KEYS.items():
        shown = ", ".join(f"`{k}`" for k in keys if k != "kind")
        rows.append(f"| `{kind}` | {shown} | {cell(TASK_DOCS[kind])} |")
    out["tasks"] = "\n".join(rows)
    return out


_BLOCK_RE = re.compile(r"(<!-- schema: ([a-z._]+) -->\n)(.*?)(<!-- /schema -->)", re.S)


def render_docs(text: str, blocks: Mapping[str, str] | None = None) -> str:
    """``text`` (docs/scenarios.md) with every generated block replaced by the
    models' current reference (``blocks``, default :func:`markdown_blocks`);
    an unknown block name is an error."""
    blocks = markdown_blocks() if blocks is None else blocks

    def put(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in blocks:
            raise UsageError(f"docs: no generated block named {name!r} ({', '.join(blocks)})")
        return f"{m.group(1)}{blocks[name]}\n{m.group(4)}"

    return _BLOCK_RE.sub(put, text)
