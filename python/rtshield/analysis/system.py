"""SYSTEM.toml: the schema of an analysed system and its loader.

A system file describes one core: its platform (a cost table), plain tasks,
interrupt sources with their protection, deferrable servers, the receive
path's global limit, shared timers and the NIC moderation parameters. Every
duration carries a unit (``"79cyc"`` uses the platform clock). One parameter
may be written ``"?"``: ``rtshield design`` then searches its safe boundary.

Bad input raises :class:`~rtshield.errors.UsageError` with a one-line message
that names the key (``source.radio.burst: ...``). The format is described in
docs/analysis.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rtshield.errors import UsageError
from rtshield.tomlfile import read_toml
from rtshield.units import duration_ns, rate_hz

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

OPEN = "?"

#: Priorities are 0 (lowest) to 255, as in scenario files (docs/analysis.md).
MAX_PRIORITY = 255
#: Names of tasks, sources, timers, servers and NIC queues: identifiers, as in
#: scenario files (docs/scenarios.md, "Names"); the analysis adds ``.isr``,
#: ``.timer``… to them, so no dots.
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def _check_name(n: object, where: str) -> str:
    if not isinstance(n, str) or not n:
        raise UsageError(f"{where}.name: missing (every entry needs a name)")
    if not _NAME_RE.fullmatch(n):
        shown = n if len(n) <= 40 else n[:40] + "…"
        raise UsageError(
            f"{where}.name: {shown!r} is not a valid name: 1-64 letters, digits, '_' or '-', "
            "starting with a letter or '_'"
        )
    return n


class ModelInfeasible(UsageError):
    """A parameter value makes a model impossible (e.g. a burst longer than its period)."""


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


# ---------------------------------------------------------------- helpers


class _Reader:
    """Reads one table, remembers its keys, rejects unknown ones."""

    def __init__(self, table: object, where: str, clock_hz: float | None, costs: dict[str, int]):
        if not isinstance(table, dict):
            raise UsageError(f"{where}: expected a table")
        self.t = table
        self.where = where
        self.clock = clock_hz
        self.costs = costs
        self.used: set[str] = set()
        self.opened: list[str] = []

    def key(self, k: str) -> str:
        return f"{self.where}.{k}"

    def has(self, k: str) -> bool:
        return k in self.t

    def is_open(self, k: str) -> bool:
        return self.t.get(k) == OPEN

    def raw(self, k: str, default=None):
        self.used.add(k)
        return self.t.get(k, default)

    def not_open(self, k: str, v: object) -> None:
        """A ``"?"`` where ``rtshield design`` cannot search is named as such."""
        if v == OPEN:
            raise UsageError(
                f'{self.key(k)}: cannot be left open ("?"); rtshield design searches a strict '
                "limiter's min_interarrival or max_rate, a bursty limiter's burst or "
                "burst_period/burst_rate, a server's budget, a burst_mitigation capacity, a "
                "queue_mitigation queue, or a shared timer's rate or period"
            )

    def text(self, k: str, default: str | None = None, choices: tuple[str, ...] = ()) -> str:
        v = self.raw(k, default)
        if v is None:
            raise UsageError(f"{self.key(k)}: missing (required)")
        if not isinstance(v, str):
            raise UsageError(f"{self.key(k)}: expected a string, got {v!r}")
        if choices and v not in choices:
            raise UsageError(f"{self.key(k)}: {v!r} is not one of {', '.join(choices)}")
        return v

    def integer(
        self,
        k: str,
        default: int | None = None,
        *,
        minimum: int = 0,
        maximum: int = 2**63 - 1,
        allow_open=False,
    ):
        v = self.raw(k, default)
        if allow_open and v == OPEN:
            self.opened.append(k)
            return None
        if v is None:
            raise UsageError(f"{self.key(k)}: missing (required)")
        self.not_open(k, v)
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{self.key(k)}: expected an integer, got {v!r}")
        if v < minimum:
            raise UsageError(f"{self.key(k)}: must be at least {minimum}, got {v}")
        if v > maximum:
            raise UsageError(f"{self.key(k)}: must be at most {maximum}, got {v}")
        return v

    def boolean(self, k: str, default: bool) -> bool:
        v = self.raw(k, default)
        if not isinstance(v, bool):
            raise UsageError(f"{self.key(k)}: expected true or false, got {v!r}")
        return v

    def duration(self, k: str, default: str | None = None, *, positive=False, allow_open=False):
        v = self.raw(k, default)
        if allow_open and v == OPEN:
            self.opened.append(k)
            return None
        if v is None:
            raise UsageError(f"{self.key(k)}: missing (required)")
        self.not_open(k, v)
        if isinstance(v, str) and v in self.costs:  # a named platform cost
            ns = self.costs[v]
        else:
            ns = duration_ns(v, self.key(k), clock_hz=self.clock)
        if positive and ns <= 0:
            raise UsageError(f"{self.key(k)}: must be positive, got {v!r}")
        return ns

    def opt_duration(self, k: str, **kw):
        if k not in self.t:
            return None
        return self.duration(k, **kw)

    def rate(self, k: str, *, allow_open=False) -> float | None:
        v = self.raw(k)
        if allow_open and v == OPEN:
            self.opened.append(k)
            return None
        self.not_open(k, v)
        hz = rate_hz(v, self.key(k))
        if hz <= 0:
            raise UsageError(f"{self.key(k)}: must be positive, got {v!r}")
        return hz

    def period_or_rate(self, pk: str, rk: str, *, required=True, allow_open=False):
        """A period given directly (``pk``) or as a rate (``rk``); returns ns."""
        if self.has(pk) and self.has(rk):
            raise UsageError(f"{self.where}: give either {pk} or {rk}, not both")
        if self.has(pk):
            return self.duration(pk, positive=True, allow_open=allow_open)
        if self.has(rk):
            hz = self.rate(rk, allow_open=allow_open)
            return None if hz is None else round(1e9 / hz)
        if required:
            raise UsageError(f"{self.where}: missing {pk} (or {rk})")
        return None

    def done(self) -> None:
        extra = sorted(set(self.t) - self.used)
        if extra:
            raise UsageError(f"{self.key(extra[0])}: unknown key")


def load_platform(name: str) -> tuple[float | None, dict[str, int], dict]:
    """Read a platform preset; returns (clock_hz, costs in ns, description).

    Presets are shared with the simulator (``rtshield/platforms/NAME.toml``)
    and read with its loader, :func:`rtshield.scenario.load_platform`; the
    analysis keys a preset does not state (``t_int``, ``t_expire``, …) are
    derived from the simulator's charges by :func:`.model.platform_costs`, and
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
    from .model import platform_costs

    out = platform_costs(costs, plat.tick_ns, plat.tick_isr_ns)
    meta = {"name": plat.name, "description": plat.description, "source": plat.source}
    return plat.clock_hz, out, meta


