"""Scenario files: TOML in, validated and typed :class:`Scenario` out.

A scenario describes one simulated device under one network load: the
platform preset it runs on (``python/rtshield/platforms/NAME.toml``), optional
overrides of the preset's per-activity costs, the critical task, the network
driver, the NIC, one mitigation, optional RX interrupt sources, the traffic
flows and optional extra tasks.
The schema is documented in ``docs/scenarios.md``; this module is its
executable form.

Every value with a dimension carries its unit in the value (``"10ms"``,
``"30000pps"``), parsed by :mod:`rtshield.units`. All times in the typed
result are integer nanoseconds (fields ending in ``_ns``) and all rates are
packets per second (fields ending in ``_pps``).

Any problem — unknown section or key, bad type, wrong unit, contradictory
settings — raises :class:`rtshield.errors.UsageError` with one line of the form
``FILE: [section] key: what is wrong``.

Public API: :func:`load_scenario`, :func:`loads_scenario`,
:func:`parse_scenario`, :func:`load_platform`, :func:`available_platforms`,
and the dataclasses below.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from rtshield import units
from rtshield.errors import UsageError
from rtshield.tomlfile import parse_toml as _parse_toml
from rtshield.tomlfile import parse_toml_value as _parse_toml_value
from rtshield.tomlfile import read_toml as _read_toml
from rtshield.tomlfile import read_toml_text as _read_toml_text
from rtshield.tomlfile import tomllib  # noqa: F401 (kept: callers parse TOML through it)

__all__ = [
    "CostTable",
    "Critical",
    "Detect",
    "Driver",
    "Flow",
    "IrqSource",
    "MITIGATION_KINDS",
    "Mitigation",
    "Nic",
    "NicQueue",
    "PATTERNS",
    "RX_COST_KEYS",
    "Rx",
    "Platform",
    "Scenario",
    "Task",
    "available_platforms",
    "load_platform",
    "load_scenario",
    "loads_scenario",
    "parse_overrides",
    "parse_scenario",
    "platforms_dir",
]

#: Mitigation kinds and, for each, the parameter keys it accepts.
MITIGATION_KINDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "burst": ("slice", "capacity"),
    "hysteresis": ("block_below", "unblock_above", "sleep"),
    "budget": ("charge_isr",),
    "queue": (),
    "strict": ("min_interarrival",),
    "bursty": ("burst", "period", "timer"),
    "countdown": ("window",),
    "polling": ("period",),
}
#: ``[mitigation] timer`` of the bursty limiter (Regehr & Duongsaa §3.3).
BURSTY_TIMERS = ("periodic", "lazy")

#: Traffic patterns and, for each, the keys it accepts (beyond the common ones).
PATTERNS: dict[str, tuple[str, ...]] = {
    "constant": ("rate",),
    "poisson": ("rate",),
    "pyramid": ("start", "peak", "step", "step_every"),
    "steps": ("rates", "step_every"),
    "pcap": ("file", "scale", "loop", "skip"),
}
#: Frame keys a ``pcap`` flow does not take: its frames are the capture's.
_PCAP_FRAME_KEYS = ("size", "src", "src_port", "vlan_pcp")
#: Largest ``scale`` of a pcap replay (a thousandfold rate; gaps stay >= 1 ns).
MAX_PCAP_SCALE = 1000.0

PROTOCOLS = ("tcp", "udp", "icmp", "arp", "raw")

# Sizes of the engine's fixed arrays: they mirror RTSIM_MAX_* in
# sim/include/rtsim/rtsim.h (a test checks that they agree).
MAX_CORES = 4
MAX_BINS = 1_000_000  #: rows of the time series (duration / bin)
MAX_TASKS = 8  #: including the critical task and the driver
MAX_FLOWS = 8
MAX_RATES = 64  #: rates of one ``steps`` flow
#: Change points :meth:`Flow.schedule` builds at most (far above what the engine
#: takes, so the engine's limit still reports the pattern; bounds memory and time).
MAX_SCHEDULE_POINTS = 10_000
MAX_SOURCES = 4  #: RX interrupt sources (lines) of the edge NIC
NIC_KINDS = ("edge", "dma_ring", "multiqueue")
MAX_NIC_QUEUES = 8  #: queues of the multiqueue NIC (RTSIM_MAX_NIC_QUEUES)
NIC_QUEUE_KEYS = ("name", "size", "absolute", "packet", "frames")
#: Keys of ``[rx]`` (Behnke et al.'s receive path).
RX_KEYS = (
    "enabled",
    "buffers",
    "recycle_below",
    "short_circuit",
    "cache",
    "global_capacity",
    "global_period",
    "poll_priority",
)
#: Preset cost keys the receive path needs (required only with ``[rx]``).
RX_COST_KEYS = (
    "rx_path_regular",
    "rx_path_short_circuit",
    "rx_path_prio_raise",
    "rx_path_recycle",
    "rx_path_rejected",
    "invalidate_eager",
    "invalidate_deferred",
    "poll_batch",
    "poll_per_packet",
)
#: Suffixes of a receive-path cost key giving its ISR duration at the 90, 99,
#: 99.9 and 99.99 % quantiles (Behnke Fig. 10), e.g. ``rx_path_prio_raise_p99``:
#: optional, all four or none, in a preset's or a scenario's ``[costs]``.
PATH_QUANTILE_KEYS = ("p90", "p99", "p999", "p9999")
_PATH_QUANTILE_COSTS = tuple(
    f"{k}_{q}" for k in RX_COST_KEYS if k.startswith("rx_path_") for q in PATH_QUANTILE_KEYS
)
#: Danicki et al.'s protections that ``[mitigation] also`` may add to ``kind``.
ALSO_KINDS = ("burst", "hysteresis", "budget", "queue")
#: Default IPv4 source of a flow's frames (TEST-NET-1, as the simulator's frames).
DEFAULT_SRC = "192.0.2.100"
TASK_KINDS = ("background", "periodic", "worker")
SOURCE_KEYS = ("name", "isr_work", "burst", "min_interarrival", "isr_only")
#: Mitigations that work with several RX sources (the engine's rule: the Danicki
#: mitigations and the countdown filter act on one RX line).
MULTI_SOURCE_KINDS = ("none", "strict", "bursty")

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
#: Flow keys that only apply with the receive path (``[rx]``).
_FLOW_RX_ONLY = ("capacity", "server_period", "queue")
_ALL_PATTERN_KEYS = tuple(sorted({k for ks in PATTERNS.values() for k in ks}))
_ALL_MITIGATION_KEYS = tuple(sorted({k for ks in MITIGATION_KINDS.values() for k in ks}))

# Sections a preset's [defaults] may fill, and the keys each may give.
_DEFAULTABLE = {
    "scenario": ("bin", "seed", "duration"),
    "critical": ("period", "work", "priority", "core"),
    "driver": ("priority", "queue", "core"),
    "nic": ("kind", "ring", "core", "queues"),
    "rx": RX_KEYS[1:],
}


#: What a flow, task, source or NIC queue may be called (docs/scenarios.md,
#: "Names"): an identifier of 1-64 characters, so that it is safe in CSV
#: headers, file names, JSON keys and reports.
NAME_RULE = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
_NAME_RE = re.compile(NAME_RULE)
#: Names the outputs use for their own entries: the CPU contexts of
#: ``summary.json`` ``cpu`` and the ``cpu_<context>`` columns (``idle``,
#: ``idle_core1``, ``isr_rx``…), the tasks the engine adds. ``idle_coreN``
#: and every ``isr_…`` name are reserved too (:func:`reserved_name`).
RESERVED_NAMES = ("critical", "driver", "polling", "idle", "isr_rx", "isr_tick", "isr_timer")


def reserved_name(name: str) -> bool:
    """Whether ``name`` is one of the outputs' own names (case-insensitive)."""
    low = name.lower()
    return (
        low in RESERVED_NAMES
        or low.startswith("isr_")
        or re.fullmatch(r"idle_core[0-9]+", low) is not None
    )


