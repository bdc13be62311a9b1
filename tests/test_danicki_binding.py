"""Danicki mitigations, detection and the deferrable server through the binding."""

import math

import pytest

from rtshield import _native

U64_MAX = 2**64 - 1


@pytest.fixture(scope="module")
def native():
    return _native.load()


@pytest.mark.parametrize(
    ("e", "p", "delta"),
    [(3, 10, 1), (3, 10, 10), (3, 10, 11), (1_000_000, 10_000_000, 1_000_000_000), (7, 3, 100)],
)
def test_dbf_matches_paper_formula(native, e, p, delta):
    _, lib = native
    assert lib.rts_dserver_dbf(e, p, delta) == e * (math.ceil(delta / p) + 1)


def test_dbf_edge_choices(native):
    _, lib = native
    assert lib.rts_dserver_dbf(3, 10, 0) == 0
    assert lib.rts_dserver_dbf(3, 0, 5) == U64_MAX
    assert lib.rts_dserver_dbf(2, 1, U64_MAX) == U64_MAX


def test_burst_mitigation_disables_at_capacity(native):
    ffi, lib = native
    cfg = ffi.new("rts_burst_mit_cfg *", {"slice_ns": 1000, "capacity": 2, "aligned": False})
    m = ffi.new("rts_burst_mit *")
    assert lib.rts_burst_mit_init(m, cfg) == lib.RTS_OK
    assert lib.rts_burst_mit_on_rx_isr(m, 10).flags == lib.RTS_ACT_NONE
    a = lib.rts_burst_mit_on_rx_isr(m, 20)
    assert a.flags == lib.RTS_ACT_DISABLE_LINE | lib.RTS_ACT_ARM_TIMER
    assert a.timer_at == 1010
    assert lib.rts_burst_mit_on_timer_isr(m, 1010).flags == lib.RTS_ACT_ENABLE_LINE


def test_hysteresis_driver_poll_returns_struct(native):
    ffi, lib = native
    cfg = ffi.new("rts_hyst_mit_cfg *")
    assert lib.rts_hyst_mit_cfg_permille(cfg, 10_000_000, 100, 500, 100_000) == lib.RTS_OK
    m = ffi.new("rts_hyst_mit *")
    lib.rts_hyst_mit_init(m, cfg)
    lib.rts_hyst_mit_on_cycle_end(m, 0, 500_000)
    d = lib.rts_hyst_mit_driver_poll(m, 1)
    assert not d.run and d.sleep_ns == 100_000 and d.act.flags == lib.RTS_ACT_DISABLE_LINE


def test_cycle_eval_ppm(native):
    _, lib = native
    r = lib.rts_detect_cycle_eval(0, 10_000_000, 20_000_000)
    assert r.miss and r.earliness_ns == -10_000_000
    assert r.lateness_ppm == 100 * lib.RTS_PPM_PER_PERCENT
