"""docs/scenarios.md and the scenario loader accept the same keys.

The documented keys are read from the tables of docs/scenarios.md; the keys
the loader accepts are read from its own "unknown key (allowed: …)" message,
so neither side can grow a key the other does not know.
"""

import re
from pathlib import Path

import pytest

from rtshield.errors import UsageError
from rtshield.scenario import MITIGATION_KINDS, PATTERNS, TASK_KINDS, loads_scenario

REPO = Path(__file__).resolve().parent.parent
DOC = (REPO / "docs" / "scenarios.md").read_text()
BASE = (REPO / "scenarios" / "examples" / "modbus_with_flood.toml").read_text()


def doc_section(heading: str) -> str:
    start = DOC.index(f"### `{heading}`")
    end = DOC.find("\n##", start + 4)
    return DOC[start:end]


def table_rows(section: str) -> list[list[str]]:
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")]
            for ln in section.splitlines() if ln.startswith("| `")]
    return rows


def first_column_keys(heading: str) -> set[str]:
    return {r[0].strip("`") for r in table_rows(doc_section(heading))}


def listed_keys(cell: str) -> set[str]:
    """Backticked names in a table cell, without values ("1ms") and references ([driver] q)."""
    cell = re.sub(r"`\[[a-z]+\] [a-z_]+`", "", cell)
    return {k for k in re.findall(r"`([a-z_]+)`", cell)}


def allowed_from_error(text: str, overrides=None) -> set[str]:
    with pytest.raises(UsageError) as e:
        loads_scenario(text, "x.toml", overrides)
    m = re.search(r"unknown key \((?:allowed|kind '[a-z_]+' takes): ([^)]*)\)", str(e.value))
    assert m, str(e.value)
    return {k.strip() for k in m.group(1).split(",")} - {"no parameters"}


@pytest.mark.parametrize("section", ["scenario", "critical", "driver", "nic", "rx"])
def test_table_keys_match(section):
    documented = first_column_keys(f"[{section}]")
    assert documented == allowed_from_error(BASE, {section: {"zzz_unknown": 1}})


def test_source_keys_match():
    text = BASE + '\n[[sources]]\nname = "s"\nzzz_unknown = 1\n'
    assert first_column_keys("[[sources]]") == allowed_from_error(text)


def test_flow_keys_match_for_every_pattern():
    section = doc_section("[[flows]]")
    common = {r[0].strip("`") for r in table_rows(section) if r[0].strip("`") not in PATTERNS}
    per_pattern = {r[0].strip("`"): listed_keys(r[1]) for r in table_rows(section)
                   if r[0].strip("`") in PATTERNS}
    assert set(per_pattern) == set(PATTERNS)
    for pattern, keys in per_pattern.items():
        flow = f'[[flows]]\nname = "f"\npattern = "{pattern}"\nzzz_unknown = 1\n'
        text = BASE.split("[[flows]]")[0] + flow
        assert common | keys == allowed_from_error(text), pattern


def test_mitigation_keys_match_for_every_kind():
    rows = {r[0].strip("`"): listed_keys(r[1]) for r in table_rows(doc_section("[mitigation]"))}
    assert set(rows) == set(MITIGATION_KINDS)
    for kind, keys in rows.items():
        text = BASE.replace('kind = "burst"', f'kind = "{kind}"')
        assert keys == allowed_from_error(text, {"mitigation": {"zzz_unknown": 1}}), kind


def test_task_keys_match_for_every_kind():
    rows = {r[0].strip("`"): listed_keys(r[1]) for r in table_rows(doc_section("[[tasks]]"))}
    assert set(rows) == set(TASK_KINDS)
    for kind, keys in rows.items():
        text = BASE + f'\n[[tasks]]\nkind = "{kind}"\nname = "t"\nzzz_unknown = 1\n'
        assert keys | {"kind"} == allowed_from_error(text), kind
