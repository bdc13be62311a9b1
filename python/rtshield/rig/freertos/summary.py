"""A run's ``summary.json``: the target's records in the simulator's vocabulary.

:func:`summarize` reads what the device program wrote (``device.json``, the
critical task's ``cycles.bin``, latency records) and what the rig's processes
reported, and puts them in the simulator's summary keys, whole run and per
phase.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.rig.attacks import ATTACK_TOOL
from rtshield.rig.modbus_client import account, read_records

from .device import Device, pcap_flows
from .phases import MODBUS_TIMEOUT_S, PHASES

__all__ = ["IP_TASK_NAME", "STACK_EXHAUSTED", "summarize"]

#: Drop reason of an admitted frame that found no FreeRTOS-Plus-TCP network buffer.
STACK_EXHAUSTED = "stack_buffers_exhausted"
#: libshield's rts_shield_drop names that the simulator's summary spells differently.
_SHIELD_TO_SIM = {"limiter": "mitigation"}
#: FreeRTOS-Plus-TCP's name for its IP task (FreeRTOS_IP.c; the POSIX port names threads so).
IP_TASK_NAME = "IP-Task"


def _shield_reasons() -> list[str]:
    from rtshield.engine import enum_names

    names = enum_names("rts_shield_drop", "RTS_SHIELD_DROP_")
    return [_SHIELD_TO_SIM.get(n, n) for n in names]


def _q(a: np.ndarray, q: float) -> float | None:
    return round(float(np.quantile(a, q)), 3) if a.size else None


def _dist_us(a_ns: np.ndarray) -> dict[str, float | None]:
    a = a_ns.astype(np.float64) / 1e3
    return {
        "min": round(float(a.min()), 3) if a.size else None,
        "p50": _q(a, 0.5),
        "p99": _q(a, 0.99),
        "p99_9": _q(a, 0.999),
        "max": round(float(a.max()), 3) if a.size else None,
    }


def _critical(cyc: np.ndarray, period_ns: int, lo: int, hi: int) -> dict[str, Any]:
    """Critical-task statistics of the cycles that ended in [lo, hi)."""
    end = cyc[:, 2].astype(np.int64)
    sel = (end >= lo) & (end < hi)
    c = cyc[sel].astype(np.int64)
    miss = c[:, 3] > 0
    late = np.where(miss, (c[:, 2] - c[:, 3]) * 100.0 / period_ns, 0.0)
    ends = cyc[:, 2].astype(np.int64)
    idx = np.nonzero(sel)[0]
    idx = idx[idx > 0]
    cycle_ns = ends[idx] - ends[idx - 1]
    bins: dict[int, float] = {}
    for t, v in zip(c[:, 2], late, strict=True):
        bins[int(t // 1_000_000_000)] = bins.get(int(t // 1_000_000_000), 0.0) + float(v)
    return {
        "cycles": int(sel.sum()),
        "misses": int(miss.sum()),
        "lateness_max_pct": round(float(late.max()), 3) if late.size else 0.0,
        "lateness_sum_pct": round(float(late.sum()), 3),
        "lateness_bin_max_pct": round(max(bins.values()), 3) if bins else 0.0,
        "cycle_time_us": _dist_us(cycle_ns),
        # A release tick the target could not time (0) has no wake-up latency.
        "wakeup_us": _dist_us((c[:, 1] - c[:, 0])[(c[:, 0] > 0) & (c[:, 1] >= c[:, 0])]),
    }


def _snap_at(snaps: Sequence[Mapping[str, Any]], t: int) -> Mapping[str, Any]:
    best = snaps[0]
    for s in snaps:
        if s["t_ns"] <= t:
            best = s
    return best


def summarize(raw: Mapping[str, Any], dev: Device, run_dir: Path) -> dict[str, Any]:
    """The run's ``summary.json`` in the simulator's vocabulary, with per-phase parts."""
    d = raw["device"]
    variant, attack = raw["variant"], raw["attack"]
    scn = dev.variants[variant]
    period = scn.critical.period_ns
    cyc = np.fromfile(run_dir / "cycles.bin", dtype="<u8").reshape(-1, 4)
    bounds = raw["bounds_ns"]
    reasons = _shield_reasons()
    nif = d["netif"]
    shield_drops = {
        r: int(v)
        for r, v in zip(reasons, d["shield_drops"], strict=False)
        if r not in ("none", "reasons")
    }
    dropped = {
        "ring_full": nif["ring_full"],
        **shield_drops,
        STACK_EXHAUSTED: nif["stack_exhausted"],
    }
    dropped["ip_event_queue_full"] = nif["ip_queue_full"]
    flows: dict[str, Any] = {}
    names = list(d["flows"])
    sent_ns: dict[str, np.ndarray] = {}
    truncated: dict[str, bool] = {}
    modbus_phases: dict[str, Any] = {}
    replayed = {pf.name for pf in pcap_flows(scn)}
    for name, fl in d["flows"].items():
        offered = raw["sent"].get("total", {}).get(name)
        entry: dict[str, Any] = {
            "protocol": fl["proto"],
            "port": fl["port"],
            "offered": offered,
            "delivered": fl["delivered"],
        }
        if offered is not None:
            entry["dropped"] = max(0, offered - fl["delivered"])
            entry["delivered_ratio"] = round(fl["delivered"] / offered, 4) if offered else None
        f = run_dir / f"latency_{name}.bin"
        if f.is_file() and name not in replayed:  # a capture's payload carries no send time
            lat = np.fromfile(f, dtype="<u8").reshape(-1, 2).astype(np.int64)
            ok = lat[:, 0] > 0
            sent_ns[name] = lat[ok, 0]
            truncated[name] = fl.get("latency_recorded", 0) < fl["delivered"]
            dist = _dist_us(lat[ok, 1] - lat[ok, 0])
            entry["latency_us"] = {k: dist[k] for k in ("p50", "p99", "max")}
        mb = run_dir / f"modbus_{name}.bin"
        if fl["proto"] == "modbus" and mb.is_file():
            acc = account(read_records(str(mb)), bounds, int(MODBUS_TIMEOUT_S * 1e9), PHASES)
            modbus_phases[name] = acc.pop("phases")
            entry.update(acc)  # offered/delivered: polls and their answers in time
            entry["dropped"] = entry["offered"] - entry["delivered"]
            entry["served_by_device"] = fl["delivered"]
            entry["connections"] = fl.get("connections")
            entry["refused"] = fl.get("refused")
            entry["client"] = raw.get("modbus", {}).get(name)
        if name in replayed:  # offered: the frames the rig replayed
            entry["replayed"] = True
            entry.pop("dropped", None)  # a capture's frames are not all meant for the socket
        elif fl["proto"] == "tcp":
            entry["accepted"] = fl["delivered"]
            entry["offered"] = None  # the attack tools' frames are counted in traffic
            entry.pop("dropped", None)
        flows[name] = entry
    for name in sorted(replayed - set(flows)):  # replayed without a socket of its own
        flows[name] = {
            "protocol": next(f.protocol for f in scn.flows if f.name == name),
            "offered": raw["sent"].get("total", {}).get(name),
            "delivered": None,
            "replayed": True,
        }
    snaps = d["snapshots"]
    phases: dict[str, Any] = {}
    for ph, (lo, hi) in zip(PHASES, bounds, strict=True):
        a, b = _snap_at(snaps, lo), _snap_at(snaps, hi)
        part: dict[str, Any] = {"seconds": round((hi - lo) / 1e9, 3)}
        part["critical"] = _critical(cyc, period, lo, hi)
        dt = max(1e-9, (b["t_ns"] - a["t_ns"]) / 1e9)
        part["frames_at_nic"] = b["nic_frames"] - a["nic_frames"]
        part["frames_at_nic_pps"] = round(part["frames_at_nic"] / dt, 1)
        part["to_ip_task"] = b["to_ip_task"] - a["to_ip_task"]
        part["dropped"] = {
            "ring_full": b["ring_full"] - a["ring_full"],
            **{
                r: b["shield_drops"][k] - a["shield_drops"][k]
                for k, r in enumerate(reasons)
                if r not in ("none", "reasons") and k < len(b["shield_drops"])
            },
            STACK_EXHAUSTED: b["stack_exhausted"] - a["stack_exhausted"],
        }
        part["flows"] = {}
        for i, name in enumerate(names):
            sent = raw["sent"].get("sent", {}).get(name)
            k = PHASES.index(ph)
            if name in modbus_phases:
                part["flows"][name] = modbus_phases[name][ph]
                continue
            if name in sent_ns and not truncated[name]:
                # exact: the datagrams sent in this phase that were delivered
                got = int(((sent_ns[name] >= lo) & (sent_ns[name] < hi)).sum())
            else:  # the monitor's 100 ms snapshots
                got = b["delivered"][i] - a["delivered"][i]
            part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": got}
        for name in flows:
            if name not in part["flows"]:
                sent = raw["sent"].get("sent", {}).get(name)
                part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": None}
        phases[ph] = part
    whole = _critical(cyc, period, bounds[0][0], bounds[2][1])
    threads: dict[str, int] = {}  # CPU ns per FreeRTOS task (thread name), whole run
    for key, ns in d.get("threads_cpu_ns", {}).items():
        name = key.rsplit("#", 1)[0]
        threads[name] = threads.get(name, 0) + int(ns)
    ip_ns = threads.get(IP_TASK_NAME)
    delivered = sum(f["delivered"] or 0 for f in flows.values())
    return {
        "scenario": scn.name,
        "target": "freertos-tcp",
        "variant": variant,
        "protected": variant == "protected",
        "attack": attack,
        "attack_tool": ATTACK_TOOL[attack],
        "seed": None,
        "duration_s": round((bounds[2][1] - bounds[0][0]) / 1e9, 3),
        "bounds_ns": bounds,
        "critical_period_ms": period / 1e6,
        "totals": {
            "offered": nif["nic_frames"],
            "received": nif["nic_frames"] - nif["ring_full"],
            "processed": nif["to_ip_task"],
            "delivered": delivered,
            "irq_raised": nif["rx_irqs"],
            "dropped": dropped,
        },
        "critical": {
            **whole,
            "cycles_total": d["cycles"],
            "misses_total": d["misses"],
            # the statistics above cover the recorded cycles; more ran when this is true
            "cycles_truncated": d.get("cycles_recorded", d["cycles"]) < d["cycles"],
        },
        "flows": flows,
        "phases": phases,
        "traffic": raw["traffic"],
        "cpu_per_frame_ns": {
            "shield": round(nif["shield_ns"] / nif["shield_frames"], 1)
            if nif["shield_frames"]
            else None,
            "to_stack": round(nif["to_stack_ns"] / nif["to_stack_frames"], 1)
            if nif["to_stack_frames"]
            else None,
            # the IP task's whole CPU time per frame it was handed (protocol processing,
            # replies, timers), over the whole run
            "ip_task": round(ip_ns / nif["to_ip_task"], 1) if ip_ns and nif["to_ip_task"] else None,
        },
        "threads_cpu_s": {k: round(v / 1e9, 4) for k, v in sorted(threads.items())},
        "netif": nif,
        "platform": "FreeRTOS POSIX port on this host (host time; 1 kHz tick)",
    }
