"""rtshield: keep the critical task of a real-time device on time under network floods.

The native core (libshield and the simulator) is loaded on first use through
:mod:`rtshield._native`. The notebook API (docs/python-api.md) is at the
package top: :func:`simulate`, :func:`analyze`, :func:`design`, :func:`sweep`;
it is imported on first use, so ``import rtshield`` stays cheap.

``rtshield.sweep`` is also the name of the module that expands ``--set``
grids (:mod:`rtshield.sweep`); that module is callable and its call is the
notebook API's :func:`rtshield.api.sweep`, so both uses hold whichever is
imported first.
"""

from __future__ import annotations

import sys
import types

from rtshield._version import __version__

# no `typing` at run time: the console entry point (rtshield.entry) imports this
# package first, and typing alone would be a fifth of a served command's client
TYPE_CHECKING = False

__all__ = [
    "Analysis",
    "DesignResult",
    "Simulation",
    "SweepResult",
    "__version__",
    "analyze",
    "design",
    "simulate",
    "sweep",
]

if TYPE_CHECKING:
    from typing import Any

    from rtshield.api import (
        Analysis,
        DesignResult,
        Simulation,
        SweepResult,
        analyze,
        design,
        simulate,
        sweep,
    )


class _CallableSweepModule(types.ModuleType):
    """:mod:`rtshield.sweep`, callable as :func:`rtshield.api.sweep`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from rtshield.api import sweep as api_sweep

        return api_sweep(*args, **kwargs)


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        # The import system binds each submodule on the package: make the
        # sweep module callable as it is bound.
        if name == "sweep" and type(value) is types.ModuleType:
            value.__class__ = _CallableSweepModule
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name == "sweep":
        import importlib

        return importlib.import_module("rtshield.sweep")
    if name in __all__ and name != "__version__":
        from rtshield import api

        return getattr(api, name)
    raise AttributeError(f"module 'rtshield' has no attribute {name!r}")
