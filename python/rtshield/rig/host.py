"""What the rig needs from the host: root, and the programs it runs.

A missing requirement is a :class:`RigError`: one line naming what is missing
(and the Debian package that provides a tool), exit code 2.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import signal
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError

__all__ = [
    "TOOLS",
    "RigError",
    "failure_line",
    "read_text",
    "require_root",
    "require_tools",
    "signals_held",
    "system_info",
]

#: Programs the rig runs, each with the Debian package that provides it.
TOOLS: dict[str, str] = {
    "ip": "iproute2",
    "nft": "nftables",
    "taskset": "util-linux",
    "nsenter": "util-linux",
    "chrt": "util-linux",
    "timeout": "coreutils",
    "hping3": "hping3",
    "mausezahn": "netsniff-ng",
    "tc": "iproute2",
    "nmap": "nmap",
    "stress-ng": "stress-ng",
    "cc": "build-essential",
}


class RigError(UsageError):
    """The rig cannot run or a system command failed; shown as one line, exit 2."""


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait while the block runs (a cleanup is not cut short)."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def failure_line(p: subprocess.CompletedProcess) -> str:
    """The last line a tool that failed wrote on stderr (``exit N`` when it wrote none)."""
    return (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]


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


def read_text(path: str) -> str:
    """A small system file's text, stripped ("" when it cannot be read)."""
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


#: How each tool tells its version.
_VERSION_ARGS = {"hping3": ["-v"], "trafgen": ["-v"]}


def system_info(tools: Iterable[str]) -> dict[str, Any]:
    """Kernel, its real-time status, CPU model, load and ``tools``' versions: absolute
    figures depend on them."""
    uname = platform.uname()
    cpu = ""
    for line in read_text("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    rt = read_text("/sys/kernel/realtime") == "1" or "PREEMPT_RT" in uname.version
    preempt = next((w for w in uname.version.split() if w.startswith("PREEMPT")), "")
    versions = {}
    for tool in tools:
        try:
            p = subprocess.run([tool, *_VERSION_ARGS.get(tool, ["--version"])],
                               capture_output=True, text=True, timeout=10)
            versions[tool] = (p.stdout or p.stderr).strip().splitlines()[0][:80]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            versions[tool] = None
    return {
        "kernel": uname.release,
        "kernel_version": uname.version,
        "preempt": preempt or "unknown",
        "preempt_rt": rt,
        "cpu_model": cpu,
        "cpus": os.cpu_count(),
        "loadavg": read_text("/proc/loadavg"),
        "sched_rt_runtime_us": read_text("/proc/sys/kernel/sched_rt_runtime_us"),
        "tools": versions,
    }
