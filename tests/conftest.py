"""Fixtures the tests share."""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def rtshield_main() -> Callable[..., int]:
    """``rtshield_main(*argv)``: ``rtshield ARGV`` in this process, its exit code; paths
    and numbers among ``argv`` are passed as their text."""
    from rtshield import cli

    return lambda *argv: cli.main([str(a) for a in argv])
