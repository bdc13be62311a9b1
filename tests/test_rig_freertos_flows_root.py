"""MODBUS/TCP request/response and pcap-replay flows on the real FreeRTOS-Plus-TCP
target, as root: one unprotected and one protected run of a device with a
MODBUS flow (polled by the rig's controller) and a replayed capture, under a
SYN flood of 2 s. Skips with the reason without root, the tools, the
FreeRTOS trees or a compiler. Nothing is timed: the waits only stop a hung test.
(Separate from test_rig_freertos_smoke.py so that smoke stays short; the rig's tests
run one at a time: tests/conftest.py.)"""

from __future__ import annotations

import json

from rig_checks import links_left, procs_of, read_runs, rig, run_tag
from test_rig_freertos_smoke import built, pytestmark  # noqa: F401 (fixture)

from rtshield.rig import freertos

SCEN = freertos.default_scenario().with_name("modbus_device.toml")
PCAP = freertos.default_scenario().parent.parent.parent / "scenarios/behnke_hardware/modbus_q0.pcap"


def test_modbus_and_pcap_flows_on_the_real_stack(tmp_path, built):  # noqa: F811
    scen = tmp_path / "dev.toml"
    text = SCEN.read_text().replace(
        "[[tasks]]",
        f'[[flows]]\nname = "plc_replay"\nprotocol = "tcp"\ndst_port = 502\nbind = false\n'
        f'pattern = "pcap"\nfile = "{PCAP}"\nloop = true\n\n[[tasks]]',
        1,
    )
    scen.write_text(text)
    out = tmp_path / "mb"
    args = ["--attacks", "syn", "--phase-seconds", "2", "--break-seconds", "0.5"]
    p = rig("freertos-tcp", "--scenario", str(scen), *args, "--out", str(out))
    _, stderr = p.communicate(timeout=240)
    assert p.returncode == 0, stderr
    runs = read_runs(out, "syn")
    for v, s in runs.items():
        m = s["flows"]["modbus"]
        # the controller polled over one connection and the target answered
        assert m["connections"] >= 1 and m["refused"] == 0, (v, m)
        assert m["offered"] > 100 and m["served_by_device"] > 0.5 * m["offered"], (v, m)
        assert m["latency_us"]["p50"] is not None, (v, m)
        assert s["phases"]["attack"]["flows"]["modbus"]["offered"] > 100, v
        # the capture was replayed, ~50 frames/s, in every phase
        r = s["flows"]["plc_replay"]
        assert r["replayed"] and r["offered"] > 100, (v, r)
        assert all(s["phases"][ph]["flows"]["plc_replay"]["offered"] > 40 for ph in freertos.PHASES)
        assert s["traffic"]["flood_in"] > 1000, v
    att = runs["protected"]["phases"]["attack"]["flows"]["modbus"]
    assert att["delivered"] >= 0.9 * att["offered"], att  # protected: the polls are answered
    comp = json.loads((out / "comparison.json").read_text())
    row = {r["run"]: r for r in comp["runs"]}["protected-syn"]
    assert set(row["flows"]) >= {"modbus", "plc_replay"}
    assert set(comp["simulation"]["protected"]["flows"]) >= {"modbus", "plc_replay"}
    assert "Every flow" in (out / "report.html").read_text()
    assert links_left(run_tag(p.pid)) + procs_of(run_tag(p.pid)) == []
