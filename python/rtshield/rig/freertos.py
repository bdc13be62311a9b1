"""``rtshield rig freertos-tcp``: the real FreeRTOS-Plus-TCP stack under real floods.

The target is ``rig/freertos/app/rts_device.c``: the FreeRTOS kernel (POSIX port)
with FreeRTOS-Plus-TCP, its network interface on the device-side veth of the
rig's harness, libshield in that interface's receive path (protected) or the
stock path (unprotected), a critical task, worker tasks and a TCP listener.
The device is described by a scenario file, the simulator's vocabulary;
:func:`target_config` is the one mapping from a scenario to the target's
config file. Every run goes through idle / attack / idle phases while the
rig sends the scenario's UDP flows (paced, timestamped) and polls its MODBUS/TCP
flows (a TCP flow at a constant rate: the device serves MODBUS/TCP on its port,
:mod:`rtshield.rig.modbus_client` is the controller) from the attacker
namespace and, in the attack phase, one flood tool.

Layout of ``--out DIR``: ``runs/<protected|unprotected>-<attack>/`` (the
target's config, ``device.json``, ``cycles.bin``, latency records, tool logs
and ``summary.json`` in the simulator's vocabulary), ``sim/<variant>/summary.json``
(the same scenario simulated), ``comparison.json`` and ``report.html``.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import math
import os
import select
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rtshield.errors import UsageError
from rtshield.outputs import atomic_write, format_summary_json
from rtshield.rig import pcap_replay
from rtshield.rig.harness import (
    ATTACK_TOOL,
    ATTACKER_ADDR,
    ATTACKS,
    DEVICE_ADDR,
    LISTEN_PORT,
    PREFIX_LEN,
    Harness,
    RigError,
    mono_ns,
    procedure_s,
    sleep_until,
)
from rtshield.rig.modbus_client import account, read_records

__all__ = [
    "ATTACKS",
    "Options",
    "build_target",
    "claims",
    "find_tree",
    "load_device",
    "run_variant",
    "summarize",
    "target_config",
    "write_report",
]

ATTACK_LABEL = {"syn": "hping3 SYN flood", "arp": "ARP flood", "nmap": "nmap full SYN scan"}
VARIANTS = ("unprotected", "protected")
#: Environment variable naming the folder that holds FreeRTOS-Kernel and FreeRTOS-Plus-TCP.
TREE_ENV = "RTS_THIRD_PARTY"
#: Drop reason of an admitted frame that found no FreeRTOS-Plus-TCP network buffer.
STACK_EXHAUSTED = "stack_buffers_exhausted"
#: libshield's rts_shield_drop names that the simulator's summary spells differently.
_SHIELD_TO_SIM = {"limiter": "mitigation"}
PHASES = ("idle_before", "attack", "idle_after")
#: Time from the target's "ready" to the first phase, in which the rig's senders, MODBUS
#: controllers and replays start (a Python process takes a few hundred ms on a busy host):
#: each begins at the first phase's start, so that phase is offered in full.
LEAD_S = 1.0
#: A MODBUS poll's response timeout: an answer later than this counts as a timeout.
MODBUS_TIMEOUT_S = 0.5
#: FreeRTOS-Plus-TCP's name for its IP task (FreeRTOS_IP.c; the POSIX port names threads so).
IP_TASK_NAME = "IP-Task"


def _repo() -> Path:
    """Where the target's sources are: inside the installed package
    (``rtshield/source``, same layout), else the checkout this module is in."""
    here = Path(__file__).resolve()
    installed = here.parents[1] / "source"
    if (installed / "tools" / "freertos_build.sh").is_file():
        return installed
    return here.parents[3]


def default_scenario() -> Path:
    return _repo() / "rig" / "freertos" / "device.toml"


# ------------------------------------------------------------------ trees and build


def find_tree(option: str | None) -> Path:
    """The folder holding FreeRTOS-Kernel and FreeRTOS-Plus-TCP: ``--freertos-tree``,
    else ``$RTS_THIRD_PARTY``, else the pinned copies in ``third_party/`` (the checkout's,
    or those the installed package carries)."""
    if option:
        cand, origin = Path(option), f"--freertos-tree {option}"
    elif os.environ.get(TREE_ENV):
        cand, origin = Path(os.environ[TREE_ENV]), f"{TREE_ENV}={os.environ[TREE_ENV]}"
    else:
        cand, origin = _repo() / "third_party", "the default"
    kernel = cand / "FreeRTOS-Kernel" / "tasks.c"
    tcp = cand / "FreeRTOS-Plus-TCP" / "source" / "FreeRTOS_IP.c"
    if not (kernel.is_file() and tcp.is_file()):
        raise RigError(
            f"rig freertos-tcp: no FreeRTOS-Kernel and FreeRTOS-Plus-TCP trees in {cand} "
            f"({origin}); point --freertos-tree DIR or {TREE_ENV}=DIR at the folder holding both"
        )
    return cand.resolve()


def _build_inputs() -> list[Path]:
    root = _repo()
    files = [root / "tools" / "freertos_build.sh"]
    for d, pats in (
        (root / "rig" / "freertos", ("**/*.c", "**/*.h", "patches/*.patch")),
        (root / "libshield" / "src", ("*.c", "*.h")),
        (root / "libshield" / "include", ("**/*.h",)),
        (root / "libshield" / "port" / "freertos", ("*.c", "*.h", "config/**/*.h")),
    ):
        for pat in pats:
            files += sorted(d.glob(pat))
    return files


def build_target(
    tree: Path, cache_dir: Path | None = None, say: Callable[[str], None] = print
) -> Path:
    """Build the device program (tools/freertos_build.sh tcp-build) into a cache keyed by
    the hash of its sources and the tree; return the executable."""
    script = _repo() / "tools" / "freertos_build.sh"
    if not script.is_file():
        raise RigError(
            "rig freertos-tcp: needs an rtshield checkout (tools/freertos_build.sh, rig/freertos/)"
        )
    h = hashlib.sha256(str(tree).encode())
    for f in _build_inputs():
        h.update(str(f.relative_to(_repo())).encode())
        h.update(f.read_bytes())
    digest = h.hexdigest()[:16]
    base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    d = base / "rtshield" / "rig" / f"freertos-{digest}"
    exe = d / "rts_freertos_device"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    say(f"rig freertos-tcp: building the target against {tree} (once; cached in {d})")
    d.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [str(script), "tcp-build", str(d)],
        env={**os.environ, TREE_ENV: str(tree)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if p.returncode == 77:
        raise RigError("rig freertos-tcp: " + (p.stderr.strip().splitlines() or ["skipped"])[-1])
    if p.returncode != 0 or not exe.is_file():
        lines = [ln for ln in (p.stderr + p.stdout).splitlines() if "error" in ln.lower()]
        first = (lines or (p.stderr + p.stdout).strip().splitlines() or ["?"])[0]
        raise RigError(f"rig freertos-tcp: building the target failed: {first}")
    return exe


# ------------------------------------------------------------------ the scenario


@dataclass
class Device:
    """One scenario in its two variants, as the simulator and the target read it."""

    path: Path
    data: dict[str, Any]
    variants: dict[str, Any]  # "protected"/"unprotected" -> rtshield.scenario.Scenario
    phase_s: float
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)  # the variants' TOML data

    def at_flood_rate(self, pps: float) -> Device:
        """The same device with its flood (the TCP flows' non-zero steps) at ``pps``."""
        from rtshield.scenario import parse_scenario

        variants = {}
        for v, t in self.tables.items():
            t = copy.deepcopy(t)
            for f in t.get("flows", []):
                if f.get("protocol") == "tcp" and f.get("pattern") == "steps":
                    f["rates"] = [r if _zero(r) else f"{pps:.0f}pps" for r in f["rates"]]
            variants[v] = parse_scenario(t, origin=f"{self.path} (flood at {pps:.0f} pkt/s)")
        return Device(self.path, self.data, variants, self.phase_s, self.tables)


def load_device(path: str | Path, stock_priority: int, phase_s: float | None = None) -> Device:
    """Read a device scenario; derive the unprotected variant (no ``[rx]``, the network
    task at ``stock_priority``); with ``phase_s``, set the flood's step and the duration."""
    from rtshield.scenario import parse_scenario
    from rtshield.tomlfile import read_toml

    p = Path(path)
    data = read_toml(p)  # the checks every scenario file gets: kind, size, nesting, syntax
    if "rx" not in data:
        raise UsageError(
            f"rig freertos-tcp: {p}: the device needs an [rx] table (the protected variant; "
            "the rig derives the unprotected one)"
        )
    data = copy.deepcopy(data)
    for f in data.get("flows", []):  # a capture's path is relative to the scenario file
        if f.get("pattern") == "pcap" and isinstance(f.get("file"), str):
            f["file"] = str((p.parent / f["file"]).resolve())
    floods = [f for f in data.get("flows", []) if f.get("protocol") == "tcp"]
    if phase_s is None:
        phase_s = 3.0
        for f in floods:
            if f.get("pattern") == "steps" and "step_every" in f:
                from rtshield.units import duration_ns

                phase_s = duration_ns(f["step_every"], "flows.step_every") / 1e9
        if not 1 <= phase_s <= 120:
            raise UsageError(
                f"rig freertos-tcp: {p}: the flood's step_every ({phase_s:g} s) is the rig's "
                "phase and must be 1-120 s (or give --phase-seconds)"
            )
    data.setdefault("scenario", {})["duration"] = f"{3 * phase_s:g}s"
    for f in floods:
        if f.get("pattern") == "steps":
            f["step_every"] = f"{phase_s:g}s"
    unprot = copy.deepcopy(data)
    del unprot["rx"]
    unprot.setdefault("driver", {})["priority"] = stock_priority
    for f in unprot.get("flows", []):
        for k in ("capacity", "server_period", "queue"):
            f.pop(k, None)
    unprot["scenario"]["name"] = data["scenario"].get("name", "device") + "_unprotected"
    variants = {
        "protected": parse_scenario(data, origin=str(p)),
        "unprotected": parse_scenario(unprot, origin=f"{p} (unprotected)"),
    }
    return Device(p, data, variants, phase_s, {"protected": data, "unprotected": unprot})


def _zero(rate: Any) -> bool:
    from rtshield.units import rate_hz

    return rate_hz(rate, "flows.rates") == 0


def _us(ns: int | None) -> int:
    return 0 if ns is None else int(round(ns / 1000))


def target_config(
    scn: Any,
    protect: bool,
    *,
    ifname: str,
    mac: str,
    out: Path,
    seconds: int,
    rx_cpu: int | None = None,
) -> str:
    """The target's config file for scenario ``scn`` (one of :class:`Device`'s variants)."""
    c = scn.critical
    if c.period_ns % 1_000_000:
        raise UsageError(
            f"rig freertos-tcp: critical.period {c.period_ns / 1e6:g} ms is not a whole number "
            "of the target's 1 ms ticks"
        )
    lines = [
        f"# {scn.name}: {'protected' if protect else 'unprotected'} (written by rtshield rig)",
        f"ifname {ifname}",
        f"mac {mac}",
        f"ip {DEVICE_ADDR}",
        "netmask "
        + ".".join(str((0xFFFFFFFF << (32 - PREFIX_LEN) >> s) & 255) for s in (24, 16, 8, 0)),
        f"protect {int(protect)}",
        f"seconds {seconds}",
        f"out {out}",
        f"crit_period_us {_us(c.period_ns)}",
        f"crit_work_us {_us(c.work_ns)}",
        f"crit_prio {c.priority}",
        f"net_prio {scn.driver.priority}",
    ]
    if rx_cpu is not None:
        lines.append(f"rx_cpu {rx_cpu}")
    rx = scn.rx
    if protect and rx is not None:
        lines.append(f"short_circuit {int(rx.short_circuit)}")
        if rx.recycle_below is not None:
            lines.append(f"recycle_below {rx.recycle_below}")
        if rx.global_capacity:
            lines += [
                f"global_capacity {rx.global_capacity}",
                f"global_period_us {_us(rx.global_period_ns)}",
            ]
        if rx.poll_priority is not None:
            lines.append(f"poll_prio {rx.poll_priority}")
    workers = {t.flow: t for t in scn.tasks if t.kind == "worker"}
    for f in scn.flows:
        if f.protocol not in ("udp", "tcp") or not f.bind:
            continue
        modbus = _is_modbus(f)
        pcap = f.pattern == "pcap"  # replayed by the rig; its socket a listener or a UDP worker
        if f.protocol == "tcp" and not modbus and not pcap and f.dst_port != LISTEN_PORT:
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: a stepped TCP flow is the listener the attacks "
                f"hit; its dst_port must be {LISTEN_PORT}"
            )
        if modbus and f.dst_port == LISTEN_PORT:
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: a MODBUS/TCP flow (TCP at a constant rate) "
                f"needs a port other than the attacks' listener {LISTEN_PORT} (e.g. 5020)"
            )
        if modbus and f.pattern != "constant":
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: the rig polls MODBUS/TCP flows at a constant "
                f'rate (pattern = "constant"), not {f.pattern!r}'
            )
        if f.protocol == "udp" and f.pattern not in ("constant", "pcap"):
            raise UsageError(
                f"rig freertos-tcp: flow {f.name}: the rig sends UDP flows at a constant rate "
                f'(pattern = "constant"), not {f.pattern!r}'
            )
        w = workers.get(f.name)
        values = [
            f.name,
            "modbus" if modbus else f.protocol,
            f.dst_port,
            f.priority,
            f.capacity or 0,
            _us(f.server_period_ns),
            f.queue or 0,
            w.priority if w else max(1, f.priority),
            _us(w.work_ns) if w else 0,
        ]
        lines.append("flow " + " ".join(str(v) for v in values))
    return "\n".join(lines) + "\n"


