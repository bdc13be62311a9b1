"""The system-file schema: pydantic models of ``SYSTEM.toml`` (``rtshield analyze``
and ``design``), as the rest of :mod:`rtshield.schema` is for scenario files.

A system file describes one core: its platform (a cost table), plain tasks,
interrupt sources with their protection, deferrable servers, the receive
path's global limit, shared timers and the NIC moderation parameters. Every
duration carries a unit (``"79cyc"`` uses the platform clock) or names a
platform cost (``"t_int"``). One parameter may be written ``"?"`` (:data:`OPEN`):
``rtshield design`` then searches its safe boundary; the keys that may be
open are typed :data:`OpenDuration`, :data:`OpenRate` or :func:`OpenInt`.

Errors name the key as the format's documentation does (docs/analysis.md):
``source.radio.burst: must be at least 1, got 0`` (an entry by its name once
it has a valid one, else by its position, ``task[0].name``);
:func:`usage_error` makes that line from pydantic's first error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from rtshield.errors import UsageError
from rtshield.schema import base
from rtshield.schema.base import FileModel, fail, key

#: The value of the one parameter ``rtshield design`` searches.
OPEN = "?"
SOURCE_MODELS = (
    "pure",
    "polling",
    "strict",
    "bursty",
    "hardware",
    "burst_mitigation",
    "queue_mitigation",
    "hysteresis_mitigation",
    "budget_mitigation",
)
#: Keys of a ``[[source]]`` besides ``name``, ``model``, ``priority``,
#: ``timer_priority`` and ``work``, per model.
SOURCE_KEYS: dict[str, tuple[str, ...]] = {
    "pure": ("min_interarrival", "max_rate"),
    "polling": ("min_interarrival", "max_rate"),
    "strict": ("min_interarrival", "max_rate"),
    "hardware": ("min_interarrival", "max_rate"),
    "bursty": ("burst_model", "timer", "burst", "max_rate", "burst_period", "burst_rate"),
    "burst_mitigation": ("slice", "capacity", "clock_resolution", "driver_work", "driver_priority"),
    "queue_mitigation": ("queue", "driver_work", "driver_priority"),
    "hysteresis_mitigation": ("max_rate",),
    "budget_mitigation": ("max_rate",),
}
_SOURCE_COMMON = ("name", "model", "priority", "timer_priority", "work")
#: The arrays of named entries (their names unique among them all).
_ENTRIES = ("task", "timer", "source", "server")
_USED_TWICE = "the name {name} is used twice"

_NOT_OPEN = (
    'cannot be left open ("?"); rtshield design searches a strict limiter\'s '
    "min_interarrival or max_rate, a bursty limiter's burst or burst_period/burst_rate, a "
    "server's budget, a burst_mitigation capacity, a queue_mitigation queue, or a shared "
    "timer's rate or period"
)


# --------------------------------------------------------------------------- value types


def _duration(positive: bool, can_open: bool):
    def check(value: Any, info: ValidationInfo) -> Any:
        if value == OPEN:
            if can_open:
                return OPEN
            raise fail(_NOT_OPEN)
        costs = base.context_of(info).get("costs") or {}
        if isinstance(value, str) and value in costs:  # a named platform cost
            ns = costs[value]
        else:
            ns = base.duration_ns(value, info)
        if positive and ns <= 0:
            raise fail(f"must be positive, got {value!r}")
        return ns

    return check


_SYS_DURATION = {
    "anyOf": [base.DURATION_SCHEMA, {"type": "string", "description": "a platform cost's name"}],
    "format": "duration",
}
_OPEN_SCHEMA = {"const": OPEN, "description": "open: the value rtshield design searches"}

#: A duration (or a platform cost's name) in ns, zero or more.
Span = Annotated[int, BeforeValidator(_duration(False, False)), WithJsonSchema(_SYS_DURATION)]
#: A duration in ns, longer than zero.
Duration = Annotated[int, BeforeValidator(_duration(True, False)), WithJsonSchema(_SYS_DURATION)]
#: A duration that may be left open (``"?"``).
OpenSpan = Annotated[
    Any,
    BeforeValidator(_duration(False, True)),
    WithJsonSchema({"anyOf": [_SYS_DURATION, _OPEN_SCHEMA], "format": "duration"}),
]
#: A positive duration that may be left open (``"?"``).
OpenDuration = Annotated[
    Any,
    BeforeValidator(_duration(True, True)),
    WithJsonSchema({"anyOf": [_SYS_DURATION, _OPEN_SCHEMA], "format": "duration"}),
]


def _rate(can_open: bool):
    def check(value: Any) -> Any:
        if value == OPEN:
            if can_open:
                return OPEN
            raise fail(_NOT_OPEN)
        hz = base.rate_hz(value)
        if hz <= 0:
            raise fail(f"must be positive, got {value!r}")
        return hz

    return check


#: A rate in Hz, above zero.
Rate = Annotated[float, BeforeValidator(_rate(False)), WithJsonSchema(base.RATE_SCHEMA)]
#: A rate that may be left open (``"?"``).
OpenRate = Annotated[
    Any,
    BeforeValidator(_rate(True)),
    WithJsonSchema({"anyOf": [base.RATE_SCHEMA, _OPEN_SCHEMA], "format": "rate"}),
]


def _integer(lo: int, hi: int, can_open: bool):
    def check(value: Any) -> Any:
        if value == OPEN:
            if can_open:
                return OPEN
            raise fail(_NOT_OPEN)
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"expected an integer, got {value!r}")
        if value < lo:
            raise fail(f"must be at least {lo}, got {value}")
        if value > hi:
            raise fail(f"must be at most {hi}, got {value}")
        return value

    return check


def Int(lo: int = 0, hi: int = 2**63 - 1) -> Any:  # noqa: N802 - a type
    """A whole number in ``[lo, hi]``."""
    return Annotated[
        int,
        BeforeValidator(_integer(lo, hi, False)),
        WithJsonSchema({"type": "integer", "minimum": lo, "maximum": hi}),
    ]


def OpenInt(lo: int, hi: int) -> Any:  # noqa: N802 - a type
    """A whole number in ``[lo, hi]`` that may be left open (``"?"``)."""
    return Annotated[
        Any,
        BeforeValidator(_integer(lo, hi, True)),
        WithJsonSchema(
            {"anyOf": [{"type": "integer", "minimum": lo, "maximum": hi}, _OPEN_SCHEMA]}
        ),
    ]


Priority = Int(0, base.MAX_PRIORITY)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise fail(f"expected a string, got {value!r}")
    return value


Text = Annotated[str, BeforeValidator(_text), WithJsonSchema({"type": "string"})]


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise fail(f"expected true or false, got {value!r}")
    return value


Flag = Annotated[bool, BeforeValidator(_flag), WithJsonSchema({"type": "boolean"})]


def _choice(options: tuple[str, ...]):
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise fail(f"expected a string, got {value!r}")
        if value not in options:
            raise fail(f"{value!r} is not one of {', '.join(options)}")
        return value

    return Annotated[str, BeforeValidator(check), WithJsonSchema({"enum": list(options)})]


def _entry_name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise fail("missing (every entry needs a name)")
    base.check_name(value)
    return value


EntryName = Annotated[str, BeforeValidator(_entry_name), WithJsonSchema(base.NAME_SCHEMA)]


# --------------------------------------------------------------------------- tables


class Table(base.TomlTable):
    """A table of a system file."""

    def either(self, a: str, b: str, *, required: bool = True) -> None:
        """``a`` or ``b`` (a period or a rate), not both; one when ``required``."""
        if self.given(a) and self.given(b):
            raise fail(f"give either {a} or {b}, not both")
        if required and not (self.given(a) or self.given(b)):
            raise fail(f"missing {a} (or {b})")


class SystemTable(Table):
    """``[system]``: the analysed core."""

    name: Text | None = key(None, doc="the system's name", shown="the file's name")
    platform: str | None = key(
        None,
        doc="a platform preset (`rtshield/platforms/NAME.toml`): its clock and costs",
        shown="none",
    )
    clock_hz: float | None = key(
        None, doc="CPU clock in Hz, for `cyc` durations (default: the platform's)"
    )
    nesting: Flag = key(False, doc="interrupt handlers preempt each other by priority")
    tick: Flag = key(True, doc="analyse the platform's RTOS tick interrupt, if it has one")
    tick_priority: Priority = key(0, doc="the tick interrupt's priority")

    @model_validator(mode="before")
    @classmethod
    def _values(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            p = data.get("platform")
            if p is not None and not isinstance(p, str):
                raise fail(f"expected a name, got {p!r}", "platform")
            c = data.get("clock_hz")
            if "clock_hz" in data and (
                isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c < math.inf
            ):
                raise fail(f"expected a positive number, got {c!r}", "clock_hz")
        return data


class TaskEntry(Table):
    """``[[task]]``: a periodic task (thread or interrupt level)."""

    name: EntryName = key(doc="unique among all entries")
    level: _choice(("thread", "isr")) = key("thread", doc="`thread` or `isr`")
    wcet: Span = key(doc="worst-case execution time")
    period: Duration = key(doc="period (or least inter-arrival time)")
    deadline: Duration | None = key(None, doc="relative deadline", shown="the period")
    jitter: Span = key(0, doc="release jitter", toml="0s")
    blocking: Span = key(0, doc="longest blocking by lower priorities", toml="0s")
    priority: Priority = key(doc="priority, higher number = higher priority")


class TimerEntry(Table):
    """``[[timer]]``: a timer shared by bursty sources (Regehr & Duongsaa §3.5)."""

    name: EntryName = key(doc="unique among all entries")
    period: OpenDuration | None = key(None, doc='its period (or `rate`); may be `"?"`')
    rate: OpenRate | None = key(None, doc='its rate (or `period`); may be `"?"`')
    priority: Priority = key(0, doc="its interrupt's priority")

    @model_validator(mode="after")
    def _check(self) -> TimerEntry:
        self.either("period", "rate")
        return self


class SourceEntry(Table):
    """``[[source]]``: an interrupt source and its protection; each model takes its keys."""

    name: EntryName = key(doc="unique among all entries")
    model: _choice(SOURCE_MODELS) = key(doc="the protection's model")
    priority: Priority = key(0, doc="its interrupt's priority")
    timer_priority: Priority | None = key(
        None, doc="its limiter timer's priority", shown="`priority`"
    )
    work: Span = key(0, doc="handler work per interrupt", toml="0s")
    min_interarrival: OpenDuration | None = key(
        None, doc="least time between interrupts (or `max_rate`)"
    )
    max_rate: OpenRate | None = key(None, doc="highest interrupt rate (or `min_interarrival`)")
    burst_model: _choice(("jitter", "double")) = key("jitter", doc="bursty: the burst's model")
    timer: Text | None = key(None, doc="bursty: a shared `[[timer]]`")
    burst: OpenInt(1, 2**32 - 1) | None = key(None, doc="bursty: interrupts per period")
    burst_period: OpenDuration | None = key(None, doc="bursty: its own timer's period")
    burst_rate: OpenRate | None = key(None, doc="bursty: its own timer's rate")
    slice: Duration | None = key(None, doc="burst_mitigation: the slice")
    capacity: OpenInt(1, 2**32 - 1) | None = key(None, doc="burst_mitigation: per slice")
    clock_resolution: Span | None = key(None, doc="burst_mitigation: the ISR's clock granularity")
    queue: OpenInt(1, 2**32 - 1) | None = key(None, doc="queue_mitigation: the queue")
    driver_work: Span = key(0, doc="the driver's work per packet", toml="0s")
    driver_priority: Priority | None = key(None, doc="the driver task's priority")

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        model = data.get("model")
        return _SOURCE_COMMON + SOURCE_KEYS.get(model, ()) if isinstance(model, str) else ()

    @model_validator(mode="before")
    @classmethod
    def _model_first(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            m = data.get("model")
            if m is None:
                raise fail("missing (required)", "model")
            if not isinstance(m, str) or m not in SOURCE_MODELS:
                raise fail(f"{m!r} is not one of {', '.join(SOURCE_MODELS)}", "model")
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> SourceEntry:
        m = self.model
        if m in ("pure", "polling", "strict", "hardware"):
            self.either("min_interarrival", "max_rate", required=m != "pure")
            self._closed("min_interarrival", "max_rate", unless=m == "strict")
        elif m == "bursty":
            if self.timer is not None:
                if self.given("burst_period") or self.given("burst_rate"):
                    raise fail(
                        "a source on a shared timer takes the timer's period; remove "
                        "burst_period/burst_rate",
                        "timer",
                    )
                if self.given("burst") and self.given("max_rate"):
                    raise fail("give either burst or max_rate, not both")
                self._closed("max_rate")
                if not self.given("max_rate") and self.burst is None:
                    raise fail("missing (required)", "burst")
            else:
                if self.given("max_rate"):
                    raise fail("unknown key", "max_rate")
                if self.burst is None:
                    raise fail("missing (required)", "burst")
                self.either("burst_period", "burst_rate")
        elif m == "burst_mitigation":
            if self.slice is None:
                raise fail("missing (required)", "slice")
            if self.capacity is None:
                raise fail("missing (required)", "capacity")
            if self.driver_work and self.driver_priority is None:
                raise fail("missing (needed with driver_work)", "driver_priority")
        elif m == "queue_mitigation":
            if self.queue is None:
                raise fail("missing (required)", "queue")
            if self.driver_priority is None:
                raise fail("missing (required)", "driver_priority")
        else:
            self._closed("max_rate")
        return self

    def _closed(self, *names: str, unless: bool = False) -> None:
        """``names`` may not be open here."""
        if unless:
            return
        for n in names:
            if getattr(self, n) == OPEN:
                raise fail(_NOT_OPEN, n)


class ServerEntry(Table):
    """``[[server]]``: a deferrable server."""

    name: EntryName = key(doc="unique among all entries")
    budget: OpenSpan = key(doc='budget per period; may be `"?"`')
    period: Duration = key(doc="replenishment period")
    priority: Priority = key(doc="its priority")

    @model_validator(mode="after")
    def _check(self) -> ServerEntry:
        if self.budget != OPEN and self.budget > self.period:
            raise fail("larger than its period", "budget")
        return self


class GlobalLimitTable(Table):
    """``[global_limit]``: the receive path's global limit with its polling task."""

    capacity: Int(1, 2**32 - 1) = key(doc="packets per period taken by interrupt")
    period: Duration = key(doc="the limit's period")
    packet_cost: Span = key(doc="cost of one packet")
    priority: Priority = key(0, doc="the interrupt's priority")
    polling_work: Span = key(0, doc="the polling task's work", toml="0s")
    polling_period: Duration | None = key(None, doc="the polling task's period")
    polling_priority: Priority = key(0, doc="the polling task's priority")


