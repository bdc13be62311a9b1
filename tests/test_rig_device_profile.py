"""Storm profiles of `rtshield rig device`: the schema, its one-line errors, its JSON
Schema, the steps under the rate cap and the tools' command lines. No root needed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from rtshield import tomlfile
from rtshield.errors import UsageError
from rtshield.rig import device, freertos, pacing, serve
from rtshield.rig.device import storms
from rtshield.rig.pacing import FRAME_UNIT
from rtshield.scenario import load_scenario
from rtshield.schema import json_schema
from rtshield.schema.profile import MONITOR_KINDS, STORM_KINDS, ProfileFile

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "tests" / "data" / "rig" / "device_smoke.toml"

MINIMAL = """
[[storm]]
name = "s"
kind = "icmp_echo"

[[monitor]]
name = "m"
kind = "icmp"
"""


def _load(tmp_path: Path, text: str) -> ProfileFile:
    p = tmp_path / "p.toml"
    p.write_text(text)
    return device.load_profile(p)[0]


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(UsageError) as e:
        _load(tmp_path, text)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "p.toml") + ": ")
    return msg.split(": ", 1)[1]


def test_shipped_profiles_are_valid_and_cover_every_kind():
    prof, text = device.load_profile(device.default_profile())
    assert {s.kind for s in prof.storm} == set(STORM_KINDS)
    assert {m.kind for m in prof.monitor} == set(MONITOR_KINDS)
    assert text.startswith("# The default storm profile")
    # the heartbeat alone is optional: the FreeRTOS and lwIP devices send none
    assert [m.name for m in prof.monitor if m.optional] == ["heartbeat"]
    # the rule: each step up to three runs, failed by two; ping informational in ICMP storms
    assert (prof.profile.repeat, prof.profile.fail_runs_or_default) == (3, 2)
    assert {m.name: m.informational_in for m in prof.monitor if m.informational_in} == {
        "ping": ["icmp_echo"]}
    smoke = device.load_profile(SMOKE)[0]
    assert [s.name for s in smoke.storm] == ["bcast", "syn"]



@pytest.mark.parametrize("board", sorted(freertos.BOARDS))
def test_default_monitors_watch_the_served_devices_essential_tcp_service(board):
    """The default profile's TCP monitors (MODBUS polls, connects) watch the TCP flow the
    served device ranks highest -- its essential service --, not the listener its scenario
    ranks lowest (shed first under overload: a monitor there would fail the device for its
    own ranking, docs/decisions/rig-device.md); the SYN storm hits that listener."""
    flows = load_scenario(serve.served_scenario(freertos.Target("plustcp", board))).flows
    tcp = {f.dst_port: f.priority for f in flows if f.protocol == "tcp"}
    top, bottom = max(f.priority for f in flows), min(f.priority for f in flows)
    prof = device.load_profile(device.default_profile())[0]
    watched = {m.name: m.port for m in prof.monitor if m.kind in ("modbus", "tcp")}
    assert watched.keys() == {"modbus", "connect"}
    for name, port in watched.items():
        assert tcp.get(port) == top, (name, port, tcp)
    assert watched["modbus"] == serve.MODBUS_PORT  # the Linux device's server too
    syn = next(s for s in prof.storm if s.name == "syn_open")
    assert tcp.get(syn.port) == bottom and syn.port not in watched.values()

def test_defaults_of_a_minimal_profile(tmp_path):
    p = _load(tmp_path, MINIMAL)
    m = p.monitor[0]
    assert (m.rate, m.timeout, m.latency, m.within, m.max_gap, m.recover) == (
        10.0, 10**9, 100 * 10**6, 0.95, 10**9, 5 * 10**9)
    assert p.ramp.rates == [1000.0, 10000.0, "max"]
    assert p.profile.baseline == 3 * 10**9 and p.profile.stop_at_failure
    assert (p.profile.repeat, p.profile.fail_runs, p.profile.fail_runs_or_default) == (3, None, 2)
    assert m.informational_in == []
    assert device.Criteria.of(m).limit_ns == 100 * 10**6


@pytest.mark.parametrize(
    "text, message",
    [
        (MINIMAL.replace('"icmp_echo"', '"smurf"'),
         "storm.s.kind: 'smurf' is not a storm kind: eth_broadcast"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "tcp_syn"'),
         "storm.s.port: missing (required)"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "tcp_syn"\nport = 70000'),
         "storm.s.port: must be at most 65535, got 70000"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "icmp_echo"\nport = 80'),
         "storm.s.port: unknown key (allowed: kind, name, pause, rates, step)"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "icmp_echo"\nrates = ["2kpps"]'),
         "storm.s.rates[0]:"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "icmp_echo"\nrates = ["2000pps", '
                         '"1000pps"]'), "the rates must rise: step 2 is not above step 1"),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "icmp_echo"\nrates = ["max", '
                         '"1000pps"]'), '"max" can only be the last step'),
        (MINIMAL.replace('kind = "icmp_echo"', 'kind = "nmap"\nports = "1-99999"'),
         "storm.s.ports: '1-99999' is not a port list"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "icmp"\nlatency = "2s"'),
         "monitor.m.latency: must be at most the timeout"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "heartbeat"'),
         "monitor.m.period: missing (required)"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "heartbeat"\nperiod = "10ms"\njitter = "20ms"'),
         "monitor.m.jitter: must be shorter than the period"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "icmp"\nwithin = 1.5'),
         "monitor.m.within: must be above 0 and at most 1, got 1.5"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "icmp"\nmax_gap = "50ms"'),
         "monitor.m.max_gap: must be at least one sample interval"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "icmp"\nport = 7'),
         "monitor.m.port: unknown key"),
        (MINIMAL + '\n[[monitor]]\nname = "m"\nkind = "tcp"\n',
         "monitor.m.name: the monitor name 'm' is used twice"),
        (MINIMAL.split("[[monitor]]")[0], "monitor: missing (required)"),
        ("[profile]\nbaseline = \"0s\"\n" + MINIMAL, "profile.baseline: must be positive"),
        ("[ramp]\nstep = \"7200s\"\n" + MINIMAL, "ramp.step: must be at most 3600 s"),
        ("[profil]\n" + MINIMAL, "profil: unknown section"),
        ("[profile]\nrepeat = 0\n" + MINIMAL, "profile.repeat: must be at least 1, got 0"),
        ("[profile]\nrepeat = 10\n" + MINIMAL, "profile.repeat: must be at most 9, got 10"),
        ("[profile]\nrepeat = 2\nfail_runs = 3\n" + MINIMAL,
         "profile.fail_runs: must be at most repeat (2), got 3"),
        (MINIMAL.replace('kind = "icmp"', 'kind = "icmp"\ninformational_in = ["ping"]'),
         "monitor.m.informational_in[0]: 'ping' is not a storm kind: eth_broadcast"),
    ],
)
def test_bad_profiles_are_one_line_naming_the_key(tmp_path, text, message):
    assert message in _error(tmp_path, text)


def test_json_schema_accepts_the_shipped_profiles_and_refuses_bad_keys(tmp_path):
    schema = json_schema("profile")
    v = jsonschema.Draft202012Validator(schema)
    for path in (device.default_profile(), SMOKE):
        assert not list(v.iter_errors(tomlfile.read_toml(path)))
    bad = tomlfile.parse_toml(MINIMAL.replace('kind = "icmp_echo"', 'kind = "icmp_echo"\n'
                                              "port = 80"), "x")
    assert list(v.iter_errors(bad))  # a port on an ICMP storm
    assert set(schema["$defs"]["StormEntry"]["properties"]["kind"]["enum"]) == set(STORM_KINDS)


def test_schema_command_prints_the_profile_schema(tmp_path):
    out = tmp_path / "profile.schema.json"
    p = subprocess.run([sys.executable, "-m", "rtshield", "schema", "profile", "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["title"] == "rtshield storm profile"


def test_steps_under_the_cap():
    def rates(rs, cap):
        return [(s.rate, s.capped) for s in storms.plan_steps(rs, cap)]

    assert rates([1000.0, 10000.0, "max"], 50000.0) == [
        (1000.0, False), (10000.0, False), (50000.0, True)]
    assert rates([1000.0, 10000.0, "max"], None) == [(1000.0, False), (10000.0, False),
                                                      (None, False)]
    # a step the cap makes equal to the one before is left out
    assert rates([1000.0, 10000.0, 20000.0, "max"], 5000.0) == [(1000.0, False), (5000.0, True)]


EP = storms.Endpoints("eth9", "02:00:00:00:00:02", "10.0.0.2", "02:00:00:00:00:01", "10.0.0.1")


def _storm(kind: str, **keys) -> object:
    p = ProfileFile.model_validate({
        "storm": [{"name": "s", "kind": kind, **keys}],
        "monitor": [{"name": "m", "kind": "icmp"}],
    })
    return p.storm[0]


@pytest.mark.parametrize(
    "kind, keys, needles",
    [
        ("eth_broadcast", {}, ["da=ff:ff:ff:ff:ff:ff", "type=0x88b5"]),
        ("eth_multicast", {}, ["da=01:00:5e:00:00:01"]),
        ("arp_request", {}, ["op=request", "tip=10.0.0.1", "da=ff:ff:ff:ff:ff:ff"]),
        ("arp_reply", {}, ["op=reply", "tmac=02:00:00:00:00:01", "da=02:00:00:00:00:01"]),
        ("icmp_echo", {}, ["icmp4(type=8", "da=10.0.0.1"]),
        ("ipv4_frag_incomplete", {}, ["id=dinc(), mf", "proto=17"]),
        ("ipv4_frag_overlap", {}, ["id=dinc(), mf", "frag=3"]),
        ("tcp_syn", {"port": 502}, ["dp=502, syn"]),
        ("udp", {"port": 6000, "size": 0}, ["dp=6000)"]),
    ],
)
def test_trafgen_storms(kind, keys, needles):
    argv = storms.storm_argv(_storm(kind, **keys), 1234.4, EP)
    assert argv[:3] == ["trafgen", "--dev", "eth9"]
    assert "-Q" in argv and "--no-sock-mem" in argv  # the host's IRQs and socket limits
    # at a rate: full speed through the queueing discipline, where the shaper holds it;
    # trafgen's own --rate (a burst each second) is not used
    assert "-q" in argv and "--rate" not in argv
    for n in needles:
        assert n in argv[-1], (n, argv[-1])
    full = storms.storm_argv(_storm(kind, **keys), None, EP)
    assert "-q" not in full and "--rate" not in full  # uncapped max: straight to the driver
    # the shaper's filter selects the storm's frames by what only they carry
    match = storms.storm_match(_storm(kind, **keys), EP)
    if kind.startswith("eth_"):
        assert match[0] == "0x88b5" and "type=0x88b5" in argv[-1]
    elif kind.startswith("arp_"):
        assert match[:2] == ["arp", "u32"] and match[-1] == "28"  # after the 28-byte ARP
        assert match[match.index("match") + 2] == "0x5a5a5a5a"
        assert "fill(0x5a, 18)" in argv[-1]  # padded to 60 bytes with it
    else:
        assert match[:2] == ["ip", "u32"] and "10.0.0.1/32" in match
        assert match[match.index("u8") + 1] == str(storms.STORM_TTL)
        assert argv[-1].count(f"ttl={storms.STORM_TTL}") == argv[-1].count("ipv4(")


def test_overlapping_fragments_overlap():
    """The second fragment starts (offset x 8 bytes) inside the first one's payload."""
    cfg = storms.trafgen_packet(_storm("ipv4_frag_overlap"), EP)
    first, second = cfg.split("} {")
    first_len = 8 + 24  # its UDP header and fill
    offset = 8 * int(second.split("frag=")[1].split(",")[0])
    assert 0 < offset < first_len


