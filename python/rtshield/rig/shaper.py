"""An interface's queueing lent to a flood and given back: ``rig device``'s storms held at
their rate on the user's own interface.

:func:`.pacing.shaper_commands` holds a flood's frames to a rate with a root ``htb`` (the
frames a ``tc`` filter selects behind a token bucket, every other frame unshaped). The
rig's own veths simply lose that root afterwards; a user's interface must be left as it
was on every way out:

- **Only the kernel's own queueing is lent.** Every egress qdisc the kernel attaches
  (``noqueue``, ``pfifo_fast``, ``mq`` and its children, the ``default_qdisc``) has the
  handle ``0:``, and deleting the root qdisc gives such an interface exactly that back.
  A qdisc the user set has another handle: its tree (options, classes, filters) cannot be
  restored for sure, so an interface with one is refused with one line, before anything
  is sent (:func:`check_lendable`). The ingress side (``ingress``, ``clsact``) is never
  touched.
- **The loan is recorded first**, in ``/run/rtsrig-qdisc-NETNS-IFACE`` (the interface, the
  inode of its network namespace, the process that holds it, :mod:`.owners`), so that
  ``rtshield rig clean`` gives the interface back after a killed run
  (:func:`give_back_left`). It is removed once the interface is given back.
- **The shaper is on for one run of a step only** (:meth:`Loan.shape`), and off again as
  soon as the storm's tool has stopped, also on an error or a signal; taking it off drops
  the frames it still queued.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rtshield.rig.host import TOOLS, RigError, failure_line, signals_held
from rtshield.rig.network import PREFIX
from rtshield.rig.owners import STATE_DIR, Owner, start_time
from rtshield.rig.pacing import ROOT_HANDLE, shaper_commands, unshape_command

__all__ = ["Loan", "check_lendable", "give_back_left", "lend", "loans_left"]

#: The handle of every qdisc the kernel attaches itself.
KERNEL_HANDLE = "0:"
#: The qdiscs of the receive side, which the shaper never touches.
_INGRESS = ("ingress", "clsact")


def _tc(argv: list[str], netns: Path | None = None) -> subprocess.CompletedProcess:
    pre = ["nsenter", f"--net={netns}"] if netns is not None else []
    try:
        return subprocess.run([*pre, "tc", *argv], capture_output=True, text=True, timeout=30,
                              check=False)  # fmt: skip
    except FileNotFoundError:
        tool = pre[0] if pre else "tc"
        raise RigError(f"rig: {tool} not found (Debian: apt-get install {TOOLS[tool]})") from None


def _qdiscs(iface: str, netns: Path | None = None) -> list[dict]:
    """``iface``'s qdiscs (none when the interface is gone)."""
    p = _tc(["-j", "qdisc", "show", "dev", iface], netns)
    if p.returncode != 0 and "Cannot find device" in p.stderr:
        return []
    if p.returncode != 0:
        msg = failure_line(p)
        raise RigError(f"rig: tc qdisc show dev {iface}: {msg}")
    try:
        out = json.loads(p.stdout or "[]")
    except ValueError:
        raise RigError(f"rig: tc qdisc show dev {iface}: not JSON") from None
    return [q for q in out if isinstance(q, dict)]


def _egress(qdiscs: list[dict]) -> list[dict]:
    return [q for q in qdiscs if q.get("kind") not in _INGRESS]


def check_lendable(iface: str, who: str = "rig device") -> None:
    """``iface`` runs on the kernel's own queueing (every egress qdisc has the handle
    ``0:``), which deleting the root gives back exactly; else one line naming the user's
    qdisc and what to do."""
    own = [q for q in _egress(_qdiscs(iface)) if q.get("handle") != KERNEL_HANDLE]
    if own:
        q = own[0]
        where = "root" if q.get("root") else f"parent {q.get('parent', '?')}"
        raise RigError(
            f"{who}: --iface {iface} has a queueing discipline of its own ({q.get('kind')} "
            f"{q.get('handle')} {where}); the storms are held at their rate by a qdisc of "
            f"the rig's, and yours could not be restored for sure: remove it "
            f"(tc qdisc del dev {iface} {where}) for the test, or test through another "
            "interface"
        )


def _netns_inode(path: str = "/proc/self/ns/net") -> int:
    return os.stat(path).st_ino


def _state(iface: str, ino: int) -> Path:
    return STATE_DIR / f"{PREFIX}-qdisc-{ino}-{iface}"


def _owner(rec: dict) -> Owner:
    pid, start = rec.get("pid"), rec.get("start")
    return Owner(f"qdisc-{pid}", pid if isinstance(pid, int) else None,
                 start if isinstance(start, int) else -1)  # fmt: skip


