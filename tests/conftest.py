"""Fixtures the tests share, and how tools/test.sh spreads the tests over workers."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

#: Modules of the rig's tests: namespaces, TAP devices, ``rig clean`` (which removes
#: every rig namespace and process) and the rig's build cache: never two at once.
RIG_MODULES = ("test_rig_", "test_mps2_")


def _worker_group(item: pytest.Item) -> str | None:
    """The pytest-xdist group of ``item``: every rig test in one ("rig"); the tests of a
    module with a module- or class-scoped fixture together (the fixture's work is done once,
    not once per worker); None: any worker."""
    module = item.path.stem
    if module.startswith(RIG_MODULES):
        return "rig"
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info else ()
    if any(d.scope in ("module", "class") for ds in defs for d in ds):
        return module
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a pytest-xdist worker (``tools/test.sh``: ``-n 2 --dist loadgroup``): mark each
    test with its group (:func:`_worker_group`) before xdist reads the marks."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in items:
        group = _worker_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def rtshield_main() -> Callable[..., int]:
    """``rtshield_main(*argv)``: ``rtshield ARGV`` in this process, its exit code; paths
    and numbers among ``argv`` are passed as their text."""
    from rtshield import cli

    return lambda *argv: cli.main([str(a) for a in argv])
