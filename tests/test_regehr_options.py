"""Regehr & Duongsaa's scenario options: the lazy bursty timer, Budget
Mitigation charging the ISR, pure polling, and the strict scheduler's full
rate (docs/scenarios.md, docs/decisions/regehr.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.errors import UsageError
from rtshield.runner import simulate
from rtshield.scenario import load_scenario, loads_scenario

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "scenarios" / "regehr2005"

MOTE = """
[scenario]
name = "t"
platform = "atmega103-tinyos"
duration = "1s"

[costs]
{costs}

[critical]
period = "1s"
work = "1us"
priority = 2

[driver]
priority = 1
queue = 4

[mitigation]
{mitigation}

[[sources]]
name = "ext"
isr_work = "0cyc"
isr_only = true

[[tasks]]
name = "measure"
kind = "background"

[[flows]]
name = "irq"
protocol = "raw"
pattern = "constant"
rate = "{rate}"
"""

DANICKI = """
[scenario]
name = "t"
platform = "esp32-freertos"
duration = "1s"

[mitigation]
{mitigation}

[[flows]]
name = "f"
pattern = "constant"
rate = "60000pps"
"""


def mote(mitigation: str, rate: str = "16kHz", costs: str = ""):
    return loads_scenario(MOTE.format(mitigation=mitigation, rate=rate, costs=costs), "t.toml")


def test_strict_admits_the_full_4khz():
    r = simulate(mote('kind = "strict"\nmin_interarrival = "250us"'))
    assert r.flows["irq"]["delivered"] in (3_999, 4_000)
    assert r.flows["irq"]["offered"] == 15_999


@pytest.mark.parametrize("text, msg", [
    ('kind = "strict"\nmin_interarrival = "250us"\ntimer = "lazy"',
     "timer: is a parameter of bursty, not of kind = 'strict'"),
    ('kind = "bursty"\nburst = 4\nperiod = "1ms"\ntimer = "sometimes"',
     "timer"),
    ('kind = "burst"\nslice = "10ms"\ncapacity = 10\ncharge_isr = true',
     "charge_isr: is a parameter of budget"),
    ('kind = "polling"', "period"),
    ('kind = "polling"\nperiod = "250us"\nwindow = "1ms"', "window: is a parameter of countdown"),
])
def test_option_errors_name_the_key(text, msg):
    with pytest.raises(UsageError, match=msg.replace("(", r"\(")):
        mote(text)


def test_charge_isr_with_budget_in_also():
    sc = loads_scenario(DANICKI.format(
        mitigation='kind = "burst"\nalso = ["budget"]\nslice = "20ms"\ncapacity = 600\n'
                   "charge_isr = true"), "t.toml")
    assert sc.mitigation.charge_isr is True
    assert simulate(sc).summary()["mitigation"]["parameters"]["charge_isr"] is True


def test_budget_charging_the_isr_takes_fewer_packets():
    # 60 kpps on the ESP32: the driver's time alone never exhausts the budget after
    # the first report; with the ISR's time charged it runs out every cycle and the
    # line goes off, which leaves the core to the driver (Danicki §4's point).
    off = simulate(loads_scenario(DANICKI.format(mitigation='kind = "budget"'), "t.toml"))
    on = simulate(loads_scenario(
        DANICKI.format(mitigation='kind = "budget"\ncharge_isr = true'), "t.toml"))
    assert on.totals["received"] < off.totals["received"]
    m_on, m_off = on.summary()["mitigation"]["counters"], off.summary()["mitigation"]["counters"]
    assert m_on["suspends"] > 10 * m_off["suspends"]
    assert on.totals["processed"] > off.totals["processed"]
    assert on.summary()["mitigation"]["parameters"] == {"charge_isr": True}
    assert off.summary()["mitigation"]["parameters"] == {}  # unchanged when not set


def test_lazy_timer_ticks_only_after_a_burst():
    base = 'kind = "bursty"\nburst = 4\nperiod = "1ms"'
    costs = 'mitigation_isr = "12cyc"\ntimer_isr = "10cyc"'  # Table 2 t_count; t_clear + t_flip
    periodic = simulate(mote(base, "260Hz", costs))
    lazy = simulate(mote(base + '\ntimer = "lazy"', "260Hz", costs))
    assert lazy.summary()["mitigation"]["parameters"]["timer"] == "lazy"
    assert "timer" not in periodic.summary()["mitigation"]["parameters"]
    assert lazy.flows["irq"]["delivered"] == periodic.flows["irq"]["delivered"]
    # the periodic timer costs 999 ticks x 89 cycles (cpu shares are rounded); the lazy
    # one a few per burst of 4
    assert periodic.cpu["isr_timer"] == pytest.approx(999 * 89 * 250e-9, rel=1e-4)
    assert lazy.cpu["isr_timer"] < periodic.cpu["isr_timer"] / 5


def test_polling_mode():
    r = simulate(mote('kind = "polling"\nperiod = "250us"', "1kHz"))
    f = r.flows["irq"]
    assert f["delivered"] == f["offered"]
    assert r.totals["isr_runs"] == f["delivered"]
    # the next poll (an arrival at a poll's instant waits a whole period), then the
    # handler's 83 cycles; + 1 us: the latency histogram's resolution
    assert f["latency_us"]["max"] <= 250 + 83 * 0.25 + 1
    m = r.summary()["mitigation"]
    assert (m["name"], m["parameters"]) == ("polling", {"period": "250us"})
    assert m["counters"]["line_enables"] == 0  # the line is never enabled


def test_polling_refuses_the_receive_path():
    text = (REPO / "scenarios" / "behnke_software" / "exp1_original.toml").read_text()
    with pytest.raises(UsageError, match="polling works without \\[rx\\]"):
        loads_scenario(text + '\n[mitigation]\nkind = "polling"\nperiod = "1ms"\n'
                       "\n[rx]\nbuffers = 64\n", "t.toml")


def test_cli_bad_option_is_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((STUDY / "fig_bursty4.toml").read_text().replace(
        'timer = "lazy"', 'timer = "never"'))
    out = subprocess.run([sys.executable, "-m", "rtshield", "run", str(bad), "--out",
                          str(tmp_path / "o")], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "timer" in out.stderr and "lazy" in out.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("bits", [2, 1])
def test_enable_bits(bits):
    text = (STUDY / "enable_bits.toml").read_text().replace("enable_bits = 2",
                                                           f"enable_bits = {bits}")
    r = simulate(loads_scenario(text, "t.toml"))
    m = r.summary()["mitigation"]
    assert m["parameters"]["enable_bits"] == bits
    if bits == 2:  # libshield's gate: the handler never runs inside the critical section
        assert m["counters"]["mask_violations"] == 0
        assert m["counters"]["drops"] == 0
    else:  # §4's race: the timer re-enables the masked line, the unmask the limited one
        assert m["counters"]["mask_violations"] >= 400
        assert m["counters"]["drops"] >= 400


def test_enable_bits_and_masks_rx_errors():
    with pytest.raises(UsageError, match="enable_bits"):
        mote('kind = "none"\nenable_bits = 3')
    text = (STUDY / "enable_bits.toml").read_text()
    with pytest.raises(UsageError, match="masks_rx"):
        loads_scenario(text.replace("masks_rx = true", 'masks_rx = "yes"'), "t.toml")
    with pytest.raises(UsageError, match="masks_rx"):
        loads_scenario(text + '\n[[tasks]]\nname = "bg"\nkind = "background"\nmasks_rx = true\n',
                       "t.toml")
    # without a masking task the summary has no mask_violations counter (outputs unchanged)
    assert "mask_violations" not in simulate(mote('kind = "none"', "1kHz")).summary()[
        "mitigation"]["counters"]


def test_shipped_study_scenarios_load():
    for p in sorted(STUDY.glob("*.toml")):
        sc = load_scenario(p)
        assert sc.name == p.stem


def test_polling_a_dma_ring_takes_every_waiting_descriptor():
    text = DANICKI.format(mitigation='kind = "polling"\nperiod = "1ms"').replace(
        "[mitigation]", '[nic]\nkind = "dma_ring"\nring = 64\n\n[mitigation]')
    r = simulate(loads_scenario(text.replace("60000pps", "20000pps"), "t.toml"))
    # 20 packets per 1 ms poll, a ring of 64: nothing lost, one handler run per poll
    assert r.totals["dropped"]["ring_full"] == 0
    assert r.totals["isr_runs"] == 999
    assert r.totals["received"] >= r.totals["offered"] - 20
