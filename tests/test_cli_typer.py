"""The typer command line: click's mistakes as one line, the common options on every verb."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield import cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "scenarios" / "examples"
MODBUS = EXAMPLES / "modbus_with_flood.toml"
SYSTEM = REPO / "scenarios" / "analysis" / "textbook_three_tasks.toml"

VERBS = ["analyze", "calibrate", "compare", "demo", "design", "rig", "run", "schema", "server",
         "sweep"]


def one_line(capsys, argv, *needles):
    rc = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    assert rc == 2, out.err
    lines = out.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), out.err
    assert "Traceback" not in out.err and out.out == ""
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["run", MODBUS, "--out", "o", "--bogus"], ["run:", "no such option: --bogus"]),
        (["compare", MODBUS, MODBUS, "--out", "o", "--frobnicate", "3"], ["--frobnicate"]),
        (["run", MODBUS], ["run:", "missing option '--out'"]),
        (["demo"], ["demo:", "'--out'"]),
        (["run", "--out", "o"], ["missing argument 'SCENARIO'"]),
        (["compare", MODBUS, MODBUS, "--out", "o", "--jobs", "two"], ["'--jobs'", "integer"]),
        (["demo", "--out", "o", "--jobs", "1.5"], ["'--jobs'"]),
        (["run", MODBUS, "--out", "o", "--seed", "-1"], ["'--seed'"]),
        (["run", MODBUS, "--out", "o", "--seed", "x"], ["'--seed'"]),
        (["demo", "--out", "o", "--study", "nope"], ["'--study'", "nope", "danicki"]),
        (["analyze"], ["analyze:", "SYSTEM"]),
        (["analyze", SYSTEM, "--seed", "3"], ["--seed applies to a scenario"]),
        (["bogus"], ["no such command 'bogus'"]),
        (["--bogus"], ["--bogus"]),
        ([], ["a command is required"]),
        (["sweep", MODBUS, "--out", "o", "--jobs", "x"], ["sweep:", "--jobs"]),
        (["sweep", MODBUS, "--out", "o", "--seed", "-4"], ["sweep:", "--seed"]),
        (["sweep", MODBUS], ["sweep:", "--out"]),
        (["calibrate", "c.toml", "--out", "o", "--budget", "many"], ["calibrate:", "'--budget'"]),
        (["rig", "linux", "--out", "o", "--nope"], ["rig linux:", "no such option: --nope"]),
        (["rig", "linux", "--out", "o", "--load", "x"], ["rig linux:", "'--load'", "both"]),
        (["rig"], ["a target is required"]),
    ],
)
def test_usage_mistakes_are_one_line(capsys, argv, needles):
    one_line(capsys, argv, *needles)


def test_nothing_written_on_a_usage_mistake(tmp_path, capsys):
    out = tmp_path / "o"
    one_line(capsys, ["run", MODBUS, "--out", out, "--jobs", "2"], "--jobs")
    assert not out.exists()


@pytest.mark.parametrize("verb", VERBS)
def test_help_of_every_verb(verb):
    p = subprocess.run([sys.executable, "-m", "rtshield", verb, "--help"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert "--help" in p.stdout
    if verb not in ("rig", "server"):  # their examples: in their subcommands' help too
        assert "--verbose" in p.stdout and "example" in p.stdout


@pytest.mark.parametrize("target", ["linux", "freertos-tcp", "report", "clean"])
def test_every_rig_target_has_help_and_the_common_flags(capsys, target):
    from rtshield import clitools

    assert cli.main(["rig", target, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--verbose" in text and " ".join(clitools.VERBOSE_HELP.split()) in text
    assert "--quiet" in text and "example" in text


def _argparse_verb():
    """A module defining a verb the argparse way (``register``), as older branches do."""
    import types

    seen = {}

    def handle(args):
        seen.update(vars(args))
        print(f"n={args.n}")
        return 0

    def register(sub):
        p = sub.add_parser("hello", help="say hello", description="Say hello N times.")
        p.add_argument("--n", type=int, default=1)
        p.add_argument("--set", action="append", default=[])
        p.set_defaults(handler=handle)

    return types.SimpleNamespace(register=register), seen


def test_an_argparse_verb_still_mounts(monkeypatch, capsys):
    from rtshield import clitools

    mod, seen = _argparse_verb()
    build = cli.build_app

    def with_hello(*args, **kwargs):
        app = build(*args, **kwargs)
        clitools.mount_argparse(app, mod)
        return app

    monkeypatch.setattr(cli, "build_app", with_hello)
    assert cli.main(["hello", "--n", "3", "--seed", "5", "--quiet"]) == 0
    assert capsys.readouterr().out == ""  # --quiet, added by the adapter
    assert seen["n"] == 3 and seen["set"] == ["scenario.seed=5"] and seen["quiet"] is True
    assert cli.main(["hello", "--n", "3"]) == 0
    assert capsys.readouterr().out == "n=3\n"
    one_line(capsys, ["hello", "--n", "x"], "hello:", "--n", "invalid int value")
    one_line(capsys, ["hello", "--seed", "-2"], "hello:", "--seed")
    assert cli.main(["--help"]) == 0
    assert "say hello" in capsys.readouterr().out


def test_ctrl_c_while_the_command_line_is_parsed_is_an_interruption(monkeypatch, capsys):
    """typer turns a KeyboardInterrupt in its parsing into exit status 130 silently: the
    line is said all the same (the first moments of a command, served or not)."""
    from typer import core

    def interrupted(self, ctx, args):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.TyperGroup, "parse_args", interrupted)
    assert cli.main(["run", "x.toml", "--out", "o"]) == 130
    out = capsys.readouterr()
    assert out.err == "rtshield: interrupted\n" and out.out == ""


def test_top_help_lists_every_verb(capsys):
    assert cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    for verb in VERBS:
        assert f"  {verb} " in text, verb


def test_demo_help_names_every_study_and_its_authors(capsys):
    """`rtshield --help` gives demo's one line with every study's authors (STUDIES: "AUTHORS
    (VENUE) §N: …" or "AUTHORS §N: …"); `demo --help` describes every study by its name."""
    from rtshield.studies import STUDIES

    assert cli.main(["--help"]) == 0
    top = " ".join(capsys.readouterr().out.split())
    line = top[top.index(" demo "):top.index(" design ")]
    for title in STUDIES.values():
        authors = title.split(" (")[0].split(" §")[0]
        assert authors in line, (authors, line)
    assert cli.main(["demo", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for name in STUDIES:
        assert f"{name}: " in text, name


@pytest.mark.parametrize(
    "verb, flags",
    [
        ("run", ["--out", "--quiet", "--verbose", "--seed"]),
        ("compare", ["--out", "--quiet", "--verbose", "--jobs", "--seed"]),
        ("demo", ["--out", "--quiet", "--verbose", "--jobs", "--seed"]),
        ("sweep", ["--out", "--quiet", "--verbose", "--jobs", "--seed"]),
        ("calibrate", ["--out", "--quiet", "--verbose", "--jobs"]),
        ("analyze", ["--quiet", "--verbose", "--seed"]),
        ("design", ["--quiet", "--verbose", "--seed"]),
    ],
)
def test_common_flags_share_one_help_text(capsys, verb, flags):
    from rtshield import clitools

    assert cli.main([verb, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in flags:
        assert flag in text, flag
    for flag, help_text in [("--quiet", clitools.QUIET_HELP), ("--verbose", clitools.VERBOSE_HELP),
                            ("--seed", clitools.SEED_HELP)]:
        if flag in flags:
            assert " ".join(help_text.split()) in text, flag


def short(tmp_path, src=MODBUS, duration="2s"):
    text = src.read_text()
    head, rest = text.split("duration = ", 1)
    dst = tmp_path / src.name
    dst.write_text(f'{head}duration = "{duration}"\n{rest.split(chr(10), 1)[1]}')
    return dst


def test_quiet_prints_nothing(tmp_path, capfd):
    scn = short(tmp_path)
    assert cli.main(["run", str(scn), "--out", str(tmp_path / "q"), "--quiet"]) == 0
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""
    assert (tmp_path / "q" / "summary.json").is_file()
    assert cli.main(["run", str(scn), "--out", str(tmp_path / "loud")]) == 0
    assert "results:" in capfd.readouterr().out


def test_quiet_compare_prints_nothing(tmp_path, capfd):
    scn = short(tmp_path)
    (tmp_path / "b").mkdir()
    other = short(tmp_path / "b")
    rc = cli.main(["compare", str(scn), str(other), "--out", str(tmp_path / "c"), "--jobs", "1",
                   "--quiet"])
    assert rc == 0
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""
    assert (tmp_path / "c" / "report.html").is_file()


def test_verbose_logs_on_stderr_not_stdout(tmp_path, capfd):
    scn = short(tmp_path)
    assert cli.main(["run", str(scn), "--out", str(tmp_path / "v"), "--verbose", "--quiet"]) == 0
    out = capfd.readouterr()
    assert out.out == ""
    assert "rtshield: debug: " in out.err and "seed 42" in out.err


def test_seed_overrides_the_file_and_is_deterministic(tmp_path):
    scn = short(tmp_path)
    runs = {}
    for name, extra in [("a", ["--seed", "7"]), ("b", ["--seed", "7"]),
                        ("c", ["--set", "scenario.seed=7"]), ("d", [])]:
        argv = ["run", str(scn), "--out", str(tmp_path / name), "--quiet", *extra]
        assert cli.main(argv) == 0
        runs[name] = (tmp_path / name / "summary.json").read_bytes()
    assert runs["a"] == runs["b"] == runs["c"]
    assert json.loads(runs["a"])["seed"] == 7 and json.loads(runs["d"])["seed"] == 42
    assert runs["a"] != runs["d"]


def test_seed_wins_over_set(tmp_path):
    scn = short(tmp_path)
    argv = ["run", str(scn), "--out", str(tmp_path / "o"), "--quiet", "--seed", "9",
            "--set", "scenario.seed=8"]
    assert cli.main(argv) == 0
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["seed"] == 9
