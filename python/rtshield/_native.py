"""Loader of the native library (libshield + simulator) through cffi.

The declarations come from ``rtshield_cdef.h``, which the build generates by
running the public C headers through the preprocessor: the binding cannot
drift from the C code. Nothing is loaded until :func:`load` is first called.
"""

from __future__ import annotations

import functools
from pathlib import Path

_HERE = Path(__file__).resolve().parent


class NativeError(RuntimeError):
    """The native library is missing or cannot be loaded."""


@functools.lru_cache(maxsize=1)
def load():
    """Return ``(ffi, lib)`` for the native library, loading it once."""
    import cffi

    cdef = _HERE / "rtshield_cdef.h"
    so = _HERE / "librtshield_native.so"
    if not cdef.exists() or not so.exists():
        raise NativeError(
            f"rtshield's native library is not built ({so.name} missing in {_HERE}); "
            "install the package with `pip install .`"
        )
    ffi = cffi.FFI()
    ffi.cdef(cdef.read_text())
    lib = ffi.dlopen(str(so))
    return ffi, lib
