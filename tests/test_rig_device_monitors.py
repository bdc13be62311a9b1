"""The monitors of `rtshield rig device` against a scripted device on loopback: the
served Linux device's own services (rtshield.rig.services: MODBUS/TCP, a TCP listener,
UDP echo) and its control task's heartbeat (rig/linux/rts_cyclic.c under SCHED_OTHER),
on ports above 1024. Every run is bounded (the probes end at their end time, the
servers are stopped in ``finally``). The ICMP monitor needs a raw socket (root)."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rtshield.rig import linux, services
from rtshield.rig.device import monitors, verdict
from rtshield.schema.profile import ProfileFile

HOST = "127.0.0.1"
S = 1_000_000_000


def _free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


@pytest.fixture
def device():
    """The services on free loopback ports; yields their ports."""
    ports = {
        "modbus_port": _free_port(),
        "listen_port": _free_port(),
        "echo_port": _free_port(socket.SOCK_DGRAM),
        "sink_port": _free_port(socket.SOCK_DGRAM),
    }
    p = subprocess.Popen(
        [sys.executable, str(Path(services.__file__)), json.dumps({"addr": HOST, **ports})],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert p.stdout.readline().strip() == "ready"
        yield ports
    finally:
        p.terminate()
        out, _ = p.communicate(timeout=10)
    counts = json.loads(out.strip().splitlines()[-1])
    assert counts["modbus_requests"] >= 0  # it ended by itself on SIGTERM, with its counts


def _entries(*monitor_tables: dict) -> list:
    p = ProfileFile.model_validate({
        "storm": [{"name": "s", "kind": "icmp_echo"}],
        "monitor": list(monitor_tables),
    })
    return p.monitor


def _run(entries, tmp_path: Path, seconds: float = 1.5, before=None):
    """Run the monitors for ``seconds`` from 2 s after they were started (time to start on
    a loaded machine); return {name: (window stats, samples)}, the window from a
    monitor's first sample to the end."""
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 2 * S
    end = t0 + int(seconds * S)
    procs = []
    for m in entries:
        rec = tmp_path / f"{m.name}.bin"
        procs.append((m, rec, subprocess.Popen(
            monitors.monitor_argv(m, HOST, None, rec, end, t0_ns=t0), stdout=subprocess.PIPE,
            text=True)))
    if before:
        before()
    out = {}
    for m, rec, p in procs:
        p.communicate(timeout=seconds + 15)
        mon = monitors.Monitor(m, verdict.Criteria.of(m), rec)
        ss = mon.samples()
        lo = ss[0].t if ss else t0
        w = verdict.window(ss, lo, end, mon.criteria)
        w["window_s"] = (end - lo) / S
        out[m.name] = (w, ss)
    return out


def test_request_monitors_pass_against_a_live_device(device, tmp_path):
    res = _run(_entries(
        {"name": "modbus", "kind": "modbus", "port": device["modbus_port"], "rate": "20Hz"},
        {"name": "echo", "kind": "udp", "port": device["echo_port"], "rate": "20Hz"},
        {"name": "connect", "kind": "tcp", "port": device["listen_port"], "rate": "20Hz"},
    ), tmp_path)
    for name, (w, ss) in res.items():
        assert w["verdict"] == "pass", (name, w)
        # 20 samples/s from the first to the end, each answered
        expected = 20 * w["window_s"]
        assert expected - 2 <= w["samples"] <= expected + 2 and w["samples"] >= 5, (name, w)
        assert w["good"] == w["samples"], (name, w)
        assert all(s.value is not None and 0 < s.value < 100_000_000 for s in ss)


def test_monitors_fail_against_nothing(tmp_path):
    closed_tcp, closed_udp = _free_port(), _free_port(socket.SOCK_DGRAM)
    res = _run(_entries(
        {"name": "modbus", "kind": "modbus", "port": closed_tcp, "timeout": "200ms",
         "latency": "100ms"},
        {"name": "echo", "kind": "udp", "port": closed_udp},
        {"name": "connect", "kind": "tcp", "port": closed_tcp},
        {"name": "heartbeat", "kind": "heartbeat", "port": _free_port(socket.SOCK_DGRAM),
         "period": "10ms"},
    ), tmp_path, seconds=1.2)
    for name, (w, _) in res.items():
        assert w["verdict"] == "fail" and w["good"] == 0, (name, w)
    assert res["connect"][0]["errors"] == res["connect"][0]["samples"] > 0  # refused
    assert res["echo"][0]["errors"] > 0  # ICMP port unreachable
    assert res["modbus"][0]["timeouts"] == res["modbus"][0]["samples"] > 0  # no connection
    assert res["heartbeat"][0]["why"].startswith("no sample")


