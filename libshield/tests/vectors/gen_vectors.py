#!/usr/bin/env python3
"""libshield's test vectors: read a TOML file of this folder, check it, and
write the C tables a unit test includes.

    gen_vectors.py INCLUDE_DIR VECTORS.toml OUT.h

INCLUDE_DIR is libshield/include: the names the vectors use (action flags,
enumerators) are checked against the enumerators its headers declare. The
format is described in README.md beside this file. Any mistake in a file
(unknown key, unknown name, wrong type, missing column) stops the generator
with one line naming the file, the table, the row and the key, and exit
status 2.

The Python binding's tests (tests/test_libshield_vectors.py) read the same
files through load(), so both consumers see the same checked vectors.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

# Column and configuration kinds.
INT = "int"  # a TOML integer
BOOL = "bool"  # true / false
TIME_OR_NEVER = "time_or_never"  # an integer, or "never" (UINT64_MAX)
ACTION = "action"  # a list of rts_action flags (RTS_ACT_*), or aliases from [flags]
EVENT = "event"  # one of the component's events
INT_LIST = "int_list"  # a list of integers


@dataclass(frozen=True)
class Enum:
    """A string naming an enumerator: `prefix` + the name in upper case."""

    prefix: str


@dataclass(frozen=True)
class Col:
    kind: object
    c_name: str | None = None  # the C field, when it differs from the key
    default: object = None  # None: required in every row


@dataclass(frozen=True)
class Component:
    """The shape of one component's vectors: the C types the test declares,
    the events its rows may name (TOML name -> the test's C enumerator), the
    configuration keys of a table and the columns of a row."""

    state: str
    row_type: str
    table_type: str
    events: dict[str, str] = field(default_factory=dict)
    config: dict[str, Col] = field(default_factory=dict)
    optional_config: tuple[str, ...] = ()  # absent: the library's default
    columns: dict[str, Col] = field(default_factory=dict)


def _action_columns(**counters: Col) -> dict[str, Col]:
    """The first columns of a limiter's row (RTS_ACTION_ROW), then `counters`."""
    return {"ev": Col(EVENT), "now": Col(INT), "action": Col(ACTION, "flags"),
            "timer_at": Col(INT), **counters}


COMPONENTS: dict[str, Component] = {
    "strict": Component(
        "rts_strict", "strict_row", "strict_table",
        events={"irq": "IRQ", "timer": "TIMER"},
        config={"t_min": Col(INT)},
        columns=_action_columns(admitted=Col(INT), expiries=Col(INT), port_errors=Col(INT)),
    ),
    "bursty": Component(
        "rts_bursty", "bursty_row", "bursty_table",
        events={"irq0": "IRQ0", "irq1": "IRQ1", "irq2": "IRQ2", "tick": "TICK"},
        config={"mode": Col(Enum("RTS_BURSTY_TIMER_")), "period": Col(INT), "t0": Col(INT),
                "burst": Col(INT_LIST)},
        columns=_action_columns(reenable=Col(INT), count0=Col(INT), disabled=Col(INT)),
    ),
    "countdown": Component(
        "rts_countdown", "countdown_row", "countdown_table",
        events={"arrival": "ARR", "zero": "ZERO", "configure": "CONF"},
        config={"tick_ns": Col(INT), "initial": Col(INT)},
        columns={"ev": Col(EVENT), "now": Col(INT), "tick_ns": Col(INT, default=0),
                 "initial": Col(INT, default=0), "action": Col(ACTION, "flags"),
                 "timer_at": Col(INT), "next": Col(TIME_OR_NEVER), "delivered": Col(INT),
                 "latches": Col(INT), "lost": Col(INT)},
    ),
    "burst_mit": Component(
        "rts_burst_mit", "burst_mit_row", "burst_mit_table",
        events={"rx": "EV_RX", "timer": "EV_TIMER"},
        config={"slice_ns": Col(INT), "capacity": Col(INT), "aligned": Col(BOOL)},
        columns=_action_columns(count_after=Col(INT), slice_start_after=Col(INT)),
    ),
    "budget_mit": Component(
        "rts_budget_mit", "budget_mit_row", "budget_mit_table",
        events={"report": "OP_REPORT", "packet": "OP_PACKET", "isr": "OP_ISR", "poll": "OP_POLL"},
        config={"initial_budget_ns": Col(INT), "charge_isr": Col(BOOL),
                "carry_overdraft": Col(BOOL)},
        optional_config=("initial_budget_ns", "charge_isr", "carry_overdraft"),
        columns={"op": Col(EVENT), "arg": Col(INT), "action": Col(ACTION, "flags"),
                 "budget": Col(INT), "suspended": Col(BOOL)},
    ),
    "nic_moderation": Component(
        "rts_nic_moderation", "nic_moderation_row", "nic_moderation_table",
        events={"rx": "RX", "tick": "TICK"},
        config={"size": Col(INT), "t_abs": Col(INT), "t_pack": Col(INT), "frames": Col(INT)},
        columns={"op": Col(EVENT), "t": Col(INT), "irq": Col(INT), "announced": Col(INT),
                 "next": Col(INT)},
    ),
    "flow_table": Component(
        "rts_flow_table", "flow_table_row", "flow_table_table",
        config={"setup_at": Col(INT), "capacity": Col(INT), "period_ns": Col(INT)},
        columns={"t": Col(INT), "admitted": Col(BOOL)},
    ),
    "detect": Component(
        "rts_detect_fill_wm", "detect_row", "detect_table",
        config={"high": Col(INT), "low": Col(INT)},
        columns={"fill": Col(INT), "change": Col(Enum("RTS_WM_")), "overload": Col(BOOL)},
    ),
}

# A C identifier: table names become parts of C names.
_IDENT = re.compile(r"[a-z][a-z0-9_]*\Z")
# A path into the component's state for `after`: field, field[i], a.b[i].c.
_PATH = re.compile(r"[a-z_][a-z0-9_]*(\[[0-9]+\])?(\.[a-z_][a-z0-9_]*(\[[0-9]+\])?)*\Z")
# An enumerator in a header: a line starting with RTS_NAME followed by = or ,
_ENUMERATOR = re.compile(r"^\s*(RTS_[A-Z0-9_]+)\s*(?:=|,|$)", re.MULTILINE)


class VectorError(Exception):
    """A mistake in a vectors file; the message is one line naming where."""


def enumerators(include_dir: Path) -> frozenset[str]:
    """The RTS_* enumerators declared in libshield's public headers."""
    names: set[str] = set()
    for header in sorted(include_dir.glob("rtshield/*.h")):
        names.update(_ENUMERATOR.findall(header.read_text()))
    return frozenset(names)


@dataclass
class Table:
    name: str
    case: str
    config: dict[str, object]
    after: dict[str, object]
    rows: list[dict[str, object]]


@dataclass
class Vectors:
    component: str
    spec: Component
    tables: list[Table]


def _where(path: Path, table: str | None = None, row: int | None = None,
           row_name: object = None) -> str:
    where = path.name
    if table is not None:
        where += f": table {table}"
    if row is not None:
        where += f", row {row}"
        if isinstance(row_name, str):
            where += f" ({row_name!r})"
    return where


def _value(kind: object, value: object, where: str, key: str, known: frozenset[str],
           spec: Component, aliases: dict[str, list[str]]) -> object:
    """`value` checked against `kind`, normalised: flags and enumerators as
    their full libshield names, events as the TOML name, "never" kept."""

    def bad(what: str) -> VectorError:
        return VectorError(f"{where}, key {key}: {what}")

    if kind == INT:
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad(f"expected an integer, got {value!r}")
        return value
    if kind == BOOL:
        if not isinstance(value, bool):
            raise bad(f"expected true or false, got {value!r}")
        return value
    if kind == TIME_OR_NEVER:
        if value == "never":
            return value
        return _value(INT, value, where, key, known, spec, aliases)
    if kind == INT_LIST:
        if not isinstance(value, list) or not value:
            raise bad(f"expected a list of integers, got {value!r}")
        return [_value(INT, v, where, key, known, spec, aliases) for v in value]
    if kind == EVENT:
        if value not in spec.events:
            raise bad(f"unknown event {value!r} (one of {', '.join(spec.events)})")
        return value
    if kind == ACTION:
        if not isinstance(value, list):
            raise bad(f"expected a list of action flags, got {value!r}")
        flags: list[str] = []
        for name in value:
            if not isinstance(name, str):
                raise bad(f"expected a flag name, got {name!r}")
            for flag in aliases.get(name, [name]):
                full = "RTS_ACT_" + flag.upper()
                if flag != flag.lower():
                    raise bad(f"action flag {flag!r}: write it in lower case")
                if full not in known:
                    raise bad(f"unknown action flag {flag!r} (no {full} in rts_types.h)")
                if full not in flags:
                    flags.append(full)
        return [f for f in flags if f != "RTS_ACT_NONE"]
    if isinstance(kind, Enum):
        full = kind.prefix + str(value).upper()
        if isinstance(value, str) and value != value.lower():
            raise bad(f"{value!r}: write it in lower case")
        if not isinstance(value, str) or full not in known:
            raise bad(f"unknown name {value!r} (no {full} in libshield's headers)")
        return full
    raise AssertionError(kind)


def load(path: Path, include_dir: Path) -> Vectors:
    """The vectors of `path` (a component's TOML file), checked."""
    component = path.stem
    if component not in COMPONENTS:
        raise VectorError(f"{path.name}: no component {component!r} "
                          f"(one of {', '.join(COMPONENTS)})")
    spec = COMPONENTS[component]
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise VectorError(f"{path.name}: {e}") from None
    known = enumerators(include_dir)
    for key in doc:
        if key not in ("flags", "table"):
            raise VectorError(f"{path.name}, key {key}: unknown key (flags, table)")
    aliases: dict[str, list[str]] = {}
    for alias, flags in doc.get("flags", {}).items():
        flags = _value(ACTION, flags, f"{path.name}: flags", alias, known, spec, {})
        aliases[alias] = [f.removeprefix("RTS_ACT_").lower() for f in flags] or ["none"]
    tables: list[Table] = []
    for raw in doc.get("table", []):
        name = raw.get("name")
        if not isinstance(name, str) or not _IDENT.match(name):
            raise VectorError(f"{_where(path, str(name))}, key name: "
                              "expected a lower-case C identifier")
        if name in (t.name for t in tables):
            raise VectorError(f"{_where(path, name)}, key name: a second table of that name")
        where = _where(path, name)
        config: dict[str, object] = {}
        for key, value in raw.items():
            if key in ("name", "case", "after", "rows"):
                continue
            if key not in spec.config:
                raise VectorError(f"{where}, key {key}: unknown key "
                                  f"(name, case, after, rows, {', '.join(spec.config)})")
            config[key] = _value(spec.config[key].kind, value, where, key, known, spec, aliases)
        for key in spec.config:
            if key not in config and key not in spec.optional_config:
                raise VectorError(f"{where}, key {key}: missing")
        case = raw.get("case", "")
        if not isinstance(case, str):
            raise VectorError(f"{where}, key case: expected a string")
        after = raw.get("after", {})
        if not isinstance(after, dict):
            raise VectorError(f"{where}, key after: expected a table of field = value")
        for key, value in after.items():
            if not _PATH.match(key):
                raise VectorError(f"{where}, key after.{key}: not a field of {spec.state}")
            if not isinstance(value, int):
                raise VectorError(f"{where}, key after.{key}: expected an integer or a bool")
        rows_in = raw.get("rows")
        if not isinstance(rows_in, list) or not rows_in:
            raise VectorError(f"{where}, key rows: expected a list of rows")
        rows: list[dict[str, object]] = []
        for i, row_in in enumerate(rows_in, 1):
            row_name = row_in.get("name") if isinstance(row_in, dict) else None
            rwhere = _where(path, name, i, row_name)
            if not isinstance(row_in, dict):
                raise VectorError(f"{rwhere}: expected an inline table")
            if not isinstance(row_name, str):
                raise VectorError(f"{rwhere}, key name: expected a string")
            row: dict[str, object] = {"name": row_name}
            for key, value in row_in.items():
                if key == "name":
                    continue
                if key not in spec.columns:
                    raise VectorError(f"{rwhere}, key {key}: unknown key "
                                      f"(name, {', '.join(spec.columns)})")
                row[key] = _value(spec.columns[key].kind, value, rwhere, key, known, spec, aliases)
            for key, col in spec.columns.items():
                if key not in row:
                    if col.default is None:
                        raise VectorError(f"{rwhere}, key {key}: missing")
                    row[key] = col.default
            rows.append(row)
        tables.append(Table(name, case, config, after, rows))
    if not tables:
        raise VectorError(f"{path.name}: no [[table]]")
    return Vectors(component, spec, tables)


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _c_value(kind: object, value: object) -> str:
    if kind == BOOL:
        return "true" if value else "false"
    if kind == TIME_OR_NEVER and value == "never":
        return "UINT64_MAX"
    if kind == ACTION:
        return " | ".join(value) or "RTS_ACT_NONE"
    if kind == INT_LIST:
        return "{" + ", ".join(str(v) for v in value) + "}"
    if kind == INT:
        return f"INT64_C({value})" if not -2**31 <= value < 2**31 else str(value)
    return str(value)


def c_header(v: Vectors, source: str) -> str:
    """The C tables of `v`: for each table `vec_<component>_<name>` of the
    test's table type, its rows `..._rows[]` and, when it says what the state
    holds after the last row, `..._after()` with one CHECK_EQ a field."""
    spec = v.spec
    out = [f"/* Generated by libshield/tests/vectors/gen_vectors.py from {source}: do not edit.",
           f" * Included by test_{v.component}.c after its {spec.row_type} and",
           f" * {spec.table_type}. */", ""]
    for t in v.tables:
        base = f"vec_{v.component}_{t.name}"
        out.append(f"static const {spec.row_type} {base}_rows[] = {{")
        for row in t.rows:
            fields = [f".name = {_c_string(row['name'])}"]
            for key, col in spec.columns.items():
                value = row[key]
                text = spec.events[value] if col.kind == EVENT else _c_value(col.kind, value)
                fields.append(f".{col.c_name or key} = {text}")
            out.append("    {" + ", ".join(fields) + "},")
        out.append("};")
        if t.after:
            out.append(f"static void {base}_after(const {spec.state} *s)")
            out.append("{")
            for key, value in t.after.items():
                out.append(f"    CHECK_EQ(s->{key}, {_c_value(INT, int(value))});")
            out.append("}")
        fields = [f".name = {_c_string(t.name)}", f".case_name = {_c_string(t.case)}"]
        for key, col in spec.config.items():
            if key in t.config:
                fields.append(f".{col.c_name or key} = {_c_value(col.kind, t.config[key])}")
                if key in spec.optional_config:
                    fields.append(f".has_{key} = true")
        fields += [f".rows = {base}_rows", f".n = RTS_COUNT({base}_rows)",
                   f".after = {base + '_after' if t.after else 'NULL'}"]
        out.append(f"static const {spec.table_type} {base} = {{")
        out += [f"    {f}," for f in fields]
        out.append("};")
        out.append("")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: gen_vectors.py INCLUDE_DIR VECTORS.toml OUT.h", file=sys.stderr)
        return 2
    include_dir, source, out = Path(argv[1]), Path(argv[2]), Path(argv[3])
    try:
        v = load(source, include_dir)
    except VectorError as e:
        print(f"gen_vectors: {e}", file=sys.stderr)
        return 2
    out.write_text(c_header(v, source.name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
