"""Building the FreeRTOS target: the FreeRTOS trees, the build and its cache.

The device program (``rig/freertos/app/rts_device.c`` with the FreeRTOS kernel's
POSIX port, FreeRTOS-Plus-TCP and libshield) is built by
``tools/freertos_build.sh tcp-build`` against the trees :func:`find_tree`
finds, once per hash of its sources and the tree (:func:`build_target`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from rtshield.rig.host import RigError

__all__ = ["TREE_ENV", "build_target", "default_scenario", "find_tree"]

#: Environment variable naming the folder that holds FreeRTOS-Kernel and FreeRTOS-Plus-TCP.
TREE_ENV = "RTS_THIRD_PARTY"


def _repo() -> Path:
    """Where the target's sources are: inside the installed package
    (``rtshield/source``, same layout), else the checkout this module is in."""
    here = Path(__file__).resolve()
    installed = here.parents[2] / "source"
    if (installed / "tools" / "freertos_build.sh").is_file():
        return installed
    return here.parents[4]


def default_scenario() -> Path:
    return _repo() / "rig" / "freertos" / "device.toml"


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
