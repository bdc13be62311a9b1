"""One run of the FreeRTOS target: the device process and the traffic around it.

:func:`run_variant` writes the target's config, starts the device (the POSIX
program, or QEMU with the MPS2 image: :mod:`.board`) in the device namespace,
and from the attacker's namespace the UDP sender (paced, timestamped:
:data:`_SENDER`), a MODBUS/TCP poll client per MODBUS flow
(:mod:`rtshield.rig.modbus_client`) and a replay per capture
(:mod:`rtshield.rig.pcap_replay`); then it goes through the phases with one
flood tool in the attack phase and collects what every process reports. The
phases are the rig's (host time); the device's console (:mod:`.console`) maps
them onto the device's clock.
"""

from __future__ import annotations

import contextlib
import json
import math
import select
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtshield.rig import modbus_client, pcap_replay
from rtshield.rig.attacks import ATTACKS
from rtshield.rig.harness import Harness, leftovers
from rtshield.rig.host import RigError
from rtshield.rig.network import ATTACKER_ADDR, DEVICE_ADDR
from rtshield.rig.timing import mono_ns, procedure_s, sleep_until

from .board import Bench, device_argv, tap_sample
from .console import Console, host_to_device
from .device import VARIANTS, Device, modbus_flows, pcap_flows, target_config, udp_flows
from .phases import ATTACK_LABEL, GO_S, LEAD_S, MODBUS_TIMEOUT_S, phase_bounds

__all__ = ["READY_S", "Options", "run_variant"]

