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
close) on 502, a UDP socket on 6000 that takes what comes, UDP echo on 7, and
ICMP echo; the Linux device also sends a heartbeat.

* ``freertos-tcp`` and ``lwip`` -- the rig's device application
  (``rig/freertos/app/``) on FreeRTOS-Plus-TCP or lwIP, on the board
  ``posix`` (the FreeRTOS POSIX port) or ``mps2-an385`` (Cortex-M3 in QEMU, its
  LAN9118 on a TAP bridged to the veth), built, wired and started as ``rig
  freertos-tcp`` and ``rig lwip`` do it; the board's ``modbus_device.toml``
  (:func:`served_scenario`) or ``--scenario``, with an ``echo`` flow on port 7
  added (:func:`echo_flow`). libshield in the receive path (``--protect on``) or
  the stack's usual path (``--protect off``). The device program runs at most an
  hour of its clock (its ``seconds`` limit); ``serve`` starts it again when it
  ends. It sends no heartbeat: the default profile's heartbeat monitor is
  ``optional`` and skipped, with the reason.
* ``linux`` -- a Linux device: ``rig/linux/rts_cyclic.c`` as its control task
  (SCHED_FIFO, a 1 ms cycle, on the last CPU, which also takes the device's
  receive work: the single-core S configuration of ``rig linux``) sending a
  heartbeat every 10 cycles to 198.18.0.2:5005, and :mod:`rtshield.rig.services`
  (MODBUS/TCP, the listener, UDP echo on 7, the UDP sink). ``--protect on``
  adds ``rig linux``'s ingress limits (nftables: 1 000 SYN/s, 100 ARP/s).

A target lists its boards (:data:`TARGETS`, the first the default) and the
programs each needs; a target or a board added later is one more entry with its
own start function.
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
        lines = _last_line(self.errors) if self.errors else []
        return lines[0] if lines and lines[0] else "no message"


@dataclass(frozen=True)
class Target:
    """A target ``serve`` can start: its boards (the first is the default), the tools it
    needs, and its start function."""

    name: str
    boards: tuple[str, ...]
    tools: Callable[[str], list[str]]  # board -> the programs it needs
    start: Callable[[Harness, ServeOptions, Path], Served]
    summary: str


def _readline(p: subprocess.Popen, timeout_s: float) -> str:
    import select

    if p.stdout is None:
        return ""
    r, _, _ = select.select([p.stdout], [], [], timeout_s)
    return p.stdout.readline().strip() if r else ""


def served_scenario(target: freertos.Target) -> Path:
    """The device a FreeRTOS target serves without ``--scenario``: the board's own
    ``modbus_device.toml`` (``rig/freertos/<board>/``: the MPS2 board's adds its global
    limit), else ``rig/freertos/modbus_device.toml``."""
    base = freertos.default_scenario(target)
    own = base.with_name("modbus_device.toml")
    return own if own.is_file() else freertos.default_scenario().with_name("modbus_device.toml")


def echo_flow(config: str) -> str:
    """The config line of the device's UDP echo service on :data:`ECHO_PORT`: a flow of
    the device application's ``echo`` kind with the values of the scenario's MODBUS flow
    (its priority, server, queue and worker: the echo is the device's other
    request/response function); "" when the scenario has no MODBUS flow."""
    for line in config.splitlines():
        f = line.split()
        if len(f) == 10 and f[0] == "flow" and f[2] == "modbus":
            return " ".join(["flow", "echo", "echo", str(ECHO_PORT), *f[4:]]) + "\n"
    return ""


