"""Diagnostics through :mod:`logging`: warnings always on stderr, ``--verbose`` adds the
debug lines (what is read and written, each phase with its time); errors stay one line."""

import logging
import subprocess
import sys
from pathlib import Path

from rtshield import clitools

REPO = Path(__file__).resolve().parent.parent
Q500 = REPO / "scenarios" / "danicki2021" / "queue_500.toml"


def test_a_warning_reaches_stderr_without_verbose_and_debug_does_not(capsys):
    def handle(args):
        logging.getLogger("rtshield.something").warning("a key is deprecated")
        logging.getLogger("rtshield.something").debug("a detail")
        return 0

    assert clitools.dispatch("x", handle, verbose=False) == 0
    assert capsys.readouterr().err == "rtshield: warning: a key is deprecated\n"
    assert clitools.dispatch("x", handle, verbose=True) == 0
    err = capsys.readouterr().err
    assert "rtshield: warning: a key is deprecated\n" in err
    assert "rtshield: debug: a detail\n" in err
    # the CLI's handler is gone afterwards: nothing left behind in the process
    assert not [h for h in logging.getLogger("rtshield").handlers
                if getattr(h, "_rtshield_cli", False)]


def test_verbose_logs_each_phase_and_quiet_run_logs_nothing(tmp_path):
    def rtshield(*a):
        return subprocess.run([sys.executable, "-m", "rtshield", "run", str(Q500), "--set",
                               "scenario.duration=2s", "--no-figures", *map(str, a)],
                              capture_output=True, text=True, timeout=300)

    p = rtshield("--out", tmp_path / "v", "--verbose")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert all(ln.startswith("rtshield: debug: ") for ln in lines), lines
    text = "\n".join(lines)
    for needle in ("queue_500, seed", "writing into", "run queue_500: simulating",
                   "run queue_500: writing the report", "run queue_500: done"):
        assert needle in text, needle
    p = rtshield("--out", tmp_path / "q")
    assert p.returncode == 0 and "debug" not in p.stderr


def test_bad_input_stays_one_line_with_verbose(tmp_path):
    p = subprocess.run([sys.executable, "-m", "rtshield", "run", str(Q500), "--set",
                        "driver.queue=-3", "--out", str(tmp_path / "o"), "--verbose"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    errors = [ln for ln in p.stderr.splitlines() if not ln.startswith("rtshield: debug: ")]
    assert len(errors) == 1 and errors[0].startswith("rtshield: error: ")
    assert "[driver] queue" in errors[0] and "Traceback" not in p.stderr
