"""The rig's floods at a chosen rate (`rig freertos-tcp|lwip --rates`), without root: the
study's tools at full rate and at a rate, the attacker interface's shaper that holds a
flood to its rate (tc commands, rtshield.rig.pacing), the scan held by nmap (the pace
the served-device rig's storms use too), the one-line errors of bad rates, the runs'
names and summaries, and which run a board's fit reads its per-frame costs from when
one attack ran at several rates."""

from __future__ import annotations

import math

import pytest
from rig_checks import rig_error
from test_rig_freertos import _fake_run

from rtshield.errors import UsageError
from rtshield.rig import attacks, freertos, pacing
from rtshield.rig.freertos.fit import _fit_rank, board_fit
from rtshield.rig.freertos.phases import run_name_of
from rtshield.rig.network import DEVICE_ADDR, LISTEN_PORT


def test_the_studys_tools_at_every_rate():
    for rate in (None, 2500.0):
        assert attacks.attack_argv("syn", "x", rate) == [
            "hping3", "-S", "--flood", "-q", "-p", str(LISTEN_PORT), DEVICE_ADDR
        ]  # fmt: skip
        arp = attacks.attack_argv("arp", "x", rate)
        assert arp[:2] == ["mausezahn", "x"] and arp[arp.index("-d") + 1] == "0"
    nmap = attacks.attack_argv("nmap", "x")
    assert nmap[0] == "nmap" and "-T5" in nmap and "--min-rate" not in nmap
    assert attacks.flood_shaper("syn", "x", None) == []


def _shaper(attack: str, rate: float) -> dict[str, list[str]]:
    cmds = attacks.flood_shaper(attack, "rtsrigXa", rate)
    assert all("rtsrigXa" in c for c in cmds)
    return {" ".join(c[:2]) + (" " + c[c.index("classid") + 1] if "classid" in c else ""): c
            for c in cmds}  # fmt: skip


def test_a_flood_at_a_rate_is_let_out_evenly_at_it():
    cmds = _shaper("syn", 2500.4)
    root = cmds["qdisc replace"]
    assert root[root.index("root") :] == ["root", "handle", "1:", "htb", "default", "1"]
    tbf = cmds["qdisc add"]
    assert tbf[tbf.index("parent") + 1] == "1:2" and "tbf" in tbf
    # every frame counts as FRAME_UNIT bytes: 2500 frames/s, at most two back to back
    unit = pacing.FRAME_UNIT
    assert tbf[tbf.index("rate") + 1] == f"{2500 * unit * 8}bit"
    assert tbf[tbf.index("mpu") + 1] == str(unit)
    assert tbf[tbf.index("burst") + 1] == str(2 * unit)
    # the SYNs to the listener go to the shaped class, the rest (wanted flows) to 1:1
    flt = cmds["filter add"]
    sel = " ".join(flt[flt.index("protocol") + 1 : flt.index("flowid")])
    assert sel == f"ip u32 match ip protocol 6 0xff match ip dport {LISTEN_PORT} 0xffff"
    assert flt[-2:] == ["flowid", "1:2"]
    assert {"class add 1:1", "class add 1:2"} <= set(cmds)
    assert pacing.unshape_command("rtsrigXa") == ["qdisc", "del", "dev", "rtsrigXa", "root"]


def test_an_arp_flood_at_a_rate_shapes_the_arp_frames():
    flt = _shaper("arp", 800)["filter add"]
    assert flt[flt.index("protocol") + 1] == "arp"
    tbf = _shaper("arp", 800)["qdisc add"]
    assert tbf[tbf.index("rate") + 1] == f"{800 * pacing.FRAME_UNIT * 8}bit"


def test_a_scan_at_a_rate_is_nmap_held_at_it():
    argv = attacks.attack_argv("nmap", "x", 1000)
    assert argv[0] == "nmap" and "-T5" in argv and "-p-" in argv
    assert argv[-4:] == ["--min-rate", "1000", "--max-rate", "1000"]
    assert attacks.flood_shaper("nmap", "x", 1000) == []  # nmap paces itself


@pytest.mark.parametrize(
    "text,rates",
    [("max", [None]), ("2000,5e3,max", [2000.0, 5000.0, None]), (" 7000 ,", [7000.0]),
     ("2.6", [3.0])],
)  # fmt: skip
def test_rates_are_parsed_in_order(text, rates):
    assert attacks.parse_rates(text) == rates


