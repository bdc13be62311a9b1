"""The interrupt limiters through the binding, as the analysis code calls them."""

from rtshield import _native


def _u32(ffi, values):
    return ffi.new("uint32_t[]", list(values))


def test_burst_sizes_paper_example():
    ffi, lib = _native.load()
    rates = _u32(ffi, [324, 200, 754])
    bursts = ffi.new("uint32_t[3]")
    max_rates = ffi.new("uint32_t[3]")
    assert lib.rts_bursty_burst_sizes(rates, 3, 110, bursts, max_rates) == lib.RTS_OK
    assert list(bursts) == [3, 2, 7]
    assert list(max_rates) == [330, 220, 770]


def test_pick_timer_rules():
    ffi, lib = _native.load()
    rates = _u32(ffi, [324, 200, 754])
    hz = ffi.new("uint32_t *")
    assert lib.rts_bursty_pick_timer_hz(rates, 3, 7, ffi.NULL, 0, hz) == lib.RTS_OK
    assert hz[0] == 108
    cands = _u32(ffi, [120, 100, 110])
    assert lib.rts_bursty_pick_timer_hz(rates, 3, 7, cands, 3, hz) == lib.RTS_OK
    assert hz[0] == 110
    assert lib.rts_bursty_pick_timer_hz(rates, 3, 7, cands, 1, hz) == lib.RTS_OK
    assert hz[0] == 120
    slow = _u32(ffi, [50])
    assert lib.rts_bursty_pick_timer_hz(rates, 3, 7, slow, 1, hz) == lib.RTS_ENOENT


def test_strict_and_countdown_structs():
    ffi, lib = _native.load()
    s = ffi.new("rts_strict *")
    assert lib.rts_strict_init(s, 1000) == lib.RTS_OK
    a = lib.rts_strict_on_irq_isr(s, 5)
    assert a.flags & lib.RTS_ACT_DISABLE_LINE and a.timer_at == 1005
    c = ffi.new("rts_countdown *")
    assert lib.rts_countdown_init(c, 10, 100) == lib.RTS_OK
    assert lib.rts_countdown_on_arrival_isr(c, 0).flags == lib.RTS_ACT_DELIVER
    assert lib.rts_countdown_next_event_at(c) == 1000
