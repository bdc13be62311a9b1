"""One home per fact: python/rtshield restates no libshield or simulator fact.

libshield's and the simulator's limits, enum values and their order reach
Python through the binding (``rtshield._native``: the public headers run
through the preprocessor, docs/decisions/one-home-per-fact.md). This test
reads those facts from the binding and from ``rts_opts.h`` (whose macros the
binding does not see) and scans every module of the package for a copy:

* a literal collection (tuple, list, set, a dict's keys, or the first items of
  a tuple of pairs) of three or more
  names that are one C enum's names, all of them or all but one
  (``("tcp", "udp", "icmp", "arp", "raw")`` is ``rtsim_proto``): an enum's
  names or order restated. A few of an enum's names (the kinds a knob applies
  to) are the front end's own grouping and pass;
* a module- or class-level ``NAME = <integer>`` whose value is a C limit's and
  whose name shares a word with it (``MAX_FLOWS = 8`` and
  ``RTSIM_MAX_FLOWS``): a limit restated.

A table that is the front end's own fact but keyed by a C enum's names (the
analysis model of each mitigation kind, a detector's label) is listed in
:data:`KEYED_BY_ENUM` and must then cover exactly the enum's names, so it
cannot drift either. Formulas are not found by a scan; the review that moved
them into libshield is in the decision record.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rtshield._native import load

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "rtshield"
OPTS_H = ROOT / "libshield" / "include" / "rtshield" / "rts_opts.h"

#: Files the build generates from the headers (the binding itself).
GENERATED = {"_rtshield_ffi.py"}

#: Front-end tables keyed by a C enum's names: (file, name) -> (C enum, why the
#: table is the front end's). Each must hold exactly the enum's names.
KEYED_BY_ENUM: dict[tuple[str, str], tuple[str, str]] = {
    ("analysis/model.py", "ENGINE_KIND"): (
        "rtsim_mitigation_kind",
        "the analysis' source model of each simulated kind (analysis.model.ENGINE_KIND)",
    ),
    ("analysis/knobs.py", "_DEFAULT"): (
        "rtsim_mitigation_kind",
        "the knob `rtshield design` turns by default for each kind",
    ),
    ("schema/vocabulary.py", "MITIGATION_KINDS"): (
        "rtsim_mitigation_kind",
        "the scenario keys each kind accepts (the schema's vocabulary)",
    ),
    ("schema/docs.py", "MITIGATION_DOCS"): (
        "rtsim_mitigation_kind",
        "the schema's description of each kind (rtshield schema, docs/scenarios.md)",
    ),
    ("figures/run.py", "_DETECTOR_LABELS"): ("rtsim_detector", "a figure's legend text"),
    ("figures/run.py", "colors"): ("rtsim_detector", "a figure's line colours"),
    ("report.py", "_DETECTOR_WORDS"): ("rtsim_detector", "the report's table text"),
    ("studies/behnke_software.py", "PATHS"): (
        "rtsim_rx_path",
        "Behnke et al.'s Figure 10 label of each receive-path execution path",
    ),
}

#: Known restatements still to be replaced (none since the typed scenario
#: schema reads its limits and kinds through the binding). Keep it empty.
PENDING: set[tuple[str, str]] = set()

#: Words of a C name that say nothing about what it limits.
_GENERIC = {"RTS", "RTSIM", "MAX", "MIN", "DEFAULT", "NS", "COUNT", "OK", "NONE", "ALL"}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    name: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.name}: {self.what}"


def _enum_types() -> list[str]:
    ffi, _ = load()
    return [t for t in ffi.list_types()[0] if ffi.typeof(t).kind == "enum"]


def c_enums() -> dict[str, frozenset[str]]:
    """Every enum type of the binding: its names, common prefix stripped, lower case,
    without a ``…_COUNT`` terminator."""
    ffi, _ = load()
    out = {}
    for t in _enum_types():
        names = list(ffi.typeof(t).elements.values())
        prefix = names[0]
        for n in names[1:]:
            while not n.startswith(prefix):
                prefix = prefix[:-1]
        prefix = prefix[: prefix.rfind("_") + 1]
        out[t] = frozenset(n[len(prefix) :].lower() for n in names if not n.endswith("_COUNT"))
    return out


def c_constants() -> dict[str, int]:
    """The limits: the binding's constants that belong to no enum type (``RTSIM_MAX_FLOWS``,
    ``RTSIM_FRAME_MAX``…) and rts_opts.h's numeric macros (``RTS_POOL_MAX_BUFS``…).
    An enum type's values are its names' (checked by names); 0 and 1 say nothing."""
    ffi, lib = load()
    members = {n for t in _enum_types() for n in ffi.typeof(t).elements.values()}
    out = {n: int(getattr(lib, n)) for n in dir(lib) if n.isupper() and n not in members}
    text = OPTS_H.read_text(encoding="utf-8")
    for m in re.finditer(r"^#define\s+(RTS_\w+)\s+(\d+)u?(?:ll|l)?\s*$", text, re.M):
        out[m.group(1)] = int(m.group(2))
    return {n: v for n, v in out.items() if v not in (0, 1)}


def _words(name: str) -> set[str]:
    return {w.rstrip("S") for w in name.upper().split("_") if w and w not in _GENERIC}


def _strings(node: ast.AST) -> list[str] | None:
    """The string elements of a literal collection (a dict: its keys; a collection of
    tuples: their first elements), else None."""
    if isinstance(node, ast.Dict):
        elts = node.keys
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        elts = node.elts
        if elts and all(isinstance(e, ast.Tuple) and e.elts for e in elts):
            elts = [e.elts[0] for e in elts]
    else:
        return None
    vals = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return vals if len(vals) == len(elts) else None


def _value_strings(node: ast.AST) -> list[str]:
    """The string values of a literal dict (else of a tuple, list or set)."""
    elts = node.values if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    return [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def find_restatements(
    source: str,
    file: str,
    enums: dict[str, frozenset[str]],
    consts: dict[str, int],
    c_names: frozenset[str] = frozenset(),
) -> list[Finding]:
    """The restated enums and limits of one module's ``source`` (see the module doc);
    ``c_names``: every C constant's name, for tables of them."""
    tree = ast.parse(source)
    found: list[Finding] = []
    # the name a literal is assigned to (or the enclosing assignment's)
    owner: dict[int, str] = {}
    for node in ast.walk(tree):
        for name in _targets(node):
            for sub in ast.walk(node):
                owner.setdefault(id(sub), name)
    for node in ast.walk(tree):
        vals = _strings(node)
        if vals is None or len(set(vals)) < 3:
            continue
        for enum, names in sorted(enums.items()):
            # all of the enum's names, or all but one (a copy without its "none")
            if set(vals) <= names and len(set(vals)) >= len(names) - 1:
                name = owner.get(id(node), f"line {node.lineno}")
                found.append(Finding(file, node.lineno, name, f"names of the C enum {enum}"))
                break
    for node in ast.walk(tree):
        vals = _value_strings(node)
        if len(vals) >= 3 and set(vals) <= c_names:
            name = owner.get(id(node), f"line {node.lineno}")
            found.append(Finding(file, node.lineno, name, "a table of C constants' names"))
    # module- and class-level integer constants
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for body in bodies:
        for node in body:
            names = _targets(node)
            if not names or node.value is None:
                continue
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            for name in names:
                for cname, cval in sorted(consts.items()):
                    if cval == value and _words(name) & _words(cname):
                        found.append(Finding(file, node.lineno, name, f"{cname} = {cval}"))
                        break
    return found


