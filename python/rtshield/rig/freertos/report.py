"""``report.html``: protected and unprotected side by side, a response-time figure
per attack, where each stack lost what, and the simulation against the real stack."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.outputs import atomic_write
from rtshield.rig.attacks import ATTACKS

from .phases import ATTACK_LABEL, rate_of, run_name_of
from .twin import twin_figure, twin_rows

__all__ = ["response_figure", "write_report"]


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return html.escape(str(v))


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def response_figure(out: Path, attack: str, runs: Sequence[Mapping[str, Any]]) -> Path | None:
    """``fig_<attack>.png``: the critical task's response time (end − release tick) per cycle
    over the run, unprotected and protected, the attack phase shaded (on the guest's clock
    each run's own: a guest that fell behind saw the phases shorter)."""
    mine = [r for r in runs if r["attack"] == attack]
    if not mine:
        return None
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 3.2), dpi=100)
    colours = {"unprotected": "tab:red", "protected": "tab:blue"}
    guest = mine[0].get("clock") == "guest"
    for r in mine:
        cyc = np.fromfile(out / "runs" / run_name_of(r) / "cycles.bin", dtype="<u8")
        cyc = cyc.reshape(-1, 4).astype(np.int64)
        bounds = r.get("device_bounds_ns") or r["bounds_ns"]  # the target's clock
        t0 = bounds[0][0]
        ok = cyc[:, 0] > 0
        t = (cyc[ok, 2] - t0) / 1e9
        resp = (cyc[ok, 2] - cyc[ok, 0]) / 1e6
        m = r["phases"]["attack"]["critical"]["misses"]
        at = f" at {rate_of(r):g} pkt/s" if rate_of(r) is not None else ""
        label = f"{r['variant']}{at}: {m} miss{'es' if m != 1 else ''} in the attack"
        ax.plot(t, resp, ".", ms=2, color=colours[r["variant"]], label=label)
        lo, hi = bounds[1]
        if guest:
            ax.axvspan((lo - t0) / 1e9, (hi - t0) / 1e9, color=colours[r["variant"]], alpha=0.08,
                       label=f"{ATTACK_LABEL[attack]}, {r['variant']} run")  # fmt: skip
    if not guest:  # one clock: the same span in every run
        ax.axvspan((lo - t0) / 1e9, (hi - t0) / 1e9, color="0.9", label=ATTACK_LABEL[attack])
    period_ms = mine[0]["critical_period_ms"]
    tick = "1 ms of guest time" if guest else "~1.1 ms host time"
    ax.axhline(
        period_ms,
        color="0.4",
        lw=0.8,
        ls="--",
        label=f"period, {period_ms:g} ms (a deadline is {period_ms:g} ticks of {tick})",
    )
    ax.set_yscale("log")
    ax.set_xlabel(f"time since the run started (s, {'guest' if guest else 'host'} time)")
    ax.set_ylabel("response time (ms, log)")
    ax.set_title(f"critical task, {ATTACK_LABEL[attack]}")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return atomic_write(out / f"fig_{attack}.png", buf.getvalue())


_CSS = (
    "body{font-family:sans-serif;max-width:75em;margin:2em auto}"
    "table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #bbb;padding:.25em .5em;text-align:right}"
    "th{background:#eee}td:first-child{text-align:left}"
)


def _flow_table(comp: Mapping[str, Any]) -> str:
    """Every flow, offered/delivered over the whole run: each simulated variant beside each
    real run of that variant (MODBUS flows: polls and answers in time; replayed captures:
    frames replayed and what the flow's socket received)."""
    names: list[str] = []
    for r in comp["runs"]:
        names += [n for n in r.get("flows", {}) if n not in names]
    if not names:
        return ""
    rows = []
    for v, s in comp["simulation"].items():
        fl = s.get("flows", {})
        rows.append([f"simulation, {v}"] + [_od(fl.get(n)) for n in names])
    for r in comp["runs"]:
        rows.append([f"real stack, {r['run']}"] + [_od(r.get("flows", {}).get(n)) for n in names])
    return "<h3>Every flow, whole run (delivered/offered)</h3>" + _table(["", *names], rows)


#: Each stack's name in the report (an older comparison.json names only the stack).
_STACK_NAME = {"plustcp": "FreeRTOS-Plus-TCP", "lwip": "lwIP"}


def _stack_table(comp: Mapping[str, Any], stack: str) -> str:
    """Where each part lost what in the attack phase: libshield's drops by reason beside
    the stack's own counters (lwIP's lwip_stats), one row per run."""
    names: list[str] = []
    for r in comp["runs"]:
        names += [n for n in r.get("stack_counters_attack", {}) if n not in names]
    if not names:
        return ""
    reasons: list[str] = []
    for r in comp["runs"]:
        reasons += [k for k, v in r["dropped_attack"].items() if v and k not in reasons]
    rows = [
        [r["run"]]
        + [r["dropped_attack"].get(k) for k in reasons]
        + [r.get("stack_counters_attack", {}).get(n) for n in names]
        for r in comp["runs"]
    ]
    return (
        f"<h2>Where the frames were lost (attack phase)</h2><p>Drops before the stack (the NIC, "
        f"libshield by reason) beside {html.escape(stack)}'s own counters.</p>"
        + _table(["run", *reasons, *(f"{stack}: {n}" for n in names)], rows)
    )


