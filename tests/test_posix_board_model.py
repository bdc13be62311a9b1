"""The model of the rig's FreeRTOS POSIX board (preset ``posix-freertos-tcp``): ``[platform]
tick_real``, a tick interrupt that comes late, stretches what the RTOS counts in ticks (the
critical task's period and deadline, libshield's periods on the tick count) and nothing
else (docs/model.md, "A tick that comes late"); ``[nic] interrupt = "tick"``, the RX
interrupt with the tick, for the frames the ring holds then (the port's tick hook)."""

from __future__ import annotations

import shutil

import pytest

from rtshield import scenario as scenario_mod
from rtshield.engine import simulate
from rtshield.engine_config import on_ticks
from rtshield.errors import UsageError
from rtshield.scenario import load_platform, loads_scenario

SCEN = """
[scenario]
name = "t"
platform = "{platform}"
duration = "3s"

[critical]
period = "10ms"
work = "2ms"
priority = 4

[driver]
priority = 1

[rx]

[[flows]]
name = "hp"
protocol = "udp"
dst_port = 5000
size = 64
priority = 5
capacity = 5
server_period = "10ms"
pattern = "constant"
rate = "1000pps"
"""


@pytest.fixture
def late_tick(tmp_path, monkeypatch):
    """The shipped POSIX board's preset, and a copy of it named ``keeps-time`` whose tick
    comes on time."""
    src = scenario_mod.platforms_dir()
    for p in src.glob("*.toml"):
        shutil.copy(p, tmp_path / p.name)
    text = (src / "posix-freertos-tcp.toml").read_text()
    on_time = "\n".join(ln for ln in text.splitlines() if not ln.startswith("tick_real"))
    (tmp_path / "keeps-time.toml").write_text(
        on_time.replace('name = "posix-freertos-tcp"', 'name = "keeps-time"')
    )
    monkeypatch.setattr(scenario_mod, "platforms_dir", lambda: tmp_path)
    plat, _, _ = load_platform("posix-freertos-tcp")
    return plat


def test_the_posix_board_ticks_late(late_tick):
    assert late_tick.tick_ns == 1_000_000 and late_tick.tick_real_ns == 1_110_000


def test_a_late_tick_stretches_the_periods_counted_in_ticks(late_tick):
    late = loads_scenario(SCEN.format(platform="posix-freertos-tcp"), "late.toml")
    keeps = loads_scenario(SCEN.format(platform="keeps-time"), "keeps.toml")
    assert keeps.platform.tick_real_ns == 0 and on_ticks(keeps, 10_000_000) == 10_000_000
    assert on_ticks(late, 10_000_000) == 11_100_000 and on_ticks(late, 0) == 0
    s_late, s_keeps = simulate(late).summary(), simulate(keeps).summary()
    # the critical task: 10 ticks of 1.11 ms each, not 10 ms
    assert s_keeps["critical"]["cycle_time_us"]["p50"] == pytest.approx(10_000, rel=0.01)
    assert s_late["critical"]["cycle_time_us"]["p50"] == pytest.approx(11_100, rel=0.01)
    assert s_keeps["critical"]["cycles"] == 300
    assert s_late["critical"]["cycles"] == 3_000_000 // 11_100 + 1
    assert s_late["critical"]["misses"] == s_keeps["critical"]["misses"] == 0
    # libshield's server on the tick count: 5 frames per 10 ticks of 1.11 ms
    def admitted(s):
        return s["flows"]["hp"]["delivered"]

    assert admitted(s_keeps) == pytest.approx(1500, abs=10)
    assert admitted(s_late) == pytest.approx(1500 / 1.11, abs=10)
    # the flow's rate is time, not ticks: the same frames offered
    assert s_late["flows"]["hp"]["offered"] == s_keeps["flows"]["hp"]["offered"] > 2990


def test_tick_real_needs_a_tick(tmp_path, monkeypatch):
    (tmp_path / "mine.toml").write_text(
        '[platform]\nname = "mine"\nclock_hz = 4e6\ncores = 1\ntick = "0ms"\n'
        'tick_real = "1ms"\ntick_isr = "1us"\n[costs]\nisr_entry_exit = "1us"\n'
    )
    monkeypatch.setattr(scenario_mod, "platforms_dir", lambda: tmp_path)
    with pytest.raises(UsageError, match="tick_real"):
        load_platform("mine")


