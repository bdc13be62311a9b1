"""Reading a user's TOML file (scenario or SYSTEM.toml) with one-line errors.

Both loaders go through :func:`read_toml`, so a missing file, a directory, an
unreadable file, a file that is not UTF-8 text and invalid TOML get the same
message in ``run``, ``compare``, ``sweep``, ``analyze`` and ``design``: the
path first, then what is wrong.

Hostile input is refused the same way, quickly, before it costs memory or
time (docs/scenarios.md, "The file itself"):

* anything but a regular file — a FIFO (never opened: it would block), a
  device such as ``/dev/zero``, a socket, a directory, a symbolic link loop —
  and a file larger than :data:`MAX_FILE_BYTES` (1 MiB), by the input door
  (:mod:`rtshield.inputs`) before anything is read;
* nesting (arrays and tables inside each other) deeper than
  :data:`MAX_DEPTH` levels, and integers beyond 64 bits, which the TOML
  reader would otherwise turn into a recursion or conversion error
  (integers of more than :data:`MAX_INT_DIGITS` decimal digits, or beyond
  128 bits).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rtshield.errors import UsageError
from rtshield.inputs import MAX_TEXT_BYTES, read_input_text, size_text

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INT_DIGITS",
    "check_document",
    "parse_toml",
    "parse_toml_value",
    "read_text",
    "read_toml",
    "read_toml_text",
]

#: The largest input file read (scenario or system description): 1 MiB, far
#: above any real one (the shipped ones are a few KiB); the input door's limit.
MAX_FILE_BYTES = MAX_TEXT_BYTES
#: The deepest nesting of arrays and tables accepted (a scenario needs 3).
MAX_DEPTH = 32
#: Integers are read only up to 64 bits: longer digit strings are refused
#: before the TOML reader converts them.
MAX_INT_DIGITS = 20


def read_text(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> tuple[str, bytes]:
    """The UTF-8 text of the regular file ``path`` (and its bytes), through the
    one input door (:func:`rtshield.inputs.read_input_text`): a missing,
    unreadable, non-regular, oversized or non-UTF-8 file is one
    :class:`UsageError` line naming the path and the true reason; a leading
    byte-order mark is dropped."""
    return read_input_text(path, limit=limit, what="TOML file")


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read and parse ``path``; raises :class:`UsageError` naming the path."""
    return read_toml_text(path)[0]


def read_toml_text(path: str | Path) -> tuple[dict[str, Any], str]:
    """Read and parse ``path``: the document and the text it was parsed from."""
    text, _ = read_text(path)
    return parse_toml(text, str(Path(path))), text


#: A run of more than :data:`MAX_INT_DIGITS` digits (underscores between them
#: included), anywhere: where there is none, :func:`_long_integer` need not scan.
_DIGIT_RUN = re.compile(r"[0-9][0-9_]{" + str(MAX_INT_DIGITS) + ",}")


#: What the long-integer scan steps over, the first that matches at each place:
#: a comment, a string (multi-line ones first; in a basic string a backslash
#: escapes the next character; a one-line string left open ends at its line,
#: where the parser reports it), or a run of ASCII digits with underscores.
_SCAN = re.compile(
    r"(?P<comment>#[^\n]*)"
    r'|(?P<mlbasic>"""(?:\\.|[^\\])*?(?:"""|\\?\Z))'
    r"|(?P<mlliteral>'''.*?(?:'''|\Z))"
    r'|(?P<basic>"(?:\\[^\n]|[^\\"\n])*(?:"|\\?(?=\n)|\\?\Z))'
    r"|(?P<literal>'[^'\n]*(?:'|(?=\n)|\Z))"
    r"|(?P<digits>[0-9][0-9_]*)",
    re.DOTALL,
)


def _long_integer(text: str) -> tuple[int, int] | None:
    """(line, column) of the first run of more than :data:`MAX_INT_DIGITS` digits
    (underscores between them included) outside a string or comment, or ``None``.

    A cheap linear scan (one regular expression, :data:`_SCAN`, no loop over
    characters in Python), so that the TOML reader never converts an integer
    of thousands of digits (Python refuses those with a ValueError, and a long
    one costs quadratic time). Runs inside strings are skipped; a float with a
    long mantissa or a date are not integers but are refused just the same (no
    value of a scenario or system file needs 21 digits).
    """
    if _DIGIT_RUN.search(text) is None:  # no long run anywhere, strings included
        return None
    for m in _SCAN.finditer(text):
        if m.lastgroup == "digits" and len(m.group().rstrip("_")) > MAX_INT_DIGITS:
            at = m.start()
            return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
    return None


def check_document(doc: Any, origin: str, *, depth_limit: int = MAX_DEPTH) -> None:
    """Refuse nesting deeper than ``depth_limit`` (iteratively: no recursion) and
    integers beyond 128 bits (a hexadecimal one is not caught by the digit scan);
    each key then checks its own range, with a message naming it."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, int) and not isinstance(v, bool) and not -(2**127) <= v < 2**128:
            raise UsageError(
                f"{origin}: an integer beyond 128 bits (no key takes one; most are 64-bit)"
            )
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if depth > depth_limit:
            raise UsageError(
                f"{origin}: arrays and tables nested more than {depth_limit} levels deep"
            )
        stack.extend((c, depth + 1) for c in children)


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    """Parse TOML ``text``; ``origin`` names it in the error message."""
    if len(text) > MAX_FILE_BYTES:
        raise UsageError(f"{origin}: larger than the limit of {size_text(MAX_FILE_BYTES)}")
    where = _long_integer(text)
    if where is not None:
        raise UsageError(
            f"{origin}: a number of more than {MAX_INT_DIGITS} digits (line {where[0]}); "
            "integers are at most 64 bits"
        )
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{origin}: not valid TOML: {' '.join(str(e).split())}") from None
    except RecursionError:
        raise UsageError(
            f"{origin}: arrays and tables nested more than {MAX_DEPTH} levels deep"
        ) from None
    except (ValueError, MemoryError, OverflowError) as e:
        raise UsageError(f"{origin}: not valid TOML: {' '.join(str(e).split())[:200]}") from None
    check_document(doc, origin)
    return doc


def parse_toml_value(raw: str, origin: str) -> Any:
    """One TOML value (``750``, ``"10ms"``, ``[1, 2]``), or ``raw`` itself if it is
    not valid TOML; hostile values (deep nesting, huge integers) are refused."""
    raw = raw.strip()
    if len(raw) > 4096:
        raise UsageError(f"{origin}: a value of {len(raw)} characters; at most 4096")
    if _long_integer(raw) is not None:
        raise UsageError(
            f"{origin}: a number of more than {MAX_INT_DIGITS} digits; integers are at most 64 bits"
        )
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    except (RecursionError, ValueError, MemoryError, OverflowError):
        raise UsageError(f"{origin}: cannot read {raw[:40]!r}… as a value") from None
    check_document(value, origin, depth_limit=8)
    return value
