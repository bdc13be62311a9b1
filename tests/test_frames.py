"""The simulator's frames (rtsim_frame_build) read back by dpkt, an independent
packet library: Ethernet II and the 802.1Q tag, IPv4 (fields and header
checksum), TCP SYN, UDP, ICMP echo request (checksum), ARP request, the
unknown EtherType; lengths from below the headers to above RTSIM_FRAME_MAX;
and libshield's classifier agreeing with dpkt on every frame."""

import ipaddress
import struct

import dpkt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from native_checks import bind, flow_table

from rtshield._native import load

DEVICE_MAC = bytes.fromhex("027274730001")
DEFAULT_SRC = int(ipaddress.IPv4Address("192.0.2.100"))
DEFAULT_DST = int(ipaddress.IPv4Address("192.0.2.1"))
ETH_TYPE_RAW = 0x88B5
PROTOS = ("TCP", "UDP", "ICMP", "ARP", "RAW")
SIZES = (0, 1, 42, 54, 58, 60, 64, 100, 511, 1500, 1518, 1521, 1522, 1523, 4000, 0xFFFFFFFF)


@pytest.fixture(scope="module")
def native():
    return load()


def proto_id(lib, name):
    return getattr(lib, f"RTSIM_PROTO_{name}")


def header_len(name, vlan):
    l2 = 18 if vlan else 14
    return l2 + {"TCP": 40, "UDP": 28, "ICMP": 28, "ARP": 28, "RAW": 0}[name]


def build(
    native,
    name,
    vlan=0,
    pcp=0,
    size=0,
    sport=40000,
    dport=502,
    src=0x0A000107,
    dst=0xC0A80001,
    cap=None,
):
    """The frame of one flow as bytes (b"" when the builder refuses)."""
    ffi, lib = native
    f = ffi.new("rtsim_flow_cfg *")
    f.proto = proto_id(lib, name)
    f.vlan, f.vlan_pcp, f.size = vlan, pcp, size
    f.src_port, f.dst_port, f.src_addr, f.dst_addr = sport, dport, src, dst
    room = lib.RTSIM_FRAME_MAX + 64 if cap is None else cap
    buf = ffi.new("uint8_t[]", max(room, 1))
    n = lib.rtsim_frame_build(f, buf, room)
    return bytes(ffi.buffer(buf, n))


def ip4(addr):
    return struct.pack("!I", addr)


def check_frame(native, name, vlan, pcp, size, sport, dport, src, dst):
    """Every field of one frame, as dpkt reads it."""
    ffi, lib = native
    frame = build(native, name, vlan, pcp, size, sport, dport, src, dst)
    hdr = header_len(name, vlan)
    assert lib.rtsim_frame_min(proto_id(lib, name), vlan) == hdr
    assert len(frame) == min(max(size, hdr), lib.RTSIM_FRAME_MAX)
    assert frame[hdr:] == bytes(len(frame) - hdr)  # zero payload
    src = src or DEFAULT_SRC
    dst = dst or DEFAULT_DST
    l2 = 18 if vlan else 14

    eth = dpkt.ethernet.Ethernet(frame)
    assert eth.dst == DEVICE_MAC
    assert eth.src == b"\x02\x00" + ip4(src)
    expected_type = {
        "ARP": dpkt.ethernet.ETH_TYPE_ARP,
        "RAW": ETH_TYPE_RAW,
    }.get(name, dpkt.ethernet.ETH_TYPE_IP)
    if vlan:
        assert eth.type == dpkt.ethernet.ETH_TYPE_8021Q
        (tag,) = eth.vlan_tags
        assert (tag.pri, tag.cfi, tag.id, tag.type) == (pcp, 0, 1, expected_type)
    else:
        assert eth.type == expected_type
        assert not getattr(eth, "vlan_tags", [])

    if name == "RAW":
        assert bytes(eth.data) == bytes(len(frame) - 14 - (4 if vlan else 0))
    elif name == "ARP":
        arp = eth.data
        assert isinstance(arp, dpkt.arp.ARP)
        assert (arp.hrd, arp.pro, arp.hln, arp.pln) == (1, dpkt.ethernet.ETH_TYPE_IP, 6, 4)
        assert arp.op == dpkt.arp.ARP_OP_REQUEST
        assert arp.sha == eth.src and arp.spa == ip4(src)
        assert arp.tha == bytes(6) and arp.tpa == ip4(dst)
    else:
        ip = eth.data
        assert isinstance(ip, dpkt.ip.IP)
        raw_ip = frame[l2:]
        assert (ip.v, ip.hl, ip.tos, ip.ttl) == (4, 5, 0, 64)
        assert ip.len == len(frame) - l2 == len(raw_ip)
        assert ip.df == 1 and ip.mf == 0 and ip.offset == 0
        assert ip.src == ip4(src) and ip.dst == ip4(dst)
        # Header checksum: dpkt recomputes it on a copy with the sum cleared.
        copy = dpkt.ip.IP(raw_ip)
        copy.sum = 0
        assert bytes(copy)[:20] == raw_ip[:20]
        assert dpkt.in_cksum(raw_ip[:20]) == 0
        l4 = ip.data
        l4_len = ip.len - 20
        if name == "TCP":
            assert ip.p == dpkt.ip.IP_PROTO_TCP
            assert isinstance(l4, dpkt.tcp.TCP)
            assert l4.flags == dpkt.tcp.TH_SYN
            assert (l4.sport, l4.dport) == (sport, dport)
            assert (l4.seq, l4.ack, l4.off, l4.win, l4.sum, l4.urp) == (0, 0, 5, 64240, 0, 0)
            assert bytes(l4.data) == bytes(l4_len - 20)
        elif name == "UDP":
            assert ip.p == dpkt.ip.IP_PROTO_UDP
            assert isinstance(l4, dpkt.udp.UDP)
            assert (l4.sport, l4.dport, l4.ulen, l4.sum) == (sport, dport, l4_len, 0)
            assert bytes(l4.data) == bytes(l4_len - 8)
        else:
            assert ip.p == dpkt.ip.IP_PROTO_ICMP
            assert isinstance(l4, dpkt.icmp.ICMP)
            assert (l4.type, l4.code) == (dpkt.icmp.ICMP_ECHO, 0)
            assert isinstance(l4.data, dpkt.icmp.ICMP.Echo)
            assert (l4.data.id, l4.data.seq) == (1, 1)
            raw_icmp = raw_ip[20:]
            assert dpkt.in_cksum(raw_icmp) == 0
            icmp_copy = dpkt.icmp.ICMP(raw_icmp)
            icmp_copy.sum = 0
            assert bytes(icmp_copy) == raw_icmp

    # libshield's classifier agrees.
    info = ffi.new("rts_classifier_info *")
    assert lib.rts_classifier_parse_isr(frame, len(frame), info) == lib.RTS_OK
    assert info.vlan == vlan
    assert info.vlan_tci == ((pcp << 13) | 1 if vlan else 0)
    kind = {
        "TCP": lib.RTS_CLASSIFIER_TCP,
        "UDP": lib.RTS_CLASSIFIER_UDP,
        "ICMP": lib.RTS_CLASSIFIER_ICMP,
        "ARP": lib.RTS_CLASSIFIER_ARP,
        "RAW": lib.RTS_CLASSIFIER_OTHER,
    }[name]
    assert info.kind == kind
    if name in ("TCP", "UDP"):
        assert (info.local_port, info.remote_port, info.src_addr) == (dport, sport, src)
    return frame


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("vlan", (0, 1))
@pytest.mark.parametrize("name", PROTOS)
def test_frame_fields(native, name, vlan, size):
    pcp = 3 if vlan else 0
    check_frame(native, name, vlan, pcp, size, 40000, 502, 0x0A000107, 0xC0A80001)


