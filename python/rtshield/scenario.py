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
:func:`parse_scenario`, :func:`load_platform`, :func:`available_platforms`;
the typed scenario's dataclasses (:mod:`rtshield.scenario_types`) and the
files' words (:mod:`rtshield.schema.vocabulary`) are re-exported here.
Loading sits above the engine's configuration (:mod:`rtshield.engine_config`):
a scenario is checked by the simulator before it is returned.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rtshield._native import NativeError, native_limits
from rtshield.engine_config import check_scenario
from rtshield.errors import UsageError
from rtshield.scenario_types import (
    CostTable,
    Critical,
    Detect,
    Driver,
    Flow,
    IrqSource,
    Mitigation,
    Nic,
    NicQueue,
    Platform,
    Rx,
    Scenario,
    Task,
)
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
from rtshield.tomlfile import read_text as _read_text
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
    "parse_preset",
    "load_scenario",
    "loads_scenario",
    "native_limits",
    "parse_overrides",
    "parse_scenario",
    "platforms_dir",
    "reserved_name",
]

def __getattr__(name: str) -> Any:
    """The binding's limits and enum words (``MAX_FLOWS``, ``PROTOCOLS``…), as
    :mod:`rtshield.schema.vocabulary` reads them on first use."""
    if name in vocabulary.FROM_BINDING:
        return getattr(vocabulary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    text, _ = _read_text(path)
    plat, costs, defaults = _preset(name, str(path), text)
    return plat, costs, copy.deepcopy(defaults)


def parse_preset(text: str, origin: str) -> tuple[Platform, CostTable, dict[str, dict[str, Any]]]:
    """A preset that is not among the shipped ones (``origin``: its file, e.g. the
    ``board.toml`` ``rtshield rig fit`` wrote), read from ``text`` and validated as
    :func:`load_platform` validates the shipped ones: its platform, costs (ns) and raw
    ``[defaults]``. Raises :class:`UsageError` (one line naming ``origin``)."""
    data = _parse_toml(text, origin)
    head = data.get("platform")
    name = head.get("name") if isinstance(head, dict) else None
    if not isinstance(name, str):
        raise UsageError(f"{origin}: [platform] name: missing (not a platform preset)")
    plat, costs, defaults = _preset(name, origin, text)
    return plat, costs, copy.deepcopy(defaults)


@functools.lru_cache(maxsize=32)
def _preset(
    name: str, origin: str, text: str
) -> tuple[Platform, CostTable, dict[str, dict[str, Any]]]:
    """The preset ``name`` parsed and validated from ``text`` (the file ``origin``),
    once per text: every scenario names one, and a sweep or a calibration loads
    the same one for each point. Callers copy the mutable defaults."""
    # here: the schema builds its pydantic models and reads the native library
    from pydantic import ValidationError

    from rtshield import schema

    data = _parse_toml(text, origin)
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
        tick_real_ns=p.tick_real or 0,
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
    driver = Driver(
        priority=m.driver.priority,
        queue=m.driver.queue,
        core=dcore,
        input_priority=m.input_priority,
    )
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
    nic = Nic(
        m.nic.kind,
        m.ring,
        m.nic.core if m.nic.core is not None else dcore,
        queues,
        m.nic.interrupt,
    )
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
