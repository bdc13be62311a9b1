"""A sweep's grid: the axes of ``--set KEY=v1,v2,…``, their Cartesian product,
each point's scenario and the hash its results are kept under."""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rtshield._version import __version__
from rtshield.errors import UsageError
from rtshield.scenario import parse_overrides, parse_scenario
from rtshield.sweep.limits import MAX_POINTS

__all__ = [
    "LIST_SECTIONS",
    "Axis",
    "Grid",
    "check_key",
    "expand",
    "make_grid",
    "point_label",
    "point_scenario",
    "scenario_hash",
    "split_values",
]

#: Sections whose entries are a list of named tables: ``SECTION.NAME.KEY``.
LIST_SECTIONS = ("flows", "tasks", "sources")


@dataclass(frozen=True)
class Axis:
    """One swept setting: ``key`` is ``SECTION.KEY`` or ``SECTION.NAME.KEY``; ``values`` as
    written."""

    key: str
    values: tuple[str, ...]

    @property
    def short(self) -> str:
        """The key without its section: ``queue``, ``syn.peak``."""
        return self.key.split(".", 1)[1]


def check_key(key: str, item: str, option: str) -> None:
    parts = key.split(".")
    ok = all(parts) and (
        len(parts) == 2
        and parts[0] not in LIST_SECTIONS
        or len(parts) == 3
        and parts[0] in LIST_SECTIONS
    )
    if not ok:
        raise UsageError(
            f"{option}: expected SECTION.KEY=v1,v2,… such as driver.queue=100,500,750, "
            f"or SECTION.NAME.KEY=… for an entry of [[{']], [['.join(LIST_SECTIONS)}]] "
            f"such as flows.syn.peak=50000pps,150000pps, got {item!r}"
        )


def split_values(raw: str, option: str = "--set") -> list[str]:
    """Split ``"100,500,[1, 2]"`` at top-level commas (not inside ``[]``, ``{}`` or quotes)."""
    out: list[str] = []
    depth, quote, cur = 0, "", []
    for ch in raw:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    out.append("".join(cur).strip())
    if quote or depth != 0:
        raise UsageError(f"{option}: unbalanced brackets or quotes in {raw!r}")
    if any(v == "" for v in out):
        raise UsageError(f"{option}: empty value in {raw!r} (write v1,v2,… with no empty item)")
    return out


@dataclass(frozen=True)
class Grid:
    """A sweep's points, made one at a time: the product of ``values`` (one
    tuple per key of ``keys``, fixed keys with one value), the last key varying
    fastest. ``axes`` are the keys with more than one value. Its length is the
    product of the value counts; nothing is built until the points are read,
    and point ``i`` is found without the ones before it."""

    keys: tuple[str, ...]
    values: tuple[tuple[str, ...], ...]

    @property
    def axes(self) -> list[Axis]:
        return [Axis(k, v) for k, v in zip(self.keys, self.values, strict=True) if len(v) > 1]

    def __len__(self) -> int:
        return math.prod(len(v) for v in self.values)

    def __iter__(self) -> Iterator[dict[str, str]]:
        for combo in itertools.product(*self.values):
            yield dict(zip(self.keys, combo, strict=True))

    def __getitem__(self, i: int) -> dict[str, str]:
        if not 0 <= i < len(self):
            raise IndexError(i)
        combo = []
        for vals in reversed(self.values):
            i, j = divmod(i, len(vals))
            combo.append(vals[j])
        return dict(zip(self.keys, reversed(combo), strict=True))


def make_grid(
    sets: Sequence[str], option: str = "--set", max_points: int = MAX_POINTS
) -> Grid:
    """``["driver.queue=100,500", "mitigation.kind=queue"]`` → the :class:`Grid`.

    The grid is counted (the product of the axes' lengths, in exact integer
    arithmetic), never built: more than ``max_points`` points is a
    :class:`UsageError`.
    """
    keys: list[str] = []
    values: list[tuple[str, ...]] = []
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            check_key("", item, option)
        check_key(key, item, option)
        if key in keys:
            raise UsageError(f"{option}: {key} is given twice; list all its values in one --set")
        keys.append(key)
        values.append(tuple(split_values(raw, option)))
    g = Grid(tuple(keys), tuple(values))
    if not g.axes:
        raise UsageError(
            f"{option}: nothing to sweep; give at least one setting two or more "
            "values, e.g. --set driver.queue=100,500,750"
        )
    count = len(g)
    if count > max_points:
        raise UsageError(
            f"{option}: the grid has {count} points "
            f"({' × '.join(str(len(a.values)) for a in g.axes)}); at most {max_points} "
            "(sweep fewer values, or split the sweep)"
        )
    return g


def expand(
    sets: Sequence[str], option: str = "--set", max_points: int = MAX_POINTS
) -> tuple[list[Axis], list[dict[str, str]]]:
    """``["driver.queue=100,500", "mitigation.kind=queue"]`` → axes and grid points.

    Returns ``(axes, points)``: the axes with more than one value, and each
    point as ``{SECTION.KEY: value}`` over *all* keys (fixed ones included);
    :func:`make_grid` makes the points one at a time instead (and counts them,
    before any is built, against ``max_points``).
    """
    g = make_grid(sets, option, max_points)
    return g.axes, list(g)


def point_label(point: Mapping[str, str], axes: Sequence[Axis]) -> str:
    """``queue=500,capacity=600``: the swept values of one point, by short key."""
    return ",".join(f"{a.short}={point[a.key]}" for a in axes)


def _value(key: str, raw: str, option: str) -> Any:
    """``raw`` read as a TOML value, as ``--set`` reads it everywhere."""
    return parse_overrides([f"x.v={raw}"], f"{option}: {key}")["x"]["v"]


def point_scenario(
    data: Mapping[str, Any],
    text: str,
    origin: str,
    point: Mapping[str, str],
    option: str = "--set",
):
    """The validated :class:`~rtshield.scenario.Scenario` of one grid point.

    ``SECTION.KEY`` values are ``--set`` overrides (errors name ``--set``);
    ``SECTION.NAME.KEY`` values replace the key of the entry of
    ``[[SECTION]]`` whose ``name`` is NAME.
    """
    doc = dict(data)
    plain = []
    for key, raw in point.items():
        section, _, rest = key.partition(".")
        if section not in LIST_SECTIONS:
            plain.append(f"{key}={raw}")
            continue
        name, _, field_ = rest.partition(".")
        entries = doc.get(section)
        if not isinstance(entries, list):
            raise UsageError(f"{option}: {key}: {origin} has no [[{section}]] entries")
        names = [e.get("name") for e in entries if isinstance(e, Mapping)]
        if name not in names:
            raise UsageError(
                f"{option}: {key}: no [[{section}]] entry named {name!r} in {origin} "
                f"(there are: {', '.join(str(n) for n in names) or 'none'})"
            )
        if field_ == "name":
            raise UsageError(f"{option}: {key}: an entry's name cannot be swept")
        if entries is data.get(section):  # copy once, before the first change
            entries = doc[section] = copy.deepcopy(entries)
        entries[names.index(name)][field_] = _value(key, raw, option)
    return parse_scenario(
        doc, origin, overrides=parse_overrides(plain, option), text=text, overrides_origin=option
    )


def scenario_hash(scenario: Any) -> str:
    """SHA-256 of everything that decides a point's results: the validated
    scenario (every value after overrides and preset defaults) and the
    rtshield version."""
    return hashlib.sha256(f"rtshield {__version__}\n{scenario!r}".encode()).hexdigest()