# ---------------------------------------------------------------- loader

_TOP = {"system", "costs", "task", "source", "timer", "server", "global_limit", "nic"}


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
    for k in doc:
        if k not in _TOP:
            raise UsageError(f"{k}: unknown section (expected one of {', '.join(sorted(_TOP))})")
    sysr = _Reader(doc.get("system", {}), "system", None, {})
    name = sysr.text("name", path.stem)
    platform = sysr.raw("platform")
    clock, costs = None, {}
    if platform is not None:
        if not isinstance(platform, str):
            raise UsageError(f"system.platform: expected a name, got {platform!r}")
        clock, costs, _ = load_platform(platform)
    if sysr.has("clock_hz"):
        c = sysr.raw("clock_hz")
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c < math.inf:
            raise UsageError(f"system.clock_hz: expected a positive number, got {c!r}")
        clock = float(c)
    nesting = sysr.boolean("nesting", False)
    tick = sysr.boolean("tick", True)
    tick_priority = sysr.integer("tick_priority", 0, minimum=0, maximum=MAX_PRIORITY)
    sysr.done()

    extra = doc.get("costs", {})
    if not isinstance(extra, dict):
        raise UsageError("costs: expected a table")
    for k, v in extra.items():
        costs[k] = duration_ns(v, f"costs.{k}", clock_hz=clock)

    s = System(
        name=name,
        path=str(path),
        nesting=nesting,
        clock_hz=clock,
        costs=costs,
        platform=platform,
        tick=tick,
        tick_priority=tick_priority,
    )
    opened: list[OpenParam] = []

    def entries(section: str) -> list[dict]:
        v = doc.get(section, [])
        if not isinstance(v, list):
            raise UsageError(f"{section}: expected an array of tables ([[{section}]])")
        return v

    seen: set[str] = set()

    def entry_name(r: _Reader, section: str, idx: int) -> str:
        n = r.raw("name")
        if not isinstance(n, str) or not n:
            raise UsageError(f"{section}[{idx}].name: missing (every {section} needs a name)")
        _check_name(n, f"{section}[{idx}]")
        if n in seen:
            raise UsageError(f"{section}.{n}.name: the name {n!r} is used twice")
        seen.add(n)
        r.where = f"{section}.{n}"
        return n

    for idx, t in enumerate(entries("task")):
        r = _Reader(t, f"task[{idx}]", clock, costs)
        n = entry_name(r, "task", idx)
        level = r.text("level", "thread", ("thread", "isr"))
        C = r.duration("wcet")
        T = r.duration("period", positive=True)
        D = r.opt_duration("deadline", positive=True)
        J = r.opt_duration("jitter") or 0
        B = r.opt_duration("blocking") or 0
        prio = r.integer("priority", minimum=0, maximum=MAX_PRIORITY)
        r.done()
        s.tasks.append(Task(n, C, T, D, J, B, prio, level))

    timer_names = set()
    for idx, t in enumerate(entries("timer")):
        r = _Reader(t, f"timer[{idx}]", clock, costs)
        n = entry_name(r, "timer", idx)
        hz = None
        if r.has("rate") and not r.is_open("rate"):
            hz = rate_hz(r.raw("rate"), r.key("rate"))
        period = r.period_or_rate("period", "rate", allow_open=True)
        prio = r.integer("priority", 0, minimum=0, maximum=MAX_PRIORITY)
        r.done()
        opened += [OpenParam("timer", n, k) for k in r.opened]
        s.timers.append(Timer(n, period, prio, hz))
        timer_names.add(n)

    for idx, t in enumerate(entries("source")):
        r = _Reader(t, f"source[{idx}]", clock, costs)
        n = entry_name(r, "source", idx)
        s.sources.append(_read_source(r, n, timer_names))
        r.done()
        opened += [OpenParam("source", n, k) for k in r.opened]

    for idx, t in enumerate(entries("server")):
        r = _Reader(t, f"server[{idx}]", clock, costs)
        n = entry_name(r, "server", idx)
        budget = r.duration("budget", allow_open=True)
        period = r.duration("period", positive=True)
        prio = r.integer("priority", minimum=0, maximum=MAX_PRIORITY)
        r.done()
        if budget is not None and budget > period:
            raise UsageError(f"server.{n}.budget: larger than its period")
        opened += [OpenParam("server", n, k) for k in r.opened]
        s.servers.append(Server(n, budget, period, prio))

    if "global_limit" in doc:
        r = _Reader(doc["global_limit"], "global_limit", clock, costs)
        s.global_limit = GlobalLimit(
            capacity=r.integer("capacity", minimum=1, maximum=2**32 - 1),
            period=r.duration("period", positive=True),
            packet_cost=r.duration("packet_cost"),
            priority=r.integer("priority", 0, minimum=0, maximum=MAX_PRIORITY),
            polling_work=r.opt_duration("polling_work") or 0,
            polling_period=r.opt_duration("polling_period", positive=True),
            polling_priority=r.integer("polling_priority", 0, minimum=0, maximum=MAX_PRIORITY),
        )
        r.done()

    if "nic" in doc:
        s.nic = _read_nic(doc["nic"], clock, costs)

    if len(opened) > 1:
        raise UsageError(
            f'{opened[1].label}: only one parameter may be open ("?"); '
            f"{opened[0].label} is open too"
        )
    s.open = opened[0] if opened else None
    for src in s.sources:
        if src.timer is not None and src.timer not in timer_names:
            raise UsageError(f"source.{src.name}.timer: no [[timer]] named {src.timer!r}")
    if not (s.tasks or s.sources or s.servers or s.global_limit or s.nic):
        raise UsageError(f"{path}: the system has no task, source, server or nic")
    return s


