"""The whole scenario file: its sections and the rules that tie them together
(costs against the preset, the NIC and the receive path, sources and the
mitigation, flows, their captures and sockets, tasks) — the model
:func:`rtshield.scenario.parse_scenario` validates a file with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    Field,
    ValidationInfo,
    model_validator,
)

from rtshield import _native
from rtshield.errors import UsageError
from rtshield.schema.base import (
    DURATION_SCHEMA,
    FileModel,
    context_of,
    fail,
    unique_names,
)
from rtshield.schema.fields import (
    Span,
    at_most,
    limits,
    require,
    user_wrote,
    within,
)
from rtshield.schema.flows import FlowTable
from rtshield.schema.tables import (
    CriticalTable,
    DetectTable,
    DriverTable,
    MitigationTable,
    NicTable,
    RxTable,
    ScenarioTable,
    SourceTable,
    TaskTable,
)
from rtshield.schema.vocabulary import (
    FLOW_RX_ONLY,
    MULTI_SOURCE_KINDS,
    PATH_QUANTILE_COSTS,
    RX_COST_KEYS,
)


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

    def _no_input_task(self) -> str | None:
        """Why this device can have no stock input task (``[driver] input_priority``), or
        None: the engine's rule (sim/src/config.c), said for the scenario's keys."""
        if self.rx_on:
            return "only without [rx] (libshield's receive path takes the ring itself)"
        if self.nic.kind != "dma_ring":
            return f'needs [nic] kind = "dma_ring" (kind is {self.nic.kind!r})'
        if self.sources:
            return "only without [[sources]] (the input task drains the one ring)"
        if self.mitigation.kind != "none" or self.mitigation.also:
            return "only without [mitigation] (it gates the RX interrupt itself)"
        return None

    @property
    def input_priority(self) -> int | None:
        """The stock input task's priority: the one written, or the preset's default where
        the device can have the task (a board preset's task does not apply to a device with
        ``[rx]``, ``[[sources]]``, a ``[mitigation]`` or another NIC)."""
        return None if self._no_input_task() else self.driver.input_priority

    def _check_nic_rx(self, info: ValidationInfo, costs: Mapping[str, int]) -> None:
        nic, rx = self.nic, self.rx
        if nic.kind == "dma_ring" or self.rx_on:
            if nic.ring is None:
                raise fail("missing", "nic", "ring")
        elif nic.ring is not None and user_wrote(info, "nic", "ring"):
            raise fail(
                f'only applies to kind = "dma_ring" or with [rx] (kind is {nic.kind!r}, no [rx])',
                "nic",
                "ring",
            )
        why = self._no_input_task()
        if why and self.driver.input_priority is not None and user_wrote(
            info, "driver", "input_priority"
        ):
            raise fail(why, "driver", "input_priority")
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
        require(rx, ("buffers",), "rx")
        within(rx.buffers, 2, lim["pool_max"], "rx", "buffers")
        ring = nic.ring or 0
        if ring > rx.buffers:
            raise fail(
                f"a pool of {rx.buffers} buffers cannot fill [nic] ring = {ring} (the buffers "
                "posted to the NIC come from the pool)",
                "rx",
                "buffers",
            )
        if rx.recycle_below is not None:
            within(rx.recycle_below, 0, ring, "rx", "recycle_below")
        # Checked even when the limit is off (capacity 0), which they do not then
        # affect: a sweep over global_capacity = 0, 3, ... keeps one file valid.
        if rx.global_capacity > 0:
            require(rx, ("global_period", "poll_priority"), "rx")
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
        at_most(srcs, "sources", "sources (RX interrupt lines of the simulated NIC)", "sources")
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
        at_most(self.flows, "flows", "flows", "flows")
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

        # made absolute, not resolved: the input door names a link's own fault
        path = Path(os.path.abspath(Path(ctx.get("base") or Path.cwd()) / str(f.file)))
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
            within(f.priority, 0, limits()["prio_levels"] - 1, "flows", i, "priority")
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
                within(f.queue, 1, rx.buffers or 0, "flows", i, "queue")
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
            _, lib = _native.load()
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
