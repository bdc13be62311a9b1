"""Fixtures the tests share, and how tools/test.sh spreads the tests over workers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# A developer's resident server (`rtshield server start`) never serves the tests'
# commands: they run in their own processes, as without a server. tests/test_server.py
# starts servers of its own and sets this variable for the commands it sends them.
os.environ["RTSHIELD_SERVER"] = "off"

#: Modules of the rig's tests: namespaces, TAP devices, ``rig serve``'s one address,
#: ``rig clean`` (which removes every rig namespace and process whose owner has ended)
#: and the rig's build cache: never two at once.
RIG_MODULES = ("test_rig_", "test_mps2_")

#: Modules that use the whole demo's output (the fixture ``demo_output``): one unit, so the
#: demo runs once per test run, not once per module or worker.
DEMO_MODULES = ("test_figure_check.py", "test_browser_report.py", "test_cli_run.py")

#: The units that take longest (tens of seconds to minutes), longest first: they start first,
#: so that no worker is left with a long unit while the other has nothing to do (longest
#: processing time first). Only the order changes; a unit missing here runs all the same.
LONG_UNITS = ("rig", "demo", "tests/test_docs_run.py", "tests/test_sdist.py",
              "tests/test_analysis_falsify.py", "tests/test_out_safety.py",
              "tests/test_conservation_property.py", "tests/test_cli_quiet.py",
              "tests/test_cluster.py", "tests/test_sweep_stream.py", "tests/test_workers.py",
              "tests/test_server.py")


def work_unit(nodeid: str) -> str:
    """The unit of work a test is sent to a pytest-xdist worker in: every rig test in one
    (``"rig"``), the modules that use the whole demo in one (``"demo"``), every other test
    with the rest of its module (a module's shared fixtures are then built once, not once
    per worker)."""
    module = nodeid.split("::", 1)[0]
    name = module.rsplit("/", 1)[-1]
    if name.startswith(RIG_MODULES):
        return "rig"
    if name in DEMO_MODULES:
        return "demo"
    return module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """tools/test.sh runs the tests on as many workers as CPUs (``-n``); they are spread in
    the units of :func:`work_unit`. A scheduler of its own, not ``--dist loadgroup``'s
    marks: with pytest 9 that rewrote node ids pytest no longer reads, and the rig's tests
    ran on both workers at once (two ``rig serve`` on one address). The units are handed
    out longest first (:data:`LONG_UNITS`), then by their number of tests."""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            # xdist hands out the queue's first unit: the long ones first (LONG_UNITS)
            for unit in reversed(LONG_UNITS):
                if unit in self.workqueue:
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return ByUnit(config, log)


@pytest.fixture
def rtshield_main() -> Callable[..., int]:
    """``rtshield_main(*argv)``: ``rtshield ARGV`` in this process, its exit code; paths
    and numbers among ``argv`` are passed as their text."""
    from rtshield import cli

    return lambda *argv: cli.main([str(a) for a in argv])


@pytest.fixture(scope="session")
def demo_output(tmp_path_factory) -> tuple[Path, str, Path]:
    """``rtshield demo`` (every study, at full length) run once, from a folder of its own,
    with every figure checked as it is drawn (``rtshield.figures.check``'s record file):
    (the demo's folder, its standard output, the record). The modules using it are one work
    unit (:data:`DEMO_MODULES`), so one worker runs the demo once for all of them."""
    from rtshield.figures.check import ENV

    tmp = tmp_path_factory.mktemp("demo_output")
    log = tmp / "figures.txt"
    res = subprocess.run([sys.executable, "-m", "rtshield", "demo", "--out", "demo"], cwd=tmp,
                         env={**os.environ, ENV: str(log)}, capture_output=True, text=True,
                         timeout=1200)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return tmp / "demo", res.stdout, log
