"""``--quiet`` on every verb: nothing on stdout or stderr — no table, no progress bar,
even when the bar is forced on (RTSHIELD_PROGRESS=1) — and the work still done.

(``rig`` needs root and a target; its verbs take ``--quiet`` through the same
``dispatch``, checked by tests/test_cli_typer.py.)
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SC = REPO / "scenarios"
Q100 = SC / "danicki2021" / "queue_100.toml"
Q500 = SC / "danicki2021" / "queue_500.toml"


def rtshield(*args):
    env = dict(os.environ, RTSHIELD_PROGRESS="1")  # a bar would be drawn without --quiet
    return subprocess.run([sys.executable, "-m", "rtshield", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=600)


# (verb arguments, the exit status, a file the work writes into --out (None: no --out))
CASES = {
    "run": (["run", Q500, "--set", "scenario.duration=3s"], 0, "summary.json"),
    "compare": (["compare", Q100, Q500, "--set", "scenario.duration=2s"], 0, "comparison.json"),
    "sweep": (["sweep", Q500, "--set", "driver.queue=5,200", "--set", "scenario.duration=2s",
               "--jobs", "1"], 0, "sweep.csv"),
    "demo": (["demo", "--study", "danicki", "--set", "scenario.duration=2s"], 0, "report.html"),
    "calibrate": (["calibrate", SC / "calibration" / "danicki2021_short_pyramid.toml",
                   "--budget", "2"], 0, "best.toml"),
    "analyze": (["analyze", SC / "analysis" / "textbook_three_tasks.toml"], 0, None),
    "design": (["design", "--scenario", SC / "examples" / "behnke_hp_with_flood.toml", "--knob",
                "flow.hp.server", "--rate", "1000pps"], 0, None),
}


@pytest.mark.parametrize("verb", list(CASES))
def test_quiet_prints_nothing_and_does_the_work(tmp_path, verb):
    args, rc, product = CASES[verb]
    out = tmp_path / "o"
    extra = ["--out", out] if product else []
    loud = None
    if product is None:  # no files: the same command without --quiet prints its answer
        loud = rtshield(*args)
        assert loud.returncode == rc and loud.stdout.strip(), loud.stderr
    p = rtshield(*args, *extra, "--quiet")
    assert p.returncode == rc, p.stderr
    assert p.stdout == "" and p.stderr == "", (p.stdout, p.stderr)
    if product:
        assert (out / product).is_file()


def test_without_quiet_the_bar_and_the_table_are_there(tmp_path):
    """The counterpart of the test above: the same run, not quiet, shows both."""
    p = rtshield(*CASES["run"][0], "--out", tmp_path / "o")
    assert p.returncode == 0
    assert "packets processed" in p.stdout
    assert "run queue_500: done" in p.stderr and "100.0%" in p.stderr