class NicQueueEntry(Table):
    """``[[nic.queue]]``: one queue of the multiqueue NIC (Behnke et al. §7)."""

    name: EntryName = key(doc="unique among the queues")
    size: Int(1, 2**32 - 1) = key(doc="descriptors (n_q)")
    t_abs: Duration = key(doc="absolute timer")
    t_pack: Duration = key(doc="packet timer")
    max_rate: Rate = key(doc="the flow's highest rate")
    max_delay: Span = key(0, doc="the receiving process's allowed added delay (t_d)", toml="0s")
    flow_period: Duration | None = key(
        None, doc="expected packet period t_P(f)", shown="1 / `max_rate`"
    )


class NicTable(Table):
    """``[nic]``: the multiqueue NIC's moderation parameters (Behnke et al. §7)."""

    t_netstack: Duration = key(doc="the network stack's cost per packet")
    arp_queue: Flag = key(True, doc="an ARP queue besides the flows' queues")
    memory_bytes: Int(0) | None = key(None, doc="available register memory, if limited")
    min_slack: Span | None = key(None, doc="least slack (default: from the tasks' analysis)")
    irq_cost: Span | None = key(None, doc="if given, each queue becomes an interrupt task")
    priority: Priority = key(0, doc="the NIC interrupt's priority")
    queue: list[NicQueueEntry] = key(doc="its queues, `[[nic.queue]]`", factory=list)

    @model_validator(mode="before")
    @classmethod
    def _queues(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            q = data.get("queue")
            if not isinstance(q, list) or not q:
                raise fail("at least one [[nic.queue]] is required", "queue")
        return data

    @model_validator(mode="after")
    def _check(self) -> NicTable:
        base.unique_names(self.queue, _USED_TWICE, "queue")
        return self


class SystemFile(FileModel, title="rtshield system"):
    """A system description for ``rtshield analyze`` and ``design``."""

    system: SystemTable = Field(default_factory=SystemTable)
    costs: dict[str, Span] = Field(
        default_factory=dict, description="platform costs, added to or replacing the preset's"
    )
    task: list[TaskEntry] = Field(default_factory=list)
    timer: list[TimerEntry] = Field(default_factory=list)
    source: list[SourceEntry] = Field(default_factory=list)
    server: list[ServerEntry] = Field(default_factory=list)
    global_limit: GlobalLimitTable | None = None
    nic: NicTable | None = None

    @classmethod
    def unknown_section(cls) -> str:
        return f"unknown section (expected one of {', '.join(sorted(cls.model_fields))})"

    @classmethod
    def check_sections(cls, data: Mapping[str, Any]) -> None:
        for k in ("task", "timer", "source", "server"):
            if k in data and not isinstance(data[k], list):
                raise fail(f"expected an array of tables ([[{k}]])", k)
        if "costs" in data and not isinstance(data["costs"], dict):
            raise fail("expected a table", "costs")

    @field_validator("costs", mode="after")
    @classmethod
    def _costs(cls, value: dict[str, int], info: ValidationInfo) -> dict[str, int]:
        # later tables may name these costs: they join the platform's for them
        costs = base.context_of(info).get("costs")
        if costs is not None:
            costs.update(value)
        return value

    @model_validator(mode="after")
    def _check(self) -> SystemFile:
        taken: set[str] = set()
        for section in _ENTRIES:  # names unique among all entries
            base.unique_names(getattr(self, section), _USED_TWICE, section, taken=taken)
        timers = {t.name for t in self.timer}
        for i, s in enumerate(self.source):
            if s.timer is not None and s.timer not in timers:
                raise fail(f"no [[timer]] named {s.timer!r}", "source", i, "timer")
        if not (self.task or self.source or self.server or self.global_limit or self.nic):
            raise fail("the system has no task, source, server or nic")
        return self


# --------------------------------------------------------------------------- errors


def where(loc: tuple[Any, ...], doc: Mapping[str, Any]) -> str:
    """The key path of ``loc`` as the format writes it: ``source.radio.burst``."""
    parts: list[str] = []
    node: Any = doc
    i = 0
    while i < len(loc):
        p = loc[i]
        if isinstance(p, int):
            entry = node[p] if isinstance(node, list) and p < len(node) else None
            name = entry.get("name") if isinstance(entry, dict) else None
            valid = isinstance(name, str) and base.NAME_RE.fullmatch(name) is not None
            parts.append(f".{name}" if valid else f"[{p}]")
            node = entry
        else:
            parts.append(("." if parts else "") + str(p))
            node = node.get(p) if isinstance(node, dict) else None
        i += 1
    return "".join(parts)


def usage_error(e: ValidationError, doc: Mapping[str, Any]) -> UsageError:
    """The first error of ``e`` as one line naming the key path."""
    err = e.errors(include_url=False)[0]
    loc = tuple(err["loc"]) + tuple((err.get("ctx") or {}).get("at") or ())
    msg = base.message(err)
    if err["type"] == "missing":
        msg = "missing (required)"
    # An entry whose name is itself at fault is named by its position.
    if len(loc) >= 3 and loc[0] in _ENTRIES and loc[2] == "name" and err["type"] != "rtshield":
        return UsageError(f"{loc[0]}[{loc[1]}].name: {msg}")
    if len(loc) >= 3 and loc[0] in _ENTRIES and loc[2] == "name":
        entry = doc.get(loc[0], [None] * (loc[1] + 1))[loc[1]]
        name = entry.get("name") if isinstance(entry, dict) else None
        if not (isinstance(name, str) and base.NAME_RE.fullmatch(name)):
            return UsageError(f"{loc[0]}[{loc[1]}].name: {msg}")
    path = where(loc, doc)
    return UsageError(f"{path}: {msg}" if path else msg)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a system file."""
    return base.file_schema(SystemFile)


#: Per source model, what it is (docs/analysis.md §2 and §3).
SOURCE_DOCS = {
    "pure": "an interrupt with a least inter-arrival time (none: unbounded)",
    "polling": "the device polled by a timer every min_interarrival",
    "strict": "Regehr & Duongsaa's strict limiter",
    "bursty": "Regehr & Duongsaa's bursty limiter, on its own timer or a shared one",
    "hardware": "a rate limit in the device",
    "burst_mitigation": "Danicki et al.'s Burst Mitigation",
    "queue_mitigation": "Danicki et al.'s Queue Mitigation",
    "hysteresis_mitigation": "Danicki et al.'s Hysteresis Mitigation (no hard bound)",
    "budget_mitigation": "Danicki et al.'s Budget Mitigation (no hard bound)",
}


def markdown_blocks() -> dict[str, str]:
    """The key reference of a system file (docs/analysis.md), one block per table."""
    sc = json_schema()
    out = {
        "system.system": base.key_table(sc, "SystemTable"),
        "system.task": base.key_table(sc, "TaskEntry"),
        "system.timer": base.key_table(sc, "TimerEntry"),
        "system.source": base.key_table(sc, "SourceEntry"),
        "system.server": base.key_table(sc, "ServerEntry"),
        "system.global_limit": base.key_table(sc, "GlobalLimitTable"),
        "system.nic": base.key_table(sc, "NicTable"),
        "system.nic.queue": base.key_table(sc, "NicQueueEntry"),
    }
    rows = [
        "| model | keys (besides `name`, `model`, `priority`, `timer_priority`, `work`) "
        "| what it is |",
        "|---|---|---|",
    ]
    for m, keys in SOURCE_KEYS.items():
        rows.append(
            f"| `{m}` | {', '.join(f'`{k}`' for k in keys)} | {base.cell(SOURCE_DOCS[m])} |"
        )
    out["system.models"] = "\n".join(rows)
    return out
