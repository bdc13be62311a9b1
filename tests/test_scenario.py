"""Scenario files: the valid shape, and precise one-line errors for bad input."""

import pickle
import re
import subprocess
import sys

import pytest
from scenario_texts import (
    cases,
    danicki_device,
    edited,
    mote,
    refused,
    two_source_flows,
)

from rtshield import scenario as scenario_module
from rtshield.errors import UsageError
from rtshield.scenario import (
    available_platforms,
    load_platform,
    load_scenario,
    loads_scenario,
)

BASE = (
    """
[scenario]
name = "queue_500"
description = "Queue Mitigation with a queue of 500 packets"
source = "Danicki et al. §3, Figure 8"
platform = "esp32-freertos"
duration = "40s"
bin = "1s"
seed = 7

[costs]
isr_per_packet = "6us"
"""
    + danicki_device(500)
    + """
[nic]
kind = "edge"

[mitigation]
kind = "queue"

[[flows]]
name = "syn"
protocol = "tcp"
dst_port = 80
size = 60
pattern = "pyramid"
start = "0pps"
peak = "150000pps"
step = "10000pps"
step_every = "1s"
"""
)


def test_valid_scenario_is_typed_and_merged_with_the_preset():
    s = loads_scenario(BASE, "q.toml")
    assert s.name == "queue_500"
    assert s.platform.name == "esp32-freertos"
    assert s.duration_ns == 40 * 10**9 and s.bin_ns == 10**9 and s.bins == 40
    assert s.seed == 7
    assert s.critical.period_ns == 10_000_000 and s.critical.work_ns == 4_000_000
    assert s.critical.core == 0  # from the preset's [defaults.critical]
    assert s.driver.queue == 500 and s.driver.priority == 2
    assert s.nic.kind == "edge" and s.nic.ring is None
    assert s.mitigation.kind == "queue" and s.mitigation.parameters() == {}
    # [costs] override replaces one key; the others come from the preset.
    _, preset_costs, _ = load_platform("esp32-freertos")
    assert s.costs["isr_per_packet"] == 6_000
    for k in preset_costs:
        if k != "isr_per_packet":
            assert s.costs[k] == preset_costs[k]
    assert set(s.costs) == set(preset_costs)


def test_preset_defaults_fill_missing_sections():
    text = BASE.replace('[critical]\nperiod = "10ms"\nwork = "4ms"\npriority = 3\n', "")
    s = loads_scenario(text, "q.toml")
    assert s.critical.period_ns == 10_000_000
    assert s.critical.priority > s.driver.priority


def test_pyramid_schedule_rises_in_steps_and_falls_back():
    s = loads_scenario(BASE, "q.toml")
    sched = s.flows[0].schedule(s.duration_ns)
    rates = [r for _, r in sched]
    assert rates[0] == 0.0
    assert max(rates) == 150000.0
    # 0, 10k, ..., 150k, 140k, ..., 0: 31 levels of 1 s each
    assert len(sched) == 31
    assert sched[15] == (15 * 10**9, 150000.0)
    assert sched[-1] == (30 * 10**9, 0.0)
    assert s.flows[0].rate_at(5_500_000_000, s.duration_ns) == 50000.0
    assert s.flows[0].rate_at(25_500_000_000, s.duration_ns) == 50000.0
    assert not s.flows[0].random


def test_a_pyramid_at_a_constant_rate():
    f = loads_scenario(BASE, "q.toml").flows[0].at_constant_rate(2500.0)
    assert f.pattern == "constant" and not f.random
    assert f.schedule(10**9) == ((0, 2500.0),)
    assert (f.start_pps, f.peak_pps, f.step_pps, f.step_every_ns) == (None,) * 4


