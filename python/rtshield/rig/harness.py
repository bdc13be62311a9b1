"""The rig's network harness: two namespaces, a veth pair, real flood tools, counters, cleanup.

Shared by every rig target (``rtshield rig linux`` and, later, the FreeRTOS
target): nothing here knows what runs on the device side.

Layout (docs/rig.md, "The network")::

    namespace rtsrig-<tag>-atk                 namespace rtsrig-<tag>-dev
    attacker  198.18.0.2/24  rtsrig<tag>a <==veth==> rtsrig<tag>d  198.18.0.1/24  device
                                                        TCP listener on port 502

The addresses come from 198.18.0.0/15, the range RFC 2544 reserves for
benchmarking network devices; they exist only inside the two namespaces, which
have no other interface and no route, so rig traffic cannot reach any other
host. Every name the rig creates starts with :data:`PREFIX`; :func:`clean`
removes those and nothing else.

Safety properties:

* every process is started through ``timeout`` with a hard limit, in its own
  process group, inside a rig namespace -- even if this Python process is
  killed with SIGKILL, the tools stop on their own;
* :meth:`Harness.close` (also run by ``with``) stops the processes, kills
  whatever still runs in the namespaces and deletes the namespaces, which
  removes the veth pair, its qdiscs and its nftables tables with them;
  SIGINT/SIGTERM are blocked while it runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rtshield.errors import UsageError

__all__ = [
    "ATTACKER_ADDR",
    "ATTACKS",
    "ATTACK_TOOL",
    "DEVICE_ADDR",
    "LISTEN_PORT",
    "PREFIX",
    "TAG_ENV",
    "TOOLS",
    "Counters",
    "Harness",
    "RigError",
    "SysctlOverride",
    "arp_flood_argv",
    "attack_argv",
    "clean",
    "count_flood_in",
    "leftovers",
    "mono_ns",
    "nmap_scan_argv",
    "require_root",
    "require_tools",
    "sleep_until",
    "stress_argv",
    "syn_flood_argv",
]

#: Every namespace, interface and nftables table the rig creates starts with this.
PREFIX = "rtsrig"
#: The device's address (RFC 2544 benchmarking range, inside the rig's namespaces only).
DEVICE_ADDR = "198.18.0.1"
#: The attacker's address.
ATTACKER_ADDR = "198.18.0.2"
PREFIX_LEN = 24
#: The device's TCP listener (MODBUS/TCP's port, as on a PLC); SYN floods and scans hit it.
LISTEN_PORT = 502
#: The nftables table (netdev family, in the device namespace) with the rig's counters.
NFT_TABLE = "rtsrig"

#: Every process the rig starts carries its run's tag in this environment variable.
TAG_ENV = "RTSRIG_TAG"

#: Programs the rig runs, each with the Debian package that provides it.
TOOLS: dict[str, str] = {
    "ip": "iproute2",
    "nft": "nftables",
    "taskset": "util-linux",
    "timeout": "coreutils",
    "hping3": "hping3",
    "mausezahn": "netsniff-ng",
    "nmap": "nmap",
    "stress-ng": "stress-ng",
    "cc": "build-essential",
}


class RigError(UsageError):
    """The rig cannot run or a system command failed; shown as one line, exit 2."""


def require_root() -> None:
    """Refuse to go on unless we are root (namespaces, RT scheduling, raw sockets need it)."""
    if os.geteuid() != 0:
        raise RigError(
            "rig: needs root (network namespaces, SCHED_FIFO and raw sockets); "
            "run it with sudo, e.g. sudo rtshield rig linux --out DIR"
        )


def require_tools(names: Iterable[str]) -> None:
    """Refuse to go on when a tool is missing; the message names each tool and its package."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        pkgs = sorted({TOOLS.get(n, n) for n in missing})
        raise RigError(
            f"rig: missing tool{'s' if len(missing) > 1 else ''}: {', '.join(missing)} "
            f"(Debian: apt-get install {' '.join(pkgs)}, or run tools/install.sh --rig)"
        )