def check_name(t: _Table, key: str, what: str) -> str:
    """The name in ``key`` of table ``t``, checked against :data:`NAME_RULE`."""
    name = t.string(key)
    if not _NAME_RE.fullmatch(name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise t.err(
            key,
            f"{shown!r} is not a valid {what} name: 1-64 letters, digits, '_' or '-', "
            "starting with a letter or '_'",
        )
    if reserved_name(name):
        raise t.err(
            key,
            f"{name!r} is reserved (the outputs' own names: critical, driver, polling, "
            "idle, idle_coreN, isr_…); choose another",
        )
    return name


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


# --------------------------------------------------------------------------- reading


class _Table:
    """Typed access to one TOML table, from one or more layers, with precise errors.

    ``layers`` are ``(origin, dict)`` pairs, most specific first: overrides
    (``--set``), the scenario file, then the preset's defaults; the first
    ``own`` layers are the user's. Errors name the origin of the value, or
    ``home`` (the scenario file) for a missing key.
    """

    def __init__(
        self,
        section: str,
        layers: list[tuple[str, Mapping[str, Any]]],
        own: int | None = None,
        home: str | None = None,
    ) -> None:
        self.section = section
        self.layers = layers
        self.home = home if home is not None else layers[0][0]  #: the scenario file
        self.own = len(layers) if own is None else own  #: layers written by the user

    def own_keys(self) -> list[str]:
        """Keys the user wrote (overrides and the scenario file, not preset defaults)."""
        seen: dict[str, None] = {}
        for _, data in self.layers[: self.own]:
            seen.update(dict.fromkeys(data))
        return list(seen)

    def _where(self, key: str) -> tuple[str, Any] | None:
        for origin, data in self.layers:
            if key in data:
                return origin, data[key]
        return None

    def err(self, key: str, msg: str, origin: str | None = None) -> UsageError:
        if origin is None:
            found = self._where(key)
            origin = found[0] if found else self.home
        return UsageError(f"{origin}: [{self.section}] {key}: {msg}")

    def has(self, key: str) -> bool:
        return self._where(key) is not None

    def check_keys(self, allowed: tuple[str, ...] | list[str], hint: str = "") -> None:
        for origin, data in self.layers:
            for key in data:
                if key not in allowed:
                    extra = hint or "allowed: " + ", ".join(sorted(allowed))
                    raise self.err(key, f"unknown key ({extra})", origin)

    def get(self, key: str, default: Any = ..., *, what: str = "") -> tuple[Any, str]:
        found = self._where(key)
        if found is None:
            if default is ...:
                raise self.err(key, f"missing{' (' + what + ')' if what else ''}")
            return default, self.home
        return found[1], found[0]

    def string(self, key: str, default: Any = ...) -> str:
        v, origin = self.get(key, default)
        if not isinstance(v, str):
            raise self.err(key, f"expected a string, got {v!r}", origin)
        return v

    def choice(self, key: str, options: tuple[str, ...], default: Any = ...) -> str:
        v = self.string(key, default)
        if v not in options:
            raise self.err(key, f"{v!r} is not one of: {', '.join(options)}")
        return v

    def integer(
        self, key: str, default: Any = ..., lo: int | None = None, hi: int | None = None
    ) -> int:
        v, origin = self.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.err(key, f"expected a whole number, got {v!r}", origin)
        if lo is not None and v < lo:
            raise self.err(key, f"must be at least {lo}, got {v}", origin)
        if hi is not None and v > hi:
            raise self.err(key, f"must be at most {hi}, got {v}", origin)
        return v

    def boolean(self, key: str, default: Any = ...) -> bool:
        v, origin = self.get(key, default)
        if not isinstance(v, bool):
            raise self.err(key, f"expected true or false, got {v!r}", origin)
        return v

    def fraction(self, key: str, default: Any = ...) -> float:
        """A fraction in [0, 1]: a number (``0.1``) or a percentage string (``"10%"``)."""
        v, origin = self.get(key, default)
        if isinstance(v, str) and v.strip().endswith("%"):
            try:
                v = float(v.strip()[:-1]) / 100.0
            except ValueError:
                raise self.err(key, f"cannot read {v!r} as a percentage", origin) from None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.err(key, f'expected a fraction such as 0.1 or "10%", got {v!r}', origin)
        if not 0.0 <= v <= 1.0:
            raise self.err(key, f"must lie between 0 and 1 (0% and 100%), got {v!r}", origin)
        return float(v)

    def _prefix(self, origin: str) -> str:
        return f"{origin}: [{self.section}] "

    def duration(
        self, key: str, default: Any = ..., *, clock_hz: float | None = None, positive: bool = True
    ) -> int:
        """A duration in ns; a missing key gives ``default`` (already in ns)."""
        found = self._where(key)
        if found is None:
            if default is ...:
                raise self.err(key, "missing")
            return default
        origin, v = found
        try:
            ns = units.duration_ns(v, key, clock_hz=clock_hz)
        except UsageError as e:
            raise UsageError(self._prefix(origin) + str(e)) from None
        if positive and ns <= 0:
            raise self.err(key, f"must be longer than zero, got {v!r}", origin)
        return ns

    def rate(
        self, key: str, default: Any = ..., *, value: Any = ..., arrivals: bool = True
    ) -> float:
        """A rate in events per second; an arrival rate is 0 or at least
        :data:`rtshield.units.MIN_RATE_HZ` (``arrivals``)."""
        if value is ...:
            value, origin = self.get(key, default)
        else:
            origin = self.home
        try:
            r = units.rate_hz(value, key)
        except UsageError as e:
            raise UsageError(self._prefix(origin) + str(e)) from None
        if not math.isfinite(r) or r < 0:
            raise self.err(key, f"must be a finite, non-negative rate, got {value!r}", origin)
        if arrivals and 0 < r < units.MIN_RATE_HZ:
            raise self.err(
                key,
                f"must be 0 or at least {units.MIN_RATE_HZ:g} per second (one packet in "
                f"about 11.6 days), got {value!r}",
                origin,
            )
        return r


def _sub(data: Mapping[str, Any], key: str, origin: str, *, array: bool = False) -> Any:
    v = data.get(key, [] if array else {})
    if array:
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise UsageError(f"{origin}: [[{key}]]: expected an array of tables ([[{key}]])")
        return v
    if not isinstance(v, dict):
        raise UsageError(f"{origin}: [{key}]: expected a table ([{key}]), got {v!r}")
    return v


# --------------------------------------------------------------------------- native limits


@functools.lru_cache(maxsize=1)
def native_limits() -> dict[str, int]:
    """libshield's and the simulator's build-time limits, read through the binding.

    ``prio_levels`` (RTS_FLOW_PRIO_LEVELS), ``pool_max`` (RTS_POOL_MAX_BUFS),
    ``flow_max`` (RTS_FLOW_MAX), ``frame_max`` (RTSIM_FRAME_MAX),
    ``nic_queues`` (RTSIM_MAX_NIC_QUEUES). The macros are not in the binding,
    so the array sizes they fix are measured instead.
    """
    from rtshield._native import NativeError, load

    try:
        ffi, lib = load()
    except NativeError as e:
        raise UsageError(f"engine: {e}") from None
    fq = ffi.new("rts_flow_queue *")
    return {
        "prio_levels": len(fq.rr_last),
        "pool_max": len(fq.state),
        "flow_max": len(ffi.new("rts_flow_table *").flows),
        "frame_max": int(lib.RTSIM_FRAME_MAX),
        "nic_queues": int(lib.RTSIM_MAX_NIC_QUEUES),
    }


def frame_min(protocol: str, vlan: bool) -> int:
    """Smallest frame of ``protocol`` (its headers), from the simulator (rtsim_frame_min)."""
    from rtshield._native import load

    _, lib = load()
    return int(lib.rtsim_frame_min(PROTOCOLS.index(protocol), 1 if vlan else 0))


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
    that do) or is malformed.
    """
    path = platforms_dir() / f"{name}.toml"
    if not name or "/" in name or "\\" in name or not path.is_file():
        avail = ", ".join(available_platforms()) or "(none installed)"
        raise UsageError(f"platform: unknown preset {name!r} (available: {avail})")
    data = _read_toml(path)
    origin = str(path)
    for key in data:
        if key not in ("platform", "costs", "defaults"):
            raise UsageError(
                f"{origin}: [{key}]: unknown section (allowed: platform, costs, defaults)"
            )
    t = _Table("platform", [(origin, _sub(data, "platform", origin))])
    t.check_keys(
        ("name", "description", "source", "clock_hz", "cores", "tick", "tick_isr", "time_slicing")
    )
    clock_v, _ = t.get("clock_hz")
    if isinstance(clock_v, bool) or not isinstance(clock_v, (int, float)) or clock_v <= 0:
        raise t.err("clock_hz", f"expected a positive number of Hz, got {clock_v!r}")
    clock = float(clock_v)
    plat = Platform(
        name=t.string("name"),
        description=t.string("description", ""),
        source=t.string("source", ""),
        clock_hz=clock,
        cores=t.integer("cores", lo=1, hi=MAX_CORES),
        tick_ns=t.duration("tick", clock_hz=clock),
        tick_isr_ns=t.duration("tick_isr", clock_hz=clock, positive=False),
        time_slicing=t.boolean("time_slicing", True),
        path=origin,
    )
    if plat.name != name:
        raise t.err("name", f"{plat.name!r} does not match the file name {name!r}")
    ct = _Table("costs", [(origin, _sub(data, "costs", origin))])
    costs = {k: ct.duration(k, clock_hz=clock, positive=False) for k in ct.own_keys()}
    defaults = _sub(data, "defaults", origin)
    for sec, tbl in defaults.items():
        if sec not in _DEFAULTABLE:
            raise UsageError(
                f"{origin}: [defaults.{sec}]: unknown section (allowed: {', '.join(_DEFAULTABLE)})"
            )
        if not isinstance(tbl, dict):
            raise UsageError(f"{origin}: [defaults.{sec}]: expected a table")
        _Table(f"defaults.{sec}", [(origin, tbl)]).check_keys(_DEFAULTABLE[sec])
    return plat, CostTable(costs), defaults


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

    Errors in a value that came from ``overrides`` name ``overrides_origin``
    (the CLI passes ``"--set"``) instead of the file.
    """
    overrides = overrides or {}
    sets = {k: v for k, v in overrides.items() if isinstance(v, Mapping)}
    doc = _merge(dict(data), {k: v for k, v in overrides.items() if k not in sets})
    sections = (
        "scenario",
        "costs",
        "critical",
        "driver",
        "nic",
        "mitigation",
        "rx",
        "detect",
        "sources",
        "flows",
        "tasks",
    )
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
            if key not in sections:
                raise UsageError(
                    f"{where}: [{key}]: unknown section (allowed: {', '.join(sections)})"
                )
    if "scenario" not in doc:
        raise UsageError(f"{origin}: [scenario]: missing section")

    head_raw = _sub(doc, "scenario", origin)
    platform_name = sets.get("scenario", {}).get("platform", head_raw.get("platform"))
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

    def table(name: str) -> _Table:
        layers: list[tuple[str, Mapping[str, Any]]] = []
        if name in sets:
            layers.append((overrides_origin, sets[name]))
        layers.append((origin, _sub(doc, name, origin)))
        own = len(layers)
        if name in defaults:
            layers.append((preset, defaults[name]))
        return _Table(name, layers, own, home=origin)

    # [scenario]
    h = table("scenario")
    h.check_keys(("name", "description", "source", "notes", "platform", "duration", "bin", "seed"))
    name = h.string("name")
    if not name.strip():
        raise h.err("name", "must not be empty")
    if len(name) > 128 or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise h.err(
            "name", "a short name: at most 128 characters, no line breaks or control characters"
        )
    duration = h.duration("duration")
    bin_ns = h.duration("bin", 1_000_000_000)
    if bin_ns > duration and "bin" not in h.own_keys():
        raise h.err(
            "duration",
            f"{units.format_ns(duration)} is shorter than the bin "
            f"({units.format_ns(bin_ns)}, the preset's default); set [scenario] bin too",
        )
    if bin_ns > duration:
        raise h.err(
            "bin",
            f"the bin ({units.format_ns(bin_ns)}) is longer than the duration "
            f"({units.format_ns(duration)})",
        )
    if duration % bin_ns:
        raise h.err(
            "duration",
            f"must be a whole number of bins ({units.format_ns(duration)} "
            f"is not a multiple of bin = {units.format_ns(bin_ns)})",
        )
    if duration // bin_ns > MAX_BINS:
        raise h.err(
            "duration",
            f"{units.format_ns(duration)} is {duration // bin_ns} bins of "
            f"{units.format_ns(bin_ns)}; at most {MAX_BINS} (shorten the run or widen "
            "the bin)",
        )
    seed = h.integer("seed", 1, lo=0, hi=2**63 - 1)

    # [costs]
    c = table("costs")
    c.check_keys(
        tuple(preset_costs) + _PATH_QUANTILE_COSTS,
        hint="the preset "
        + plat.name
        + " defines: "
        + ", ".join(preset_costs)
        + "; and a receive-path cost's quantiles rx_path_NAME_p90/_p99/_p999/_p9999",
    )
    costs = dict(preset_costs)
    for key in c.own_keys():
        costs[key] = c.duration(key, clock_hz=plat.clock_hz, positive=False)

    # [critical]
    cr = table("critical")
    cr.check_keys(_DEFAULTABLE["critical"])
    critical = Critical(
        period_ns=cr.duration("period"),
        work_ns=cr.duration("work"),
        priority=cr.integer("priority", lo=0, hi=255),
        core=cr.integer("core", 0, lo=0),
    )
    if critical.core >= plat.cores:
        raise cr.err("core", f"platform {plat.name} has {plat.cores} core(s), numbered from 0")

    # [driver]
    dr = table("driver")
    dr.check_keys(_DEFAULTABLE["driver"])
    driver = Driver(
        priority=dr.integer("priority", lo=0, hi=255),
        queue=dr.integer("queue", lo=1, hi=1_000_000),
        core=dr.integer("core", critical.core, lo=0),
    )
    if driver.core >= plat.cores:
        raise dr.err("core", f"platform {plat.name} has {plat.cores} core(s), numbered from 0")

    # [rx] (read first: it decides whether the NIC posts `ring` buffers)
    rxt = table("rx")
    rxt.check_keys(RX_KEYS)
    rx_on = ("rx" in doc or "rx" in sets) and rxt.boolean("enabled", True)

    # [nic]
    n = table("nic")
    n.check_keys(_DEFAULTABLE["nic"])
    kind = n.choice("kind", NIC_KINDS, "edge")
    if kind == "dma_ring" or rx_on:
        ring = n.integer("ring", lo=1, hi=1_000_000)
    else:
        if "ring" in n.own_keys():
            raise n.err(
                "ring",
                f'only applies to kind = "dma_ring" or with [rx] (kind is {kind!r}, no [rx])',
            )
        ring = None
    nic_queues = _nic_queues(n, kind, plat) if kind == "multiqueue" else ()
    if kind != "multiqueue" and "queues" in n.own_keys():
        raise n.err("queues", f'[[nic.queues]] need kind = "multiqueue" (kind is {kind!r})')
    nic = Nic(kind, ring, n.integer("core", driver.core, lo=0), nic_queues)
    if nic.core >= plat.cores:
        raise n.err("core", f"platform {plat.name} has {plat.cores} core(s), numbered from 0")
    rx = _rx(rxt, nic, costs, plat) if rx_on else None
    if rx is not None and driver.priority >= native_limits()["prio_levels"]:
        raise dr.err(
            "priority",
            f"with [rx] at most {native_limits()['prio_levels'] - 1}: the network task's own "
            f"priority is one of libshield's flow priority levels, got {driver.priority}",
        )

    # [mitigation]
    m = table("mitigation")
    mkind = m.choice("kind", tuple(MITIGATION_KINDS), "none")
    also = _also(m, mkind)
    allowed = MITIGATION_KINDS[mkind]
    for key in m.own_keys():
        if key in ("kind", "also", "enable_bits") or key in allowed:
            continue
        if any(key in MITIGATION_KINDS[a] for a in also):
            continue
        owners = [k for k, ks in MITIGATION_KINDS.items() if key in ks]
        if owners:
            raise m.err(
                key,
                f"is a parameter of {' / '.join(owners)}, not of kind = "
                f"{mkind!r} (which takes: {', '.join(allowed) or 'no parameters'})",
            )
        takes = ", ".join(allowed) or "no parameters"
        raise m.err(key, f"unknown key (kind {mkind!r} takes: {takes})")

    # [[sources]] (before the mitigation: a source may carry its own parameter)
    sources = _sources(_sub(doc, "sources", origin, array=True), origin, mkind, nic, costs, plat)
    mit = _mitigation(m, mkind, critical, sources)
    for extra in also:
        more = _mitigation(m, extra, critical, sources)
        mit = replace(
            mit,
            **{
                f.name: getattr(more, f.name)
                for f in fields(Mitigation)
                if f.name not in ("kind", "also") and getattr(more, f.name) is not None
            },
        )
    if also:
        mit = replace(mit, also=also)
    if m.has("enable_bits"):
        mit = replace(mit, enable_bits=m.integer("enable_bits", lo=1, hi=2))

    # [[flows]]
    flows_raw = _sub(doc, "flows", origin, array=True)
    if len(flows_raw) > MAX_FLOWS:
        raise UsageError(f"{origin}: [[flows]]: at most {MAX_FLOWS} flows, got {len(flows_raw)}")
    flows: list[Flow] = []
    for i, raw in enumerate(flows_raw):
        flows.append(
            _flow(
                _Table(f"flows #{i + 1}", [(origin, raw)]),
                duration,
                sources,
                rx,
                nic,
                plat,
                base=_base_dir(origin),
            )
        )
    names = [f.name for f in flows]
    for i, fname in enumerate(names):
        if fname in names[:i]:
            raise UsageError(f"{origin}: [flows #{i + 1}] name: {fname!r} is used by two flows")
    _check_captures(flows, origin)
    if rx is not None:
        _check_bound(flows, origin)

    # [[tasks]]
    tasks_raw = _sub(doc, "tasks", origin, array=True)
    if len(tasks_raw) > MAX_TASKS - 2:
        raise UsageError(
            f"{origin}: [[tasks]]: at most {MAX_TASKS - 2} extra tasks (the "
            f"critical task and the driver take 2 of {MAX_TASKS}), got "
            f"{len(tasks_raw)}"
        )
    if rx is not None and rx.global_capacity > 0 and len(tasks_raw) > MAX_TASKS - 3:
        raise UsageError(
            f"{origin}: [[tasks]]: at most {MAX_TASKS - 3} extra tasks with the global "
            f"limit (the critical task, the driver and the polling task take 3 of "
            f"{MAX_TASKS}), got {len(tasks_raw)}"
        )
    tasks: list[Task] = []
    for i, raw in enumerate(tasks_raw):
        t = _task(_Table(f"tasks #{i + 1}", [(origin, raw)]), plat, names)
        fsrc = next((f.source for f in flows if f.name == t.flow), None)
        if t.kind == "worker" and any(x.isr_only for x in sources if x.name == fsrc):
            raise UsageError(
                f"{origin}: [tasks #{i + 1}] flow: {t.flow!r} arrives on source "
                f"{fsrc!r}, which is isr_only (finished in its interrupt handler, "
                "no worker receives it)"
            )
        polling = rx is not None and rx.global_capacity > 0
        reserved = ("critical", "driver", "polling") if polling else ("critical", "driver")
        if t.name in reserved or t.name in [x.name for x in tasks]:
            raise UsageError(f"{origin}: [tasks #{i + 1}] name: {t.name!r} is already taken")
        if rx is not None and t.kind == "worker":
            fl = next(f for f in flows if f.name == t.flow)
            if not fl.bind:
                raise UsageError(
                    f"{origin}: [tasks #{i + 1}] flow: {t.flow!r} has no bound socket "
                    "(bind = false), so with [rx] no packet of it reaches a worker"
                )
        tasks.append(t)

    out = Scenario(
        name=name,
        description=h.string("description", ""),
        source=h.string("source", ""),
        path=origin,
        platform=plat,
        costs=CostTable(costs),
        duration_ns=duration,
        bin_ns=bin_ns,
        seed=seed,
        critical=critical,
        driver=driver,
        nic=nic,
        mitigation=mit,
        flows=tuple(flows),
        tasks=tuple(tasks),
        sources=sources,
        rx=rx,
        detect=_detect(table("detect"), plat),
        notes=h.string("notes", ""),
        text=text,
    )
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


