"""The simulations a real run is held against, and the fit of a target's model.

Which simulation a real run of ``rig freertos-tcp`` / ``rig lwip`` is held against
(:func:`simulation_for`): the scenario at the run's own flood rate
(:func:`simulate_own_rates`, ``sim/<run>-own-rate``), else the rig's; on the preset of
the board the run was made on where there is one (:data:`BOARD_PRESETS`,
``sim/<name>-board``); with a fit, the same scenarios again with the fitted costs
(:func:`simulate_fitted`, ``sim/<name>-fitted``).
A run's per-second counters on the simulator's timeline (:func:`counters_csv`,
``counters.csv``) and a calibration file that fits the board's model (else the
scenario's) to them (:func:`calibration_toml`, the knobs and their physical bounds in
:data:`FIT_PARAMETERS`; docs/decisions/twin.md). The board's model from a target's runs
(``rtshield rig fit``, ``--calibrate``): what each run measured of it
(:func:`board_measurements`), the fit by fixed rules (:func:`board_fit`) within physical
bounds (:data:`BOARD_BOUNDS`, :func:`check_board_fit`), written as the shipped board
preset with each fitted number's provenance (:func:`board_from_runs`), and runs held
against such a preset (:func:`simulate_board`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.errors import UsageError
from rtshield.outputs import atomic_write, format_summary_json

from .device import flood_at
from .phases import ATTACK_LABEL, run_name_of
from .summary import IP_QUEUE_FULL, STACK_EXHAUSTED, STACK_TASKS

__all__ = [
    "BOARD",
    "BOARD_BOUNDS",
    "BOARD_DROPS",
    "BOARD_FITTED",
    "BOARD_FITTED_EMULATED",
    "BOARD_PRESETS",
    "COUNTERS",
    "EMULATED_NIC",
    "FITTED",
    "FIT_COLUMNS",
    "FIT_PARAMETERS",
    "CALIBRATE_RATES",
    "FIT_ATTACK",
    "FIT_RECORD",
    "INPUT_TASKS",
    "OWN_RATE",
    "TICK_REAL_BOUNDS",
    "board_fit",
    "board_from_runs",
    "board_measurements",
    "board_preset",
    "board_preset_text",
    "board_stack_costs",
    "check_board_fit",
    "stack_wakes",
    "calibration_toml",
    "counters_csv",
    "flood_passed",
    "read_json",
    "simulate_board",
    "simulate_fitted",
    "simulate_own_rates",
    "simulation_for",
]


def read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise UsageError(f"rig: twin.json: {path}: not readable JSON ({e})") from None


def simulation_for(out: Path, real: Mapping[str, Any], model: str = "") -> tuple[Path, str]:
    """The simulation a real run is held against, and in words what it simulated
    (``model``: ``""``, the scenario's preset; :data:`BOARD`, the board's preset;
    :data:`FITTED` after either, with the costs of a fit)."""
    v, attack = real["variant"], real["attack"]
    own = out / "sim" / f"{run_name_of(real)}{OWN_RATE}"
    passed = flood_passed(real) if board_preset(real) in EMULATED_NIC else None
    if BOARD in model and passed and (own / "summary.json").is_file():
        return (
            out / "sim" / f"{own.name}{model}" / "summary.json",
            f"a SYN flood as the emulated LAN9118 passed this run's {ATTACK_LABEL[attack]} "
            f"({passed[0]:,.0f} pkt/s for {passed[1]:.3f} s of the guest's clock)",
        )
    if (own / "summary.json").is_file():
        pps = real["traffic"]["flood_in_pps"]
        return (
            out / "sim" / f"{own.name}{model}" / "summary.json",
            f"the SYN flood at the rate this run measured ({pps:,.0f} pkt/s)"
            if attack == "syn"
            else f"a SYN flood at the rate of this run's {ATTACK_LABEL[attack]} "
            f"({pps:,.0f} pkt/s)",
        )
    at_rate = out / "sim" / f"{v}-rig-rate{model}" / "summary.json"
    if attack == "syn" and (out / "sim" / f"{v}-rig-rate" / "summary.json").is_file():
        return at_rate, "the SYN flood at the rate the rig measured"
    return out / "sim" / f"{v}{model}" / "summary.json", "the scenario's flood"


#: The fitted model's simulations: ``sim/<name>-fitted`` beside each ``sim/<name>``.
FITTED = "-fitted"
#: The board's model: ``sim/<name>-board``, the same scenario on the preset of the board
#: the run was made on (:data:`BOARD_PRESETS`), beside ``sim/<name>`` on the scenario's.
BOARD = "-board"
#: The preset that models each real board, by the run's (stack, board): its tick, its
#: stack's buffers, its per-frame costs measured from the rig's counters
#: (docs/decisions/twin.md, "The POSIX board's model").
BOARD_PRESETS = {
    ("plustcp", "posix"): "posix-freertos-tcp",
    ("lwip", "posix"): "posix-freertos-lwip",
    ("plustcp", "mps2-an385"): "mps2-an385-freertos-tcp",
    ("lwip", "mps2-an385"): "mps2-an385-freertos-lwip",
}
#: What the board's model calls a drop the real stack counts under its own name: the
#: model's driver queue (the preset's ``[driver] queue``) is Plus-TCP's network buffers,
#: and lwIP's input messages to tcpip_thread (MEMP_NUM_TCPIP_MSG_INPKT).
BOARD_DROPS = {
    "posix-freertos-tcp": {"queue_full": STACK_EXHAUSTED},
    "posix-freertos-lwip": {"queue_full": IP_QUEUE_FULL},
    "mps2-an385-freertos-tcp": {"queue_full": STACK_EXHAUSTED},
    "mps2-an385-freertos-lwip": {"queue_full": IP_QUEUE_FULL},
}
#: The boards whose NIC is emulated (QEMU's LAN9118 on a TAP): their board's model is fed
#: the frames the emulated NIC passed, not the frames handed to it
#: (:func:`flood_passed`): its FIFO's drops are the emulator's (docs/decisions/twin-mps2.md).
EMULATED_NIC = frozenset({"mps2-an385-freertos-tcp", "mps2-an385-freertos-lwip"})
#: The steps in which :func:`flood_passed` lays the flood over the attack phase (s).
_PASSED_STEP_S = 0.1


def board_preset(real: Mapping[str, Any]) -> str | None:
    """The preset of the board a real run was made on, or ``None`` (no model of it yet)."""
    return BOARD_PRESETS.get((real.get("stack"), real.get("board")))


def flood_passed(real: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """The flood as an emulated board's NIC passed it: ``(frames a second of the board's
    own clock, seconds of it, the fraction of the frames handed to the NIC it passed)`` in
    the attack phase, or ``None`` where the run did not count the frames handed to its NIC.
    The frames the LAN9118 passed in the attack phase (``frames_at_nic``) times the flood's
    share of the frames handed to it (its FIFO drops whatever arrives when it is full: the
    passed frames are the offered mix), over the phase's length on the guest's clock
    (``device_seconds``: shorter than the host's when QEMU fell behind)."""
    att = (real.get("phases") or {}).get("attack") or {}
    into, passed = att.get("frames_into_nic"), att.get("frames_at_nic")
    secs = att.get("device_seconds") or att.get("seconds")
    if not into or passed is None or not secs:
        return None
    flood = (real.get("traffic") or {}).get("flood_in")
    share = min(1.0, flood / into) if flood else 1.0
    return passed * share / secs, float(secs), min(1.0, passed / into)


def _flood_passed_at(data: dict[str, Any], real: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario table ``data`` with the traffic as the emulated NIC passed it
    (:func:`flood_passed`): in the attack phase the flood at the passed rate for the
    phase's guest seconds, and each constant UDP flow at its rate on the guest's clock (the
    host's phase in the guest's seconds) times the fraction passed; laid out in whole
    milliseconds' steps over the scenario's phases (as many as the simulator's limit of
    rates allows, at least :data:`_PASSED_STEP_S` long; the rest of the attack phase idle:
    time the guest did not live)."""
    import copy

    from rtshield.schema.fields import limits
    from rtshield.units import duration_ns, rate_hz

    pps, secs, frac = flood_passed(real) or (0.0, 0.0, 1.0)
    host_s = float(real["phases"]["attack"].get("seconds") or secs)
    t = copy.deepcopy(data)
    flood = next((f for f in t.get("flows", [])
                  if f.get("protocol") == "tcp" and f.get("pattern") == "steps"), None)  # fmt: skip
    if flood is None:
        return t
    phase_ms = round(duration_ns(flood["step_every"], "flows.step_every") / 1e6)
    most = min(limits()["rates"] // len(flood["rates"]), round(phase_ms / 1e3 / _PASSED_STEP_S))
    n = max(k for k in range(1, max(1, most) + 1) if phase_ms % k == 0)
    on = min(n, round(secs * 1e3 * n / phase_ms))
    attack = [not _is_zero(r) for r in flood["rates"]]

    def laid(idle: str, during: float) -> list[str]:
        out: list[str] = []
        for a in attack:
            out += [f"{during:.0f}pps"] * on + ["0pps"] * (n - on) if a else [idle] * n
        return out

    flood["rates"] = laid("0pps", pps)
    flood["step_every"] = f"{phase_ms // n}ms"
    for f in t["flows"]:
        if f.get("protocol") == "udp" and f.get("pattern") == "constant" and "rate" in f:
            hz = rate_hz(f["rate"], "flows.rate")
            f |= {"pattern": "steps", "step_every": flood["step_every"],
                  "rates": laid(f"{hz:g}pps", hz * host_s / secs * frac)}  # fmt: skip
            del f["rate"]
    return t


def _is_zero(rate: Any) -> bool:
    from rtshield.units import rate_hz

    return rate_hz(rate, "flows.rates") == 0


def _on_board(data: dict[str, Any], preset: str) -> dict[str, Any]:
    """A copy of a scenario table on the board's preset. The rig gives the unprotected
    variant's network task the stock priority as ``[driver] priority``; where the board's
    model has that task of its own (its preset's ``[defaults.driver] input_priority``: the
    stock driver's input task, docs/model.md), the stock priority is that task's and the
    driver task (the stack's task) keeps the board's priority."""
    import copy

    from rtshield.scenario import load_platform

    t = copy.deepcopy(data)
    t.setdefault("scenario", {})["platform"] = preset
    board = load_platform(preset)[2].get("driver", {})
    drv = t.get("driver", {})
    if "input_priority" in board and "rx" not in t and "priority" in drv:
        drv["input_priority"] = drv["priority"]
        drv["priority"] = board["priority"]
    return t


#: Where :func:`simulate_fitted` records the fit it simulated (``sim/fit.json``).
FIT_RECORD = "fit.json"


#: A SYN run's own simulation: ``sim/<run>-own-rate``, its flood at the rate that run
#: measured (the rig's ``sim/<variant>-rig-rate`` has the mean of its SYN runs).
OWN_RATE = "-own-rate"


def _simulate_into(d: Path, data: dict[str, Any], origin: str) -> dict[str, Any]:
    """Simulate the scenario table ``data``; write ``d/summary.json`` and the scenario as
    ``d/scenario.toml`` (its first line says where it came from: ``origin``); return the
    summary."""
    import tomli_w

    from rtshield.runner import simulate
    from rtshield.scenario import parse_scenario

    sc = parse_scenario(data, origin=origin)
    d.mkdir(exist_ok=True)
    summary = simulate(sc).summary()
    atomic_write(d / "summary.json", format_summary_json(summary))
    atomic_write(
        d / "scenario.toml", f"# {origin} (written by rtshield rig)\n" + tomli_w.dumps(data)
    )
    return summary


def simulate_own_rates(out: str | Path) -> dict[str, dict[str, Any]]:
    """Simulate each run's scenario (``sim/<variant>/scenario.toml``) again with the
    flood at the rate that run measured, into ``sim/<run>-own-rate/``: the simulation
    it is held against, in ``twin.json`` and in ``comparison.json``'s claims (two runs'
    floods differ by tens of percent on a loaded host, and the frames and drops with
    them). The simulator's flood is a SYN flood: an ARP flood or a scan is simulated as
    one at its rate (what each frame costs the receive path is then a SYN's). Where the
    run's board has a preset (:func:`board_preset`), the same again on it,
    ``sim/<run>-own-rate-board``, and each variant's scenario with its own flood,
    ``sim/<variant>-board``. Returns each run's own-rate summary on the scenario's
    preset, by run name."""
    from rtshield.tomlfile import read_toml

    out = Path(out)
    written: dict[str, dict[str, Any]] = {}
    boards: set[tuple[str, str]] = set()
    for f in sorted((out / "runs").glob("*/summary.json")):
        real = read_json(f)
        board = board_preset(real)
        variant = str(real.get("variant"))
        scen = out / "sim" / variant / "scenario.toml"
        if board and (variant, board) not in boards and scen.is_file():
            boards.add((variant, board))
            _simulate_into(
                out / "sim" / (variant + BOARD),
                _on_board(read_toml(scen), board),
                f"{scen} on the board's preset {board}",
            )
        pps = (real.get("traffic") or {}).get("flood_in_pps")
        if not pps or not scen.is_file():
            continue
        origin = f"{scen}, the flood at {pps:.0f} pkt/s as in {f.parent.name}"
        data = flood_at(read_toml(scen), float(pps))
        written[f.parent.name] = _simulate_into(
            out / "sim" / (f.parent.name + OWN_RATE), data, origin
        )
        if board in EMULATED_NIC and flood_passed(real):
            pps_nic, secs, _ = flood_passed(real) or (0.0, 0.0, 1.0)
            _simulate_into(
                out / "sim" / (f.parent.name + OWN_RATE + BOARD),
                _on_board(_flood_passed_at(read_toml(scen), real), board),
                f"{scen}, the flood as the emulated NIC passed it in {f.parent.name} "
                f"({pps_nic:.0f} pkt/s for {secs:.3f} s of the guest's clock), on the board's "
                f"preset {board}",
            )
        elif board:
            _simulate_into(
                out / "sim" / (f.parent.name + OWN_RATE + BOARD),
                _on_board(data, board),
                f"{origin}, on the board's preset {board}",
            )
    return written


def simulate_fitted(
    out: str | Path, best: str | Path, option: str = "--fitted", what: str = "calibrate's best.toml"
) -> dict[str, Any]:
    """Simulate every scenario of ``out/sim/*/scenario.toml`` again with the costs of a
    fit (``best``: ``rtshield calibrate``'s ``best.toml``, its ``[costs]`` table) into
    ``sim/<name>-fitted/``; record the fit in ``sim/fit.json``. The run it was fitted on
    is the calibration's name when the rig wrote it (``rig-<run>@<folder id>``) and the
    folder is this one; every other run is held out."""
    from rtshield.scenario import load_platform
    from rtshield.tomlfile import parse_toml, read_toml

    out, best = Path(out), Path(best)
    if not best.is_file():
        raise UsageError(f"rig report: {option} {best}: no such file ({what})")
    text = best.read_text(errors="replace")
    costs = parse_toml(text, str(best)).get("costs")
    if not isinstance(costs, dict) or not costs:
        raise UsageError(f"rig report: {option} {best}: no [costs] table (nothing fitted to apply)")
    m = re.match(r"# rtshield calibrate rig-([^@\s]+)@(\w+): ", text)
    b = re.search(r"^# fitted on: ([^@\n]+)@(\w+)$", text, re.M)  # rig fit's board.toml
    fitted_on: str | list[str] | None = (
        m.group(1)
        if m and m.group(2) == _folder_id(out) and (out / "runs" / m.group(1)).is_dir()
        else None  # fitted on another folder's run: every run here is held out
    )
    if b:
        fitted_on = b.group(1).split() if b.group(2) == _folder_id(out) else []
    scens = sorted(
        p for p in (out / "sim").glob("*/scenario.toml") if not p.parent.name.endswith(FITTED)
    )
    if not scens:
        raise UsageError(
            f"rig report: no {out}/sim/*/scenario.toml (a run before rtshield wrote them)"
        )
    for scen in scens:
        data = read_toml(scen)
        # a cost the scenario's preset has no use for (a board's driver_wake_input on a
        # preset without an input task) is not applied: a scenario may set only its own
        plat = data.get("scenario", {}).get("platform")
        own = set(load_platform(plat)[1]) if isinstance(plat, str) else set(costs)
        data.setdefault("costs", {}).update({k: v for k, v in costs.items() if k in own})
        _simulate_into(
            out / "sim" / (scen.parent.name + FITTED), data, f"{scen} with the costs of {best}"
        )
    fit = {"best": str(best.resolve()), "costs": costs, "fitted_on": fitted_on}
    atomic_write(out / "sim" / FIT_RECORD, json.dumps(fit, indent=1) + "\n")
    return fit


#: What a fit of the POSIX board's model may move, within physical bounds
#: (docs/decisions/twin.md): ``(key, low, high, why these bounds)``.
FIT_PARAMETERS: tuple[tuple[str, str, str, str], ...] = (
    (
        "costs.isr_per_packet",
        "0.2us",
        "50us",
        "the receive path's work per frame before the stack (on the POSIX board's model: "
        "the network task moving a frame into one of the stack's buffers): from a cached "
        "copy on a GHz core to a system call on a loaded host",
    ),
    (
        "costs.driver_per_packet",
        "0.5us",
        "200us",
        "the stack's work per frame (the IP task's protocol processing, a reply sent), "
        "the same range",
    ),
)
#: The counters a fit matches: what the receive path got done and the critical task's
#: cycles (``offered`` is what the rig sent: an input, not a result).
FIT_COLUMNS = ("processed", "cycles", "misses")


def _folder_id(out: Path) -> str:
    """A short id of the rig's output folder, in a calibration's name: a fit names the run
    and the folder it was made on (another folder's run of the same name is held out). The
    folder as the user gave it (a rig run writes its files in a staging folder beside it)."""
    import hashlib

    from rtshield.outputs import shown

    return hashlib.sha256(str(shown(Path(out)).resolve()).encode()).hexdigest()[:10]


def calibration_toml(out: Path, run: str) -> str | None:
    """A calibration file (docs/calibrate.md) that fits the scenario ``run`` was held
    against to the run's ``counters.csv``; ``None`` without both."""
    import tomli_w

    real = out / "runs" / run
    summary = read_json(real / "summary.json")
    sim_file, _ = simulation_for(out, summary, BOARD if board_preset(summary) else "")
    scen = sim_file.parent / "scenario.toml"
    if not (scen.is_file() and (real / "counters.csv").is_file()):
        return None
    data = {
        "calibration": {
            "name": f"rig-{run}@{_folder_id(out)}",
            "description": f"this target's model fitted to the rig's run {run} (per-second "
            "counters on the simulator's timeline)",
            "budget": 40,
            "seed": 1,
        },
        "objective": {
            "kind": "counters",
            "scenario": f"../{scen.relative_to(out)}",
            "csv": f"../runs/{run}/counters.csv",
            "columns": list(FIT_COLUMNS),
        },
        "parameter": [
            {"key": k, "low": lo, "high": hi, "note": why} for k, lo, hi, why in FIT_PARAMETERS
        ],
    }
    head = (
        f"# Fit this target's model to the run {run} (written by rtshield rig):\n"
        f"#   rtshield calibrate {out.name}/calibrate/{run}.toml --out FIT\n"
        "# then hold the fitted costs against the other runs (docs/decisions/twin.md).\n"
    )
    return head + tomli_w.dumps(data)


#: The columns :func:`counters_csv` writes (each one of rtshield calibrate's counters).
COUNTERS = ("offered", "received", "processed", "cycles", "misses")


def counters_csv(run_dir: Path) -> str | None:
    """A real run's per-second counters on the simulator's timeline, in the columns of
    ``rtshield calibrate`` (docs/calibrate.md): the three phases back to back (phase k's
    second j at ``t_s = k * phase + j``; the breaks between them left out, as the
    simulated run has none). ``offered``: frames at the target's NIC; ``received``: of
    them, the ones its receive ring took; ``processed``: frames handed to the stack;
    ``cycles``: critical cycles that ended; ``misses``: deadlines that passed unmet.
    ``None`` when a phase is not a whole number of seconds."""
    real = read_json(run_dir / "summary.json")
    dev = read_json(run_dir / "device.json")
    bounds = real.get("device_bounds_ns") or real["bounds_ns"]
    phase_s = (bounds[0][1] - bounds[0][0]) / 1e9
    if abs(phase_s - round(phase_s)) > 1e-6 or round(phase_s) < 1:
        return None
    snaps = dev["snapshots"]
    t = np.array([s["t_ns"] for s in snaps], dtype=np.int64)

    def at(key: str, when: int) -> float:
        """The counter at ``when`` (linear between the device's 100 ms snapshots)."""
        v = np.array([s[key] for s in snaps], dtype=np.float64)
        return float(np.interp(when, t, v))

    cyc = np.fromfile(run_dir / "cycles.bin", dtype="<u8").reshape(-1, 4).astype(np.int64)
    lines = [
        f"# {run_dir.name}: per-second counters of the real run on the simulator's timeline "
        "(written by rtshield rig)",
        "t_s," + ",".join(COUNTERS),
    ]
    for k, (lo, _hi) in enumerate(bounds):
        for j in range(round(phase_s)):
            a, b = lo + j * 1_000_000_000, lo + (j + 1) * 1_000_000_000
            nic = at("nic_frames", b) - at("nic_frames", a)
            ring = at("ring_full", b) - at("ring_full", a)
            vals = {
                "offered": nic,
                "received": nic - ring,
                "processed": at("to_ip_task", b) - at("to_ip_task", a),
                "cycles": int(((cyc[:, 2] >= a) & (cyc[:, 2] < b)).sum()),
                "misses": int(((cyc[:, 3] >= a) & (cyc[:, 3] < b) & (cyc[:, 3] > 0)).sum()),
            }
            row = [f"{k * round(phase_s) + j}"]
            row += [f"{max(0.0, vals[c]):.0f}" for c in COUNTERS]
            lines.append(",".join(row))
    return "\n".join(lines) + "\n"


#: The task that moves each frame from the NIC into the stack on the stock (unprotected)
#: build of each stack on the POSIX board: Plus-TCP's network task (rig/freertos/posix),
#: lwIP's stock input task (rig/freertos/lwip/rts_netif_lwip.c).
INPUT_TASKS = {"plustcp": "rts-net", "lwip": "ethif"}
#: libshield's execution paths (``device.json`` ``shield_paths``) and the preset cost that
#: models each (docs/model.md, "Costs").
_PATH_COSTS = {"enqueue": "rx_path_regular", "raise": "rx_path_prio_raise",
               "flow_limit": "rx_path_rejected"}  # fmt: skip


def _thread_cpu_ns(dev: Mapping[str, Any], name: str) -> int:
    """A thread's CPU time from ``device.json`` (names ``<task name cut to 11>#<tid>``)."""
    return sum(
        int(v) for k, v in (dev.get("threads_cpu_ns") or {}).items()
        if k.split("#")[0] == name[:11]
    )  # fmt: skip


def board_measurements(run_dir: str | Path) -> dict[str, float]:
    """What one real run on the POSIX board measured of its own model, the numbers a board's
    preset records with their provenance (``platforms/posix-freertos-*.toml``;
    docs/decisions/twin.md), read from the run's ``device.json`` and ``cycles.bin`` (its
    stack from ``summary.json``). Times in µs:

    - ``tick_real``: the median of the critical task's release-to-release time over the
      ticks of its period (where the run's ``cycles.bin`` is there);
    - ``stack_cpu``: the stack's tasks' CPU time, with ``to_stack`` frames handed to them
      and ``rx_irqs`` RX interrupts (each wakes them at most once), and ``stack_wakes``
      where the device counted the IP task's drains (Plus-TCP's ``ip_drains``, a wake-up
      each): what :func:`board_stack_costs` splits into a cost per frame and per wake-up;
    - unprotected: ``isr_per_packet``, the stock input task's CPU time over the frames at
      the NIC (its wake-ups folded in); ``input_loop``, the same task's CPU time inside its
      per-frame loop over those frames (``to_stack_ns``); ``input_wake``, the rest over the
      RX interrupts; ``stack_per_frame``, the stack's tasks' CPU time over the frames
      handed to them (their wake-ups folded in);
    - protected: libshield's CPU time per frame of each path (``rx_path_*``).

    On the MPS2 board (its RX interrupt counted its FIFO copies) the RX interrupt is a real
    one, which moves each frame out of the LAN9118's FIFO (``nic_copy_ns``; the interrupt's
    time is a thread of its own, ``eth-isr``, not the interrupted task's): ``fifo_copy``,
    its cost per frame of the run's frames, is ``isr_per_packet`` (unprotected) and is added
    to each ``rx_path_*`` (the model's interrupt costs one number a frame); unprotected,
    ``isr_entry_exit`` is the rest of the interrupt over its runs; the network task is then
    the model's driver with the stack's (``stack_cpu``, ``stack_per_frame``): it copies each
    frame into a network buffer for the IP task, at the IP task's priority unprotected.
    Guest time: instructions x 32 ns."""
    import numpy as np

    run_dir = Path(run_dir)
    dev = read_json(run_dir / "device.json")
    stack = str(read_json(run_dir / "summary.json").get("stack") or "")
    nif = dev["netif"]
    out: dict[str, float] = {}
    f = run_dir / "cycles.bin"  # a folder of kept records may leave it out: no tick_real
    cyc = np.fromfile(f, dtype="<u8").reshape(-1, 4).astype(np.int64) if f.is_file() else []
    period_ticks = int(dev["crit_period_us"]) * int(dev["tick_hz"]) // 1_000_000
    if len(cyc) > 1 and period_ticks > 0:
        out["tick_real"] = float(np.median(np.diff(cyc[:, 0]))) / period_ticks / 1e3
    copy_ns, copied = int(nif.get("nic_copy_ns") or 0), int(nif.get("nic_copy_frames") or 0)
    copy_us = copy_ns / copied / 1e3 if copied else 0.0  # 0: not the MPS2 board
    driver = (*STACK_TASKS.get(stack, ()), *((INPUT_TASKS.get(stack, ""),) if copied else ()))
    stack_ns = sum(_thread_cpu_ns(dev, t) for t in driver)
    frames, handed = int(nif["nic_frames"]), int(nif["to_ip_task"])
    out |= {"stack_cpu": stack_ns / 1e3, "to_stack": float(handed),
            "rx_irqs": float(nif.get("rx_irqs") or 0)}  # fmt: skip
    if copied:
        out["fifo_copy"] = copy_us
    counters = dev.get("stack") or {}
    drains = dict(zip(counters.get("names") or (), counters.get("values") or (), strict=False))
    if drains.get("ip_drains"):
        out["stack_wakes"] = float(drains["ip_drains"])
    if not dev["protect"]:
        inp = _thread_cpu_ns(dev, INPUT_TASKS.get(stack, ""))
        if copied and nif.get("nic_isr_runs"):
            out["isr_entry_exit"] = (nif["nic_isr_ns"] - copy_ns) / nif["nic_isr_runs"] / 1e3
            out["isr_per_packet"] = copy_ns / frames / 1e3
        elif frames and inp:
            out["isr_per_packet"] = inp / frames / 1e3
        if nif.get("to_stack_frames") and nif.get("to_stack_ns"):
            out["input_loop"] = nif["to_stack_ns"] / nif["to_stack_frames"] / 1e3
            if nif.get("rx_irqs") and inp:
                out["input_wake"] = (inp - nif["to_stack_ns"]) / nif["rx_irqs"] / 1e3
        if handed and stack_ns:
            out["stack_per_frame"] = stack_ns / handed / 1e3
    else:
        for path, key in _PATH_COSTS.items():
            p = (dev.get("shield_paths") or {}).get(path) or {}
            if p.get("frames"):
                out[key] = p["ns"] / p["frames"] / 1e3 + copy_us
    return out


def stack_wakes(run: Mapping[str, float]) -> float:
    """The stack's wake-ups in a run's :func:`board_measurements`: the IP task's drains
    where the device counted them, else its RX interrupts (each wakes the stack at most
    once)."""
    return float(run.get("stack_wakes") or run.get("rx_irqs") or 0.0)


def board_stack_costs(runs: list[Mapping[str, float]]) -> dict[str, float]:
    """The stack's cost per frame and per wake-up (µs: ``driver_per_packet``,
    ``driver_wake``) from runs' :func:`board_measurements`: the least-squares solution of
    ``stack_cpu = to_stack * driver_per_packet + wake-ups * driver_wake`` over the runs
    (:func:`stack_wakes`). Runs that hand the stack different frames per wake-up (a
    tick's batch, the few libshield admitted, or one frame a drain when the network task
    is below the IP task) are what tell the two costs apart."""
    import numpy as np

    rows = [r for r in runs if r.get("to_stack") and stack_wakes(r) and r.get("stack_cpu")]
    if len(rows) < 2:
        raise UsageError("rig: the stack's costs need two runs with frames handed to the stack")
    a = np.array([[r["to_stack"], stack_wakes(r)] for r in rows])
    b = np.array([r["stack_cpu"] for r in rows])
    (per, wake), _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    if rank < 2:
        raise UsageError(
            "rig: the runs do not tell the stack's cost per frame from its cost per wake-up "
            "(every run hands it as many frames per RX interrupt: fit unprotected and "
            "protected runs together)"
        )
    return {"driver_per_packet": float(per), "driver_wake": float(wake)}


def _bound_us(text: str) -> float:
    from rtshield.units import duration_ns

    return duration_ns(text, "bound") / 1e3


#: The physical bounds of each cost a board's preset records as measured (µs): ``key ->
#: (low, high, why)``; a fit outside them is refused (``rtshield rig fit``,
#: docs/decisions/twin.md, "A target's model from the target"). The receive path's and
#: the stack's per-frame costs are :data:`FIT_PARAMETERS`' (one home: what a counters fit
#: may move is what a board's fit may hold).
BOARD_BOUNDS: dict[str, tuple[float, float, str]] = {
    key.partition(".")[2]: (_bound_us(lo), _bound_us(hi), why)
    for key, lo, hi, why in FIT_PARAMETERS
} | {
    "driver_wake": (1.0, 2000.0, "a wake-up of the stack's tasks: one or two host-thread "
                    "switches of the port, from a microsecond on an idle core to 2 ms on a "
                    "loaded host"),
    **{key: (0.05, 100.0, "libshield's work on one frame in the RX interrupt (harvest, "
             "classify, admit or refuse): from tens of instructions on a GHz core to a "
             "loaded host's page faults, or a Cortex-M3 guest's thousand instructions with "
             "the frame's FIFO copy") for key in _PATH_COSTS.values()},
    "isr_entry_exit": (0.1, 50.0, "an RX interrupt's entry, exit and the handler's work "
                       "beside its copies: from tens of instructions on a GHz core to a "
                       "thousand on a Cortex-M3 guest at 31 MHz"),
}  # fmt: skip
BOARD_BOUNDS["stack_per_frame"] = BOARD_BOUNDS["driver_per_packet"]
#: ``tick_real`` within these multiples of the preset's tick: the port's timer thread
#: sleeps one tick, so a tick never comes early; three ticks a tick is a host too loaded
#: to measure a device on.
TICK_REAL_BOUNDS = (1.0, 3.0)
#: Each per-frame cost is measured on the SYN flood's run where there is one: the
#: simulator's flood is a SYN flood (an ARP flood or a scan is simulated as one at its
#: rate, :func:`simulate_own_rates`), so its frames should cost what a SYN costs.
FIT_ATTACK = "syn"
#: ``--calibrate``'s flood rates by stack, packets/s (``None``: full rate), each run at
#: each: the load points must hand the stack different frames per wake-up
#: (:func:`board_stack_costs`). lwIP's stack takes at most 8 input messages a tick
#: (~7 000 frames/s on the POSIX board: docs/decisions/twin.md): at full rate alone every
#: run is past it, so two rates below it; Plus-TCP's full-rate runs tell the two apart.
CALIBRATE_RATES: dict[str, tuple[float | None, ...]] = {
    "plustcp": (None,),
    "lwip": (2000.0, 5000.0, None),
}
#: Every number :func:`board_fit` measures (the rest of a board's preset is configured
#: or chosen, and kept from the shipped preset with its note).
BOARD_FITTED = ("tick_real", "isr_per_packet", "driver_per_packet", "driver_wake",
                *_PATH_COSTS.values())  # fmt: skip
#: The numbers :func:`board_fit` measures on a board with an emulated NIC
#: (:data:`EMULATED_NIC`, docs/decisions/twin-mps2.md, "The preset, number by number"):
#: instruction counts, one run's each (the :data:`FIT_ATTACK` run): the interrupt's rest
#: beside its copies, the copy a frame, the stack's CPU time a frame handed
#: (``stack_per_frame``, the preset's ``driver_per_packet``: its costs depend on what a
#: frame is far more than on the wake-ups, so no split), libshield's paths with the copy.
BOARD_FITTED_EMULATED = ("tick_real", "isr_entry_exit", "isr_per_packet", "stack_per_frame",
                         *_PATH_COSTS.values())  # fmt: skip


def _fit_rank(name: str) -> tuple[int, int, str]:
    """The order in which :func:`board_fit` prefers a run for a per-frame cost: the
    :data:`FIT_ATTACK` run at full rate, then at the highest rate asked (``-<N>pps``,
    :func:`.phases.run_name`), then any other by name."""
    m = re.fullmatch(rf".+-{FIT_ATTACK}(?:-(\d+)pps)?", name)
    if m is None:
        return (2, 0, name)
    return (0, 0, name) if m.group(1) is None else (1, -int(m.group(1)), name)


def board_fit(
    runs: Mapping[str, Mapping[str, float]], emulated: bool = False
) -> dict[str, tuple[float, str, str]]:
    """A board's measured numbers from runs' :func:`board_measurements` (by run name,
    ``<variant>-<attack>[-<N>pps]``): ``key -> (value in µs, the run or "all-runs",
    how)``. ``tick_real``: the median over the runs that have it; ``isr_per_packet`` and
    the ``rx_path_*`` costs: the first run by :func:`_fit_rank` that has it (the
    :data:`FIT_ATTACK` run at full rate where there is one); ``driver_per_packet`` and
    ``driver_wake``: :func:`board_stack_costs` over every run. ``emulated`` (a board with
    an emulated NIC): :data:`BOARD_FITTED_EMULATED`, each from the first run by
    :func:`_fit_rank` that has it. Raises :class:`UsageError` naming a number no run
    measured."""
    fit: dict[str, tuple[float, str, str]] = {}
    ticks = sorted((float(r["tick_real"]), n) for n, r in runs.items() if "tick_real" in r)
    if ticks:
        fit["tick_real"] = (
            float(np.median([t for t, _ in ticks])),
            "all-runs",
            "the median over " + ", ".join(sorted(n for _, n in ticks)),
        )
    one_run = (
        [k for k in BOARD_FITTED_EMULATED if k != "tick_real"]
        if emulated
        else ["isr_per_packet", *_PATH_COSTS.values()]
    )
    for key in one_run:
        have = sorted(n for n, r in runs.items() if key in r)
        if have:
            run = min(have, key=_fit_rank)
            fit[key] = (float(runs[run][key]), run, "")
    if emulated:
        return _all_fitted(fit, BOARD_FITTED_EMULATED)
    split = board_stack_costs(list(runs.values()))
    rows = [r for r in runs.values() if r.get("to_stack") and stack_wakes(r)]
    worst = max(
        abs(r["to_stack"] * split["driver_per_packet"] + stack_wakes(r) * split["driver_wake"]
            - r["stack_cpu"]) / r["stack_cpu"]
        for r in rows
    )  # fmt: skip
    wakes = "the IP task's drains" if any("stack_wakes" in r for r in rows) else "RX interrupts"
    how = (
        f"least squares over {len(rows)} runs of the stack's CPU time = frames handed x per "
        f"frame + {wakes} x per wake-up, each run within {100 * worst:.0f} %"
    )
    fit |= {k: (v, "all-runs", how) for k, v in split.items()}
    return _all_fitted(fit, BOARD_FITTED)


def _all_fitted(
    fit: dict[str, tuple[float, str, str]], keys: tuple[str, ...]
) -> dict[str, tuple[float, str, str]]:
    missing = [k for k in keys if k not in fit]
    if missing:
        raise UsageError(
            f"rig fit: no run measured {', '.join(missing)} (it needs an unprotected and a "
            "protected run, and a run's cycles.bin for tick_real)"
        )
    return fit


def check_board_fit(fit: Mapping[str, tuple[float, str, str]], tick_us: float) -> None:
    """Refuse a fit outside :data:`BOARD_BOUNDS` and :data:`TICK_REAL_BOUNDS` (the
    preset's tick ``tick_us``): one line naming the number, its runs and the bounds."""
    for key, (value, run, _) in fit.items():
        if key == "tick_real":
            lo, hi = (m * tick_us for m in TICK_REAL_BOUNDS)
            why = "a tick never comes early; three ticks a tick is a host too loaded to measure on"
        else:
            lo, hi, why = BOARD_BOUNDS[key]
        if not lo <= value <= hi:
            raise UsageError(
                f"rig fit: {key} = {value:.4g} us ({run}) is not physical: outside "
                f"{lo:g}-{hi:g} us ({why})"
            )


def _written(key: str, us: float) -> str:
    """A fitted number as a preset writes it: three significant digits, µs (ms above)."""
    if key == "tick_real" or us >= 1000:
        return f"{us / 1e3:.3g}ms"
    return f"{us:.3g}us"


def _fit_key(line: str) -> str:
    """The number of :func:`board_fit` a shipped preset's line holds: the one its note
    says it measured (``# measured: RUN KEY``; a line may hold it under another key, as
    ``driver_wake_input`` holds the stack's ``driver_wake`` where the model has an input
    task), else the line's own key; none (``""``) for a number measured otherwise (by
    hand), which the fit keeps."""
    m = re.search(r"# measured: (?:all-runs|(?:un)?protected-\w+) (\w+)", line)
    if m:
        return m.group(1)
    return "" if "# measured" in line else line.partition("=")[0].strip()


def board_preset_text(
    preset: str,
    fit: Mapping[str, tuple[float, str, str]],
    made_by: str,
    runs: str,
    fitted_on: str = "",
) -> str:
    """The shipped board preset ``preset`` (:data:`BOARD_PRESETS`) with the numbers of
    :func:`board_fit` in place of its measured ones, each with its provenance (``measured:
    RUN KEY``, how, ``made_by``: the command and commit that wrote it; ``runs``: the run
    folders in words; ``fitted_on``: their names and their rig folder's id, ``NAME ...@ID``,
    read by :func:`simulate_board`: those runs are not held out); every other line the
    shipped preset's, with its own note (a path's cost chosen "as" another path's: that
    path's fitted cost)."""
    from rtshield.scenario import platforms_dir

    base = (platforms_dir() / f"{preset}.toml").read_text()
    lines = base.splitlines()
    body = lines[next(i for i, x in enumerate(lines) if not x.startswith("#")):]
    head = [
        f"# Platform preset: the board of {preset}.toml, its measured numbers fitted from",
        f"# the target's own runs by {made_by}",
        f"# from the runs {runs}.",
        "# Each number marked \"measured: RUN KEY\" is rtshield.rig.freertos.fit's",
        "# board_measurements of that run (\"all-runs\": of every run, combined as said),",
        "# within the physical bounds of fit.BOARD_BOUNDS; every other number and note is",
        f"# the shipped {preset}.toml's, a path chosen \"as\" another at that path's fitted",
        "# cost (docs/decisions/twin.md, \"A target's model from the target\").",
        f"# fitted on: {fitted_on}",
    ]
    out: list[str] = []
    skipping = False
    assign = re.compile(r'^(\w+)(\s*)=(\s*)"[^"]*"')
    for line in body:
        if skipping and re.match(r"^\s+#", line):
            continue  # the shipped value's notes: about its own measurement
        skipping = False
        m = assign.match(line)
        same = re.search(r'# chosen: as "(\w+)"', line)  # a path no frame took: as another
        if m and same and _PATH_COSTS.get(same.group(1)) in fit:
            value = _written(m.group(1), fit[_PATH_COSTS[same.group(1)]][0])
            line = re.sub(r'"[^"]*"', f'"{value}"', line, count=1)
        elif m and m.group(1) == "source":
            line = f'source = "measured: {made_by}; {runs}"'
        elif m and _fit_key(line) in fit:
            key, measured = m.group(1), _fit_key(line)
            value, run, how = fit[measured]
            what = f"measured: {run} {measured}" + (f" ({how})" if how else "")
            start = f'{key}{m.group(2)}={m.group(3)}"{_written(key, value)}"'
            line = f"{start:<{max(len(start) + 1, line.find('#'))}}# {what}"
            skipping = True
        out.append(line)
    return "\n".join(head + out) + "\n"


def board_from_runs(run_dirs: list[Path], made_by: str) -> tuple[str, str]:
    """The board preset a target's runs measure (``run_dirs``: each a run's folder, with
    its ``summary.json`` and ``device.json``): its name and text (:func:`board_fit` within
    :func:`check_board_fit`, written by :func:`board_preset_text`, validated as a preset).
    Every run must be on one board that has a preset (:data:`BOARD_PRESETS`)."""
    from rtshield.scenario import load_platform, parse_preset

    boards: dict[tuple[Any, Any], list[str]] = {}
    runs: dict[str, dict[str, float]] = {}
    for d in run_dirs:
        if not ((d / "summary.json").is_file() and (d / "device.json").is_file()):
            raise UsageError(f"rig fit: {d}: not a run of rig freertos-tcp or lwip "
                             "(no summary.json and device.json)")  # fmt: skip
        if d.name in runs:
            raise UsageError(f"rig fit: two runs named {d.name}: fit one folder's runs at a time")
        real = read_json(d / "summary.json")
        boards.setdefault((real.get("stack"), real.get("board")), []).append(d.name)
        try:
            runs[d.name] = board_measurements(d)
        except (KeyError, TypeError, ValueError) as e:
            raise UsageError(f"rig fit: {d}: device.json lacks what the fit reads ({e})") from None
    if len(boards) != 1:
        raise UsageError("rig fit: the runs are on more than one target: " + "; ".join(
            f"{s} on {b}: {', '.join(n)}" for (s, b), n in boards.items()))  # fmt: skip
    (stack, board), = boards
    preset = BOARD_PRESETS.get((stack, board))
    if preset is None:
        raise UsageError(
            f"rig fit: {stack} on the {board} board has no board model to fit (boards: "
            + ", ".join(f"{s} on {b}" for s, b in BOARD_PRESETS) + ")"
        )
    fit = board_fit(runs, emulated=preset in EMULATED_NIC)
    check_board_fit(fit, load_platform(preset)[0].tick_ns / 1e3)
    from rtshield.outputs import shown

    parents = {d.parent for d in run_dirs}  # as the user knows them (not a staging folder)
    where = (
        f"{shown(run_dirs[0].parent)}/ ({', '.join(d.name for d in run_dirs)})"
        if len(parents) == 1
        else ", ".join(str(shown(d)) for d in run_dirs)
    )
    folders = {_folder_id(d.parent.parent) for d in run_dirs}
    on = " ".join(sorted(runs)) + "@" + (folders.pop() if len(folders) == 1 else "several")
    text = board_preset_text(preset, fit, made_by, where, on)
    parse_preset(text, f"the preset fitted from {where}")
    return preset, text


def simulate_board(out: str | Path, preset_file: str | Path) -> dict[str, Any]:
    """:func:`simulate_fitted` with a board preset (``rtshield rig fit``'s ``board.toml``):
    checked as a preset and as a model of the board ``out``'s runs were made on; the runs
    it was fitted on (its ``# fitted on:`` line, when they are ``out``'s) are not held
    out."""
    from rtshield.scenario import parse_preset

    out, preset_file = Path(out), Path(preset_file)
    if not preset_file.is_file():
        raise UsageError(f"rig report: --board {preset_file}: no such file (a board preset)")
    try:
        plat, _, _ = parse_preset(preset_file.read_text(errors="replace"), str(preset_file))
    except UsageError as e:
        raise UsageError(f"rig report: --board: not a board preset: {e}") from None
    boards = {board_preset(read_json(f)) for f in (out / "runs").glob("*/summary.json")}
    if boards != {plat.name}:
        on = ", ".join(sorted(str(b) for b in boards)) or "no runs"
        raise UsageError(
            f"rig report: --board {preset_file}: a preset of {plat.name}, but {out}'s runs "
            f"are on {on}"
        )
    return simulate_fitted(out, preset_file, "--board", "a board preset")
