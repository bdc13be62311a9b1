#!/usr/bin/env python3
"""Check the layering of libshield and the simulator (docs/architecture.md).

Fails, with one line per finding naming the files, when:

(a) libshield's code (libshield/include, libshield/src, libshield/port)
    includes a header of the simulator (sim/) or of the front end
    (python/); or a file of libshield/include or libshield/src includes
    anything but libshield's own headers and the C standard headers: the
    core sees a platform only through the port contract, rtshield/rts_port.h;
(b) two files of sim/src call each other both ways;
(c) a room of sim/src includes the private header of a room above it in
    ROOMS, or calls (or takes the address of) a function or object a room
    above it exports; or a file of sim/src is in no room.

A file's exports are its non-static functions and objects and, for a
header, the static inline functions it defines. Calls are found by a token
scan of the code without its comments and string literals: an identifier
another file exports, named outside the file that defines it (and not
shadowed by a static definition of the same name in the caller), is a use.
That is correct for this code base: no two files export the same name,
and no macro hides a call.

    tools/check_layers.py [--root DIR]     exit 0: clean, 1: findings
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# The rooms of sim/src, bottom first: a room may include the headers of the
# rooms below it and its own, and call what they export; nothing upward.
# A room is named after its files (a .c and its private .h share the stem).
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("compiler hints", ("sim_compiler",)),
    ("event heap", ("event_queue",)),
    ("traffic", ("traffic", "trace_source", "frame")),
    ("hooks into libshield", ("hooks",)),
    ("state", ("sim",)),
    ("measurements", ("measure",)),
    ("NICs", ("nic",)),
    ("RX interrupt handler", ("rx",)),
    ("interrupt controller", ("irq",)),
    ("scheduler", ("sched",)),
    ("configuration checks", ("config",)),
    ("event loop and public API", ("engine",)),
]

# What a file of libshield's core may include with angle brackets.
C_STANDARD_HEADERS = {
    "assert.h",
    "limits.h",
    "stdalign.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "string.h",
}
# rts_opts.h includes the user's option file through this macro.
CONFIG_MACRO = "RTS_CONFIG_FILE"

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"]+)"|<([^>]+)>|(\w+))', re.M)
IDENT_RE = re.compile(r"[A-Za-z_]\w*")


TOKENS_RE = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)


def strip_code(text: str, literals: bool = True) -> str:
    """The text without comments and (`literals`) string and character
    literals, which become empty ones; lines are kept."""

    def sub(m: re.Match[str]) -> str:
        t = m.group(0)
        if t.startswith("/*"):
            return "\n" * t.count("\n")
        if t.startswith("//"):
            return ""
        return t[0] * 2 if literals else t

    return TOKENS_RE.sub(sub, text)


def without_preprocessor(code: str) -> str:
    return re.sub(r"^[ \t]*#.*(?:\\\n.*)*", "", code, flags=re.M)


def top_level_statements(code: str):
    """(text before the first top-level '{' or ';', terminator) of each statement."""
    depth, start = 0, 0
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                yield code[start:i], "{"
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            yield code[start:i], ";"
            start = i + 1


def definitions(path: Path) -> tuple[set[str], set[str]]:
    """(exported names, static names) defined in a file of sim/src."""
    code = without_preprocessor(strip_code(path.read_text()))
    exported: set[str] = set()
    private: set[str] = set()
    header = path.suffix == ".h"
    for head, end in top_level_statements(code):
        words = IDENT_RE.findall(re.sub(r"\[[^\]]*\]", "", head.split("(", 1)[0].split("=", 1)[0]))
        if not words or words[0] in ("typedef", "_Static_assert"):
            continue
        if words[0] in ("struct", "enum", "union") and "=" not in head:
            if end == "{" or len(words) <= 2:
                continue  # a type's definition or declaration, not an object of it
        static = "static" in words
        if "=" in head and "(" not in head.split("=", 1)[0] and "extern" not in words:
            name = words[-1]  # an object with an initialiser (braced or not)
        elif end == "{" and head.rstrip().endswith(")") and "(" in head:
            name = IDENT_RE.findall(head.split("(", 1)[0])[-1]  # a function definition
        elif end == ";" and "(" not in head and "extern" not in words and not header:
            name = words[-1]  # an object without one
        else:
            continue
        if header or not static:
            exported.add(name)
        else:
            private.add(name)
    return exported, private


def resolve(inc: str, including: Path, roots: list[Path]) -> Path | None:
    for base in [including.parent, *roots]:
        p = base / inc
        if p.is_file():
            return p.resolve()
    return None


def check_libshield(root: Path) -> list[str]:
    """Rule (a)."""
    found = []
    lib = root / "libshield"
    sim, front = (root / "sim").resolve(), (root / "python").resolve()
    core_dirs = [(lib / "include").resolve(), (lib / "src").resolve()]
    ports = sorted(d for d in (lib / "port").rglob("*") if d.is_dir())
    roots = [
        lib / "include",
        lib / "src",
        *ports,
        root / "sim" / "include",
        root / "sim" / "src",
        root / "python" / "rtshield",
    ]
    for sub in ("include", "src", "port"):
        for f in sorted((lib / sub).rglob("*")):
            if f.suffix not in (".c", ".h") or not f.is_file():
                continue
            rel = f.relative_to(root)
            core = sub in ("include", "src")
            for m in INCLUDE_RE.finditer(strip_code(f.read_text(), literals=False)):
                quoted, angled, macro = m.groups()
                if macro:
                    if not (core and macro == CONFIG_MACRO):
                        found.append(f"{rel}: includes through macro {macro}")
                    continue
                inc = quoted or angled
                shown = f'"{inc}"' if quoted else f"<{inc}>"
                target = resolve(inc, f, roots)
                if inc.startswith("rtsim/") or (target is not None and target.is_relative_to(sim)):
                    found.append(f"{rel}: includes {shown}, a header of the simulator (sim/)")
                elif (
                    target is not None
                    and target.is_relative_to(front)
                    or inc.startswith("rtshield_cdef")
                ):
                    found.append(f"{rel}: includes {shown}, a header of the front end (python/)")
                elif not core:
                    continue
                elif angled:
                    if inc not in C_STANDARD_HEADERS:
                        found.append(
                            f"{rel}: includes {shown}: libshield's core uses the C standard "
                            "headers only, and the platform through rtshield/rts_port.h"
                        )
                elif target is None or not any(target.is_relative_to(d) for d in core_dirs):
                    where = "a port header" if target is not None else "a header outside libshield"
                    found.append(
                        f"{rel}: includes {shown}, {where}: libshield's core sees the "
                        "platform only through the port contract rtshield/rts_port.h"
                    )
    return found


def check_sim(root: Path) -> list[str]:
    """Rules (b) and (c)."""
    src = root / "sim" / "src"
    files = sorted(p for p in src.iterdir() if p.suffix in (".c", ".h"))
    room_of_stem = {stem: k for k, (_, stems) in enumerate(ROOMS) for stem in stems}
    found = [
        f"sim/src/{f.name}: in no room of tools/check_layers.py ROOMS (add it where it belongs)"
        for f in files
        if f.stem not in room_of_stem
    ]
    files = [f for f in files if f.stem in room_of_stem]
    exports: dict[str, Path] = {}
    private: dict[Path, set[str]] = {}
    for f in files:
        ex, pv = definitions(f)
        private[f] = pv
        for name in ex:
            exports[name] = f
    # Which names each file uses, and from which file.
    uses: dict[tuple[Path, Path], list[str]] = {}
    for f in files:
        code = without_preprocessor(strip_code(f.read_text()))
        for name in sorted(set(IDENT_RE.findall(code))):
            owner = exports.get(name)
            if owner is None or owner == f or name in private[f]:
                continue
            uses.setdefault((f, owner), []).append(name)
    # (b): by file, a .c and its header counting as one (they are one room's).
    by_stem: dict[tuple[str, str], list[str]] = {}
    for (a, b), names in uses.items():
        if a.stem != b.stem:
            by_stem.setdefault((a.stem, b.stem), []).extend(names)
    for (a, b), names in sorted(by_stem.items()):
        back = by_stem.get((b, a))
        if back and a < b:
            fa, fb = stem_file(src, a), stem_file(src, b)
            ua, ub = ", ".join(sorted(set(names))), ", ".join(sorted(set(back)))
            found.append(
                f"sim/src/{fa} and sim/src/{fb} call each other: {fa} uses {ua}; {fb} uses {ub}"
            )
    # (c): includes and uses go down the rooms, never up.
    for f in files:
        mine = room_of_stem[f.stem]
        for m in INCLUDE_RE.finditer(strip_code(f.read_text(), literals=False)):
            inc = m.group(1)
            if not inc or not (src / inc).is_file() or Path(inc).stem not in room_of_stem:
                continue
            theirs = room_of_stem[Path(inc).stem]
            if theirs > mine:
                found.append(
                    f"sim/src/{f.name} ({ROOMS[mine][0]}) includes {inc} of a room above it "
                    f"({ROOMS[theirs][0]})"
                )
    for (a, b), names in sorted(uses.items()):
        ra, rb = room_of_stem[a.stem], room_of_stem[b.stem]
        if rb > ra:
            found.append(
                f"sim/src/{a.name} ({ROOMS[ra][0]}) uses {', '.join(names)} of sim/src/{b.name}, "
                f"a room above it ({ROOMS[rb][0]})"
            )
    return found


def stem_file(src: Path, stem: str) -> str:
    return f"{stem}.c" if (src / f"{stem}.c").is_file() else f"{stem}.h"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository to check (default: this one)",
    )
    args = ap.parse_args(argv)
    root = args.root.resolve()
    if not (root / "sim" / "src").is_dir() or not (root / "libshield").is_dir():
        print(f"check_layers: {root} holds no sim/src and libshield/", file=sys.stderr)
        return 2
    found = check_libshield(root) + check_sim(root)
    for line in found:
        print(f"check_layers: {line}", file=sys.stderr)
    if found:
        return 1
    print(f"check_layers: libshield and the {len(ROOMS)} rooms of sim/src are layered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
