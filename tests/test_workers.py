"""How tools/test.sh spreads the tests over pytest-xdist workers (tests/conftest.py): the
rig's tests never on two workers at once, every other module whole on one."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from conftest import LONG_UNITS, work_unit

ROOT = Path(__file__).resolve().parent.parent


def test_work_units():
    assert work_unit("tests/test_rig_serve.py::test_x") == "rig"
    assert work_unit("tests/test_mps2_flood_smoke.py::test_y[1-2]") == "rig"
    assert work_unit("tests/test_rig_device_smoke.py::test_a[15-143]") == "rig"
    assert work_unit("tests/test_units.py::test_rates[4kHz-4000.0]") == "tests/test_units.py"
    assert work_unit("tests/test_out_safety.py::Cls::test_z") == "tests/test_out_safety.py"
    # "rig" in a test's name or parameters is not a rig module
    assert work_unit("tests/test_units.py::test_rig_[a::b]") == "tests/test_units.py"
    # the modules that share the whole demo's run (conftest.py: demo_output)
    assert work_unit("tests/test_browser_report.py::test_demo_report_loads_in_chromium") == "demo"
    assert work_unit("tests/test_cli_run.py::test_x[a]") == "demo"
    assert work_unit("tests/test_figure_check.py::test_y") == "demo"


def test_the_long_units_are_units_that_exist():
    """The units handed out first (conftest.py: LONG_UNITS) name this suite's units: a
    renamed module is not left out of the order unnoticed."""
    modules = {f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py")}
    units = {work_unit(f"{m}::t") for m in modules}
    assert len(set(LONG_UNITS)) == len(LONG_UNITS)
    assert set(LONG_UNITS) <= units, set(LONG_UNITS) - units


def test_the_rig_tests_run_on_one_worker():
    """Two workers: every test of two rig modules on the same one (the check that found
    ``--dist loadgroup``'s marks ignored under pytest 9), another module beside them."""
    mods = ["tests/test_rig_device_cli.py", "tests/test_rig_serve.py", "tests/test_units.py"]
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider", *mods],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    workers = defaultdict(set)
    for m in re.finditer(r"^\[(gw\d+)\].*? (tests/\S+?\.py)::", p.stdout, re.M):
        workers[work_unit(m.group(2))].add(m.group(1))
    assert set(workers) == {"rig", "tests/test_units.py"}, p.stdout[-2000:]
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
