"""Simulation against the real stack: the same device simulated, and which of the
simulation's claims the real stack (FreeRTOS-Plus-TCP or lwIP, on its board) confirms
(``comparison.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rtshield.outputs import atomic_write, format_summary_json

from .device import VARIANTS, Device, is_modbus
from .phases import ATTACK_LABEL, PHASES, run_name_of

__all__ = ["HP_KEPT", "claims", "comparison", "measured_syn_rate", "simulate_variants"]


def simulate_variants(dev: Device, out: Path, suffix: str = "") -> dict[str, dict[str, Any]]:
    """Simulate both variants of the device; write ``out/sim/<variant><suffix>/summary.json``
    and the scenario simulated, ``scenario.toml`` (a scenario file: ``rtshield run`` runs
    it again, ``rtshield calibrate`` fits it to a run's ``counters.csv``)."""
    import tomli_w

    from rtshield.runner import simulate

    res = {}
    for v in VARIANTS:
        s = simulate(dev.variants[v]).summary()
        d = out / "sim" / (v + suffix)
        d.mkdir(parents=True, exist_ok=True)
        atomic_write(d / "summary.json", format_summary_json(s))
        if v in dev.tables:
            head = f"# {dev.path}, {v}{suffix and ' (' + suffix.strip('-') + ')'}: the scenario "
            head += "the rig simulated (written by rtshield rig)\n"
            atomic_write(d / "scenario.toml", head + tomli_w.dumps(dev.tables[v]))
        res[v] = s
    return res


def _hp_flow(scn: Any) -> str | None:
    udp = [f for f in scn.flows if f.protocol == "udp" or (is_modbus(f) and f.rate_pps)]
    return max(udp, key=lambda f: f.priority).name if udp else None


#: The simulator's drop reasons of a frame its NIC never handed to the driver.
_NIC_DROPS = ("ring_full", "nic_queue_full", "nic_unregistered")


def _sim_facts(
    summary: Mapping[str, Any], hp: str | None, taken: bool = False
) -> dict[str, Any]:
    """The simulation's misses and the high-priority flow's delivered share (``taken``: of
    the frames its NIC handed to the driver, as the emulated board's claim reads)."""
    f = summary.get("flows", {}).get(hp or "", {})
    off, got = f.get("offered") or 0, f.get("delivered") or 0
    if taken:
        off -= sum((f.get("dropped_by") or {}).get(k, 0) for k in _NIC_DROPS)
    return {"misses": summary["critical"]["misses"], "hp_ratio": (got / off) if off else None}


def _rig_facts(summary: Mapping[str, Any], hp: str | None) -> dict[str, Any]:
    """The attack phase's misses and the high-priority flow's delivered share. On the
    guest's clock a cycle late on the board's timer counts as a miss too (ticks lost under
    a flood hide it from the tick count); the share is of the frames the driver took when
    the board's emulated NIC dropped frames before it (as a board's NIC would)."""
    att = summary["phases"]["attack"]
    crit = att["critical"]
    guest = summary.get("clock") == "guest"
    misses = crit.get("missed_or_late", crit["misses"]) if guest else crit["misses"]
    f = att["flows"].get(hp or "", {})
    off, got = f.get("offered") or 0, f.get("delivered") or 0
    ratio = (got / off) if off else None
    whole = summary.get("flows", {}).get(hp or "", {})
    if guest and summary.get("protected") and whole.get("taken_by_driver"):
        ratio = whole["delivered"] / whole["taken_by_driver"]
    return {"misses": misses, "hp_ratio": ratio}


#: The share of the high-priority flow that counts as "kept being delivered".
HP_KEPT = 0.99


def claims(
    sim: Mapping[str, Mapping[str, Any]],
    rig: Sequence[Mapping[str, Any]],
    hp: str | None,
    sim_syn: Mapping[str, Mapping[str, Any]] | None = None,
    own: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Which claims of the simulation the real stack confirms, per attack.

    ``sim`` is the scenario simulated with its own flood; ``own`` (when given) each
    run's simulation with the flood at the rate that run measured, by run name
    (``<variant>-<attack>``: :func:`.fit.simulate_own_rates`), the simulation the run is
    held against; ``sim_syn``, the SYN flood at the mean rate of the rig's SYN runs, where
    a SYN run has none of its own; else the scenario's flood. The scenario models a SYN
    flood only: an ARP flood or a scan is held against a SYN flood at its rate.
    """
    out = []
    for r in rig:
        v = r["variant"]
        mine = (own or {}).get(run_name_of(r))
        if mine is not None:
            use, flood = {v: mine}, (
                "this run's measured SYN rate"
                if r["attack"] == "syn"
                else "a SYN flood at this run's measured flood rate"
            )
        elif sim_syn and r["attack"] == "syn":
            use, flood = sim_syn, "the rig's measured SYN rate"
        else:
            use, flood = sim, "the scenario's flood"
        if v not in use:
            continue
        taken = v == "protected" and r.get("clock") == "guest"
        s, g = _sim_facts(use[v], hp, taken), _rig_facts(r, hp)

        def kept(x: Mapping[str, Any], share: float = 1.0 if taken else HP_KEPT) -> bool:
            """Of the frames sent, HP_KEPT; of the frames the driver took, every one."""
            return x["hp_ratio"] is not None and x["hp_ratio"] >= share

        if v == "protected":
            of = (  # a board's NIC drops are its own (docs/decisions/mps2-board.md)
                " (every frame of it the driver took from the NIC)"
                if r.get("clock") == "guest"
                else ""
            )
            pairs = [
                (
                    f"protected, {ATTACK_LABEL[r['attack']]}: the high-priority flow keeps being "
                    f"delivered{of}",
                    kept(s),
                    kept(g),
                ),
                (
                    f"protected, {ATTACK_LABEL[r['attack']]}: the critical task misses no deadline",
                    s["misses"] == 0,
                    g["misses"] == 0,
                ),
            ]
        else:
            pairs = [
                (
                    f"unprotected, {ATTACK_LABEL[r['attack']]}: the critical task misses deadlines "
                    "or the high-priority flow loses packets",
                    s["misses"] > 0 or not kept(s),
                    g["misses"] > 0 or not kept(g),
                )
            ]
        for text, sim_holds, rig_holds in pairs:
            out.append(
                {
                    "claim": text,
                    "variant": v,
                    "attack": r["attack"],
                    "simulation": sim_holds,
                    "real_stack": rig_holds,
                    "confirmed": bool(sim_holds and rig_holds),
                    "simulated_flood": flood,
                    "sim": s,
                    "rig": g,
                }
            )
    return out


def _sim_table(sim: Mapping[str, Mapping[str, Any]], hp: str | None) -> dict[str, Any]:
    return {
        v: {
            "critical": {k: s["critical"][k] for k in ("cycles", "misses", "lateness_max_pct")},
            "hp": s.get("flows", {}).get(hp or "", {}),
            "flows": {
                n: {k: f.get(k) for k in ("offered", "delivered")}
                for n, f in s.get("flows", {}).items()
            },
        }
        for v, s in sim.items()
    }


def _flood_pps(runs: Sequence[Mapping[str, Any]], run: str) -> float | None:
    r = next((r for r in runs if f"{r['variant']}-{r['attack']}" == run), None)
    return None if r is None else r["traffic"].get("flood_in_pps")


def measured_syn_rate(runs: Sequence[Mapping[str, Any]]) -> float | None:
    """Mean SYN rate that reached the device in the SYN-flood runs' attack phases."""
    rates = [r["traffic"].get("flood_in_pps") or 0.0 for r in runs if r["attack"] == "syn"]
    return sum(rates) / len(rates) if rates and sum(rates) > 0 else None


def comparison(
    runs: Sequence[Mapping[str, Any]],
    sim: Mapping[str, Mapping[str, Any]],
    dev: Device,
    sim_syn: Mapping[str, Mapping[str, Any]] | None = None,
    syn_pps: float | None = None,
    own: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``comparison.json``: the real runs, the simulation and its claims (:func:`claims`;
    ``own``: each SYN run's simulation at its own measured flood rate, by run name)."""
    hp = _hp_flow(dev.variants["protected"])
    rows = []
    for r in runs:
        ph = r["phases"]
        hp_whole = r["flows"].get(hp or "", {})
        rows.append(
            {
                "run": run_name_of(r),
                "variant": r["variant"],
                "attack": r["attack"],
                "late_on_clock": {p: ph[p]["critical"].get("late_on_clock") for p in PHASES},
                "hp_taken_by_driver": hp_whole.get("taken_by_driver"),
                "hp_delivered": hp_whole.get("delivered"),
                "stack_counters_attack": ph["attack"].get("stack_counters", {}),
                "flood_in_pps": r["traffic"].get("flood_in_pps"),
                "offered_pps": r["traffic"].get("offered_pps"),
                "frames_at_nic_pps": ph["attack"]["frames_at_nic_pps"],
                "to_ip_task": ph["attack"]["to_ip_task"],
                "misses": {p: ph[p]["critical"]["misses"] for p in PHASES},
                "lateness_max_pct": {p: ph[p]["critical"]["lateness_max_pct"] for p in PHASES},
                "to_ip_task_pps": round(
                    ph["attack"]["to_ip_task"] / max(1e-9, ph["attack"]["seconds"]), 1
                ),
                "wakeup_p99_9_us": {p: ph[p]["critical"]["wakeup_us"]["p99_9"] for p in PHASES},
                "cycle_p99_9_us": {p: ph[p]["critical"]["cycle_time_us"]["p99_9"] for p in PHASES},
                "hp": ph["attack"]["flows"].get(hp or "", {}),
                "flows": {  # every flow, whole run: UDP, MODBUS polls, replayed captures
                    n: {k: f.get(k) for k in ("offered", "delivered")}
                    for n, f in r["flows"].items()
                },
                "dropped_attack": ph["attack"]["dropped"],
                "cpu_per_frame_ns": r["cpu_per_frame_ns"],
            }
        )
    first = runs[0] if runs else {}
    return {
        "scenario": str(dev.path),
        "target": {k: first.get(k) for k in ("target", "stack", "board", "clock", "platform")},
        "hp_flow": hp,
        "runs": rows,
        "simulation": _sim_table(sim, hp),
        "simulation_at_rig_rate": (
            {"syn_pps": round(syn_pps, 1), **_sim_table(sim_syn, hp)}
            if sim_syn and syn_pps
            else None
        ),
        "simulation_at_own_rate": {
            run: {"syn_pps": _flood_pps(runs, run), **_sim_table({"sim": s}, hp)["sim"]}
            for run, s in (own or {}).items()
        }
        or None,
        "claims": claims(sim, runs, hp, sim_syn, own),
    }
