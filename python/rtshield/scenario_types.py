"""The typed scenario: frozen dataclasses the engine, the outputs and the analysis read.

:func:`rtshield.scenario.load_scenario` builds a :class:`Scenario` from a
validated file; nothing here reads files or validates. All times are
integer nanoseconds (fields ending in ``_ns``), all rates packets per second
(fields ending in ``_pps``); costs are merged from the platform preset. The
classes are re-exported by :mod:`rtshield.scenario`, their public import path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from rtshield import units
from rtshield.schema.vocabulary import DEFAULT_SRC, MITIGATION_KINDS

__all__ = [
    "CostTable",
    "Critical",
    "Detect",
    "Driver",
    "Flow",
    "IrqSource",
    "Mitigation",
    "Nic",
    "NicQueue",
    "Platform",
    "Rx",
    "Scenario",
    "Task",
]

#: Change points :meth:`Flow.schedule` builds at most (far above what the engine
#: takes, so the engine's limit still reports the pattern; bounds memory and time).
MAX_SCHEDULE_POINTS = 10_000


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
    #: the tick interrupt's real period (0: ``tick_ns``); what the RTOS counts in ticks
    #: stretches by ``tick_real_ns / tick_ns`` (:func:`rtshield.engine_config.on_ticks`)
    tick_real_ns: int = 0


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
    #: the stock driver's input task's priority (no ``[rx]``), or None: no input task
    input_priority: int | None = None


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
    interrupt: str = "frame"  #: ``dma_ring``: the RX interrupt with each ``frame`` or the ``tick``


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
