"""The storm-profile schema: pydantic models of a ``PROFILE.toml`` of ``rtshield rig
device`` (docs/rig.md, "Testing any device"), as the rest of :mod:`rtshield.schema` is
for scenario and system files.

A profile names the storms a device is put through, each a ramp of rates
(``rates``: packets/s, the last may be ``"max"``, the interface's maximum), and
the monitors that watch the device's essential function meanwhile, each with its
pass criteria. The target and the interface are not in the file: they are the
command's ``--target`` and ``--iface``.

Errors name the key as the file writes it, an entry by its name once it has a
valid one (``storm.syn_open.port: must be at most 65535, got 70000``);
:func:`usage_error` (the system file's) makes that line from pydantic's first
error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import (
    BeforeValidator,
    Field,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from rtshield.schema import base
from rtshield.schema.base import FileModel, fail, key
from rtshield.schema.system import EntryName, Flag, Int, Rate, Text
from rtshield.schema.system import usage_error as usage_error  # a profile's errors read alike

# --------------------------------------------------------------------------- the words

#: Storm kinds, each with what it sends (the tool that sends it: rtshield.rig.device.storms).
STORM_KINDS: dict[str, str] = {
    "eth_broadcast": "Ethernet frames to the broadcast address (an experimental EtherType)",
    "eth_multicast": "Ethernet frames to the IPv4 all-hosts multicast address 01:00:5e:00:00:01",
    "arp_request": "ARP requests for the target's address, broadcast",
    "arp_reply": "unsolicited ARP replies to the target (this host's own address and MAC)",
    "icmp_echo": "ICMP echo requests to the target",
    "ipv4_frag_incomplete": "first fragments of UDP datagrams whose rest never comes "
    "(a new identification each)",
    "ipv4_frag_overlap": "pairs of UDP fragments whose payloads overlap by 8 bytes",
    "tcp_syn": "TCP SYNs to `port` (an open port: a listener answers; closed: RSTs)",
    "udp": "UDP datagrams to `port` (open: a socket takes them; closed: ICMP unreachable)",
    "nmap": "nmap SYN scans of `ports`, repeated until the step ends",
}
#: Keys of a ``[[storm]]`` besides ``name``, ``kind``, ``rates``, ``step`` and ``pause``.
STORM_KEYS: dict[str, tuple[str, ...]] = {
    **{k: () for k in STORM_KINDS},
    "tcp_syn": ("port",),
    "udp": ("port", "size"),
    "nmap": ("ports",),
}
_STORM_COMMON = ("name", "kind", "rates", "step", "pause")

#: Monitor kinds, each with what one sample is.
MONITOR_KINDS: dict[str, str] = {
    "modbus": "a MODBUS/TCP Read Holding Registers request over one kept connection; "
    "the time to its answer",
    "icmp": "an ICMP echo request; the time to its reply",
    "udp": "a UDP datagram to `port`, which the device sends back; the time to the echo",
    "tcp": "a new TCP connection to `port` (then reset); the time to the handshake",
    "heartbeat": "a UDP datagram the device sends on its own to this host's `port` every "
    "`period`; how far each interval is from the period",
}
#: Keys of a ``[[monitor]]`` besides the common ones, per kind.
MONITOR_KEYS: dict[str, tuple[str, ...]] = {
    "modbus": ("port", "unit", "address", "count", "rate", "timeout", "latency"),
    "icmp": ("rate", "timeout", "latency"),
    "udp": ("port", "size", "rate", "timeout", "latency"),
    "tcp": ("port", "rate", "timeout", "latency"),
    "heartbeat": ("port", "period", "jitter"),
}
_MONITOR_COMMON = (
    "name", "kind", "within", "max_gap", "recover", "optional", "informational_in"
)
#: Ports a monitor of each kind uses when the file gives none.
DEFAULT_PORTS = {"modbus": 502, "udp": 7, "tcp": 502, "heartbeat": 5005}
#: The highest rate of a profile's ramps, in packets/s (a sanity bound; ``--max-rate`` caps).
RATE_MAX = 100_000_000
#: The longest step, pause, baseline or recovery (s): a profile is a test, not a soak.
SPAN_MAX_S = 3600
#: What ``rates`` may end with: the interface's maximum (capped by ``--max-rate``).
MAX = "max"
#: The most runs of one step (``[profile] repeat``): a profile is a test, not a soak.
REPEAT_MAX = 9


def majority(repeat: int) -> int:
    """The runs of ``repeat`` a monitor must fail for the step to fail it, unless the
    profile's ``fail_runs`` says otherwise: more than half."""
    return repeat // 2 + 1