def _nic_queues(n: _Table, kind: str, plat: Platform) -> tuple[NicQueue, ...]:
    """``[[nic.queues]]`` of the multiqueue NIC."""
    raws, origin = n.get("queues", [], what='[[nic.queues]] of kind = "multiqueue"')
    if not isinstance(raws, list) or not all(isinstance(x, dict) for x in raws):
        raise n.err("queues", "expected an array of tables ([[nic.queues]])", origin)
    if not raws:
        raise n.err("queues", 'kind = "multiqueue" needs at least one [[nic.queues]] entry', origin)
    limit = min(MAX_NIC_QUEUES, native_limits()["nic_queues"])
    if len(raws) > limit:
        raise n.err("queues", f"at most {limit} queues, got {len(raws)}", origin)
    out: list[NicQueue] = []
    for i, raw in enumerate(raws):
        t = _Table(f"nic.queues #{i + 1}", [(origin, raw)])
        t.check_keys(NIC_QUEUE_KEYS)
        name = check_name(t, "name", "queue")
        if name in [q.name for q in out]:
            raise t.err("name", f"{name!r} is used by two queues")
        out.append(
            NicQueue(
                name=name,
                index=i,
                size=t.integer("size", lo=1, hi=65535),
                absolute_ns=(
                    t.duration("absolute", clock_hz=plat.clock_hz) if t.has("absolute") else None
                ),
                packet_ns=t.duration("packet", clock_hz=plat.clock_hz) if t.has("packet") else None,
                frames=t.integer("frames", lo=1, hi=65535) if t.has("frames") else None,
            )
        )
    return tuple(out)