def _freertos_starter(stack: str) -> Callable[[Harness, ServeOptions, Path], Served]:
    """The start function of the device application on ``stack`` (``plustcp``, ``lwip``):
    built, wired and started as ``rig freertos-tcp`` and ``rig lwip`` do
    (:func:`.freertos.build_images`, :func:`.freertos.wire`, :func:`.freertos.device_argv`),
    with its UDP echo service (:func:`echo_flow`) added."""

    def start_target(h: Harness, opts: ServeOptions, work: Path) -> Served:
        target = freertos.Target(stack, opts.board)
        dev = freertos.load_device(opts.scenario or served_scenario(target), stock_priority=6)
        images = freertos.build_images(
            target, freertos.find_tree(opts.freertos_tree, target), say=opts.say
        )
        bench = freertos.wire(h, target, images)
        variant = "protected" if opts.protect else "unprotected"
        cpus = sorted(os.sched_getaffinity(0))
        conf = work / "device.conf"
        text = freertos.target_config(
            dev.variants[variant],
            opts.protect,
            ifname=bench.wiring.ifname,
            mac=bench.wiring.mac,
            out=work,
            seconds=FREERTOS_RUN_S,
            rx_cpu=cpus[0] if len(cpus) > 1 and not target.emulated else None,
        )
        conf.write_text(text + echo_flow(text))
        err = work / "device.err"
        argv = freertos.device_argv(target, bench.images[variant], conf, bench.wiring)
        # guest time may run behind the host's: the emulated board gets longer
        limit = FREERTOS_RUN_S * (10 if target.emulated else 1) + 90

        def start() -> subprocess.Popen:
            p = h.spawn(
                "device",
                ["sh", "-c", 'err=$1; shift; exec "$@" 2>>"$err"', "sh", str(err), *argv],
                limit_s=limit,
                name="device",
                stop_signal="TERM",
                stdout=subprocess.PIPE,
            )
            # read in a thread: the MPS2 board prints a sync line per 100 ms
            console = freertos.Console(p.stdout)
            if not console.wait("ready", freertos.READY_S[target.emulated]):
                h.stop(p)
                why = _last_line(err) or console.other[-1:] or ["no output"]
                raise RigError(f"rig serve: the target did not start ({why[0]})")
            # The device learns this host's address at once, as the rig's runs do before
            # their phases (FreeRTOS-Plus-TCP drops a reply while it asks for the address;
            # on the MPS2 board this host never asks, its neighbour entry is permanent).
            subprocess.run(
                ["ping", "-q", "-c", "2", "-i", "0.2", "-W", "1", "-I", h.if_atk, DEVICE_ADDR],
                capture_output=True, timeout=10, check=False,
            )  # fmt: skip
            return p

        return Served([start()], restart=start, errors=err)

    return start_target


def _last_line(path: Path) -> list[str]:
    """The last line of a device's error file (none: [])."""
    lines = path.read_text(errors="replace").strip().splitlines() if path.is_file() else []
    return lines[-1:]


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


for _tool, _pkg in (("ethtool", "ethtool"), ("gcc", "gcc"), ("patch", "patch"),
                   ("ping", "iputils-ping"), ("arm-none-eabi-gcc", "gcc-arm-none-eabi"),
                   ("qemu-system-arm", "qemu-system-arm")):  # fmt: skip
    TOOLS.setdefault(_tool, _pkg)


def _freertos_tools(stack: str) -> Callable[[str], list[str]]:
    def tools(board: str) -> list[str]:
        t = freertos.Target(stack, board)
        return ["ip", "timeout", "ping", *t.build_tools, *t.run_tools]

    return tools


#: The FreeRTOS boards (:data:`.freertos.BOARDS`), the POSIX port first (the default).
_FREERTOS_BOARDS = tuple(sorted(freertos.BOARDS, key=lambda b: b != "posix"))

#: The targets ``rig serve`` starts.
TARGETS: dict[str, Target] = {
    "freertos-tcp": Target(
        "freertos-tcp", _FREERTOS_BOARDS, _freertos_tools("plustcp"), _freertos_starter("plustcp"),
        "FreeRTOS-Plus-TCP with libshield (--protect on) or the stock receive path",
    ),
    "lwip": Target(
        "lwip", _FREERTOS_BOARDS, _freertos_tools("lwip"), _freertos_starter("lwip"),
        "lwIP with libshield (--protect on) or lwIP's usual RTOS driver",
    ),
    "linux": Target(
        "linux", ("host",), lambda board: ["ip", "nft", "timeout", "cc"], _start_linux,
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
    require_tools(target.tools(opts.board))
    check_free()
    work = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-serve-"))
    restarts = 0
    try:
        with Harness(peer=opts.iface) as h:
            h.own_path(work)  # removed by `rig clean` too, should this process be killed
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