def test_steps_constant_poisson_begin_end():
    text = """
[scenario]
name = "mix"
platform = "esp32-freertos"
duration = "10s"
[[flows]]
name = "bg"
pattern = "poisson"
protocol = "udp"
dst_port = 502
rate = "200pps"
[[flows]]
name = "flood"
pattern = "steps"
rates = ["1kHz", "600/20ms", "0pps"]
step_every = "2s"
begin = "1s"
[[flows]]
name = "c"
pattern = "constant"
rate = "5000pps"
begin = "2s"
"""
    s = loads_scenario(text, "mix.toml")
    assert s.flows[0].random and s.flows[0].schedule(s.duration_ns) == ((0, 200.0),)
    assert s.flows[1].schedule(s.duration_ns) == (
        (0, 0.0), (10**9, 1000.0), (3 * 10**9, 30000.0), (5 * 10**9, 0.0))
    assert s.flows[2].schedule(s.duration_ns) == ((0, 0.0), (2 * 10**9, 5000.0))
    assert s.nic.core == s.driver.core == s.critical.core == 0
    assert s.platform.time_slicing is True
    assert s.mitigation.kind == "none"


def test_mitigation_parameters_are_typed():
    text = BASE.replace('kind = "queue"', 'kind = "hysteresis"\nblock_below = 0.10\n'
                        'unblock_above = "50%"\nsleep = "2ms"')
    m = loads_scenario(text, "h.toml").mitigation
    assert (m.block_below, m.unblock_above, m.sleep_ns) == (0.10, 0.50, 2_000_000)
    assert m.parameters() == {"block_below": 0.1, "unblock_above": 0.5, "sleep": "2ms"}
    text = BASE.replace('kind = "queue"', 'kind = "burst"\nslice = "20ms"\ncapacity = 600')
    m = loads_scenario(text, "b.toml").mitigation
    assert (m.slice_ns, m.capacity) == (20_000_000, 600)


def test_scenario_is_frozen_and_picklable():
    s = loads_scenario(BASE, "q.toml")
    with pytest.raises(AttributeError):
        s.seed = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(s)) == s


def test_overrides_shorten_a_run():
    s = loads_scenario(BASE, "q.toml", overrides={"scenario": {"duration": "5s"}})
    assert s.duration_ns == 5 * 10**9
    assert s.driver.queue == 500


# Bad input and its one-line message: tests/data/scenario_refusals.toml.
@pytest.mark.parametrize("case", cases("scenario_refusals.toml", "base"))
def test_bad_input_names_the_key(case):
    refused(edited(BASE, case), case["expect"])


def test_an_entry_is_named_by_name_or_else_by_position():
    """flows.NAME.key as sweep takes it; by position where two flows share the name."""
    flow = '[[flows]]\nname = "{}"\npattern = "constant"\nrate = "1pps"\ndst_port = 70000\n'
    for name, where in (("other", "flows.other.dst_port:"), ("syn", "[flows #2] dst_port:")):
        with pytest.raises(UsageError) as ei:
            loads_scenario(BASE + flow.format(name), "bad.toml")
        assert str(ei.value).startswith(f"bad.toml: {where} must be at most 65535"), ei.value


def test_unknown_platform_lists_the_available_ones():
    with pytest.raises(UsageError) as ei:
        loads_scenario(BASE.replace("esp32-freertos", "nope"), "x.toml")
    for name in available_platforms():
        assert name in str(ei.value)


def test_missing_file(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        load_scenario(tmp_path / "absent.toml")


def test_every_committed_scenario_loads():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "scenarios"
    # scenarios/analysis/ holds SYSTEM.toml files for `rtshield analyze`, not scenarios;
    # scenarios/calibration/ holds calibration files for `rtshield calibrate`.
    other = {"analysis", "calibration"}
    files = sorted(f for f in root.rglob("*.toml") if not other & set(f.relative_to(root).parts))
    assert files
    for f in files:
        s = load_scenario(f)
        assert s.flows, f


def test_cli_bad_scenario_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace("queue = 500", "queue = 0"), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "rtshield", "run", str(bad), "--out", str(tmp_path / "o")],
        capture_output=True, text=True,
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "[driver] queue" in lines[0]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "o" / "summary.json").exists()