def c_names() -> frozenset[str]:
    _, lib = load()
    return frozenset(n for n in dir(lib) if n.isupper())


@functools.cache
def package_findings() -> tuple[Finding, ...]:
    enums, consts, names = c_enums(), c_constants(), c_names()
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in GENERATED:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        out += find_restatements(path.read_text(encoding="utf-8"), rel, enums, consts, names)
    return tuple(out)


def test_the_scan_finds_restated_enums_and_limits():
    """The scan can fail: a module restating an enum, its order or a limit is caught."""
    enums, consts = c_enums(), c_constants()
    src = (
        "PROTOCOLS = ('tcp', 'udp', 'icmp', 'arp', 'raw')\n"
        "KINDS = {'edge': 0, 'dma_ring': 1, 'multiqueue': 2}\n"
        "PAIRS = (('late', 'a'), ('irq', 'b'), ('fill', 'c'))\n"
        "class Limits:\n"
        "    MAX_FLOWS = 8\n"
        f"POOL_BUFS = {consts['RTS_POOL_MAX_BUFS']}\n"
        "def f():\n"
        "    return [x for x in ('late', 'irq', 'fill')]\n"
        "FLOWS = 3\n"  # a number no C limit of that word has
        "WORDS = ('tcp', 'hello', 'udp')\n"  # not all of one enum
        "SOME = ('regular', 'recycle', 'rejected')\n"  # 3 of rtsim_rx_path's 5: a grouping
        "BITS = {'a': 'RTS_SHIELD_BURST', 'b': 'RTS_SHIELD_QUEUE', 'c': 'RTS_SHIELD_BUDGET'}\n"
    )
    found = find_restatements(src, "x.py", enums, consts, c_names())
    got = {(f.name, f.what.split(" = ")[0]) for f in found}
    assert ("BITS", "a table of C constants' names") in got
    assert ("PROTOCOLS", "names of the C enum rtsim_proto") in got
    assert ("KINDS", "names of the C enum rtsim_nic_kind") in got
    assert ("PAIRS", "names of the C enum rtsim_detector") in got
    assert ("MAX_FLOWS", "RTSIM_MAX_FLOWS") in got
    assert ("POOL_BUFS", "RTS_POOL_MAX_BUFS") in got
    # a literal that is assigned to no name is named by its line
    assert any(name.startswith("line ") for name, _ in got)
    assert not {n for n, _ in got} & {"FLOWS", "WORDS", "SOME"}


def test_no_libshield_fact_is_restated_in_python():
    allowed = set(KEYED_BY_ENUM) | PENDING
    new = [str(f) for f in package_findings() if (f.file, f.name) not in allowed]
    assert not new, (
        "restated in Python (read them through the binding, rtshield._native):\n  "
        + "\n  ".join(new)
    )


@pytest.mark.parametrize(("where", "enum"), [(k, v[0]) for k, v in KEYED_BY_ENUM.items()])
def test_front_end_tables_cover_their_enum(where, enum):
    """A front-end table keyed by an enum's names holds exactly those names."""
    file, name = where
    hits = [f for f in package_findings() if (f.file, f.name) == where]
    assert hits, f"{file} {name}: no longer keyed by {enum}; remove it from KEYED_BY_ENUM"
    names = c_enums()[enum]
    tree = ast.parse((PACKAGE / file).read_text(encoding="utf-8"))
    tables = [
        set(_strings(node.value) or ())
        for node in ast.walk(tree)
        if name in _targets(node) and _strings(node.value) is not None
    ]
    assert tables, f"{file} {name}: not a literal table"
    for keys in tables:
        assert keys == names, f"{file} {name}: {sorted(keys ^ names)} differ from {enum}"

