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


def test_broken_pipe_is_not_a_traceback():
    # `rtshield --help | head -1`: the reader closes the pipe early.
    proc = subprocess.run(
        "rtshield --help | head -c 10 >/dev/null",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in proc.stderr