@pytest.mark.parametrize("name", PROTOS)
def test_default_addresses(native, name):
    frame = check_frame(native, name, 0, 0, 0, 1234, 80, 0, 0)
    eth = dpkt.ethernet.Ethernet(frame)
    if name in ("TCP", "UDP", "ICMP"):
        assert eth.data.src == ipaddress.IPv4Address("192.0.2.100").packed
        assert eth.data.dst == ipaddress.IPv4Address("192.0.2.1").packed
    elif name == "ARP":
        assert eth.data.spa == ipaddress.IPv4Address("192.0.2.100").packed
        assert eth.data.tpa == ipaddress.IPv4Address("192.0.2.1").packed


@pytest.mark.parametrize("vlan", (0, 1))
@pytest.mark.parametrize("name", PROTOS)
def test_refusals(native, name, vlan):
    ffi, lib = native
    for size in (0, 100, 5000):
        need = len(build(native, name, vlan, size=size))
        assert need == min(max(size, header_len(name, vlan)), lib.RTSIM_FRAME_MAX)
        assert build(native, name, vlan, size=size, cap=need - 1) == b""
        assert build(native, name, vlan, size=size, cap=0) == b""
        assert len(build(native, name, vlan, size=size, cap=need)) == need
    f = ffi.new("rtsim_flow_cfg *")
    f.proto = 5
    f.vlan = vlan
    buf = ffi.new("uint8_t[]", lib.RTSIM_FRAME_MAX)
    assert lib.rtsim_frame_build(f, buf, lib.RTSIM_FRAME_MAX) == 0
    assert lib.rtsim_frame_min(5, vlan) == 0


def test_classify_against_flow_table(native):
    ffi, lib = native
    table = flow_table(ffi, lib)
    tcp_id = bind(ffi, lib, table, lib.RTS_PROTO_TCP, 502)
    udp_id = bind(ffi, lib, table, lib.RTS_PROTO_UDP, 502)
    for vlan in (0, 1):
        for size in (0, 64, 1522):
            cases = [
                (build(native, "TCP", vlan, size=size), tcp_id),
                (build(native, "TCP", vlan, size=size, dport=503), lib.RTS_FLOW_DEFAULT),
                (build(native, "UDP", vlan, size=size), udp_id),
                (build(native, "UDP", vlan, size=size, dport=9), lib.RTS_FLOW_DEFAULT),
                (build(native, "ICMP", vlan, size=size), lib.RTS_FLOW_ICMP),
                (build(native, "ARP", vlan, size=size), lib.RTS_FLOW_ARP),
                (build(native, "RAW", vlan, size=size), lib.RTS_FLOW_DEFAULT),
            ]
            for frame, expected in cases:
                got = lib.rts_classifier_classify_isr(table, frame, len(frame), ffi.NULL)
                assert got == expected


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(PROTOS),
    vlan=st.integers(0, 1),
    pcp=st.integers(0, 7),
    size=st.integers(0, 2000),
    sport=st.integers(0, 65535),
    dport=st.integers(0, 65535),
    src=st.integers(0, 2**32 - 1),
    dst=st.integers(0, 2**32 - 1),
)
def test_random_flows(name, vlan, pcp, size, sport, dport, src, dst):
    check_frame(load(), name, vlan, pcp if vlan else 0, size, sport, dport, src, dst)
