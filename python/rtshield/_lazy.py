"""A package's names re-exported from its modules on first use (a module's
``__getattr__``, PEP 562): :func:`reexport`.

``from rtshield.sweep import run_sweep`` then imports ``rtshield.sweep.run``
alone, and a module of the package (``rtshield.sweep.limits``, read by
``rtshield sweep --help``) is imported without every other one.
"""

from __future__ import annotations

import importlib
import sys


def reexport(package: str, homes: dict[str, str], names: list[str]):
    """The ``__getattr__`` and ``__dir__`` of ``package``: a name of ``homes`` is
    looked up in the module of the package ``homes`` names for it (imported then);
    ``dir()`` lists ``names`` (the package's ``__all__``) beside what it holds."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return vars(importlib.import_module(f"{package}.{home}"))[name]

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