def test_nmap_storm_is_paced_and_repeated():
    argv = storms.storm_argv(_storm("nmap", ports="1-1024"), 800.0, EP)
    assert argv[:2] == ["sh", "-c"] and argv[2].startswith("while :; do nmap -e eth9 ")
    assert "--min-rate 800 --max-rate 800" in argv[2] and "-p 1-1024" in argv[2]
    assert "--min-rate" not in storms.storm_argv(_storm("nmap"), None, EP)[2]
    assert storms.storm_match(_storm("nmap", ports="1-1024"), EP) is None  # no shaper


def test_select_storms_and_monitors():
    prof = device.load_profile(device.default_profile())[0]
    sel = device.select(prof, ["nmap", "syn_open"], ["ping"])
    assert [s.name for s in sel.storm] == ["syn_open", "nmap"]  # the profile's order
    assert [m.name for m in sel.monitor] == ["ping"]
    with pytest.raises(UsageError, match="no storm named smurf"):
        device.select(prof, ["smurf"], None)


def test_the_shapers_unit_fits_the_largest_frame():
    """The bucket counts each frame as ``pacing.FRAME_UNIT`` bytes, or as the storm's
    largest frame when that is larger (UDP datagrams of up to 1 472 bytes): a frame of
    1 514 bytes counted as 1 000 would hold the storm at two thirds of its rate."""
    big = storms.largest_frame(_storm("udp", port=9, size=1472))
    assert big == 1514 and storms.largest_frame(_storm("tcp_syn", port=502)) < FRAME_UNIT
    tbf = pacing.shaper_commands("eth9", 800, ["ip", "u32"], big)[3]
    assert tbf[tbf.index("mpu") + 1] == "1514"
    assert tbf[tbf.index("rate") + 1] == f"{800 * 1514 * 8}bit"
    small = pacing.shaper_commands("eth9", 800, ["ip", "u32"], 60)[3]
    assert small[small.index("mpu") + 1] == str(FRAME_UNIT)
