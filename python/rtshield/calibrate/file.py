"""The calibration file (``docs/calibrate.md``): its unknown parameters, each
with physical bounds and a unit, its objective (a study's claims or a board's
counters), and the scenarios one point of the parameters makes."""

from __future__ import annotations

import copy
import csv
import dataclasses
import functools
import hashlib
import importlib
import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtshield import studies
from rtshield.calibrate.limits import MAX_BUDGET
from rtshield.engine_config import COST_KEYS, OPTIONAL_COST_KEYS
from rtshield.errors import UsageError
from rtshield.inputs import input_folder, read_input_text, resolve_input
from rtshield.scenario import CostTable, parse_scenario
from rtshield.tomlfile import read_toml_text
from rtshield.units import duration_ns, format_ns, rate_hz

__all__ = [
    "COUNTER_COLUMNS",
    "FLOW_KEYS",
    "MAX_BUDGET",
    "Calibration",
    "Param",
    "load_calibration",
    "read_counters",
    "scenarios",
    "study_module",
]

#: Per-second counters a board's CSV may carry (besides ``t_s``, the start of
#: each second): the simulated time-series column of the same name.
COUNTER_COLUMNS: dict[str, str] = {
    "offered": "packets sent to the device",
    "received": "packets received (RX interrupts that took a packet)",
    "isr_runs": "RX interrupts executed on the device core",
    "processed": "packets the driver finished",
    "cycles": "critical task cycles completed",
    "misses": "critical task deadlines missed (in the second the deadline passed)",
    "lateness_pct": "lateness accrued in the second by late critical cycles, % of the period",
}

_DURATION_UNITS = ("ns", "us", "µs", "ms", "s")
_PLATFORM_KEYS = {
    "tick_isr": "duration",
    "tick": "duration",
    "tick_real": "duration",
    "time_slicing": "choice",
}
FLOW_KEYS = {"peak": "pyramid", "rate": "constant"}
_SCENARIO_SECTIONS = ("scenario", "critical", "driver", "nic", "mitigation")


@dataclass(frozen=True)
class Param:
    """One unknown: ``key`` is ``SECTION.KEY``; numeric ones in base units (ns, pps or plain)."""

    key: str
    kind: str  #: "duration" (ns), "rate" (pps), "number", "integer" or "choice"
    low: float = 0.0
    high: float = 0.0
    values: tuple[Any, ...] = ()  #: choice
    start: Any = None  #: the value in use today (evaluated first), or None
    note: str = ""

    @property
    def numeric(self) -> bool:
        return self.kind != "choice"

    def at(self, u: float) -> Any:
        """The value at fraction ``u`` ∈ [0, 1] of the range (of the choices)."""
        if not self.numeric:
            return self.values[min(len(self.values) - 1, int(u * len(self.values)))]
        return self.snap(self.low + u * (self.high - self.low))

    def snap(self, v: float) -> Any:
        v = min(self.high, max(self.low, v))
        if self.kind in ("duration", "rate"):  # three significant digits, whole ns or pps
            return int(round(float(f"{v:.3g}")))
        if self.kind == "integer":
            return int(round(v))
        return float(f"{v:.6g}")

    def text(self, v: Any) -> str:
        """The value as a scenario file writes it (``"7.25us"``, ``"60000pps"``)."""
        if self.kind == "duration":
            return format_ns(v)
        if self.kind == "rate":
            return f"{int(v)}pps"
        if self.kind == "choice":
            return str(v).lower() if isinstance(v, bool) else str(v)
        return f"{v:g}" if self.kind == "number" else str(int(v))

    def toml(self, v: Any) -> str:
        if self.kind in ("duration", "rate"):
            return f'"{self.text(v)}"'
        if isinstance(v, str):
            return f'"{v}"'
        return self.text(v)


@dataclass(frozen=True)
class Calibration:
    """A validated calibration file."""

    path: str
    name: str
    params: tuple[Param, ...]
    objective: str  #: "claims" or "counters"
    #: ``[(run name, scenario file, overrides)]`` — every run a point needs.
    runs: tuple[tuple[str, str, Mapping[str, Any]], ...]
    study: str = ""  #: claims: the module under rtshield.studies
    claims: tuple[str, ...] = ()  #: claims: the keys counted (all of the study's by default)
    duration: str | None = None  #: every run shortened to this duration
    budget: int = 120
    seed: int = 1
    counters: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  #: column → values
    counters_t: tuple[float, ...] = ()
    description: str = ""
    #: SHA-256 of the calibration file's text (what a resumed calibration checks)
    sha256: str = ""


