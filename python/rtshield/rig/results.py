"""Results of a rig run: the paper-style tables, histograms, ``summary.json`` and ``report.html``.

Everything here works from recorded cell summaries and cycle files, so a run's
report can be rebuilt (``rtshield rig report DIR``) and tested without root.
"""

from __future__ import annotations

import csv
import functools
import html
import io
import json
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from rtshield.outputs import atomic_write, format_summary_json
from rtshield.rig import cycles, host
from rtshield.rig.linux import ATTACK_LABEL, ATTACKS, BASE_CONFIGS

__all__ = [
    "detail_rows",
    "histogram_figure",
    "paper_table",
    "system_info",
    "text_table",
    "write_results",
]


@functools.cache
def paper_tables() -> dict[bool, dict[str, tuple[float, ...]]]:
    """The DoS controller study (arXiv 2007.08885), Tables 1 and 2, from ``paper_tables.csv``.

    Load (``False``: Table 1, ``True``: Table 2) -> configuration, in the paper's row
    order -> maximum cycle time (ms) idle and under each of :data:`ATTACKS`.
    """
    text = resources.files("rtshield.rig").joinpath("paper_tables.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    tables: dict[bool, dict[str, tuple[float, ...]]] = {False: {}, True: {}}
    for r in rows:
        load = {"off": False, "on": True}[r["load"]]
        tables[load][r["configuration"]] = tuple(float(r[k]) for k in ("idle", *ATTACKS))
    return tables


def system_info() -> dict[str, Any]:
    """Kernel, its real-time status, CPU model, load and the attack tools' versions:
    absolute figures depend on them."""
    return host.system_info(("hping3", "nmap", "stress-ng"))


# ------------------------------------------------------------------ tables


def _fmt_ms(v: Any) -> str:
    return "—" if v is None else f"{v:.3f} ms"


STAT_LABEL = {
    "max": "maximum",
    "p99_9": "99.9th percentile of the",
    "p99": "99th percentile of the",
}


def _phase_stat(cell: Mapping[str, Any], phase: str, stat: str) -> float | None:
    cm = cell.get("phases", {}).get(phase, {}).get("cycle_ms")
    return None if not cm else cm.get(stat)


def paper_table(
    cells: Sequence[Mapping[str, Any]], load: bool, stat: str = "max"
) -> tuple[list[str], list[list]]:
    """Tables 1/2 layout: one row per configuration; idle, SYN, ARP, nmap cycle time.

    ``stat`` is ``max`` (the paper's tables) or a percentile (``p99_9``,
    ``p99``). "Idle" is the largest idle value (phases before and after the
    attack) over the row's cells. A refused configuration says so.
    """
    header = ["", "Idle", *(ATTACK_LABEL[a] for a in ATTACKS)]
    mine = [c for c in cells if bool(c.get("load")) == load]
    names = list(dict.fromkeys(c["config"] for c in mine))
    rows_names = [n for n in BASE_CONFIGS if n in names] + [
        n for n in names if n not in BASE_CONFIGS
    ]
    rows = []
    for n in rows_names:
        row_cells = [c for c in mine if c["config"] == n]
        if all(c.get("status") != "ok" for c in row_cells):
            rows.append([n] + ["refused"] * 4)
            continue
        idle = [
            v
            for c in row_cells
            for ph in ("idle_before", "idle_after")
            if (v := _phase_stat(c, ph, stat)) is not None
        ]
        row = [n, _fmt_ms(max(idle) if idle else None)]
        for a in ATTACKS:
            c = next((c for c in row_cells if c["attack"] == a), None)
            if c is None:
                row.append("")
            elif c.get("status") != "ok":
                row.append("refused")
            else:
                row.append(_fmt_ms(_phase_stat(c, "attack", stat)))
        rows.append(row)
    return header, rows


def protection_table(
    cells: Sequence[Mapping[str, Any]], load: bool
) -> tuple[list[str], list[list]] | None:
    """Single-core configurations unprotected vs with each protection, per attack.

    Each entry: p99 / maximum of the attack phase, and for ``limit`` the flood
    packets/s it dropped at ingress. ``None`` when no protected cell ran.
    """
    mine = [c for c in cells if bool(c.get("load")) == load]
    prot = sorted({c["config"].split("+")[1] for c in mine if "+" in c["config"]})
    if not prot:
        return None
    header = ["configuration", "attack", "unprotected p99 / max", *(f"+{p}" for p in prot)]
    rows = []
    for code in [c for c in BASE_CONFIGS if c.startswith("S")]:
        for a in ATTACKS:
            base = _find(mine, code, a)
            if base is None:
                continue
            row = [code, ATTACK_LABEL[a], _p99_max(base)]
            for p in prot:
                c = _find(mine, f"{code}+{p}", a)
                cell = _p99_max(c) if c else ""
                dropped = (c or {}).get("traffic", {})
                d = dropped.get("syn_dropped_pps", 0) + dropped.get("arp_dropped_pps", 0)
                if c and d:
                    cell += f" ({d:.0f} pkt/s dropped)"
                row.append(cell)
            rows.append(row)
    return header, rows


def _find(cells: Sequence[Mapping[str, Any]], config: str, attack: str):
    return next((c for c in cells if c["config"] == config and c["attack"] == attack), None)


def _p99_max(c: Mapping[str, Any]) -> str:
    if c.get("status") != "ok":
        return "refused"
    cm = c.get("phases", {}).get("attack", {}).get("cycle_ms")
    return f"{cm['p99']:.3f} / {cm['max']:.3f} ms" if cm else "—"


def paper_reference(load: bool) -> tuple[list[str], list[list]]:
    header = ["paper (RPi 4, PREEMPT_RT)", "Idle", *(ATTACK_LABEL[a] for a in ATTACKS)]
    rows = [[k, *(f"{v:.3f} ms" for v in vals)] for k, vals in paper_tables()[load].items()]
    return header, rows


class _Phase(NamedTuple):
    """One phase of one cell, as the columns of :func:`detail_rows` read it."""

    stats: Mapping[str, Any]  # the phase's summary
    cm: Mapping[str, Any]  # its cycle times (ms)
    idle: float | None  # the cell's idle maximum (ms)
    tr: Mapping[str, Any]  # the cell's traffic in the attack phase, else empty


#: The columns of :func:`detail_rows` after "cell" and "phase": header, value of a phase.
_DETAIL_COLUMNS: list[tuple[str, Callable[[_Phase], Any]]] = [
    ("cycles", lambda p: p.stats["cycles"]),
    ("mean ms", lambda p: f"{p.cm['mean']:.4f}"),
    ("p99 ms", lambda p: f"{p.cm['p99']:.4f}"),
    ("p99.9 ms", lambda p: f"{p.cm['p99_9']:.4f}"),
    ("max ms", lambda p: f"{p.cm['max']:.3f}"),
    ("late", lambda p: p.stats["late"]),
    ("max/idle max", lambda p: f"{p.cm['max'] / p.idle:.2f}" if p.idle else ""),
    ("offered pkt/s", lambda p: f"{p.tr['offered_pps']:.0f}" if p.tr else ""),
    ("flood pkt/s at device", lambda p: f"{p.tr.get('flood_in_pps', 0):.0f}" if p.tr else ""),
]


def detail_rows(cells: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list]]:
    """Per cell and phase: cycles, mean, p99, p99.9, max, late cycles, ratio, flood rates."""
    header = ["cell", "phase", *(h for h, _ in _DETAIL_COLUMNS)]
    rows = []
    for c in cells:
        if c.get("status") != "ok":
            rows.append([c["cell"], "refused", *[""] * len(_DETAIL_COLUMNS)])
            continue
        for ph in ("idle_before", "attack", "idle_after"):
            s = c["phases"].get(ph, {})
            cm = s.get("cycle_ms")
            if not cm:
                rows.append([c["cell"], ph, 0, *[""] * (len(_DETAIL_COLUMNS) - 1)])
                continue
            tr = c.get("traffic", {}) if ph == "attack" else {}
            p = _Phase(s, cm, c.get("idle_max_ms"), tr)
            rows.append([c["cell"], ph, *(value(p) for _, value in _DETAIL_COLUMNS)])
    return header, rows