def _rx(t: _Table, nic: Nic, costs: Mapping[str, int], plat: Platform) -> Rx:
    """``[rx]``: Behnke et al.'s receive path, checked against the NIC and the preset."""
    for key in RX_COST_KEYS:
        if key not in costs:
            raise UsageError(
                f"{plat.path}: [costs] {key}: missing (the receive path, [rx], needs it; "
                "see docs/model.md)"
            )
    lim = native_limits()
    buffers = t.integer("buffers", lo=2, hi=lim["pool_max"])
    ring = nic.ring or 0
    if ring > buffers:
        raise t.err(
            "buffers",
            f"a pool of {buffers} buffers cannot fill [nic] ring = {ring} (the buffers "
            "posted to the NIC come from the pool)",
        )
    recycle = None
    if t.has("recycle_below"):
        recycle = t.integer("recycle_below", lo=0, hi=ring)
    cap = t.integer("global_capacity", 0, lo=0, hi=2**32 - 1)
    # Checked even when the limit is off (capacity 0), which they do not then
    # affect: a sweep over global_capacity = 0, 3, ... keeps one file valid.
    period = prio = None
    if cap > 0 or t.has("global_period"):
        period = t.duration("global_period", clock_hz=plat.clock_hz)
    if cap > 0 or t.has("poll_priority"):
        prio = t.integer("poll_priority", lo=0, hi=255)
    if cap == 0:
        period = prio = None
    return Rx(
        buffers=buffers,
        recycle_below=recycle,
        short_circuit=t.boolean("short_circuit", True),
        cache=t.choice("cache", ("lazy", "eager"), "lazy"),
        global_capacity=cap,
        global_period_ns=period,
        poll_priority=prio,
    )


