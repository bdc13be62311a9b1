"""The one door every input file of rtshield comes in by.

Scenario, system and calibration files, packet captures, a board's counters
(CSV) and the scenario folders of ``demo --scenarios``: each path is resolved
here, so each way a path can fail gets its true reason, the same in every
verb, as one :class:`~rtshield.errors.UsageError` line that starts with the
path:

* missing (``no such file``); a symbolic link whose target is missing (``a
  symbolic link to a missing file``); a part of the path that is a file, not
  a folder; a symbolic link loop; a path too long; a NUL in the name;
* permission denied; an I/O error of the disk (``cannot read: …``, with the
  error's name, ``EIO``);
* a folder where a file is expected (and a file where a folder is), a FIFO
  (never opened: it would block), a device such as ``/dev/zero``, a socket;
* a file larger than its limit, refused from its size before anything is
  read, and read from the same open file, never more than the limit plus
  one byte (a file that grows meanwhile, or a ``/proc`` file that claims to
  be empty, is still cut off).

The limits (docs/scenarios.md, "The file itself"): :data:`MAX_TEXT_BYTES`
(1 MiB) for a scenario, system or calibration file and a counters CSV; a
capture by the simulator's trace limits (:mod:`rtshield.pcap`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rtshield.errors import UsageError

__all__ = [
    "MAX_TEXT_BYTES",
    "decode_text",
    "describe_os_error",
    "input_folder",
    "read_input",
    "read_input_text",
    "resolve_input",
    "size_text",
]

#: The largest text input read (scenario, system or calibration file, counters
#: CSV): 1 MiB, far above any real one (the shipped ones are a few KiB).
MAX_TEXT_BYTES = 1 << 20

#: Read in pieces of this size, so that a lying size (``/proc``) costs no more
#: than the limit.
_CHUNK = 1 << 16


def size_text(n: int) -> str:
    """``n`` bytes in words: ``1 MiB``, ``64 KiB``, ``100 bytes``."""
    if n and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    return f"{n >> 10} KiB" if n and n % (1 << 10) == 0 else f"{n} bytes"


def describe_os_error(e: OSError) -> str:
    """``No space left on device (ENOSPC)``: an OS error's text and its name."""
    name = errno.errorcode.get(e.errno or 0, "")
    text = e.strerror or str(e)
    return f"{text} ({name})" if name else text


def _kind(mode: int, what: str) -> str:
    if stat.S_ISDIR(mode):
        return f"is a directory, expected a {what}"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe), not a regular file; save the input to a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def _missing_reason(p: Path) -> str:
    """Why ``p`` is not there: itself missing, a dangling symbolic link, or a
    part of its path that is not a folder."""
    try:
        if stat.S_ISLNK(os.lstat(p).st_mode):
            return f"a symbolic link to a missing file ({os.readlink(p)})"
    except (OSError, ValueError):
        pass
    for parent in p.parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            return f"no such file ({parent} is not a folder)"
        break
    return "no such file"


def _why(p: Path, e: OSError) -> str:
    """The reason an ``os.stat`` or ``open`` of ``p`` failed, in words."""
    if e.errno in (errno.ENOENT, errno.ENOTDIR):
        return _missing_reason(p)
    if e.errno == errno.ELOOP:
        return "a symbolic link loop (too many levels of symbolic links)"
    if e.errno == errno.ENAMETOOLONG:
        return "the path is too long (File name too long, ENAMETOOLONG)"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"cannot read: permission denied ({errno.errorcode[e.errno]})"
    return f"cannot read: {describe_os_error(e)}"


def _shown(path: str | Path) -> str:
    text = os.fspath(path)
    return text if "\x00" not in text else repr(text)


def resolve_input(path: str | Path, what: str = "file") -> tuple[Path, os.stat_result]:
    """``path`` as an existing regular file (symbolic links followed), with its
    :func:`os.stat`; else :class:`UsageError` with the true reason. ``what``
    names the file expected (``"scenario file"``, ``"capture"``)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except ValueError:  # a NUL in the path
        raise UsageError(f"{_shown(path)}: not a usable file name (it holds a NUL)") from None
    except OSError as e:
        raise UsageError(f"{p}: {_why(p, e)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{p}: {_kind(st.st_mode, what)}")
    return p, st


def input_folder(path: str | Path, what: str = "folder") -> Path:
    """``path`` as an existing folder (symbolic links followed); else
    :class:`UsageError` with the true reason (missing, a file, a loop …)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except ValueError:
        raise UsageError(f"{_shown(path)}: not a usable folder name (it holds a NUL)") from None
    except OSError as e:
        why = _why(p, e)
        raise UsageError(f"{p}: {why.replace('no such file', 'no such folder', 1)}") from None
    if not stat.S_ISDIR(st.st_mode):
        kind = "is a file" if stat.S_ISREG(st.st_mode) else _kind(st.st_mode, what).split(",")[0]
        raise UsageError(f"{p}: {kind}, expected a {what}")
    if not os.access(p, os.R_OK | os.X_OK):
        raise UsageError(f"{p}: cannot read the {what}: permission denied (EACCES)")
    return p


def read_input(path: str | Path, *, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Refused, each with its reason (:func:`resolve_input`), before anything is
    read: a path that is not a regular file, a file larger than ``limit``.
    The file is opened without blocking and checked again through the open
    descriptor (a file swapped for a FIFO meanwhile is never read), then read
    from that descriptor, at most ``limit + 1`` bytes.
    """
    p, st = resolve_input(path, what)
    too_big = UsageError(
        f"{p}: larger than the limit of {size_text(limit)} for a {what}"
        if st.st_size <= limit
        else f"{p}: {st.st_size} bytes, larger than the limit of {size_text(limit)} for a {what}"
    )
    if st.st_size > limit:
        raise too_big
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        raise UsageError(f"{p}: {_why(p, e)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UsageError(f"{p}: {_kind(mode, what)}")
        parts: list[bytes] = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
    except OSError as e:
        raise UsageError(f"{p}: cannot read: {describe_os_error(e)}") from None
    finally:
        os.close(fd)
    if got > limit:
        raise too_big
    return b"".join(parts)


def decode_text(raw: bytes, p: str | Path, what: str = "file") -> str:
    """``raw`` as UTF-8 text, a leading byte-order mark dropped (spreadsheet
    programs and some editors write one); else :class:`UsageError` naming the
    first bad byte and its line."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UsageError(
            f"{p}: not UTF-8 text (byte 0x{raw[e.start]:02x} on line {line}); "
            f"save the {what} as UTF-8"
        ) from None


def read_input_text(
    path: str | Path, *, limit: int = MAX_TEXT_BYTES, what: str = "file"
) -> tuple[str, bytes]:
    """:func:`read_input`, decoded by :func:`decode_text`: (text, bytes)."""
    raw = read_input(path, limit=limit, what=what)
    return decode_text(raw, Path(path), what), raw
