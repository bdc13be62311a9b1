"""Parameter design: the boundary is safe and the next step is not."""

import copy
import json

import pytest

from rtshield import cli
from rtshield.analysis import analyze_system, load_system
from rtshield.analysis.design import design_system, shared_timer_candidates
from rtshield.analysis.system import ModelInfeasible

AVR = '[system]\nplatform = "atmega103-tinyos"\n'
BG = '[[task]]\nname = "bg"\nwcet = "5ms"\nperiod = "10ms"\npriority = 0\n'


def load(tmp_path, text):
    p = tmp_path / "d.toml"
    p.write_text(text)
    return load_system(p)


def check_boundary(s, d, setter):
    """Re-analyse at the boundary and one step beyond, independently of the search."""
    assert d.value is not None
    for v, ok in ((d.value, True), (d.unsafe_value, False)):
        s2 = copy.deepcopy(s)
        setter(s2, v)
        s2.open = None
        try:
            sched = analyze_system(s2).schedulable
        except ModelInfeasible:  # e.g. a burst longer than its period: not schedulable
            sched = False
        assert sched == ok, v


def designed(tmp_path, text, where, attr):
    """Design the open parameter of ``text`` (``attr`` of the first entry of ``where``:
    sources or servers) and check its boundary; returns the design."""
    s = load(tmp_path, text)
    d = design_system(s)

    def setter(s2, v):
        setattr(getattr(s2, where)[0], attr, v)

    check_boundary(s, d, setter)
    return d


def test_strict_smallest_interarrival(tmp_path):
    d = designed(tmp_path, AVR + '[[source]]\nname = "x"\nmodel = "strict"\nmax_rate = "?"\n'
                                 'work = "250cyc"\n' + BG, "sources", "min_interarrival")
    assert d.unsafe_value == d.value - 1
    assert d.margin_ns() is not None and d.margin_ns() >= 0


def test_bursty_largest_burst(tmp_path):
    d = designed(tmp_path, AVR + '[[source]]\nname = "x"\nmodel = "bursty"\nburst = "?"\n'
                                 'burst_rate = "1kHz"\nwork = "250cyc"\n' + BG, "sources", "burst")
    assert d.unsafe_value == d.value + 1


def test_server_budget(tmp_path):
    designed(tmp_path, '[[server]]\nname = "srv"\nbudget = "?"\nperiod = "20ms"\npriority = 9\n'
                       '[[task]]\nname = "t1"\nwcet = "3ms"\nperiod = "7ms"\npriority = 3\n'
                       '[[task]]\nname = "t2"\nwcet = "3ms"\nperiod = "12ms"\npriority = 2\n',
             "servers", "budget")


def test_burst_mitigation_capacity(tmp_path):
    designed(tmp_path, AVR + '[[source]]\nname = "rx"\nmodel = "burst_mitigation"\n'
                             'slice = "20ms"\ncapacity = "?"\nwork = "400cyc"\n'
                             'clock_resolution = "1us"\n' + BG, "sources", "capacity")


def test_no_safe_value(tmp_path):
    s = load(tmp_path, AVR + '[[source]]\nname = "x"\nmodel = "bursty"\nburst = "?"\n'
                              'burst_rate = "1kHz"\n[[task]]\nname = "t"\nwcet = "10ms"\n'
                              'period = "10ms"\npriority = 0\n')
    d = design_system(s)
    assert d.value is None and "bg" not in d.text()


