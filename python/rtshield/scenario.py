"""Scenario files: TOML in, validated and typed :class:`Scenario` out.

A scenario describes one simulated device under one network load: the
platform preset it runs on (``python/rtshield/platforms/NAME.toml``), optional
overrides of the preset's per-activity costs, the critical task, the network
driver, the NIC, one mitigation, optional RX interrupt sources, the traffic
flows and optional extra tasks.
The schema is the pydantic models of :mod:`rtshield.schema` (types, units,
ranges, defaults, the rules between keys); this module lays a preset's
defaults and the command line's overrides over the file, validates the result
with them, and builds the typed :class:`Scenario` the engine and the analysis
read. ``docs/scenarios.md``'s key reference is generated from the models.

Every value with a dimension carries its unit in the value (``"10ms"``,
``"30000pps"``), parsed by :mod:`rtshield.units`. All times in the typed
result are integer nanoseconds (fields ending in ``_ns``) and all rates are
packets per second (fields ending in ``_pps``).

Any problem — unknown section or key, bad type, wrong unit, contradictory
settings — raises :class:`rtshield.errors.UsageError` with one line of the form
``FILE: [section] key: what is wrong`` (``FILE: flows.NAME.key: …`` for a key of a
named ``[[flows]]``, ``[[tasks]]`` or ``[[sources]]`` entry).

Public API: :func:`load_scenario`, :func:`loads_scenario`,
:func:`parse_scenario`, :func:`load_platform`, :func:`available_platforms`,
and the dataclasses below.
"""

from __future__ import annotations

import copy
import ipaddress
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from rtshield import units
from rtshield._native import native_limits
from rtshield.errors import UsageError
from rtshield.schema import vocabulary
from rtshield.schema.vocabulary import (
    ALSO_KINDS,
    DEFAULT_SRC,
    FLOW_RX_ONLY,
    MAX_BINS,
    MAX_PCAP_SCALE,
    MITIGATION_KINDS,
    MULTI_SOURCE_KINDS,
    NAME_RULE,
    PATH_QUANTILE_COSTS,
    PATH_QUANTILE_KEYS,
    PATTERN_OPTIONAL,
    PATTERNS,
    PCAP_FRAME_KEYS,
    RESERVED_NAMES,
    RX_COST_KEYS,
    TASK_KEYS,
    TASK_KINDS,
    reserved_name,
)
from rtshield.tomlfile import parse_toml as _parse_toml
from rtshield.tomlfile import parse_toml_value as _parse_toml_value
from rtshield.tomlfile import read_toml as _read_toml
from rtshield.tomlfile import read_toml_text as _read_toml_text
from rtshield.tomlfile import tomllib  # noqa: F401 (kept: callers parse TOML through it)

__all__ = [
    "ALSO_KINDS",
    "CostTable",
    "Critical",
    "DEFAULT_SRC",
    "Detect",
    "Driver",
    "FLOW_RX_ONLY",
    "Flow",
    "IrqSource",
    "MAX_BINS",
    "MAX_PCAP_SCALE",
    "MITIGATION_KINDS",
    "MULTI_SOURCE_KINDS",
    "Mitigation",
    "NAME_RULE",
    "Nic",
    "NicQueue",
    "PATH_QUANTILE_COSTS",
    "PATH_QUANTILE_KEYS",
    "PATTERNS",
    "PATTERN_OPTIONAL",
    "PCAP_FRAME_KEYS",
    "Platform",
    "RESERVED_NAMES",
    "RX_COST_KEYS",
    "Rx",
    "Scenario",
    "TASK_KEYS",
    "TASK_KINDS",
    "Task",
    "available_platforms",
    "load_platform",
    "load_scenario",
    "loads_scenario",
    "native_limits",
    "parse_overrides",
    "parse_scenario",
    "platforms_dir",
    "reserved_name",
]

#: Change points :meth:`Flow.schedule` builds at most (far above what the engine
#: takes, so the engine's limit still reports the pattern; bounds memory and time).
MAX_SCHEDULE_POINTS = 10_000