def _is_modbus(f: Any) -> bool:
    """A bound TCP flow that is not stepped (the flood's picture) is a MODBUS/TCP flow."""
    return f.protocol == "tcp" and f.bind and f.pattern not in ("steps", "pcap")


def modbus_flows(scn: Any) -> list[dict[str, Any]]:
    """What the rig's MODBUS poll clients poll: every MODBUS flow at its constant rate."""
    return [
        {"name": f.name, "port": f.dst_port, "rate": float(f.rate_pps or 0)}
        for f in scn.flows
        if _is_modbus(f) and (f.rate_pps or 0) > 0
    ]


def udp_flows(scn: Any) -> list[dict[str, Any]]:
    """What the rig's sender sends: every bound UDP flow at its constant rate."""
    return [
        {"name": f.name, "port": f.dst_port, "rate": float(f.rate_pps or 0), "size": f.size}
        for f in scn.flows
        if f.protocol == "udp" and f.bind and f.pattern == "constant" and (f.rate_pps or 0) > 0
    ]


def pcap_flows(scn: Any) -> list[Any]:
    """The flows the rig replays from their captures (``pattern = "pcap"``)."""
    return [f for f in scn.flows if f.pattern == "pcap"]


# ------------------------------------------------------------------ the sender

#: Runs in the attacker namespace: each UDP flow paced at its rate, each datagram
#: carrying a sequence number and CLOCK_MONOTONIC send time (the device measures
#: latency on the same host clock); prints what it sent per flow and phase.
_SENDER = r"""
import json, socket, struct, sys, time
spec = json.loads(sys.argv[1])
mono = lambda: time.clock_gettime_ns(time.CLOCK_MONOTONIC)
bounds = spec["bounds"]
flows = spec["flows"]
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in flows]
sent = [[0] * len(bounds) for _ in flows]
t0 = max(mono(), spec.get("t0_ns", 0))
nxt = [t0 + int(i * 1e9 / max(1.0, f["rate"]) / len(flows)) for i, f in enumerate(flows)]
seq = [0] * len(flows)
end = spec["end_ns"]
while flows:
    i = min(range(len(flows)), key=lambda k: nxt[k])
    t = nxt[i]
    if t >= end:
        break
    dt = (t - mono()) / 1e9
    if dt > 0:
        time.sleep(dt)
    now = mono()
    pay = struct.pack("<QQ", seq[i], now).ljust(max(16, flows[i]["size"] - 42), b"\0")
    try:
        socks[i].sendto(pay, (spec["dst"], flows[i]["port"]))
        for k, (a, b) in enumerate(bounds):
            if a <= now < b:
                sent[i][k] += 1
        seq[i] += 1
    except OSError:
        pass
    nxt[i] = t + int(1e9 / flows[i]["rate"])
print(json.dumps({"sent": {f["name"]: s for f, s in zip(flows, sent)},
                  "total": {f["name"]: n for f, n in zip(flows, seq)}}), flush=True)
"""