# --------------------------------------------------------------------- the file


def _err(path: str, where: str, msg: str) -> UsageError:
    return UsageError(f"{path}: {where}: {msg}")


def _known_keys(path: str, table: Mapping, where: str, allowed: Sequence[str]) -> None:
    """Every key of ``table`` is one of ``allowed`` (listed in that order in the error)."""
    for k in table:
        if k not in allowed:
            raise _err(path, f"{where} {k}", f"unknown key (allowed: {', '.join(allowed)})")


def _quantity(path: str, where: str, raw: Any, kind: str | None) -> tuple[str, float]:
    """``"7us"`` → ("duration", 7000.0); ``"60000pps"`` → ("rate", 6e4); 5 → ("number", 5.0)."""
    if isinstance(raw, bool):
        raise _err(path, where, f"expected a number or a quantity with a unit, got {raw!r}")
    if isinstance(raw, int | float):
        if not math.isfinite(float(raw)):
            raise _err(path, where, f"must be finite, got {raw!r}")
        return ("integer" if isinstance(raw, int) else "number"), float(raw)
    if not isinstance(raw, str):
        raise _err(path, where, f"expected a number or a quantity with a unit, got {raw!r}")
    if kind == "rate" or re.search(r"(hz|pps|pkt/s|/s)\s*$", raw, re.IGNORECASE):
        return "rate", rate_hz(raw, f"{path}: {where}")
    return "duration", float(duration_ns(raw, f"{path}: {where}"))


def _param(path: str, i: int, t: Any) -> Param:
    where = f"[[parameter]] #{i + 1}"
    if not isinstance(t, Mapping):
        raise _err(path, where, "must be a table")
    _known_keys(path, t, where, sorted({"key", "low", "high", "values", "start", "note"}))
    key = t.get("key")
    if not isinstance(key, str) or key.count(".") != 1 or not all(key.split(".")):
        raise _err(
            path, f"{where} key", f"expected SECTION.KEY such as costs.isr_per_packet, got {key!r}"
        )
    where = f"[[parameter]] {key}"
    section, name = key.split(".")
    note = t.get("note", "")
    if not isinstance(note, str):
        raise _err(path, f"{where} note", "must be a string")
    if "values" in t:
        vals = t["values"]
        if "low" in t or "high" in t:
            raise _err(path, where, "give either values = [...] or low and high, not both")
        if not isinstance(vals, list) or len(vals) < 2 or len(vals) > 64:
            raise _err(path, f"{where} values", "expected a list of 2 to 64 choices")
        if any(not isinstance(v, bool | int | float | str) for v in vals) or len(
            set(map(repr, vals))
        ) != len(vals):
            raise _err(
                path, f"{where} values", "choices must be distinct numbers, strings or booleans"
            )
        start = t.get("start")
        if start is not None and start not in vals:
            raise _err(path, f"{where} start", f"{start!r} is not one of the values")
        p = Param(key, "choice", values=tuple(vals), start=start, note=note)
    else:
        if "low" not in t or "high" not in t:
            raise _err(path, where, "needs low and high (its physical bounds) or values = [...]")
        forced = (
            "rate"
            if (section == "flows")
            else ("duration" if section in ("costs", "platform") else None)
        )
        k1, lo = _quantity(path, f"{where} low", t["low"], forced)
        k2, hi = _quantity(path, f"{where} high", t["high"], forced)
        if {k1, k2} <= {"integer", "number"}:
            kind = "integer" if k1 == k2 == "integer" else "number"
        elif k1 != k2:
            raise _err(
                path,
                where,
                f"low and high must be in the same kind of unit ({t['low']!r}, {t['high']!r})",
            )
        else:
            kind = k1
        if not lo < hi:
            raise _err(path, where, f"low must be below high, got {t['low']!r} and {t['high']!r}")
        start = None
        if "start" in t:
            k3, sv = _quantity(
                path, f"{where} start", t["start"], forced if kind != "number" else None
            )
            if (k3 in ("integer", "number")) != (kind in ("integer", "number")) or (
                kind in ("duration", "rate") and k3 != kind
            ):
                raise _err(
                    path,
                    f"{where} start",
                    f"must be in the unit of low and high, got {t['start']!r}",
                )
            if not lo <= sv <= hi:
                raise _err(path, f"{where} start", f"{t['start']!r} is outside [low, high]")
            start = sv
        p = Param(key, kind, lo, hi, start=start, note=note)
        if start is not None:
            p = dataclasses.replace(p, start=p.snap(start))
    # Where the key applies.
    if section == "costs":

        if name not in COST_KEYS and name not in OPTIONAL_COST_KEYS:
            known = ", ".join(list(COST_KEYS) + list(OPTIONAL_COST_KEYS))
            raise _err(path, where, f"unknown cost (known: {known})")
        if p.kind != "duration":
            raise _err(path, where, 'a cost is a duration: write low and high like "2us"')
    elif section == "platform":
        if name not in _PLATFORM_KEYS:
            raise _err(
                path, where, f"cannot be calibrated (platform keys: {', '.join(_PLATFORM_KEYS)})"
            )
        want = _PLATFORM_KEYS[name]
        if want == "choice" and (
            p.kind != "choice" or any(not isinstance(v, bool) for v in p.values)
        ):
            raise _err(path, where, "is true or false: write values = [true, false]")
        if want == "duration" and p.kind != "duration":
            raise _err(path, where, 'is a duration: write low and high like "3us"')
    elif section == "flows":
        if name not in FLOW_KEYS:
            raise _err(path, where, f"cannot be calibrated (flow keys: {', '.join(FLOW_KEYS)})")
        if p.kind != "rate":
            raise _err(path, where, 'is a rate: write low and high like "40000pps"')
    elif section not in _SCENARIO_SECTIONS:
        allowed_s = ", ".join(("costs", "platform", "flows") + _SCENARIO_SECTIONS)
        raise _err(path, where, f"unknown section {section!r} (allowed: {allowed_s})")
    return p


