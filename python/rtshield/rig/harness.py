"""The rig's network harness: two namespaces, a veth pair, processes in them, counters,
cleanup.

Shared by every rig target (``rtshield rig linux`` and ``rtshield rig
freertos-tcp``): nothing here knows what runs on the device side. The parts it
is built on are modules of their own: the names and addresses
(:mod:`.network`), what the host must provide (:mod:`.host`), the attacks'
command lines (:mod:`.attacks`), the clock (:mod:`.timing`) and the counters
(:mod:`.counters`); their names are importable from here too, as the targets'
commands use them. Every name the rig creates starts with :data:`PREFIX`;
:func:`clean` removes those and nothing else.

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

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rtshield.rig.attacks import (
    ATTACK_TOOL,
    ATTACKS,
    arp_flood_argv,
    attack_argv,
    count_flood_in,
    flood_shaper,
    nmap_scan_argv,
    stress_argv,
    syn_flood_argv,
)
from rtshield.rig.counters import Counters, softnet_drops
from rtshield.rig.host import TOOLS, RigError, require_root, require_tools, signals_held
from rtshield.rig.network import (
    ATTACKER_ADDR,
    DEVICE_ADDR,
    LISTEN_PORT,
    NFT_TABLE,
    PREFIX,
    PREFIX_LEN,
    TAG_ENV,
)
from rtshield.rig.owners import STATE_DIR, Owner, owner_of, tag_of_link, tag_of_netns
from rtshield.rig.owners import add_path as _add_path
from rtshield.rig.owners import claim as _claim
from rtshield.rig.owners import records as _records
from rtshield.rig.owners import release as _release
from rtshield.rig.owners import start_time as _start_time
from rtshield.rig.pacing import unshape_command
from rtshield.rig.shaper import give_back_left, loans_left
from rtshield.rig.timing import mono_ns, procedure_s, sleep_until

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
    "Processes",
    "RigError",
    "SysctlOverride",
    "arp_flood_argv",
    "attack_argv",
    "check_ifname",
    "clean",
    "count_flood_in",
    "leftovers",
    "mono_ns",
    "nmap_scan_argv",
    "procedure_s",
    "require_root",
    "require_tools",
    "sleep_until",
    "stress_argv",
    "syn_flood_argv",
    "tagged_pids",
]

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


def _ip(ns: str | None) -> list[str]:
    """``ip`` in namespace ``ns`` (``None``: this one)."""
    return ["ip", "-n", ns] if ns else ["ip"]


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


def _tagged() -> dict[int, str]:
    """``{pid: tag}`` of every process that carries :data:`TAG_ENV` (but this one)."""
    needle = f"{TAG_ENV}=".encode()
    me = os.getpid()
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == me:
            continue
        try:
            env = (d / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        tag = next((v[len(needle):] for v in env if v.startswith(needle)), None)
        if tag is not None:
            found[int(d.name)] = tag.decode(errors="replace")
    return found


def tagged_pids(tag: str | None = None) -> list[int]:
    """Processes that carry :data:`TAG_ENV` in their environment (of run ``tag``, or of
    any run): every process the rig started, in any namespace."""
    return sorted(pid for pid, t in _tagged().items() if tag is None or t == tag)


def leftovers() -> dict[str, list[str]]:
    """What a killed run left behind: rig namespaces, rig interfaces here, sysctl changes,
    loans of an interface's queueing (``qdisc``: their records) and processes the rig
    started that still run (``procs``: their ids)."""
    return {
        "netns": [n for n in _netns_list() if n.startswith(PREFIX + "-")],
        "links": [n for n in _root_links() if n.startswith(PREFIX)],
        "sysctl": [p.name for p in STATE_DIR.glob(f"{PREFIX}-sysctl-*")],
        "qdisc": [p.name for p in loans_left()],
        "procs": [str(pid) for pid in tagged_pids()],
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


def clean(force: bool = False) -> dict[str, list[str]]:
    """Remove what runs whose owner has ended left behind: their processes (carrying
    :data:`TAG_ENV`), namespaces (with their processes, veths, qdiscs, nft tables), rig
    links here, folders (:mod:`.owners`), sysctl changes and interfaces' queueing lent to
    storms (:mod:`.shaper`: ``qdisc``, given back); spare the runs whose owner still runs
    (``force``: remove those too).

    Only names starting with :data:`PREFIX` and processes carrying :data:`TAG_ENV` are
    touched. Returns what was removed, and under ``spared`` one line per live run
    that was left alone (what, whose, why).
    """
    owners: dict[str | None, Owner] = {}

    def orphan(tag: str | None) -> bool:
        if tag not in owners:
            owners[tag] = owner_of(tag)
        return force or not owners[tag].alive

    kept: dict[str | None, list[str]] = {}
    found = leftovers()
    tags = _tagged()
    procs = []
    for pid, tag in sorted(tags.items()):
        (procs if orphan(tag) else kept.setdefault(tag, [])).append(str(pid))
    netns, links = [], []
    for ns in found["netns"]:
        (netns if orphan(tag_of_netns(ns)) else kept.setdefault(tag_of_netns(ns), [])).append(ns)
    for link in found["links"]:
        (links if orphan(tag_of_link(link)) else kept.setdefault(tag_of_link(link), [])).append(
            link)
    for pid in procs:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for ns in netns:
        _delete_netns(ns)
    for link in links:
        subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)
    paths = []
    for tag in _records():
        if not orphan(tag):
            continue
        for p in owners[tag].paths:  # only the rig's own folders
            if Path(p).name.startswith(PREFIX) and Path(p).is_dir() and not Path(p).is_symlink():
                shutil.rmtree(p, ignore_errors=True)
                paths.append(p)
        if tag not in kept:
            _release(tag)
    sysctl = []
    for st in sorted(STATE_DIR.glob(f"{PREFIX}-sysctl-*")):
        holder = _sysctl_owner(st)
        if holder is None or force or not holder.alive:
            if r := _restore_sysctl(st):
                sysctl.append(r)
        else:
            owners[holder.tag] = holder
            kept.setdefault(holder.tag, []).append(st.name[len(PREFIX + "-sysctl-"):])
    qdisc, spared = give_back_left(force)
    for tag, what in kept.items():
        o = owners[tag]
        why = "its owner" if o.start is not None else "by its tag, its owner"
        procs_n = sum(1 for w in what if w.isdigit())
        names = [w for w in what if not w.isdigit()]
        items = names + ([f"{procs_n} processes"] if procs_n else [])
        spared.append(f"spared {', '.join(items)}: {why}, {o.describe()}, still runs "
                      "(--force removes them too)")  # fmt: skip
    return {"netns": netns, "links": links, "sysctl": sysctl, "qdisc": qdisc, "procs": procs,
            "paths": paths, "spared": spared}


SYSCTL_DIR = Path("/proc/sys")


class SysctlOverride:
    """Set a kernel sysctl for the duration of a ``with`` block, then restore it.

    The original value is saved first in ``/run/rtsrig-sysctl-<name>`` (its first
    line; the second names this process, :mod:`.owners`), so :func:`clean` restores
    it after a killed run.
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
            me = os.getpid()
            if not self.state.exists():
                self.state.write_text(f"{self.old}\nowner {me} {_start_time(me)}\n")
            elif not ((holder := _sysctl_owner(self.state)) and holder.alive):
                # a killed run's: its value is the one to restore, this run now holds it
                saved = self.state.read_text().splitlines()[0]
                self.state.write_text(f"{saved}\nowner {me} {_start_time(me)}\n")
            self.path.write_text(self.value + "\n")
        except OSError as e:
            raise RigError(f"rig: cannot set {self.name}={self.value}: {e.strerror}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        _restore_sysctl(self.state)


def _sysctl_owner(state: Path) -> Owner | None:
    """The process that saved ``state``, ``None`` if it is not named."""
    try:
        _, pid, start = state.read_text().splitlines()[1].split()
        return Owner(f"sysctl-{pid}", int(pid), int(start))
    except (OSError, ValueError, IndexError):
        return None


def _restore_sysctl(state: Path) -> str | None:
    name = state.name[len(PREFIX + "-sysctl-") :]
    try:
        old = state.read_text().splitlines()[0].strip()
        (SYSCTL_DIR / name.replace(".", "/")).write_text(old + "\n")
        state.unlink()
        return f"{name}={old}"
    except OSError:
        return None


# --------------------------------------------------------------- the harness


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen
    log: IO[Any] | None


class Processes:
    """The processes of one rig run, each tagged with the run's ``tag`` (:data:`TAG_ENV`),
    bounded by ``timeout`` and in its own process group; ``with`` (or :meth:`close`)
    stops them all.

    ``tag`` (letters and digits, at most 6) names the run; the default is derived
    from the process id. :class:`Harness` adds the namespaces; ``rtshield rig
    device``, which floods a device through an interface of this namespace, uses
    this class alone.
    """

    def __init__(self, tag: str | None = None, log_dir: Path | None = None):
        tag = tag or format(os.getpid() % 0xFFFFFF, "x")
        if not tag.isalnum() or len(tag) > 6:
            raise ValueError("tag must be 1-6 letters or digits")
        self.tag = tag
        self.log_dir = log_dir
        self._procs: list[_Proc] = []
        self._owned = False

    def own(self) -> None:
        """Record this process as the run's owner (:mod:`.owners`), before the run makes
        anything: ``rig clean`` spares the run while this process runs."""
        if not self._owned:
            _claim(self.tag)
            self._owned = True

    def own_path(self, path: Path) -> None:
        """A folder of the run outside its namespaces: ``rig clean`` removes it with the
        run's other leftovers once this process has ended."""
        self.own()
        _add_path(self.tag, path)

    def _disown(self) -> None:
        if self._owned:
            _release(self.tag)
            self._owned = False

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every process (idempotent; SIGINT/SIGTERM/SIGHUP held meanwhile)."""
        with signals_held():
            self.stop_all()
            self._disown()

    def stop_all(self, sig: int = signal.SIGTERM, grace: float = 2.0) -> None:
        """Signal every process group at once (newest first), SIGKILL what is left after
        ``grace``."""
        procs = list(reversed(self._procs))
        for p in procs:
            self._signal(p, sig)
        deadline = time.monotonic() + grace
        for p in procs:
            self._terminate(p, sig, max(0.0, deadline - time.monotonic()), signalled=True)
        self._procs.clear()

    def start(
        self,
        argv: Sequence[str],
        *,
        limit_s: float,
        name: str,
        ns: str | None = None,
        cpu: int | None = None,
        stop_signal: str = "INT",
        stdout: int | None = None,
        stdin: int | None = None,
    ) -> subprocess.Popen:
        """Start ``argv`` (in namespace ``ns``, else in this one), pinned to ``cpu``,
        stopped after ``limit_s``.

        ``timeout`` sends ``stop_signal`` at the limit and SIGKILL 2 s later, so
        the process ends even if nobody is left to stop it. Output goes to
        ``log_dir/<name>.log`` unless ``stdout=subprocess.PIPE``.
        """
        cmd = ["ip", "netns", "exec", ns] if ns else []
        cmd += ["timeout", "-s", stop_signal, "-k", "2", f"{max(0.1, limit_s):.3f}"]
        if cpu is not None:
            cmd += ["taskset", "-c", str(int(cpu))]
        cmd += list(argv)
        self.own()
        log = None
        if stdout is None and self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            log = open(self.log_dir / f"{name}.log", "w")  # noqa: SIM115 (closed in stop)
        p = subprocess.Popen(
            cmd,
            env={**os.environ, TAG_ENV: self.tag},
            stdout=stdout if stdout is not None else (log or subprocess.DEVNULL),
            stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
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

    def _find(self, popen: subprocess.Popen) -> _Proc | None:
        return next((p for p in self._procs if p.popen is popen), None)

    @staticmethod
    def _signal(proc: _Proc, sig: int) -> None:
        if proc.popen.poll() is None:
            try:
                os.killpg(proc.popen.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    @classmethod
    def _terminate(cls, proc: _Proc, sig: int, grace: float, signalled: bool = False) -> None:
        p = proc.popen
        if p.poll() is None:
            if not signalled:
                cls._signal(proc, sig)
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


#: The longest interface name Linux takes (IFNAMSIZ - 1).
IFNAME_MAX = 15


def check_ifname(name: str, option: str) -> str:
    """``name`` must be a valid interface name; else a one-line error naming ``option``."""
    bad = any(c in name for c in "/: \t\n") or name in (".", "..")
    if not name or len(name) > IFNAME_MAX or bad:
        raise RigError(
            f"rig: {option}: {name!r} is not an interface name (1-{IFNAME_MAX} characters, "
            "no '/', ':' or space)"
        )
    return name


class Harness(Processes):
    """Two namespaces joined by a veth pair, with processes and counters; ``with`` cleans up.

    ``tag`` (letters and digits, at most 6) makes the names unique per run; the
    default is derived from the process id. With ``peer`` (an interface name) the
    attacker's side is this namespace instead of a namespace of its own: the
    veth's other end is created here under that name, with the attacker's
    address (``rtshield rig serve``: a device the user floods from here).
    """

    def __init__(
        self, tag: str | None = None, log_dir: Path | None = None, peer: str | None = None
    ):
        super().__init__(tag, log_dir)
        self.ns_dev = f"{PREFIX}-{self.tag}-dev"
        self.ns_atk: str | None = None if peer else f"{PREFIX}-{self.tag}-atk"
        self.if_dev = f"{PREFIX}{self.tag}d"
        self.if_atk = check_ifname(peer, "--iface") if peer else f"{PREFIX}{self.tag}a"
        self._up = False

    # -- lifecycle
    def __enter__(self) -> Harness:
        try:
            self.setup()
        except BaseException:
            self.close()
            raise
        return self

    def _namespaces(self) -> list[str]:
        return [ns for ns in (self.ns_dev, self.ns_atk) if ns]

    def setup(self) -> None:
        """Create the namespaces, the veth pair and the addresses."""
        for ns in self._namespaces():
            if ns in _netns_list():
                raise RigError(
                    f"rig: namespace {ns} exists already; "
                    "remove leftovers with 'rtshield rig clean'"
                )
        if self.ns_atk is None and self.if_atk in _root_links():
            raise RigError(f"rig: --iface {self.if_atk}: an interface of that name exists already")
        self.own()
        self._up = True
        for ns in self._namespaces():
            _run(["ip", "netns", "add", ns], f"creating namespace {ns}")
            for key in ("all", "default"):
                self.ns_exec_ok(ns, ["sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"], f"bringing up lo in {ns}")
        here = ["netns", self.ns_atk] if self.ns_atk else []
        _run(
            ["ip", "link", "add", self.if_atk, *here, "type", "veth",
             "peer", "name", self.if_dev, "netns", self.ns_dev],
            "creating the veth pair",
        )
        if self.ns_atk is None:  # no IPv6 chatter from this end either
            _run(["sysctl", "-qw", f"net.ipv6.conf.{self.if_atk}.disable_ipv6=1"], "IPv6 off")
        for ns, ifn, addr in (
            (self.ns_dev, self.if_dev, DEVICE_ADDR),
            (self.ns_atk, self.if_atk, ATTACKER_ADDR),
        ):
            _run([*_ip(ns), "addr", "add", f"{addr}/{PREFIX_LEN}", "dev", ifn], "address")
            _run([*_ip(ns), "link", "set", ifn, "up"], f"bringing up {ifn}")
        # The attacker knows the device's MAC, so the floods never wait for ARP.
        mac = self.mac(self.ns_dev, self.if_dev)
        _run(
            [*_ip(self.ns_atk), "neigh", "replace", DEVICE_ADDR, "lladdr", mac,
             "dev", self.if_atk, "nud", "permanent"],
            "neighbour entry",
        )
        self.install_nft()

    def close(self) -> None:
        """Stop every process and delete the namespaces (idempotent; signals held meanwhile)."""
        with signals_held():
            self.stop_all()
            if self._up:
                for ns in reversed(self._namespaces()):
                    if ns in _netns_list():
                        _delete_netns(ns)
                if self.ns_atk is None and self.if_atk in _root_links():  # setup cut short
                    subprocess.run(
                        ["ip", "link", "del", self.if_atk], capture_output=True, check=False
                    )
                self._up = False
            left = set(_netns_list())
            if not any(ns in left for ns in self._namespaces()):  # else `rig clean`'s, later
                self._disown()

    # -- commands inside the namespaces
    def ns_exec_ok(self, ns: str | None, argv: Sequence[str], what: str | None = None) -> str:
        prefix = ["ip", "netns", "exec", ns] if ns else []
        return _run([*prefix, *argv], what or f"'{' '.join(argv)}' in {ns or 'this namespace'}")

    @staticmethod
    def mac(ns: str | None, ifn: str) -> str:
        out = _run([*_ip(ns), "-j", "link", "show", "dev", ifn], f"reading {ifn}")
        return json.loads(out)[0]["address"]

    def ns_of(self, side: str) -> tuple[str | None, str]:
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

        def link(ns: str | None, ifn: str) -> tuple[int, int]:
            out = _run([*_ip(ns), "-s", "-j", "link", "show", "dev", ifn], "counters")
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
        c.backlog_drops = softnet_drops()
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
        stdin: int | None = None,
    ) -> subprocess.Popen:
        """Start ``argv`` in ``side``'s namespace (:meth:`Processes.start`)."""
        ns, _ = self.ns_of(side)
        return self.start(
            argv, limit_s=limit_s, name=name, ns=ns, cpu=cpu, stop_signal=stop_signal,
            stdout=stdout, stdin=stdin,
        )

    @contextlib.contextmanager
    def flood_held(self, attack: str, rate: float | None) -> Iterator[None]:
        """Hold ``attack``'s frames on the attacker's interface to ``rate`` packets/s
        (:func:`flood_shaper`; nothing at full rate) while the block runs, then give the
        interface its own queueing back (also when the run stops in it). Set it up before
        the first phase: ``tc`` takes a few processes' time, which a loaded host stretches
        to hundreds of ms; inside the attack phase it would start the flood that late."""
        shaper = flood_shaper(attack, self.if_atk, rate)
        tc = ["tc", *(["-n", self.ns_atk] if self.ns_atk else [])]
        try:
            for cmd in shaper:
                _run([*tc, *cmd], f"holding the flood to {rate:g} pkt/s")
            yield
        finally:
            if shaper:
                subprocess.run([*tc, *unshape_command(self.if_atk)], capture_output=True,
                               timeout=30, check=False)  # fmt: skip

    def flood(
        self,
        attack: str,
        seconds: float,
        name: str,
        cpu: int | None,
        end_ns: int | None = None,
        rate: float | None = None,
        stopped: Callable[[], None] | None = None,
    ) -> tuple[dict[str, Any], int, int]:
        """The attack phase: run ``attack``'s tool from the attacker's side (pinned to ``cpu``)
        for ``seconds``, or until ``end_ns`` when given (the phase's end: the tool stops
        there, however late it started), at ``rate`` packets/s (``None``: full rate; a
        flood is held to it inside :meth:`flood_held`); ``stopped`` runs once the tool has
        ended (e.g. drop the frames the shaper still queues). Returns the counters' rates
        from the first sample to the tool's end, with the flood's packets at the device
        (:func:`count_flood_in`) and the tool's exit code (``tool_exit``), the phase's start
        (the first counter sample) and when the tool had ended. The last sample follows the
        tool's end: nothing of the flood comes after it, and the phase's frames are all in."""
        c0 = self.counters()
        end = end_ns if end_ns is not None else c0.t_ns + int(seconds * 1e9)
        tool = self.spawn(
            "attacker", attack_argv(attack, self.if_atk, rate),
            limit_s=max(0.0, (end - mono_ns()) / 1e9), name=name, cpu=cpu,
        )  # fmt: skip
        sleep_until(end)
        tool_rc = self.wait(tool, 5)
        self.stop(tool)
        if stopped is not None:
            stopped()
        tool_end = mono_ns()
        c1 = self.counters()
        c1.t_ns = tool_end
        traffic = c0.rates(c1)
        count_flood_in(traffic, attack)
        traffic["tool_exit"] = tool_rc
        return traffic, c0.t_ns, tool_end

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
