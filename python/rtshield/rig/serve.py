"""``rtshield rig serve``: one of the rig's own targets as a standalone device to test.

The device runs in a network namespace of its own (``rtsrig-<tag>-dev``) behind
a veth pair whose other end is created in this namespace under the name the
user gives (``--iface``, address 198.18.0.2/24), so any tool of this host --
``rtshield rig device`` first -- can reach it at 198.18.0.1. It prints one line,
``target ADDRESS on interface IFNAME``, and serves until Ctrl-C or SIGTERM,
which remove everything it made (a SIGKILL leaves what ``rtshield rig clean``
removes).

Every device offers the same services, so one profile tests them all (the
shipped default's monitors): MODBUS/TCP on 5020, a TCP listener (accept and
close) on 502, a UDP socket on 6000 that takes what comes, and ICMP echo.

* ``freertos-tcp`` -- the rig's FreeRTOS-Plus-TCP target (POSIX port, board
  ``posix``; ``rig/freertos/modbus_device.toml`` or ``--scenario``), with
  libshield in its receive path (``--protect on``) or the stock path
  (``--protect off``). The device program runs at most an hour (its
  ``seconds`` limit); ``serve`` starts it again when it ends. It has no UDP
  echo and sends no heartbeat (docs/rig.md says what it would need).
* ``linux`` -- a Linux device: ``rig/linux/rts_cyclic.c`` as its control task
  (SCHED_FIFO, a 1 ms cycle, on the last CPU, which also takes the device's
  receive work: the single-core S configuration of ``rig linux``) sending a
  heartbeat every 10 cycles to 198.18.0.2:5005, and :mod:`rtshield.rig.services`
  (MODBUS/TCP, the listener, UDP echo on 7, the UDP sink). ``--protect on``
  adds ``rig linux``'s ingress limits (nftables: 1 000 SYN/s, 100 ARP/s).

A target lists its boards (:data:`TARGETS`): a board option selects among them,
and a target or a board added later (a QEMU board, an lwIP stack) is one more
entry with its own start function.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtshield.rig import freertos, linux, services
from rtshield.rig.harness import Harness
from rtshield.rig.host import TOOLS, RigError, require_tools
from rtshield.rig.network import ATTACKER_ADDR, DEVICE_ADDR, LISTEN_PORT, PREFIX

__all__ = [
    "ECHO_PORT",
    "HEARTBEAT_PORT",
    "MODBUS_PORT",
    "SINK_PORT",
    "TARGETS",
    "Served",
    "ServeOptions",
    "Target",
    "check_free",
    "serve",
]

#: The served devices' services (the default profile's monitors and storms use them).
MODBUS_PORT = 5020
SINK_PORT = 6000
ECHO_PORT = 7
HEARTBEAT_PORT = 5005
#: The Linux device's heartbeat: every this many cycles of its 1 ms control task.
HEARTBEAT_EVERY = 10
#: The longest the FreeRTOS device program runs before ``serve`` starts it again (s).
FREERTOS_RUN_S = 3600
#: The ingress limits of ``serve linux --protect on`` (packets/s), as ``rig linux``'s.
LINUX_LIMITS = {"syn": 1000, "arp": 100}


@dataclass
class ServeOptions:
    iface: str
    protect: bool
    board: str
    scenario: Path | None = None
    freertos_tree: str | None = None
    say: Callable[[str], None] = print


@dataclass
class Served:
    """A device running: its processes, and how to restart one that ends on its own."""

    procs: list[subprocess.Popen]
    #: starts the device program again after it ended normally (its run time was up)
    restart: Callable[[], subprocess.Popen] | None = None
    #: where the device program's error lines go
    errors: Path | None = None

    def why(self) -> str:
        lines = self.errors.read_text().strip().splitlines() if self.errors and (
            self.errors.is_file()) else []
        return lines[-1] if lines else "no message"


@dataclass(frozen=True)
class Target:
    """A target ``serve`` can start: its boards (the first is the default), the tools it
    needs, and its start function."""

    name: str
    boards: tuple[str, ...]
    tools: tuple[str, ...]
    start: Callable[[Harness, ServeOptions, Path], Served]
    summary: str


def _readline(p: subprocess.Popen, timeout_s: float) -> str:
    import select

    if p.stdout is None:
        return ""
    r, _, _ = select.select([p.stdout], [], [], timeout_s)
    return p.stdout.readline().strip() if r else ""


def _start_freertos(h: Harness, opts: ServeOptions, work: Path) -> Served:
    scen = opts.scenario or freertos.default_scenario().with_name("modbus_device.toml")
    dev = freertos.load_device(scen, stock_priority=6)
    exe = freertos.build_target(freertos.find_tree(opts.freertos_tree), say=opts.say)
    # This end computes its checksums (the stack drops frames with partial ones); the
    # device's Linux side holds no address: FreeRTOS-Plus-TCP is the device.
    h.ns_exec_ok(None, ["ethtool", "-K", h.if_atk, "tx", "off"], "ethtool -K tx off")
    h.ns_exec_ok(h.ns_dev, ["ip", "addr", "flush", "dev", h.if_dev], "removing the address")
    cpus = sorted(os.sched_getaffinity(0))
    variant = "protected" if opts.protect else "unprotected"
    conf = work / "device.conf"
    conf.write_text(
        freertos.target_config(
            dev.variants[variant],
            opts.protect,
            ifname=h.if_dev,
            mac=h.mac(h.ns_dev, h.if_dev),
            out=work,
            seconds=FREERTOS_RUN_S,
            rx_cpu=cpus[0] if len(cpus) > 1 else None,
        )
    )
    err = work / "device.err"

    def start() -> subprocess.Popen:
        p = h.spawn(
            "device",
            ["sh", "-c", 'exec "$0" "$1" 2>>"$2"', str(exe), str(conf), str(err)],
            limit_s=FREERTOS_RUN_S + 60,
            name="device",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
        )
        line = _readline(p, 20.0)
        if line != "ready":
            why = err.read_text().strip().splitlines()[-1:] if err.is_file() else []
            raise RigError(f"rig serve: the target did not start ({(why or [line or '?'])[0]})")
        return p

    return Served([start()], restart=start, errors=err)


def _start_linux(h: Harness, opts: ServeOptions, work: Path) -> Served:
    exe = linux.build_program()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    h.set_rps("device", [cpu])  # the receive work shares the control task's CPU
    if opts.protect:
        h.install_nft(LINUX_LIMITS)
    spec = {"modbus_port": MODBUS_PORT, "listen_port": LISTEN_PORT, "echo_port": ECHO_PORT,
            "sink_port": SINK_PORT, "addr": DEVICE_ADDR}
    svc = h.spawn(
        "device",
        [sys.executable, str(Path(services.__file__)), json.dumps(spec)],
        limit_s=10**7,
        name="services",
        stop_signal="TERM",
        stdout=subprocess.PIPE,
    )
    if _readline(svc, 10.0) != "ready":
        raise RigError("rig serve linux: the device's services did not start")
    ctl = h.spawn(
        "device",
        [str(exe), "--policy", "fifo", "--prio", "80", "--cpu", str(cpu), "--cycle-us", "1000",
         "--max-cycles", "60000", "--keep-cycling", "1",
         "--heartbeat", f"{ATTACKER_ADDR}:{HEARTBEAT_PORT}",
         "--heartbeat-every", str(HEARTBEAT_EVERY), "--out", str(work / "cycles.rtscyc")],
        limit_s=10**7,
        name="control",
        stop_signal="TERM",
        stdout=subprocess.PIPE,
    )
    line = _readline(ctl, 10.0)
    if not line.startswith("ready"):
        raise RigError(f"rig serve linux: the control task did not start ({line or 'no output'})")
    return Served([svc, ctl])


TOOLS.setdefault("ethtool", "ethtool")
TOOLS.setdefault("gcc", "gcc")

#: The targets ``rig serve`` starts.
TARGETS: dict[str, Target] = {
    "freertos-tcp": Target(
        "freertos-tcp", ("posix",), ("ip", "nft", "timeout", "ethtool", "gcc"), _start_freertos,
        "FreeRTOS-Plus-TCP with libshield (--protect on) or the stock receive path",
    ),
    "linux": Target(
        "linux", ("host",), ("ip", "nft", "timeout", "cc"), _start_linux,
        "a Linux control task with a heartbeat, MODBUS/TCP, UDP echo",
    ),
}


def check_free() -> None:
    """No other address of the rig's range on this namespace's interfaces (a second
    ``serve`` would route 198.18.0.0/24 twice)."""
    p = subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=False)
    try:
        links = json.loads(p.stdout or "[]")
    except ValueError:
        links = []
    prefix = ATTACKER_ADDR.rsplit(".", 1)[0] + "."
    for link in links:
        for a in link.get("addr_info", []):
            if str(a.get("local", "")).startswith(prefix):
                raise RigError(
                    f"rig serve: {link.get('ifname')} holds {a['local']} already (another "
                    "rig serve runs?); stop it, or remove leftovers with 'rtshield rig clean'"
                )


def serve(name: str, opts: ServeOptions, announce: Callable[[str], None]) -> dict[str, Any]:
    """Start target ``name`` and serve until interrupted (KeyboardInterrupt, which the
    command's SIGTERM handler raises too); everything is removed on the way out."""
    target = TARGETS[name]
    require_tools(list(target.tools))
    check_free()
    work = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-serve-"))
    restarts = 0
    try:
        with Harness(peer=opts.iface) as h:
            served = target.start(h, opts, work)
            announce(f"target {DEVICE_ADDR} on interface {h.if_atk}")
            try:
                while True:
                    time.sleep(0.5)
                    for i, p in enumerate(served.procs):
                        if p.poll() is None:
                            continue
                        if served.restart is None or p.returncode != 0:
                            raise RigError(
                                f"rig serve {name}: the device's process ended "
                                f"(exit {p.returncode}: {served.why()})"
                            )
                        h.stop(p)
                        served.procs[i] = served.restart()
                        restarts += 1
            except KeyboardInterrupt:
                pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"restarts": restarts}
