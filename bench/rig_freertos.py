"""Tables of a finished `rtshield rig freertos-tcp` run for bench/RESULTS.md (issue 17).

    sudo rtshield rig freertos-tcp --out RUN_DIR        # the benchmark itself
    python3 bench/rig_freertos.py RUN_DIR               # its numbers as markdown

Reads RUN_DIR/runs/*/summary.json (what the target measured) and
RUN_DIR/comparison.json; prints one row per run: the flood rate that reached
the device, what the stack took, the critical task's misses and tail
latencies idle vs attack, the high-priority flow, the drops by place, and
the CPU time per frame in libshield, in the hand-over to the stack and in
the IP task.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _ms(v_us: float | None) -> str:
    return "—" if v_us is None else f"{v_us / 1000:.1f}"


def _us(v_ns: float | None) -> str:
    return "—" if v_ns is None else f"{v_ns / 1000:.2f}"


def rows(run_dir: Path) -> list[str]:
    out = [
        "| run | flood pkt/s at device | to IP task /s (attack) | misses idle/attack/idle "
        "| worst lateness attack % | wake-up p99.9 idle → attack ms | HP delivered/sent (attack) "
        "| dropped by libshield | stack buffers exhausted | ring full "
        "| µs/frame libshield | µs/frame to stack | µs/frame IP task |",
        "|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    comp = run_dir / "comparison.json"  # names the high-priority flow (UDP or MODBUS)
    hp_name = (json.loads(comp.read_text()).get("hp_flow") if comp.is_file() else None) or "hp"
    for f in sorted((run_dir / "runs").glob("*/summary.json")):
        s = json.loads(f.read_text())
        ph = s["phases"]
        att = ph["attack"]
        crit = {p: ph[p]["critical"] for p in ph}
        hp = att["flows"].get(hp_name, {})
        drops = att["dropped"]
        shield = sum(
            v for k, v in drops.items() if k not in ("ring_full", "stack_buffers_exhausted")
        )
        cpu = s["cpu_per_frame_ns"]
        misses = "/".join(str(crit[p]["misses"]) for p in ("idle_before", "attack", "idle_after"))
        out.append(
            f"| {s['variant']}-{s['attack']} | {s['traffic']['flood_in_pps']:,.0f} "
            f"| {att['to_ip_task'] / att['seconds']:,.0f} "
            f"| {misses} "
            f"| {crit['attack']['lateness_max_pct']:,.0f} "
            f"| {_ms(crit['idle_before']['wakeup_us']['p99_9'])} → "
            f"{_ms(crit['attack']['wakeup_us']['p99_9'])} "
            f"| {hp.get('delivered')}/{hp.get('offered')} | {shield:,} "
            f"| {drops.get('stack_buffers_exhausted', 0):,} | {drops.get('ring_full', 0):,} "
            f"| {_us(cpu.get('shield'))} | {_us(cpu.get('to_stack'))} | {_us(cpu.get('ip_task'))} |"
        )
    comp = run_dir / "comparison.json"
    if comp.is_file():
        c = json.loads(comp.read_text())
        out.append("")
        for cl in c["claims"]:
            verdict = "confirmed" if cl["confirmed"] else "not confirmed"
            out.append(f"- {cl['claim']} ({cl['simulated_flood']}): {verdict}")
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/rig_freertos.py RUN_DIR")
    print("\n".join(rows(Path(sys.argv[1]))))