DETECT_KEYS = ("slice", "irq_threshold", "fill_high", "fill_low")


def _detect(t: _Table, plat: Platform) -> Detect:
    """``[detect]``: the overload detectors of Danicki et al. §2.1."""
    t.check_keys(DETECT_KEYS)
    slice_ns = t.duration("slice", clock_hz=plat.clock_hz) if t.has("slice") else 0
    if t.has("irq_threshold") and not slice_ns:
        raise t.err("irq_threshold", "needs slice (the interrupt count's time slice)")
    high = t.integer("fill_high", 0, lo=1, hi=2**32 - 1) if t.has("fill_high") else 0
    if t.has("fill_low") and not high:
        raise t.err("fill_low", "needs fill_high")
    low = t.integer("fill_low", 0, lo=0, hi=2**32 - 1)
    if high and low >= high:
        raise t.err("fill_low", f"must be below fill_high ({high}), got {low}")
    return Detect(
        slice_ns=slice_ns,
        irq_threshold=t.integer("irq_threshold", 0, lo=0, hi=2**32 - 1),
        fill_high=high,
        fill_low=low,
    )


def _sources(
    raws: list[dict[str, Any]],
    origin: str,
    mkind: str,
    nic: Nic,
    costs: Mapping[str, int],
    plat: Platform,
) -> tuple[IrqSource, ...]:
    """``[[sources]]``: validated against the mitigation kind and the NIC."""
    if not raws:
        return ()
    if len(raws) > MAX_SOURCES:
        raise UsageError(
            f"{origin}: [[sources]]: at most {MAX_SOURCES} sources (RX interrupt "
            f"lines of the simulated NIC), got {len(raws)}"
        )
    if len(raws) > 1 and mkind not in MULTI_SOURCE_KINDS:
        raise UsageError(
            f"{origin}: [[sources]]: {len(raws)} sources need [mitigation] kind "
            f"{', '.join(MULTI_SOURCE_KINDS)} (kind {mkind!r} acts on one RX line)"
        )
    if len(raws) > 1 and nic.kind != "edge":
        raise UsageError(
            f"{origin}: [[sources]]: {len(raws)} sources need [nic] kind = "
            f'"edge" (a {nic.kind} NIC has one interrupt line)'
        )
    per_source = {"burst": "bursty", "min_interarrival": "strict"}
    out: list[IrqSource] = []
    for i, raw in enumerate(raws):
        t = _Table(f"sources #{i + 1}", [(origin, raw)])
        t.check_keys(SOURCE_KEYS)
        for key, owner in per_source.items():
            if t.has(key) and mkind != owner:
                raise t.err(
                    key, f'only applies under [mitigation] kind = "{owner}" (kind is {mkind!r})'
                )
        name = check_name(t, "name", "source")
        if name in [s.name for s in out]:
            raise t.err("name", f"{name!r} is used by two sources")
        work = t.duration(
            "isr_work", costs.get("isr_per_packet", 0), clock_hz=plat.clock_hz, positive=False
        )
        if work + costs.get("isr_entry_exit", 0) <= 0:
            raise t.err(
                "isr_work",
                "an RX interrupt must cost CPU time (isr_entry_exit is 0 on this platform)",
            )
        out.append(
            IrqSource(
                name=name,
                index=i,
                isr_work_ns=work,
                burst=t.integer("burst", lo=1, hi=2**31 - 1) if t.has("burst") else None,
                min_interarrival_ns=(
                    t.duration("min_interarrival", clock_hz=plat.clock_hz)
                    if t.has("min_interarrival")
                    else None
                ),
                isr_only=t.boolean("isr_only", False),
            )
        )
    return tuple(out)


