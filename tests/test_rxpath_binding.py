"""The receive path through the binding: the calls the simulator and the
analysis front end make (classification, driver, NIC model, §7.3.2 rules)."""

import struct

import pytest
from native_checks import bind, flow_table

from rtshield import _native


@pytest.fixture(scope="module")
def native():
    return _native.load()


def udp_frame(dport, src=b"\x0a\x00\x00\x02", frag=0):
    l4 = struct.pack("!HHHH", 40000, dport, 8, 0)
    dst = b"\x0a\x00\x00\x01"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, frag, 64, 17, 0, src, dst)
    frame = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00" + ip + l4
    return frame + bytes(60 - len(frame))


def test_classify_bound_unbound_fragment(native):
    ffi, lib = native
    table = flow_table(ffi, lib)
    udp_id = bind(ffi, lib, table, lib.RTS_PROTO_UDP, 502)
    info = ffi.new("rts_classifier_info *")
    frame = udp_frame(502)
    assert lib.rts_classifier_classify_isr(table, frame, len(frame), info) == udp_id
    assert info.kind == lib.RTS_CLASSIFIER_UDP and info.local_port == 502
    classify = lib.rts_classifier_classify_isr
    assert classify(table, udp_frame(503), 60, ffi.NULL) == lib.RTS_FLOW_DEFAULT
    frag = udp_frame(502, frag=0x2000)
    assert classify(table, frag, 60, ffi.NULL) == lib.RTS_FLOW_BACKGROUND
    # Truncated inside the UDP header: default flow, never an over-read.
    assert classify(table, frame, 14 + 20 + 3, ffi.NULL) == lib.RTS_FLOW_DEFAULT


def test_driver_round_trip_conserves_buffers(native):
    ffi, lib = native
    rx = ffi.new("rts_rx_driver *")
    assert lib.rts_rx_driver_init(rx, ffi.NULL, 8, 4, 1, 0, 0, 0) == lib.RTS_OK
    flows = ffi.addressof(rx, "flows")
    udp_id = bind(ffi, lib, flows, lib.RTS_PROTO_UDP, 502)
    assert lib.rts_flow_table_setopt(flows, udp_id, lib.RTS_FLOWOPT_PRIORITY, 9, 0) == lib.RTS_OK
    res = ffi.new("rts_rx_result *")
    frame = udp_frame(502)
    assert lib.rts_rx_driver_eager_isr(rx, 0, frame, len(frame), 10, res) == lib.RTS_OK
    assert res.outcome == lib.RTS_RX_QUEUED and res.task_prio == 9
    assert res.flags & lib.RTS_ACT_RESCHEDULE
    job = ffi.new("rts_rx_job *")
    assert lib.rts_rx_driver_task_next(rx, job, ffi.NULL) == lib.RTS_OK
    assert job.buf == 0 and job.flow == udp_id
    assert lib.rts_rx_driver_task_complete(rx, job.prio) == lib.RTS_PRIO_INHERIT_LOWERED
    assert lib.rts_rx_driver_buf_free(rx, job.buf) == lib.RTS_OK
    fq = ffi.addressof(rx, "fq")
    assert lib.rts_flow_queue_check(fq) == lib.RTS_OK
    counts = [lib.rts_flow_queue_count(fq, s) for s in range(5)]
    assert sum(counts) == 8 and counts[lib.RTS_BUF_POOL] == 5


def test_nic_moderation_packet_timer(native):
    ffi, lib = native
    nic = ffi.new("rts_nic_moderation *")
    lib.rts_nic_moderation_init(nic)
    q = ffi.new("uint8_t *")
    err = lib.rts_nic_moderation_bind(nic, lib.RTS_PROTO_UDP, 502, 16, 1_000_000, 100_000, 0, 4,
                                      9, q)
    assert err == lib.RTS_OK
    r = ffi.new("rts_nic_moderation_rx_result *")
    lib.rts_nic_moderation_rx(nic, lib.RTS_PROTO_UDP, 502, 0, r)
    assert r.outcome == lib.RTS_NIC_STORED and not r.irq
    assert lib.rts_nic_moderation_next_expiry(nic) == 100_000
    assert lib.rts_nic_moderation_expire(nic, 100_000) == 1 << q[0]
    lib.rts_nic_moderation_rx(nic, lib.RTS_PROTO_UDP, 9999, 0, r)
    assert r.outcome == lib.RTS_NIC_UNREGISTERED


@pytest.mark.parametrize(("m", "expect"), [(0, 14), (1, 44), (4, 134), (32, 974)])
def test_nic_memory_table1(native, m, expect):
    _, lib = native
    assert lib.rts_nic_moderation_memory_bytes(m) == m * 30 + 14 == expect


def test_nic_parameter_rules(native):
    ffi, lib = native
    t_netstack, n_q, t_p, t_d = 10_000, 16, 100_000, 10_000_000
    wcpd = lib.rts_nic_params_wcpd(t_netstack, 64)
    assert wcpd == 640_000
    t_qf = lib.rts_nic_params_t_qf(n_q, t_p)
    assert t_qf == 1_600_000
    bound = lib.rts_nic_params_t_abs_max(t_d, t_qf, wcpd)
    assert bound == max(t_d, t_qf) - wcpd
    ok = lib.rts_nic_params_check(t_netstack, 64, n_q, t_p, t_d, bound, t_p)
    assert ok == lib.RTS_NIC_PARAMS_OK
    def check(t_abs, t_pack):
        return lib.rts_nic_params_check(t_netstack, 64, n_q, t_p, t_d, t_abs, t_pack)

    assert check(bound + 1, t_p) == lib.RTS_NIC_V_TABS
    assert check(bound, t_p - 1) == lib.RTS_NIC_V_TPACK_LOW
    qs = ffi.new("rts_nic_params_queue[2]")
    for i in range(2):
        qs[i].n_q, qs[i].t_p, qs[i].t_d, qs[i].t_abs, qs[i].t_pack = n_q, t_p, t_d, bound, t_p
    qs[1].t_pack = bound + 1
    first = ffi.new("unsigned *")
    assert lib.rts_nic_params_validate(qs, 2, t_netstack, first) == lib.RTS_NIC_V_TPACK_HIGH
    assert first[0] == 1
