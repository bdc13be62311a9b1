"""Building the FreeRTOS target: the third-party trees, the build and its cache.

The device application (``rig/freertos/app/rts_device.c`` with the FreeRTOS
kernel, one IP stack and libshield) is built for a :class:`.target.Target` by
``tools/freertos_build.sh`` (``tcp-build``, ``mps2-build``, ``lwip-build``,
``mps2-lwip-build``) against the trees :func:`find_tree` finds, once per hash
of its sources and the tree (:func:`build_images`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from rtshield.rig.host import RigError

from .target import Target

__all__ = ["TREE_ENV", "build_images", "build_target", "default_scenario", "find_tree"]

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


def default_scenario(target: Target | None = None) -> Path:
    """The device the rig runs without ``--scenario``: ``rig/freertos/device.toml``, or the
    board's own (``rig/freertos/<board>/device.toml``: the MPS2 board's adds a global limit)."""
    base = _repo() / "rig" / "freertos"
    own = base / target.board / "device.toml" if target else None
    return own if own and own.is_file() else base / "device.toml"


def find_tree(option: str | None, target: Target | None = None) -> Path:
    """The folder holding the third-party trees ``target`` needs (FreeRTOS-Kernel and
    FreeRTOS-Plus-TCP or lwIP): ``--freertos-tree``, else ``$RTS_THIRD_PARTY``, else the
    pinned copies in ``third_party/`` (the checkout's, or those the installed package
    carries)."""
    target = target or Target()
    if option:
        cand, origin = Path(option), f"--freertos-tree {option}"
    elif os.environ.get(TREE_ENV):
        cand, origin = Path(os.environ[TREE_ENV]), f"{TREE_ENV}={os.environ[TREE_ENV]}"
    else:
        cand, origin = _repo() / "third_party", "the default"
    missing = [t.split("/")[0] for t in target.trees if not (cand / t).is_file()]
    if missing:
        need = " and ".join(t.split("/")[0] for t in target.trees)
        raise RigError(
            f"rig {target.verb}: no {' and '.join(missing)} tree in {cand} ({origin}); point "
            f"--freertos-tree DIR or {TREE_ENV}=DIR at the folder holding {need}"
        )
    return cand.resolve()


def _build_inputs() -> list[Path]:
    """Every file a build reads from the sources (the cache's key): the scripts, the
    device application and boards, libshield and its FreeRTOS and lwIP ports."""
    root = _repo()
    files = [
        root / "tools" / n for n in ("freertos_build.sh", "lwip_build.sh", "mps2_run.sh", "cc.sh")
    ]
    for d, pats in (
        (root / "rig" / "freertos", ("**/*.c", "**/*.h", "**/*.ld", "patches/*.patch")),
        (root / "libshield" / "src", ("*.c", "*.h")),
        (root / "libshield" / "include", ("**/*.h",)),
        (root / "libshield" / "port" / "freertos", ("**/*.c", "**/*.h", "**/*.ld")),
        (root / "libshield" / "port" / "lwip", ("*.c", "*.h", "config/**/*.h", "cm3/**/*.h")),
    ):
        for pat in pats:
            files += sorted(d.glob(pat))
    return [f for f in files if f.is_file()]


def _tree_sources(target: Target, tree: Path) -> list[Path]:
    """The source files of each third-party tree ``target`` builds from (``*.c``, ``*.h``,
    assembly and linker scripts, ``.git`` left out): what its build can read from ``tree``."""
    files: list[Path] = []
    for top in sorted({t.split("/")[0] for t in target.trees}):
        root = tree / top
        files += sorted(
            f
            for f in root.rglob("*")
            if f.suffix in _TREE_SUFFIXES
            and ".git" not in f.relative_to(root).parts
            and f.is_file()
        )
    return files


_TREE_SUFFIXES = frozenset({".c", ".h", ".S", ".s", ".ld"})


def cache_key(target: Target, tree: Path) -> str:
    """The build cache's key: the hash of the build mode, of rtshield's build inputs and
    of the sources of the third-party trees, by content (a tree changed in place, or
    another version at the same path, builds anew; the same sources elsewhere do not)."""
    h = hashlib.sha256(target.build_mode[1].encode())
    for base, files in ((_repo(), _build_inputs()), (tree, _tree_sources(target, tree))):
        for f in files:
            h.update(str(f.relative_to(base)).encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


def build_images(
    target: Target, tree: Path, cache_dir: Path | None = None, say: Callable[[str], None] = print
) -> dict[str, Path]:
    """Build ``target``'s images (:attr:`.target.Target.build_mode`) into a cache keyed by
    :func:`cache_key`; return the image of each variant."""
    script_name, mode = target.build_mode
    script = _repo() / "tools" / script_name
    if not script.is_file():
        raise RigError(
            f"rig {target.verb}: needs an rtshield checkout (tools/{script_name}, rig/freertos/)"
        )
    digest = cache_key(target, tree)
    base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    d = base / "rtshield" / "rig" / f"{target.cache_name}-{digest}"
    images = {v: d / target.image(v) for v in ("unprotected", "protected")}
    if all(p.is_file() and os.access(p, os.R_OK) for p in images.values()):
        return images
    say(
        f"rig {target.verb}: building the {target.board} target against {tree} "
        f"(once; cached in {d})"
    )
    d.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(
        [str(script), mode, str(d)],
        env={**os.environ, TREE_ENV: str(tree)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if p.returncode == 77:
        raise RigError(f"rig {target.verb}: " + (p.stderr.strip().splitlines() or ["skipped"])[-1])
    if p.returncode != 0 or not all(f.is_file() for f in images.values()):
        lines = [ln for ln in (p.stderr + p.stdout).splitlines() if "error" in ln.lower()]
        first = (lines or (p.stderr + p.stdout).strip().splitlines() or ["?"])[0]
        raise RigError(f"rig {target.verb}: building the target failed: {first}")
    return images


def build_target(
    tree: Path, cache_dir: Path | None = None, say: Callable[[str], None] = print
) -> Path:
    """The FreeRTOS-Plus-TCP device program on the POSIX board (:func:`build_images`)."""
    return build_images(Target(), tree, cache_dir, say)["protected"]
