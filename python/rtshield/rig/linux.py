"""``rtshield rig linux``: the DoS controller study (arXiv 2007.08885) with real flood tools.

One *cell* is a configuration (architecture S/D x policy FIFO/RR/DEADLINE,
optionally with an ingress protection) x an attack (SYN flood, ARP flood,
nmap scan) x CPU load (off/on). Each cell runs the paper's procedure (Section
5.3): idle before, attack, idle after, with a break between phases, while the
control task ``rts_cyclic`` records every cycle.

CPU mapping (docs/rig.md): the control task always runs on ``control_cpu``;
the flood tools on ``attacker_cpu``. Architecture **S** steers the device's
receive processing (RPS on the device's veth) to the control task's CPU;
**D** steers it to ``network_cpu``. Protection ``steer`` moves it away from
the control CPU for an S configuration; ``limit`` drops SYN and ARP above a
rate at the device's ingress (nftables, netdev family).
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rtshield.rig import cycles
from rtshield.rig.attacks import ATTACK_TOOL, ATTACKS, stress_argv
from rtshield.rig.harness import Harness
from rtshield.rig.host import RigError
from rtshield.rig.timing import mono_ns, procedure_s, sleep_until

__all__ = [
    "ATTACKS",
    "BASE_CONFIGS",
    "Config",
    "Options",
    "SchedDeadline",
    "build_program",
    "cell_name",
    "plan",
    "run_cell",
]

POLICY_LETTER = {"fifo": "F", "rr": "R", "deadline": "D"}
#: The paper's six Linux test cases (Section 4), in its table order.
BASE_CONFIGS = ("SD", "SF", "SR", "DD", "DF", "DR")
ATTACK_LABEL = {"syn": "SYN flooding", "arp": "ARP flooding", "nmap": "Nmap"}
PROTECTIONS = ("limit", "steer")


@dataclass(frozen=True)
class Config:
    """One row of the paper's tables, optionally with a protection (``SF+limit``)."""

    arch: str  # "S" or "D"
    policy: str  # fifo, rr, deadline
    protect: str = ""

    @property
    def code(self) -> str:
        return self.arch + POLICY_LETTER[self.policy]

    @property
    def name(self) -> str:
        return self.code + (f"+{self.protect}" if self.protect else "")

    @staticmethod
    def parse(name: str) -> Config:
        code, _, protect = name.partition("+")
        letters = {v: k for k, v in POLICY_LETTER.items()}
        if len(code) != 2 or code[0] not in "SD" or code[1] not in letters:
            raise RigError(f"rig: unknown configuration '{name}' (SF, SR, SD, DF, DR, DD)")
        if protect and protect not in PROTECTIONS:
            raise RigError(f"rig: unknown protection '{protect}' in '{name}' (limit, steer)")
        return Config(code[0], letters[code[1]], protect)


@dataclass(frozen=True)
class SchedDeadline:
    """The control task's SCHED_DEADLINE parameters (``--dl RT,DL,PERIOD``); the default is
    the paper's 100 µs runtime in a 1 ms deadline and period (Section 4)."""

    runtime_ns: int = 100_000
    deadline_ns: int = 1_000_000
    period_ns: int = 1_000_000

    @staticmethod
    def parse(text: str) -> SchedDeadline:
        """``RT,DL,PERIOD`` in ns, as the kernel admits them: 1024 <= RT <= DL <= PERIOD."""
        try:
            rt, dl, per = (int(x) for x in text.split(","))
        except ValueError:
            raise RigError("rig: --dl must be three integers RT,DL,PERIOD in ns") from None
        if not 1024 <= rt <= dl <= per:
            raise RigError("rig: --dl needs 1024 <= runtime <= deadline <= period")
        return SchedDeadline(rt, dl, per)


