"""The scenario schema: the pydantic models, their JSON Schema, `rtshield schema`
and the key reference of docs/scenarios.md generated from them."""

import json
from pathlib import Path

import jsonschema
import pytest
from scenario_texts import key_lines, with_value

from rtshield import cli, schema, schema_system
from rtshield._native import load
from rtshield.errors import UsageError
from rtshield.scenario import available_platforms, loads_scenario, platforms_dir
from rtshield.schema import profile as schema_profile
from rtshield.tomlfile import tomllib

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "scenarios.md"
BASE = (REPO / "scenarios" / "examples" / "modbus_with_flood.toml").read_text()
OTHER = {"analysis", "calibration"}  # system and calibration files, not scenarios


def scenario_files():
    root = REPO / "scenarios"
    return sorted(f for f in root.rglob("*.toml") if not OTHER & set(f.relative_to(root).parts))


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft202012Validator(schema.json_schema("scenario"))


@pytest.mark.parametrize(
    "page, blocks",
    [("scenarios.md", schema.markdown_blocks), ("analysis.md", schema_system.markdown_blocks),
     ("rig.md", schema_profile.markdown_blocks)],
)
def test_docs_key_reference_is_generated_from_the_models(page, blocks):
    text = (REPO / "docs" / page).read_text()
    assert text.count("<!-- schema: ") == len(blocks())
    assert schema.render_docs(text, blocks()) == text, (
        f"docs/{page} differs from the models: run tools/gen_schema_docs.py"
    )


def test_the_docs_tool_checks_both_pages(tmp_path):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, str(REPO / "tools" / "gen_schema_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_a_changed_description_makes_the_docs_differ(monkeypatch):
    made = schema.json_schema

    def changed(which="scenario"):
        out = made(which)
        out["$defs"]["CriticalTable"]["properties"]["period"]["description"] = "something else"
        return out

    from rtshield.schema import docs  # the reference reads it there

    monkeypatch.setattr(docs, "json_schema", changed)
    text = DOC.read_text()
    new = schema.render_docs(text)
    assert new != text and "| `period` | duration | required (or preset) | something else |" in new


def test_unknown_block_in_the_docs_is_refused():
    with pytest.raises(UsageError, match="no generated block named 'nope'"):
        schema.render_docs("<!-- schema: nope -->\n<!-- /schema -->\n")


def test_the_json_schema_is_a_valid_schema():
    for which in ("scenario", "system", "platform"):
        jsonschema.Draft202012Validator.check_schema(schema.json_schema(which))


@pytest.mark.parametrize("path", scenario_files(), ids=lambda p: p.name)
def test_every_shipped_scenario_passes_the_json_schema(validator, path):
    doc = tomllib.loads(path.read_text())
    errors = [e.message for e in validator.iter_errors(doc)]
    assert not errors, errors


@pytest.mark.parametrize("name", available_platforms())
def test_every_preset_passes_its_json_schema(name):
    doc = tomllib.loads((platforms_dir() / f"{name}.toml").read_text())
    jsonschema.validate(doc, schema.json_schema("platform"))


@pytest.mark.parametrize(
    "path", sorted((REPO / "scenarios" / "analysis").glob("*.toml")), ids=lambda p: p.name
)
def test_every_shipped_system_file_passes_the_json_schema(path):
    from rtshield.analysis.system import load_system

    load_system(path)
    jsonschema.validate(tomllib.loads(path.read_text()), schema.json_schema("system"))


@pytest.mark.parametrize(
    "text",
    [
        '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 1\ncolour = 2\n',
        '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 300\n',
        '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\n',
        '[[source]]\nname = "s"\nmodel = "magic"\n',
    ],
)
def test_the_system_json_schema_flags_what_the_loader_refuses(tmp_path, text):
    from rtshield.analysis.system import load_system

    assert list(jsonschema.Draft202012Validator(schema.json_schema("system")).iter_errors(
        tomllib.loads(text)))
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(UsageError):
        load_system(tmp_path / "s.toml")


@pytest.mark.parametrize(
    "old, new",
    [
        ("[driver]\n", "[driver]\ncolour = 1\n"),  # unknown key
        ('period = "10ms"', "period = 10"),  # a duration without its unit
        ('kind = "burst"', 'kind = "magic"'),  # no such mitigation
        ('kind = "burst"', 'kind = "queue"'),  # burst's slice under kind = "queue"
        ('pattern = "steps"', 'pattern = "constant"'),  # steps keys on a constant flow
        ("queue = 100", "queue = 0"),  # below the range
    ],
)
def test_the_json_schema_flags_what_the_loader_refuses(validator, old, new):
    assert old in BASE, old
    doc = tomllib.loads(BASE.replace(old, new, 1))
    assert list(validator.iter_errors(doc))
    with pytest.raises(UsageError):
        loads_scenario(BASE.replace(old, new, 1), "x.toml")


def test_limits_in_the_schema_come_from_the_binding():
    _, lib = load()
    sc = schema.json_schema("scenario")
    assert sc["properties"]["flows"]["maxItems"] == lib.RTSIM_MAX_FLOWS
    assert sc["properties"]["sources"]["maxItems"] == lib.RTSIM_MAX_SOURCES
    assert sc["properties"]["tasks"]["maxItems"] == lib.RTSIM_MAX_TASKS - 2
    queues = sc["$defs"]["NicTable"]["properties"]["queues"]
    assert queues["maxItems"] == lib.RTSIM_MAX_NIC_QUEUES


def test_limits_are_read_when_validating(monkeypatch):
    from rtshield import _native

    lim = dict(_native.native_limits())
    lim["flows"] = 1
    monkeypatch.setattr(_native, "native_limits", lambda: lim)
    text = BASE + '\n[[flows]]\nname = "more"\npattern = "constant"\nrate = "1pps"\n'
    with pytest.raises(UsageError, match=r"x.toml: \[\[flows\]\]: at most 1 flows, got 3"):
        loads_scenario(text, "x.toml")


def test_schema_command_prints_the_json_schema(capsys):
    assert cli.main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == schema.json_schema("scenario")
    assert cli.main(["schema", "platform"]) == 0
    assert json.loads(capsys.readouterr().out) == schema.json_schema("platform")
    assert cli.main(["schema", "system"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == schema.json_schema("system") and "task" in out["properties"]


def test_schema_command_writes_out_file(tmp_path, capsys):
    out = tmp_path / "scenario.schema.json"
    assert cli.main(["schema", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text()) == schema.json_schema("scenario")


def test_schema_command_markdown_is_the_docs_reference(capsys):
    assert cli.main(["schema", "--markdown"]) == 0
    text = capsys.readouterr().out
    for block in schema.markdown_blocks().values():
        assert block in text


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["schema", "system32"], "'system32' is not one of: scenario, system, platform"),
        (["schema", "--out", "{tmp}/no/such/dir/s.json"], "--out: cannot create"),
        (["schema", "--out", "{tmp}"], "is a directory"),
        (["schema", "platform", "--markdown"], "--markdown gives the scenario key reference"),
    ],
)
def test_schema_command_mistakes_are_one_line(tmp_path, capsys, argv, needle):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    before = sorted(tmp_path.rglob("*"))
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), captured.err
    assert needle in lines[0] and captured.out == ""
    assert sorted(tmp_path.rglob("*")) == before


