import subprocess
import sys
import types

import rtshield
from rtshield import cli


def test_version_flag(capsys):
    try:
        cli.main(["--version"])
    except SystemExit as e:
        assert e.code == 0
    assert capsys.readouterr().out.strip() == f"rtshield {rtshield.__version__}"


def test_console_script_installed():
    out = subprocess.run(["rtshield", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("rtshield ")


def test_module_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "rtshield", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"rtshield {rtshield.__version__}"


def test_blas_threads_one_unless_the_user_chose(monkeypatch):
    # numpy's OpenBLAS would start a polling thread per further CPU in every process
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert cli.main(["--version"]) == 0
    import os

    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert cli.main(["--version"]) == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


SYSTEM = "scenarios/analysis/textbook_three_tasks.toml"


def test_broken_pipe_ends_quietly(monkeypatch):
    """A reader that closes the pipe early (`rtshield ... | head`) is not an error."""
    from rtshield.commands import analyze

    def handler(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(analyze, "handle", handler)
    assert cli.main(["analyze", SYSTEM]) == 0


def test_usage_error_is_one_line(monkeypatch, capsys):
    from rtshield.commands import analyze
    from rtshield.errors import UsageError

    def handler(args):
        raise UsageError("demo.toml: [critical] period: expected a duration")

    monkeypatch.setattr(analyze, "handle", handler)
    assert cli.main(["analyze", SYSTEM]) == 2
    err = capsys.readouterr().err
    assert err == "rtshield: error: demo.toml: [critical] period: expected a duration\n"


def test_ctrl_c_is_one_line_130(monkeypatch, capsys):
    from rtshield.commands import analyze

    def handler(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(analyze, "handle", handler)
    assert cli.main(["analyze", SYSTEM]) == 130
    assert capsys.readouterr().err == "rtshield: interrupted\n"


def test_ctrl_c_while_the_command_line_is_imported_is_one_line_130(monkeypatch, capsys):
    """The console entry point imports the command line after it asked for a server: a
    Ctrl-C in that import (the first half second of a command) is one line, no traceback."""
    from rtshield import entry

    class Importing(types.ModuleType):
        def __getattr__(self, name):
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "rtshield.cli", Importing("rtshield.cli"))
    monkeypatch.setenv("RTSHIELD_SERVER", "off")
    assert entry.main(["analyze", SYSTEM]) == 130
    assert capsys.readouterr().err == "rtshield: interrupted\n"


def test_output_error_exits_1(monkeypatch, capsys):
    from rtshield.commands import analyze
    from rtshield.errors import OutputError

    def handler(args):
        raise OutputError("report.html: disk full")

    monkeypatch.setattr(analyze, "handle", handler)
    assert cli.main(["analyze", SYSTEM]) == 1
    assert capsys.readouterr().err == "rtshield: error: report.html: disk full\n"