@dataclass
class Options:
    phase_s: float = 10.0
    break_s: float = 2.0
    cycle_us: int = 1000
    control_cpu: int = 1
    network_cpu: int = 0
    attacker_cpu: int = 0
    prio: int = 99
    dl: SchedDeadline = field(default_factory=SchedDeadline)
    syn_limit_pps: int = 1000
    arp_limit_pps: int = 100
    select: list[str] = field(default_factory=lambda: ["*"])
    attacks: list[str] = field(default_factory=lambda: list(ATTACKS))
    loads: list[bool] = field(default_factory=lambda: [False, True])
    protect: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Flat, as ``summary.json`` records them: the SCHED_DEADLINE ones as ``dl_*_ns``."""
        d = asdict(self)
        d.update({f"dl_{k}": v for k, v in d.pop("dl").items()})
        return d


def cell_name(cfg: Config, attack: str, load: bool) -> str:
    return f"{cfg.name}-{attack}-{'load' if load else 'noload'}"


def plan(opts: Options) -> list[tuple[Config, str, bool]]:
    """The cells to run, in table order: load off first, then per configuration and attack."""
    configs = [Config.parse(c) for c in BASE_CONFIGS]
    # A protected configuration named in --select needs no --protect as well.
    named = [s.partition("+")[2] for s in opts.select if s.partition("+")[2] in PROTECTIONS]
    protect = list(dict.fromkeys([*opts.protect, *named]))
    configs += [Config("S", c.policy, p) for p in protect for c in configs if c.arch == "S"]
    chosen = [c for c in configs if any(fnmatch.fnmatchcase(c.name, s) for s in opts.select)]
    if not chosen:
        raise RigError(
            f"rig: --select {','.join(opts.select)} matches no configuration "
            f"({', '.join(c.name for c in configs)})"
        )
    return [(c, a, ld) for ld in opts.loads for c in chosen for a in opts.attacks]


# ------------------------------------------------------------------ the program


def _source() -> Path:
    here = Path(__file__).resolve().parent
    for cand in (here / "rts_cyclic.c", here.parents[2] / "rig" / "linux" / "rts_cyclic.c"):
        if cand.is_file():
            return cand
    raise RigError("rig: rts_cyclic.c is not installed with this package (reinstall rtshield)")


def build_program(cache_dir: Path | None = None) -> Path:
    """Compile ``rts_cyclic.c`` with the system ``cc`` into a cache keyed by its hash."""
    src = _source()
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    d = base / "rtshield" / "rig"
    exe = d / f"rts_cyclic-{digest}"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    if shutil.which("cc") is None:
        raise RigError("rig: no C compiler 'cc' (Debian: apt-get install build-essential)")
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".rts_cyclic-{digest}.{os.getpid()}"
    p = subprocess.run(
        ["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(tmp), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    if p.returncode != 0:
        first = (p.stderr.strip().splitlines() or ["?"])[0]
        raise RigError(f"rig: compiling {src.name} failed: {first}")
    os.replace(tmp, exe)
    return exe


# ------------------------------------------------------------------ one cell


def _cyclic_argv(exe: Path, cfg: Config, opts: Options, out: Path, seconds: float) -> list[str]:
    max_cycles = int((seconds + 10) * 1e6 / opts.cycle_us) + 10
    return [
        str(exe),
        "--policy",
        cfg.policy,
        "--prio",
        str(opts.prio),
        "--cpu",
        str(opts.control_cpu),
        "--cycle-us",
        str(opts.cycle_us),
        "--dl-runtime-ns",
        str(opts.dl.runtime_ns),
        "--dl-deadline-ns",
        str(opts.dl.deadline_ns),
        "--dl-period-ns",
        str(opts.dl.period_ns),
        "--max-cycles",
        str(max_cycles),
        "--out",
        str(out),
    ]


def rx_cpu(cfg: Config, opts: Options) -> int:
    """The CPU that does the device's receive processing in this configuration."""
    if cfg.arch == "S" and cfg.protect != "steer":
        return opts.control_cpu
    return opts.network_cpu


def load_cpus(cfg: Config, opts: Options) -> list[int]:
    """One stress-ng process per CPU of the device (paper §5.2): S has one CPU, D two."""
    if cfg.arch == "S":
        return [opts.control_cpu]
    return sorted({opts.control_cpu, opts.network_cpu})


