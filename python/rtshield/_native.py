"""Loader of the native library (libshield + simulator) through cffi.

The declarations come from ``rtshield_cdef.h``, which the build generates by
running the public C headers through the preprocessor: the binding cannot
drift from the C code. The build also parses them once into cffi's
out-of-line module ``_rtshield_ffi.py`` (python/build_ffi.py), so a process
does not pay the parse at start-up; that module is used only while it was
made from this very ``rtshield_cdef.h`` (its SHA-256), else the header is
parsed here as before. Nothing is loaded until :func:`load` is first called.

The facts every layer reads from the binding live here too, below all of
them: the names and values of a C enum (:func:`enum_names`,
:func:`enum_value`) and the build-time limits of libshield and the
simulator (:func:`native_limits`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
from pathlib import Path

from rtshield.errors import UsageError

_HERE = Path(__file__).resolve().parent


class NativeError(RuntimeError):
    """The native library is missing or cannot be loaded."""


def _ffi(cdef_text: str):
    """The FFI object: the prebuilt module when it matches the declarations."""
    # The build's generated module, absent from a checkout that has not built:
    # found by name, so that the import graph the contracts check
    # (.importlinter) is the same with it or without it.
    try:
        prebuilt = importlib.import_module(f"{__package__}._rtshield_ffi")
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


@functools.cache
def enum_names(ctype: str, prefix: str) -> tuple[str, ...]:
    """Names of the C enum ``ctype`` in value order, ``prefix`` stripped, lower case.

    The ``…_COUNT`` terminator is left out; the values must be 0, 1, 2, …
    """
    ffi, _ = load()
    elements = ffi.typeof(ctype).elements
    names = [(v, n[len(prefix) :].lower()) for v, n in elements.items() if not n.endswith("_COUNT")]
    names.sort()
    if [v for v, _ in names] != list(range(len(names))):
        raise RuntimeError(f"{ctype}: values are not 0..n-1")
    return tuple(n for _, n in names)


def enum_value(ctype: str, prefix: str, name: str) -> int:
    """The value of ``name`` (lower case, ``prefix`` stripped) in the C enum ``ctype``.

    The names are the binding's (``enum_value("rtsim_proto", "RTSIM_PROTO_", "udp")``
    is ``RTSIM_PROTO_UDP``); :class:`KeyError` names one that C does not have.
    """
    ffi, _ = load()
    relements = ffi.typeof(ctype).relements
    try:
        return int(relements[prefix + name.upper()])
    except KeyError:
        raise KeyError(f"{ctype} has no {prefix}{name.upper()}") from None


@functools.lru_cache(maxsize=1)
def native_limits() -> dict[str, int]:
    """libshield's and the simulator's build-time limits, read through the binding.

    ``prio_levels`` (RTS_FLOW_PRIO_LEVELS), ``pool_max`` (RTS_POOL_MAX_BUFS),
    ``flow_max`` (RTS_FLOW_MAX), ``flow_special`` (RTS_FLOW_FIRST_USER: the
    ARP, ICMP, background and default flows before the bound ones),
    ``frame_max`` (RTSIM_FRAME_MAX),
    ``nic_queues`` (RTSIM_MAX_NIC_QUEUES), and the simulator's ``cores``,
    ``tasks`` (the critical task and the driver included), ``flows``,
    ``sources`` and ``rates`` (of one ``steps`` flow), RTSIM_MAX_*. The
    libshield macros are not in the binding, so the array sizes they fix are
    measured instead. Callers look it up as ``_native.native_limits`` (not a
    copy of the name), so that a test can replace it with another build's.
    """
    try:
        ffi, lib = load()
    except NativeError as e:
        raise UsageError(f"engine: {e}") from None
    fq = ffi.new("rts_flow_queue *")
    return {
        "prio_levels": len(fq.rr_last),
        "pool_max": len(fq.state),
        "flow_max": len(ffi.new("rts_flow_table *").flows),
        "flow_special": int(lib.RTS_FLOW_FIRST_USER),
        "frame_max": int(lib.RTSIM_FRAME_MAX),
        "nic_queues": int(lib.RTSIM_MAX_NIC_QUEUES),
        "cores": int(lib.RTSIM_MAX_CORES),
        "tasks": int(lib.RTSIM_MAX_TASKS),
        "flows": int(lib.RTSIM_MAX_FLOWS),
        "sources": int(lib.RTSIM_MAX_SOURCES),
        "rates": int(lib.RTSIM_MAX_RATES),
    }
