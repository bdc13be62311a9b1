"""The malformed-input battery (issue 12): bad scenario and system files, each
refused by every verb that reads it with exit status 2, exactly one line on
stderr naming the problem, no traceback, before any work (no simulation
started, no output folder opened: counted, not timed), and nothing created,
written or removed in ``--out``. Hand-written kinds first, then generated
variants (hypothesis), then the regressions of "validate everything first"
and of Ctrl-C.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scenario_texts import key_lines, with_value

from rtshield import cli
from rtshield.errors import UsageError
from rtshield.scenario import NAME_RULE, load_scenario, loads_scenario
from rtshield.tomlfile import MAX_FILE_BYTES

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "examples" / "constant_flood.toml"
BASE = SCENARIO.read_text()
SYSTEM = REPO / "scenarios" / "analysis" / "textbook_three_tasks.toml"
SYS_BASE = SYSTEM.read_text()

#: A child process that has not ended after this long has hung: the test fails
#: saying so (a guard against hangs, not a measure of speed).
HANG_GUARD_S = 120

TASK = '\n[[tasks]]\nname = "{name}"\nkind = "background"\n'
FLOW = '\n[[flows]]\nname = "{name}"\npattern = "constant"\nrate = "10pps"\n'


def _sub(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# (id, file text or bytes, needles that the one line must contain)
SCENARIO_CASES = [
    # syntax and encoding
    ("toml-syntax", "x = [\n", ["not valid TOML"]),
    ("toml-duplicate-key", BASE + '\n[scenario]\nname = "again"\n', ["not valid TOML"]),
    ("not-utf8", b'name = "caf\xe9"\n', ["not UTF-8 text (byte 0xe9 on line 1)"]),
    ("utf16", BASE.encode("utf-16"), ["not UTF-8 text"]),
    ("binary", bytes(range(256)) * 4, ["not UTF-8 text"]),
    ("empty-file", "", ["[scenario]: missing section"]),
    # hostile sizes, nesting and numbers
    ("nested-arrays", "x = " + "[" * 3000 + "]" * 3000 + "\n", ["nested more than"]),
    ("nested-inline-tables", "x = " + "{a = " * 200 + "1" + "}" * 200 + "\n",
     ["nested more than"]),
    ("dotted-key-depth", "a" + ".a" * 3000 + " = 1\n", ["nested more than"]),
    ("integer-5000-digits", _sub("seed = 1", "seed = " + "9" * 5000),
     ["more than 20 digits (line"]),
    ("integer-hex-huge", _sub("seed = 1", "seed = 0x" + "f" * 3000), ["beyond 128 bits"]),
    ("integer-beyond-64-bit", _sub("seed = 1", "seed = 18446744073709551616"),
     ["[scenario] seed: must be at most 9223372036854775807"]),
    ("oversized-file", "# padding\n" * (MAX_FILE_BYTES // 10 + 1),
     ["larger than the limit of 1 MiB"]),
    ("duration-100k-chars", _sub('duration = "12s"', 'duration = "' + "1" * 100_000 + 's"'),
     ["[scenario] duration", "characters; at most 64"]),
    ("rate-100k-chars", _sub('"60000pps"', '"' + "9" * 100_000 + 'x"'),
     ["rates", "characters; at most 64"]),
    # structure
    ("unknown-section", BASE + "\n[bogus]\nx = 1\n", ["[bogus]: unknown section"]),
    ("unknown-key", _sub("seed = 1", "seed = 1\nsede = 2"), ["[scenario] sede: unknown key"]),
    ("missing-name", _sub('name = "constant_flood"\n', ""), ["[scenario] name: missing"]),
    ("section-not-table", "scenario = 3\n", ["[scenario]: expected a table"]),
    ("flows-not-array", _sub("[[flows]]", "[flows]"), ["[[flows]]: expected an array"]),
    ("system-given-to-run", SYS_BASE, ["system description for 'rtshield analyze'"]),
    # types and units
    ("name-not-string", _sub('name = "constant_flood"', "name = 3"),
     ["[scenario] name: expected a string"]),
    ("duration-without-unit", _sub('duration = "12s"', "duration = 10"),
     ["[scenario] duration", "with a unit"]),
    ("duration-bad-unit", _sub('duration = "12s"', 'duration = "10 fortnights"'),
     ["[scenario] duration", "cannot read"]),
    ("rate-bad-unit", _sub('"60000pps"', '"60000 furlongs"'), ["rates", "cannot read"]),
    ("seed-float", _sub("seed = 1", "seed = 1.5"), ["[scenario] seed: expected a whole number"]),
    ("boolean-as-int", _sub("queue = 500", "queue = true"), ["queue: expected a whole number"]),
    ("nan-duration", _sub('duration = "12s"', 'duration = "nan s"'), ["[scenario] duration"]),
    ("inf-rate", _sub('"60000pps"', '"inf pps"'), ["rates", "cannot read"]),
    # ranges
    ("zero-duration", _sub('duration = "12s"', 'duration = "0s"'),
     ["[scenario] duration: must be longer than zero"]),
    ("huge-duration", _sub('duration = "12s"', 'duration = "1e400s"'), ["too long"]),
    ("negative-seed", _sub("seed = 1", "seed = -1"), ["[scenario] seed: must be at least 0"]),
    ("queue-zero", _sub("queue = 500", "queue = 0"), ["[driver] queue: must be at least 1"]),
    ("priority-negative", _sub("priority = 3", "priority = -3"),
     ["[critical] priority: must be at least 0"]),
    ("priority-256", _sub("priority = 2", "priority = 256"),
     ["[driver] priority: must be at most 255"]),
    ("core-missing", _sub("[driver]", "[driver]\ncore = 7"), ["[driver] core", "core(s)"]),
    ("port-out-of-range", _sub("dst_port = 80", "dst_port = 70000"),
     ["dst_port: must be at most 65535"]),
    ("rate-too-low", _sub('"60000pps", "0pps"', '"1e-300pps"'), ["rates", "must be 0 or at least"]),
    ("rate-too-high", _sub('"60000pps"', '"2e9pps"'), ["rates", "too high"]),
    ("bin-not-dividing", _sub('duration = "12s"', 'duration = "10s"\nbin = "3s"'),
     ["[scenario] duration: must be a whole number of bins"]),
    ("bin-longer-than-run", _sub('duration = "12s"', 'duration = "1s"\nbin = "2s"'),
     ["[scenario] bin"]),
    ("too-many-bins", _sub('duration = "12s"', 'duration = "2000000s"'), ["at most 1000000"]),
    # names
    ("task-named-idle", BASE + TASK.format(name="idle"), ["[tasks #1] name: 'idle' is reserved"]),
    ("task-named-isr_rx", BASE + TASK.format(name="isr_rx"), ["'isr_rx' is reserved"]),
    ("task-named-idle_core1", BASE + TASK.format(name="idle_core1"), ["'idle_core1' is reserved"]),
    ("task-named-critical", BASE + TASK.format(name="critical"), ["'critical' is reserved"]),
    ("task-name-comma", BASE + TASK.format(name="a,b"), ["[tasks #1] name", "not a valid task"]),
    ("flow-name-newline", _sub('name = "flood"', 'name = "fl\\nood"'),
     ["[flows #1] name", "not a valid flow name"]),
    ("flow-name-empty", _sub('name = "flood"', 'name = ""'), ["not a valid flow name"]),
    ("flow-name-too-long", _sub('name = "flood"', f'name = "{"f" * 65}"'),
     ["not a valid flow name"]),
    ("scenario-name-control-char", _sub('name = "constant_flood"', 'name = "a\\u0007b"'),
     ["[scenario] name", "control characters"]),
    # duplicates and contradictions
    ("duplicate-flow", BASE + FLOW.format(name="flood"), ["'flood' is used by two flows"]),
    ("duplicate-task", BASE + TASK.format(name="bg") + TASK.format(name="bg"),
     ["[tasks #2] name: 'bg' is already taken"]),
    ("worker-without-flow", BASE + '\n[[tasks]]\nname = "w"\nkind = "worker"\npriority = 1\n'
     'flow = "nope"\nwork = "1us"\n', ["tasks.w.flow: no flow named 'nope'"]),
    ("mitigation-foreign-param", _sub('kind = "queue"', 'kind = "queue"\ncapacity = 5'),
     ["[mitigation] capacity: is a parameter of burst"]),
    ("unknown-platform", _sub('platform = "esp32-freertos"', 'platform = "pdp11"'),
     ["unknown preset 'pdp11'"]),
    ("pattern-changes-too-often", _sub('step_every = "10s"', 'step_every = "1ms"').replace(
        'rates = ["60000pps", "0pps"]', "rates = [" + ", ".join(['"1kHz"', '"2kHz"'] * 32) + "]"),
     ["changes rate", "at most 64"]),
]

SYS_TASK = '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 1\n'
SYSTEM_CASES = [
    ("sys-toml-syntax", "[[task]\n", ["not valid TOML"]),
    ("sys-not-utf8", b"\xff\xfe[system]\n", ["not UTF-8 text"]),
    ("sys-nested", "x = " + "[" * 3000 + "]" * 3000 + "\n", ["nested more than"]),
    ("sys-bigint", SYS_TASK.replace("priority = 1", "priority = " + "1" * 4000),
     ["more than 20 digits"]),
    ("sys-negative-priority", SYS_TASK.replace("priority = 1", "priority = -1"),
     ["task.t.priority: must be at least 0"]),
    ("sys-priority-256", SYS_TASK.replace("priority = 1", "priority = 256"),
     ["task.t.priority: must be at most 255"]),
    ("sys-negative-tick-priority", "[system]\ntick_priority = -5\n" + SYS_TASK,
     ["system.tick_priority: must be at least 0"]),
    ("sys-zero-period", SYS_TASK.replace('period = "10ms"', 'period = "0ms"'),
     ["task.t.period: must be positive"]),
    ("sys-duration-no-unit", SYS_TASK.replace('wcet = "1ms"', "wcet = 1"),
     ["task.t.wcet", "with a unit"]),
    ("sys-bad-name", SYS_TASK.replace('name = "t"', 'name = "a.b"'),
     ["task[0].name: 'a.b' is not a valid name"]),
    ("sys-duplicate-name", SYS_TASK + SYS_TASK, ["task.t.name: the name 't' is used twice"]),
    ("sys-unknown-section", "[sytem]\n" + SYS_TASK, ["sytem: unknown section"]),
    ("sys-scenario-given", BASE, ["scenario file for 'rtshield run'"]),
    ("sys-burst-zero", '[[source]]\nname = "x"\nmodel = "bursty"\nburst = 0\n'
     'burst_rate = "1kHz"\n', ["source.x.burst: must be at least 1"]),
    ("sys-oversized", "# x\n" * (MAX_FILE_BYTES // 4 + 1), ["larger than the limit"]),
]


def _snapshot(d: Path) -> dict[str, tuple[bytes, int]]:
    if not d.exists():
        return {}
    return {
        str(p.relative_to(d)): (p.read_bytes() if p.is_file() else b"<dir>", p.stat().st_mtime_ns)
        for p in sorted(d.rglob("*"))
    }


@pytest.fixture
def earlier_out(tmp_path):
    """An output folder of an earlier run (marker, results) with a user's file in it."""
    out = tmp_path / "out"
    (out / "runs" / "old").mkdir(parents=True)
    (out / ".rtshield-out").write_text("# written by rtshield\nfile " + "0" * 64 + " x.json\n")
    (out / "summary.json").write_text('{"earlier": true}\n')
    (out / "notes.txt").write_text("the user's notes\n")
    (out / "runs" / "old" / "summary.json").write_text("{}\n")
    return out


