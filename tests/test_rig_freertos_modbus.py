"""MODBUS/TCP request/response flows of ``rtshield rig freertos-tcp``: the poll
client's framing and accounting, the client against a real local server, the
scenario's mapping to the target, and the flow in the run's summary.
(The device's request parser is C: rig/freertos/app/test_modbus.c, ctest rig.test_modbus.)"""

from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
from rig_checks import target_text

from rtshield.errors import UsageError
from rtshield.rig import freertos, harness
from rtshield.rig import modbus_client as mc

MODBUS_SCEN = Path(freertos.default_scenario()).with_name("modbus_device.toml")
BOUNDS = [(1000, 2000), (2000, 3000), (3000, 4000)]


def test_requests_are_modbus_tcp():
    r = mc.request(0x1234, 0)
    assert r == bytes([0x12, 0x34, 0, 0, 0, 6, 1, 0x03, 0, 0, 0, mc.READ_COUNT])
    w = mc.request(7, mc.WRITE_EVERY - 1)
    assert w[7] == mc.WRITE_SINGLE and struct.unpack(">H", w[10:12])[0] == mc.WRITE_EVERY - 1


def test_split_keeps_partial_answers_and_refuses_garbage():
    a = bytes([0, 1, 0, 0, 0, 5, 1, 0x03, 2, 0, 9])
    b = bytes([0, 2, 0, 0, 0, 3, 1, 0x83, 2])
    answers, rest = mc.split(a + b[:4])
    assert answers == [(1, bytes([0x03, 2, 0, 9]))] and rest == b[:4]
    answers, rest = mc.split(rest + b[4:])
    assert answers == [(2, bytes([0x83, 2]))] and rest == b""
    with pytest.raises(ValueError):
        mc.split(bytes([0, 1, 0, 1, 0, 5, 1]))  # protocol id 1
    with pytest.raises(ValueError):
        mc.split(bytes([0, 1, 0, 0, 1, 0, 1]))  # length 256: oversized
    with pytest.raises(ValueError):
        mc.split(bytes([0, 1, 0, 0, 0, 1, 1]))  # length 1: no function code


def test_account_counts_timeouts_late_and_exceptions_per_phase():
    T = 100
    recs = [
        (1100, 1150, mc.STATUS_OK),  # idle: on time, 50 ns
        (1200, 1290, mc.STATUS_OK),  # idle: on time, 90 ns
        (2100, 0, mc.STATUS_NONE),  # attack: never answered
        (2200, 2400, mc.STATUS_OK),  # attack: late (200 > 100)
        (2300, 2310, mc.STATUS_EXCEPTION),  # attack: an exception answer
        (2400, 2420, mc.STATUS_OK),  # attack: on time
        (3500, 3600, mc.STATUS_OK),  # after: exactly at the timeout: on time
        (4500, 4510, mc.STATUS_OK),  # outside every phase: whole run only
    ]
    s = mc.account(recs, BOUNDS, T)
    assert (s["offered"], s["delivered"], s["timeouts"], s["late"], s["exceptions"]) == (
        8,
        5,
        2,
        1,
        1,
    )
    ph = s["phases"]
    assert (ph["idle_before"]["offered"], ph["idle_before"]["delivered"]) == (2, 2)
    att = ph["attack"]
    assert (att["offered"], att["delivered"], att["timeouts"], att["late"], att["exceptions"]) == (
        4,
        1,
        2,
        1,
        1,
    )
    assert att["delivered_ratio"] == 0.25
    assert ph["idle_after"]["delivered"] == 1
    assert ph["idle_before"]["latency_us"]["max"] == pytest.approx(0.1)  # 90 ns, rounded
    assert mc.account([], BOUNDS, T)["delivered_ratio"] is None


def _server(lsock: socket.socket, skip_every: int, stop: threading.Event) -> None:
    """A small MODBUS/TCP server: answers every request except each skip_every-th."""
    lsock.settimeout(0.2)
    while not stop.is_set():
        try:
            c, _ = lsock.accept()
        except OSError:
            continue
        c.settimeout(0.2)
        buf, k = b"", 0
        while not stop.is_set():
            try:
                data = c.recv(4096)
            except TimeoutError:
                continue
            if not data:
                break
            buf += data
            while len(buf) >= 12:
                req, buf = buf[:12], buf[12:]
                k += 1
                if k % skip_every == 0:
                    continue
                tid = req[:2]
                if req[7] == mc.READ_HOLDING:
                    pdu = bytes([0x03, 2 * mc.READ_COUNT]) + bytes(2 * mc.READ_COUNT)
                else:
                    pdu = req[7:12]
                c.sendall(tid + struct.pack(">HHB", 0, len(pdu) + 1, 1) + pdu)
        c.close()