def test_too_many_flows():
    extra = "".join(f'[[flows]]\nname = "f{i}"\npattern = "constant"\nrate = "1pps"\n'
                    for i in range(8))
    with pytest.raises(UsageError, match=r"\[\[flows\]\]: at most 8 flows"):
        loads_scenario(BASE + extra, "many.toml")


def test_too_many_rates_in_a_steps_flow():
    n = scenario_module.native_limits()["rates"]
    rates = ", ".join(['"1pps"'] * (n + 1))
    extra = f'[[flows]]\nname = "s"\npattern = "steps"\nstep_every = "1s"\nrates = [{rates}]\n'
    refused(BASE + extra, f"flows.s.rates: at most {n} rates, got {n + 1}")


def test_limits_are_read_from_the_engine_header(monkeypatch):
    from rtshield import _native, scenario

    _, lib = _native.load()
    assert scenario.MAX_CORES == lib.RTSIM_MAX_CORES
    assert scenario.MAX_TASKS == lib.RTSIM_MAX_TASKS
    assert scenario.MAX_FLOWS == lib.RTSIM_MAX_FLOWS
    assert scenario.MAX_RATES == lib.RTSIM_MAX_RATES
    # read through the binding, not restated: another build's limits move them
    lim = dict(_native.native_limits())
    lim.update(cores=3, flows=5)
    monkeypatch.setattr(_native, "native_limits", lambda: lim)
    assert scenario.MAX_CORES == 3 and scenario.MAX_FLOWS == 5


def test_overrides_from_the_command_line():
    from rtshield.scenario import parse_overrides

    sets = parse_overrides(["driver.queue=750", "scenario.duration=10s",
                            'mitigation.kind="burst"', "mitigation.slice=20ms",
                            "mitigation.capacity=600"])
    assert sets == {"driver": {"queue": 750}, "scenario": {"duration": "10s"},
                    "mitigation": {"kind": "burst", "slice": "20ms", "capacity": 600}}
    s = loads_scenario(BASE, "q.toml", overrides=sets)
    assert s.driver.queue == 750 and s.duration_ns == 10 * 10**9
    assert s.mitigation.kind == "burst" and s.mitigation.capacity == 600


@pytest.mark.parametrize("item,needle", [
    ("driver.queue", "--set: expected SECTION.KEY=VALUE"),
    ("queue=3", "--set: expected SECTION.KEY=VALUE"),
    ("flows.rate=1pps", "--set: flows.rate: [[flows]] entries cannot be set"),
])
def test_bad_set_syntax(item, needle):
    from rtshield.scenario import parse_overrides

    with pytest.raises(UsageError, match=re.escape(needle)):
        parse_overrides([item])


@pytest.mark.parametrize("sets,needle", [
    ({"driver": {"queue": 0}}, "--set: [driver] queue: must be at least 1"),
    ({"driver": {"colour": 1}}, "--set: [driver] colour: unknown key"),
    ({"nics": {"kind": "edge"}}, "--set: [nics]: unknown section"),
    ({"mitigation": {"capacity": 5}}, "--set: [mitigation] capacity: is a parameter of burst"),
    ({"mitigation": {"kind": "burst"}}, "q.toml: [mitigation] slice: missing"),
])
def test_bad_override_names_its_origin(sets, needle):
    from rtshield.scenario import parse_scenario

    data = scenario_module.tomllib.loads(BASE)
    with pytest.raises(UsageError) as ei:
        parse_scenario(data, "q.toml", overrides=sets, overrides_origin="--set")
    assert needle in str(ei.value)