#: The columns of :func:`mapping_rows`: header, value of a configuration's first cell
#: and the CPUs of its load generator.
_MAPPING_COLUMNS: list[tuple[str, Callable[[Mapping[str, Any], list], Any]]] = [
    ("configuration", lambda c, loads: c["config"]),
    ("policy", lambda c, loads: c.get("policy", "")),
    ("control task CPU", lambda c, loads: c["cpus"]["control"]),
    ("device receive CPU (RPS)", lambda c, loads: c["cpus"]["device_rx"]),
    ("attacker CPU", lambda c, loads: c["cpus"]["attacker"]),
    ("stress-ng CPUs (load on)", lambda c, loads: ",".join(map(str, loads)) or "—"),
    ("ingress limit", lambda c, loads: _limits(c.get("limits_pps"))),
]


def _limits(lim: Mapping[str, Any] | None) -> str:
    return f"SYN {lim['syn']}/s, ARP {lim['arp']}/s" if lim else "—"


def mapping_rows(cells: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list]]:
    """Per configuration: the CPUs of the control task, receive work, attacker and load."""
    header = [h for h, _ in _MAPPING_COLUMNS]
    rows, seen = [], set()
    for c in cells:
        if c["config"] in seen or "cpus" not in c:
            continue
        seen.add(c["config"])
        loads = next(
            (
                x["cpus"]["load"]
                for x in cells
                if x["config"] == c["config"] and x.get("load") and "cpus" in x
            ),
            [],
        )
        rows.append([value(c, loads) for _, value in _MAPPING_COLUMNS])
    return header, rows