# --------------------------------------------------------------------------- value types


def _span(positive: bool):
    def check(value: Any, info: ValidationInfo) -> int:
        ns = base.duration_ns(value, info)
        if ns < 0 or (positive and ns == 0):
            raise fail(f"must be {'positive' if positive else 'zero or more'}, got {value!r}")
        if ns > SPAN_MAX_S * 10**9:
            raise fail(f"must be at most {SPAN_MAX_S} s, got {value!r}")
        return ns

    return check


#: A duration in ns, longer than zero.
Duration = Annotated[int, BeforeValidator(_span(True)), WithJsonSchema(base.DURATION_SCHEMA)]
#: A duration in ns, zero or more.
Span = Annotated[int, BeforeValidator(_span(False)), WithJsonSchema(base.DURATION_SCHEMA)]


def _step_rate(value: Any) -> Any:
    if value == MAX:
        return MAX
    hz = base.rate_hz(value)
    if not 0 < hz <= RATE_MAX:
        raise fail(f"must be above 0 and at most {RATE_MAX} pps, got {value!r}")
    return hz


#: One step's rate: packets/s, or ``"max"``.
StepRate = Annotated[
    Any,
    BeforeValidator(_step_rate),
    WithJsonSchema(
        {"anyOf": [base.RATE_SCHEMA, {"const": MAX, "description": "the interface's maximum"}]}
    ),
]


def _fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(f"expected a number, got {value!r}")
    if not 0 < value <= 1:
        raise fail(f"must be above 0 and at most 1, got {value}")
    return float(value)


Fraction = Annotated[
    float,
    BeforeValidator(_fraction),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0, "maximum": 1, "format": "fraction"}),
]
Port = Int(1, 65535)


def _kind(options: Mapping[str, str], what: str):
    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in options:
            raise fail(f"{value!r} is not a {what} kind: {', '.join(options)}")
        return value

    return Annotated[str, BeforeValidator(check), WithJsonSchema({"enum": list(options)})]


# --------------------------------------------------------------------------- tables


#: How the key reference shows a list of steps' rates.
_RATES_WORDS = 'list of rates or `"max"`'


class Table(base.TomlTable):
    """A table of a profile."""