@pytest.mark.parametrize(
    "text,needle",
    [("0", "outside 1-1,000,000"), ("-5", "outside"), ("2e6", "outside"), ("nan", "outside"),
     ("inf", "outside"), ("fast", "'fast' is not a rate"), ("2000,max,2000", "given twice"),
     ("MAX,max", "given twice"), (",", "at least one")],
)  # fmt: skip
def test_bad_rates_are_one_line(text, needle):
    with pytest.raises(UsageError, match=needle) as e:
        attacks.parse_rates(text, "--rates")
    assert str(e.value).startswith("--rates: ") and "\n" not in str(e.value)
    with pytest.raises(UsageError):
        attacks.check_rate(float(text) if text in ("0", "-5", "2e6", "nan", "inf") else math.nan)


@pytest.mark.parametrize("verb", ["freertos-tcp", "lwip"])
@pytest.mark.parametrize("rates", ["0", "fast", "3000,3000", "max,1e7"])
def test_cli_bad_rates_exit_2(capsys, tmp_path, verb, rates):
    msg = rig_error(capsys, ["rig", verb, "--rates", rates, "--out", str(tmp_path / "o")])
    assert f"rig {verb}: --rates: " in msg
    assert not (tmp_path / "o").exists()


def test_run_names_carry_the_rate():
    assert freertos.run_name("protected", "syn") == "protected-syn"
    assert freertos.run_name("unprotected", "arp", 5000.0) == "unprotected-arp-5000pps"
    old = {"variant": "protected", "attack": "syn"}  # recorded before the rate option
    assert run_name_of(old) == "protected-syn"
    assert run_name_of({**old, "flood": {"rate_asked_pps": 2000.0}}) == "protected-syn-2000pps"


@pytest.mark.parametrize("rate", [None, 2000.0])
def test_the_summary_records_the_rate_asked_and_achieved(tmp_path, rate):
    raw, dev, rd = _fake_run(tmp_path, protect=True)
    raw["rate_asked_pps"] = rate
    s = freertos.summarize(raw, dev, rd)
    assert s["flood"] == {
        "rate_asked_pps": rate,
        "at_device_pps": 1000.0,  # the flood's frames at the device's link (_fake_run's)
        "achieved": None if rate is None else 0.5,
    }
    assert s["attack_tool"] == "hping3"
    assert run_name_of(s) == freertos.run_name("protected", "syn", rate)


def test_the_fit_reads_per_frame_costs_from_the_full_rate_syn_run():
    names = ["unprotected-arp", "unprotected-syn-2000pps", "unprotected-syn",
             "unprotected-syn-5000pps", "unprotected-arp-2000pps"]  # fmt: skip
    assert min(names, key=_fit_rank) == "unprotected-syn"
    assert min(names[:2] + names[3:], key=_fit_rank) == "unprotected-syn-5000pps"
    assert min(["unprotected-arp-9000pps", "unprotected-arp"], key=_fit_rank) == "unprotected-arp"
    stack = {"to_stack": 1000.0, "rx_irqs": 500.0, "stack_cpu": 2000.0}
    runs = {
        "unprotected-syn-2000pps": {"isr_per_packet": 9.0, "tick_real": 1100.0, **stack},
        "unprotected-syn": {"isr_per_packet": 6.0, "tick_real": 1120.0,
                            "to_stack": 8000.0, "rx_irqs": 1000.0, "stack_cpu": 9000.0},
        "protected-syn-2000pps": {**{k: 2.0 for k in ("rx_path_regular", "rx_path_prio_raise",
                                                      "rx_path_rejected")}, **stack},
        "protected-syn": {**{k: 1.0 for k in ("rx_path_regular", "rx_path_prio_raise",
                                              "rx_path_rejected")},
                          "to_stack": 300.0, "rx_irqs": 290.0, "stack_cpu": 600.0},
    }  # fmt: skip
    fit = board_fit(runs)
    assert fit["isr_per_packet"][:2] == (6.0, "unprotected-syn")
    assert fit["rx_path_regular"][:2] == (1.0, "protected-syn")
    assert fit["tick_real"][0] == pytest.approx(1110.0)


def test_calibrate_puts_load_points_below_lwips_ceiling():
    """lwIP's stack takes at most 8 input messages a tick (~7 000 frames/s): --calibrate's
    rates for it include rates below that, and full rate above it."""
    lw = freertos.CALIBRATE_RATES["lwip"]
    assert None in lw and any(r is not None and r < 8 / 1.11e-3 for r in lw)
    assert freertos.CALIBRATE_RATES["plustcp"] == (None,)