def _str(path: str, t: Mapping[str, Any], key: str, where: str, default: Any = ...) -> Any:
    if key not in t:
        if default is ...:
            raise _err(path, f"{where} {key}", "missing")
        return default
    v = t[key]
    if not isinstance(v, str) or not v.strip():
        raise _err(path, f"{where} {key}", f"expected a non-empty string, got {v!r}")
    return v


def _int(
    path: str, t: Mapping[str, Any], key: str, where: str, default: int, lo: int, hi: int
) -> int:
    v = t.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _err(path, f"{where} {key}", f"expected an integer from {lo} to {hi}, got {v!r}")
    return v


def _input(origin: str, key: str, fn: Any, path: Path, *args: Any, **kw: Any) -> Any:
    """``fn(path, ...)`` of the input door; its one line prefixed by ``origin: key``."""
    try:
        return fn(path, *args, **kw)
    except UsageError as e:
        raise UsageError(f"{origin}: {key}: {e}") from None


def read_counters(
    path: Path, origin: str
) -> tuple[tuple[float, ...], dict[str, tuple[float, ...]]]:
    """A board's per-second counters: ``t_s`` and any of :data:`COUNTER_COLUMNS`.

    Read through the input door (each way the path can fail named as such, at
    most :data:`~rtshield.inputs.MAX_TEXT_BYTES`), as UTF-8 with or without
    the byte-order mark spreadsheet programs write."""
    text = _input(origin, "csv", read_input_text, path, what="counters CSV")[0]
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if r and not r[0].lstrip().startswith("#")]
    if len(rows) < 3:
        raise UsageError(f"{path}: needs a header and at least two rows of counters")
    head = [h.strip() for h in rows[0]]
    if "t_s" not in head:
        raise UsageError(f"{path}: line 1: no t_s column (the start of each second)")
    unknown = [h for h in head if h != "t_s" and h not in COUNTER_COLUMNS]
    if unknown:
        raise UsageError(
            f"{path}: line 1: unknown column {unknown[0]!r} "
            f"(columns: t_s, {', '.join(COUNTER_COLUMNS)})"
        )
    if len(set(head)) != len(head):
        raise UsageError(f"{path}: line 1: a column is named twice")
    cols: dict[str, list[float]] = {h: [] for h in head}
    for ln, r in enumerate(rows[1:], start=2):
        if len(r) != len(head):
            raise UsageError(f"{path}: line {ln}: {len(r)} fields, expected {len(head)}")
        for h, cell in zip(head, r, strict=True):
            try:
                v = float(cell)
            except ValueError:
                raise UsageError(
                    f"{path}: line {ln}: {h}: not a number: {cell.strip()!r}"
                ) from None
            if not math.isfinite(v) or v < 0:
                raise UsageError(
                    f"{path}: line {ln}: {h}: must be a finite number >= 0, got {cell.strip()!r}"
                )
            cols[h].append(v)
    t = cols.pop("t_s")
    if any(b <= a for a, b in zip(t, t[1:], strict=False)):
        raise UsageError(f"{path}: t_s must increase from row to row")
    if not cols:
        raise UsageError(
            f"{path}: no counter column besides t_s (columns: {', '.join(COUNTER_COLUMNS)})"
        )
    return tuple(t), {k: tuple(v) for k, v in cols.items()}