_KEY_LINES = key_lines(BASE)
_PLAUSIBLE = [-2, 0, 1, 5, 100, 70_000, True, False, 0.5, "10ms", "0s", "1 s", "79cyc", "5kHz",
              "0pps", "600/20ms", "10%", "tcp", "udp", "edge", "dma_ring", "burst", "queue",
              "strict", "lazy", "none", "poisson", "constant", "x"]


def test_an_editor_never_flags_a_file_rtshield_accepts():
    """Whatever one key is set to: when the loader accepts the file, the JSON
    Schema an editor checks it with finds nothing wrong either."""
    check = jsonschema.Draft202012Validator(schema.json_schema("scenario"))
    accepted = 0
    for line in _KEY_LINES:
        for value in _PLAUSIBLE:
            text = with_value(BASE, line, value)
            try:
                loads_scenario(text, "gen.toml")
            except UsageError:
                continue
            accepted += 1
            errors = [e.message for e in check.iter_errors(tomllib.loads(text))]
            assert not errors, (text.splitlines()[line], errors)
    assert accepted > 50  # the values reach the check, not only the refusals


def test_kinds_and_protocols_are_the_simulators_enums():
    from rtshield import scenario
    from rtshield.engine import enum_names

    assert scenario.PROTOCOLS == enum_names("rtsim_proto", "RTSIM_PROTO_")
    assert scenario.NIC_KINDS == enum_names("rtsim_nic_kind", "RTSIM_NIC_")
    sc = schema.json_schema("scenario")["$defs"]
    assert sc["FlowTable"]["properties"]["protocol"]["enum"] == list(scenario.PROTOCOLS)
    assert sc["NicTable"]["properties"]["kind"]["enum"] == list(scenario.NIC_KINDS)
    # every mitigation the simulator has is in the schema, with its keys
    kinds = enum_names("rtsim_mitigation_kind", "RTSIM_MIT_")
    assert sc["MitigationTable"]["properties"]["kind"]["enum"] == list(kinds)
    assert set(scenario.MITIGATION_KINDS) == set(kinds)
