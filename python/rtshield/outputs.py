"""Result files of a run: ``summary.json``, ``timeseries.csv`` and ``timeseries.parquet``.

The formats are the ones docs/outputs.md documents and the project commits
to. Two properties matter more than anything else here:

* **Deterministic bytes.** The same scenario and seed give a byte-identical
  ``summary.json``: keys are sorted, floats are rounded to
  :data:`FLOAT_DIGITS` significant digits and written the same way every
  time, numpy scalars become plain numbers, non-finite values become
  ``null``.
* **All or nothing.** A command writes into a staging folder beside its
  ``--out`` (``.NAME.rtshield-staging``), under a lock of that ``--out``
  (``.NAME.rtshield-lock``, :func:`fcntl.flock`: a second writer is refused
  naming the holder; the kernel releases it on exit and on a crash), and
  moves the staging folder into place when the command has succeeded, in one
  atomic exchange of the two folders. A failed or interrupted command leaves
  the earlier results exactly as they were and nothing that claims to be the
  new run (a sweep keeps its staging folder, whose finished points the next
  sweep into the same ``--out`` resumes from). Inside the staging folder every
  file is still written to a temporary file and renamed over its target
  (:func:`atomic_write`, the one write helper), and an OS error (a full disk,
  an I/O error, a read-only file system, permission) is one
  :class:`~rtshield.errors.OutputError` line naming the file and the error.

What a *result* is: any object with ``summary() -> dict`` and ``timeseries ->
dict[str, numpy.ndarray]`` (one entry per bin), as :mod:`rtshield.result`
defines.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import io
import json
import math
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtshield.errors import OutputError, UsageError
from rtshield.inputs import describe_os_error

if TYPE_CHECKING:  # numpy is imported by the functions that write numbers (a verb's
    import numpy as np  # help needs the out folder's help text, not numpy)

__all__ = [
    "FLOAT_DIGITS",
    "abort_out_dir",
    "abort_out_dirs",
    "atomic_write",
    "check_out_dir",
    "claim_dir",
    "commit_file",
    "finish_out_dir",
    "held",
    "in_command_output",
    "in_staging",
    "format_summary_json",
    "normalize",
    "ordered_columns",
    "prepare_out_dir",
    "prune_stale",
    "read_manifest",
    "record_outputs",
    "recorded_on_failure",
    "remove_ours",
    "shown",
    "shown_text",
    "timeseries_csv",
    "write_summary",
    "write_timeseries",
]

#: Significant digits kept for floats in summary.json and timeseries.csv.
FLOAT_DIGITS = 9

#: The file that marks a directory as rtshield's output directory. It is also
#: the directory's manifest: one line per file rtshield wrote there (``file
#: SHA256 NAME``) and per subdirectory it made (``dir PATH``); only those are
#: ever removed (docs/outputs.md, "Reusing an output directory").
MARKER = ".rtshield-out"

_MARKER_HEAD = (
    "# written by rtshield: the files it wrote into this directory. Only these are\n"
    "# replaced or removed by the next run into it; every other file is left alone.\n"
)

#: Kept for callers of earlier versions: what rtshield writes.
OUTPUT_SUFFIXES = (".json", ".csv", ".parquet", ".png", ".html")

#: Files written by this process since each directory was prepared:
#: ``{directory: {name: sha256}}`` (see :func:`atomic_write`).
_WRITTEN: dict[str, dict[str, str]] = {}
#: Subdirectories each directory's command uses: ``{directory: {relative path}}``.
_DIRS: dict[str, set[str]] = {}


def _key(path: str | Path) -> str:
    return os.path.abspath(os.fspath(path))


def _plain_name(name: str) -> bool:
    return bool(name) and name not in (".", "..", MARKER) and "/" not in name and "\x00" not in name


def _plain_relpath(rel: str) -> bool:
    parts = rel.split("/")
    return bool(parts) and all(_plain_name(p) for p in parts)


# ------------------------------------------------------------------ staging and lock

#: Beside ``--out DIR``: the folder a command writes into, the lock, and where
#: the earlier results wait for removal after the exchange.
STAGING_SUFFIX = ".rtshield-staging"
LOCK_SUFFIX = ".rtshield-lock"
OLD_SUFFIX = ".rtshield-old"
#: In a staging folder until it is moved into place: marks it as one (the
#: earlier results, exchanged to the staging folder's name, have none).
STAGING_MARK = ".rtshield-staging"


def _beside(final: Path, suffix: str) -> Path:
    return final.parent / f".{final.name}{suffix}"


class _Txn:
    """One command's staged output folder: ``final`` (``--out``) and ``staging``."""

    def __init__(self, final: Path, staging: Path, lock_fd: int, lock_path: Path,
                 made: list[Path], resumable: bool) -> None:
        self.final, self.staging = final, staging
        self.lock_fd, self.lock_path = lock_fd, lock_path
        self.made = made
        self.resumable = resumable
        #: > 0 while a command that writes several parts holds the move into place
        #: (:func:`held`): finishing the folder then only updates its manifest.
        self.held = 0
        #: Files :func:`atomic_write` put into the staging folder whose data may not
        #: be on disk yet: synced together before the folder moves into place
        #: (:func:`_commit`). Empty for a resumable folder (its files are synced
        #: one by one: a later command reads them from the staging folder).
        self.unsynced: set[str] = set()