def load_calibration(path: str | Path) -> Calibration:
    """Read and validate a calibration file; every error is one :class:`UsageError` line."""
    _base.cache_clear()  # the scenario files as they are now (a process may load twice)
    p, _ = resolve_input(path, "calibration file")
    data, text = read_toml_text(p)
    origin = str(path)
    for k in data:
        if k not in ("calibration", "parameter", "objective"):
            raise _err(
                origin, f"[{k}]", "unknown section (allowed: calibration, parameter, objective)"
            )
    head = data.get("calibration")
    if not isinstance(head, Mapping):
        raise _err(origin, "[calibration]", "missing section")
    _known_keys(
        origin, head, "[calibration]", sorted({"name", "description", "duration", "budget", "seed"})
    )
    name = _str(origin, head, "name", "[calibration]")
    desc = _str(origin, head, "description", "[calibration]", "")
    dur = _str(origin, head, "duration", "[calibration]", None)
    if dur is not None and duration_ns(dur, f"{origin}: [calibration] duration") <= 0:
        raise _err(origin, "[calibration] duration", "must be positive")
    budget = _int(origin, head, "budget", "[calibration]", 120, 1, MAX_BUDGET)
    seed = _int(origin, head, "seed", "[calibration]", 1, 0, 2**63 - 1)
    raw_params = data.get("parameter")
    if not isinstance(raw_params, list) or not raw_params:
        raise _err(origin, "[[parameter]]", "at least one unknown parameter is needed")
    if len(raw_params) > 32:
        raise _err(origin, "[[parameter]]", f"{len(raw_params)} parameters; at most 32")
    params = tuple(_param(origin, i, t) for i, t in enumerate(raw_params))
    keys = [q.key for q in params]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup:
        raise _err(origin, f"[[parameter]] {dup}", "is declared twice")
    obj = data.get("objective")
    if not isinstance(obj, Mapping):
        raise _err(origin, "[objective]", 'missing section (kind = "claims" or "counters")')
    kind = obj.get("kind")
    base = p.parent
    if kind == "claims":
        _known_keys(origin, obj, "[objective]", ("kind", "study", "scenarios", "claims"))
        study = _str(origin, obj, "study", "[objective]")
        mod = study_module(origin, study)
        folder = base / _str(origin, obj, "scenarios", "[objective]")
        _input(origin, "[objective] scenarios", input_folder, folder, "folder of scenarios")
        runs = []
        for run, (stem, over) in mod.RUNS.items():
            f = folder / f"{stem}.toml"
            if not os.path.lexists(f):
                raise _err(
                    origin,
                    "[objective] scenarios",
                    f"{folder} has no {stem}.toml (the run {run} needs it)",
                )
            _input(origin, "[objective] scenarios", resolve_input, f, "scenario file")
            runs.append((run, str(f), over))
        every = [c.key for c in mod.CLAIMS]
        claims = obj.get("claims", every)
        if not isinstance(claims, list) or not claims or any(c not in every for c in claims):
            bad = (
                next((c for c in claims if c not in every), claims)
                if isinstance(claims, list)
                else claims
            )
            raise _err(
                origin,
                "[objective] claims",
                f"unknown claim {bad!r} (the study's: {', '.join(every)})",
            )
        cal = Calibration(
            origin,
            name,
            params,
            "claims",
            tuple(runs),
            study=study,
            claims=tuple(claims),
            duration=dur,
            budget=budget,
            seed=seed,
            description=desc,
            sha256=hashlib.sha256(text.encode()).hexdigest(),
        )
    elif kind == "counters":
        _known_keys(origin, obj, "[objective]", ("kind", "scenario", "csv", "columns"))
        scen = base / _str(origin, obj, "scenario", "[objective]")
        _input(origin, "[objective] scenario", resolve_input, scen, "scenario file")
        t, cols = read_counters(
            base / _str(origin, obj, "csv", "[objective]"), f"{origin}: [objective]"
        )
        want = obj.get("columns", list(cols))
        if not isinstance(want, list) or not want or any(c not in cols for c in want):
            raise _err(
                origin,
                "[objective] columns",
                f"expected a list of the CSV's columns ({', '.join(cols)}), got {want!r}",
            )
        cal = Calibration(
            origin,
            name,
            params,
            "counters",
            (("board", str(scen), {}),),
            duration=dur,
            budget=budget,
            seed=seed,
            description=desc,
            counters={c: cols[c] for c in want},
            counters_t=t,
            sha256=hashlib.sha256(text.encode()).hexdigest(),
        )
    else:
        raise _err(origin, "[objective] kind", f'expected "claims" or "counters", got {kind!r}')
    # Every parameter must apply: build the runs at both corners of the box now.
    for corner in (0.0, 1.0):
        built = scenarios(cal, tuple(q.at(corner) for q in params))
    if cal.objective == "counters":
        _check_seconds(cal, built["board"])
    return cal


