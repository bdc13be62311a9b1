#!/usr/bin/env python3
"""Figure of a finished `rtshield rig linux` run: p99 and maximum cycle time per cell.

    python3 bench/rig_figure.py RUN_DIR [OUT.png]

One panel per load (off / on); per configuration, idle and each attack side by
side: bars for the 99th percentile, dots for the maximum (log scale).
Default output: bench/rig_linux.png.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ATTACKS = ("syn", "arp", "nmap")
COLOURS = {"idle": "tab:gray", "syn": "tab:red", "arp": "tab:orange", "nmap": "tab:purple"}


def main() -> int:
    run = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parent / "rig_linux.png"
    cells = json.loads((run / "summary.json").read_text())["cells"]
    loads = sorted({bool(c["load"]) for c in cells})
    fig, axes = plt.subplots(len(loads), 1, figsize=(10, 3.4 * len(loads)), squeeze=False)
    for ax, load in zip(axes[:, 0], loads, strict=True):
        mine = [c for c in cells if bool(c["load"]) == load and c["status"] == "ok"]
        configs = list(dict.fromkeys(c["config"] for c in mine))
        for i, cfg in enumerate(configs):
            row = [c for c in mine if c["config"] == cfg]
            idle = [
                c["phases"][ph]["cycle_ms"]
                for c in row
                for ph in ("idle_before", "idle_after")
                if c["phases"][ph].get("cycle_ms")
            ]
            bars = [("idle", max(s["p99"] for s in idle), max(s["max"] for s in idle))]
            for a in ATTACKS:
                c = next((c for c in row if c["attack"] == a), None)
                if c and c["phases"]["attack"].get("cycle_ms"):
                    s = c["phases"]["attack"]["cycle_ms"]
                    bars.append((a, s["p99"], s["max"]))
            for j, (name, p99, mx) in enumerate(bars):
                x = i + (j - 1.5) * 0.2
                ax.bar(x, p99, width=0.18, color=COLOURS[name], label=name if i == 0 else None)
                ax.plot(x, mx, "k.", markersize=5, label="maximum" if i == j == 0 else None)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_xticks(range(len(configs)), configs)
        ax.axhline(1.0, color="k", linewidth=0.5)
        ax.set_ylabel("cycle time (ms)")
        ax.set_title(f"p99 (bars) and maximum (dots), CPU load {'on' if load else 'off'}")
        ax.legend(fontsize=7, ncol=5)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