#: Work a refusal must come before: simulations started, output folders opened.
WORK = {"simulations": 0, "output folders": 0}


@pytest.fixture(autouse=True)
def count_work(monkeypatch):
    """Count the work a command starts (in this process): a refused input must
    start none. Counting, not timing, so a loaded machine cannot fail it."""
    from rtshield import engine, outputs

    for k in WORK:
        WORK[k] = 0
    real_sim, real_begin = engine.simulate, outputs._begin

    def sim(*a, **k):
        WORK["simulations"] += 1
        return real_sim(*a, **k)

    def begin(*a, **k):
        WORK["output folders"] += 1
        return real_begin(*a, **k)

    monkeypatch.setattr(engine, "simulate", sim)
    monkeypatch.setattr(outputs, "_begin", begin)


def refused(capsys, argv, needles):
    for k in WORK:
        WORK[k] = 0
    rc = cli.main([str(a) for a in argv])
    cap = capsys.readouterr()
    assert rc == 2, cap.err
    lines = cap.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), cap.err
    assert "Traceback" not in cap.err
    assert len(lines[0]) <= 1100
    for n in needles:
        assert n in lines[0], lines[0]
    assert WORK == {"simulations": 0, "output folders": 0}, (WORK, lines[0])
    return lines[0]


def scenario_verbs(path: Path, out: Path) -> list[list]:
    return [
        ["run", path, "--out", out],
        ["compare", SCENARIO, path, "--out", out],
        ["sweep", path, "--set", "detect.fill_high=5,6", "--out", out],
    ]


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    f = tmp_path / name
    if isinstance(content, bytes):
        f.write_bytes(content)
    else:
        f.write_text(content)
    return f