def run_cell(
    h: Harness,
    exe: Path,
    cfg: Config,
    attack: str,
    load: bool,
    opts: Options,
    cell_dir: Path,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the idle / attack / idle procedure of one cell; return its summary (no stats yet)."""
    name = cell_name(cfg, attack, load)
    cell_dir.mkdir(parents=True, exist_ok=True)
    P, B = opts.phase_s, opts.break_s
    total = procedure_s(P, B)
    rx = rx_cpu(cfg, opts)
    summary: dict[str, Any] = {
        "cell": name,
        "config": cfg.name,
        "code": cfg.code,
        "arch": cfg.arch,
        "policy": cfg.policy,
        "protect": cfg.protect or None,
        "attack": attack,
        "attack_tool": ATTACK_TOOL[attack],
        "load": load,
        "cpus": {
            "control": opts.control_cpu,
            "device_rx": rx,
            "attacker": opts.attacker_cpu,
            "load": load_cpus(cfg, opts) if load else [],
        },
    }
    h.set_rps("device", [rx])
    h.set_rps("attacker", [opts.attacker_cpu])
    limits = None
    if cfg.protect == "limit":
        limits = {"syn": opts.syn_limit_pps, "arp": opts.arp_limit_pps}
        summary["limits_pps"] = limits
    h.install_nft(limits)

    loads = []
    if load:
        for c in load_cpus(cfg, opts):
            loads.append(
                h.spawn(
                    "device",
                    stress_argv(total + 2),
                    limit_s=total + 4,
                    name=f"{name}.stress{c}",
                    cpu=c,
                    stop_signal="TERM",
                )
            )
    cyc_file = cell_dir / "cycles.rtscyc"
    proc = h.spawn(
        "device",
        _cyclic_argv(exe, cfg, opts, cyc_file, total),
        limit_s=total + 10,
        name=f"{name}.cyclic",
        stop_signal="TERM",
        stdout=subprocess.PIPE,
    )
    first = (proc.stdout.readline() if proc.stdout else "").strip()
    if not first.startswith("ready"):
        h.wait(proc, 5)
        for p in loads:
            h.stop(p)
        h.stop(proc)
        reason = first.split(" ", 3)[3] if first.startswith("refused") else (first or "no output")
        summary["status"] = "refused"
        summary["reason"] = f"{cfg.policy}: {reason}"
        return summary

    phases: dict[str, tuple[int, int]] = {}
    t = mono_ns()
    say(f"rig: {name}: idle before")
    phases["idle_before"] = (t, t + int(P * 1e9))
    sleep_until(phases["idle_before"][1] + int(B * 1e9))

    say(f"rig: {name}: attack ({ATTACK_TOOL[attack]})")
    # traffic's flood_in: the flood's own packets as they reached the device's ingress (the
    # rest of the attacker's traffic is its kernel's RSTs answering the device's SYN-ACKs).
    traffic, t, tool_end = h.flood(attack, P, f"{name}.{attack}", opts.attacker_cpu)
    phases["attack"] = (t, t + int(P * 1e9))
    traffic["tool_seconds"] = round((tool_end - t) / 1e9, 3)
    summary["traffic"] = traffic
    sleep_until(max(tool_end, phases["attack"][1] + int(B * 1e9)))

    t = mono_ns()
    say(f"rig: {name}: idle after")
    phases["idle_after"] = (t, t + int(P * 1e9))
    sleep_until(phases["idle_after"][1])

    h.stop(proc, signal.SIGTERM, grace=10)
    for p in loads:
        h.stop(p)
    if not cyc_file.is_file() or cyc_file.stat().st_size < cycles.HEADER.size:
        raise RigError(f"rig: {name}: the control task wrote no cycle file ({cyc_file})")
    summary["status"] = "ok"
    summary["phases_ns"] = {k: list(v) for k, v in phases.items()}
    return summary


def analyse_cell(summary: dict[str, Any], cell_dir: Path) -> dict[str, Any]:
    """Add per-phase statistics from the cell's cycle file to ``summary`` (in place)."""
    if summary.get("status") != "ok":
        return summary
    cf = cycles.read_cycles(cell_dir / "cycles.rtscyc")
    phases = {k: (int(v[0]), int(v[1])) for k, v in summary["phases_ns"].items()}
    split = cycles.split_phases(cf, phases)
    stats = {
        k: cycles.cycle_stats(v["cycle_ns"], v["latency_ns"], cf.period_ns)
        for k, v in split.items()
    }
    summary["period_ms"] = cf.period_ns / 1e6
    summary["cycles_total"] = cf.count
    summary["phases"] = stats
    idle = [
        stats[k]["cycle_ms"]["max"] for k in ("idle_before", "idle_after") if stats[k]["cycles"]
    ]
    att = stats["attack"].get("cycle_ms", {}).get("max")
    summary["idle_max_ms"] = max(idle) if idle else None
    summary["attack_max_ms"] = att
    summary["attack_over_idle_max"] = (att / max(idle)) if (att and idle) else None
    return summary


def selftest_order(cells: Sequence[tuple[Config, str, bool]]) -> list[str]:
    """The cell names of a plan, in run order (used by tests and the progress lines)."""
    return [cell_name(c, a, ld) for c, a, ld in cells]