#: Active transactions by their staging folder (absolute path).
_TXNS: dict[str, _Txn] = {}
#: Every staging folder of this process and its ``--out``, for messages
#: (:func:`shown_text`), also after the command ended.
_SHOWN: dict[str, str] = {}


def _close_locks_in_child() -> None:
    """A forked worker does not hold its parent's locks (it closes its copies)."""
    for t in list(_TXNS.values()):
        with contextlib.suppress(OSError):
            os.close(t.lock_fd)
    _TXNS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_locks_in_child)


def _inside(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` (``""`` for ``root`` itself), or ``None``."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    return "" if str(rel) == "." else rel.as_posix()


def _txn_of(path: str | Path) -> tuple[_Txn | None, Path, str | None]:
    """The transaction ``path`` belongs to, ``path`` inside its staging folder, and
    its place there (``""``: the staging folder itself; ``None``: no transaction).
    A path inside a staging folder that this process did not open (a worker of a
    command) is taken as staged, nested, without a transaction."""
    p = Path(os.path.abspath(os.fspath(path)))
    for t in _TXNS.values():
        rel = _inside(p, t.staging)
        if rel is not None:
            return t, p, rel
        rel = _inside(p, t.final)
        if rel is not None:
            return t, (t.staging / rel) if rel else t.staging, rel
    for parent in p.parents:
        if parent.name.startswith(".") and parent.name.endswith(STAGING_SUFFIX):
            return None, p, _inside(p, parent)
    return None, p, None


def shown(path: str | Path) -> Path:
    """``path`` as the user knows it: inside a staging folder, the same place in its
    ``--out``."""
    p = Path(os.path.abspath(os.fspath(path)))
    for staging, final in _SHOWN.items():
        rel = _inside(p, Path(staging))
        if rel is not None:
            return Path(final) / rel if rel else Path(final)
    return Path(path)


def shown_text(text: str) -> str:
    """``text`` with every staging folder of this process named as its ``--out``."""
    for staging, final in sorted(_SHOWN.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(staging, final)
    return text


def _holder(lock_path: Path) -> str:
    try:
        with open(lock_path, encoding="utf-8", errors="replace") as f:
            text = " ".join(f.read(400).split())
    except OSError:
        text = ""
    return text or "a process that has not said which"


def _lock(final: Path, option: str) -> tuple[int, Path]:
    """Take the lock of ``final`` (:func:`fcntl.flock` on ``.NAME.rtshield-lock`` beside
    it); if another process holds it, :class:`UsageError` naming the holder."""
    lock_path = _beside(final, LOCK_SUFFIX)
    for _ in range(100):
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise UsageError(
                f"{option}: cannot create the lock {lock_path}: {describe_os_error(e)}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UsageError(
                f"{option}: {final} is being written by another rtshield command "
                f"({_holder(lock_path)}); wait for it to end or choose another {option}"
            ) from None
        except OSError as e:
            os.close(fd)
            raise UsageError(
                f"{option}: cannot lock {lock_path}: {describe_os_error(e)}"
            ) from None
        try:  # the file may have been removed by its last holder meanwhile
            same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
        except OSError:
            same = False
        if same:
            command = " ".join(["rtshield", *sys.argv[1:]])[:300]
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()}: {command}\n".encode(errors="replace"), 0)
            return fd, lock_path
        os.close(fd)
    raise UsageError(f"{option}: cannot take the lock {lock_path}: it keeps changing")


def _unlock(t: _Txn) -> None:
    with contextlib.suppress(OSError):
        os.unlink(t.lock_path)  # still held: nobody can take it between these two
    with contextlib.suppress(OSError):
        os.close(t.lock_fd)


def _rmtree(d: Path) -> None:
    """Remove a staging folder or earlier results (never following a link)."""
    try:
        st = os.lstat(d)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(d, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(d)


def _link_tree(src: Path, dst: Path, skip: Callable[[str], bool] = lambda _r: False,
               rel: str = "") -> None:
    """Make every entry of the folder ``src`` that ``dst`` lacks appear in ``dst``:
    files (and symbolic links, FIFOs …) as hard links to the same file — so
    ``src`` is never changed — or, where the file system has none, as copies;
    folders made anew and filled the same way; a folder ``dst`` has already is
    entered. Entries whose relative path ``skip`` names are left out."""
    try:
        entries = list(os.scandir(src))
    except OSError:
        return
    for e in entries:
        r = f"{rel}/{e.name}" if rel else e.name
        if skip(r):
            continue
        target = dst / e.name
        is_dir = e.is_dir(follow_symlinks=False)
        if os.path.lexists(target):
            if is_dir and target.is_dir() and not target.is_symlink():
                _link_tree(Path(e.path), target, skip, r)
            continue
        if is_dir:
            target.mkdir()
            with contextlib.suppress(OSError):
                os.chmod(target, stat.S_IMODE(e.stat(follow_symlinks=False).st_mode))
            _link_tree(Path(e.path), target, skip, r)
            continue
        try:
            os.link(e.path, target, follow_symlinks=False)
        except OSError:
            if e.is_symlink():
                os.symlink(os.readlink(e.path), target)
            elif e.is_file(follow_symlinks=False):
                shutil.copy2(e.path, target)


def _fsync_dir(d: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _fsync_tree(d: Path) -> None:
    for root, _dirs, _files in os.walk(d):
        _fsync_dir(Path(root))


def _fsync_files(paths: Iterable[str]) -> None:
    """Put the data of every file of ``paths`` on disk (one that is gone is skipped),
    several at once: the file system's journal commits them together instead of
    once per file (a few milliseconds each). An error of one is raised once all
    ended; the threads are ended before this returns."""
    errors: list[OSError] = []

    def sync(path: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:  # replaced or pruned since: its successor is listed
            return
        except OSError as e:
            errors.append(e)
            return
        try:
            os.fsync(fd)
        except OSError as e:
            errors.append(e)
        finally:
            os.close(fd)

    paths = sorted(paths)
    threads = [threading.Thread(target=sync, args=(p,), daemon=True) for p in paths[1:]]
    for th in threads:
        th.start()
    if paths:
        sync(paths[0])
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


@functools.cache
def _libc_renameat2() -> Any:
    """libc's ``renameat2`` (None where it has none), looked up once, among the symbols
    this process has loaded (the C library is one): ``ctypes.util.find_library``
    would run ``ldconfig -p``, a process of its own, on every call."""
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _rename2(a: Path, b: Path, flags: int) -> bool:
    """``renameat2(a, b, flags)``: True when done, False when the system or the file
    system cannot (the caller falls back); other errors raise :class:`OSError`."""
    import ctypes

    fn = _libc_renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while the staging folder is moved into place."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _recover(final: Path) -> None:
    """Under the lock: finish what a crashed command left beside ``final``."""
    old = _beside(final, OLD_SUFFIX)
    if os.path.lexists(old):
        if not os.path.lexists(final) and old.is_dir() and not old.is_symlink():
            os.rename(old, final)  # crashed between the two renames of a commit
        else:
            _rmtree(old)


def _mark_kind(staging: Path) -> str:
    """The kind of command that left the staging folder (its mark's second line)."""
    try:
        lines = (staging / STAGING_MARK).read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    return lines[1] if len(lines) > 1 else ""


def _begin(final: Path, option: str, resumable: bool, kind: str = "") -> _Txn:
    made: list[Path] = []
    for parent in reversed(final.parents):
        if not parent.exists():
            try:
                parent.mkdir()
            except OSError as e:
                raise UsageError(
                    f"{option}: cannot create {parent}: {describe_os_error(e)}"
                ) from None
            made.append(parent)
    fd, lock_path = _lock(final, option)
    staging = _beside(final, STAGING_SUFFIX)
    t = _Txn(final, staging, fd, lock_path, made, resumable)
    try:
        _recover(final)
        _check_target(final, option)
        keep = (
            resumable
            and staging.is_dir()
            and not staging.is_symlink()
            and (staging / STAGING_MARK).is_file()
            and _mark_kind(staging) == kind
        )
        if not keep:
            _rmtree(staging)
            staging.mkdir()
            mark = f"{final}\n{kind}\n" if kind else f"{final}\n"
            (staging / STAGING_MARK).write_text(mark, encoding="utf-8")
        if not (staging / MARKER).is_file():
            _write_manifest(staging, {}, [])
    except OSError as e:
        _abort(t)
        raise UsageError(
            f"{option}: cannot create the staging folder {staging} beside {final}: "
            f"{describe_os_error(e)}"
        ) from None
    except BaseException:
        _abort(t)
        raise
    _TXNS[str(staging)] = t
    _SHOWN[str(staging)] = str(final)
    return t


def _check_target(final: Path, option: str) -> None:
    """``final`` can be replaced by a folder moved beside it."""
    if final.is_dir() and os.path.ismount(final):
        raise UsageError(
            f"{option}: {final} is a mount point; rtshield writes beside the folder and "
            "moves its results into place, so give a folder inside it"
        )
    if final.exists() and not os.access(final.parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"{option}: cannot write into {final.parent} (the folder holding {final}): "
            "permission denied (EACCES)"
        )


def _commit(t: _Txn) -> None:
    """Move the staging folder into place: the earlier results exchanged with it in
    one step (``renameat2(RENAME_EXCHANGE)``; two renames where the file system
    has no exchange, a crash between them repaired by the next command), then
    removed."""
    old = _beside(t.final, OLD_SUFFIX)
    try:
        with contextlib.suppress(OSError):
            os.chmod(t.staging, stat.S_IMODE(os.stat(t.final).st_mode))
        _fsync_files(t.unsynced)
        t.unsynced.clear()
        _fsync_tree(t.staging)
        with _signals_held():
            os.unlink(t.staging / STAGING_MARK)
            if not os.path.lexists(t.final):
                if not _rename2(t.staging, t.final, _RENAME_NOREPLACE):
                    os.rename(t.staging, t.final)
            elif _rename2(t.staging, t.final, _RENAME_EXCHANGE):
                os.rename(t.staging, old)  # the earlier results, out of the way
            else:
                os.rename(t.final, old)
                os.rename(t.staging, t.final)
            _fsync_dir(t.final.parent)
    except OSError as e:
        raise OutputError(
            f"{t.final}: cannot move the results into place: {describe_os_error(e)}; "
            f"{t.final} keeps its earlier results"
        ) from None
    finally:
        _TXNS.pop(str(t.staging), None)
    _rmtree(old)
    _unlock(t)


def _abort(t: _Txn) -> None:
    """The command failed: ``--out`` stays as it was; the staging folder is removed
    (kept when it holds a resumable command's finished points)."""
    _TXNS.pop(str(t.staging), None)
    if not t.resumable:
        _rmtree(t.staging)
    for d in reversed(t.made):
        with contextlib.suppress(OSError):
            d.rmdir()
    _unlock(t)


@contextlib.contextmanager
def held(out_dir: str | Path) -> Iterator[None]:
    """While the block runs, finishing ``out_dir`` (a command's ``--out``) does not move
    it into place: a command made of parts that each finish it (``demo``'s studies)
    moves it once, with its own last :func:`finish_out_dir`."""
    t, _, rel = _txn_of(out_dir)
    if t is None or rel != "":
        yield
        return
    t.held += 1
    try:
        yield
    finally:
        t.held -= 1


def abort_out_dir(out_dir: str | Path) -> None:
    """End the output folder ``out_dir`` if it was opened and not finished: it keeps its
    earlier results."""
    t, _, rel = _txn_of(out_dir)
    if t is not None and rel == "":
        _abort(t)


def abort_out_dirs() -> list[Path]:
    """End every output folder of this process that was not finished: each keeps its
    earlier results (the CLI calls this when a command ends). Returns their
    ``--out`` folders."""
    left = [t.final for t in _TXNS.values()]
    for t in list(_TXNS.values()):
        _abort(t)
    return left


def read_manifest(out_dir: str | Path) -> tuple[dict[str, str], list[str]]:
    """The manifest of ``out_dir``: ``({file name: sha256}, [subdirectory, ...])``.

    Malformed lines and names that are not plain (a path, ``..``) are ignored,
    so a hand-edited marker can never point rtshield outside the directory.
    A marker of an earlier version (no entries) lists nothing.
    """
    files: dict[str, str] = {}
    dirs: list[str] = []
    try:
        text = (Path(out_dir) / MARKER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return files, dirs
    for line in text.splitlines()[:100_000]:
        kind, _, rest = line.partition(" ")
        if kind == "file":
            digest, _, name = rest.partition(" ")
            if len(digest) == 64 and _plain_name(name):
                files[name] = digest
        elif kind == "dir" and _plain_relpath(rest) and rest not in dirs:
            dirs.append(rest)
    return files, dirs


def _write_manifest(out_dir: Path, files: Mapping[str, str], dirs: Sequence[str]) -> None:
    lines = [_MARKER_HEAD]
    lines += [f"file {files[n]} {n}\n" for n in sorted(files)]
    lines += [f"dir {d}\n" for d in sorted(set(dirs))]
    atomic_write(out_dir / MARKER, "".join(lines), track=False)


def in_command_output(path: str | Path) -> bool:
    """``path`` is inside (or is) the output folder of a command now writing."""
    return _txn_of(path)[2] is not None


def in_staging(path: str | Path) -> Path:
    """``path``, or where it is in its command's staging folder (while a command
    writes its ``--out``, every path into it is written there)."""
    t, p, rel = _txn_of(path)
    return p if rel is not None else Path(path)


def check_out_dir(path: str | Path, option: str = "--out") -> Path:
    """Check, without creating or writing anything, that ``path`` can be an output directory.

    It can if it does not exist yet (and its parent can be made), is empty, or
    holds :data:`MARKER`. Raises :class:`UsageError` naming ``option``.
    """
    if not str(path).strip():
        raise UsageError(f"{option}: empty path; name the output directory")
    p = in_staging(path)
    if "\x00" in str(p):
        raise UsageError(f"{option}: {str(path)!r}: not a usable folder name (it holds a NUL)")
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option}: {p} exists and is not a directory")
    if not p.exists():
        for parent in p.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise UsageError(
                        f"{option}: cannot create {p}: {parent} exists and is not a directory"
                    )
                break
        return p
    try:
        foreign = _foreign(p)
    except OSError as e:
        raise UsageError(f"{option}: cannot read {p}: {e.strerror or e}") from None
    _refuse_foreign(p, foreign, option)
    return p


def _foreign(p: Path) -> bool:
    """``p`` (a directory) holds files and no :data:`MARKER`: not rtshield's to write into."""
    return not (p / MARKER).is_file() and any(p.iterdir())


def _refuse_foreign(p: Path, foreign: bool, option: str) -> None:
    if foreign:
        raise UsageError(
            f"{option}: {p} is not empty and holds no earlier rtshield results; "
            "give a new or empty directory"
        )


def _final_path(path: str | Path) -> Path:
    """``--out`` as an absolute path; a symbolic link to a folder is the folder."""
    p = Path(path)
    if p.is_symlink() and p.is_dir():
        p = Path(os.path.realpath(p))
    return Path(os.path.abspath(p))


def prepare_out_dir(
    path: str | Path, option: str = "--out", *, resumable: bool = False, kind: str = ""
) -> Path:
    """Open the output directory ``path`` for this command; returns the folder to write in.

    An existing directory is used only if it is empty or was written by
    rtshield before (it holds :data:`MARKER`), so the results of a run are
    never mixed into an unrelated folder. Raises :class:`UsageError` naming
    ``option`` when it cannot be used.

    ``path`` outside any command's output folder (a command's ``--out``): its
    lock is taken (another writer: one line naming it) and a staging folder
    beside it is made; that is what is returned, and :func:`finish_out_dir`
    moves it into place. ``resumable``: a staging folder a failed run of the
    same kind left is resumed (its finished points kept), and one this command
    leaves is kept; ``kind`` names the kind (a staging folder another kind of
    command left is not resumed: it is replaced). ``path`` inside a command's
    output folder (``DIR/runs/NAME``, given as either folder): the same place
    in the staging folder, made and marked there, holding the earlier results
    of that folder (as links) when there were any. The files this process
    writes into the folder from now on are recorded.
    """
    t, p, rel = _txn_of(path)
    if rel is None:
        check_out_dir(path, option)
        final = _final_path(path)
        t = _begin(final, option, resumable, kind)
        _SHOWN[str(t.staging)] = os.path.normpath(os.fspath(path))
        p = t.staging
    else:
        if t is not None and rel and not p.exists():
            src = t.final / rel
            if src.is_dir() and not src.is_symlink() and (src / MARKER).is_file():
                try:
                    p.mkdir(parents=True, exist_ok=True)
                    _link_tree(src, p)
                except OSError as e:
                    raise OutputError(
                        f"{shown(p)}: cannot write: {describe_os_error(e)}"
                    ) from None
        check_out_dir(p, option)
        try:
            p.mkdir(parents=True, exist_ok=True)
            foreign = _foreign(p)
        except OSError as e:
            raise UsageError(f"{option}: cannot create {p}: {e.strerror or e}") from None
        _refuse_foreign(p, foreign, option)
        try:
            if not (p / MARKER).is_file():
                _write_manifest(p, {}, [])
            elif not os.access(p, os.W_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as e:
            raise UsageError(f"{option}: cannot write into {p}: {e.strerror or e}") from None
    _WRITTEN[_key(p)] = {}
    _DIRS[_key(p)] = set()
    return p


def claim_dir(out_dir: str | Path, rel: str) -> None:
    """Record that this command uses ``out_dir/rel`` (a subdirectory it made)."""
    _DIRS.setdefault(_key(in_staging(out_dir)), set()).add(rel)


def written(out_dir: str | Path) -> dict[str, str]:
    """``{name: sha256}`` of the files this process wrote into ``out_dir``."""
    return dict(_WRITTEN.get(_key(in_staging(out_dir)), {}))


def _digest(path: Path) -> str | None:
    """SHA-256 of a regular file (not followed through a symbolic link), else ``None``."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def remove_ours(path: str | Path, digest: str | None = None) -> bool:
    """Remove ``path`` only if rtshield wrote it and nobody changed it since.

    "Wrote it": this process wrote it (:func:`atomic_write`), or the manifest
    of its directory lists it; "unchanged": its content still has the digest
    recorded then. A symbolic link, a directory or a changed file is left
    alone. Returns whether the file was removed.
    """
    p = in_staging(path)
    if digest is None:
        digest = _WRITTEN.get(_key(p.parent), {}).get(p.name)
    if digest is None:
        digest = read_manifest(p.parent)[0].get(p.name)
    if digest is None or _digest(p) != digest:
        return False
    try:
        p.unlink()
    except OSError:
        return False
    _WRITTEN.get(_key(p.parent), {}).pop(p.name, None)
    return True


def record_outputs(
    out_dir: str | Path, files: Mapping[str, str] | None = None, dirs: Sequence[str] = ()
) -> None:
    """Add what this command wrote to the manifest of ``out_dir``, removing nothing.

    Called when a point's files are written (a sweep's, resumable): a later
    failure then leaves every file listed, and a later run takes the point's
    files as rtshield's.
    """
    out = in_staging(out_dir)
    old_files, old_dirs = read_manifest(out)
    new = written(out) if files is None else dict(files)
    _write_manifest(
        out, {**old_files, **new}, list(old_dirs) + sorted(_DIRS.get(_key(out), set()) | set(dirs))
    )


@contextlib.contextmanager
def recorded_on_failure(out_dir: str | Path, dirs: Sequence[str] = ()) -> Iterator[None]:
    """Run the block; if it fails (an error, Ctrl-C), :func:`record_outputs` first, then
    re-raise (a resumable staging folder then lists everything it holds)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError, OutputError):
            record_outputs(out_dir, dirs=dirs)
        raise


def _prune_dir(d: Path, removed: list[Path]) -> None:
    """Remove what rtshield wrote in ``d`` (by its manifest), then ``d`` if empty.

    Never follows a symbolic link and never enters a subdirectory the
    manifest does not list.
    """
    try:
        if not stat.S_ISDIR(os.lstat(d).st_mode) or not (d / MARKER).is_file():
            return
    except OSError:
        return
    files, dirs = read_manifest(d)
    for rel in sorted(dirs, key=lambda r: -r.count("/")):
        _prune_dir(d / rel, removed)
    for name, digest in files.items():
        if remove_ours(d / name, digest):
            removed.append(d / name)
    try:
        (d / MARKER).unlink()
        d.rmdir()
    except OSError:  # something of the user's is in it: keep it, still marked
        if not (d / MARKER).exists():
            left = {n: h for n, h in files.items() if (d / n).exists()}
            _write_manifest(d, left, [r for r in dirs if (d / r).exists()])


def _prune(
    out: Path,
    old: tuple[dict[str, str], list[str]],
    new_files: Mapping[str, str],
    new_dirs: Sequence[str],
) -> list[Path]:
    """Remove from ``out`` what the manifest ``old`` lists and this command did not
    write (``new_files``, ``new_dirs``), each only if unchanged since."""
    old_files, old_dirs = old
    removed: list[Path] = []
    for rel in sorted(set(old_dirs) - set(new_dirs), key=lambda r: -r.count("/")):
        _prune_dir(out / rel, removed)
        if "/" in rel:  # runs/OLD: also its parent, if rtshield made it and it is now empty
            parent = rel.rsplit("/", 1)[0]
            if (
                parent in old_dirs
                and parent not in new_dirs
                and parent not in [r.rsplit("/", 1)[0] for r in new_dirs if "/" in r]
            ):
                try:
                    (out / parent).rmdir()
                except OSError:
                    pass
    for name, digest in old_files.items():
        if name not in new_files and remove_ours(out / name, digest):
            removed.append(out / name)
    return removed


def finish_out_dir(
    out_dir: str | Path, files: Mapping[str, str] | None = None, dirs: Sequence[str] = ()
) -> list[Path]:
    """After a command succeeded: remove what an earlier run left, write the manifest,
    and — for a command's ``--out`` — move the staging folder into place.

    ``files`` (default: what this process wrote into ``out_dir`` since
    :func:`prepare_out_dir`) and ``dirs`` (plus the ones :func:`claim_dir`
    recorded) are this command's outputs. A file the old manifest lists but
    this command did not write is removed if its content is unchanged; a
    subdirectory the old manifest lists but this command did not use
    (``runs/OLD``) is pruned the same way by its own manifest and removed if
    that leaves it empty. Everything else of the earlier folder — the user's
    files and folders, a result the user edited — is carried into the new one
    (as hard links: the earlier folder is never changed). Returns the removed
    files (as the user names them).
    """
    t, out, rel = _txn_of(out_dir)
    if rel is None:
        out = Path(out_dir)
    new_files = written(out) if files is None else dict(files)
    new_dirs = sorted(_DIRS.get(_key(out), set()) | set(dirs))
    root = t is not None and rel == "" and t.held == 0
    if root:
        assert t is not None
        old = read_manifest(t.final) if t.final.is_dir() else ({}, [])
        if t.final.is_dir():

            def skip(r: str, t: _Txn = t) -> bool:
                # the new manifest; a folder this command used was given its
                # earlier results when it was prepared (and pruned when finished)
                return r in (MARKER, STAGING_MARK) or (
                    r in new_dirs and (t.final / r / MARKER).is_file()
                )

            try:
                _link_tree(t.final, out, skip)
            except OSError as e:
                raise OutputError(
                    f"{t.final}: cannot carry the earlier folder's other files over: "
                    f"{describe_os_error(e)}; {t.final} keeps its earlier results"
                ) from None
    else:
        old = read_manifest(out)
    removed = _prune(out, old, new_files, new_dirs)
    _write_manifest(out, new_files, new_dirs)
    if root:
        assert t is not None
        _commit(t)
    return [shown(r) for r in removed]


def prune_stale(out_dir: str | Path, since_ns: int | None = None) -> list[Path]:
    """Former name of :func:`finish_out_dir` (``since_ns`` is no longer used)."""
    return finish_out_dir(out_dir)


def atomic_write(path: str | Path, data: bytes | str, *, track: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename: the one
    write helper of every output file.

    ``path`` in a command's ``--out`` is written in its staging folder (the
    returned path). The file is recorded as written by this process (for the
    manifest of its directory, :func:`finish_out_dir`) unless ``track`` is
    false. An OS error (a full disk, an I/O error, a read-only file system,
    permission) is one :class:`OutputError` line naming the file and the error.
    The data is on disk before the folder moves into place: a file of a
    command's ``--out`` is synced with the folder's other files then, together
    (:func:`_commit`), any other file (a resumable folder's too) before this
    returns.
    """
    t, p, rel = _txn_of(path)
    if rel is None:
        p = Path(path)
    later = t is not None and not t.resumable  # synced when the folder moves into place
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            if not later:
                os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
        if later:
            t.unsynced.add(os.fspath(p))
    except BaseException as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError):
            t, _, _ = _txn_of(p)
            keeps = f"; {_SHOWN[str(t.staging)]} keeps its earlier results" if t else ""
            raise OutputError(f"{shown(p)}: cannot write: {describe_os_error(e)}{keeps}") from None
        raise
    if track:
        _WRITTEN.setdefault(_key(p.parent), {})[p.name] = hashlib.sha256(raw).hexdigest()
    return p


def commit_file(path: str | Path) -> Path:
    """Record a file this process wrote otherwise than by :func:`atomic_write` (a
    table written row by row as a sweep's points finish) as its output, by the
    digest of its content now."""
    p = Path(path)
    digest = _digest(p)
    if digest is not None:
        _WRITTEN.setdefault(_key(p.parent), {})[p.name] = digest
    return p


def _round_float(x: float) -> float | None:
    if not math.isfinite(x):
        return None
    if x == 0.0:
        return 0.0
    return float(f"{x:.{FLOAT_DIGITS}g}")


def normalize(obj: Any) -> Any:
    """Plain JSON types, floats rounded (:data:`FLOAT_DIGITS`), NaN/inf → ``None``."""
    import numpy as np

    if isinstance(obj, Mapping):
        return {str(k): normalize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [normalize(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [normalize(v) for v in obj.tolist()]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return _round_float(float(obj))
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"summary value of type {type(obj).__name__} cannot be written as JSON")


def format_summary_json(summary: Mapping[str, Any]) -> str:
    """The exact text of ``summary.json``: sorted keys, 2-space indent, final newline."""
    return (
        json.dumps(
            normalize(summary), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False
        )
        + "\n"
    )


def write_summary(out_dir: str | Path, summary: Mapping[str, Any]) -> Path:
    """Write ``out_dir/summary.json`` atomically."""
    return atomic_write(Path(out_dir) / "summary.json", format_summary_json(summary))


def ordered_columns(names: list[str] | tuple[str, ...] | Any) -> list[str]:
    """Columns in a stable, readable order: ``t_s``, the totals, drops, critical, CPU, rest."""
    from rtshield.engine import packet_counters

    fixed = ("t_s",) + packet_counters()
    crit = ("cycles", "lateness_pct", "lateness_max_pct", "misses")

    def key(n: str) -> tuple[int, int, str]:
        if n in fixed:
            return (0, fixed.index(n), n)
        if n.startswith("dropped_"):
            return (1, 0, n)
        if n in crit:
            return (2, crit.index(n), n)
        if n.startswith("cpu_"):
            return (3, 0, n)
        if n == "rx_disabled_s":
            return (4, 0, n)
        return (5, 0, n)

    return sorted(names, key=key)


def _columns(ts: Mapping[str, Any]) -> tuple[list[str], dict[str, np.ndarray]]:
    import numpy as np

    cols = {k: np.asarray(v) for k, v in ts.items()}
    lengths = {len(v) for v in cols.values()}
    if len(lengths) > 1:
        raise ValueError(f"time series columns differ in length: {sorted(lengths)}")
    return ordered_columns(cols), cols


def _cell(v: Any) -> str:
    import numpy as np

    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = _round_float(float(v))
    if f is None:
        return ""
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def timeseries_csv(ts: Mapping[str, Any]) -> str:
    """The text of ``timeseries.csv``: a header row, then one row per bin."""
    order, cols = _columns(ts)
    buf = io.StringIO()
    buf.write(",".join(order) + "\n")
    n = len(cols[order[0]]) if order else 0
    for i in range(n):
        buf.write(",".join(_cell(cols[c][i]) for c in order) + "\n")
    return buf.getvalue()


def _arrow_array(pa: Any, v: np.ndarray) -> Any:
    """``v`` as an Arrow array, the same one ``pa.array(v)`` gives.

    Numbers and booleans are wrapped from their buffers: ``pa.array``
    imports pandas on its first call (about a quarter of a CPU-second), which
    a run that writes numbers only does not need. Other dtypes take
    ``pa.array``.
    """
    types = {
        "i1": pa.int8, "i2": pa.int16, "i4": pa.int32, "i8": pa.int64,
        "u1": pa.uint8, "u2": pa.uint16, "u4": pa.uint32, "u8": pa.uint64,
        "f4": pa.float32, "f8": pa.float64,
    }  # fmt: skip
    import numpy as np

    key = f"{v.dtype.kind}{v.dtype.itemsize}"
    if v.dtype.byteorder in "=|" and key in types:
        data = np.ascontiguousarray(v)
        return pa.Array.from_buffers(types[key](), len(data), [None, pa.py_buffer(data)])
    if v.dtype == np.bool_:
        bits = np.packbits(v, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(v), [None, pa.py_buffer(bits)])
    return pa.array(v)


def write_timeseries(out_dir: str | Path, ts: Mapping[str, Any]) -> list[Path]:
    """Write ``timeseries.csv`` and ``timeseries.parquet`` atomically; return their paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    paths = [atomic_write(out / "timeseries.csv", timeseries_csv(ts))]
    order, cols = _columns(ts)
    table = pa.Table.from_arrays([_arrow_array(pa, cols[c]) for c in order], names=order)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    paths.append(atomic_write(out / "timeseries.parquet", sink.getvalue().to_pybytes()))
    return paths
