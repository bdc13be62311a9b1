#!/usr/bin/env python3
"""The rig's harness on this machine: flood rates it reaches, and its own overhead.

Run as root (results go to bench/RESULTS.md by hand):

    python3 bench/rig_floods.py [SECONDS]

1. Flood rates: each attack alone (no control task) for SECONDS, the tool
   pinned to the attacker CPU, the device's receive work on the other CPU --
   packets/s leaving the attacker (veth counter) and flood packets/s reaching
   the device's ingress (nftables counter).
2. Overhead: the control task (SCHED_FIFO 99, 1 ms, pinned to the last CPU)
   for SECONDS bare in the root namespace, then for SECONDS inside the rig
   (device namespace, ingress counters loaded, listener running, counters
   sampled every second) -- idle, no attack. Cycle-time p99 / p99.9 / max.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rtshield.rig import cycles, harness, linux


def flood_rates(seconds: float) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    atk, dev = cpus[0], cpus[-1]
    print(f"## flood rates ({seconds:.0f} s each, attacker CPU {atk}, device rx CPU {dev})")
    print("| attack | tool | offered pkt/s | flood pkt/s at device | device replies pkt/s |")
    print("|---|---|---:|---:|---:|")
    with harness.Harness() as h:
        h.listener(limit_s=3 * seconds + 60)
        h.set_rps("device", [dev])
        h.set_rps("attacker", [atk])
        for attack, argv in (
            ("syn", harness.syn_flood_argv()),
            ("arp", harness.arp_flood_argv(h.if_atk)),
            ("nmap", harness.nmap_scan_argv()),
        ):
            c0 = h.counters()
            p = h.spawn("attacker", argv, limit_s=seconds, name=attack, cpu=atk)
            h.wait(p, seconds + 10)
            c1 = h.counters()
            r = c0.rates(c1)
            key = "arp_in" if attack == "arp" else "syn_in"
            print(
                f"| {attack} | {argv[0]} | {r['offered_pps']:.0f} | {r[key + '_pps']:.0f} "
                f"| {r['device_replies_pps']:.0f} |"
            )


def _stats(path: Path) -> str:
    cf = cycles.read_cycles(path)
    ct = cf.cycle_times_ns()[100:]  # skip the first 100 ms
    s = cycles.cycle_stats(ct, cf.latencies_ns()[100:], cf.period_ns)["cycle_ms"]
    return f"{ct.size} | {s['p99']:.4f} | {s['p99_9']:.4f} | {s['max']:.3f}"


def overhead(seconds: float) -> None:
    exe = linux.build_program()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    n = int(seconds * 1000)
    args = ["--policy", "fifo", "--cpu", str(cpu), "--max-cycles", str(n)]
    print(f"\n## rig overhead on the idle control task ({seconds:.0f} s, FIFO 99, CPU {cpu})")
    print("| where | cycles | p99 ms | p99.9 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        bare = Path(d) / "bare.rtscyc"
        subprocess.run([str(exe), *args, "--out", str(bare)], check=True, capture_output=True)
        print(f"| bare, root namespace | {_stats(bare)} |")
        rig = Path(d) / "rig.rtscyc"
        with harness.Harness() as h:
            h.listener(limit_s=seconds + 60)
            h.set_rps("device", [cpu])
            p = h.spawn(
                "device",
                [str(exe), *args, "--out", str(rig)],
                limit_s=seconds + 30,
                name="cyclic",
                stop_signal="TERM",
                stdout=subprocess.PIPE,
            )
            while p.poll() is None:
                h.counters()
                time.sleep(1.0)
        print(f"| inside the rig, counters sampled every 1 s | {_stats(rig)} |")


def main() -> int:
    harness.require_root()
    harness.require_tools(["ip", "nft", "taskset", "timeout", "cc", "hping3", "mausezahn", "nmap"])
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    print(f"kernel {os.uname().release}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
    flood_rates(seconds)
    overhead(2 * seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