def _check_seconds(cal: Calibration, sc: Any) -> None:
    """The board's ``t_s`` must be bin starts of the simulated run."""
    bin_s, dur_s = sc.bin_ns / 1e9, sc.duration_ns / 1e9
    for t in cal.counters_t:
        k = round(t / bin_s)
        if abs(k * bin_s - t) > 1e-6 or not 0 <= t < dur_s - 1e-9:
            raise UsageError(
                f"{cal.path}: the board's t_s value {t:g} s is not a bin start of the "
                f"simulated run (bins of {bin_s:g} s from 0 to {dur_s:g} s): match the "
                "scenario's duration and bin to the CSV"
            )


def study_module(origin: str, name: str) -> Any:
    """The module of study ``name`` under :mod:`rtshield.studies`, with its claims."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise _err(origin, "[objective] study", f"not a study name: {name!r}")
    try:
        mod = importlib.import_module(f"{studies.__name__}.{name}")
    except ModuleNotFoundError:
        raise _err(origin, "[objective] study", f"unknown study {name!r}") from None
    if not all(hasattr(mod, a) for a in ("RUNS", "CLAIMS", "evaluate")):
        raise _err(origin, "[objective] study", f"{name} has no claims to calibrate against")
    return mod


# -------------------------------------------------------------- one point's runs


@functools.lru_cache(maxsize=64)
def _base(path: str) -> tuple[dict[str, Any], str]:
    return read_toml_text(path)


def scenarios(cal: Calibration, values: Sequence[Any]) -> dict[str, Any]:
    """The validated scenarios of one point (``{run name: Scenario}``)."""
    out = {}
    for run, path, over in cal.runs:
        data, text = _base(path)
        data = copy.deepcopy(data)
        sets: dict[str, dict[str, Any]] = copy.deepcopy({k: dict(v) for k, v in over.items()})
        if cal.duration:
            sets.setdefault("scenario", {})["duration"] = cal.duration
        costs: dict[str, int] = {}
        plat: dict[str, Any] = {}
        for q, v in zip(cal.params, values, strict=True):
            section, name = q.key.split(".")
            if section == "costs":
                costs[name] = int(v)
            elif section == "platform":
                plat[name + ("_ns" if q.kind == "duration" else "")] = v
            elif section == "flows":
                flows = [f for f in data.get("flows", []) if f.get("pattern") == FLOW_KEYS[name]]
                if not flows:
                    raise UsageError(
                        f"{cal.path}: [[parameter]] {q.key}: {path} has no {FLOW_KEYS[name]} flow"
                    )
                for f in flows:
                    if name == "peak":  # the pyramid's shape is kept: as many steps up
                        peak0 = rate_hz(f["peak"], f"{path}: [[flows]] peak")
                        step0 = rate_hz(f["step"], f"{path}: [[flows]] step")
                        start0 = rate_hz(f.get("start", "0pps"), f"{path}: [[flows]] start")
                        steps = max(1, round((peak0 - start0) / step0))
                        f["step"] = f"{(float(v) - start0) / steps:.6g}pps"
                    f[name] = f"{float(v):.6g}pps"
            else:
                sets.setdefault(section, {})[name] = (
                    q.text(v) if q.kind in ("duration", "rate") else v
                )
        sc = parse_scenario(data, path, overrides=sets, text=text, overrides_origin=cal.path)
        if costs:
            sc = dataclasses.replace(sc, costs=CostTable({**dict(sc.costs), **costs}))
        if plat:
            sc = dataclasses.replace(sc, platform=dataclasses.replace(sc.platform, **plat))
        out[run] = sc
    return out
