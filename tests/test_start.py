"""A command starts at once: `rtshield --help` and `rtshield run` import only
what they use (the time it saves is measured in bench/, never here)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rtshield
from rtshield.commands import VERBS

ROOT = Path(__file__).resolve().parent.parent
Q500 = ROOT / "scenarios" / "danicki2021" / "queue_500.toml"
LIBRARIES = ("matplotlib", "pandas", "pyarrow", "jinja2", "numpy", "pydantic", "dask",
             "distributed", "optuna", "rich", "dpkt", "scipy")

PROBE = """
import json, sys
from rtshield.cli import main
rc = main(sys.argv[1:])
sys.stdout.flush()
loaded = sorted(set(m.split(".")[0] for m in sys.modules) & set(json.loads(LIBS)))
verbs = sorted(m for m in sys.modules if m.startswith("rtshield.commands."))
own = sorted(m for m in sys.modules if m.startswith("rtshield."))
print("\\nPROBE " + json.dumps(dict(rc=rc, loaded=loaded, verbs=verbs, own=own)))
"""


def _imports(*args, tmp_path=None):
    pkg = str(Path(rtshield.__file__).resolve().parent.parent)
    p = subprocess.run(
        [sys.executable, "-c", PROBE.replace("LIBS", repr(json.dumps(LIBRARIES))),
         *map(str, args)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={"PYTHONPATH": pkg, "PATH": "/usr/bin:/bin", "RTSHIELD_PROGRESS": "0"},
    )
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("PROBE ")]
    assert line, p.stdout + p.stderr
    return json.loads(line[-1][len("PROBE "):])


def test_help_imports_no_verb_and_no_library():
    got = _imports("--help")
    assert got["rc"] == 0
    assert got["verbs"] == [] and got["loaded"] == []
    # nor the output folders' machinery (hashing, temporary files): only a verb writes;
    # nor the verbs' shared options and rules: the listing needs typer alone
    assert "rtshield.outputs" not in got["own"], got["own"]
    assert "rtshield.clitools" not in got["own"], got["own"]


#: The other verbs' modules a verb's module imports for what their options share.
SHARES = {"demo": ["compare"], "design": ["analyze"], "rig": ["_rig_device"],
          "sweep": ["compare"]}
#: What a verb runs with, imported when it runs, not for its help.
RUNS_WITH = ("rtshield.outputs", "rtshield.runner", "rtshield.scenario",
             "rtshield.report", "rtshield.engine", "rtshield.analysis.system")


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_verb_help_imports_that_verb_alone_and_no_library(verb):
    got = _imports(verb, "--help")
    assert got["rc"] == 0
    # no library: not pydantic either (typer checks an absent --help flag of the
    # group with a pydantic adapter unless the flag reads False: rtshield.cliapp)
    assert got["loaded"] == []
    assert got["verbs"] == sorted(f"rtshield.commands.{v}" for v in [verb, *SHARES.get(verb, [])])
    assert not set(RUNS_WITH) & set(got["own"]), got["own"]


def test_run_without_figures_imports_what_it_writes_and_nothing_else(tmp_path):
    got = _imports("run", Q500, "--out", tmp_path / "o", "--no-figures", "--quiet")
    assert got["rc"] == 0
    assert got["verbs"] == ["rtshield.commands.run"]
    # the engine's arrays, the scenario's schema, report.html, timeseries.parquet
    assert got["loaded"] == ["jinja2", "numpy", "pyarrow", "pydantic"]


def test_run_with_figures_draws_them_in_a_worker_or_adds_matplotlib_only(tmp_path):
    got = _imports("run", Q500, "--out", tmp_path / "o", "--quiet")
    assert got["rc"] == 0
    assert (tmp_path / "o" / "packets.png").is_file()
    # with a second CPU the figures are drawn in forked workers (rtshield.runner.
    # figure_workers) and this process never imports matplotlib
    alone = len(os.sched_getaffinity(0)) < 2
    assert got["loaded"] == ["jinja2", *(["matplotlib"] if alone else []), "numpy", "pyarrow",
                             "pydantic"]


def test_the_bench_floor_lists_the_outermost_installed_libraries_a_process_imports():
    """bench/scale.py's floor imports what `-X importtime` shows a command importing
    from installed libraries: the outermost module of each chain (jinja2, not the
    markupsafe jinja2 imports itself), no standard-library module, no rtshield one."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import scale
    finally:
        sys.path.remove(str(ROOT / "bench"))
    env = {**os.environ, "PYTHONPATH": str(Path(rtshield.__file__).resolve().parent.parent)}
    got = scale._libraries([sys.executable, "-c", "import json, jinja2, rtshield.units"], env)
    assert "jinja2" in got
    assert not any(m.split(".")[0] in ("json", "markupsafe", "rtshield") for m in got), got