# ------------------------------------------------------------------ one run


@dataclass
class Options:
    phase_s: float = 3.0
    break_s: float = 1.0
    attacks: list[str] = field(default_factory=lambda: list(ATTACKS))
    variants: list[str] = field(default_factory=lambda: list(VARIANTS))
    stock_priority: int = 6
    rx_cpu: int | None = None
    attacker_cpu: int | None = None


def _readline(p: subprocess.Popen, timeout_s: float) -> str:
    if p.stdout is None:
        return ""
    r, _, _ = select.select([p.stdout], [], [], timeout_s)
    return p.stdout.readline().strip() if r else ""


def run_variant(
    h: Harness,
    exe: Path,
    dev: Device,
    variant: str,
    attack: str,
    opts: Options,
    run_dir: Path,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the target through idle / attack / idle with ``attack``; return the raw record."""
    scn = dev.variants[variant]
    run_dir.mkdir(parents=True, exist_ok=True)
    P, B = opts.phase_s, opts.break_s
    total = procedure_s(P, B)
    seconds = int(math.ceil(LEAD_S + total + 1.5))
    conf = run_dir / "device.conf"
    conf.write_text(
        target_config(
            scn,
            variant == "protected",
            ifname=h.if_dev,
            mac=h.mac(h.ns_dev, h.if_dev),
            out=run_dir.resolve(),
            seconds=seconds,
            rx_cpu=opts.rx_cpu,
        )
    )
    for stale in ("device.json", "cycles.bin", "device.err"):
        (run_dir / stale).unlink(missing_ok=True)
    replays = []  # the pcap flows' rewritten frames, ready before the target starts
    for pf in pcap_flows(scn):
        frames = run_dir / f"pcap_{pf.name}.bin"
        pcap_replay.prepare(
            pf,
            frames,
            total,
            src_mac=h.mac(h.ns_atk, h.if_atk),
            dst_mac=h.mac(h.ns_dev, h.if_dev),
            src_ip=ATTACKER_ADDR,
            dst_ip=DEVICE_ADDR,
        )
        replays.append((pf.name, frames))
    err = run_dir / "device.err"
    dev_proc = h.spawn(
        "device",
        ["sh", "-c", 'exec "$0" "$1" 2>"$2"', str(exe), str(conf.resolve()), str(err.resolve())],
        limit_s=seconds + 30,
        name=f"{run_dir.name}.device",
        stop_signal="TERM",
        stdout=subprocess.PIPE,
    )
    first = _readline(dev_proc, 20.0)
    if first != "ready":
        h.stop(dev_proc)
        why = err.read_text().strip().splitlines()[-1:] if err.is_file() else []
        raise RigError(
            f"rig freertos-tcp: the target did not start ({(why or [first or 'no output'])[0]})"
        )
    t0 = mono_ns() + int(LEAD_S * 1e9)  # the traffic's processes start before the first phase
    bounds = [
        (t0, t0 + int(P * 1e9)),
        (t0 + int((P + B) * 1e9), t0 + int((2 * P + B) * 1e9)),
        (t0 + int((2 * P + 2 * B) * 1e9), t0 + int(total * 1e9)),
    ]
    flows = udp_flows(scn)
    sender = None
    if flows:
        spec = {
            "dst": DEVICE_ADDR,
            "flows": flows,
            "bounds": bounds,
            "end_ns": bounds[2][1],
            "t0_ns": t0,
        }
        sender = h.spawn(
            "attacker",
            [sys.executable, "-c", _SENDER, json.dumps(spec)],
            limit_s=LEAD_S + total + 5,
            name=f"{run_dir.name}.sender",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
        )  # not pinned beside the flood tool: its pacing would turn into bursts
    pollers = []
    for mf in modbus_flows(scn):
        mspec = {
            "dst": DEVICE_ADDR,
            "port": mf["port"],
            "rate": mf["rate"],
            "t0_ns": t0,
            "end_ns": bounds[2][1],
            "timeout_ns": int(MODBUS_TIMEOUT_S * 1e9),
            "out": str((run_dir / f"modbus_{mf['name']}.bin").resolve()),
        }
        (run_dir / f"modbus_{mf['name']}.bin").unlink(missing_ok=True)
        pollers.append(
            (
                mf["name"],
                h.spawn(
                    "attacker",
                    [
                        sys.executable,
                        str(Path(__file__).with_name("modbus_client.py")),
                        json.dumps(mspec),
                    ],
                    limit_s=LEAD_S + total + MODBUS_TIMEOUT_S + 5,
                    name=f"{run_dir.name}.modbus_{mf['name']}",
                    stop_signal="TERM",
                    stdout=subprocess.PIPE,
                ),
            )
        )
    replayers = []
    for name, frames in replays:
        rspec = {
            "frames": str(frames.resolve()),
            "ifname": h.if_atk,
            "t0_ns": t0,
            "end_ns": bounds[2][1],
            "bounds": bounds,
        }
        replayers.append(
            (
                name,
                h.spawn(
                    "attacker",
                    [sys.executable, str(Path(pcap_replay.__file__)), json.dumps(rspec)],
                    limit_s=LEAD_S + total + 5,
                    name=f"{run_dir.name}.pcap_{name}",
                    stop_signal="TERM",
                    stdout=subprocess.PIPE,
                ),
            )
        )
    say(f"idle before ({P:g} s)")
    sleep_until(bounds[1][0])
    say(f"attack: {ATTACK_LABEL[attack]} ({P:g} s)")
    traffic, _, _ = h.flood(
        attack, P, f"{run_dir.name}.{attack}", opts.attacker_cpu, end_ns=bounds[1][1]
    )
    say(f"idle after ({P:g} s)")
    sleep_until(bounds[2][1])
    sent: dict[str, Any] = {"sent": {}, "total": {}}
    if sender is not None:
        line = _readline(sender, 10.0)
        h.stop(sender)
        try:
            sent = json.loads(line)
        except ValueError:
            raise RigError("rig freertos-tcp: the flow sender reported nothing") from None
    for name, rp in replayers:
        line = _readline(rp, 10.0)
        h.stop(rp)
        try:
            r = json.loads(line)
        except ValueError:
            raise RigError(
                f"rig freertos-tcp: the pcap replay of {name} reported nothing"
            ) from None
        sent.setdefault("sent", {})[name] = r["sent"]
        sent.setdefault("total", {})[name] = r["total"]
    polled: dict[str, Any] = {}
    for name, pp in pollers:
        line = _readline(pp, MODBUS_TIMEOUT_S + 10.0)
        h.stop(pp)
        try:
            polled[name] = json.loads(line)
        except ValueError:
            raise RigError(
                f"rig freertos-tcp: the MODBUS poll client of {name} reported nothing"
            ) from None
    done = _readline(dev_proc, seconds + 20 - (mono_ns() - t0) / 1e9)
    rc = h.wait(dev_proc, 10)
    h.stop(dev_proc)
    if done != "done" or rc != 0 or not (run_dir / "device.json").is_file():
        why = err.read_text().strip().splitlines()[-1:] if err.is_file() else []
        raise RigError(
            f"rig freertos-tcp: the target ended without its results (exit {rc}"
            + (f": {why[0]}" if why else "")
            + ")"
        )
    try:
        device = json.loads((run_dir / "device.json").read_text())
    except ValueError as e:
        raise RigError(f"rig freertos-tcp: {run_dir}/device.json: {e}") from None
    return {
        "variant": variant,
        "attack": attack,
        "bounds_ns": bounds,
        "sent": sent,
        "modbus": polled,
        "traffic": traffic,
        "device": device,
    }


# ------------------------------------------------------------------ summary


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
    """Critical-task statistics of the cycles that ended in [lo, hi)."""
    end = cyc[:, 2].astype(np.int64)
    sel = (end >= lo) & (end < hi)
    c = cyc[sel].astype(np.int64)
    miss = c[:, 3] > 0
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


def summarize(raw: Mapping[str, Any], dev: Device, run_dir: Path) -> dict[str, Any]:
    """The run's ``summary.json`` in the simulator's vocabulary, with per-phase parts."""
    d = raw["device"]
    variant, attack = raw["variant"], raw["attack"]
    scn = dev.variants[variant]
    period = scn.critical.period_ns
    cyc = np.fromfile(run_dir / "cycles.bin", dtype="<u8").reshape(-1, 4)
    bounds = raw["bounds_ns"]
    reasons = _shield_reasons()
    nif = d["netif"]
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
    dropped["ip_event_queue_full"] = nif["ip_queue_full"]
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
        f = run_dir / f"latency_{name}.bin"
        if f.is_file() and name not in replayed:  # a capture's payload carries no send time
            lat = np.fromfile(f, dtype="<u8").reshape(-1, 2).astype(np.int64)
            ok = lat[:, 0] > 0
            sent_ns[name] = lat[ok, 0]
            truncated[name] = fl.get("latency_recorded", 0) < fl["delivered"]
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
    for ph, (lo, hi) in zip(PHASES, bounds, strict=True):
        a, b = _snap_at(snaps, lo), _snap_at(snaps, hi)
        part: dict[str, Any] = {"seconds": round((hi - lo) / 1e9, 3)}
        part["critical"] = _critical(cyc, period, lo, hi)
        dt = max(1e-9, (b["t_ns"] - a["t_ns"]) / 1e9)
        part["frames_at_nic"] = b["nic_frames"] - a["nic_frames"]
        part["frames_at_nic_pps"] = round(part["frames_at_nic"] / dt, 1)
        part["to_ip_task"] = b["to_ip_task"] - a["to_ip_task"]
        part["dropped"] = {
            "ring_full": b["ring_full"] - a["ring_full"],
            **{
                r: b["shield_drops"][k] - a["shield_drops"][k]
                for k, r in enumerate(reasons)
                if r not in ("none", "reasons") and k < len(b["shield_drops"])
            },
            STACK_EXHAUSTED: b["stack_exhausted"] - a["stack_exhausted"],
        }
        part["flows"] = {}
        for i, name in enumerate(names):
            sent = raw["sent"].get("sent", {}).get(name)
            k = PHASES.index(ph)
            if name in modbus_phases:
                part["flows"][name] = modbus_phases[name][ph]
                continue
            if name in sent_ns and not truncated[name]:
                # exact: the datagrams sent in this phase that were delivered
                got = int(((sent_ns[name] >= lo) & (sent_ns[name] < hi)).sum())
            else:  # the monitor's 100 ms snapshots
                got = b["delivered"][i] - a["delivered"][i]
            part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": got}
        for name in flows:
            if name not in part["flows"]:
                sent = raw["sent"].get("sent", {}).get(name)
                part["flows"][name] = {"offered": sent[k] if sent else None, "delivered": None}
        phases[ph] = part
    whole = _critical(cyc, period, bounds[0][0], bounds[2][1])
    threads: dict[str, int] = {}  # CPU ns per FreeRTOS task (thread name), whole run
    for key, ns in d.get("threads_cpu_ns", {}).items():
        name = key.rsplit("#", 1)[0]
        threads[name] = threads.get(name, 0) + int(ns)
    ip_ns = threads.get(IP_TASK_NAME)
    delivered = sum(f["delivered"] or 0 for f in flows.values())
    return {
        "scenario": scn.name,
        "target": "freertos-tcp",
        "variant": variant,
        "protected": variant == "protected",
        "attack": attack,
        "attack_tool": ATTACK_TOOL[attack],
        "seed": None,
        "duration_s": round((bounds[2][1] - bounds[0][0]) / 1e9, 3),
        "bounds_ns": bounds,
        "critical_period_ms": period / 1e6,
        "totals": {
            "offered": nif["nic_frames"],
            "received": nif["nic_frames"] - nif["ring_full"],
            "processed": nif["to_ip_task"],
            "delivered": delivered,
            "irq_raised": nif["rx_irqs"],
            "dropped": dropped,
        },
        "critical": {
            **whole,
            "cycles_total": d["cycles"],
            "misses_total": d["misses"],
            # the statistics above cover the recorded cycles; more ran when this is true
            "cycles_truncated": d.get("cycles_recorded", d["cycles"]) < d["cycles"],
        },
        "flows": flows,
        "phases": phases,
        "traffic": raw["traffic"],
        "cpu_per_frame_ns": {
            "shield": round(nif["shield_ns"] / nif["shield_frames"], 1)
            if nif["shield_frames"]
            else None,
            "to_stack": round(nif["to_stack_ns"] / nif["to_stack_frames"], 1)
            if nif["to_stack_frames"]
            else None,
            # the IP task's whole CPU time per frame it was handed (protocol processing,
            # replies, timers), over the whole run
            "ip_task": round(ip_ns / nif["to_ip_task"], 1) if ip_ns and nif["to_ip_task"] else None,
        },
        "threads_cpu_s": {k: round(v / 1e9, 4) for k, v in sorted(threads.items())},
        "netif": nif,
        "platform": "FreeRTOS POSIX port on this host (host time; 1 kHz tick)",
    }


# ------------------------------------------------------------------ claims and report


def _hp_flow(scn: Any) -> str | None:
    udp = [f for f in scn.flows if f.protocol == "udp" or (_is_modbus(f) and f.rate_pps)]
    return max(udp, key=lambda f: f.priority).name if udp else None


def _sim_facts(summary: Mapping[str, Any], hp: str | None) -> dict[str, Any]:
    f = summary.get("flows", {}).get(hp or "", {})
    off, got = f.get("offered") or 0, f.get("delivered") or 0
    return {"misses": summary["critical"]["misses"], "hp_ratio": (got / off) if off else None}


def _rig_facts(summary: Mapping[str, Any], hp: str | None) -> dict[str, Any]:
    att = summary["phases"]["attack"]
    f = att["flows"].get(hp or "", {})
    off, got = f.get("offered") or 0, f.get("delivered") or 0
    return {"misses": att["critical"]["misses"], "hp_ratio": (got / off) if off else None}


#: The share of the high-priority flow that counts as "kept being delivered".
HP_KEPT = 0.99


def claims(
    sim: Mapping[str, Mapping[str, Any]],
    rig: Sequence[Mapping[str, Any]],
    hp: str | None,
    sim_syn: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Which claims of the simulation the real stack confirms, per attack.

    ``sim`` is the scenario simulated with its own flood; ``sim_syn`` (when
    given) with the SYN flood at the rate the rig's hping3 achieved, the
    simulation a SYN-flood run is held against. The scenario models a SYN
    flood only: an ARP flood or a scan is held against the scenario's flood.
    """
    out = []
    for r in rig:
        v = r["variant"]
        use = sim_syn if (sim_syn and r["attack"] == "syn") else sim
        if v not in use:
            continue
        s, g = _sim_facts(use[v], hp), _rig_facts(r, hp)

        def kept(x: Mapping[str, Any]) -> bool:
            return x["hp_ratio"] is not None and x["hp_ratio"] >= HP_KEPT

        if v == "protected":
            pairs = [
                (
                    f"protected, {ATTACK_LABEL[r['attack']]}: the high-priority flow keeps being "
                    "delivered",
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
                    "simulated_flood": "the rig's measured SYN rate"
                    if use is sim_syn
                    else "the scenario's flood",
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
) -> dict[str, Any]:
    hp = _hp_flow(dev.variants["protected"])
    rows = []
    for r in runs:
        ph = r["phases"]
        rows.append(
            {
                "run": f"{r['variant']}-{r['attack']}",
                "variant": r["variant"],
                "attack": r["attack"],
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
    return {
        "scenario": str(dev.path),
        "hp_flow": hp,
        "runs": rows,
        "simulation": _sim_table(sim, hp),
        "simulation_at_rig_rate": (
            {"syn_pps": round(syn_pps, 1), **_sim_table(sim_syn, hp)}
            if sim_syn and syn_pps
            else None
        ),
        "claims": claims(sim, runs, hp, sim_syn),
    }


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
    over the run, unprotected and protected, the attack phase shaded."""
    mine = [r for r in runs if r["attack"] == attack]
    if not mine:
        return None
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 3.2), dpi=100)
    colours = {"unprotected": "tab:red", "protected": "tab:blue"}
    for r in mine:
        cyc = np.fromfile(out / "runs" / f"{r['variant']}-{attack}" / "cycles.bin", dtype="<u8")
        cyc = cyc.reshape(-1, 4).astype(np.int64)
        t0 = r["bounds_ns"][0][0]
        ok = cyc[:, 0] > 0
        t = (cyc[ok, 2] - t0) / 1e9
        resp = (cyc[ok, 2] - cyc[ok, 0]) / 1e6
        m = r["phases"]["attack"]["critical"]["misses"]
        label = f"{r['variant']}: {m} miss{'es' if m != 1 else ''} in the attack"
        ax.plot(t, resp, ".", ms=2, color=colours[r["variant"]], label=label)
        lo, hi = r["bounds_ns"][1]
    ax.axvspan((lo - t0) / 1e9, (hi - t0) / 1e9, color="0.9", label=ATTACK_LABEL[attack])
    period_ms = mine[0]["critical_period_ms"]
    ax.axhline(
        period_ms,
        color="0.4",
        lw=0.8,
        ls="--",
        label=f"period, {period_ms:g} ms (a deadline is {period_ms:g} ticks of ~1.1 ms host time)",
    )
    ax.set_yscale("log")
    ax.set_xlabel("time since the run started (s)")
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


def _od(f: Mapping[str, Any] | None) -> str:
    return "—" if not f else f"{_fmt(f.get('delivered'))}/{_fmt(f.get('offered'))}"


def write_report(out: Path, comp: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> Path:
    """``report.html``: protected and unprotected side by side (with a response-time figure per
    attack when ``runs`` are given), then simulation vs real stack."""
    figs = [response_figure(out, a, runs) for a in ATTACKS]
    if not runs:  # rebuilt from comparison.json: the figures already there
        figs = [out / f"fig_{a}.png" for a in ATTACKS if (out / f"fig_{a}.png").is_file()]
    fig_html = "".join(
        f'<p><img src="{html.escape(f.name)}" alt="{html.escape(f.stem)}"></p>' for f in figs if f
    )
    hp = comp["hp_flow"]
    side = []
    for r in comp["runs"]:
        side.append(
            [
                r["run"],
                r["flood_in_pps"],
                r["frames_at_nic_pps"],
                r["to_ip_task"],
                r["misses"]["idle_before"],
                r["misses"]["attack"],
                r["misses"]["idle_after"],
                r.get("lateness_max_pct", {}).get("attack"),
                r["wakeup_p99_9_us"]["idle_before"],
                r["wakeup_p99_9_us"]["attack"],
                f"{r['hp'].get('delivered')}/{r['hp'].get('offered')}",
                ", ".join(f"{k} {v}" for k, v in r["dropped_attack"].items() if v),
                r["cpu_per_frame_ns"].get("shield"),
                r["cpu_per_frame_ns"].get("to_stack"),
                r["cpu_per_frame_ns"].get("ip_task"),
            ]
        )
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
    cap = [
        f"{r['run']}: {r.get('to_ip_task_pps', 0):,.0f} frames/s to the IP task "
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
    doc = f"""<!doctype html><html><head><meta charset="utf-8">
<title>rtshield rig freertos-tcp</title>
<style>{_CSS}</style>
</head><body>
<h1>FreeRTOS-Plus-TCP under real floods: unprotected vs protected</h1>
<p>Scenario <code>{html.escape(comp["scenario"])}</code>. The real FreeRTOS kernel (POSIX port) and
FreeRTOS-Plus-TCP on a veth in the rig's namespace; libshield in the network interface's receive
path (protected) or the stock path (unprotected). Phases: idle before, attack, idle after.
Host time on a shared machine with a ~1 ms tick: judge by counts (misses, deliveries, drops),
not by microseconds.</p>
<h2>Side by side</h2>
{
        _table(
            [
                "run",
                "flood reaching the device (pkt/s)",
                "frames at the target's NIC (pkt/s)",
                "frames handed to the IP task (attack)",
                "misses idle before",
                "misses attack",
                "misses idle after",
                "worst lateness attack (%)",
                "wake-up p99.9 idle (µs)",
                "wake-up p99.9 attack (µs)",
                f"{hp} delivered/sent (attack)",
                "drops in the attack phase",
                "libshield ns/frame",
                "copy to stack ns/frame",
                "IP task ns/frame",
            ],
            side,
        )
    }
{fig_html}
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
<p>Per-run details: <code>runs/*/summary.json</code>;
the simulator's: <code>sim/*/summary.json</code>.</p>
</body></html>
"""
    return atomic_write(out / "report.html", doc)


def simulate_variants(dev: Device, out: Path, suffix: str = "") -> dict[str, dict[str, Any]]:
    """Simulate both variants of the device; write ``out/sim/<variant><suffix>/summary.json``."""
    from rtshield.runner import simulate

    res = {}
    for v in VARIANTS:
        s = simulate(dev.variants[v]).summary()
        d = out / "sim" / (v + suffix)
        d.mkdir(parents=True, exist_ok=True)
        atomic_write(d / "summary.json", format_summary_json(s))
        res[v] = s
    return res


def prepare_attacker(h: Harness) -> None:
    """The attacker's veth computes its checksums (no offload), or the stack drops its frames."""
    h.ns_exec_ok(h.ns_atk, ["ethtool", "-K", h.if_atk, "tx", "off"], "ethtool -K tx off")
    # The device's Linux side holds no address: FreeRTOS-Plus-TCP is the device.
    h.ns_exec_ok(h.ns_dev, ["ip", "addr", "flush", "dev", h.if_dev], "removing the device address")