# --------------------------------------------------------------- tool command lines


def syn_flood_argv(target: str = DEVICE_ADDR, port: int = LISTEN_PORT) -> list[str]:
    """hping3 SYN flood at full rate to the listener; responses are not handled."""
    return ["hping3", "-S", "--flood", "-q", "-p", str(port), target]


def arp_flood_argv(iface: str, sender: str = ATTACKER_ADDR) -> list[str]:
    """Gratuitous ARP requests (sender IP = target IP, broadcast) at full rate (mausezahn)."""
    return [
        "mausezahn",
        iface,
        "-q",
        "-c",
        "0",
        "-d",
        "0",
        "-t",
        "arp",
        f"request, sip={sender}, tip={sender}",
    ]


def nmap_scan_argv(target: str = DEVICE_ADDR) -> list[str]:
    """Full SYN scan of all 65535 ports without rate limitation (timing template T5)."""
    return ["nmap", "-sS", "-p-", "-n", "-Pn", "-T5", target]


#: The attacks of Section 4 of the industrial-architectures study, and the tool of each.
ATTACKS = ("syn", "arp", "nmap")
ATTACK_TOOL = {"syn": "hping3", "arp": "mausezahn", "nmap": "nmap"}


def attack_argv(attack: str, iface: str) -> list[str]:
    """The command line of one of :data:`ATTACKS` (``iface``: the attacker's interface,
    for the ARP flood)."""
    if attack == "syn":
        return syn_flood_argv()
    if attack == "arp":
        return arp_flood_argv(iface)
    return nmap_scan_argv()


def count_flood_in(traffic: dict[str, Any], attack: str) -> None:
    """Add ``flood_in`` and ``flood_in_pps`` to an attack phase's counter rates: the
    flood's own packets as they reached the device's ingress (ARP requests for the ARP
    flood, SYNs otherwise)."""
    key = "arp_in" if attack == "arp" else "syn_in"
    traffic["flood_in"] = traffic.get(key, 0)
    traffic["flood_in_pps"] = traffic.get(key + "_pps", 0.0)


def stress_argv(seconds: float) -> list[str]:
    """One stress-ng CPU load process (pin it with ``cpu=`` of :meth:`Harness.spawn`)."""
    return ["stress-ng", "--cpu", "1", "--timeout", f"{max(1, int(seconds + 0.999))}s", "-q"]


# --------------------------------------------------------------- time


def procedure_s(phase_s: float, break_s: float) -> float:
    """The length of a run: idle before, attack, idle after (``phase_s`` each) with a
    break of ``break_s`` after each of the first two."""
    return 3 * phase_s + 2 * break_s


