import subprocess
import sys

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


def _fake_parser(handler):
    """A parser with one positional verb whose handler is `handler`."""
    import argparse

    def build():
        p = argparse.ArgumentParser(prog="rtshield")
        p.add_argument("command")
        p.set_defaults(handler=handler)
        return p

    return build


def test_broken_pipe_ends_quietly(monkeypatch):
    """A reader that closes the pipe early (`rtshield ... | head`) is not an error."""

    def handler(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "build_parser", _fake_parser(handler))
    assert cli.main(["x"]) == 0


def test_usage_error_is_one_line(monkeypatch, capsys):
    from rtshield.errors import UsageError

    def handler(args):
        raise UsageError("demo.toml: [critical] period: expected a duration")

    monkeypatch.setattr(cli, "build_parser", _fake_parser(handler))
    assert cli.main(["x"]) == 2
    err = capsys.readouterr().err
    assert err == "rtshield: error: demo.toml: [critical] period: expected a duration\n"