def _read_source(r: _Reader, n: str, timer_names: set[str]) -> Source:
    model = r.text("model", choices=SOURCE_MODELS)
    prio = r.integer("priority", 0, minimum=0, maximum=MAX_PRIORITY)
    src = Source(
        name=n,
        model=model,
        priority=prio,
        timer_priority=r.integer("timer_priority", prio, minimum=0, maximum=MAX_PRIORITY),
        work=r.opt_duration("work") or 0,
    )
    if model in ("pure", "polling", "strict", "hardware"):
        required = model != "pure"
        src.min_interarrival = r.period_or_rate(
            "min_interarrival", "max_rate", required=required, allow_open=model == "strict"
        )
    elif model == "bursty":
        src.burst_model = r.text("burst_model", "jitter", ("jitter", "double"))
        if r.has("timer"):
            src.timer = r.text("timer")
            if r.has("burst_period") or r.has("burst_rate"):
                raise UsageError(
                    f"source.{n}.timer: a source on a shared timer takes the timer's period; "
                    "remove burst_period/burst_rate"
                )
            if r.has("burst") and r.has("max_rate"):
                raise UsageError(f"source.{n}: give either burst or max_rate, not both")
            if r.has("max_rate"):
                src.max_rate_hz = r.rate("max_rate")
            else:
                src.burst = r.integer("burst", minimum=1, maximum=2**32 - 1, allow_open=True)
        else:
            src.burst = r.integer("burst", minimum=1, maximum=2**32 - 1, allow_open=True)
            src.burst_period = r.period_or_rate("burst_period", "burst_rate", allow_open=True)
    elif model == "burst_mitigation":
        src.slice = r.duration("slice", positive=True)
        src.capacity = r.integer("capacity", minimum=1, maximum=2**32 - 1, allow_open=True)
        src.clock_resolution = r.opt_duration("clock_resolution")
        src.driver_work = r.opt_duration("driver_work") or 0
        if r.has("driver_priority"):
            src.driver_priority = r.integer("driver_priority", minimum=0, maximum=MAX_PRIORITY)
        elif src.driver_work:
            raise UsageError(f"source.{n}.driver_priority: missing (needed with driver_work)")
    elif model == "queue_mitigation":
        src.queue = r.integer("queue", minimum=1, maximum=2**32 - 1, allow_open=True)
        src.driver_work = r.opt_duration("driver_work") or 0
        src.driver_priority = r.integer("driver_priority", minimum=0, maximum=MAX_PRIORITY)
    else:  # hysteresis / budget: no hard bound; still read the cost
        if r.has("max_rate"):
            src.min_interarrival = r.period_or_rate("min_interarrival", "max_rate")
    return src


