"""Reading a user's TOML file (scenario or SYSTEM.toml) with one-line errors.

Both loaders go through :func:`read_toml`, so a missing file, a directory, an
unreadable file, a file that is not UTF-8 text and invalid TOML get the same
message in ``run``, ``compare``, ``sweep``, ``analyze`` and ``design``: the
path first, then what is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rtshield.errors import UsageError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["parse_toml", "read_toml"]


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read and parse ``path``; raises :class:`UsageError` naming the path."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{p}: is a directory, expected a .toml file") from None
    except OSError as e:
        raise UsageError(f"{p}: cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UsageError(
            f"{p}: not UTF-8 text (byte 0x{raw[e.start]:02x} on line {line}); "
            "TOML files must be saved as UTF-8"
        ) from None
    return parse_toml(text, str(p))


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    """Parse TOML ``text``; ``origin`` names it in the error message."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{origin}: not valid TOML: {e}") from None