def _od(f: Mapping[str, Any] | None) -> str:
    return "—" if not f else f"{_fmt(f.get('delivered'))}/{_fmt(f.get('offered'))}"


def _twin_section(out: Path, twin: Mapping[str, Any] | None) -> str:
    """Simulation against the real target, quantity by quantity (``twin.json``): which
    quantities disagree, in one sentence, then the table and ``fig_twin.png``."""
    if not twin or not twin.get("quantities"):
        return ""
    fig = twin_figure(out, twin)
    qs = twin["quantities"]
    bad = [q for q in qs if not q["agrees"]]
    if bad:
        where: dict[str, list[str]] = {}  # each quantity once, with the runs it fails in
        for q in bad:
            where.setdefault(q["name"], []).append(f"{q['run']} ({q.get('model', 'preset')})")
        said = "; ".join(f"{n} in {', '.join(w)}" for n, w in where.items())
        verdict = f"{len(bad)} of {len(qs)} quantities disagree: {html.escape(said)}."
    else:
        verdict = f"All {len(qs)} quantities agree within their tolerances."
    basis = "; ".join(
        dict.fromkeys(f"{r['run']} against {r['simulated']}" for r in twin.get("runs", []))
    )
    board = twin.get("board_preset")
    if board:  # the board's model: the scenario on the board's own preset
        verdict += html.escape(
            f" The board's model: the scenario on the preset {board} (the board's measured "
            "tick, its stack's input limit, its per-frame costs; docs/decisions/twin.md)."
        )
    fit = twin.get("fit")
    if fit:  # the fitted model: which costs, fitted on which run
        costs = ", ".join(f"{k} = {v}" for k, v in fit["costs"].items())
        verdict += html.escape(
            f" The fitted model: the {'board' if board else 'preset'}'s model with {costs}, "
            f"fitted on {_fitted_on(fit.get('fitted_on'))}; every other run is held out."
        )
    img = f'<p><img src="{html.escape(fig.name)}" alt="fig_twin"></p>' if fig else ""
    return (
        "<h2>Does the simulation predict the real target?</h2>"
        f"<p><strong>{verdict}</strong></p><p>Each run is held against a simulation "
        f"({html.escape(basis)}); the real run over its three phases, the simulated run "
        "whole. Tolerances and the reasons: docs/rig.md; the numbers: <code>twin.json</code>.</p>"
        + _table(
            ["run", "model", "quantity", "simulation", "real", "tolerance", "verdict", "why"],
            twin_rows(twin),
        )
        + img
    )