#: Runs in the attacker namespace: each UDP flow paced at its rate, each datagram
#: carrying a sequence number and CLOCK_MONOTONIC send time (the device measures
#: latency on the same host clock); prints what it sent per flow and phase.
_SENDER = r"""
import json, socket, struct, sys, time
spec = json.loads(sys.argv[1])
mono = lambda: time.clock_gettime_ns(time.CLOCK_MONOTONIC)
flows = spec["flows"]
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in flows]
if spec.get("go"):  # started ahead: say so, then take t0_ns/end_ns/bounds from the go line
    print("ready", flush=True)
    spec.update(json.loads(sys.stdin.readline() or "{}"))
bounds = spec["bounds"]
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


#: How long a device may take to say "ready" (host seconds): the POSIX program at once;
#: QEMU boots, and the MPS2 board's LAN9118 driver waits 2 s of guest time at its start.
READY_S = {False: 20.0, True: 90.0}


#: An emulated board that printed nothing (no sync line, 10 per second of guest time) for
#: this long (host seconds) is stuck, not slow.
_STALL_S = 30.0


def _last_line(err: Path) -> list[str]:
    return err.read_text(errors="replace").strip().splitlines()[-1:] if err.is_file() else []


def run_variant(
    h: Harness,
    bench: Bench,
    dev: Device,
    variant: str,
    attack: str,
    opts: Options,
    run_dir: Path,
    say: Callable[[str], None] = print,
    rate: float | None = None,
) -> dict[str, Any]:
    """Run the target through idle / attack / idle with ``attack`` at ``rate`` packets/s
    (``None``: full rate, the study's tools); return the raw record."""
    target = bench.target
    who = f"rig {target.verb}"
    scn = dev.variants[variant]
    run_dir.mkdir(parents=True, exist_ok=True)
    P, B = opts.phase_s, opts.break_s
    total = procedure_s(P, B)
    seconds = int(math.ceil(LEAD_S + total + 1.5))
    conf = run_dir.resolve() / "device.conf"
    conf.write_text(
        target_config(
            scn,
            variant == "protected",
            ifname=bench.wiring.ifname,
            mac=bench.wiring.mac,
            out=run_dir.resolve(),
            seconds=seconds,
            rx_cpu=None if target.emulated else opts.rx_cpu,
        )
    )
    for stale in ("device.json", "cycles.bin", "device.err", "console.log", "stop"):
        (run_dir / stale).unlink(missing_ok=True)
    replays = []  # the pcap flows' rewritten frames, ready before the target starts
    for pf in pcap_flows(scn):
        frames = run_dir / f"pcap_{pf.name}.bin"
        pcap_replay.prepare(
            pf,
            frames,
            total,
            src_mac=h.mac(h.ns_atk, h.if_atk),
            dst_mac=bench.wiring.mac,
            src_ip=ATTACKER_ADDR,
            dst_ip=DEVICE_ADDR,
        )
        replays.append((pf.name, frames))
    err = run_dir.resolve() / "device.err"
    argv = device_argv(target, bench.images[variant], conf, bench.wiring)
    # Guest time may fall behind (a flood, a loaded host): the device's `seconds` then last
    # longer here. The emulated board is waited for as long as its sync lines come.
    limit = seconds + 30 if not target.emulated else 10 * seconds + 90
    tap: list[tuple[str, dict[str, int] | None]] = [("start", tap_sample(h, bench.wiring))]
    dev_proc = h.spawn(
        "device",
        ["sh", "-c", 'err=$1; shift; exec "$@" 2>"$err"', "sh", str(err), *argv],
        limit_s=limit,
        name=f"{run_dir.name}.device",
        stop_signal="TERM",
        stdout=subprocess.PIPE,
    )
    console = Console(dev_proc.stdout, run_dir / "console.log")
    if not console.wait("ready", READY_S[target.emulated]):
        h.stop(dev_proc)
        why = _last_line(err) or [console.last_other() or "no output"]
        raise RigError(f"{who}: the target did not start ({why[0]})")
    # The device learns the controller's address before the phases, as on a network where
    # they have talked before: FreeRTOS-Plus-TCP drops the datagrams of a sender it has no
    # ARP entry for while it asks (all but one).
    warm = h.spawn(
        "attacker",
        ["ping", "-q", "-c", "2", "-i", "0.2", "-W", "1", DEVICE_ADDR],
        limit_s=LEAD_S,
        name=f"{run_dir.name}.arp-warm-up",
        stop_signal="TERM",
    )
    start_by = mono_ns() + int(LEAD_S * 1e9)
    # The traffic's processes start now, say "ready" once set up and wait for the go line
    # that gives them the phases (started ahead: a Python process takes a few hundred ms).
    ahead: list[tuple[str, subprocess.Popen]] = []
    flows = udp_flows(scn)
    sender = None
    if flows:
        spec = {"dst": DEVICE_ADDR, "flows": flows, "go": True}
        sender = h.spawn(
            "attacker",
            [sys.executable, "-c", _SENDER, json.dumps(spec)],
            limit_s=LEAD_S + total + 5,
            name=f"{run_dir.name}.sender",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
            stdin=subprocess.PIPE,
        )  # not pinned beside the flood tool: its pacing would turn into bursts
        ahead.append(("the flow sender", sender))
    pollers = []
    for mf in modbus_flows(scn):
        mspec = {
            "dst": DEVICE_ADDR,
            "port": mf["port"],
            "rate": mf["rate"],
            "go": True,
            "timeout_ns": int(MODBUS_TIMEOUT_S * 1e9),
            "out": str((run_dir / f"modbus_{mf['name']}.bin").resolve()),
        }
        (run_dir / f"modbus_{mf['name']}.bin").unlink(missing_ok=True)
        pp = h.spawn(
            "attacker",
            [sys.executable, str(Path(modbus_client.__file__)), json.dumps(mspec)],
            limit_s=LEAD_S + total + MODBUS_TIMEOUT_S + 5,
            name=f"{run_dir.name}.modbus_{mf['name']}",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
            stdin=subprocess.PIPE,
        )
        pollers.append((mf["name"], pp))
        ahead.append((f"the MODBUS poll client of {mf['name']}", pp))
    replayers = []
    for name, frames in replays:
        rspec = {"frames": str(frames.resolve()), "ifname": h.if_atk, "go": True}
        rp = h.spawn(
            "attacker",
            [sys.executable, str(Path(pcap_replay.__file__)), json.dumps(rspec)],
            limit_s=LEAD_S + total + 5,
            name=f"{run_dir.name}.pcap_{name}",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
            stdin=subprocess.PIPE,
        )
        replayers.append((name, rp))
        ahead.append((f"the pcap replay of {name}", rp))
    for what, p in ahead:
        if _readline(p, max(0.0, (start_by - mono_ns()) / 1e9)) != "ready":
            raise RigError(f"{who}: {what} did not start within {LEAD_S:g} s")
    h.wait(warm, max(0.0, (start_by - mono_ns()) / 1e9))  # it ends after its two answers
    h.stop(warm)
    # The flood's shaper, set up before the first phase (in the attack phase it would start
    # the flood as late as a loaded host runs tc) and given back as soon as the tool has
    # stopped at the attack's end, which drops what its queue still holds (up to a quarter
    # of a second of a SYN flood): none of the flood reaches the device in the idle after.
    with contextlib.ExitStack() as held:
        held.enter_context(h.flood_held(attack, rate))
        t0 = mono_ns() + int(GO_S * 1e9)
        bounds = phase_bounds(t0, P, B)
        go = json.dumps({"t0_ns": t0, "end_ns": bounds[2][1], "bounds": bounds}) + "\n"
        for what, p in ahead:
            try:
                if p.stdin is not None:
                    p.stdin.write(go)
                    p.stdin.close()
            except OSError:
                raise RigError(f"{who}: {what} ended before the first phase") from None

        def mark(at_ns: int, what: str) -> None:
            sleep_until(at_ns)
            if bench.wiring.tap is not None:
                tap.append((what, tap_sample(h, bench.wiring)))

        mark(bounds[0][0], "idle_before")
        say(f"idle before ({P:g} s)")
        mark(bounds[0][1], "idle_before_end")
        mark(bounds[1][0], "attack")
        at = "" if rate is None else f" at {rate:g} pkt/s"
        say(f"attack: {ATTACK_LABEL[attack]}{at} ({P:g} s)")
        traffic, _, _ = h.flood(
            attack, P, f"{run_dir.name}.{attack}", opts.attacker_cpu, end_ns=bounds[1][1],
            rate=rate, stopped=held.close,
        )  # fmt: skip
        mark(bounds[1][1], "attack_end")
        mark(bounds[2][0], "idle_after")
        say(f"idle after ({P:g} s)")
        mark(bounds[2][1], "idle_after_end")
    sent: dict[str, Any] = {"sent": {}, "total": {}}
    if sender is not None:
        line = _readline(sender, 10.0)
        h.stop(sender)
        try:
            sent = json.loads(line)
        except ValueError:
            raise RigError(f"{who}: the flow sender reported nothing") from None
    for name, rp in replayers:
        line = _readline(rp, 10.0)
        h.stop(rp)
        try:
            r = json.loads(line)
        except ValueError:
            raise RigError(f"{who}: the pcap replay of {name} reported nothing") from None
        sent.setdefault("sent", {})[name] = r["sent"]
        sent.setdefault("total", {})[name] = r["total"]
    polled: dict[str, Any] = {}
    for name, pp in pollers:
        line = _readline(pp, MODBUS_TIMEOUT_S + 10.0)
        h.stop(pp)
        try:
            polled[name] = json.loads(line)
        except ValueError:
            raise RigError(f"{who}: the MODBUS poll client of {name} reported nothing") from None
    # The phases are over and every sender has ended: the device ends its recording at its
    # next snapshot (100 ms), once the frames still on their way have reached their workers,
    # instead of running out its `seconds`, which only bound a run whose runner went away.
    (run_dir / "stop").touch()
    console.wait(
        "done",
        max(10.0, limit - (mono_ns() - t0) / 1e9),
        stall_s=_STALL_S if target.emulated else None,
    )
    rc = h.wait(dev_proc, 10)
    h.stop(dev_proc)
    (run_dir / "stop").unlink(missing_ok=True)
    tap.append(("end", tap_sample(h, bench.wiring)))
    if "done" not in console.words or rc != 0 or not (run_dir / "device.json").is_file():
        why = _last_line(err) or ([console.last_other()] if console.last_other() else [])
        if h.ns_dev not in leftovers()["netns"]:  # a live run's go only with `clean --force`
            why = [f"its namespace {h.ns_dev} is gone: a `rtshield rig clean --force` while "
                   "it ran?"]
        raise RigError(
            f"{who}: the target ended without its results (exit {rc}"
            + (f": {why[0]}" if why else "")
            + ")"
            + console.progress(seconds)
        )
    try:
        device = json.loads((run_dir / "device.json").read_text())
    except ValueError as e:
        raise RigError(f"{who}: {run_dir}/device.json: {e}") from None
    dbounds = [host_to_device(console.syncs, b) for b in bounds] if target.emulated else bounds
    return {
        "variant": variant,
        "attack": attack,
        "rate_asked_pps": rate,
        "target": {"stack": target.stack, "board": target.board, "clock": target.clock},
        "bounds_ns": bounds,
        "device_bounds_ns": [list(b) for b in dbounds],
        "syncs": len(console.syncs),
        "sent": sent,
        "modbus": polled,
        "traffic": traffic,
        "tap": [{"at": w, **c} for w, c in tap if c is not None],
        "device": device,
    }