def mono_ns() -> int:
    """CLOCK_MONOTONIC in ns: the clock of the phases, the counters and the targets' records."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def sleep_until(t_ns: int) -> None:
    """Sleep until :func:`mono_ns` reaches ``t_ns`` (in steps of at most 0.2 s)."""
    while (dt := (t_ns - mono_ns()) / 1e9) > 0:
        time.sleep(min(dt, 0.2))


# --------------------------------------------------------------- commands


def _run(argv: Sequence[str], what: str, input: str | None = None) -> str:
    try:
        p = subprocess.run(
            list(argv), capture_output=True, text=True, input=input, timeout=30, check=False
        )
    except FileNotFoundError as e:
        raise RigError(f"rig: {what}: {argv[0]} not found") from e
    except subprocess.TimeoutExpired as e:
        raise RigError(f"rig: {what}: '{' '.join(argv)}' did not finish in 30 s") from e
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise RigError(f"rig: {what} failed: {msg[-1] if msg else f'exit {p.returncode}'}")
    return p.stdout


def _netns_list() -> list[str]:
    if shutil.which("ip") is None:
        return []
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def _root_links() -> list[str]:
    if shutil.which("ip") is None:
        return []
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=False)
    try:
        return [d["ifname"] for d in json.loads(out.stdout or "[]")]
    except (ValueError, KeyError):
        return []


def leftovers() -> dict[str, list[str]]:
    """What a killed run left behind: rig namespaces, rig interfaces here, sysctl changes."""
    return {
        "netns": [n for n in _netns_list() if n.startswith(PREFIX + "-")],
        "links": [n for n in _root_links() if n.startswith(PREFIX)],
        "sysctl": [p.name for p in STATE_DIR.glob(f"{PREFIX}-sysctl-*")],
    }


def _kill_netns_pids(ns: str) -> None:
    out = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
    for tok in out.stdout.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError, PermissionError):
            pass


def _delete_netns(ns: str) -> None:
    _kill_netns_pids(ns)
    for _ in range(50):
        p = subprocess.run(["ip", "netns", "del", ns], capture_output=True, text=True, check=False)
        if p.returncode == 0 or ns not in _netns_list():
            return
        time.sleep(0.1)


def clean() -> dict[str, list[str]]:
    """Remove every rig namespace (with its processes, veths, qdiscs, nft tables) and rig link.

    Only names starting with :data:`PREFIX` are touched. Returns what was removed.
    """
    found = leftovers()
    for ns in found["netns"]:
        _delete_netns(ns)
    for link in found["links"]:
        subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)
    found["sysctl"] = [
        r for st in sorted(STATE_DIR.glob(f"{PREFIX}-sysctl-*")) if (r := _restore_sysctl(st))
    ]
    return found


#: Where a temporary sysctl change keeps the value to restore (``rig clean`` restores it).
STATE_DIR = Path("/run")
SYSCTL_DIR = Path("/proc/sys")


class SysctlOverride:
    """Set a kernel sysctl for the duration of a ``with`` block, then restore it.

    The original value is saved first in ``/run/rtsrig-sysctl-<name>``, so
    :func:`clean` restores it after a killed run.
    """

    def __init__(self, name: str, value: str):
        self.name = name
        self.value = value
        self.path = SYSCTL_DIR / name.replace(".", "/")
        self.state = STATE_DIR / f"{PREFIX}-sysctl-{name}"
        self.old: str | None = None

    def __enter__(self) -> SysctlOverride:
        try:
            self.old = self.path.read_text().strip()
            if not self.state.exists():
                self.state.write_text(self.old + "\n")
            self.path.write_text(self.value + "\n")
        except OSError as e:
            raise RigError(f"rig: cannot set {self.name}={self.value}: {e.strerror}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        _restore_sysctl(self.state)


def _restore_sysctl(state: Path) -> str | None:
    name = state.name[len(PREFIX + "-sysctl-") :]
    try:
        old = state.read_text().strip()
        (SYSCTL_DIR / name.replace(".", "/")).write_text(old + "\n")
        state.unlink()
        return f"{name}={old}"
    except OSError:
        return None


# --------------------------------------------------------------- counters


@dataclass
class Counters:
    """A sample of the rig's packet counters (cumulative; subtract two samples)."""

    t_ns: int
    attacker_tx: int = 0
    attacker_rx: int = 0
    device_rx: int = 0
    device_tx: int = 0
    #: nftables counters at the device's ingress: name -> packets.
    nft: dict[str, int] = field(default_factory=dict)
    #: /proc/net/softnet_stat "dropped" summed over CPUs (backlog full; whole machine).
    backlog_drops: int = 0

    def rates(self, later: Counters) -> dict[str, Any]:
        """Packets and packets/s between this sample and ``later``."""
        dt = max(1e-9, (later.t_ns - self.t_ns) / 1e9)
        out: dict[str, Any] = {"seconds": round(dt, 3)}

        def put(name: str, a: int, b: int) -> None:
            out[name] = b - a
            out[name + "_pps"] = round((b - a) / dt, 1)

        put("offered", self.attacker_tx, later.attacker_tx)
        put("device_link_rx", self.device_rx, later.device_rx)
        put("device_replies", self.device_tx, later.device_tx)
        for k in sorted(set(self.nft) | set(later.nft)):
            put(k, self.nft.get(k, 0), later.nft.get(k, 0))
        out["backlog_drops"] = later.backlog_drops - self.backlog_drops
        return out