def refusals(cells: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Configuration -> the kernel's reason, for every configuration that was refused."""
    return {c["config"]: c.get("reason", "") for c in cells if c.get("status") == "refused"}


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cols = [header, *rows]
    w = [max(len(str(r[i])) for r in cols) for i in range(len(header))]
    lines = ["  ".join(str(v).ljust(w[i]) for i, v in enumerate(r)).rstrip() for r in cols]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(lines)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


# ------------------------------------------------------------------ figures


def histogram_figure(cell: Mapping[str, Any], cell_dir: Path, out_png: Path) -> Path | None:
    """OSADL-style histogram: cycle time (ms) vs log count, idle before / attack / idle after."""
    if cell.get("status") != "ok":
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cf = cycles.read_cycles(cell_dir / "cycles.rtscyc")
    phases = {k: (int(v[0]), int(v[1])) for k, v in cell["phases_ns"].items()}
    split = cycles.split_phases(cf, phases)
    fig, ax = plt.subplots(figsize=(6.4, 3.2), dpi=100)
    colours = {"idle_before": "tab:blue", "attack": "tab:red", "idle_after": "tab:green"}
    for ph, col in colours.items():
        ct = split[ph]["cycle_ns"]
        if ct.size == 0:
            continue
        edges, counts = cycles.histogram(ct, bin_us=10.0)
        ax.stairs(counts, edges, color=col, label=ph.replace("_", " "), linewidth=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("cycle time (ms), 10 µs bins")
    ax.set_ylabel("cycles (log)")
    ax.set_title(f"{cell['cell']}: {cell['policy']}, rx on CPU {cell['cpus']['device_rx']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    atomic_write(out_png, buf.getvalue())  # recorded as rtshield's, like every output
    return out_png


# ------------------------------------------------------------------ the report


INTRO = (
    "The DoS controller study (arXiv 2007.08885, §4–7) on this kernel: "
    "a 1 ms control task toggles an output every "
    "cycle under SCHED_FIFO 99, SCHED_RR 99 or SCHED_DEADLINE (100 µs / 1 ms / 1 ms), pinned "
    "to the control CPU; the device's receive processing runs on the same CPU (single-core, S) "
    "or on the other one (dual-core pinned, D). Attacks from a second network namespace with "
    "the real tools: hping3 SYN flood, mausezahn gratuitous-ARP flood, nmap full SYN scan; "
    "optionally with stress-ng CPU load. Procedure per cell: idle before, attack, idle after. "
    "This machine is probably not a real-time platform: read ratios and distributions; "
    "absolute maxima mean something only on a real board with a PREEMPT_RT kernel "
    "(docs/rig.md)."
)


PROTECTION_NOTE = (
    "Single-core configurations under attack, unprotected and with a protection at the "
    "device: 'limit' drops SYN and ARP above a rate at the device's ingress (nftables, netdev "
    "hook, before IP and ARP processing); 'steer' moves the device's receive processing to the "
    "other CPU (RPS). Cycle time of the attack phase, p99 / maximum. libshield itself belongs "
    "in embedded stacks (rig part 2); these are its Linux-side equivalents."
)


def write_results(
    out: Path,
    cells: Sequence[dict[str, Any]],
    system: Mapping[str, Any],
    options: Mapping[str, Any],
    figures: bool = True,
) -> dict[str, Any]:
    """Write ``summary.json``, ``tables.txt``, the histograms and ``report.html`` into ``out``."""
    out = Path(out)
    tables = {}
    for load in (False, True):
        if any(bool(c.get("load")) == load for c in cells):
            for stat in ("max", "p99"):
                h, r = paper_table(cells, load, stat)
                key = f"{stat}_{'with' if load else 'without'}_load"
                tables[key] = {"header": h, "rows": r, "stat": stat, "load": load}
    summary = {
        "rig": "linux",
        "paper": "004 (Sections 4-7, Tables 1-2)",
        "system": dict(system),
        "options": dict(options),
        "cells": list(cells),
        "tables": tables,
    }
    atomic_write(out / "summary.json", format_summary_json(summary))
    text = []
    for t in tables.values():
        text += [_table_title(t), text_table(t["header"], t["rows"]), ""]
    for load in (False, True):
        pt = protection_table(cells, load)
        if pt:
            with_ = "with" if load else "without"
            text += [f"Ingress protection, attack phase, {with_} CPU load", text_table(*pt), ""]
    dh, dr = detail_rows(cells)
    text += ["Per phase", text_table(dh, dr), ""]
    refused = refusals(cells)
    if refused:
        text += ["Refused by the kernel"] + [f"  {k}: {v}" for k, v in refused.items()] + [""]
    atomic_write(out / "tables.txt", "\n".join(text))

    figs: list[tuple[str, Path]] = []
    if figures:
        for c in cells:
            png = histogram_figure(c, out / "runs" / c["cell"], out / f"hist_{c['cell']}.png")
            if png:
                figs.append((c["cell"], png))
    _write_html(out, summary, figs, cells)
    return summary


def _table_title(t: Mapping[str, Any]) -> str:
    n = "2" if t["load"] else "1"
    with_ = "with" if t["load"] else "without"
    return f"Table {n} layout: {STAT_LABEL[t['stat']]} cycle time, {with_} CPU load"


def _write_html(out: Path, summary: Mapping[str, Any], figs, cells) -> None:
    s = summary["system"]
    parts = [
        "<h1>rtshield rig linux — the DoS controller study (arXiv 2007.08885) on this kernel</h1>",
        f"<p>{html.escape(INTRO)}</p>",
        "<h2>Machine</h2>",
        _html_table(
            ["", ""],
            [
                ["kernel", f"{s.get('kernel')} ({s.get('kernel_version')})"],
                ["real-time kernel (PREEMPT_RT)", "yes" if s.get("preempt_rt") else "no"],
                ["CPU", f"{s.get('cpu_model')} × {s.get('cpus')}"],
                ["load average at start", s.get("loadavg")],
                ["load average at end", s.get("loadavg_end", "")],
                ["kernel.sched_rt_runtime_us", s.get("sched_rt_runtime_us")],
            ],
        ),
    ]
    parts += ["<h2>Where everything runs</h2>", _html_table(*mapping_rows(cells))]
    if not s.get("preempt_rt"):
        parts.append(
            "<p><b>This kernel is not PREEMPT_RT</b>: maxima include latencies a real-time "
            "kernel removes; compare configurations by the 99th percentile, the histograms and "
            "the attack-to-idle ratios.</p>"
        )
    for t in summary["tables"].values():
        parts.append(f"<h2>{html.escape(_table_title(t))}</h2>")
        parts.append(_html_table(t["header"], t["rows"]))
        if t["stat"] == "max":
            ph, pr = paper_reference(t["load"])
            parts.append("<p>The paper's values for comparison:</p>" + _html_table(ph, pr))
    for load in (False, True):
        pt = protection_table(cells, load)
        if pt:
            with_ = "with" if load else "without"
            parts.append(f"<h2>Beyond the paper: ingress protection ({with_} CPU load)</h2>")
            parts.append(f"<p>{html.escape(PROTECTION_NOTE)}</p>" + _html_table(*pt))
    refused = refusals(cells)
    if refused:
        parts.append("<h2>Refused by the kernel</h2>")
        parts.append(_html_table(["configuration", "reason"], list(refused.items())))
    dh, dr = detail_rows(cells)
    parts += ["<h2>Per phase</h2>", _html_table(dh, dr)]
    if figs:
        parts.append("<h2>Cycle-time histograms (log counts)</h2>")
        for name, png in figs:
            parts.append(
                f'<figure><img src="{html.escape(png.name)}" alt="histogram {html.escape(name)}">'
                f"<figcaption>{html.escape(name)}</figcaption></figure>"
            )
    opts = json.dumps(summary["options"], sort_keys=True)
    parts.append(f"<h2>Options</h2><pre>{html.escape(opts)}</pre>")
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>rtshield rig linux</title>"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #bbb;"
        "padding:2px 6px;font-size:13px;text-align:right}figure{display:inline-block;margin:4px}"
        "</style></head><body>" + "\n".join(parts) + "</body></html>\n"
    )
    atomic_write(out / "report.html", page)