UNPROTECTED = """
[scenario]
name = "u"
platform = "{platform}"
duration = "1s"

[critical]
period = "10ms"
work = "2ms"
priority = 4

[driver]
priority = 6
{nic}

[[flows]]
name = "bulk"
protocol = "udp"
dst_port = 6000
size = 512
priority = 1
pattern = "constant"
rate = "10000pps"
"""


@pytest.mark.parametrize("rx", [False, True], ids=["stock", "rx"])
def test_the_rx_interrupt_comes_with_the_tick(late_tick, rx):
    text = UNPROTECTED.format(platform="posix-freertos-tcp", nic="")
    if rx:
        text = text.replace("[[flows]]", "[rx]\n\n[[flows]]")
    tick = simulate(loads_scenario(text, "tick.toml")).summary()
    frame = simulate(
        loads_scenario(text.replace("[[flows]]", '[nic]\ninterrupt = "frame"\n\n[[flows]]', 1)
                       if not rx else text.replace("[rx]", '[nic]\ninterrupt = "frame"\n\n[rx]'),
                       "frame.toml")
    ).summary()
    ticks = 1_000_000_000 // 1_110_000
    # with the tick: one interrupt per tick at most (every tick finds frames at 10 kpps)
    assert ticks - 2 <= tick["totals"]["irq_raised"] <= ticks
    assert frame["totals"]["irq_raised"] > 5 * ticks  # with each frame: many more
    for s in (tick, frame):  # nothing lost either way: the ring holds a tick's frames
        assert not any(s["totals"]["dropped"].values())
        # delivered but the frames of the run's last tick, still on their way
        assert s["flows"]["bulk"]["offered"] - 12 <= s["flows"]["bulk"]["delivered"]
    # a frame waits for the next tick: its latency reaches a tick, not the frame path's µs
    assert tick["flows"]["bulk"]["latency_us"]["max"] > 1000
    assert frame["flows"]["bulk"]["latency_us"]["max"] < 1000


def test_the_tick_interrupt_needs_a_ring(late_tick):
    text = UNPROTECTED.format(platform="posix-freertos-tcp", nic='[nic]\nkind = "edge"\n')
    with pytest.raises(UsageError, match=r"interrupt.*dma_ring"):
        loads_scenario(text, "edge.toml")


def test_analyze_refuses_what_its_model_does_not_have(late_tick, tmp_path):
    """The response-time analysis models neither a late tick nor RX interrupts on the tick:
    a scenario with either is refused with the key named (exit 2 at the command line), not
    analysed on the nominal periods or per frame."""
    from rtshield.analysis.model import system_from_scenario

    src = tmp_path / "posix-freertos-tcp.toml"
    text = src.read_text()
    for name, drop in (("frame-irq", ("interrupt",)), ("plain", ("interrupt", "tick_real"))):
        lines = [ln for ln in text.splitlines() if not ln.startswith(drop)]
        (tmp_path / f"{name}.toml").write_text(
            "\n".join(lines).replace('name = "posix-freertos-tcp"', f'name = "{name}"')
        )
    with pytest.raises(UsageError, match=r"\[nic\] interrupt = 'tick'"):
        system_from_scenario(loads_scenario(SCEN.format(platform="posix-freertos-tcp"), "a.toml"))
    with pytest.raises(UsageError, match=r"\[nic\] interrupt = 'tick'"):
        system_from_scenario(loads_scenario(SCEN.format(platform="keeps-time"), "b.toml"))
    with pytest.raises(UsageError, match=r"\[platform\] tick_real"):
        system_from_scenario(loads_scenario(SCEN.format(platform="frame-irq"), "c.toml"))
    # without both, the same device is the analysis' (the checks are not a blanket refusal)
    system_from_scenario(loads_scenario(SCEN.format(platform="plain"), "d.toml"))