def test_shared_timer_candidates():
    c = shared_timer_candidates([1000, 1400])
    assert c[0] == 1400 and 200 in c and 1 in c
    # every candidate is the lowest frequency for some burst of some source
    assert all(any(-(-r // n) == f for r in (1000, 1400) for n in range(1, 1401)) for f in c)


def test_shared_timer_choice(tmp_path):
    text = (AVR + '[[timer]]\nname = "tm"\nrate = "?"\npriority = 1\n'
            '[[source]]\nname = "A"\nmodel = "bursty"\ntimer = "tm"\nmax_rate = "1kHz"\n'
            'priority = 3\n[[source]]\nname = "B"\nmodel = "bursty"\ntimer = "tm"\n'
            'max_rate = "1.4kHz"\npriority = 2\n'
            '[[task]]\nname = "bg"\nwcet = "5ms"\nperiod = "10ms"\ndeadline = "6ms"\n'
            'priority = 0\n')
    d = design_system(load(tmp_path, text))
    chosen = [c for c in d.candidates if c.get("chosen")]
    assert len(chosen) == 1 and chosen[0]["schedulable"]
    ok_u = [c["utilization"] for c in d.candidates if c["schedulable"]]
    assert chosen[0]["utilization"] == min(ok_u)
    # the chosen timer really is schedulable when written into the file
    fixed = text.replace('rate = "?"', f'rate = "{chosen[0]["timer_hz"]}Hz"')
    assert analyze_system(load(tmp_path, fixed)).schedulable
    # the terminal answer lists the candidates as a table, the chosen one marked
    table = d.text().split("candidates\n", 1)[1]
    cells = [[c.strip() for c in ln.split("│")] for ln in table.splitlines()]
    rows = [c for c in cells[2:] if len(c) == 5]
    assert cells[0][1] == "timer (Hz)" and len(rows) == len(d.candidates)
    marked = [r for r in rows if r[0] == "*"]
    assert len(marked) == 1
    assert marked[0][1].replace(" ", "") == str(chosen[0]["timer_hz"])


def test_design_cli_json(tmp_path, capsys):
    p = tmp_path / "d.toml"
    p.write_text(AVR + '[[source]]\nname = "x"\nmodel = "bursty"\nburst = "?"\n'
                       'burst_rate = "1kHz"\n' + BG)
    assert cli.main(["design", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["param"] == "source.x.burst" and out["value"] >= 1 and out["schedulable"]
    assert out["margin_us"] >= 0


def test_design_needs_open_param(tmp_path):
    from rtshield.errors import UsageError

    with pytest.raises(UsageError, match="no open parameter"):
        design_system(load(tmp_path, BG))


def test_analyze_refuses_open_param(tmp_path, capsys):
    p = tmp_path / "d.toml"
    p.write_text(AVR + '[[source]]\nname = "x"\nmodel = "bursty"\nburst = "?"\n'
                       'burst_rate = "1kHz"\n' + BG)
    assert cli.main(["analyze", str(p)]) == 2
    assert "source.x.burst: open" in capsys.readouterr().err


@pytest.mark.parametrize("wcet", ["90ns", "10ns", "400ns"])
def test_budget_search_matches_exhaustive(tmp_path, wcet):
    """Every budget 0..period analysed one by one: the design is the last safe one.

    With wcet = 10 ns the safe end (~ 90 ns) lies between the exponential
    search's last step (63) and the upper end (the period, 100 ns).
    """
    text = ('[[server]]\nname = "srv"\nbudget = "?"\nperiod = "100ns"\npriority = 9\n'
            f'[[task]]\nname = "t"\nwcet = "{wcet}"\nperiod = "1000ns"\npriority = 1\n')
    d = design_system(load(tmp_path, text))
    safe = [e for e in range(0, 101)
            if analyze_system(load(tmp_path, text.replace('"?"', f'"{e}ns"'))).schedulable]
    assert safe == list(range(0, max(safe) + 1))  # the safe set is a prefix
    assert d.value == max(safe)
    assert d.unsafe_value == (max(safe) + 1 if max(safe) < 100 else None)


def test_strict_search_matches_exhaustive(tmp_path):
    costs = ('[costs]\nt_int = "3ns"\nt_flip = "1ns"\nt_setup = "1ns"\nt_expire = "3ns"\n')
    text = (costs + '[[source]]\nname = "x"\nmodel = "strict"\nmin_interarrival = "?"\n'
            'work = "2ns"\n[[task]]\nname = "t"\nwcet = "50ns"\nperiod = "100ns"\n'
            'priority = 0\n')
    d = design_system(load(tmp_path, text))
    safe = [T for T in range(1, 301)
            if analyze_system(load(tmp_path, text.replace('"?"', f'"{T}ns"'))).schedulable]
    assert safe == list(range(min(safe), 301))  # the safe set is a suffix
    assert d.value == min(safe) and d.unsafe_value == min(safe) - 1


# ---- every answer checked by simulating its boundary (issue 11 item 4)

QUEUE_SYS = '''[system]
platform = "esp32-freertos"
[[source]]
name = "rx"
model = "queue_mitigation"
queue = "?"
driver_priority = 2
work = "7us"
[[task]]
name = "critical"
wcet = "4ms"
period = "10ms"
priority = 3
'''


def test_queue_size_designed_and_simulated(tmp_path):
    """Queue Mitigation on the ESP32 preset (t_int derived from the simulator's
    costs): the largest queue is safe in the simulator and one more misses,
    and the simulated worst is the WCRT less one tick interrupt (the analysis
    puts a tick at the release, the simulated platform's first tick comes one
    period in: docs/analysis.md §9)."""
    from rtshield.analysis.design import simulate_design

    p = tmp_path / "q.toml"
    p.write_text(QUEUE_SYS)
    s = load_system(p)
    d = design_system(s)
    simulate_design(s, d)
    assert d.value is not None and d.unsafe_value == d.value + 1
    assert d.simulated["confirmed"], d.text()
    row = d.simulated["at_value"]["critical"]
    assert row["observed_us"] == pytest.approx(row["wcrt_us"] - s.costs["tick_isr"] / 1000)
    assert d.simulated["beyond"]["over_deadline"]


def test_bursty_period_designed_and_simulated(tmp_path):
    from rtshield.analysis.design import simulate_design

    p = tmp_path / "b.toml"
    p.write_text('[system]\nplatform = "atmega103-tinyos"\ntick = false\n'
                 '[[source]]\nname = "ext"\nmodel = "bursty"\nburst = 4\nburst_period = "?"\n'
                 'work = "250cyc"\npriority = 2\n'
                 '[[task]]\nname = "background"\nwcet = "5ms"\nperiod = "10ms"\npriority = 0\n')
    s = load_system(p)
    d = design_system(s)
    assert d.param == "source.ext.burst_period" and d.value is not None
    simulate_design(s, d)
    assert d.simulated["confirmed"], d.text()


def test_design_names_why_it_did_not_simulate(tmp_path):
    from rtshield.analysis.design import simulate_design

    p = tmp_path / "srv.toml"
    p.write_text('[system]\ntick = false\n[[server]]\nname = "s"\nbudget = "?"\n'
                 'period = "10ms"\npriority = 2\n'
                 '[[task]]\nname = "t"\nwcet = "4ms"\nperiod = "10ms"\npriority = 1\n')
    s = load_system(p)
    d = design_system(s)
    simulate_design(s, d)
    assert "servers" in d.simulated["skipped"]
    assert "not simulated" in d.text()
