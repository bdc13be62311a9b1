"""SYSTEM.toml: the schema of an analysed system and its loader.

A system file describes one core: its platform (a cost table), plain tasks,
interrupt sources with their protection, deferrable servers, the receive
path's global limit, shared timers and the NIC moderation parameters. Every
duration carries a unit (``"79cyc"`` uses the platform clock). One parameter
may be written ``"?"``: ``rtshield design`` then searches its safe boundary.

The schema (keys, types, units, ranges, defaults, the rules between keys)
is the pydantic models of :mod:`rtshield.schema.system`; this module reads
the platform, validates the file with them and builds the :class:`System`
the analysis reads. Bad input raises :class:`~rtshield.errors.UsageError`
with a one-line message that names the key (``source.radio.burst: ...``).
The format is described in docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from rtshield.errors import UsageError
from rtshield.schema import system as model
from rtshield.schema.system import OPEN, SOURCE_MODELS
from rtshield.tomlfile import read_toml

from .costs import platform_costs
from .curves import Curve
from .rta import Task

__all__ = [
    "OPEN",
    "ModelInfeasible",
    "OpenParam",
    "Source",
    "Timer",
    "Server",
    "GlobalLimit",
    "NicQueue",
    "Nic",
    "System",
    "load_system",
    "load_platform",
    "naming_file",
    "SOURCE_MODELS",
]

#: What bounds an interrupt line that has no rate of its own, named when it is unbounded.
PURE_KNOB = (
    "bound it with a rate limit: an asserted max_rate, or a protection "
    "(strict, bursty or hardware scheduler)"
)


class ModelInfeasible(UsageError):
    """A parameter value makes a model impossible (e.g. a burst longer than its period)."""


@dataclass(frozen=True)
class OpenParam:
    """The one parameter left as ``"?"``: section, entry name, key."""

    section: str
    name: str
    key: str

    @property
    def label(self) -> str:
        if self.name:
            return f"{self.section}.{self.name}.{self.key}"
        return f"{self.section}.{self.key}"


@dataclass
class Source:
    name: str
    model: str
    priority: int
    timer_priority: int
    work: int = 0
    min_interarrival: int | None = None  # pure/polling/strict/hardware
    burst: int | None = None  # bursty
    burst_period: int | None = None  # bursty with its own timer
    max_rate_hz: float | None = None  # bursty on a shared timer: rounded to a burst
    timer: str | None = None  # name of a shared [[timer]]
    burst_model: str = "jitter"  # or "double"
    slice: int | None = None  # burst_mitigation
    capacity: int | None = None  # burst_mitigation
    clock_resolution: int | None = None  # burst_mitigation: granularity of the ISR's clock
    queue: int | None = None  # queue_mitigation
    driver_work: int = 0
    driver_priority: int | None = None
    #: the traffic that can reach the line, as an arrival curve (a scenario's flows,
    #: :func:`.curves.line_curve`); None: not stated (a system file), the model's
    #: own rate or minimum interarrival bounds the line
    arrivals: Curve | None = None
    #: what would bound the line, named in the report when it is unbounded
    knob: str = ""
    #: descriptors that can wait on the line while it is off (a DMA ring)
    backlog: int = 1

    def hint(self) -> str:
        """Why the line is unbounded and what would bound it (for the report)."""
        a = self.arrivals
        why = a.reason if a is not None and a.reason else "no rate asserted"
        return f"{why}; {self.knob or PURE_KNOB}"


@dataclass
class Timer:
    name: str
    period: int | None
    priority: int
    rate_hz: float | None = None  # when given as a rate: exact frequency for burst rounding

    def hz(self) -> float | None:
        if self.rate_hz is not None:
            return self.rate_hz
        return None if self.period is None else 1e9 / self.period


@dataclass
class Server:
    name: str
    budget: int | None
    period: int
    priority: int


@dataclass
class GlobalLimit:
    capacity: int
    period: int
    packet_cost: int
    priority: int
    polling_work: int = 0
    polling_period: int | None = None
    polling_priority: int = 0
    arrivals: Curve | None = None  # the frames reaching the NIC (a scenario's flows)
    backlog: int = 0  # frames that can wait in the descriptor ring while the line is off


@dataclass
class NicQueue:
    name: str
    size: int
    t_abs: int
    t_pack: int
    max_rate_hz: float
    max_delay: int = 0  # t_d: the receiving process's allowed added delay
    flow_period: int | None = None  # t_P(f): expected packet period (default 1/max_rate)


@dataclass
class Nic:
    t_netstack: int
    queues: list[NicQueue]
    arp_queue: bool = True
    memory_bytes: int | None = None  # available register memory, if limited
    min_slack: int | None = None  # if not given: from the analysis of the tasks
    irq_cost: int | None = None  # if given, each queue becomes an interrupt task
    priority: int = 0


@dataclass
class System:
    name: str
    path: str
    nesting: bool
    clock_hz: float | None
    costs: dict[str, int]
    platform: str | None = None
    tick: bool = True  # analyse the platform's RTOS tick interrupt, if it has one
    tick_priority: int = 0
    tasks: list[Task] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)
    global_limit: GlobalLimit | None = None
    nic: Nic | None = None
    open: OpenParam | None = None

    def cost(self, key: str, where: str) -> int:
        if key not in self.costs:
            raise UsageError(
                f"{where}: needs platform cost {key!r}, which is not defined "
                "(set [system] platform or add it under [costs])"
            )
        return self.costs[key]


def load_platform(name: str) -> tuple[float | None, dict[str, int], dict]:
    """Read a platform preset; returns (clock_hz, costs in ns, description).

    Presets are shared with the simulator (``rtshield/platforms/NAME.toml``)
    and read with its loader, :func:`rtshield.scenario.load_platform`; the
    analysis keys a preset does not state (``t_int``, ``t_expire``, …) are
    derived from the simulator's charges by :func:`.costs.platform_costs`, and
    the RTOS tick becomes ``tick`` (period) and ``tick_isr`` (the whole
    interrupt, entry and exit included, as the simulator charges it).
    """
    from rtshield.scenario import load_platform as scenario_platform

    try:
        plat, costs, _ = scenario_platform(name)
    except UsageError as e:
        msg = str(e)
        raise UsageError(
            "system." + msg if msg.startswith("platform:") else f"system.platform: {msg}"
        ) from None
    out = platform_costs(costs, plat.tick_ns, plat.tick_isr_ns)
    meta = {"name": plat.name, "description": plat.description, "source": plat.source}
    return plat.clock_hz, out, meta


# ---------------------------------------------------------------- loader


def load_system(path: str | Path) -> System:
    """Parse and validate a SYSTEM.toml file.

    Raises :class:`UsageError` with one line that starts with the path, then
    names the key (``sys.toml: source.radio.burst: ...``).
    """
    path = Path(path)
    doc = read_toml(path)
    with naming_file(path):
        return _load_system(doc, path)


@contextmanager
def naming_file(path: str | Path) -> Iterator[None]:
    """Prefix a :class:`UsageError` raised inside with ``path`` (if it lacks it)."""
    try:
        yield
    except UsageError as e:
        if str(e).startswith(f"{path}:"):
            raise
        raise type(e)(f"{path}: {e}") from None


def _load_system(doc: dict, path: Path) -> System:
    if "scenario" in doc and "system" not in doc:
        raise UsageError(
            "[scenario]: this is a scenario file for 'rtshield run', not a system "
            "description (see docs/analysis.md; --scenario analyses the device it describes)"
        )
    head = doc.get("system", {})
    head = head if isinstance(head, dict) else {}
    platform = head.get("platform")
    clock, costs = None, {}
    if isinstance(platform, str):
        clock, costs, _ = load_platform(platform)
    c = head.get("clock_hz")
    if isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0:
        clock = float(c)
    context = {"clock_hz": clock, "costs": dict(costs)}
    try:
        m = model.SystemFile.model_validate(doc, context=context)
    except ValidationError as e:
        raise model.usage_error(e, doc) from None
    sy = m.system
    s = System(
        name=sy.name if sy.name is not None else path.stem,
        path=str(path),
        nesting=sy.nesting,
        clock_hz=float(sy.clock_hz) if sy.clock_hz is not None else clock,
        costs=context["costs"],
        platform=sy.platform,
        tick=sy.tick,
        tick_priority=sy.tick_priority,
    )
    for t in m.task:
        s.tasks.append(
            Task(t.name, t.wcet, t.period, t.deadline, t.jitter, t.blocking, t.priority, t.level)
        )
    for t in m.timer:
        hz = t.rate if t.rate is not None and t.rate != OPEN else None
        s.timers.append(Timer(t.name, _period(t.period, t.rate), t.priority, hz))
    for src in m.source:
        s.sources.append(_source(src))
    for v in m.server:
        s.servers.append(Server(v.name, _closed(v.budget), v.period, v.priority))
    if m.global_limit is not None:  # [global_limit]'s keys are GlobalLimit's fields
        s.global_limit = GlobalLimit(**dict(m.global_limit))
    if m.nic is not None:
        n = m.nic
        queues = [
            NicQueue(q.name, q.size, q.t_abs, q.t_pack, q.max_rate, q.max_delay, q.flow_period)
            for q in n.queue
        ]
        s.nic = Nic(
            n.t_netstack, queues, n.arp_queue, n.memory_bytes, n.min_slack, n.irq_cost, n.priority
        )
    opened = [
        OpenParam(section, e.name, k)
        for section in ("timer", "source", "server")
        for e in getattr(m, section)
        for k in type(e).model_fields
        if getattr(e, k) == OPEN
    ]
    if len(opened) > 1:
        raise UsageError(
            f'{opened[1].label}: only one parameter may be open ("?"); '
            f"{opened[0].label} is open too"
        )
    s.open = opened[0] if opened else None
    return s


def _closed(v):
    """A value, or None for the open one (``"?"``)."""
    return None if v == OPEN else v


def _period(period, rate) -> int | None:
    """A period given directly or as a rate, in ns (None: open or not given)."""
    if period is not None:
        return _closed(period)
    if rate is None or rate == OPEN:
        return None
    return round(1e9 / rate)


def _source(e: model.SourceEntry) -> Source:
    src = Source(
        name=e.name,
        model=e.model,
        priority=e.priority,
        timer_priority=e.timer_priority if e.timer_priority is not None else e.priority,
        work=e.work,
    )
    if e.model in ("pure", "polling", "strict", "hardware"):
        src.min_interarrival = _period(e.min_interarrival, e.max_rate)
    elif e.model == "bursty":
        src.burst_model = e.burst_model
        src.burst = _closed(e.burst)
        if e.timer is not None:
            src.timer = e.timer
            src.max_rate_hz = e.max_rate
        else:
            src.burst_period = _period(e.burst_period, e.burst_rate)
    elif e.model == "burst_mitigation":
        src.slice = e.slice
        src.capacity = _closed(e.capacity)
        src.clock_resolution = e.clock_resolution
        src.driver_work = e.driver_work
        src.driver_priority = e.driver_priority
    elif e.model == "queue_mitigation":
        src.queue = _closed(e.queue)
        src.driver_work = e.driver_work
        src.driver_priority = e.driver_priority
    elif e.max_rate is not None:  # hysteresis / budget: no hard bound; still read the cost
        src.min_interarrival = _period(None, e.max_rate)
    return src
