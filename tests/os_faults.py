"""Real file-system faults for the tests: permission denied, a full disk, a
read-only file system. No mocks: a file the process may not read, a small
tmpfs that fills up, a tmpfs remounted read-only.

* :func:`rtshield_without_dac` runs ``rtshield`` in a child process that
  cannot override file permissions: as root, with ``CAP_DAC_OVERRIDE`` and
  ``CAP_DAC_READ_SEARCH`` dropped from its bounding set (``setpriv``), so a
  file of mode 000 is refused to it as to any user; as another user, plainly.
* :func:`small_tmpfs` mounts a tmpfs of a few hundred KiB (root only) and
  unmounts it afterwards, also on failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

#: A child that hangs is a failure, named as such, not a stuck test run.
GUARD_S = 300


def can_mount() -> bool:
    return os.geteuid() == 0 and shutil.which("mount") is not None


def rtshield_without_dac(
    argv: Sequence[object], cwd: str | Path, env: dict | None = None
) -> subprocess.CompletedProcess:
    """``rtshield ARGV`` in a child that file permissions apply to (see above)."""
    cmd = [sys.executable, "-m", "rtshield", *map(str, argv)]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("setpriv (util-linux) is needed to drop root's permission override")
        cmd = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", *cmd]
    return run_guarded(cmd, cwd, env)


def run_guarded(
    cmd: Sequence[object], cwd: str | Path, env: dict | None = None, guard_s: float = GUARD_S
) -> subprocess.CompletedProcess:
    """Run ``cmd``; a child still running after ``guard_s`` is killed and the test
    fails naming it as a hang (a guard against hangs, not a speed check)."""
    try:
        return subprocess.run(
            [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
            env={**os.environ, **(env or {})}, timeout=guard_s,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang: {' '.join(map(str, cmd))} still running after {guard_s} s")


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "512k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (made if missing); unmounted after."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                        str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, mode: str) -> None:
    """Remount the tmpfs at ``where`` read-only (``"ro"``) or read-write (``"rw"``)."""
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True,
                   capture_output=True)


def fill(where: Path, leave: int = 0) -> None:
    """Fill the file system of ``where`` until at most ``leave`` bytes are free."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    with open(where / "filler", "wb") as f:
        chunk = b"\0" * 4096
        left = max(0, free - leave)
        try:
            while left > 0:
                f.write(chunk[: min(len(chunk), left)])
                left -= len(chunk)
            f.flush()
        except OSError:
            pass
