"""``twin.json``: does the simulation predict the real target, quantity by quantity?

:func:`build_twin` reads a finished ``rig freertos-tcp`` / ``rig lwip`` output folder
(``runs/*/summary.json``, the real runs in the simulator's vocabulary, and
``sim/*/summary.json``, the same device simulated) and sets each real run beside the
simulation it is held against (:func:`.fit.simulation_for`: a SYN-flood run beside the
scenario at its own measured flood rate, any other run beside the scenario's own
flood, which the simulator models as a SYN flood), and with a fit (``rig report
--fitted``) beside the fitted model too. Every quantity has its tolerance here, in
:data:`TOLERANCES` (the one home; docs/rig.md lists them), and ``agrees`` says whether
the two are within it; ``why`` names the modelling reason where one is known.

The comparison covers what both sides have over the same stretch: the real run's
three phases (idle, attack, idle; not the breaks between them) against the whole
simulated run, which is the same three phases back to back. :func:`write_twin` also
writes each run's ``counters.csv`` and ``calibrate/<run>.toml`` (:mod:`.fit`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError
from rtshield.figures import png_bytes
from rtshield.outputs import atomic_write

from .fit import (
    BOARD,
    BOARD_DROPS,
    EMULATED_NIC,
    FIT_RECORD,
    FITTED,
    board_preset,
    calibration_toml,
    counters_csv,
    read_json,
    simulate_own_rates,
    simulation_for,
)
from .phases import ATTACK_LABEL, PHASES
from .summary import IP_QUEUE_FULL, NIC_FIFO_FULL, STACK_EXHAUSTED, STACK_TASKS

__all__ = [
    "EMULATOR_FIFO",
    "ISR_THREAD",
    "NETWORK_THREADS",
    "TOLERANCES",
    "Tolerance",
    "build_twin",
    "twin_figure",
    "twin_rows",
    "write_twin",
]


@dataclass(frozen=True)
class Tolerance:
    """How far the simulation may be from the real run and still agree.

    ``kind``: ``"points"`` (a fraction, within ``within`` of it), ``"relative"``
    (within ``within`` times the real value, or ``floor`` if that is larger),
    ``"period"`` (within ``within`` times the critical task's period) or
    ``"verdict"`` (both zero or both non-zero)."""

    kind: str
    within: float
    floor: float
    text: str

    def allowed(self, real: float, period_us: float) -> float:
        """The largest difference that still agrees (0 for a verdict)."""
        if self.kind == "points":
            return self.within
        if self.kind == "relative":
            return max(self.within * abs(real), self.floor)
        if self.kind == "period":
            return self.within * period_us
        return 0.0

    def agrees(self, sim: float, real: float, period_us: float) -> bool:
        if self.kind == "verdict":
            return (sim > 0) == (real > 0)
        return abs(sim - real) <= self.allowed(real, period_us) + 1e-12


#: Every quantity's tolerance, by kind of quantity (docs/rig.md, "Simulation against the
#: real target"; the choices: docs/decisions/twin.md).
TOLERANCES: dict[str, Tolerance] = {
    "frames_at_nic": Tolerance(
        "relative", 0.10, 0.0, "within 10 % of the frames that reached the target's NIC"
    ),
    "delivered_fraction": Tolerance(
        "points", 0.05, 0.0, "within 5 points of the flow's delivered fraction"
    ),
    "drops": Tolerance("relative", 0.10, 10.0, "within 10 % of the real count, or 10 frames"),
    "misses": Tolerance("verdict", 0.0, 0.0, "the same verdict: deadlines missed or none"),
    "cycle_time": Tolerance("period", 0.10, 0.0, "within 10 % of the critical task's period"),
    "network_cpu": Tolerance(
        "relative", 0.25, 0.0, "within 25 % of the real CPU time per frame at the NIC"
    ),
}

#: The threads that do network work beside the stack's tasks (:data:`.summary.STACK_TASKS`):
#: the network task and libshield's poll task (rig/freertos/posix), the lwIP adapter's
#: poll task and lwIP's stock input task, ``ethif`` (rig/freertos/lwip/rts_netif_lwip.c;
#: task names cut to 11 characters). Against the simulator's ``isr_rx``, ``driver``,
#: ``input`` (the stock driver's input task) and ``polling`` CPU. Not the POSIX board's
#: NIC thread (``rts-nic``): it reads the
#: veth on a host core of its own, the NIC's DMA engine, which in the model costs the
#: device's CPU nothing; the RX interrupt (the tick hook) runs in whichever task the tick
#: hit. The MPS2 board's RX interrupt is a thread of its own, ``eth-isr`` (its time taken
#: out of the tasks it interrupted).
NETWORK_THREADS = ("rts-net", "rts-poll", "rts-lwip-poll"[:11], "ethif", "eth-isr")
#: The MPS2 board's LAN9118 interrupt as a thread of its own (rig/freertos/mps2-an385/board.c:
#: its time taken out of the tasks it interrupted), libshield's hook in it included.
ISR_THREAD = "eth-isr"
#: The simulator's CPU shares of the network work (``summary.json`` "cpu").
_SIM_NETWORK_CPU = ("isr_rx", "driver", "input", "polling")
#: Why the emulated LAN9118's FIFO drops are not the device's (docs/decisions/twin-mps2.md).
EMULATOR_FIFO = (
    "the emulator's, not the device's: QEMU's I/O thread fills the emulated LAN9118's FIFO in "
    "bursts between the guest's execution slices and the FIFO drops the rest, while the "
    "guest has CPU to spare; the board's model is fed the frames the FIFO passed"
)
#: Drop reasons only the real target has, and why the simulator cannot count them.
_REAL_ONLY = {
    STACK_EXHAUSTED: "the simulator has no model of the stack's own network buffers",
    IP_QUEUE_FULL: "the simulator has no model of the stack's input queue",
    NIC_FIFO_FULL: EMULATOR_FIFO,
}


#: Why the real stack's input ceiling and the board's model of it may differ, by stack
#: (docs/decisions/twin.md, twin-plustcp.md): Plus-TCP's is the network buffers the IP
#: task drains once a tick behind a network task of its priority, lwIP's tcpip_thread's 8
#: input messages a drain; both at the drains the host delivered.
#: Why an emulated board's critical task may be later than its model's: the model is fed
#: the frames the emulated NIC passed evenly spaced over the attack phase (.fit.flood_passed).
_PASSED_EVENLY = (
    "the model spaces the frames the emulated NIC passed evenly over the attack phase; "
    "QEMU delivers them in bursts between the guest's time slices, which keep the critical "
    "task waiting behind the network tasks longer (docs/decisions/twin-mps2.md)"
)
_CEILING = {
    "plustcp": "Plus-TCP's IP task drains the network buffers once a tick behind a network "
    "task of its own priority, as the board's model does (~40 frames a drain); the real "
    "drains are the ticks the host delivered: under a flood late (1.3-1.6 ms) and missed "
    "(0.7-0.9 drains a tick), so the real stack refuses frames below the model's ceiling "
    "(docs/decisions/twin-plustcp.md, twin-rates.md)",
    "lwip": "lwIP's stock driver hands tcpip_thread at most its 8 input messages a drain "
    "(MEMP_NUM_TCPIP_MSG_INPKT), as the board's model does once a tick; the real drains "
    "are the ticks the host delivered, fewer when it stalls or a tick comes late, so the "
    "real stack refuses frames also below that limit (docs/decisions/twin.md, "
    "twin-rates.md)",
}

#: The MPS2 board's driver and stack tasks, by stack, and the frames a second their CPU
#: takes (docs/decisions/twin-mps2.md).
_MPS2_STACK = {
    "plustcp": "the network task and the IP task at about 9 000 frames a second",
    "lwip": "ethif and tcpip_thread at about 8 000 frames a second taken",
}


def _sum_phases(real: Mapping[str, Any], key: str) -> int:
    return sum(int(real["phases"][p].get(key) or 0) for p in PHASES)


def _real_flow(real: Mapping[str, Any], name: str) -> tuple[int, int] | None:
    """(offered, delivered) of a flow over the three phases, when both are known."""
    off = got = 0
    for p in PHASES:
        f = real["phases"][p]["flows"].get(name) or {}
        if f.get("offered") is None or f.get("delivered") is None:
            return None
        off += int(f["offered"])
        got += int(f["delivered"])
    return (off, got) if off else None


def _real_drops(real: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in PHASES:
        for k, v in real["phases"][p]["dropped"].items():
            out[k] = out.get(k, 0) + int(v or 0)
    return out


def _real_network_cpu_us(real: Mapping[str, Any]) -> float | None:
    """Network threads' CPU per frame at the NIC over the device's whole life (µs), with
    libshield's own time in the RX interrupt (``shield_ns``: the tick hook's harvest runs
    in whichever thread the tick hit, mostly not a network thread)."""
    threads = real.get("threads_cpu_s") or {}
    names = {*NETWORK_THREADS, *(t[:11] for t in STACK_TASKS.get(real.get("stack"), ()))}
    netif = real.get("netif") or {}
    # the MPS2 board's interrupt is a thread of its own, with libshield's hook in it
    hook = 0 if ISR_THREAD in threads else (netif.get("shield_ns") or 0) / 1e9
    cpu = sum(v for k, v in threads.items() if k in names) + hook
    frames = netif.get("nic_frames")
    return cpu / frames * 1e6 if cpu and frames else None


def _sim_network_cpu_us(sim: Mapping[str, Any]) -> float | None:
    cpu = sum(float(sim.get("cpu", {}).get(k) or 0.0) for k in _SIM_NETWORK_CPU)
    frames = sim.get("totals", {}).get("offered")
    return cpu * float(sim["duration_s"]) / frames * 1e6 if cpu and frames else None


def _offered_why(real: Mapping[str, Any], sim: Mapping[str, Any]) -> str | None:
    """Why the frames at the NIC differ, where the rig's own counts say: the host dropped
    frames between the device's link and the target's NIC (a raw socket's buffer), or the
    simulated flood's rate is not this run's."""
    parts = []
    traffic = real.get("traffic") or {}
    link, nic = traffic.get("device_link_rx"), real["phases"]["attack"].get("frames_at_nic")
    if link and nic is not None and link > 1.05 * nic:
        parts.append(
            f"{link - nic} frames of the attack reached the device's link but not the "
            "target's NIC (the host dropped them before it; the simulator's NIC loses none)"
        )
    flood = next((n for n in sim.get("flows", {}) if n in real.get("flows", {})
                  and real["flows"][n].get("protocol") == "tcp"
                  and real["flows"][n].get("offered") is None), None)  # fmt: skip
    seconds = real["phases"]["attack"].get("seconds") or 0
    if flood and seconds and traffic.get("flood_in_pps"):
        sim_pps = sim["flows"][flood]["offered"] / seconds
        if abs(sim_pps - traffic["flood_in_pps"]) > 0.05 * traffic["flood_in_pps"]:
            parts.append(
                f"the simulated flood offered {sim_pps:,.0f} pkt/s, this run's "
                f"{traffic['flood_in_pps']:,.0f} (the rig simulates the mean rate of its SYN runs)"
            )
    return "; ".join(parts) or None


def _quantities(
    real: Mapping[str, Any],
    sim: Mapping[str, Any],
    model: str = "preset",
    same_drops: Mapping[str, str] | None = None,
    basis: str = "the scenario's SYN flood",
) -> list[dict[str, Any]]:
    """The quantities of one real run against one simulation (``model``: its name in
    ``twin.json``; ``same_drops``: the simulation's drop reasons that are a real one under
    its own name, :data:`.fit.BOARD_DROPS`)."""
    period_us = float(real["critical_period_ms"]) * 1e3
    unmodelled = (
        f"the simulator has no model of the {ATTACK_LABEL[real['attack']]}: held against "
        f"{basis}"
        if real["attack"] != "syn"
        else None
    )
    host = real.get("clock") != "guest"
    # an emulated NIC's board model is fed the frames its FIFO passed (.fit.flood_passed)
    passed = model != "preset" and board_preset(real) in EMULATED_NIC
    rows: list[dict[str, Any]] = []

    def add(name: str, kind: str, s: Any, r: Any, unit: str, why: str | None = None) -> None:
        tol = TOLERANCES[kind]
        if s is None or r is None:
            agrees, off = False, None
        else:
            agrees = tol.agrees(float(s), float(r), period_us)
            allowed = tol.allowed(float(r), period_us)
            off = (
                (0.0 if agrees else None)
                if tol.kind == "verdict"
                else abs(float(s) - float(r)) / allowed
                if allowed
                else None
            )
        rows.append(
            {
                "name": name,
                "kind": kind,
                "unit": unit,
                "sim": s,
                "real": r,
                "tolerance": tol.text,
                "agrees": bool(agrees),
                # the difference in units of the tolerance (1: at its edge); a verdict: None
                "off_by": None if off is None else round(off, 3),
                "why": None if agrees else "; ".join(w for w in (unmodelled, why) if w) or None,
            }
        )

    # the MPS2 board counts the frames handed to its emulated NIC, its FIFO's drops among them
    into = all("frames_into_nic" in real["phases"][p] for p in PHASES) and not passed
    add(
        "frames at the NIC",
        "frames_at_nic",
        sim["totals"].get("offered"),
        _sum_phases(real, "frames_into_nic" if into else "frames_at_nic"),
        "frames",
        _offered_why(real, sim) if not passed else None,
    )
    sim_flows = sim.get("flows", {})
    rd, sd = _real_drops(real), dict(sim.get("totals", {}).get("dropped", {}))
    fifo = rd.pop(NIC_FIFO_FULL, 0) if passed else 0  # not the device's: not compared
    for mine, theirs in (same_drops or {}).items():  # one mechanism, two names
        if mine in sd:
            sd[theirs] = sd.pop(mine) + (sd.get(theirs) or 0)
    only = {k: v for k, v in rd.items() if v and k not in sd}
    wall = (  # what a fit of the stack's ceiling does to the rest (docs/decisions/twin.md)
        "the fitted cost per frame is the stack's wall time per frame, not its CPU time: "
        "the model spends it on the device's CPU, taking it from the other tasks"
    )
    # the board's model has the stack's buffers; what it cannot have is where their
    # ceiling comes from (docs/decisions/twin.md, "The unprotected stack's ceiling")
    ceiling = (
        _CEILING.get(str(real.get("stack")), _CEILING["plustcp"])
        if not passed
        else "on the MPS2 board the stack's ceiling is its CPU ("
        + _MPS2_STACK.get(str(real.get("stack")), _MPS2_STACK["plustcp"])
        + " on the emulated Cortex-M3: docs/decisions/twin-mps2.md); the model's stack cost "
        "a frame is a SYN's"
    ) if any(rd.get(r) for r in (same_drops or {}).values()) else None
    lost_in_stack = (
        "the real target also dropped frames where the simulator cannot ("
        + ", ".join(f"{k} {v}" for k, v in sorted(only.items()))
        + ")"
        if only
        else ceiling
    )
    if fifo:  # the flows' frames the emulator dropped before the device: the model has them
        lost_in_stack = "; ".join(
            w for w in (f"the emulated NIC's FIFO dropped {fifo} frames, the flows' among "
                        f"them: {EMULATOR_FIFO}", lost_in_stack) if w
        )  # fmt: skip
    for name in real.get("flows", {}):
        rf, sf = _real_flow(real, name), sim_flows.get(name) or {}
        if rf is None or not sf.get("offered"):
            continue
        add(
            f"{name}: delivered fraction",
            "delivered_fraction",
            round(sf["delivered"] / sf["offered"], 4),
            round(rf[1] / rf[0], 4),
            "fraction",
            lost_in_stack if model != "fitted" or not ceiling else f"{ceiling}; {wall}",
        )
        taken = (real["flows"].get(name) or {}).get("taken_by_driver")
        if passed and taken:  # protected: the flow's frames the NIC passed, counted per flow
            add(
                f"{name}: delivered fraction of the frames the NIC passed",
                "delivered_fraction",
                round(sf["delivered"] / sf["offered"], 4),
                round(min(1.0, real["flows"][name]["delivered"] / taken), 4),
                "fraction",
                None,
            )
    for reason in sorted(set(rd) | set(sd)):
        r, s = rd.get(reason), sd.get(reason)
        if not (r or s):
            continue
        why = None
        if r is None:
            why = "the real target has no such drop reason"
        elif s is None:
            why = _REAL_ONLY.get(reason, "the simulator has no such drop reason")
        if why is None and not rows[0]["agrees"]:
            why = "the frames at the NIC differ (above)"
        if why is None and reason in (same_drops or {}).values():
            why = ceiling
        add(f"drops: {reason}", "drops", s, r, "frames", why)
    # every drop, whatever its reason: the model's mechanism may differ (its driver queue
    # where the real stack runs out of buffers), what the target lost need not
    total_s, total_r = sum(v or 0 for v in sd.values()), sum(rd.values())
    frames_why = None if rows[0]["agrees"] else "the frames at the NIC differ (above)"
    add("drops: all reasons", "drops", total_s, total_r, "frames", frames_why or lost_in_stack)
    rc, sc = real["critical"], sim["critical"]
    misses = rc.get("missed_or_late", rc["misses"]) if not host else rc["misses"]
    stalls = (
        "the host's stalls: it held the FreeRTOS process for tens of milliseconds at times "
        "(ticks lost with it), which no model of the device has"
    )
    add(
        "critical task: deadlines missed", "misses", sc["misses"], misses, "cycles",
        stalls if host and misses and not sc["misses"] else wall if model == "fitted" else None,
    )  # fmt: skip
    jitter = (
        (
            "host time on a shared machine: the POSIX port's tick and the host's scheduling "
            "add jitter the model does not have"
            if model == "preset"
            else stalls
        )
        if host
        else _PASSED_EVENLY
        if passed
        else None
    )
    for q in ("p50", "p99"):
        add(
            f"critical task: cycle time {q}",
            "cycle_time",
            sc.get("cycle_time_us", {}).get(q),
            rc.get("cycle_time_us", {}).get(q),
            "µs",
            jitter,
        )
    rcpu = _real_network_cpu_us(real)
    if rcpu is not None:  # measured on the POSIX board (per-thread CPU time)
        add(
            "network work: CPU per frame at the NIC",
            "network_cpu",
            _rounded(_sim_network_cpu_us(sim)),
            _rounded(rcpu),
            "µs",
            "the scenario's platform preset has its board's per-frame costs, not this "
            "target's: fit them (docs/decisions/twin.md)"
            if model == "preset"
            else wall
            if model == "fitted"
            else f"the model processes the frames the real stack dropped: {ceiling}"
            if ceiling and real.get("stack") != "lwip"
            else "a thread's CPU time per frame on a shared host moves with the host's load "
            "and the mix of frames (docs/decisions/twin.md)",
        )
    return rows


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def build_twin(out: str | Path) -> dict[str, Any]:
    """``twin.json``'s content for the finished rig output folder ``out``."""
    out = Path(out)
    files = sorted((out / "runs").glob("*/summary.json"))
    if not files:
        raise UsageError(
            f"rig: twin.json: no {out}/runs/*/summary.json (not a rig freertos-tcp folder)"
        )
    fit_file = out / "sim" / FIT_RECORD
    fit = read_json(fit_file) if fit_file.is_file() else None
    runs, quantities = [], []
    target: dict[str, Any] = {}
    for f in files:
        real = read_json(f)
        if "phases" not in real or "variant" not in real:
            raise UsageError(f"rig: twin.json: {f}: not a rig freertos-tcp or lwip run's summary")
        name = f.parent.name
        target = target or {k: real.get(k) for k in ("target", "stack", "board", "clock")}
        # the scenario's preset; the board's own model where there is one (and it was
        # simulated: a folder without the scenarios has none); a fit of either
        board = (
            BOARD
            if board_preset(real) and simulation_for(out, real, BOARD)[0].is_file()
            else ""
        )
        models = {"preset": ""} | ({"board": board} if board else {})
        models |= {"fitted": board + FITTED} if fit else {}
        for model, suffix in models.items():
            sim_file, basis = simulation_for(out, real, suffix)
            if not sim_file.is_file():
                raise UsageError(
                    f"rig: twin.json: no {sim_file} (the simulation {name} is held to)"
                )
            same = BOARD_DROPS.get(board_preset(real) or "", {}) if BOARD in suffix else {}
            rows = _quantities(real, read_json(sim_file), model, same, basis)
            on = (fit or {}).get("fitted_on")
            held_out = (
                None
                if fit is None or model != "fitted"
                else name not in (on if isinstance(on, list) else [on])
            )
            runs.append(
                {
                    "run": name,
                    "model": model,
                    "variant": real["variant"],
                    "attack": real["attack"],
                    "simulation": str(sim_file.relative_to(out)),
                    "simulated": basis,
                    "held_out": held_out,
                    "agree": sum(q["agrees"] for q in rows),
                    "quantities": len(rows),
                }
            )
            quantities += [{"run": name, "model": model, "held_out": held_out, **q} for q in rows]
    return {
        "target": target,
        # the preset of the board's model ("board"), where the board has one
        "board_preset": board_preset(target),
        "tolerances": {k: t.text for k, t in TOLERANCES.items()},
        # the fit the "fitted" model comes from: its costs and the run it was fitted on
        "fit": fit,
        "runs": runs,
        "quantities": quantities,
        "disagree": [
            f"{q['run']} ({q['model']}): {q['name']}" for q in quantities if not q["agrees"]
        ],
    }


def write_twin(out: str | Path) -> Path:
    """Build ``out/twin.json`` from the folder ``out``, with each run's ``counters.csv``
    and ``calibrate/<run>.toml`` (a calibration file for its counters)."""
    out = Path(out)
    simulate_own_rates(out)
    twin = build_twin(out)
    for d in sorted((out / "runs").glob("*/")):
        if (d / "device.json").is_file() and (d / "summary.json").is_file():
            text = counters_csv(d)
            if text is not None:
                atomic_write(d / "counters.csv", text)
            cal = calibration_toml(out, d.name)
            if cal is not None:
                (out / "calibrate").mkdir(exist_ok=True)
                atomic_write(out / "calibrate" / f"{d.name}.toml", cal)
    return atomic_write(out / "twin.json", json.dumps(twin, indent=1, ensure_ascii=False) + "\n")


def twin_figure(out: Path, twin: Mapping[str, Any]) -> Path | None:
    """``fig_twin.png``: each quantity's distance from the real run in units of its
    tolerance (1: the edge), one marker per run; a verdict that differs, or a quantity
    one side cannot count, at the right edge."""
    qs = twin.get("quantities") or []
    if not qs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names: list[str] = []
    for q in qs:
        if q["name"] not in names:
            names.append(q["name"])
    runs = list(dict.fromkeys(r["run"] for r in twin["runs"]))
    models = list(dict.fromkeys(q.get("model", "preset") for q in qs))
    edge = 100.0
    fig, ax = plt.subplots(figsize=(8.5, 0.9 + 0.32 * len(names)), dpi=100)
    markers = "osD^v<>"
    series = [(run, m) for run in runs for m in models]
    for k, (run, model) in enumerate(series):
        i = runs.index(run)
        mine = [q for q in qs if q["run"] == run and q.get("model", "preset") == model]
        y = [names.index(q["name"]) + (k - (len(series) - 1) / 2) * 0.1 for q in mine]
        x = [
            min(edge, max(1e-3, q["off_by"])) if q["off_by"] is not None else edge
            if not q["agrees"] else 1e-3
            for q in mine
        ]  # fmt: skip
        c = ["tab:green" if q["agrees"] else "tab:red" for q in mine]
        hollow = len(models) > 1 and model == "preset"  # the preset hollow beside the others
        ax.scatter(x, y, marker=markers[i % len(markers)], s=22, zorder=3,
                   facecolors="none" if hollow else c, edgecolors=c)  # fmt: skip
    ax.axvline(1.0, color="0.3", lw=0.8, ls="--")
    from matplotlib.lines import Line2D

    handles = [  # the run by its marker, in grey: the colour is the verdict
        Line2D([], [], ls="", marker=markers[i % len(markers)], color="0.4", label=run)
        for i, run in enumerate(runs)
    ] + [Line2D([], [], color="0.3", lw=0.8, ls="--", label="tolerance")]
    if len(models) > 1:
        handles += [
            Line2D([], [], ls="", marker="o", mfc="none", color="0.4", label="preset (hollow)"),
            Line2D([], [], ls="", marker="o", color="0.4", label="board model, fit (filled)"),
        ]
    ax.set_xscale("log")
    ax.set_xlim(5e-4, edge * 2)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("|simulation − real| in units of the quantity's tolerance (log; right edge: "
                  "verdict differs or not counted)", fontsize=7)  # fmt: skip
    ax.set_title("simulation against the real target (green: agrees)", fontsize=9)
    ax.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    data = png_bytes(fig)
    plt.close(fig)
    return atomic_write(out / "fig_twin.png", data)


def _model(q: Mapping[str, Any]) -> str:
    m = q.get("model") or "preset"
    if m == "fitted":
        m += (
            ", held out"
            if q.get("held_out")
            else ", fitted on"
            if q.get("held_out") is False
            else ""
        )
    return m


def twin_rows(twin: Mapping[str, Any]) -> list[list[Any]]:
    """The report's rows: run, model, quantity, simulation, real, tolerance, verdict, why."""
    return [
        [q["run"], _model(q), q["name"], q["sim"], q["real"], q["tolerance"],
         "agrees" if q["agrees"] else "DISAGREES", q.get("why") or ""]
        for q in twin.get("quantities", [])
    ]  # fmt: skip