def _softnet_drops() -> int:
    try:
        lines = Path("/proc/net/softnet_stat").read_text().splitlines()
    except OSError:
        return 0
    return sum(int(line.split()[1], 16) for line in lines if len(line.split()) > 1)


# --------------------------------------------------------------- the harness


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen
    log: IO[Any] | None


class Harness:
    """Two namespaces joined by a veth pair, with processes and counters; ``with`` cleans up.

    ``tag`` (letters and digits, at most 6) makes the names unique per run; the
    default is derived from the process id.
    """

    def __init__(self, tag: str | None = None, log_dir: Path | None = None):
        tag = tag or format(os.getpid() % 0xFFFFFF, "x")
        if not tag.isalnum() or len(tag) > 6:
            raise ValueError("tag must be 1-6 letters or digits")
        self.tag = tag
        self.ns_dev = f"{PREFIX}-{tag}-dev"
        self.ns_atk = f"{PREFIX}-{tag}-atk"
        self.if_dev = f"{PREFIX}{tag}d"
        self.if_atk = f"{PREFIX}{tag}a"
        self.log_dir = log_dir
        self._procs: list[_Proc] = []
        self._up = False

    # -- lifecycle
    def __enter__(self) -> Harness:
        try:
            self.setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def setup(self) -> None:
        """Create the namespaces, the veth pair and the addresses."""
        for ns in (self.ns_dev, self.ns_atk):
            if ns in _netns_list():
                raise RigError(
                    f"rig: namespace {ns} exists already; "
                    "remove leftovers with 'rtshield rig clean'"
                )
        self._up = True
        for ns in (self.ns_dev, self.ns_atk):
            _run(["ip", "netns", "add", ns], f"creating namespace {ns}")
            for key in ("all", "default"):
                self.ns_exec_ok(ns, ["sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"], f"bringing up lo in {ns}")
        _run(
            [
                "ip",
                "link",
                "add",
                self.if_atk,
                "netns",
                self.ns_atk,
                "type",
                "veth",
                "peer",
                "name",
                self.if_dev,
                "netns",
                self.ns_dev,
            ],
            "creating the veth pair",
        )
        for ns, ifn, addr in (
            (self.ns_dev, self.if_dev, DEVICE_ADDR),
            (self.ns_atk, self.if_atk, ATTACKER_ADDR),
        ):
            _run(["ip", "-n", ns, "addr", "add", f"{addr}/{PREFIX_LEN}", "dev", ifn], "address")
            _run(["ip", "-n", ns, "link", "set", ifn, "up"], f"bringing up {ifn}")
        # The attacker knows the device's MAC, so the floods never wait for ARP.
        mac = self.mac(self.ns_dev, self.if_dev)
        _run(
            [
                "ip",
                "-n",
                self.ns_atk,
                "neigh",
                "replace",
                DEVICE_ADDR,
                "lladdr",
                mac,
                "dev",
                self.if_atk,
                "nud",
                "permanent",
            ],
            "neighbour entry",
        )
        self.install_nft()

    def close(self) -> None:
        """Stop every process and delete the namespaces (idempotent; signals held meanwhile)."""
        held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            for p in reversed(self._procs):
                self._terminate(p, signal.SIGTERM, grace=2.0)
            self._procs.clear()
            if self._up:
                for ns in (self.ns_atk, self.ns_dev):
                    if ns in _netns_list():
                        _delete_netns(ns)
                self._up = False
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    # -- commands inside the namespaces
    def ns_exec_ok(self, ns: str, argv: Sequence[str], what: str | None = None) -> str:
        return _run(["ip", "netns", "exec", ns, *argv], what or f"'{' '.join(argv)}' in {ns}")

    @staticmethod
    def mac(ns: str, ifn: str) -> str:
        out = _run(["ip", "-n", ns, "-j", "link", "show", "dev", ifn], f"reading {ifn}")
        return json.loads(out)[0]["address"]

    def ns_of(self, side: str) -> tuple[str, str]:
        if side == "device":
            return self.ns_dev, self.if_dev
        if side == "attacker":
            return self.ns_atk, self.if_atk
        raise ValueError(side)

    def set_rps(self, side: str, cpus: Iterable[int]) -> str:
        """Steer the receive processing of ``side``'s veth to ``cpus`` (RPS); returns the mask."""
        ns, ifn = self.ns_of(side)
        mask = 0
        for c in cpus:
            mask |= 1 << int(c)
        hexmask = format(mask, "x")
        path = f"/sys/class/net/{ifn}/queues/rx-0/rps_cpus"
        self.ns_exec_ok(ns, ["sh", "-c", f"echo {hexmask} > {path}"], f"setting RPS of {ifn}")
        return hexmask

    def install_nft(self, limits: dict[str, int] | None = None) -> None:
        """(Re)load the device's ingress table: counters, and rate limits when ``limits`` given.

        ``limits`` maps ``"syn"`` and/or ``"arp"`` to packets/s; packets above the
        rate are dropped at ingress (before IP/ARP processing) and counted in
        ``syn_dropped`` / ``arp_dropped``.
        """
        limits = limits or {}
        rules = [
            "ether type arp counter name arp_in",
            "tcp flags & (syn|ack) == syn counter name syn_in",
            "counter name all_in",
        ]
        if "syn" in limits:
            rules.append(
                f"tcp flags & (syn|ack) == syn limit rate over {int(limits['syn'])}/second "
                "counter name syn_dropped drop"
            )
        if "arp" in limits:
            rules.append(
                f"ether type arp limit rate over {int(limits['arp'])}/second "
                "counter name arp_dropped drop"
            )
        names = ("arp_in", "syn_in", "all_in", "syn_dropped", "arp_dropped")
        counters = "\n".join(f"  counter {n} {{}}" for n in names)
        body = "\n    ".join(rules)
        script = (
            f"table netdev {NFT_TABLE} {{\n{counters}\n"
            f'  chain ingress {{\n    type filter hook ingress device "{self.if_dev}" '
            f"priority -500; policy accept;\n    {body}\n  }}\n}}\n"
        )
        existing = subprocess.run(
            ["ip", "netns", "exec", self.ns_dev, "nft", "list", "table", "netdev", NFT_TABLE],
            capture_output=True,
            check=False,
        )
        if existing.returncode == 0:
            self.ns_exec_ok(self.ns_dev, ["nft", "delete", "table", "netdev", NFT_TABLE])
        _run(["ip", "netns", "exec", self.ns_dev, "nft", "-f", "-"], "loading nftables", script)

    def counters(self) -> Counters:
        """Sample the veth counters of both ends, the ingress counters and the backlog drops."""

        def link(ns: str, ifn: str) -> tuple[int, int]:
            out = _run(["ip", "-n", ns, "-s", "-j", "link", "show", "dev", ifn], "counters")
            s = json.loads(out)[0]["stats64"]
            return int(s["rx"]["packets"]), int(s["tx"]["packets"])

        c = Counters(t_ns=mono_ns())
        c.attacker_rx, c.attacker_tx = link(self.ns_atk, self.if_atk)
        c.device_rx, c.device_tx = link(self.ns_dev, self.if_dev)
        out = self.ns_exec_ok(self.ns_dev, ["nft", "-j", "list", "counters"], "nft counters")
        for obj in json.loads(out).get("nftables", []):
            ctr = obj.get("counter")
            if ctr and ctr.get("table") == NFT_TABLE:
                c.nft[ctr["name"]] = int(ctr.get("packets", 0))
        c.backlog_drops = _softnet_drops()
        return c

    # -- processes
    def spawn(
        self,
        side: str,
        argv: Sequence[str],
        *,
        limit_s: float,
        name: str,
        cpu: int | None = None,
        stop_signal: str = "INT",
        stdout: int | None = None,
    ) -> subprocess.Popen:
        """Start ``argv`` in ``side``'s namespace, pinned to ``cpu``, stopped after ``limit_s``.

        ``timeout`` sends ``stop_signal`` at the limit and SIGKILL 2 s later, so
        the process ends even if nobody is left to stop it. Output goes to
        ``log_dir/<name>.log`` unless ``stdout=subprocess.PIPE``.
        """
        ns, _ = self.ns_of(side)
        cmd = ["ip", "netns", "exec", ns, "timeout", "-s", stop_signal, "-k", "2"]
        cmd.append(f"{max(0.1, limit_s):.3f}")
        if cpu is not None:
            cmd += ["taskset", "-c", str(int(cpu))]
        cmd += list(argv)
        log = None
        if stdout is None and self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"{name}.log", "w")  # noqa: SIM115 (closed in stop)
        p = subprocess.Popen(
            cmd,
            env={**os.environ, TAG_ENV: self.tag},
            stdout=stdout if stdout is not None else (log or subprocess.DEVNULL),
            stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            text=True,
        )
        self._procs.append(_Proc(name, p, log))
        return p

    def wait(self, popen: subprocess.Popen, timeout_s: float) -> int | None:
        """Wait up to ``timeout_s`` for a process, then SIGKILL its group; return its code."""
        try:
            return popen.wait(timeout=max(0.0, timeout_s))
        except subprocess.TimeoutExpired:
            proc = self._find(popen)
            if proc:
                self._terminate(proc, signal.SIGKILL, grace=2.0)
            return popen.returncode

    def stop(self, popen: subprocess.Popen, sig: int = signal.SIGTERM, grace: float = 3.0) -> None:
        """Signal a process group, wait ``grace`` s, then SIGKILL it; forget it."""
        proc = self._find(popen)
        if proc:
            self._terminate(proc, sig, grace)
            self._procs.remove(proc)

    def flood(
        self, attack: str, seconds: float, name: str, cpu: int | None, end_ns: int | None = None
    ) -> tuple[dict[str, Any], int, int]:
        """The attack phase: run ``attack``'s tool from the attacker's side (pinned to ``cpu``,
        stopped after ``seconds``) until ``end_ns`` (default: ``seconds`` after the phase
        starts). Returns the counters' rates over the phase with the flood's packets at the
        device (:func:`count_flood_in`) and the tool's exit code (``tool_exit``), the
        phase's start (the first counter sample) and when the tool had ended."""
        c0 = self.counters()
        tool = self.spawn(
            "attacker", attack_argv(attack, self.if_atk), limit_s=seconds, name=name, cpu=cpu
        )
        sleep_until(end_ns if end_ns is not None else c0.t_ns + int(seconds * 1e9))
        c1 = self.counters()
        tool_rc = self.wait(tool, 5)
        tool_end = mono_ns()
        self.stop(tool)
        traffic = c0.rates(c1)
        count_flood_in(traffic, attack)
        traffic["tool_exit"] = tool_rc
        return traffic, c0.t_ns, tool_end

    def _find(self, popen: subprocess.Popen) -> _Proc | None:
        return next((p for p in self._procs if p.popen is popen), None)

    @staticmethod
    def _terminate(proc: _Proc, sig: int, grace: float) -> None:
        p = proc.popen
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                p.wait(timeout=5)
        if proc.log:
            proc.log.close()
            proc.log = None

    def listener(self, limit_s: float) -> subprocess.Popen:
        """Start the device's TCP listener (port :data:`LISTEN_PORT`); return once it listens."""
        code = (
            "import socket,sys,time\n"
            "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('{DEVICE_ADDR}', {LISTEN_PORT})); s.listen(1024)\n"
            "print('listening', flush=True)\n"
            "while True: time.sleep(3600)\n"
        )
        p = self.spawn(
            "device",
            [sys.executable, "-c", code],
            limit_s=limit_s,
            name="listener",
            stop_signal="TERM",
            stdout=subprocess.PIPE,
        )
        line = p.stdout.readline() if p.stdout else ""
        if line.strip() != "listening":
            raise RigError("rig: the device's TCP listener did not start")
        return p