def _also(m: _Table, kind: str) -> tuple[str, ...]:
    """``[mitigation] also``: Danicki protections applied together with ``kind``."""
    if not m.has("also"):
        return ()
    raw, origin = m.get("also")
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise m.err("also", f'expected a list of names such as ["hysteresis"], got {raw!r}')
    if kind not in ALSO_KINDS:
        raise m.err(
            "also",
            f"combines Danicki et al.'s protections: kind must be one of "
            f"{', '.join(ALSO_KINDS)} (kind is {kind!r})",
        )
    out: list[str] = []
    for name in raw:
        if name not in ALSO_KINDS:
            raise m.err("also", f"{name!r} is not one of: {', '.join(ALSO_KINDS)}", origin)
        if name == kind:
            raise m.err("also", f"{name!r} is already the kind", origin)
        if name in out:
            raise m.err("also", f"{name!r} is listed twice", origin)
        out.append(name)
    return tuple(out)


def _mitigation(
    m: _Table, kind: str, critical: Critical, sources: tuple[IrqSource, ...] = ()
) -> Mitigation:
    # A mitigation parameter that every source gives for itself may be left out.
    own_burst = bool(sources) and all(s.burst is not None for s in sources)
    own_gap = bool(sources) and all(s.min_interarrival_ns is not None for s in sources)
    if kind == "burst":
        return Mitigation(
            kind, slice_ns=m.duration("slice"), capacity=m.integer("capacity", lo=1, hi=2**31 - 1)
        )
    if kind == "hysteresis":
        block = m.fraction("block_below")
        unblock = m.fraction("unblock_above")
        if unblock <= block:
            raise m.err(
                "unblock_above",
                f"must be greater than block_below ({unblock:g} <= "
                f"{block:g}): the driver would never stay unblocked",
            )
        return Mitigation(
            kind, block_below=block, unblock_above=unblock, sleep_ns=m.duration("sleep", 1_000_000)
        )
    if kind == "strict":
        if own_gap and not m.has("min_interarrival"):
            return Mitigation(kind)
        return Mitigation(kind, min_interarrival_ns=m.duration("min_interarrival"))
    if kind == "bursty":
        timer = m.choice("timer", BURSTY_TIMERS) if m.has("timer") else None
        if own_burst and not m.has("burst"):
            return Mitigation(kind, period_ns=m.duration("period"), timer=timer)
        return Mitigation(
            kind,
            burst=m.integer("burst", lo=1, hi=2**31 - 1),
            period_ns=m.duration("period"),
            timer=timer,
        )
    if kind == "countdown":
        return Mitigation(kind, window_ns=m.duration("window"))
    if kind == "budget":
        return Mitigation(kind, charge_isr=m.boolean("charge_isr") if m.has("charge_isr") else None)
    if kind == "polling":
        return Mitigation(kind, period_ns=m.duration("period"))
    return Mitigation(kind)


