"""Loader of the native library (libshield + simulator) through cffi.

The declarations come from ``rtshield_cdef.h``, which the build generates by
running the public C headers through the preprocessor: the binding cannot
drift from the C code. The build also parses them once into cffi's
out-of-line module ``_rtshield_ffi.py`` (python/build_ffi.py), so a process
does not pay the parse at start-up; that module is used only while it was
made from this very ``rtshield_cdef.h`` (its SHA-256), else the header is
parsed here as before. Nothing is loaded until :func:`load` is first called.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_HERE = Path(__file__).resolve().parent


class NativeError(RuntimeError):
    """The native library is missing or cannot be loaded."""


def _ffi(cdef_text: str):
    """The FFI object: the prebuilt module when it matches the declarations."""
    try:
        from rtshield import _rtshield_ffi as prebuilt
    except ImportError:
        prebuilt = None
    digest = hashlib.sha256(cdef_text.encode()).hexdigest()
    if prebuilt is not None and getattr(prebuilt, "CDEF_SHA256", None) == digest:
        return prebuilt.ffi
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(cdef_text)
    return ffi


@functools.lru_cache(maxsize=1)
def load():
    """Return ``(ffi, lib)`` for the native library, loading it once."""
    cdef = _HERE / "rtshield_cdef.h"
    so = _HERE / "librtshield_native.so"
    if not cdef.exists() or not so.exists():
        raise NativeError(
            f"rtshield's native library is not built ({so.name} missing in {_HERE}); "
            "install the package with `pip install .`"
        )
    ffi = _ffi(cdef.read_text())
    lib = ffi.dlopen(str(so))
    return ffi, lib