def test_cli_set_changes_the_run(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "rtshield", "run", str(_q500()), "--out", str(tmp_path / "o"),
         "--set", "driver.queue=0"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == ("rtshield: error: --set: [driver] queue: must be at least 1, "
                                  "got 0")


def _q500():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "scenarios" / "danicki2021" / "queue_500.toml"


def test_every_shipped_preset_loads():
    names = available_platforms()
    assert "esp32-freertos" in names
    for name in names:
        plat, costs, defaults = load_platform(name)
        assert plat.name == name and plat.cores >= 1 and plat.tick_ns > 0
        assert all(isinstance(v, int) and v >= 0 for v in costs.values())


def test_preset_name_must_match_its_file(tmp_path, monkeypatch):
    from rtshield import scenario as sc

    (tmp_path / "mine.toml").write_text(
        '[platform]\nname = "other"\nclock_hz = 4e6\ncores = 1\ntick = "1ms"\n'
        'tick_isr = "79cyc"\n[costs]\nisr_entry_exit = "79cyc"\n')
    monkeypatch.setattr(sc, "platforms_dir", lambda: tmp_path)
    with pytest.raises(UsageError, match=r"mine.toml: \[platform\] name: 'other' does not match"):
        load_platform("mine")
    (tmp_path / "mine.toml").write_text(
        '[platform]\nname = "mine"\nclock_hz = 4e6\ncores = 1\ntick = "1ms"\n'
        'tick_isr = "79cyc"\n[costs]\nisr_entry_exit = "79cyc"\n')
    plat, costs, _ = load_platform("mine")
    assert plat.tick_isr_ns == 19750 and costs["isr_entry_exit"] == 19750


# ----------------------------------------------------------------- [[sources]]

TWO = (
    mote("two", "2s", "5ms")
    + """
[mitigation]
kind = "bursty"
period = "5ms"

[[sources]]
name = "A"
isr_work = "250cyc"
burst = 5
isr_only = true

[[sources]]
name = "B"
burst = 7
"""
    + two_source_flows("3kHz", "3kHz")
)


def test_sources_are_typed_and_bound_to_flows():
    s = loads_scenario(TWO, "two.toml")
    a, b = s.sources
    assert (a.name, a.index, a.burst, a.isr_only) == ("A", 0, 5, True)
    assert a.isr_work_ns == 62_500  # 250 cycles at 4 MHz
    assert (b.name, b.index, b.burst, b.isr_only) == ("B", 1, 7, False)
    assert b.isr_work_ns == s.costs["isr_per_packet"]  # default: the preset's cost
    assert [f.source for f in s.flows] == ["A", "B"]
    # every source gives its burst: [mitigation] burst may be left out
    assert s.mitigation.burst is None and s.mitigation.period_ns == 5_000_000
    assert pickle.loads(pickle.dumps(s)) == s


def test_files_without_sources_are_unchanged():
    s = loads_scenario(BASE, "q.toml")
    assert s.sources == () and s.flows[0].source is None


def test_one_source_binds_flows_by_default():
    text = TWO.split('[[sources]]\nname = "B"')[0]
    text += '[[flows]]\nname = "a"\npattern = "constant"\nrate = "3kHz"\n'
    s = loads_scenario(text, "one.toml")
    assert len(s.sources) == 1 and s.flows[0].source == "A"


@pytest.mark.parametrize("case", cases("scenario_refusals.toml", "two_sources"))
def test_bad_sources_name_the_key(case):
    msg = refused(edited(TWO, case), case["expect"])
    assert msg.startswith("bad.toml"), msg


def test_flow_source_without_sources():
    text = BASE.replace('pattern = "pyramid"', 'source = "A"\npattern = "pyramid"')
    with pytest.raises(UsageError, match=r"flows\.syn\.source: needs \[\[sources\]\]"):
        loads_scenario(text, "bad.toml")


def test_sources_cannot_be_set_from_the_command_line():
    from rtshield.scenario import parse_overrides

    with pytest.raises(UsageError, match=r"\[\[sources\]\] entries cannot be set"):
        parse_overrides(["sources.burst=3"])


def test_max_sources_agrees_with_the_engine_header():
    from rtshield import _native, scenario

    _, lib = _native.load()
    if not hasattr(lib, "RTSIM_MAX_SOURCES"):
        pytest.skip("engine header not in this build")
    assert scenario.MAX_SOURCES == lib.RTSIM_MAX_SOURCES