def _read(state: Path) -> dict | None:
    try:
        rec = json.loads(state.read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _find_netns(ino: int) -> Path | None:
    """A path to the network namespace of inode ``ino`` (``None``: gone)."""
    candidates = [Path("/proc/self/ns/net"), Path("/proc/1/ns/net"),
                  *sorted(Path("/run/netns").glob("*"))]  # fmt: skip
    for c in candidates:
        with contextlib.suppress(OSError):
            if _netns_inode(str(c)) == ino:
                return c
    for d in Path("/proc").iterdir():  # a namespace without a name, held by a process
        if d.name.isdigit():
            with contextlib.suppress(OSError):
                if _netns_inode(str(d / "ns" / "net")) == ino:
                    return d / "ns" / "net"
    return None


def _give_back(iface: str, netns: Path | None) -> bool:
    """Delete ``iface``'s root qdisc when it is the shaper's (the kernel attaches its own
    again); whether it was."""
    root = [q for q in _egress(_qdiscs(iface, netns)) if q.get("root")]
    if not root or root[0].get("kind") != "htb" or root[0].get("handle") != ROOT_HANDLE:
        return False
    _tc(unshape_command(iface), netns)
    return True


@dataclass
class Loan:
    """``iface``'s queueing, lent to the storms (:func:`lend`)."""

    iface: str
    shaped: bool = False

    @contextlib.contextmanager
    def shape(self, rate: float, match: list[str], largest: int = 0) -> Iterator[None]:
        """Hold the frames ``match`` selects (a ``tc filter`` selector after ``protocol``; the
        largest ``largest`` bytes) to ``rate`` frames/s for the block, evenly spaced; every
        other frame unshaped."""
        try:
            self.shaped = True
            for cmd in shaper_commands(self.iface, rate, match, largest):
                p = _tc(cmd)
                if p.returncode != 0:
                    msg = failure_line(p)
                    raise RigError(
                        f"rig device: cannot hold the storm to {rate:g} pkt/s on "
                        f"--iface {self.iface}: tc {' '.join(cmd[:2])}: {msg}"
                    )
            yield
        finally:
            self.unshape()

    def unshape(self) -> None:
        """Give the interface its own queueing back (and drop what the shaper queued)."""
        if self.shaped:
            with signals_held():
                _give_back(self.iface, None)
                self.shaped = False


@contextlib.contextmanager
def lend(iface: str) -> Iterator[Loan]:
    """Lend ``iface``'s queueing to the storms for the block (:func:`check_lendable`); the
    loan is recorded for ``rig clean`` first and ends on every way out of the block."""
    ino = _netns_inode()
    state = _state(iface, ino)
    rec = _read(state)
    if rec is not None and _owner(rec).alive:
        raise RigError(
            f"rig device: --iface {iface} is lent to the storms of another rig run "
            f"({_owner(rec).describe()}); wait for it to end"
        )
    if rec is not None:  # a killed run's loan: its shaper first
        _give_back(iface, None)
    check_lendable(iface)
    me = os.getpid()
    try:
        state.write_text(json.dumps({"iface": iface, "netns": ino, "pid": me,
                                     "start": start_time(me)}) + "\n")  # fmt: skip
    except OSError as e:
        raise RigError(f"rig device: cannot record the loan of --iface {iface}: "
                       f"{e.strerror}") from None  # fmt: skip
    loan = Loan(iface)
    try:
        yield loan
    finally:
        with signals_held():
            try:
                loan.unshape()
            finally:
                state.unlink(missing_ok=True)


def loans_left() -> list[Path]:
    """The records of loans (:func:`lend`)."""
    return sorted(STATE_DIR.glob(f"{PREFIX}-qdisc-*"))


def give_back_left(force: bool = False) -> tuple[list[str], list[str]]:
    """Give back the interfaces whose loan's holder has ended (``force``: every one):
    ``tc qdisc del`` of the root when it is still the shaper's. Returns what was given
    back (``qdisc of IFACE``) and one line per loan left alone (its holder runs)."""
    back, spared = [], []
    for state in loans_left():
        rec = _read(state) or {}
        iface, ino = rec.get("iface"), rec.get("netns")
        if rec and not force and _owner(rec).alive:
            spared.append(f"spared the queueing of {iface}: lent to the storms of "
                          f"{_owner(rec).describe()}, which still runs (--force gives it back)")
            continue
        netns = _find_netns(ino) if isinstance(ino, int) else None
        here = netns is not None and _netns_inode(str(netns)) == _netns_inode()
        # a namespace that is gone took the interface with it
        if isinstance(iface, str) and netns is not None and _give_back(
            iface, None if here else netns
        ):
            back.append(f"the queueing of {iface}")
        state.unlink(missing_ok=True)
    return back, spared
