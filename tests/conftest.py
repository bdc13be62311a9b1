"""Fixtures the tests share, and how tools/test.sh spreads the tests over workers."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

# A developer's resident server (`rtshield server start`) never serves the tests'
# commands: they run in their own processes, as without a server. tests/test_server.py
# starts servers of its own and sets this variable for the commands it sends them.
os.environ["RTSHIELD_SERVER"] = "off"

#: Modules of the rig's tests: namespaces, TAP devices, ``rig serve``'s one address,
#: ``rig clean`` (which removes every rig namespace and process) and the rig's build
#: cache: never two at once.
RIG_MODULES = ("test_rig_", "test_mps2_")


def work_unit(nodeid: str) -> str:
    """The unit of work a test is sent to a pytest-xdist worker in: every rig test in one
    (``"rig"``), every other test with the rest of its module (a module's shared fixtures
    are then built once, not once per worker)."""
    module = nodeid.split("::", 1)[0]
    if module.rsplit("/", 1)[-1].startswith(RIG_MODULES):
        return "rig"
    return module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """tools/test.sh runs the tests on as many workers as CPUs (``-n``); they are spread in
    the units of :func:`work_unit`. A scheduler of its own, not ``--dist loadgroup``'s
    marks: with pytest 9 that rewrote node ids pytest no longer reads, and the rig's tests
    ran on both workers at once (two ``rig serve`` on one address)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ByUnit(config, log)


@pytest.fixture
def rtshield_main() -> Callable[..., int]:
    """``rtshield_main(*argv)``: ``rtshield ARGV`` in this process, its exit code; paths
    and numbers among ``argv`` are passed as their text."""
    from rtshield import cli

    return lambda *argv: cli.main([str(a) for a in argv])