class KindTable(Table):
    """An array entry whose ``kind`` decides the keys it takes: ``COMMON`` and
    ``KEYS[kind]`` (``WHAT`` names it in errors)."""

    KINDS: ClassVar[Mapping[str, str]] = {}
    KEYS: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    COMMON: ClassVar[tuple[str, ...]] = ()
    WHAT: ClassVar[str] = ""

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        kind = data.get("kind")
        return cls.COMMON + cls.KEYS.get(kind, ()) if isinstance(kind, str) else ()

    @model_validator(mode="before")
    @classmethod
    def _kind_first(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            k = data.get("kind")
            if k is None:
                raise fail("missing (required)", "kind")
            if not isinstance(k, str) or k not in cls.KINDS:
                raise fail(f"{k!r} is not a {cls.WHAT} kind: {', '.join(cls.KINDS)}", "kind")
        return data


class ProfileTable(Table):
    """``[profile]``: the test as a whole."""

    name: Text | None = key(None, doc="the profile's name", shown="the file's name")
    description: Text = key("", doc="what the profile tests, in a sentence")
    baseline: Duration = key(
        3 * 10**9,
        doc="the monitors alone before the first storm: every monitor must pass it, or "
        "the test does not start (the target does not answer)",
        toml="3s",
    )
    wait_recovery: Duration = key(
        60 * 10**9,
        doc="after a storm, how long the test waits for every monitor to be good again "
        "(a monitor's `recover` is its pass criterion; a device still down after this "
        "ends the test)",
        toml="60s",
    )
    stop_at_failure: Flag = key(
        True,
        doc="a storm's ramp ends at its first step in which a monitor failed (that step's "
        "rate is the storm's breaking rate); `false` runs every step",
    )
    repeat: Int(1, REPEAT_MAX) = key(
        3,
        doc="how many times each step may run, each run an independent trial (the device "
        "is good again before the next); the runs stop once no further run can change a "
        "monitor's verdict",
    )
    fail_runs: Int(1, REPEAT_MAX) | None = key(
        None,
        doc="a step fails a monitor when the monitor failed this many of the step's runs "
        "(1: any run; `repeat`: every run)",
        shown="a majority of `repeat` (2 of 3)",
    )

    @model_validator(mode="after")
    def _check(self) -> ProfileTable:
        if self.fail_runs is not None and self.fail_runs > self.repeat:
            raise fail(f"must be at most repeat ({self.repeat}), got {self.fail_runs}",
                       "fail_runs")
        return self

    @property
    def fail_runs_or_default(self) -> int:
        return self.fail_runs if self.fail_runs is not None else majority(self.repeat)


class RampTable(Table):
    """``[ramp]``: every storm's ramp unless the storm gives its own."""

    rates: list[StepRate] = key(
        factory=lambda: [1000.0, 10000.0, MAX],
        doc='the steps\' rates, rising; the last may be `"max"` (the tool at full speed, '
        "capped by `--max-rate`)",
        toml=["1000pps", "10000pps", "max"],
        shown='`["1000pps", "10000pps", "max"]`',
        type=_RATES_WORDS,
    )
    step: Duration = key(3 * 10**9, doc="how long each step floods", toml="3s")
    pause: Span = key(
        2 * 10**9, doc="the quiet time after each step (the monitors go on)", toml="2s"
    )


class StormEntry(KindTable):
    """``[[storm]]``: one storm, a ramp of rates; each kind takes its keys."""

    KINDS, KEYS, COMMON, WHAT = STORM_KINDS, STORM_KEYS, _STORM_COMMON, "storm"

    name: EntryName = key(doc="unique among the storms")
    kind: _kind(STORM_KINDS, "storm") = key(doc="what is sent (the storm kinds below)")
    rates: list[StepRate] | None = key(
        None, doc="this storm's steps", shown="`[ramp] rates`", type=_RATES_WORDS
    )
    step: Duration | None = key(None, doc="this storm's step length", shown="`[ramp] step`")
    pause: Span | None = key(None, doc="this storm's pause", shown="`[ramp] pause`")
    port: Port | None = key(None, doc="tcp_syn, udp: the destination port")
    size: Int(0, 1472) = key(18, doc="udp: payload bytes (a 64-byte frame: 18)")
    ports: Text = key("1-65535", doc="nmap: the ports scanned (nmap's `-p` syntax)")

    @model_validator(mode="after")
    def _check(self) -> StormEntry:
        if self.kind in ("tcp_syn", "udp") and self.port is None:
            raise fail("missing (required)", "port")
        if self.rates is not None:
            check_rates(self.rates, "rates")
        if self.kind == "nmap" and not _nmap_ports(self.ports):
            raise fail(
                f"{self.ports!r} is not a port list (e.g. \"1-1024\" or \"22,80,502\")", "ports"
            )
        return self


def _nmap_ports(text: str) -> bool:
    """``text`` is a list of ports and ranges in 1..65535 (``"1-1024,5020"``)."""
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        for v in (lo, hi) if hi else (lo,):
            if not v.isdigit() or not 1 <= int(v) <= 65535:
                return False
        if hi and int(lo) > int(hi):
            return False
    return bool(text.strip())


def check_rates(rates: list[Any], at: str) -> None:
    """At least one step, rising, ``"max"`` only last."""
    if not rates:
        raise fail("needs at least one rate", at)
    for i, r in enumerate(rates):
        if r == MAX and i != len(rates) - 1:
            raise fail('"max" can only be the last step', at, i)
        if i and r != MAX and rates[i - 1] != MAX and r <= rates[i - 1]:
            raise fail(f"the rates must rise: step {i + 1} is not above step {i}", at, i)


class MonitorEntry(KindTable):
    """``[[monitor]]``: one watch of the device's essential function, with its pass
    criteria; each kind takes its keys."""

    KINDS, KEYS, COMMON, WHAT = MONITOR_KINDS, MONITOR_KEYS, _MONITOR_COMMON, "monitor"

    name: EntryName = key(doc="unique among the monitors")
    kind: _kind(MONITOR_KINDS, "monitor") = key(doc="what one sample is (the kinds below)")
    port: Port | None = key(
        None,
        doc="modbus: the server's port; udp: the echo's; tcp: the port connected to; "
        "heartbeat: this host's port the device sends to",
        shown="502 (modbus, tcp), 7 (udp), 5005 (heartbeat)",
    )
    unit: Int(0, 255) = key(1, doc="modbus: the unit identifier")
    address: Int(0, 65535) = key(0, doc="modbus: the first holding register read")
    count: Int(1, 125) = key(1, doc="modbus: registers read per request")
    size: Int(16, 1472) = key(16, doc="udp: payload bytes of a request")
    rate: Rate = key(10.0, doc="samples per second", toml="10Hz")
    timeout: Duration = key(
        10**9, doc="a sample not answered within this is lost (a timeout)", toml="1s"
    )
    latency: Duration = key(
        100 * 10**6, doc="a sample is *good* when answered within this", toml="100ms"
    )
    period: Duration | None = key(None, doc="heartbeat: the device's sending period")
    jitter: Duration | None = key(
        None,
        doc="heartbeat: an interval is *good* when it is within this of `period`",
        shown="half the period",
    )
    within: Fraction = key(
        0.95, doc="a step passes when at least this fraction of its samples is good"
    )
    max_gap: Duration = key(
        10**9,
        doc="... and no time without a good sample is longer than this",
        toml="1s",
    )
    recover: Duration = key(
        5 * 10**9,
        doc="after a storm, the monitor must be good again within this",
        toml="5s",
    )
    informational_in: list[_kind(STORM_KINDS, "storm")] = key(
        factory=list,
        doc="storm kinds in which this monitor is *informational*: its samples and "
        "verdicts are recorded and shown but decide neither a step nor the breaking rate "
        "(its recovery after the storm still counts); for a function the device sheds "
        "on purpose under that storm, as a protected device sheds ICMP echo requests "
        "under an ICMP storm",
        type="list of storm kinds",
        shown="`[]`",
    )
    optional: bool = key(
        False,
        doc="the device may not offer what this monitor watches: without a good sample in "
        "the baseline the monitor is skipped (`skipped` in summary.json says why) instead "
        "of stopping the test",
    )

    @model_validator(mode="after")
    def _check(self) -> MonitorEntry:
        if self.kind == "heartbeat":
            if self.period is None:
                raise fail("missing (required)", "period")
            if self.jitter is not None and self.jitter >= self.period:
                raise fail("must be shorter than the period", "jitter")
            if self.max_gap <= self.period:
                raise fail("must be longer than the period", "max_gap")
        else:
            if self.latency > self.timeout:
                raise fail("must be at most the timeout", "latency")
            if self.max_gap * self.rate < 10**9:
                raise fail(
                    "must be at least one sample interval (1/rate), or every step fails",
                    "max_gap",
                )
        return self

    @property
    def port_or_default(self) -> int:
        return self.port if self.port is not None else DEFAULT_PORTS.get(self.kind, 0)


class ProfileFile(FileModel, title="rtshield storm profile"):
    """A storm profile for ``rtshield rig device``."""

    profile: ProfileTable = Field(default_factory=ProfileTable)
    ramp: RampTable = Field(default_factory=RampTable)
    storm: list[StormEntry] = Field(description="the storms, run in this order")
    monitor: list[MonitorEntry] = Field(description="the monitors, run through the whole test")

    @classmethod
    def check_sections(cls, data: Mapping[str, Any]) -> None:
        for k in ("storm", "monitor"):
            if k in data and not isinstance(data[k], list):
                raise fail(f"expected an array of tables ([[{k}]])", k)

    @model_validator(mode="after")
    def _check(self) -> ProfileFile:
        check_rates(self.ramp.rates, "ramp")
        if not self.storm:
            raise fail("needs at least one [[storm]]", "storm")
        if not self.monitor:
            raise fail("needs at least one [[monitor]]", "monitor")
        base.unique_names(self.storm, "the storm name {name} is used twice", "storm")
        base.unique_names(self.monitor, "the monitor name {name} is used twice", "monitor")
        beats = [m for m in self.monitor if m.kind == "heartbeat"]
        ports = [m.port_or_default for m in beats]
        if len(set(ports)) < len(ports):
            raise fail("two heartbeat monitors listen on the same port", "monitor")
        return self


# --------------------------------------------------------------------------- the schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a profile; each kind of storm and monitor allows only its keys."""
    schema = base.file_schema(ProfileFile)
    for entry in (StormEntry, MonitorEntry):
        schema["$defs"][entry.__name__]["allOf"] = base.only_keys(
            "kind", {k: entry.COMMON + keys for k, keys in entry.KEYS.items()}
        )
    return schema


def markdown_blocks() -> dict[str, str]:
    """The key reference of a profile (docs/rig.md), one block per table."""
    sc = json_schema()
    out = {
        "profile.profile": base.key_table(sc, "ProfileTable"),
        "profile.ramp": base.key_table(sc, "RampTable"),
        "profile.storm": base.key_table(sc, "StormEntry"),
        "profile.monitor": base.key_table(sc, "MonitorEntry"),
    }
    out["profile.storm_kinds"] = base.kinds_table(
        ("kind", "keys", "what is sent"), STORM_KEYS, STORM_KINDS
    )
    out["profile.monitor_kinds"] = base.kinds_table(
        ("kind", "keys", "one sample"), MONITOR_KEYS, MONITOR_KINDS
    )
    return out