def write_report(
    out: Path,
    comp: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    twin: Mapping[str, Any] | None = None,
) -> Path:
    """``report.html``: protected and unprotected side by side (with a response-time figure per
    attack when ``runs`` are given), then simulation vs real stack (with ``twin``, the
    content of ``twin.json``, quantity by quantity)."""
    figs = [response_figure(out, a, runs) for a in ATTACKS]
    if not runs:  # rebuilt from comparison.json: the figures already there
        figs = [out / f"fig_{a}.png" for a in ATTACKS if (out / f"fig_{a}.png").is_file()]
    fig_html = "".join(
        f'<p><img src="{html.escape(f.name)}" alt="{html.escape(f.stem)}"></p>' for f in figs if f
    )
    hp = comp["hp_flow"]
    tgt = comp.get("target") or {}
    guest = tgt.get("clock") == "guest"
    side = []
    for r in comp["runs"]:
        row = [
            r["run"],
            r["flood_in_pps"],
            r["frames_at_nic_pps"],
            r["to_ip_task"],
            r["misses"]["idle_before"],
            r["misses"]["attack"],
            r["misses"]["idle_after"],
        ]
        if guest:  # late on the board's timer: a miss the tick count may not see
            row.append((r.get("late_on_clock") or {}).get("attack"))
        row += [
            r.get("lateness_max_pct", {}).get("attack"),
            r["wakeup_p99_9_us"]["idle_before"],
            r["wakeup_p99_9_us"]["attack"],
            f"{r['hp'].get('delivered')}/{r['hp'].get('offered')}",
        ]
        if guest:
            row.append(f"{r.get('hp_delivered')}/{_fmt(r.get('hp_taken_by_driver'))}")
        row += [
            ", ".join(f"{k} {v}" for k, v in r["dropped_attack"].items() if v),
            r["cpu_per_frame_ns"].get("shield"),
            r["cpu_per_frame_ns"].get("to_stack"),
            r["cpu_per_frame_ns"].get("ip_task"),
        ]
        side.append(row)
    side_header = [
        "run",
        "flood reaching the device (pkt/s)",
        "frames at the target's NIC (pkt/s)",
        "frames handed to the stack (attack)",
        "misses idle before",
        "misses attack",
        "misses idle after",
    ]
    if guest:
        side_header.append("late on the guest clock, attack")
    side_header += [
        "worst lateness attack (%)",
        "wake-up p99.9 idle (µs)",
        "wake-up p99.9 attack (µs)",
        f"{hp} delivered/sent (attack)",
    ]
    if guest:
        side_header.append(f"{hp} delivered/taken by the driver (whole run)")
    side_header += [
        "drops in the attack phase",
        "libshield ns/frame",
        "copy to stack ns/frame",
        "stack task ns/frame",
    ]
    claim_rows = [
        [c["claim"], c["simulated_flood"], c["simulation"], c["real_stack"]]
        + ["confirmed" if c["confirmed"] else "not confirmed"]
        for c in comp["claims"]
    ]
    sim_rows = [
        [f"{v}, the scenario's flood", s["critical"]["cycles"], s["critical"]["misses"]]
        + [s["hp"].get("offered"), s["hp"].get("delivered")]
        for v, s in comp["simulation"].items()
    ]
    at = comp.get("simulation_at_rig_rate") or {}
    sim_rows += [
        [f"{v}, SYN flood at {at['syn_pps']:,.0f} pkt/s (the rig's)", s["critical"]["cycles"]]
        + [s["critical"]["misses"], s["hp"].get("offered"), s["hp"].get("delivered")]
        for v, s in at.items()
        if v != "syn_pps"
    ]
    sim_rows += [  # each SYN run's own simulation: the one its claims are held against
        [f"{run}, SYN flood at {s['syn_pps']:,.0f} pkt/s (this run's)", s["critical"]["cycles"]]
        + [s["critical"]["misses"], s["hp"].get("offered"), s["hp"].get("delivered")]
        for run, s in (comp.get("simulation_at_own_rate") or {}).items()
        if s.get("syn_pps")
    ]
    cap = [
        f"{r['run']}: {r.get('to_ip_task_pps', 0):,.0f} frames/s handed to the stack "
        f"of {r['frames_at_nic_pps']:,.0f} at the NIC"
        for r in comp["runs"]
        if r["variant"] == "unprotected"
    ]
    capacity = (
        "<p>What the real stack took in the attack phase, unprotected: "
        + html.escape("; ".join(cap))
        + ". The simulation runs the scenario's platform preset, whose per-frame costs are a "
        "microcontroller's, not this host's: where the two disagree on the unprotected claims, "
        "compare these rates with the preset's capacity.</p>"
        if cap
        else ""
    )
    stack = tgt.get("stack_name") or _STACK_NAME.get(tgt.get("stack") or "plustcp", "the stack")
    board = tgt.get("platform") or "the FreeRTOS POSIX port on this host"
    if guest:
        clock = (
            "Times are the emulated board's (guest time: instructions under QEMU's -icount, "
            "1 kHz tick); the phases are the rig's, mapped onto guest time with the board's "
            "sync lines. Frames the emulated NIC dropped (its FIFO full) are counted apart "
            "(nic_fifo_full), as a board's NIC drops would be; a UDP flow's latency mixes the "
            "two clocks and is not shown."
        )
    else:
        clock = (
            "Host time on a shared machine with a ~1 ms tick: judge by counts (misses, "
            "deliveries, drops), not by microseconds."
        )
    doc = f"""<!doctype html><html><head><meta charset="utf-8">
<title>rtshield rig {html.escape(tgt.get("target") or "freertos-tcp")}</title>
<style>{_CSS}</style>
</head><body>
<h1>{html.escape(stack)} under real floods: unprotected vs protected</h1>
<p>Scenario <code>{html.escape(comp["scenario"])}</code>. {html.escape(board)}: the real FreeRTOS
kernel and {html.escape(stack)} on the device side of the rig's namespaces; libshield in the
network interface's receive path (protected) or the stack's usual path (unprotected). Phases:
idle before, attack, idle after. {html.escape(clock)}</p>
<h2>Side by side</h2>
{_table(side_header, side)}
{fig_html}
{_stack_table(comp, stack)}
<h2>Simulation vs real stack</h2>
<p>The same scenario simulated (the scenario's platform preset, whole run; with the
scenario's flood, and with the SYN flood at the rate the rig's hping3 achieved) and run on
the real stack (attack phase). The scenario models a SYN flood: ARP-flood and scan runs are
held against the scenario's flood.</p>
{_table(["simulated variant", "cycles", "misses", f"{hp} offered", f"{hp} delivered"], sim_rows)}
{
        _table(
            [
                "claim of the simulation",
                "simulated with",
                "holds in simulation",
                "holds on the real stack",
                "verdict",
            ],
            claim_rows,
        )
    }
{_flow_table(comp)}
{capacity}
{_twin_section(out, twin)}
<p>Per-run details: <code>runs/*/summary.json</code>;
the simulator's: <code>sim/*/summary.json</code>.</p>
</body></html>
"""
    return atomic_write(out / "report.html", doc)


def _fitted_on(on: object) -> str:
    """The runs a fit was made on, in words (a calibration's one run, a board fit's runs)."""
    if isinstance(on, list):
        return ", ".join(on) if on else "another folder's runs"
    return str(on) if on else "a run not named"
