"""What the scenario schema (:mod:`rtshield.schema`) and the system-file schema
(:mod:`rtshield.schema.system`) share: how an error is raised at a key and
worded, how a unit-carrying value is read, how a key is declared and documented,
the whole-file base model, the rules both formats apply to their entries, the
JSON-Schema fragments of a duration and a rate, and the Markdown key table the
docs are generated with.

pydantic is imported here, so this module, like the two schemas, is loaded
only when a file is validated or a schema printed (``import rtshield.scenario``
loads none of them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError, PydanticUndefined

from rtshield import units
from rtshield.errors import UsageError
from rtshield.schema.vocabulary import NAME_RULE

#: The highest priority in scenario and system files (0 is the lowest; a higher
#: number is a higher priority, as in FreeRTOS).
MAX_PRIORITY = 255
#: An entry's name (a flow, task, source, queue…): :data:`rtshield.schema.vocabulary.NAME_RULE`.
NAME_RE = re.compile(NAME_RULE)
#: JSON Schema of an entry's name.
NAME_SCHEMA = {"type": "string", "format": "name", "pattern": f"^{NAME_RULE}$"}


# --------------------------------------------------------------------------- errors


def fail(msg: str, *at: str | int, origin: str | None = None) -> PydanticCustomError:
    """An error ``msg`` at key path ``at`` below the validated model's location
    (``origin``: a file other than the value's own, e.g. the preset)."""
    return PydanticCustomError("rtshield", "{msg}", {"msg": msg, "at": at, "origin": origin})


def context_of(info: ValidationInfo) -> dict[str, Any]:
    """The validation's context (the platform, its clock and costs…), or an empty one."""
    return info.context or {}


def message(err: Mapping[str, Any]) -> str:
    """Our wording of one pydantic error."""
    typ, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if typ == "rtshield":
        return ctx["msg"]
    if typ == "missing":
        return "missing"
    if typ in ("int_type", "int_parsing", "int_from_float"):
        return f"expected a whole number, got {value!r}"
    if typ in ("float_type", "float_parsing", "finite_number"):
        return f"expected a number, got {value!r}"
    if typ in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {value!r}"
    if typ in ("string_type",):
        return f"expected a string, got {value!r}"
    if typ == "greater_than_equal":
        return f"must be at least {ctx['ge']}, got {value}"
    if typ == "less_than_equal":
        return f"must be at most {ctx['le']}, got {value}"
    if typ in ("greater_than",):
        return f"must be greater than {ctx['gt']}, got {value}"
    if typ == "literal_error":
        options = ", ".join(re.findall(r"'([^']*)'", ctx.get("expected", "")))
        return f"{value!r} is not one of: {options}"
    if typ in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a table, got {value!r}"
    if typ in ("list_type", "tuple_type"):
        return f"expected an array, got {value!r}"
    if typ == "extra_forbidden":
        return "unknown key"
    return err.get("msg", typ)


# --------------------------------------------------------------------------- values and rules


def _read(read: Callable[..., Any], value: Any, **kw: Any) -> Any:
    """``read(value, key, **kw)``, a reader of :mod:`rtshield.units`, with its
    message as this key's error (the key is named by the error's place, not by the
    unit module's prefix)."""
    try:
        return read(value, "\0", **kw)
    except UsageError as e:
        raise fail(str(e).removeprefix("\0: ")) from None


def duration_ns(value: Any, info: ValidationInfo) -> int:
    """A duration value (``"10ms"``, ``"79cyc"``) in ns; cycles at the clock the file's
    validation context gives (``clock_hz``)."""
    return _read(units.duration_ns, value, clock_hz=context_of(info).get("clock_hz"))


def rate_hz(value: Any) -> float:
    """A rate value (``"30000pps"``, ``"1kHz"``) in events per second."""
    return _read(units.rate_hz, value)


def check_name(value: str, called: str = "name") -> None:
    """``value`` must follow :data:`~rtshield.schema.vocabulary.NAME_RULE`; if not, the error
    says it is not a valid ``called`` (``"flow name"``)."""
    if not NAME_RE.fullmatch(value):
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise fail(
            f"{shown!r} is not a valid {called}: 1-64 letters, digits, '_' or '-', "
            "starting with a letter or '_'"
        )


def unique_names(
    entries: Iterable[Any], used: str, *at: str | int, taken: set[str] | None = None
) -> None:
    """No two of ``entries`` (at key path ``at``) have the same ``name``, nor one
    of ``taken`` (which then holds theirs too): the second use is refused at
    ``(*at, i, "name")`` with ``used``, whose ``{name}`` is the name, quoted."""
    seen = set() if taken is None else taken
    for i, e in enumerate(entries):
        if e.name in seen:
            raise fail(used.format(name=repr(e.name)), *at, i, "name")
        seen.add(e.name)


# --------------------------------------------------------------------------- tables

#: JSON Schema of a duration with its unit (the syntax of :func:`rtshield.units.duration_ns`).
DURATION_SCHEMA = {
    "type": "string",
    "format": "duration",
    "pattern": r"^\s*([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][-+]?[0-9]+)?\s*(ns|us|µs|ms|s|cyc)\s*$",
    "examples": ["10ms", "250us", "79cyc"],
}
#: JSON Schema of a rate with its unit (the syntax of :func:`rtshield.units.rate_hz`).
RATE_SCHEMA = {
    "type": "string",
    "format": "rate",
    "description": "a rate with a unit: Hz, kHz, MHz, pps, pkt/s, /s, or N/<duration>",
    "examples": ["30000pps", "4kHz", "600/20ms"],
}


def key(
    default: Any = PydanticUndefined,
    *,
    doc: str,
    factory: Any = None,
    shown: str | None = None,
    toml: Any = None,
    type: str | None = None,  # noqa: A002 - the column's name
) -> Any:
    """A key of a table: its default, its documentation (``doc``, Markdown), and
    how the reference shows them: ``shown`` (the default in words), ``toml``
    (the default as written in a file, for a default kept in other units),
    ``type`` (the type in words, when the annotation does not say it all)."""
    extra: dict[str, Any] = {}
    if shown is not None:
        extra["x-default"] = shown
    if toml is not None:
        extra["default"] = toml
    if type is not None:
        extra["x-type"] = type
    if factory is not None:
        return Field(default_factory=factory, description=doc, json_schema_extra=extra or None)
    return Field(default, description=doc, json_schema_extra=extra or None)


class TomlTable(BaseModel):
    """A TOML table: unknown keys refused, naming the keys it takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        """The keys this table takes (given its ``kind``/``pattern``/``model`` in ``data``)."""
        return tuple(cls.model_fields)

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        allowed = cls.keys_for(data)
        return f"unknown key (allowed: {', '.join(sorted(allowed))})" if allowed else "unknown key"

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            allowed = cls.keys_for(data)
            for k in data:
                if k not in allowed:
                    raise fail(cls.unknown_key(k, data), k)
        return data

    def given(self, key: str) -> bool:
        """Whether ``key`` was written (in the file, ``--set`` or the preset)."""
        return key in self.model_fields_set


class FileModel(BaseModel):
    """A whole file (a scenario, a preset, a system file): one field per section,
    any other section refused. Its title and strictness are given where it is
    declared: ``class ScenarioFile(FileModel, strict=True, title="rtshield scenario")``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def unknown_section(cls) -> str:
        """The message for a section the file does not have."""
        return f"unknown section (allowed: {', '.join(cls.model_fields)})"

    @classmethod
    def check_sections(cls, data: Mapping[str, Any]) -> None:
        """Further checks of the raw sections, once their names are known (none here)."""

    @model_validator(mode="before")
    @classmethod
    def _sections(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key in data:
                if key not in cls.model_fields:
                    raise fail(cls.unknown_section(), key)
            cls.check_sections(data)
        return data


# --------------------------------------------------------------------------- JSON Schema


def _no_nulls(node: Any) -> Any:
    """TOML has no null: an optional key is one that may be left out."""
    if isinstance(node, dict):
        out = {k: _no_nulls(v) for k, v in node.items()}
        branches = out.get("anyOf")
        if isinstance(branches, list) and {"type": "null"} in branches:
            rest = [b for b in branches if b != {"type": "null"}]
            del out["anyOf"]
            if len(rest) == 1:
                out = {**rest[0], **out}
            else:
                out["anyOf"] = rest
            if out.get("default", 0) is None:
                del out["default"]
        return out
    if isinstance(node, list):
        return [_no_nulls(v) for v in node]
    return node


def only_keys(tag: str, keys_of: Mapping[str, tuple[str, ...]]) -> list[dict[str, Any]]:
    """JSON Schema rules: ``if tag == k then only keys_of[k]``, for every ``k``."""
    return [
        {
            "if": {"properties": {tag: {"const": k}}, "required": [tag]},
            "then": {"propertyNames": {"enum": list(keys)}},
        }
        for k, keys in keys_of.items()
    ]


def file_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a file's model; its optional keys are those the
    file may leave out."""
    schema = _no_nulls(model.model_json_schema(mode="validation"))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


# --------------------------------------------------------------------------- Markdown


def cell(text: str) -> str:
    """``text`` as one cell of a Markdown table."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _type_words(p: Mapping[str, Any]) -> str:
    if "x-type" in p:
        return p["x-type"]
    branches = p.get("anyOf", [])
    if any(b.get("const") == "?" for b in branches):  # a system file's open key
        rest = {k: v for k, v in p.items() if k != "anyOf"}
        others = [b for b in branches if b.get("const") != "?"]
        inner = _type_words({**others[0], **rest}) if len(others) == 1 else "value"
        return f'{inner} or `"?"`'
    fmt = p.get("format")
    if fmt in ("duration", "rate", "fraction"):
        return fmt
    if fmt == "name":
        return "name"
    if "enum" in p:
        return " | ".join(f'`"{v}"`' for v in p["enum"])
    t = p.get("type")
    if t == "integer":
        lo, hi = p.get("minimum"), p.get("maximum")
        if hi is None or hi >= 2**31 - 1:
            return "integer" if lo in (None, 0) and hi is None else f"integer ≥ {lo}"
        return f"integer {lo}–{hi}"
    if t == "array":
        items = p.get("items", {})
        if "$ref" in items:
            return "array of tables"
        return f"list of {_type_words(items)}s"
    return {"boolean": "boolean", "string": "string", "number": "number"}.get(t, t or "")


def _default_words(p: Mapping[str, Any], required: bool) -> str:
    if "x-default" in p:
        return p["x-default"]
    if "default" in p:
        v = p["default"]
        if isinstance(v, bool):
            return f"`{str(v).lower()}`"
        if isinstance(v, str):
            return f'`"{v}"`'
        return f"`{v}`"
    return "required" if required else "—"


def kinds_table(
    head: tuple[str, str, str],
    keys_of: Mapping[str, Iterable[str]],
    docs: Mapping[str, str],
) -> str:
    """A Markdown table of the kinds of an entry (``head``: the kind, keys and meaning
    columns' headings): each kind, the keys it takes (— for none), what it is."""
    rows = [f"| {head[0]} | {head[1]} | {head[2]} |", "|---|---|---|"]
    for kind, keys in keys_of.items():
        shown = ", ".join(f"`{k}`" for k in keys) or "—"
        rows.append(f"| `{kind}` | {shown} | {cell(docs[kind])} |")
    return "\n".join(rows)


def key_table(schema: Mapping[str, Any], name: str, keys: tuple[str, ...] | None = None) -> str:
    """The Markdown reference of table ``name`` of ``schema`` (its ``keys``, default
    all): one row per key with its type, default and meaning."""
    d = schema["$defs"][name]
    props, required = d["properties"], set(d.get("required", []))
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for k in keys if keys is not None else tuple(props):
        p = props[k]
        rows.append(
            f"| `{k}` | {cell(_type_words(p))} | {cell(_default_words(p, k in required))} "
            f"| {cell(p.get('description', ''))} |"
        )
    return "\n".join(rows)