def test_modbus_exception_replies_are_errors(device, tmp_path):
    # register 100 is outside the device's 64: every answer is exception 2
    res = _run(_entries({"name": "modbus", "kind": "modbus", "port": device["modbus_port"],
                         "address": 100}), tmp_path, seconds=1.0)
    w = res["modbus"][0]
    assert w["verdict"] == "fail" and w["errors"] == w["samples"] > 0 and w["timeouts"] == 0


def test_heartbeat_of_the_control_task(tmp_path):
    exe = linux.build_program()
    port = _free_port(socket.SOCK_DGRAM)
    (beat,) = _entries({"name": "heartbeat", "kind": "heartbeat", "port": port,
                        "period": "10ms", "jitter": "9ms", "max_gap": "500ms"})
    cyc = []

    def start():
        time.sleep(1.0)  # the probe listens
        cyc.append(subprocess.Popen(
            [str(exe), "--policy", "other", "--cycle-us", "1000", "--max-cycles", "100",
             "--keep-cycling", "1", "--heartbeat", f"{HOST}:{port}", "--heartbeat-every", "10",
             "--out", str(tmp_path / "c.rtscyc")], stdout=subprocess.PIPE, text=True))

    try:
        res = _run([beat], tmp_path, seconds=1.5, before=start)
    finally:
        for p in cyc:
            p.terminate()
            p.communicate(timeout=10)
    w, ss = res["heartbeat"]
    # one datagram per 10 cycles of 1 ms: about 100 intervals a second, centred on 10 ms
    assert w["verdict"] == "pass", w
    assert w["samples"] >= 0.9 * 100 * w["window_s"] >= 50
    assert 9.0 <= w["interval_ms"]["p50"] <= 11.0
    # the datagram carries the control task's toggle time (the same host clock): it was
    # sent before it arrived
    recs = [r for r in monitors.probes.read_records(str(tmp_path / "heartbeat.bin"))]
    assert all(0 < r[1] <= r[0] for r in recs)


@pytest.mark.skipif(os.geteuid() != 0, reason="ICMP echo needs a raw socket (root)")
def test_icmp_monitor(tmp_path):
    res = _run(_entries({"name": "ping", "kind": "icmp", "rate": "20Hz"}), tmp_path)
    w, _ = res["ping"]
    assert w["verdict"] == "pass" and w["good"] == w["samples"] >= 20


def _adu(tid: int, unit: int, pdu: bytes) -> bytes:
    return struct.pack(">HHHB", tid, 0, len(pdu) + 1, unit) + pdu


def test_the_services_modbus_server():
    regs = list(range(services.REGISTERS))
    read = _adu(7, 1, struct.pack(">BHH", 3, 2, 3))
    write = _adu(8, 1, struct.pack(">BHH", 6, 2, 4242))
    bad_fc = _adu(9, 1, bytes([0x2B, 0x0E, 1, 0]))
    beyond = _adu(10, 1, struct.pack(">BHH", 3, 63, 2))
    answers, rest = services.serve_modbus(read + write + bad_fc + beyond + read[:5], regs)
    assert rest == read[:5]  # a request cut short waits for its rest
    assert answers[0] == _adu(7, 1, bytes([3, 6]) + struct.pack(">3H", 2, 3, 4))
    assert answers[1] == write and regs[2] == 4242  # echoed, written
    assert answers[2] == _adu(9, 1, bytes([0xAB, 1]))  # illegal function
    assert answers[3] == _adu(10, 1, bytes([0x83, 2]))  # illegal address
    with pytest.raises(ValueError):
        services.serve_modbus(b"\x00\x01\x00\x05\x00\x06\x01\x03\x00\x00\x00\x01", regs)


def test_connect_monitor_resets_its_connections(tmp_path):
    """The connect monitor's connections end with a RST, so a device whose server does not
    accept them (busy with another client: the FreeRTOS devices' one-connection MODBUS
    server) keeps nothing of them; closed with a FIN they would wait in its accept queue,
    half closed, holding its connection memory."""
    with socket.socket() as srv:  # a server that never accepts while the monitor runs
        srv.bind((HOST, 0))
        srv.listen(128)
        res = _run(_entries({"name": "connect", "kind": "tcp", "port": srv.getsockname()[1],
                             "rate": "20Hz"}), tmp_path, seconds=1.0)
        w = res["connect"][0]
        assert w["verdict"] == "pass" and w["good"] == w["samples"] >= 5, w
        srv.setblocking(False)
        ends = []
        while True:
            try:
                c, _ = srv.accept()
            except BlockingIOError:
                break
            with c:
                c.settimeout(2)
                try:
                    ends.append("fin" if c.recv(16) == b"" else "data")
                except ConnectionResetError:
                    ends.append("rst")
    # every connection the monitor opened was reset (one a sample, also before the window)
    assert len(ends) >= w["samples"] and set(ends) == {"rst"}, ends
