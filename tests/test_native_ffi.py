"""The binding's prebuilt cffi module: used while it matches the declarations."""

import importlib.util
import sys
import types

import pytest

from rtshield import _native


def test_the_build_made_the_prebuilt_module_and_load_uses_it():
    if importlib.util.find_spec("rtshield._rtshield_ffi") is None:
        pytest.skip("this build has no prebuilt cffi module (no Python at build time)")
    from rtshield import _rtshield_ffi

    ffi, lib = _native.load()
    assert ffi is _rtshield_ffi.ffi
    assert lib.RTSIM_HIST_BINS > 0 and ffi.sizeof("rtsim_config") > 0


def test_a_module_made_from_other_declarations_is_not_used(monkeypatch):
    stale = types.ModuleType("rtshield._rtshield_ffi")
    stale.ffi = object()
    stale.CDEF_SHA256 = "0" * 64
    monkeypatch.setitem(sys.modules, "rtshield._rtshield_ffi", stale)
    text = (_native._HERE / "rtshield_cdef.h").read_text()
    ffi = _native._ffi(text)
    assert ffi is not stale.ffi
    assert ffi.sizeof("rtsim_config") == _native.load()[0].sizeof("rtsim_config")
