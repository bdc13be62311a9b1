"""A sweep's grid: the axes of ``--set KEY=v1,v2,…``, their Cartesian product,
each point's scenario and the hash its results are kept under."""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rtshield._version import __version__
from rtshield.errors import UsageError
from rtshield.scenario import parse_overrides, parse_scenario

__all__ = [
    "LIST_SECTIONS",
    "MAX_POINTS",
    "Axis",
    "check_key",
    "expand",
    "point_label",
    "point_scenario",
    "scenario_hash",
    "split_values",
]

#: Sections whose entries are a list of named tables: ``SECTION.NAME.KEY``.
LIST_SECTIONS = ("flows", "tasks", "sources")

#: The most points a sweep's grid may have (the product of its axes' lengths),
#: counted before any point is built.
MAX_POINTS = 1024

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


def expand(
    sets: Sequence[str], option: str = "--set", max_points: int = MAX_POINTS
) -> tuple[list[Axis], list[dict[str, str]]]:
    """``["driver.queue=100,500", "mitigation.kind=queue"]`` → axes and grid points.

    Returns ``(axes, points)``: the axes with more than one value, and each
    point as ``{SECTION.KEY: value}`` over *all* keys (fixed ones included).
    The grid is counted first (the product of the axes' lengths, in exact
    integer arithmetic): more than ``max_points`` points is a
    :class:`UsageError` before any point is built.
    """
    keys: list[str] = []
    values: list[list[str]] = []
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            check_key("", item, option)
        check_key(key, item, option)
        if key in keys:
            raise UsageError(f"{option}: {key} is given twice; list all its values in one --set")
        keys.append(key)
        values.append(split_values(raw, option))
    axes = [Axis(k, tuple(v)) for k, v in zip(keys, values, strict=True) if len(v) > 1]
    if not axes:
        raise UsageError(
            f"{option}: nothing to sweep; give at least one setting two or more "
            "values, e.g. --set driver.queue=100,500,750"
        )
    count = math.prod(len(v) for v in values)
    if count > max_points:
        raise UsageError(
            f"{option}: the grid has {count} points "
            f"({' × '.join(str(len(a.values)) for a in axes)}); at most {max_points} "
            "(sweep fewer values, or split the sweep)"
        )
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]
    return axes, points


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
