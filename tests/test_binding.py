"""The binding loads and its declarations match the compiled library."""

from rtshield import _native


def test_native_library_loads():
    ffi, lib = _native.load()
    assert ffi.string(lib.rts_version()).decode() == "0.1.0"


def test_irq_gate_through_binding():
    ffi, lib = _native.load()
    g = ffi.new("rts_irq_gate *")
    lib.rts_irq_gate_init(g)
    assert lib.rts_irq_gate_app_set(g, 2, True) == lib.RTS_GATE_ENABLED
    assert lib.rts_irq_gate_sched_set_isr(g, 2, False) == lib.RTS_GATE_DISABLED
    assert not lib.rts_irq_gate_enabled(g, 2)