def _read_nic(table: object, clock: float | None, costs: dict[str, int]) -> Nic:
    r = _Reader(table, "nic", clock, costs)
    t_net = r.duration("t_netstack", positive=True)
    arp = r.boolean("arp_queue", True)
    mem = r.integer("memory_bytes", minimum=0) if r.has("memory_bytes") else None
    min_slack = r.opt_duration("min_slack")
    irq_cost = r.opt_duration("irq_cost")
    prio = r.integer("priority", 0, minimum=0, maximum=MAX_PRIORITY)
    qs_raw = r.raw("queue", [])
    r.done()
    if not isinstance(qs_raw, list) or not qs_raw:
        raise UsageError("nic.queue: at least one [[nic.queue]] is required")
    queues = []
    names: set[str] = set()
    for idx, q in enumerate(qs_raw):
        qr = _Reader(q, f"nic.queue[{idx}]", clock, costs)
        qn = qr.raw("name")
        if not isinstance(qn, str) or not qn:
            raise UsageError(f"nic.queue[{idx}].name: missing")
        _check_name(qn, f"nic.queue[{idx}]")
        if qn in names:
            raise UsageError(f"nic.queue.{qn}.name: the name {qn!r} is used twice")
        names.add(qn)
        qr.where = f"nic.queue.{qn}"
        queues.append(
            NicQueue(
                name=qn,
                size=qr.integer("size", minimum=1, maximum=2**32 - 1),  # uint32_t n_q
                t_abs=qr.duration("t_abs", positive=True),
                t_pack=qr.duration("t_pack", positive=True),
                max_rate_hz=qr.rate("max_rate") or 0.0,
                max_delay=qr.opt_duration("max_delay") or 0,
                flow_period=qr.opt_duration("flow_period", positive=True),
            )
        )
        qr.done()
    return Nic(t_net, queues, arp, mem, min_slack, irq_cost, prio)
