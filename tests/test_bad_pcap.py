"""Malformed captures: one line naming the file and the problem, exit 2.

A scenario's ``pattern = "pcap"`` flow is read when the scenario is
validated, before ``--out`` is created; every bad capture below must stop
``rtshield run`` with ``rtshield: error: ...`` on one line and no output.
"""

from __future__ import annotations

import struct

import dpkt
import pytest
from cli_checks import one_line
from pcap_flows import cap_flow

from rtshield import cli

HEAD = """
[scenario]
name = "b"
platform = "esp32-multiqueue-nic"
duration = "1s"
[nic]
kind = "multiqueue"
[[nic.queues]]
name = "q0"
size = 128
""" + cap_flow("c.pcap")


def frame(size=60) -> bytes:
    return b"\x02\0\0\0\0\x0a\x02\0\0\0\0\x01\x08\x00" + b"\0" * (size - 14)


def good(n=3, linktype=dpkt.pcap.DLT_EN10MB, size=60) -> bytes:
    import io

    buf = io.BytesIO()
    w = dpkt.pcap.Writer(buf, linktype=linktype)
    for i in range(n):
        w.writepkt(frame(size), ts=1.0 + i / 100)
    return buf.getvalue()


def run_bad(tmp_path, capsys, data: bytes | None, *needles, extra="", names="c.pcap"):
    if data is not None:
        (tmp_path / "c.pcap").write_bytes(data)
    (tmp_path / "s.toml").write_text(HEAD + extra)
    out = tmp_path / "o"
    one_line(capsys, ["run", tmp_path / "s.toml", "--out", out], names, *needles)
    assert not out.exists()


def test_good_capture_runs(tmp_path, capsys):
    (tmp_path / "c.pcap").write_bytes(good())
    (tmp_path / "s.toml").write_text(HEAD)
    assert cli.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")]) == 0


@pytest.mark.parametrize("cut", [10, 24 + 8, 24 + 16 + 30, -1])
def test_truncated(tmp_path, capsys, cut):
    run_bad(tmp_path, capsys, good()[:cut], "truncated")


def test_not_ethernet(tmp_path, capsys):
    run_bad(tmp_path, capsys, good(linktype=dpkt.pcap.DLT_RAW), "link type 12", "not Ethernet")


def test_not_a_pcap(tmp_path, capsys):
    run_bad(tmp_path, capsys, b"hello, this is text\n" * 4, "not a pcap file")


def test_pcapng(tmp_path, capsys):
    run_bad(tmp_path, capsys, struct.pack(">I", 0x0A0D0D0A) + b"\0" * 60, "pcapng")


def test_empty_capture(tmp_path, capsys):
    run_bad(tmp_path, capsys, good(n=0), "no frame")


def test_missing_file(tmp_path, capsys):
    run_bad(tmp_path, capsys, None, "no such file")


def test_directory(tmp_path, capsys):
    (tmp_path / "c.pcap").mkdir()
    run_bad(tmp_path, capsys, None, "directory")


def test_path_with_nul(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(HEAD.replace('"c.pcap"', '"c\\u0000.pcap"'))
    rc = cli.main(["run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert "s.toml" in lines[0] and "not a usable file name" in lines[0], lines[0]


def test_oversized_frame(tmp_path, capsys):
    run_bad(tmp_path, capsys, good(size=1600), "1600 bytes", "at most 1522")


def test_runt_frame(tmp_path, capsys):
    run_bad(tmp_path, capsys, good(n=0) + _rec(b"\0" * 10), "shorter than an Ethernet")


def test_snaplen_cut(tmp_path, capsys):
    rec = struct.pack("<IIII", 1, 0, 60, 100) + frame(60)
    run_bad(tmp_path, capsys, good(n=0) + rec, "60 of its 100 bytes")


def test_time_goes_back(tmp_path, capsys):
    data = good(n=0) + _rec(frame(), sec=2) + _rec(frame(), sec=1)
    run_bad(tmp_path, capsys, data, "frame 2", "before frame 1")


def test_frame_limit(tmp_path, capsys, monkeypatch):
    from rtshield import pcap

    monkeypatch.setattr(pcap, "trace_limits", lambda: (2, 1 << 20, 1522))
    pcap._read_cached.cache_clear()
    run_bad(tmp_path, capsys, good(n=3), "more than 2 frames")
    pcap._read_cached.cache_clear()


def test_bad_replay_keys(tmp_path, capsys):
    (tmp_path / "c.pcap").write_bytes(good())
    for extra, needle, names in (
        ("scale = 0", "scale", "s.toml"),
        ('scale = "fast"', "scale", "s.toml"),
        ('skip = "5s"', "passes the last frame", "c.pcap"),
        ("size = 100", "size", "s.toml"),
    ):
        run_bad(tmp_path, capsys, None, needle, extra=extra + "\n", names=names)


def _rec(raw: bytes, sec: int = 1) -> bytes:
    return struct.pack("<IIII", sec, 0, len(raw), len(raw)) + raw


def test_captures_over_the_limit_together(tmp_path, capsys, monkeypatch):
    # Each capture fits, the two together do not: refused before --out exists.
    from rtshield import pcap

    monkeypatch.setattr(pcap, "trace_limits", lambda: (5, 1 << 20, 1522))
    pcap._read_cached.cache_clear()
    (tmp_path / "d.pcap").write_bytes(good(n=3))
    second = HEAD[HEAD.index("[[flows]]"):].replace('"cap"', '"cap2"').replace(
        "c.pcap", "d.pcap").replace("502", "503")
    run_bad(tmp_path, capsys, good(n=3), "6 frames", "at most 5 frames", names="s.toml",
            extra=second)
    pcap._read_cached.cache_clear()