def test_poll_client_against_a_real_server(tmp_path):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    stop = threading.Event()
    th = threading.Thread(target=_server, args=(lsock, 5, stop), daemon=True)
    th.start()
    try:
        t0 = mc._mono()
        out = tmp_path / "polls.bin"
        spec = {
            "dst": "127.0.0.1",
            "port": lsock.getsockname()[1],
            "rate": 100.0,
            "end_ns": t0 + 500_000_000,
            "timeout_ns": 200_000_000,
            "out": str(out),
        }
        counts = mc.run(spec)
    finally:
        stop.set()
        th.join(2)
        lsock.close()
    recs = mc.read_records(str(out))
    assert counts["polls"] == len(recs) >= 40  # ~50 slots in 0.5 s
    assert counts["connects"] == 1 and counts["resets"] == 0
    s = mc.account(recs, [(t0, t0 + 500_000_000)], 200_000_000, ("run",))
    # every fifth request unanswered: exactly those are the timeouts
    assert s["timeouts"] == len(recs) // 5
    assert s["delivered"] == len(recs) - len(recs) // 5
    assert s["exceptions"] == 0 and s["latency_us"]["p50"] is not None


def test_poll_client_counts_a_missing_server_as_timeouts(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens: connections are refused
    out = tmp_path / "polls.bin"
    t0 = mc._mono()
    spec = {"dst": "127.0.0.1", "port": port, "rate": 50.0, "end_ns": t0 + 200_000_000,
            "timeout_ns": 50_000_000, "out": str(out)}  # fmt: skip
    counts = mc.run(spec)
    recs = mc.read_records(str(out))
    assert counts["connects"] == 0 and counts["connect_failures"] == len(recs) >= 5
    acc = mc.account(recs, [(t0, t0 + 200_000_000)], 50_000_000, ("run",))
    assert acc["delivered"] == 0 and acc["timeouts"] == len(recs)


# ------------------------------------------------------------------ the scenario


def _cfg(scen: Path, variant: str = "protected") -> dict[str, list[str]]:
    text = target_text(scen, variant)
    return {ln.split()[1]: ln.split()[2:] for ln in text.splitlines() if ln.startswith("flow ")}


def test_modbus_flow_reaches_the_target_and_the_poller():
    flows = _cfg(MODBUS_SCEN)
    # name: proto port prio capacity server_period_us queue worker_prio work_us
    assert flows["modbus"] == ["modbus", "5020", "5", "50", "25000", "0", "5", "50"]
    assert flows["syn_flood"][0] == "tcp"  # the stepped TCP flow stays the listener
    dev = freertos.load_device(MODBUS_SCEN, stock_priority=6)
    assert freertos.modbus_flows(dev.variants["protected"]) == [
        {"name": "modbus", "port": 5020, "rate": 100.0}
    ]
    assert freertos._hp_flow(dev.variants["protected"]) == "modbus"


@pytest.mark.parametrize(
    "old,new,needle",
    [
        # the scenario itself refuses two flows bound to one port; with the flood elsewhere
        # (not the listener) the rig refuses a MODBUS flow on the listener's port
        ("dst_port = 5020", f"dst_port = {harness.LISTEN_PORT}", "already bound"),
        (
            'pattern = "constant"\nrate = "100pps"',
            'pattern = "poisson"\nrate = "100pps"',
            "constant",
        ),
    ],
)
def test_bad_modbus_flows_are_refused_in_one_line(tmp_path, old, new, needle):
    text = MODBUS_SCEN.read_text()
    assert old in text
    p = tmp_path / "dev.toml"
    p.write_text(text.replace(old, new, 1))
    with pytest.raises(UsageError) as e:
        _cfg(p)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_modbus_flow_in_the_summary(tmp_path):
    dev = freertos.load_device(MODBUS_SCEN, 6, phase_s=1.0)
    rd = tmp_path / "run"
    rd.mkdir()
    t0, S = 10**10, 10**9
    bounds = [(t0, t0 + S), (t0 + S, t0 + 2 * S), (t0 + 2 * S, t0 + 3 * S)]
    np.array(
        [
            (t0 + k * 10**7, t0 + k * 10**7 + 50_000, t0 + k * 10**7 + 2_000_000, 0)
            for k in range(300)
        ],
        dtype="<u8",
    ).tofile(rd / "cycles.bin")
    with open(rd / "modbus_modbus.bin", "wb") as f:
        for k in range(300):  # 100 polls per phase; the attack leaves every other unanswered
            s = t0 + k * 10**7
            ans = 0 if (S <= s - t0 < 2 * S and k % 2) else s + 300_000
            f.write(struct.pack("<QQQ", s, ans, mc.STATUS_OK if ans else mc.STATUS_NONE))
    snaps = [
        {"t_ns": t0 + i * 10**8, "nic_frames": 0, "ring_full": 0, "shield_dropped": 0,
         "stack_exhausted": 0, "ip_queue_full": 0, "no_endpoint": 0, "to_ip_task": 0,
         "tx_frames": 0, "cycles": 0, "misses": 0, "shield_drops": [0] * 6,
         "delivered": [0, 0, 0]}
        for i in range(31)
    ]  # fmt: skip
    netif = dict.fromkeys(
        ("nic_frames", "ring_full", "shield_dropped", "stack_exhausted", "ip_queue_full",
         "no_endpoint", "to_ip_task", "tx_frames", "tx_errors", "rx_irqs", "shield_ns",
         "shield_frames", "to_stack_ns", "to_stack_frames"), 0)  # fmt: skip
    device = {
        "cycles": 300,
        "misses": 0,
        "netif": netif,
        "shield_drops": [0] * 6,
        "flows": {
            "modbus": {
                "proto": "modbus",
                "port": 5020,
                "delivered": 250,
                "latency_recorded": 0,
                "connections": 1,
                "refused": 0,
            },  # fmt: skip
            "bulk": {"proto": "udp", "port": 6000, "delivered": 0, "latency_recorded": 0},
            "syn_flood": {"proto": "tcp", "port": 502, "delivered": 0, "latency_recorded": 0},
        },
        "snapshots": snaps,
    }
    raw = {"variant": "protected", "attack": "syn", "bounds_ns": bounds,
           "sent": {"sent": {}, "total": {}}, "modbus": {"modbus": {"polls": 300}},
           "traffic": {}, "device": device}  # fmt: skip
    s = freertos.summarize(raw, dev, rd)
    m = s["flows"]["modbus"]
    assert (m["offered"], m["delivered"], m["dropped"], m["timeouts"]) == (300, 250, 50, 50)
    assert m["served_by_device"] == 250 and m["connections"] == 1
    assert m["latency_us"]["p50"] == pytest.approx(300.0)
    ph = s["phases"]
    assert [ph[p]["flows"]["modbus"]["offered"] for p in freertos.PHASES] == [100, 100, 100]
    assert [ph[p]["flows"]["modbus"]["delivered"] for p in freertos.PHASES] == [100, 50, 100]


def test_modbus_flow_on_the_listeners_port_is_refused(tmp_path):
    text = MODBUS_SCEN.read_text()
    text = text.replace(f"dst_port = {harness.LISTEN_PORT} ", "dst_port = 503 ", 1)
    p = tmp_path / "dev.toml"
    p.write_text(text.replace("dst_port = 5020", f"dst_port = {harness.LISTEN_PORT}", 1))
    with pytest.raises(UsageError) as e:
        _cfg(p)
    assert "other than the attacks' listener" in str(e.value)


def test_the_modbus_scenario_makes_the_claims_in_simulation(tmp_path):
    """The simulated side for the MODBUS device: protected keeps the MODBUS flow and
    the critical task, unprotected does not; the report's every-flow table has it."""
    dev = freertos.load_device(MODBUS_SCEN, 6, phase_s=1.0)
    sim = freertos.simulate_variants(dev, tmp_path)
    p, u = sim["protected"], sim["unprotected"]
    assert p["critical"]["misses"] == 0
    assert p["flows"]["modbus"]["delivered"] == p["flows"]["modbus"]["offered"] > 0
    assert u["critical"]["misses"] > 0 or (
        u["flows"]["modbus"]["delivered"] < u["flows"]["modbus"]["offered"]
    )
    table = freertos._flow_table(
        {"simulation": freertos._sim_table(sim, "modbus"), "runs": [
            {"run": "protected-syn", "flows": {"modbus": {"offered": 300, "delivered": 299}}}
        ]}
    )  # fmt: skip
    assert "simulation, protected" in table and "299/300" in table
