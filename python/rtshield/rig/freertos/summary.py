"""A run's ``summary.json``: the target's records in the simulator's vocabulary.

:func:`summarize` reads what the device program wrote (``device.json``, the
critical task's ``cycles.bin``, latency records) and what the rig's processes
reported, and puts them in the simulator's summary keys, whole run and per
phase. The phases are the rig's (host time); the target's records count its
own clock (``device_bounds_ns``: the same phases on it, equal on the POSIX
board, read off the MPS2 board's ``sync`` lines). Beside libshield's drops by
reason it records the stack's own counters (lwIP's ``lwip_stats``) and, on the
MPS2 board, the frames its emulated NIC dropped.
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
from .target import Target

__all__ = [
    "IP_QUEUE_FULL",
    "IP_TASK_NAME",
    "LWIP_MAILBOX_FULL",
    "MAILBOX_FULL",
    "NIC_FIFO_FULL",
    "STACK_EXHAUSTED",
    "STACK_TASKS",
    "flood_rates",
    "summarize",
]

#: Drop reason of an admitted frame that found no stack buffer (a FreeRTOS-Plus-TCP network
#: buffer; lwIP: a pbuf from PBUF_POOL).
STACK_EXHAUSTED = "stack_buffers_exhausted"
#: Drop reason of a frame the stack's input queue refused (Plus-TCP: the IP task's event
#: queue; lwIP: tcpip_thread's mailbox or its input-message pool).
IP_QUEUE_FULL = "ip_event_queue_full"
#: Drop reason of a datagram its UDP socket's full mailbox dropped (the simulator's: a
#: worker's mailbox full), on lwIP from the device's own count :data:`LWIP_MAILBOX_FULL`.
MAILBOX_FULL = "mailbox_full"
#: lwIP's stack counter of the datagrams a UDP socket's full mailbox dropped, counted by
#: the device around lwIP's receive callback (rig/freertos/lwip/rts_net_lwip.c): lwIP's own
#: ``mbox_err`` counts every refused mailbox post, tcpip_thread's and the TCP
#: connections' (which only defer a segment) too (docs/decisions/twin.md).
LWIP_MAILBOX_FULL = "udp_mbox_full"
#: Drop reason of a frame the MPS2 board's emulated LAN9118 dropped, its RX FIFO full
#: (handed to QEMU's TAP, never taken by the driver): a board's NIC drops, counted apart.
NIC_FIFO_FULL = "nic_fifo_full"
#: libshield's rts_shield_drop names that the simulator's summary spells differently.
_SHIELD_TO_SIM = {"limiter": "mitigation"}
#: FreeRTOS-Plus-TCP's name for its IP task (FreeRTOS_IP.c; the POSIX port names threads so).
IP_TASK_NAME = "IP-Task"
#: The tasks that do each stack's protocol processing: Plus-TCP's IP task; lwIP's
#: tcpip_thread and, protected, the adapter's receive task (tcpip_input() processes each
#: admitted frame there, under the core lock). Task names are cut to 11 characters
#: (configMAX_TASK_NAME_LEN 12).
STACK_TASKS = {"plustcp": (IP_TASK_NAME,), "lwip": ("tcpip_thread", "rts-lwip-rx")}
#: A stack counter that is a level (a high-water mark, or a level when asked), not a
#: count: per phase, its value at the phase's end, not a difference.
_LEVEL_SUFFIX = ("_max_used", "_now")


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
    """Critical-task statistics of the cycles released in [lo, hi) (the target's clock; a
    cycle whose release tick has no time, by its end): a cycle released in the attack that
    ends after it, in the break, is the attack's (measured on the MPS2 board: a cycle held
    450 ms by the stock path's interrupt ended after the flood).

    ``misses`` is the tick count's verdict (the cycle ended after its deadline tick);
    ``late_on_clock`` counts cycles that ended more than a period after their release
    tick's time on the board's clock, which a tick count that lost ticks cannot see
    (docs/decisions/mps2-board.md); ``missed_or_late`` either."""
    end = cyc[:, 2].astype(np.int64)
    rel = cyc[:, 0].astype(np.int64)
    at = np.where(rel > 0, rel, end)
    sel = (at >= lo) & (at < hi)
    c = cyc[sel].astype(np.int64)
    miss = c[:, 3] > 0
    late_clock = (c[:, 0] > 0) & (c[:, 2] > c[:, 0] + period_ns)
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
        "late_on_clock": int(late_clock.sum()),
        "missed_or_late": int((miss | late_clock).sum()),
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


def _target(raw: Mapping[str, Any]) -> Target:
    t = raw.get("target") or {}
    return Target(t.get("stack", "plustcp"), t.get("board", "posix"))


def _tap_between(tap: Sequence[Mapping[str, Any]], a: str, b: str) -> int | None:
    """Frames handed to the emulated NIC between the TAP samples ``a`` and ``b``."""
    at = {s["at"]: s for s in tap}
    if a not in at or b not in at:
        return None
    return at[b]["tx_packets"] - at[a]["tx_packets"]


def flood_rates(asked: float | None, traffic: Mapping[str, Any]) -> dict[str, Any]:
    """A run's flood rate: the rate asked for (packets/s; ``None``: full rate), the rate of
    the flood's own frames at the device's link over the attack phase (``flood_in_pps``,
    the device's ingress counters) and what share of the rate asked that is."""
    at = traffic.get("flood_in_pps")
    return {
        "rate_asked_pps": asked,
        "at_device_pps": at,
        "achieved": round(at / asked, 4) if asked and at is not None else None,
    }


def summarize(raw: Mapping[str, Any], dev: Device, run_dir: Path) -> dict[str, Any]:
    """The run's ``summary.json`` in the simulator's vocabulary, with per-phase parts."""
    d = raw["device"]
    variant, attack = raw["variant"], raw["attack"]
    target = _target(raw)
    guest = target.clock == "guest"
    scn = dev.variants[variant]
    period = scn.critical.period_ns
    cyc = np.fromfile(run_dir / "cycles.bin", dtype="<u8").reshape(-1, 4)
    bounds = raw["bounds_ns"]  # the rig's phases, host time: what the senders stamp
    dbounds = raw.get("device_bounds_ns") or bounds  # the same phases on the target's clock
    reasons = _shield_reasons()
    nif = d["netif"]
    tap = raw.get("tap") or []
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
    dropped[IP_QUEUE_FULL] = nif["ip_queue_full"]
    into_nic = _tap_between(tap, "start", "end")
    if into_nic is not None:  # the whole run: QEMU's TAP from before boot to after exit
        dropped[NIC_FIFO_FULL] = max(0, into_nic - nif["nic_frames"])
    stack_names = list((d.get("stack") or {}).get("names", []))
    stack_totals = dict(zip(stack_names, (d.get("stack") or {}).get("values", []), strict=False))
    if LWIP_MAILBOX_FULL in stack_totals:
        dropped[MAILBOX_FULL] = int(stack_totals[LWIP_MAILBOX_FULL])
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
        if "shield" in fl:  # protected: the frames of the flow the driver took from the NIC
            entry["taken_by_driver"] = fl["shield"]["frames"]
        f = run_dir / f"latency_{name}.bin"
        if f.is_file() and name not in replayed:  # a capture's payload carries no send time
            lat = np.fromfile(f, dtype="<u8").reshape(-1, 2).astype(np.int64)
            ok = lat[:, 0] > 0
            sent_ns[name] = lat[ok, 0]  # the sender's host time
            truncated[name] = fl.get("latency_recorded", 0) < fl["delivered"]
            if guest:  # sent on the host's clock, arrived on the guest's: not comparable
                entry["latency_us"] = {"p50": None, "p99": None, "max": None}
            else:
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
    for k, (ph, (lo, hi), (dlo, dhi)) in enumerate(zip(PHASES, bounds, dbounds, strict=True)):
        a, b = _snap_at(snaps, dlo), _snap_at(snaps, dhi)
        part: dict[str, Any] = {"seconds": round((hi - lo) / 1e9, 3)}
        if guest:  # the phase's length on the guest's clock (shorter when it fell behind)
            part["device_seconds"] = round((dhi - dlo) / 1e9, 3)
        part["critical"] = _critical(cyc, period, dlo, dhi)
        dt = max(1e-9, (b["t_ns"] - a["t_ns"]) / 1e9)
        part["frames_at_nic"] = b["nic_frames"] - a["nic_frames"]
        part["frames_at_nic_pps"] = round(part["frames_at_nic"] / dt, 1)
        part["to_ip_task"] = b["to_ip_task"] - a["to_ip_task"]
        part["dropped"] = {
            "ring_full": b["ring_full"] - a["ring_full"],
            **{
                r: b["shield_drops"][j] - a["shield_drops"][j]
                for j, r in enumerate(reasons)
                if r not in ("none", "reasons") and j < len(b["shield_drops"])
            },
            STACK_EXHAUSTED: b["stack_exhausted"] - a["stack_exhausted"],
            IP_QUEUE_FULL: b["ip_queue_full"] - a["ip_queue_full"],
        }
        into = _tap_between(tap, ph, f"{ph}_end")
        if into is not None:
            part["frames_into_nic"] = into
            part["dropped"][NIC_FIFO_FULL] = max(0, into - part["frames_at_nic"])
        if stack_names:
            sa, sb = a.get("stack") or [], b.get("stack") or []
            part["stack_counters"] = {
                n: sb[j] if n.endswith(_LEVEL_SUFFIX) else sb[j] - sa[j]
                for j, n in enumerate(stack_names)
                if j < min(len(sa), len(sb))
            }
            if LWIP_MAILBOX_FULL in part["stack_counters"]:
                part["dropped"][MAILBOX_FULL] = part["stack_counters"][LWIP_MAILBOX_FULL]
        part["flows"] = {}
        for i, name in enumerate(names):
            sent = raw["sent"].get("sent", {}).get(name)
            if name in modbus_phases:
                part["flows"][name] = modbus_phases[name][ph]
                continue
            if name in sent_ns and not truncated[name]:
                # exact: the datagrams sent in this phase (the sender's host time) delivered
                got = int(((sent_ns[name] >= lo) & (sent_ns[name] < hi)).sum())
            else:  # the monitor's 100 ms snapshots (the target's clock)
                got = b["delivered"][i] - a["delivered"][i]
            part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": got}
        for name in flows:
            if name not in part["flows"]:
                sent = raw["sent"].get("sent", {}).get(name)
                part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": None}
        phases[ph] = part
    whole = _critical(cyc, period, dbounds[0][0], dbounds[2][1])
    threads: dict[str, int] = {}  # CPU ns per FreeRTOS task (thread name), whole run
    for key, ns in d.get("threads_cpu_ns", {}).items():
        name = key.rsplit("#", 1)[0]
        threads[name] = threads.get(name, 0) + int(ns)
    cut = {t[:11] for t in STACK_TASKS[target.stack]}
    ip_ns = sum(ns for name, ns in threads.items() if name in cut) or None
    delivered = sum(f["delivered"] or 0 for f in flows.values())
    # offered: the frames that reached the board (MPS2: handed to its emulated NIC)
    offered = nif["nic_frames"] if into_nic is None else max(into_nic, nif["nic_frames"])
    return {
        "scenario": scn.name,
        "target": target.verb,
        "stack": target.stack,
        "board": target.board,
        "clock": target.clock,
        "variant": variant,
        "protected": variant == "protected",
        "attack": attack,
        "attack_tool": ATTACK_TOOL[attack],
        "flood": flood_rates(raw.get("rate_asked_pps"), raw["traffic"]),
        "seed": None,
        "duration_s": round((bounds[2][1] - bounds[0][0]) / 1e9, 3),
        "bounds_ns": bounds,
        "device_bounds_ns": dbounds,
        "critical_period_ms": period / 1e6,
        "totals": {
            "offered": offered,
            "received": nif["nic_frames"] - nif["ring_full"],
            "processed": nif["to_ip_task"],
            "delivered": delivered,
            "irq_raised": nif["rx_irqs"],
            "dropped": dropped,
            **({"frames_into_nic": into_nic} if into_nic is not None else {}),
        },
        "critical": {
            **whole,
            "cycles_total": d["cycles"],
            "misses_total": d["misses"],
            "late_on_clock_total": d.get("late_on_clock"),
            # the statistics above cover the recorded cycles; more ran when this is true
            "cycles_truncated": d.get("cycles_recorded", d["cycles"]) < d["cycles"],
            # ticks the kernel lost (its tick held off longer than a tick) over the whole run
            "ticks_lost": round((d["ns_end"] - d["ns_ready"]) / 1e6)
            - (d["ticks_end"] - d["ticks_ready"])
            if "ns_end" in d
            else None,
        },
        "flows": flows,
        "phases": phases,
        "traffic": raw["traffic"],
        "stack_counters": stack_totals,
        "cpu_per_frame_ns": {
            "shield": round(nif["shield_ns"] / nif["shield_frames"], 1)
            if nif["shield_frames"]
            else None,
            "to_stack": round(nif["to_stack_ns"] / nif["to_stack_frames"], 1)
            if nif["to_stack_frames"]
            else None,
            # the stack's tasks' whole CPU time per frame they were handed (protocol
            # processing, replies, timers), over the whole run
            "ip_task": round(ip_ns / nif["to_ip_task"], 1) if ip_ns and nif["to_ip_task"] else None,
        },
        "threads_cpu_s": {k: round(v / 1e9, 4) for k, v in sorted(threads.items())},
        "netif": nif,
        "platform": target.platform,
    }
