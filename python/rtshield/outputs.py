"""Result files of a run: ``summary.json``, ``timeseries.csv`` and ``timeseries.parquet``.

The formats are the ones docs/outputs.md documents and the project commits
to. Two properties matter more than anything else here:

* **Deterministic bytes.** The same scenario and seed give a byte-identical
  ``summary.json``: keys are sorted, floats are rounded to
  :data:`FLOAT_DIGITS` significant digits and written the same way every
  time, numpy scalars become plain numbers, non-finite values become
  ``null``.
* **Never lose results.** Every file is written to a temporary file in the
  same directory and renamed over the target, so a crash or a full disk leaves
  either the old file or the new one, never half of one. Callers write the
  numbers (summary, time series) before the figures and the report.

What a *result* is: any object with ``summary() -> dict`` and ``timeseries ->
dict[str, numpy.ndarray]`` (one entry per bin), as :mod:`rtshield.result`
defines.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtshield.errors import UsageError

if TYPE_CHECKING:  # numpy is imported by the functions that write numbers (a verb's
    import numpy as np  # help needs the out folder's help text, not numpy)

__all__ = [
    "FLOAT_DIGITS",
    "OUT_HELP",
    "atomic_write",
    "check_out_dir",
    "claim_dir",
    "commit_file",
    "finish_out_dir",
    "format_summary_json",
    "normalize",
    "ordered_columns",
    "prepare_out_dir",
    "prune_stale",
    "read_manifest",
    "record_outputs",
    "recorded_on_failure",
    "remove_ours",
    "timeseries_csv",
    "write_summary",
    "write_timeseries",
]

#: Significant digits kept for floats in summary.json and timeseries.csv.
FLOAT_DIGITS = 9

#: ``--help`` text of every verb's ``--out``.
OUT_HELP = (
    "output directory: created if missing; an existing one must be empty or hold "
    "earlier rtshield results, which are replaced (docs/outputs.md)"
)

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


def check_out_dir(path: str | Path, option: str = "--out") -> Path:
    """Check, without creating or writing anything, that ``path`` can be an output directory.

    It can if it does not exist yet (and its parent can be made), is empty, or
    holds :data:`MARKER`. Raises :class:`UsageError` naming ``option``.
    """
    if not str(path).strip():
        raise UsageError(f"{option}: empty path; name the output directory")
    p = Path(path)
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


def prepare_out_dir(path: str | Path, option: str = "--out") -> Path:
    """Create the output directory if needed, check it is writable and mark it.

    An existing directory is used only if it is empty or was written by
    rtshield before (it holds :data:`MARKER`), so the results of a run are
    never mixed into an unrelated folder. Raises :class:`UsageError` naming
    ``option`` when it cannot be used. An existing manifest is kept (it is
    replaced by :func:`finish_out_dir` when the command succeeds); the files
    this process writes into the directory from now on are recorded.
    """
    p = check_out_dir(path, option)
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
    _DIRS.setdefault(_key(out_dir), set()).add(rel)


def written(out_dir: str | Path) -> dict[str, str]:
    """``{name: sha256}`` of the files this process wrote into ``out_dir``."""
    return dict(_WRITTEN.get(_key(out_dir), {}))


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
    p = Path(path)
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

    Called when a run's files are written and before the whole command has
    succeeded: a later failure then leaves every file listed (so a later run
    can still replace it) and nothing removed.
    """
    out = Path(out_dir)
    old_files, old_dirs = read_manifest(out)
    new = written(out) if files is None else dict(files)
    _write_manifest(
        out, {**old_files, **new}, list(old_dirs) + sorted(_DIRS.get(_key(out), set()) | set(dirs))
    )


@contextlib.contextmanager
def recorded_on_failure(out_dir: str | Path, dirs: Sequence[str] = ()) -> Iterator[None]:
    """Run the block; if it fails (an error, Ctrl-C), :func:`record_outputs` first, then
    re-raise: a failed command removes nothing and lists everything it wrote."""
    try:
        yield
    except BaseException:
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


def finish_out_dir(
    out_dir: str | Path, files: Mapping[str, str] | None = None, dirs: Sequence[str] = ()
) -> list[Path]:
    """After a command succeeded: remove what an earlier run left, then write the manifest.

    ``files`` (default: what this process wrote into ``out_dir`` since
    :func:`prepare_out_dir`) and ``dirs`` (plus the ones :func:`claim_dir`
    recorded) are this command's outputs. A file the old manifest lists but
    this command did not write is removed if its content is unchanged; a
    subdirectory the old manifest lists but this command did not use
    (``runs/OLD``) is pruned the same way by its own manifest and removed if
    that leaves it empty. Nothing else is touched. Returns the removed files.
    """
    out = Path(out_dir)
    old_files, old_dirs = read_manifest(out)
    new_files = written(out) if files is None else dict(files)
    new_dirs = sorted(_DIRS.get(_key(out), set()) | set(dirs))
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
    _write_manifest(out, new_files, new_dirs)
    return removed


def prune_stale(out_dir: str | Path, since_ns: int | None = None) -> list[Path]:
    """Former name of :func:`finish_out_dir` (``since_ns`` is no longer used)."""
    return finish_out_dir(out_dir)


def atomic_write(path: str | Path, data: bytes | str, *, track: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    The file is recorded as written by this process (for the manifest of its
    directory, :func:`finish_out_dir`) unless ``track`` is false.
    """
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
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
