"""The device: one scenario file in its two variants, and the target's config for each.

The device is described by a scenario file, the simulator's vocabulary
(``rig/freertos/device.toml``); :func:`load_device` derives the unprotected
variant and :func:`target_config` is the one mapping from a scenario to the
target's config file. The flows the rig drives from the attacker's namespace
are read from the same scenario: UDP flows (:func:`udp_flows`), MODBUS/TCP
polls (:func:`modbus_flows`) and replayed captures (:func:`pcap_flows`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError
from rtshield.rig.network import DEVICE_ADDR, LISTEN_PORT, PREFIX_LEN

__all__ = [
    "VARIANTS",
    "Device",
    "flood_at",
    "is_modbus",
    "load_device",
    "modbus_flows",
    "pcap_flows",
    "target_config",
    "udp_flows",
]

VARIANTS = ("unprotected", "protected")


@dataclass
class Device:
    """One scenario in its two variants, as the simulator and the target read it."""

    path: Path
    data: dict[str, Any]
    variants: dict[str, Any]  # "protected"/"unprotected" -> rtshield.scenario.Scenario
    phase_s: float
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # the variants' TOML data

    def at_flood_rate(self, pps: float) -> Device:
        """The same device with its flood (the TCP flows' non-zero steps) at ``pps``."""
        from rtshield.scenario import parse_scenario

        variants, tables = {}, {}
        for v, t in self.tables.items():
            t = flood_at(t, pps)
            variants[v] = parse_scenario(t, origin=f"{self.path} (flood at {pps:.0f} pkt/s)")
            tables[v] = t
        return Device(self.path, self.data, variants, self.phase_s, tables)


def load_device(path: str | Path, stock_priority: int, phase_s: float | None = None) -> Device:
    """Read a device scenario; derive the unprotected variant (no ``[rx]``, the network
    task at ``stock_priority``); with ``phase_s``, set the flood's step and the duration."""
    from rtshield.scenario import parse_scenario
    from rtshield.tomlfile import read_toml

    p = Path(path)
    data = read_toml(p)  # the checks every scenario file gets: kind, size, nesting, syntax
    if "rx" not in data:
        raise UsageError(
            f"rig freertos-tcp: {p}: the device needs an [rx] table (the protected variant; "
            "the rig derives the unprotected one)"
        )
    data = copy.deepcopy(data)
    for f in data.get("flows", []):  # a capture's path is relative to the scenario file
        if f.get("pattern") == "pcap" and isinstance(f.get("file"), str):
            f["file"] = str((p.parent / f["file"]).resolve())
    floods = [f for f in data.get("flows", []) if f.get("protocol") == "tcp"]
    if phase_s is None:
        phase_s = 3.0
        for f in floods:
            if f.get("pattern") == "steps" and "step_every" in f:
                from rtshield.units import duration_ns

                phase_s = duration_ns(f["step_every"], "flows.step_every") / 1e9
        if not 1 <= phase_s <= 120:
            raise UsageError(
                f"rig freertos-tcp: {p}: the flood's step_every ({phase_s:g} s) is the rig's "
                "phase and must be 1-120 s (or give --phase-seconds)"
            )
    data.setdefault("scenario", {})["duration"] = f"{3 * phase_s:g}s"
    for f in floods:
        if f.get("pattern") == "steps":
            f["step_every"] = f"{phase_s:g}s"
    unprot = copy.deepcopy(data)
    del unprot["rx"]
    unprot.setdefault("driver", {})["priority"] = stock_priority
    for f in unprot.get("flows", []):
        for k in ("capacity", "server_period", "queue"):
            f.pop(k, None)
    unprot["scenario"]["name"] = data["scenario"].get("name", "device") + "_unprotected"
    variants = {
        "protected": parse_scenario(data, origin=str(p)),
        "unprotected": parse_scenario(unprot, origin=f"{p} (unprotected)"),
    }
    return Device(p, data, variants, phase_s, {"protected": data, "unprotected": unprot})


def flood_at(table: dict[str, Any], pps: float) -> dict[str, Any]:
    """A copy of a scenario's TOML table with its flood (the TCP flows' non-zero steps)
    at ``pps``."""
    t = copy.deepcopy(table)
    for f in t.get("flows", []):
        if f.get("protocol") == "tcp" and f.get("pattern") == "steps":
            f["rates"] = [r if _zero(r) else f"{pps:.0f}pps" for r in f["rates"]]
    return t


def _zero(rate: Any) -> bool:
    from rtshield.units import rate_hz

    return rate_hz(rate, "flows.rates") == 0


def _us(ns: int | None) -> int:
    return 0 if ns is None else int(round(ns / 1000))


def target_config(
    scn: Any,
    protect: bool,
    *,
    ifname: str,
    mac: str,
    out: Path,
    seconds: int,
    rx_cpu: int | None = None,
) -> str:
    """The target's config file for scenario ``scn`` (one of :class:`Device`'s variants)."""
    c = scn.critical
    if c.period_ns % 1_000_000:
        raise UsageError(
            f"rig freertos-tcp: critical.period {c.period_ns / 1e6:g} ms is not a whole number "
            "of the target's 1 ms ticks"
        )
    lines = [
        f"# {scn.name}: {'protected' if protect else 'unprotected'} (written by rtshield rig)",
        f"ifname {ifname}",
        f"mac {mac}",
        f"ip {DEVICE_ADDR}",
        "netmask "
        + ".".join(str((0xFFFFFFFF << (32 - PREFIX_LEN) >> s) & 255) for s in (24, 16, 8, 0)),
        f"protect {int(protect)}",
        f"seconds {seconds}",
        f"out {out}",
        f"crit_period_us {_us(c.period_ns)}",
        f"crit_work_us {_us(c.work_ns)}",
        f"crit_prio {c.priority}",
        f"net_prio {scn.driver.priority}",
    ]
    if rx_cpu is not None:
        lines.append(f"rx_cpu {rx_cpu}")
    rx = scn.rx
    if protect and rx is not None:
        lines.append(f"short_circuit {int(rx.short_circuit)}")
        if rx.recycle_below is not None:
            lines.append(f"recycle_below {rx.recycle_below}")
        if rx.global_capacity:
            lines += [
                f"global_capacity {rx.global_capacity}",
                f"global_period_us {_us(rx.global_period_ns)}",
            ]
        if rx.poll_priority is not None:
            lines.append(f"poll_prio {rx.poll_priority}")
    workers = {t.flow: t for t in scn.tasks if t.kind == "worker"}
    for f in scn.flows:
        if f.protocol not in ("udp", "tcp") or not f.bind:
            continue
        modbus = is_modbus(f)
        pcap = f.pattern == "pcap"  # replayed by the rig; its socket a listener or a UDP worker
        if f.protocol == "tcp" and not modbus and not pcap and f.dst_port != LISTEN_PORT:
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: a stepped TCP flow is the listener the attacks "
                f"hit; its dst_port must be {LISTEN_PORT}"
            )
        if modbus and f.dst_port == LISTEN_PORT:
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: a MODBUS/TCP flow (TCP at a constant rate) "
                f"needs a port other than the attacks' listener {LISTEN_PORT} (e.g. 5020)"
            )
        if modbus and f.pattern != "constant":
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: the rig polls MODBUS/TCP flows at a constant "
                f'rate (pattern = "constant"), not {f.pattern!r}'
            )
        if f.protocol == "udp" and f.pattern not in ("constant", "pcap"):
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: the rig sends UDP flows at a constant rate "
                f'(pattern = "constant"), not {f.pattern!r}'
            )
        w = workers.get(f.name)
        values = [
            f.name,
            "modbus" if modbus else f.protocol,
            f.dst_port,
            f.priority,
            f.capacity or 0,
            _us(f.server_period_ns),
            f.queue or 0,
            w.priority if w else max(1, f.priority),
            _us(w.work_ns) if w else 0,
        ]
        lines.append("flow " + " ".join(str(v) for v in values))
    return "\n".join(lines) + "\n"


def is_modbus(f: Any) -> bool:
    """A bound TCP flow that is not stepped (the flood's picture) is a MODBUS/TCP flow."""
    return f.protocol == "tcp" and f.bind and f.pattern not in ("steps", "pcap")


def modbus_flows(scn: Any) -> list[dict[str, Any]]:
    """What the rig's MODBUS poll clients poll: every MODBUS flow at its constant rate."""
    return [
        {"name": f.name, "port": f.dst_port, "rate": float(f.rate_pps or 0)}
        for f in scn.flows
        if is_modbus(f) and (f.rate_pps or 0) > 0
    ]


def udp_flows(scn: Any) -> list[dict[str, Any]]:
    """What the rig's sender sends: every bound UDP flow at its constant rate."""
    return [
        {"name": f.name, "port": f.dst_port, "rate": float(f.rate_pps or 0), "size": f.size}
        for f in scn.flows
        if f.protocol == "udp" and f.bind and f.pattern == "constant" and (f.rate_pps or 0) > 0
    ]


def pcap_flows(scn: Any) -> list[Any]:
    """The flows the rig replays from their captures (``pattern = "pcap"``)."""
    return [f for f in scn.flows if f.pattern == "pcap"]
