"""The schema of rtshield's files: pydantic models of every table of a scenario
file, a platform preset and a system file.

These models *are* the schema: the keys each table takes, their types,
units, ranges and defaults, the documentation of every key (``description``),
and the rules that tie keys together (model validators).
:mod:`rtshield.scenario` validates a scenario file with them and builds its
typed :class:`~rtshield.scenario_types.Scenario` from the result; ``rtshield
schema`` prints their JSON Schema and ``docs/scenarios.md``'s key reference
is generated from them (:func:`markdown_blocks`, written by
``tools/gen_schema_docs.py``).

One module per concept, bottom up:

- :mod:`~rtshield.schema.vocabulary`: the words (kinds, patterns, keys,
  names); plain Python, read by the typed scenario and the engine too;
- :mod:`~rtshield.schema.base`: what the scenario and system schemas share
  (errors and their wording, unit-carrying values, key declarations, the
  whole-file model, the Markdown key table);
- :mod:`~rtshield.schema.fields`: the scenario schema's binding-read words
  and limits, its error line (:func:`usage_error`), its value types;
- :mod:`~rtshield.schema.tables`, :mod:`~rtshield.schema.flows`: the tables
  of a scenario file; :mod:`~rtshield.schema.scenario_file`: the whole file
  and the rules across its tables; :mod:`~rtshield.schema.preset`: a platform
  preset;
- :mod:`~rtshield.schema.system`: the system files of ``rtshield analyze``
  and ``design``;
- :mod:`~rtshield.schema.docs`: the JSON Schema of each file and the Markdown
  reference.

The names below (the whole-file models, the error line, the JSON Schema and
the Markdown reference) are re-exported here on first use, so that ``import
rtshield.schema.vocabulary`` (or the system schema) neither builds the
scenario models nor loads the native library their enums come from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rtshield._lazy import reexport

if TYPE_CHECKING:
    from rtshield.schema.docs import json_schema, markdown_blocks, render_docs
    from rtshield.schema.fields import limits, usage_error
    from rtshield.schema.preset import PresetFile
    from rtshield.schema.scenario_file import ScenarioFile

#: The whole-file models and what is done with them; each table's model is in
#: its module (``rtshield.schema.tables.CriticalTable``…).
__all__ = [
    "PresetFile",
    "ScenarioFile",
    "json_schema",
    "limits",
    "markdown_blocks",
    "render_docs",
    "usage_error",
]


#: Which module of the package holds each name: only that one is imported (a run
#: validates its scenario with ``ScenarioFile`` and never needs the JSON Schema
#: and Markdown of ``docs``, nor the system format they describe too).
_HOMES = {
    "PresetFile": "preset",
    "ScenarioFile": "scenario_file",
    "json_schema": "docs",
    "limits": "fields",
    "markdown_blocks": "docs",
    "render_docs": "docs",
    "usage_error": "fields",
}


__getattr__, __dir__ = reexport(__name__, _HOMES, __all__)