@pytest.mark.parametrize("case", SCENARIO_CASES, ids=[c[0] for c in SCENARIO_CASES])
def test_bad_scenario_is_one_line_and_touches_nothing(tmp_path, capsys, earlier_out, case):
    name, content, needles = case
    f = _write(tmp_path, "bad.toml", content)
    before = _snapshot(earlier_out)
    for verb in range(3):
        argv = scenario_verbs(f, earlier_out)[verb]
        line = refused(capsys, argv, needles)
        assert "bad.toml" in line
        assert _snapshot(earlier_out) == before, argv[0]
        fresh = tmp_path / f"fresh{verb}"
        refused(capsys, scenario_verbs(f, fresh)[verb], needles)
        assert not fresh.exists(), argv[0]


@pytest.mark.parametrize("case", SYSTEM_CASES, ids=[c[0] for c in SYSTEM_CASES])
@pytest.mark.parametrize("verb", ["analyze", "design"])
def test_bad_system_is_one_line(tmp_path, capsys, case, verb):
    name, content, needles = case
    f = _write(tmp_path, "sys.toml", content)
    line = refused(capsys, [verb, f], needles)
    assert "sys.toml" in line


# ---------------------------------------------------------------- not regular files


def _all_verbs(path, out):
    return scenario_verbs(path, out) + [["analyze", path], ["design", path]]