def _check_bound(flows: list[Flow], origin: str) -> None:
    """With ``[rx]``: one socket per (protocol, port), within libshield's flow table."""
    seen: dict[tuple[str, int], str] = {}
    for i, f in enumerate(flows):
        if not f.bind:
            continue
        key = (f.protocol, f.dst_port)
        if key in seen:
            raise UsageError(
                f"{origin}: [flows #{i + 1}] bind: {f.protocol}/{f.dst_port} is already bound "
                f"by flow {seen[key]!r} (one socket per protocol and port; set bind = false "
                "on all but one)"
            )
        seen[key] = f.name
    room = native_limits()["flow_max"] - 4
    if len(seen) > room:
        raise UsageError(
            f"{origin}: [[flows]] bind: {len(seen)} bound flows; libshield's flow table "
            f"holds {room} (RTS_FLOW_MAX minus the 4 special flows)"
        )


def _check_captures(flows: list[Flow], origin: str) -> None:
    """All pcap flows together within the simulator's trace limits."""
    caps = [f for f in flows if f.pcap is not None]
    if len(caps) < 2:
        return  # one capture was checked against the limits when it was read
    from . import pcap as _pcap  # here: dpkt's import is a tenth of a second
    max_frames, max_bytes, _ = _pcap.trace_limits()
    frames = n_bytes = 0
    for f in caps:
        rp = _pcap.replay(_pcap.read_pcap(f.pcap), scale=f.scale, skip_ns=f.skip_ns, loop=f.loop)
        frames += len(rp.times_ns)
        n_bytes += len(rp.data)
    if frames > max_frames or n_bytes > max_bytes:
        raise UsageError(
            f"{origin}: [[flows]]: the captures hold {frames} frames and {n_bytes} bytes "
            f"together; the simulator takes at most {max_frames} frames and "
            f"{max_bytes >> 20} MiB of frames in one scenario"
        )


def _base_dir(origin: str) -> Path:
    """Folder that relative paths in the scenario ``origin`` start from: the
    file's own folder, or the working directory for a scenario given as text."""
    p = Path(origin)
    return p.resolve().parent if p.is_file() else Path.cwd()


