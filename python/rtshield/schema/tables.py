"""The tables of a scenario file, one pydantic model each: ``[scenario]``,
``[critical]``, ``[driver]``, ``[nic]`` and ``[[nic.queues]]``, ``[rx]``,
``[detect]``, ``[mitigation]``, ``[[sources]]`` and ``[[tasks]]`` (``[[flows]]``
has :mod:`rtshield.schema.flows`). Each says the keys it takes, their types,
units, ranges, defaults and documentation, and the rules among its own keys;
the rules across tables are the whole file's (:mod:`rtshield.schema.scenario_file`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    ValidationInfo,
    model_validator,
)

from rtshield import units
from rtshield.schema.base import (
    fail,
    key,
    unique_names,
)
from rtshield.schema.fields import (
    BURSTY_TIMERS,
    NIC_KINDS,
    SIM_MITIGATIONS,
    U32,
    Duration,
    Fraction,
    Int,
    Name,
    Priority,
    Span,
    Table,
    at_most,
    check_core,
    choice_first,
    require,
    user_wrote,
)
from rtshield.schema.vocabulary import (
    ALSO_KINDS,
    MAX_BINS,
    MITIGATION_KINDS,
    TASK_KEYS,
    TASK_KINDS,
    WORKER_MAILBOX_DEFAULT,
)


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
        if b > dur and not user_wrote(info, "scenario", "bin"):
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
        check_core(self.core, info)
        return self


class DriverTable(Table):
    """``[driver]``: the network driver task and its RX queue."""

    priority: Priority = key(
        doc="scheduler priority; equal to the critical task's → round robin on the tick"
    )
    queue: Int(1, 1_000_000) = key(doc="RX queue capacity in packets (the queue the ISR fills)")
    core: Int(0, 2**31 - 1) | None = key(None, doc="core it runs on", shown="the critical task's")
    input_priority: Priority | None = key(
        None,
        doc="`dma_ring` only, without `[rx]`, `[[sources]]` or `[mitigation]` (a board "
        "preset's default applies only to such a device): the stock driver's input task at "
        "this priority "
        "(its deferred work: woken by the RX interrupt, it moves the ring's frames into the "
        "RX queue one by one, `isr_per_packet` each, until the ring is empty; the driver task "
        "processes the queue). Off: the RX interrupt fills the queue itself",
        shown="off",
    )

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> DriverTable:
        if self.core is not None:
            check_core(self.core, info)
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
    interrupt: Literal["frame", "tick"] = key(
        "frame",
        doc="`dma_ring`: when the RX interrupt comes. `frame`: with each frame. `tick`: with "
        "the RTOS tick, for the frames the ring holds then (a board whose one interrupt "
        "context is the tick hook: the FreeRTOS POSIX port)",
        shown='preset, else `"frame"`',
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
            at_most(self.queues, "nic_queues", "queues", "queues")
            unique_names(self.queues, "{name} is used by two queues", "queues")
        elif self.given("queues") and user_wrote(info, "nic", "queues"):
            raise fail(f'[[nic.queues]] need kind = "multiqueue" (kind is {self.kind!r})', "queues")
        if self.core is not None:
            check_core(self.core, info)
        if self.interrupt == "tick" and self.kind != "dma_ring":
            raise fail(f'"tick" needs kind = "dma_ring" (kind is {self.kind!r})', "interrupt")
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
        choice_first(data, "kind", SIM_MITIGATIONS, required=False)
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
    queue: Int(1, 1_000_000) = key(
        WORKER_MAILBOX_DEFAULT, doc="`worker`: mailbox capacity, messages"
    )

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
        choice_first(data, "kind", TASK_KINDS)
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> TaskTable:
        check_core(self.core, info)
        needs = {
            "background": (),
            "periodic": ("priority", "period", "work"),
            "worker": ("priority", "flow", "work"),
        }[self.kind]
        require(self, needs)
        return self
