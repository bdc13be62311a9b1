"""What the rig needs from the host: root, and the programs it runs.

A missing requirement is a :class:`RigError`: one line naming what is missing
(and the Debian package that provides a tool), exit code 2.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

from rtshield.errors import UsageError

__all__ = ["TOOLS", "RigError", "require_root", "require_tools"]

#: Programs the rig runs, each with the Debian package that provides it.
TOOLS: dict[str, str] = {
    "ip": "iproute2",
    "nft": "nftables",
    "taskset": "util-linux",
    "chrt": "util-linux",
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