def __getattr__(name: str) -> Any:
    """The binding's limits and enum words (``MAX_FLOWS``, ``PROTOCOLS``…), as
    :mod:`rtshield.schema.vocabulary` reads them on first use."""
    if name in vocabulary.FROM_BINDING:
        return getattr(vocabulary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- types


class CostTable(Mapping[str, int]):
    """Per-activity CPU costs in nanoseconds, read-only, ordered by name.

    Behaves as a ``Mapping[str, int]`` (``costs["isr_entry_exit"]``); picklable,
    so scenarios can be sent to worker processes.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, int] | None = None) -> None:
        self._items = tuple(sorted((items or {}).items()))

    def __getitem__(self, key: str) -> int:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"CostTable({dict(self._items)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CostTable):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)

    def __getstate__(self) -> tuple:
        return self._items

    def __setstate__(self, state: tuple) -> None:
        self._items = state


@dataclass(frozen=True)
class Platform:
    """A platform preset's ``[platform]`` table."""

    name: str
    description: str
    source: str
    clock_hz: float
    cores: int
    tick_ns: int  #: RTOS tick period
    tick_isr_ns: int  #: CPU cost of one tick interrupt
    time_slicing: bool  #: round robin among equal priorities on the tick
    path: str  #: the preset file it was read from


@dataclass(frozen=True)
class Critical:
    """The periodic critical task (Danicki et al. §3: a fixed amount of work per period)."""

    period_ns: int
    work_ns: int  #: CPU time per cycle on an otherwise idle core
    priority: int  #: higher number = higher priority (FreeRTOS convention)
    core: int


@dataclass(frozen=True)
class Driver:
    """The network driver task and its RX queue."""

    priority: int
    queue: int  #: RX queue capacity, packets
    core: int


@dataclass(frozen=True)
class NicQueue:
    """One queue of the multiqueue NIC (Behnke et al. §7.3.2, Table 2), ``[[nic.queues]]``.

    Timers left out (``None``) are off; a queue without any moderation raises
    an interrupt on every arrival.
    """

    name: str
    index: int  #: position in the file = the engine's queue number
    size: int  #: descriptors
    absolute_ns: int | None = None  #: absolute timer
    packet_ns: int | None = None  #: packet timer
    frames: int | None = None  #: frame-count threshold


@dataclass(frozen=True)
class Nic:
    """The NIC: ``edge`` (one interrupt per packet), ``dma_ring`` (descriptor
    ring) or ``multiqueue`` (Behnke et al. §7: per-flow queues with moderation)."""

    kind: str
    ring: int | None  #: descriptors (``dma_ring``; with ``[rx]``: buffers posted to the NIC)
    core: int = 0  #: core that takes the NIC (and mitigation timer) interrupts
    queues: tuple[NicQueue, ...] = ()  #: ``multiqueue`` only


@dataclass(frozen=True)
class Rx:
    """Behnke et al.'s receive path (§5), ``[rx]``: early demultiplexing into
    priority flow queues, buffer recycling, priority inheritance, per-flow
    servers and an optional global limit with a polling task."""

    buffers: int  #: packet buffers in the pool shared by the NIC and the flow queues
    recycle_below: int | None = None  #: posted buffers; None: libshield's default share
    short_circuit: bool = True  #: path (a) of Behnke Figure 8
    cache: str = "lazy"  #: "lazy" (deferred invalidation, the paper) or "eager"
    global_capacity: int = 0  #: packets per global period; 0 = no global limit
    global_period_ns: int | None = None
    poll_priority: int | None = None  #: the polling task's priority (global limit on)


@dataclass(frozen=True)
class Detect:
    """Danicki et al.'s overload detectors (§2.1), ``[detect]``, computed by
    libshield from the live device. Lateness of the critical task is always
    watched; the interrupt counter and the queue watermarks when set."""

    slice_ns: int = 0  #: RX interrupt count slice; 0: no interrupt counting
    irq_threshold: int = 0  #: a slice with more RX interrupts than this fires
    fill_high: int = 0  #: RX queue fill that fires the watermark; 0: none
    fill_low: int = 0  #: fill at or below which it is cleared (below fill_high)


@dataclass(frozen=True)
class Mitigation:
    """The mitigation and its parameters; fields not used by ``kind`` are ``None``."""

    kind: str
    slice_ns: int | None = None  #: burst
    capacity: int | None = None  #: burst: packets per slice
    block_below: float | None = None  #: hysteresis: earliness fraction of the period
    unblock_above: float | None = None  #: hysteresis: earliness fraction of the period
    sleep_ns: int | None = None  #: hysteresis: the blocked driver's sleep per check
    min_interarrival_ns: int | None = None  #: strict
    burst: int | None = None  #: bursty: interrupts per period
    period_ns: int | None = None  #: bursty
    window_ns: int | None = None  #: countdown
    also: tuple[str, ...] = ()  #: further Danicki protections applied with ``kind``
    timer: str | None = None  #: bursty: ``periodic`` (None: not set, periodic) or ``lazy``
    charge_isr: bool | None = None  #: budget: also charge the RX ISR's time (None: not set, no)
    #: RX line enable bits: 2 (None: not set) = libshield's gate, the application's bit apart
    #: from the protections'; 1 = one shared bit (Regehr & Duongsaa §4's race)
    enable_bits: int | None = None

    def parameters(self) -> dict[str, Any]:
        """The parameters that apply to this kind, as written in a file (units in values).

        A parameter left out because every ``[[sources]]`` entry gives its own
        (``burst``, ``min_interarrival``) is omitted. With ``also``, the
        parameters of those protections follow, and ``also`` itself.
        """
        out: dict[str, Any] = {}
        for key in [k for kind in (self.kind, *self.also) for k in MITIGATION_KINDS[kind]]:
            if hasattr(self, key):
                if getattr(self, key) is not None:
                    out[key] = getattr(self, key)
            elif getattr(self, f"{key}_ns") is not None:
                out[key] = units.format_ns(getattr(self, f"{key}_ns"))
        if self.also:
            out["also"] = list(self.also)
        if self.enable_bits is not None:
            out["enable_bits"] = self.enable_bits
        return out


@dataclass(frozen=True)
class IrqSource:
    """One RX interrupt source (an interrupt line of the edge NIC), ``[[sources]]``.

    Sources are numbered in file order; source 0 has the highest interrupt
    priority. All of them feed the one RX queue (unless ``isr_only``).
    """

    name: str
    index: int  #: position in the file = the engine's RX line number
    isr_work_ns: int  #: ISR work per packet (replaces the preset's ``isr_per_packet``)
    burst: int | None = None  #: bursty: this source's burst (None: ``[mitigation] burst``)
    min_interarrival_ns: int | None = None  #: strict: this source's (None: the mitigation's)
    isr_only: bool = False  #: the handler does all the work: delivered at its end, no driver


@dataclass(frozen=True)
class Flow:
    """One traffic flow: what its packets are, and its rate over time.

    :meth:`schedule` gives the rate as a piecewise-constant function of time;
    ``random`` says whether arrivals are Poisson (exponential inter-arrival
    times drawn from the scenario seed) or evenly spaced at the current rate.
    """

    name: str
    protocol: str
    dst_port: int
    size: int  #: bytes on the wire
    priority: int
    pattern: str
    begin_ns: int
    rate_pps: float | None = None  #: constant, poisson
    start_pps: float | None = None  #: pyramid
    peak_pps: float | None = None  #: pyramid
    step_pps: float | None = None  #: pyramid
    step_every_ns: int | None = None  #: pyramid, steps
    rates_pps: tuple[float, ...] | None = None  #: steps
    source: str | None = None  #: the ``[[sources]]`` entry it arrives on (None: no sources)
    src: str = DEFAULT_SRC  #: IPv4 source address of its frames
    src_port: int = 40000  #: TCP/UDP source port
    vlan_pcp: int | None = None  #: 802.1Q priority code point; None: untagged
    bind: bool = True  #: a socket is bound to (protocol, dst_port) (TCP/UDP only)
    capacity: int | None = None  #: ``[rx]``: deferrable server, packets per server period
    server_period_ns: int | None = None  #: ``[rx]``: the server's period
    queue: int | None = None  #: ``[rx]``: flow queue limit, packets (None: the pool)
    nic_queue: str | None = None  #: multiqueue NIC: its ``[[nic.queues]]`` entry
    pcap: str | None = None  #: pcap: the capture replayed (an absolute path)
    scale: float = 1.0  #: pcap: its rate times this (gaps divided by it)
    loop: bool = False  #: pcap: replay it again and again
    skip_ns: int = 0  #: pcap: start this far into the capture

    @property
    def random(self) -> bool:
        """True when arrivals are Poisson rather than evenly spaced."""
        return self.pattern == "poisson"

    #: The fields of the piecewise rate patterns (pyramid, steps): None on other flows.
    PIECEWISE: ClassVar[tuple[str, ...]] = (
        "start_pps", "peak_pps", "step_pps", "step_every_ns", "rates_pps"
    )

    def at_constant_rate(self, rate_pps: float) -> Flow:
        """This flow sent evenly at ``rate_pps`` from time 0 (the fields of the
        piecewise patterns cleared)."""
        return replace(
            self, pattern="constant", rate_pps=rate_pps, begin_ns=0,
            **dict.fromkeys(self.PIECEWISE),
        )

    def schedule(self, duration_ns: int) -> tuple[tuple[int, float], ...]:
        """Change points ``((t_ns, pps), ...)`` of the rate, from 0 up to ``duration_ns``.

        The rate holds from each point until the next. The first point is at
        0; the flow is silent (0 pps) before ``begin``. A pyramid stays at
        ``start`` after its descent, a ``steps`` flow at its last rate.
        Consecutive equal rates are merged.
        """
        pts: list[tuple[int, float]] = [(0, 0.0)]
        t = self.begin_ns
        if self.pattern in ("constant", "poisson", "pcap"):
            # pcap: its mean rate (the replay itself follows the capture)
            pts.append((t, float(self.rate_pps or 0.0)))
        elif self.pattern == "steps":
            assert self.rates_pps is not None and self.step_every_ns is not None
            for r in self.rates_pps:
                pts.append((t, r))
                t += self.step_every_ns
        elif self.pattern == "pyramid":
            assert self.step_every_ns is not None
            start, peak, step = self.start_pps, self.peak_pps, self.step_pps
            assert start is not None and peak is not None and step is not None
            # Only the levels that begin within the run: a tiny step (1e-9pps) must
            # not build billions of them. The climb alone then passes duration_ns.
            fit = max(0, duration_ns - t) // self.step_every_ns + 1
            ups: list[float] = []
            k = 0
            while start + k * step < peak - 1e-9 and k < min(fit, MAX_SCHEDULE_POINTS):
                ups.append(start + k * step)
                k += 1
            for r in ups:
                pts.append((t, r))
                t += self.step_every_ns
            pts.append((t, peak))
            t += self.step_every_ns
            for r in reversed(ups):
                pts.append((t, r))
                t += self.step_every_ns
        # Keep the last point per instant, drop points past the end, merge equal rates.
        out: list[tuple[int, float]] = []
        for tp, rp in pts:
            if tp > duration_ns:
                break
            if out and out[-1][0] == tp:
                out[-1] = (tp, rp)
            else:
                out.append((tp, rp))
        merged: list[tuple[int, float]] = []
        for tp, rp in out:
            if merged and merged[-1][1] == rp:
                continue
            merged.append((tp, rp))
        return tuple(merged)

    def rate_at(self, t_ns: int, duration_ns: int) -> float:
        """The rate in pps at time ``t_ns``."""
        rate = 0.0
        for tp, rp in self.schedule(duration_ns):
            if tp > t_ns:
                break
            rate = rp
        return rate


@dataclass(frozen=True)
class Task:
    """An extra task: ``background`` (always ready), ``periodic`` or ``worker`` (one flow)."""

    name: str
    kind: str
    priority: int
    core: int
    period_ns: int | None = None  #: periodic
    work_ns: int | None = None  #: periodic: per cycle; worker: per message
    flow: str | None = None  #: worker: the flow it receives
    queue: int | None = None  #: worker: mailbox capacity, messages
    masks_rx: bool = False  #: periodic: each job masks the RX lines (mutual exclusion)


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. Times in ns, rates in pps; costs merged from the preset."""

    name: str
    description: str
    source: str
    path: str  #: the file it was read from ("<string>" when parsed from text)
    platform: Platform
    costs: CostTable
    duration_ns: int
    bin_ns: int
    seed: int
    critical: Critical
    driver: Driver
    nic: Nic
    mitigation: Mitigation
    flows: tuple[Flow, ...]
    tasks: tuple[Task, ...] = ()
    sources: tuple[IrqSource, ...] = ()  #: empty: one RX source with the preset's costs
    rx: Rx | None = None  #: Behnke et al.'s receive path; None: the plain driver queue
    detect: Detect = field(default_factory=Detect)  #: the overload detectors' settings
    notes: str = ""  #: free text for readers, e.g. what the paper observed
    text: str = field(default="", repr=False, compare=False)  #: the file's text

    @property
    def bins(self) -> int:
        """Number of measurement bins (``duration`` is a whole number of bins)."""
        return self.duration_ns // self.bin_ns


# --------------------------------------------------------------------------- presets


def platforms_dir() -> Path:
    """The folder holding the platform presets shipped with the package."""
    return Path(__file__).resolve().parent / "platforms"


def available_platforms() -> list[str]:
    """Names of the shipped platform presets, sorted."""
    d = platforms_dir()
    return sorted(p.stem for p in d.glob("*.toml")) if d.is_dir() else []


def load_platform(name: str) -> tuple[Platform, CostTable, dict[str, dict[str, Any]]]:
    """Read preset ``name``: its platform, its costs (ns) and its raw ``[defaults]``.

    Raises :class:`UsageError` when the preset does not exist (listing those
    that do) or is malformed (validated by :class:`rtshield.schema.PresetFile`).
    """
    path = platforms_dir() / f"{name}.toml"
    if not name or "/" in name or "\\" in name or not path.is_file():
        avail = ", ".join(available_platforms()) or "(none installed)"
        raise UsageError(f"platform: unknown preset {name!r} (available: {avail})")
    from pydantic import ValidationError

    from rtshield import schema

    data = _read_toml(path)
    origin = str(path)
    clock = (
        data.get("platform", {}).get("clock_hz") if isinstance(data.get("platform"), dict) else None
    )
    ctx = {
        "clock_hz": clock
        if isinstance(clock, (int, float)) and not isinstance(clock, bool)
        else None
    }
    try:
        m = schema.PresetFile.model_validate(data, context=ctx)
    except ValidationError as e:
        raise schema.usage_error(e, origin) from None
    p = m.platform
    if p.name != name:
        raise UsageError(
            f"{origin}: [platform] name: {p.name!r} does not match the file name {name!r}"
        )
    plat = Platform(
        name=p.name,
        description=p.description,
        source=p.source,
        clock_hz=float(p.clock_hz),
        cores=p.cores,
        tick_ns=p.tick,
        tick_isr_ns=p.tick_isr,
        time_slicing=p.time_slicing,
        path=origin,
    )
    defaults = {k: v for k, v in data.get("defaults", {}).items()}
    return plat, CostTable(m.costs), defaults


# --------------------------------------------------------------------------- scenario


def load_scenario(
    path: str | Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    overrides_origin: str = "overrides",
) -> Scenario:
    """Read and validate a scenario file.

    ``overrides`` is a nested mapping merged over the file before validation,
    e.g. ``{"scenario": {"duration": "10s"}}`` to shorten a run; lists of
    tables (``flows``, ``tasks``, ``sources``) are replaced whole. Raises
    :class:`UsageError` with a one-line message on any problem; a bad value
    from ``overrides`` is reported under ``overrides_origin``.
    """
    p = Path(path)
    if p.suffix != ".toml" and not p.exists():
        raise UsageError(f"{p}: no such file")
    data, text = _read_toml_text(p)
    return parse_scenario(
        data, str(p), overrides=overrides, text=text, overrides_origin=overrides_origin
    )


def loads_scenario(
    text: str, origin: str = "<string>", overrides: Mapping[str, Any] | None = None
) -> Scenario:
    """Validate a scenario given as TOML text (``origin`` names it in messages)."""
    return parse_scenario(_parse_toml(text, origin), origin, overrides=overrides, text=text)


def parse_overrides(items: list[str] | tuple[str, ...], option: str = "--set") -> dict[str, Any]:
    """``["driver.queue=750", "scenario.duration=10s"]`` → nested overrides.

    The value is read as a TOML value (``750``, ``0.5``, ``true``,
    ``["1kHz", "2kHz"]``, ``"10s"``); anything that is not valid TOML is taken
    as a string, so ``scenario.duration=10s`` needs no quotes. Only keys of
    tables (not of ``[[flows]]``, ``[[tasks]]`` or ``[[sources]]``) can be set.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        parts = key.strip().split(".")
        if not sep or len(parts) != 2 or not all(p.strip() for p in parts):
            raise UsageError(
                f"{option}: expected SECTION.KEY=VALUE such as driver.queue=750, got {item!r}"
            )
        section, name = (p.strip() for p in parts)
        if section in ("flows", "tasks", "sources"):
            raise UsageError(
                f"{option}: {key}: [[{section}]] entries cannot be set from the "
                "command line; edit the file"
            )
        value = _parse_toml_value(raw, f"{option}: {key.strip()}")
        out.setdefault(section, {})[name] = value
    return out


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def parse_scenario(
    data: Mapping[str, Any],
    origin: str = "<string>",
    *,
    overrides: Mapping[str, Any] | None = None,
    text: str = "",
    overrides_origin: str = "overrides",
) -> Scenario:
    """Validate an already-parsed TOML document (see :func:`load_scenario`).

    The document is validated by :class:`rtshield.schema.ScenarioFile` after
    the preset's ``[defaults]`` and the ``overrides`` are laid over it.
    Errors in a value that came from ``overrides`` name ``overrides_origin``
    (the CLI passes ``"--set"``) instead of the file; errors in a value from
    the preset's defaults name the preset.
    """
    from pydantic import ValidationError

    from rtshield import schema

    #: The sections of a scenario file, in the order they are described.
    SECTIONS = tuple(schema.ScenarioFile.model_fields)  # noqa: N806
    overrides = overrides or {}
    sets = {k: v for k, v in overrides.items() if isinstance(v, Mapping)}
    doc = _merge(dict(data), {k: v for k, v in overrides.items() if k not in sets})
    if "system" in data and "scenario" not in data:
        raise UsageError(
            f"{origin}: [system]: this is a system description for 'rtshield "
            "analyze' or 'design', not a scenario (see docs/scenarios.md)"
        )
    if "calibration" in data and "scenario" not in data:
        raise UsageError(
            f"{origin}: [calibration]: this is a calibration file for 'rtshield "
            "calibrate', not a scenario (see docs/calibrate.md)"
        )
    for where, keys in ((origin, doc), (overrides_origin, sets)):
        for key in keys:
            if key not in SECTIONS:
                raise UsageError(
                    f"{where}: [{key}]: unknown section (allowed: {', '.join(SECTIONS)})"
                )
    if "scenario" not in doc:
        raise UsageError(f"{origin}: [scenario]: missing section")
    for name in doc:
        kind = "an array of tables" if name in ("flows", "tasks", "sources") else "a table"
        ok = (
            isinstance(doc[name], list) and all(isinstance(x, dict) for x in doc[name])
            if name in ("flows", "tasks", "sources")
            else isinstance(doc[name], dict)
        )
        if not ok:
            shown = f"[[{name}]]" if name in ("flows", "tasks", "sources") else f"[{name}]"
            raise UsageError(f"{origin}: {shown}: expected {kind} ({shown}), got {doc[name]!r}")

    platform_name = sets.get("scenario", {}).get("platform", doc["scenario"].get("platform"))
    if not isinstance(platform_name, str):
        raise UsageError(
            f"{origin}: [scenario] platform: missing or not a string "
            f"(available: {', '.join(available_platforms())})"
        )
    try:
        plat, preset_costs, defaults = load_platform(platform_name)
    except UsageError as e:
        msg = str(e)
        if msg.startswith("platform: "):
            where = overrides_origin if "platform" in sets.get("scenario", {}) else origin
            msg = f"{where}: [scenario] {msg}"
        raise UsageError(msg) from None
    preset = f"{plat.path} [defaults]"

    # One document: the preset's defaults, the file, then --set; where each value came from.
    merged: dict[str, Any] = {}
    origins: dict[tuple[str, ...], str] = {}
    own: set[tuple[str, str]] = set()
    for name in SECTIONS:
        if name in ("flows", "tasks", "sources"):
            if name in doc:
                merged[name] = doc[name]
            continue
        user = name in doc or name in sets
        if name == "rx" and not user:
            continue  # the preset's [defaults.rx] apply only to a scenario with [rx]
        table: dict[str, Any] = {}
        for where, layer in (
            (overrides_origin, sets.get(name, {})),
            (origin, doc.get(name, {})),
            (preset, defaults.get(name, {})),
        ):
            for key, value in layer.items():
                if key in table:
                    continue
                table[key] = copy.deepcopy(value)
                origins[(name, key)] = where
                if where != preset:
                    own.add((name, key))
        if table or user or name in ("critical", "driver"):
            merged[name] = table
    context: dict[str, Any] = {
        "clock_hz": plat.clock_hz,
        "platform": plat,
        "preset_costs": preset_costs,
        "own": own,
        # what a flow's keys depend on (the tables' own values are checked there)
        "rx_on": "rx" in merged and merged["rx"].get("enabled", True) is not False,
        "nic_kind": merged.get("nic", {}).get("kind", "edge"),
        "base": _base_dir(origin),
    }
    try:
        model = schema.ScenarioFile.model_validate(merged, context=context)
    except ValidationError as e:
        raise schema.usage_error(e, origin, origins, merged) from None
    out = _build(model, plat, preset_costs, context, origin, text)
    # What only the simulator knows (libshield's option ranges, the NIC's map,
    # the rate changes a flow's pattern makes): its own check, now, so that
    # nothing is created or written for a refused file, and no other scenario
    # of a compare or sweep runs first.
    from rtshield._native import NativeError
    from rtshield.engine import check_scenario

    try:
        check_scenario(out)
    except NativeError as e:
        raise UsageError(f"engine: {e}") from None
    return out


def _base_dir(origin: str) -> Path:
    """Folder that relative paths in the scenario ``origin`` start from: the
    file's own folder, or the working directory for a scenario given as text."""
    p = Path(origin)
    return p.resolve().parent if p.is_file() else Path.cwd()


# The Mitigation parameters of each protection, from its [mitigation] keys.
_MITIGATION_PARAMS: dict[str, dict[str, str]] = {
    "burst": {"slice_ns": "slice", "capacity": "capacity"},
    "hysteresis": {
        "block_below": "block_below",
        "unblock_above": "unblock_above",
        "sleep_ns": "sleep",
    },
    "budget": {"charge_isr": "charge_isr"},
    "strict": {"min_interarrival_ns": "min_interarrival"},
    "bursty": {"burst": "burst", "period_ns": "period", "timer": "timer"},
    "countdown": {"window_ns": "window"},
    "polling": {"period_ns": "period"},
}


def _copied(table: Any, *keys: str) -> dict[str, Any]:
    """The values of ``keys`` in a validated ``table``, for the typed fields that keep
    their key's name and value (durations and rates change name: ``begin`` → ``begin_ns``)."""
    return {k: getattr(table, k) for k in keys}


def _build(
    m: Any,
    plat: Platform,
    preset_costs: CostTable,
    context: Mapping[str, Any],
    origin: str,
    text: str,
) -> Scenario:
    """The typed :class:`Scenario` of a validated document."""
    h = m.scenario
    critical = Critical(
        period_ns=m.critical.period,
        work_ns=m.critical.work,
        priority=m.critical.priority,
        core=m.critical.core,
    )
    dcore = m.driver.core if m.driver.core is not None else critical.core
    driver = Driver(priority=m.driver.priority, queue=m.driver.queue, core=dcore)
    queues = (
        tuple(
            NicQueue(
                name=q.name,
                index=i,
                size=q.size,
                absolute_ns=q.absolute,
                packet_ns=q.packet,
                frames=q.frames,
            )
            for i, q in enumerate(m.nic.queues)
        )
        if m.nic.kind == "multiqueue"
        else ()
    )
    nic = Nic(m.nic.kind, m.ring, m.nic.core if m.nic.core is not None else dcore, queues)
    rx = None
    if m.rx_on:
        r = m.rx
        assert r is not None and r.buffers is not None
        on = r.global_capacity > 0
        rx = Rx(
            **_copied(r, "buffers", "recycle_below", "short_circuit", "cache", "global_capacity"),
            global_period_ns=r.global_period if on else None,
            poll_priority=r.poll_priority if on else None,
        )
    costs = {**preset_costs, **m.costs}
    sources = tuple(
        IrqSource(
            name=s.name,
            index=i,
            isr_work_ns=s.isr_work if s.isr_work is not None else costs.get("isr_per_packet", 0),
            burst=s.burst,
            min_interarrival_ns=s.min_interarrival,
            isr_only=s.isr_only,
        )
        for i, s in enumerate(m.sources)
    )
    mt = m.mitigation
    kinds = (mt.kind, *mt.also)
    params = {
        param: getattr(mt, key)
        for kind in kinds
        for param, key in _MITIGATION_PARAMS.get(kind, {}).items()
    }
    mit = Mitigation(mt.kind, also=tuple(mt.also), enable_bits=mt.enable_bits, **params)
    flows = tuple(_build_flow(f, i, sources, context) for i, f in enumerate(m.flows))
    tasks = tuple(
        Task(
            name=t.name,
            kind=t.kind,
            priority=t.priority if t.priority is not None else 0,
            core=t.core,
            period_ns=t.period if t.kind == "periodic" else None,
            work_ns=t.work,
            flow=t.flow if t.kind == "worker" else None,
            queue=t.queue if t.kind == "worker" else None,
            masks_rx=t.masks_rx,
        )
        for t in m.tasks
    )
    d = m.detect
    detect = Detect(
        slice_ns=d.slice or 0,
        irq_threshold=d.irq_threshold,
        fill_high=d.fill_high or 0,
        fill_low=d.fill_low,
    )
    return Scenario(
        **_copied(h, "name", "description", "source", "seed", "notes"),
        path=origin,
        platform=plat,
        costs=CostTable(costs),
        duration_ns=h.duration,
        bin_ns=h.bin,
        critical=critical,
        driver=driver,
        nic=nic,
        mitigation=mit,
        flows=flows,
        tasks=tasks,
        sources=sources,
        rx=rx,
        detect=detect,
        text=text,
    )


def _build_flow(f: Any, i: int, sources: tuple[IrqSource, ...], context: Mapping[str, Any]) -> Flow:
    kw: dict[str, Any] = {}
    if f.pattern in ("constant", "poisson"):
        kw["rate_pps"] = f.rate
    elif f.pattern == "pyramid":
        kw.update(start_pps=f.start, peak_pps=f.peak, step_pps=f.step, step_every_ns=f.step_every)
    elif f.pattern == "steps":
        kw.update(rates_pps=tuple(f.rates or ()), step_every_ns=f.step_every)
    else:
        path, rp = context["pcap"][i]
        kw.update(
            pcap=str(path), scale=float(f.scale), loop=f.loop, skip_ns=f.skip, rate_pps=rp.mean_pps
        )
    if f.source is not None:
        kw["source"] = f.source
    elif sources:
        kw["source"] = sources[0].name
    return Flow(
        **_copied(f, "name", "protocol", "dst_port", "size", "priority", "pattern", "src_port"),
        **_copied(f, "vlan_pcp", "capacity", "queue", "nic_queue"),
        begin_ns=f.begin,
        src=str(ipaddress.IPv4Address(f.src)),
        bind=f.bound,
        server_period_ns=f.server_period if (f.capacity or 0) > 0 else None,
        **kw,
    )