@pytest.mark.parametrize("verb", range(5))
def test_fifo_is_refused_without_reading_it(tmp_path, capsys, earlier_out, verb):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    before = _snapshot(earlier_out)
    refused(capsys, _all_verbs(fifo, earlier_out)[verb], ["pipe.toml", "is a FIFO"])
    assert _snapshot(earlier_out) == before


@pytest.mark.parametrize("verb", range(5))
def test_symlink_to_a_fifo_is_refused(tmp_path, capsys, verb):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.toml"
    link.symlink_to(fifo)
    refused(capsys, _all_verbs(link, tmp_path / "o")[verb], ["link.toml", "is a FIFO"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", range(5))
def test_dev_zero_is_refused(tmp_path, capsys, verb):
    refused(capsys, _all_verbs("/dev/zero", tmp_path / "o")[verb], ["/dev/zero", "is a device"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", range(5))
def test_symlink_loop_is_refused(tmp_path, capsys, verb):
    loop = tmp_path / "loop.toml"
    loop.symlink_to(tmp_path / "loop2.toml")
    (tmp_path / "loop2.toml").symlink_to(loop)
    refused(capsys, _all_verbs(loop, tmp_path / "o")[verb], ["loop.toml", "a symbolic link loop"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", range(5))
def test_directory_is_refused(tmp_path, capsys, verb):
    d = tmp_path / "dir.toml"
    d.mkdir()
    refused(capsys, _all_verbs(d, tmp_path / "o")[verb], ["dir.toml", "is a directory"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", range(5))
def test_missing_file_is_refused(tmp_path, capsys, verb):
    refused(capsys, _all_verbs(tmp_path / "nope.toml", tmp_path / "o")[verb],
            ["nope.toml", "no such"])
    assert not (tmp_path / "o").exists()


def test_sparse_multi_gigabyte_file_is_refused_at_once(tmp_path, capsys):
    f = tmp_path / "huge.toml"
    with open(f, "wb") as fh:
        fh.truncate(3 << 30)  # 3 GiB, sparse: nothing is read
    for argv in _all_verbs(f, tmp_path / "o"):
        refused(capsys, argv, ["huge.toml", "larger than the limit of 1 MiB"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text, line", [
    ("a = 1\nb = " + "1" * 21 + "\n", 2),
    ("a = 1\nb = " + "1_" * 10 + "1\n", 2),  # underscores between digits count
    ("b = " + "1" * 20 + "\n", None),  # 20 digits: read
    ('s = "' + "1" * 30 + '"\nt = \'' + "2" * 30 + "'\n", None),  # inside strings
    ("# " + "1" * 30 + "\n", None),  # in a comment
    ('m = """\n' + "1" * 30 + '\\\n"""\nn = ' + "3" * 22 + "\n", 4),  # line-ending backslash
    ("m = '''\n" + "1" * 30 + "\n'''\nn = " + "3" * 22 + "\n", 4),
    ('s = "a\\"' + "1" * 30 + '"\n', None),  # an escaped quote does not end the string
    ('s = "open\nn = ' + "4" * 22 + "\n", 2),  # an open string ends at its line
])
def test_long_integers_are_found_outside_strings_and_comments(text, line):
    from rtshield.tomlfile import parse_toml

    if line is None:
        parse_toml(text, "x.toml")
        return
    with pytest.raises(UsageError) as e:
        parse_toml(text, "x.toml")
    msg = str(e.value)
    assert msg.startswith(f"x.toml: a number of more than 20 digits (line {line})"), msg


# ---------------------------------------------------------------- --set values


@pytest.mark.parametrize("value, needles", [
    ("[" * 3000 + "]" * 3000, ["--set: driver.queue", "at most 4096"]),
    ("[" * 50 + "]" * 50, ["--set: driver.queue", "nested more than"]),
    ("9" * 5000, ["--set: driver.queue", "at most 4096"]),
    ("9" * 30, ["--set: driver.queue", "more than 20 digits"]),
    ("0x" + "f" * 40, ["--set: driver.queue", "beyond 128 bits"]),
    ("-4", ["--set: [driver] queue: must be at least 1"]),
])
def test_hostile_set_values(tmp_path, capsys, value, needles):
    refused(capsys, ["run", SCENARIO, "--out", tmp_path / "o", "--set", f"driver.queue={value}"],
            needles)
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- generated variants

_NAME_RE = re.compile(NAME_RULE)
#: No example is too slow: hypothesis' time checks fail under load, they measure no
#: promise of rtshield's (speed is measured in bench/).
SLOW_OK = [HealthCheck.too_slow]

_junk = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=30),
    st.sampled_from(["10ms", "0s", "-1s", "1e400s", "5kHz", "0pps", "1e-300pps", "?", "",
                     "idle", "a,b", "1" * 80]),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=3),
)


_KEY_LINES = key_lines(BASE)


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(line=st.sampled_from(_KEY_LINES), value=_junk)
def test_any_value_anywhere_loads_or_is_one_line(line, value):
    try:
        loads_scenario(with_value(BASE, line, value), "gen.toml")
    except UsageError as e:
        msg = str(e)
        # the file, or the preset when a default it gives clashes with the value
        assert msg.startswith("gen.toml") or "platforms" in msg.split(":")[0], msg
        assert "\n" not in msg and len(msg) < 1100, msg


@settings(max_examples=150, deadline=None, suppress_health_check=SLOW_OK)
@given(name=st.text(min_size=0, max_size=70))
def test_flow_and_task_names_follow_the_rule(name):
    import json

    low = name.lower()
    identifier = (_NAME_RE.fullmatch(name) is not None
                  and low not in ("critical", "driver", "polling", "idle")
                  and not low.startswith("isr_")
                  and re.fullmatch(r"idle_core[0-9]+", low) is None)
    for template, section, taken in ((FLOW, "flows #2", "flood"), (TASK, "tasks #1", None)):
        text = BASE + template.format(name="PLACEHOLDER").replace(
            '"PLACEHOLDER"', json.dumps(name))
        valid = identifier and name != taken
        try:
            loads_scenario(text, "gen.toml")
        except UsageError as e:
            assert not valid, (name, str(e))
            assert f"[{section}] name" in str(e) or "TOML" in str(e), str(e)
        else:
            assert valid, name


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW_OK)
@given(data=st.binary(max_size=2000))
def test_random_bytes_load_or_are_one_line(tmp_path_factory, data):
    f = tmp_path_factory.mktemp("b") / "x.toml"
    f.write_bytes(data)
    try:
        load_scenario(f)
    except UsageError as e:
        assert "\n" not in str(e) and str(e).startswith(str(f)), str(e)


@settings(max_examples=60, deadline=None, suppress_health_check=SLOW_OK)
@given(depth=st.integers(min_value=1, max_value=4000),
       opener=st.sampled_from(["[", "{a = "]))
def test_any_nesting_depth_loads_or_is_one_line(depth, opener):
    closer = "]" if opener == "[" else "}"
    text = BASE + "\n[bogus]\nx = " + opener * depth + "1" + closer * depth + "\n"
    with pytest.raises(UsageError) as e:
        loads_scenario(text, "gen.toml")
    assert "nested more than" in str(e.value) or "[bogus]: unknown section" in str(e.value)


@settings(max_examples=80, deadline=None, suppress_health_check=SLOW_OK)
@given(line=st.integers(min_value=0, max_value=len(SYS_BASE.splitlines()) - 1), value=_junk)
def test_system_values_load_or_are_one_line(tmp_path_factory, line, value):
    from rtshield.analysis import load_system

    lines = SYS_BASE.splitlines()
    if " = " not in lines[line] or lines[line].lstrip().startswith("#"):
        return
    f = tmp_path_factory.mktemp("s") / "sys.toml"
    f.write_text(with_value(SYS_BASE, line, value))
    try:
        load_system(f)
    except UsageError as e:
        assert "\n" not in str(e) and str(e).startswith(str(f)), str(e)


# ---------------------------------------------------------------- validate first, then run


def test_compare_validates_every_file_before_creating_out(tmp_path, capsys):
    """A file the engine refuses (too many rate changes) stops compare before anything."""
    bad = _write(tmp_path, "late.toml", dict((c[0], c[1]) for c in SCENARIO_CASES)[
        "pattern-changes-too-often"])
    out = tmp_path / "o"
    refused(capsys, ["compare", SCENARIO, bad, "--out", out], ["late.toml", "changes rate"])
    assert not out.exists()


def test_compare_refuses_a_foreign_run_folder_before_creating_anything(tmp_path, capsys):
    out = tmp_path / "o"
    (out / "runs" / "constant_flood").mkdir(parents=True)
    (out / "runs" / "constant_flood" / "mine.txt").write_text("x")
    (out / ".rtshield-out").write_text("# earlier\n")
    before = _snapshot(out)
    other = _write(tmp_path, "other.toml", _sub('name = "constant_flood"', 'name = "other"'))
    refused(capsys, ["compare", other, SCENARIO, "--out", out],
            ["runs/constant_flood is not empty"])
    assert _snapshot(out) == before


def test_sweep_validates_every_point_before_creating_out(tmp_path, capsys):
    out = tmp_path / "o"
    refused(capsys, ["sweep", SCENARIO, "--set", "driver.queue=10,0", "--out", out],
            ["[driver] queue: must be at least 1", "(in point queue=0)"])
    assert not out.exists()


# ---------------------------------------------------------------- Ctrl-C and the progress bar


def test_engine_results_do_not_depend_on_the_slicing(monkeypatch):
    from rtshield import engine
    from rtshield.outputs import format_summary_json, timeseries_csv

    sc = load_scenario(REPO / "scenarios" / "examples" / "modbus_with_flood.toml",
                       {"scenario": {"duration": "2s", "bin": "100ms"}})

    def digest():
        r = engine.simulate(sc, trace=20)
        fields = b"".join(r.trace[k].tobytes() for k in r.trace.dtype.names)
        return format_summary_json(r.summary()), timeseries_csv(r.timeseries), fields

    plain = digest()
    monkeypatch.setattr(engine, "CHUNK_WALL_S", 1e-9)  # every slice "too slow": the smallest
    monkeypatch.setattr(engine, "_FIRST_STEP_NS", 123_457)
    monkeypatch.setattr(engine, "_MIN_STEP_NS", 77_777)
    assert digest() == plain


def _interrupt_run(tmp_path, *sets, env=None, sig=None, inherit_ignored=False):
    """Start a long run, interrupt it once it simulates: (exit, stderr). Waited for
    by what the run shows (its staging folder; with a progress bar, the bar), not
    by the clock; a child that shows nothing, or does not end after the signal,
    fails the test as a hang. ``inherit_ignored``: the run starts with SIGINT
    ignored, as a background job of a script starts it."""
    import signal
    import subprocess
    import sys
    import threading

    flood = BASE.replace('rates = ["60000pps", "0pps"]', 'rates = ["60000pps"]')
    f = _write(tmp_path, "long.toml", flood)
    out = tmp_path / "o"
    staging = tmp_path / ".o.rtshield-staging"
    env = dict(os.environ, **(env or {}))
    bar = env.get("RTSHIELD_PROGRESS") == "1"
    p = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "run", str(f), "--out", str(out), *sets],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        if inherit_ignored else None)
    chunks: list[bytes] = []
    reader = threading.Thread(
        target=lambda: chunks.extend(iter(lambda: os.read(p.stderr.fileno(), 4096), b"")),
        daemon=True)
    reader.start()

    def simulating() -> bool:
        return staging.exists() and (not bar or b"s simulated" in b"".join(chunks))

    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while not simulating() and p.poll() is None:
            if time.monotonic() > deadline:
                pytest.fail(f"hang: the run showed no progress within {HANG_GUARD_S} s")
            time.sleep(0.05)
        assert simulating(), f"the run ended before simulating: {b''.join(chunks)!r}"
        if not bar:
            time.sleep(1.0)  # let it get into the simulation (no bar to wait for)
        p.send_signal(signal.SIGINT if sig is None else sig)
        try:
            p.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"hang: the run did not end within {HANG_GUARD_S} s of the signal")
        reader.join(HANG_GUARD_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()
    # all or nothing: no results, no staging folder, no lock left behind
    assert not out.exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["long.toml"]
    return p.returncode, b"".join(chunks).decode()


def test_ctrl_c_in_one_long_bin_ends_the_run(tmp_path):
    """One bin of an hour: Ctrl-C still ends the run (exit 130, one line)."""
    rc, err = _interrupt_run(
        tmp_path, "--set", "scenario.duration=3600s", "--set", "scenario.bin=3600s")
    assert rc == 130 and err.strip() == "rtshield: interrupted", err


def test_ctrl_c_ends_a_run_started_with_sigint_ignored(tmp_path):
    """A background job of a script starts with SIGINT ignored: a SIGINT sent to the
    run still ends it, all or nothing (exit 130, one line, no --out)."""
    rc, err = _interrupt_run(tmp_path, "--set", "scenario.duration=3600s", inherit_ignored=True)
    assert rc == 130 and err.strip() == "rtshield: interrupted", err


def test_the_engine_returns_to_python_within_a_bin(monkeypatch):
    """Why Ctrl-C is noticed at once: the engine runs in slices that it shrinks when
    one takes too long, so an interrupt raised between two slices of a one-hour bin
    stops it there. Counted: a fake clock says every slice was slow; the interrupt
    comes at the 50th slice, long before the bin (and the run) ends."""
    from rtshield import engine

    sc = load_scenario(SCENARIO, {"scenario": {"duration": "3600s", "bin": "3600s"}})
    slices = {"n": 0}

    class Clock:
        t = 0.0

        @classmethod
        def perf_counter(cls):
            cls.t += 1.0  # every slice "took" seconds
            slices["n"] += 1
            if slices["n"] == 100:  # two readings per slice
                raise KeyboardInterrupt
            return cls.t

    monkeypatch.setattr(engine, "time", Clock)
    seen = []
    with pytest.raises(KeyboardInterrupt):
        engine.simulate(sc, progress=lambda done, total: seen.append(done))
    assert slices["n"] == 100 and seen == []  # stopped inside the first (only) bin


def test_interrupted_progress_bar_does_not_claim_100_percent(tmp_path):
    rc, err = _interrupt_run(tmp_path, "--set", "scenario.duration=3600s",
                             env={"RTSHIELD_PROGRESS": "1"})
    assert rc == 130 and err.rstrip().endswith("rtshield: interrupted"), err
    assert "Traceback" not in err
    bars = [b for b in err.split("\r") if "s simulated" in b]
    assert bars, err  # the bar was drawn
    assert "run constant_flood: simulating" in bars[0], bars[0]  # it names the phase
    # its last line says what happened, at the point reached: not 100 %, not done
    assert "interrupted" in bars[-1], bars[-1]
    assert "100.0%" not in bars[-1] and "3,600/3,600" not in bars[-1], bars[-1]
    assert "done" not in err


def test_sigterm_unwinds_like_ctrl_c(tmp_path):
    """SIGTERM: the bar says "interrupted", one line, exit 143 (128 + SIGTERM), and —
    all or nothing — no output folder, staging folder or lock is left."""
    import signal

    rc, err = _interrupt_run(tmp_path, "--set", "scenario.duration=3600s",
                             env={"RTSHIELD_PROGRESS": "1"}, sig=signal.SIGTERM)
    assert rc == 128 + signal.SIGTERM and err.rstrip().endswith("rtshield: interrupted"), err
    assert "Traceback" not in err
    assert "interrupted" in [b for b in err.split("\r") if "s simulated" in b][-1]