def _pcap_flow(t: _Table, base: Path) -> dict[str, Any]:
    """A ``pcap`` flow's replay keys; the capture is read (and checked) now."""
    from . import pcap as _pcap

    for key in _PCAP_FRAME_KEYS:
        if t.has(key):
            raise t.err(key, "a pcap flow's frames are the capture's own (drop this key)")
    name = t.string("file")
    if not name:
        raise t.err("file", "expected the path of a pcap file")
    if "\0" in name:
        raise t.err("file", "not a usable file name (it contains a NUL character)")
    path = (base / name).resolve()
    scale, origin = t.get("scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale):
        raise t.err("scale", f"expected a number such as 2.0, got {scale!r}", origin)
    if not 0 < scale <= MAX_PCAP_SCALE:
        raise t.err("scale", f"must lie in (0, {MAX_PCAP_SCALE:g}], got {scale!r}", origin)
    kw: dict[str, Any] = {
        "pcap": str(path),
        "scale": float(scale),
        "loop": t.boolean("loop", False),
        "skip_ns": t.duration("skip", 0, positive=False),
    }
    try:
        cap = _pcap.read_pcap(path)
        rp = _pcap.replay(cap, scale=kw["scale"], skip_ns=kw["skip_ns"], loop=kw["loop"])
    except UsageError as e:
        raise t.err("file", str(e)) from None
    kw["rate_pps"] = rp.mean_pps
    return kw


def _flow(
    t: _Table,
    duration_ns: int,
    sources: tuple[IrqSource, ...] = (),
    rx: Rx | None = None,
    nic: Nic | None = None,
    plat: Platform | None = None,
    *,
    base: Path | None = None,
) -> Flow:
    pattern = t.choice("pattern", tuple(PATTERNS))
    allowed = _FLOW_COMMON + PATTERNS[pattern]
    for key in t.layers[0][1]:
        if key in allowed:
            continue
        if key in _ALL_PATTERN_KEYS:
            owners = [p for p, ks in PATTERNS.items() if key in ks]
            raise t.err(
                key,
                f"belongs to pattern {' / '.join(owners)}, not {pattern!r} "
                f"(which takes: {', '.join(PATTERNS[pattern])})",
            )
        raise t.err(key, "unknown key (allowed: " + ", ".join(allowed) + ")")
    name = check_name(t, "name", "flow")
    begin = t.duration("begin", 0, positive=False)
    if begin >= duration_ns:
        raise t.err("begin", "is at or after the end of the scenario")
    kw: dict[str, Any] = {}
    src_names = [s.name for s in sources]
    if t.has("source"):
        src = t.string("source")
        if not sources:
            raise t.err(
                "source",
                "needs [[sources]] (there are none: every flow arrives on the one RX line)",
            )
        if src not in src_names:
            raise t.err("source", f"no source named {src!r} (sources: {', '.join(src_names)})")
        kw["source"] = src
    elif len(sources) > 1:
        raise t.err(
            "source",
            f"missing: with several [[sources]] every flow names its own "
            f"(sources: {', '.join(src_names)})",
        )
    elif sources:
        kw["source"] = src_names[0]
    if pattern in ("constant", "poisson"):
        kw["rate_pps"] = t.rate("rate")
    elif pattern == "pcap":
        kw.update(_pcap_flow(t, base if base is not None else Path.cwd()))
    elif pattern == "pyramid":
        kw["start_pps"] = t.rate("start")
        kw["peak_pps"] = t.rate("peak")
        kw["step_pps"] = t.rate("step", arrivals=False)
        kw["step_every_ns"] = t.duration("step_every")
        if kw["peak_pps"] < kw["start_pps"]:
            raise t.err("peak", "must not be below start")
        if kw["step_pps"] <= 0:
            raise t.err("step", "must be above 0pps")
    else:
        rates, _ = t.get("rates")
        if not isinstance(rates, list) or not rates:
            raise t.err("rates", 'expected a non-empty list of rates such as ["1000pps", "5kHz"]')
        if len(rates) > MAX_RATES:
            raise t.err("rates", f"at most {MAX_RATES} rates, got {len(rates)}")
        kw["rates_pps"] = tuple(t.rate("rates", value=r) for r in rates)
        kw["step_every_ns"] = t.duration("step_every")
    kw.update(_flow_frame(t, rx, nic, plat))
    return Flow(name=name, pattern=pattern, begin_ns=begin, **kw)


def _flow_frame(t: _Table, rx: Rx | None, nic: Nic | None, plat: Platform | None) -> dict[str, Any]:
    """What a flow's frames are and how the receive path treats them."""
    clock = plat.clock_hz if plat is not None else None
    protocol = t.choice("protocol", PROTOCOLS, "tcp")
    kw: dict[str, Any] = {
        "protocol": protocol,
        "dst_port": t.integer("dst_port", 0, lo=0, hi=65535),
        "src_port": t.integer("src_port", 40000, lo=0, hi=65535),
        "size": t.integer("size", 60, lo=14, hi=65535),
    }
    src = t.string("src", DEFAULT_SRC)
    try:
        addr = ipaddress.IPv4Address(src)
    except ValueError:
        raise t.err("src", f'expected an IPv4 address such as "192.0.2.100", got {src!r}') from None
    if int(addr) == 0:
        raise t.err("src", "0.0.0.0 is not a source address")
    kw["src"] = str(addr)
    if t.has("vlan_pcp"):
        kw["vlan_pcp"] = t.integer("vlan_pcp", lo=0, hi=7)
    socketed = protocol in ("tcp", "udp")
    bind = t.boolean("bind", socketed)
    if bind and not socketed:
        raise t.err("bind", f"only TCP and UDP flows have sockets (protocol is {protocol!r})")
    kw["bind"] = bind
    if rx is None:
        for key in _FLOW_RX_ONLY:
            if t.has(key):
                raise t.err(key, "only applies with the receive path ([rx])")
        kw["priority"] = t.integer("priority", 0, lo=0, hi=255)
    else:
        lim = native_limits()
        kw["priority"] = t.integer("priority", 0, lo=0, hi=lim["prio_levels"] - 1)
        if bind and kw["dst_port"] == 0:
            raise t.err("dst_port", "a bound socket needs a port 1-65535 (or set bind = false)")
        if t.has("capacity"):
            kw["capacity"] = t.integer("capacity", lo=0, hi=2**32 - 1)
            if kw["capacity"] > 0:
                if not t.has("server_period"):
                    raise t.err("server_period", "missing (capacity > 0 needs the server's period)")
                kw["server_period_ns"] = t.duration("server_period", clock_hz=clock)
        if t.has("server_period") and "server_period_ns" not in kw:
            raise t.err("server_period", "only applies with a capacity > 0 (the flow's server)")
        if t.has("queue"):
            kw["queue"] = t.integer("queue", lo=1, hi=rx.buffers)
        for key in ("capacity", "server_period", "queue"):
            if t.has(key) and not bind:
                raise t.err(key, "applies to a bound flow's queue (this flow has bind = false)")
    if t.has("nic_queue"):
        qname = t.string("nic_queue")
        if nic is None or nic.kind != "multiqueue":
            kind = nic.kind if nic is not None else "edge"
            raise t.err("nic_queue", f'needs [nic] kind = "multiqueue" (kind is {kind!r})')
        qnames = [q.name for q in nic.queues]
        if qname not in qnames:
            raise t.err(
                "nic_queue",
                f"no [[nic.queues]] entry named {qname!r} (queues: {', '.join(qnames)})",
            )
        kw["nic_queue"] = qname
    if rx is not None or (nic is not None and nic.kind == "multiqueue"):
        lo = frame_min(protocol, "vlan_pcp" in kw)
        hi = native_limits()["frame_max"]
        if not lo <= kw["size"] <= hi:
            tag = " with its 802.1Q tag" if "vlan_pcp" in kw else ""
            raise t.err(
                "size",
                f"a {protocol} frame{tag} is {lo}-{hi} bytes (its headers up to an "
                f"Ethernet frame), got {kw['size']}",
            )
    return kw


def _task(t: _Table, plat: Platform, flow_names: list[str]) -> Task:
    kind = t.choice("kind", TASK_KINDS)
    keys = {
        "background": ("name", "kind", "priority", "core"),
        "periodic": ("name", "kind", "priority", "core", "period", "work", "masks_rx"),
        "worker": ("name", "kind", "priority", "core", "flow", "work", "queue"),
    }[kind]
    t.check_keys(keys, hint=f"kind {kind!r} takes: " + ", ".join(keys))
    name = check_name(t, "name", "task")
    core = t.integer("core", 0, lo=0)
    if core >= plat.cores:
        raise t.err("core", f"platform {plat.name} has {plat.cores} core(s), numbered from 0")
    if kind == "background":
        return Task(name, kind, t.integer("priority", 0, lo=0, hi=255), core)
    prio = t.integer("priority", lo=0, hi=255)
    if kind == "periodic":
        return Task(
            name,
            kind,
            prio,
            core,
            period_ns=t.duration("period"),
            work_ns=t.duration("work"),
            masks_rx=t.boolean("masks_rx", False),
        )
    flow = t.string("flow")
    if flow not in flow_names:
        raise t.err("flow", f"no flow named {flow!r} (flows: {', '.join(flow_names) or 'none'})")
    return Task(
        name,
        kind,
        prio,
        core,
        work_ns=t.duration("work"),
        flow=flow,
        queue=t.integer("queue", 16, lo=1, hi=1_000_000),
    )
