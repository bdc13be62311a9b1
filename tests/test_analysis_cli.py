"""The analysis verbs end to end, on the shipped examples."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.tomlfile import tomllib

EX = Path(__file__).resolve().parent.parent / "scenarios" / "analysis"


def run(*args):
    return subprocess.run([sys.executable, "-m", "rtshield", *args], capture_output=True,
                          text=True)


def test_textbook_json():
    p = run("analyze", str(EX / "textbook_three_tasks.toml"), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert [t["wcrt_us"] for t in out["tasks"]] == [3000, 6000, 20000]
    for t in out["tasks"]:
        assert {"name", "C_us", "T_us", "J_us", "D_us", "priority", "wcrt_us",
                "schedulable"} <= set(t)
    assert out["schedulable"] is True
    assert out["utilization"] == pytest.approx(3 / 7 + 3 / 12 + 5 / 20)


def test_textbook_table():
    p = run("analyze", str(EX / "textbook_three_tasks.toml"))
    assert p.returncode == 0
    cells = [[c.strip() for c in line.split("│")] for line in p.stdout.splitlines()]
    rows = {c[0]: c for c in cells if len(c) == 9}
    assert rows["task"][7] == "WCRT (µs)"  # the unit is in the heading
    assert rows["t3"][7] == "20 000" and rows["t3"][8] == "ok"
    assert "utilization: 0.9286" in p.stdout


#: The shipped system files with a value left open ("?"): for `design`, not `analyze`.
OPEN = {"regehr_avr_strict_design"}


@pytest.mark.parametrize("path", sorted(EX.glob("*.toml")), ids=lambda p: p.stem)
def test_every_example_analyses(path):
    p = run("analyze", str(path), "--json")
    if path.stem in OPEN:
        assert p.returncode == 2 and "use `rtshield design`" in p.stderr, p.stderr
        return
    assert p.returncode in (0, 1), p.stderr
    out = json.loads(p.stdout)
    assert out["tasks"] and (p.returncode == 0) == out["schedulable"]


@pytest.mark.parametrize("name", sorted(OPEN))
def test_the_shipped_design_file_is_regehrs_strict_mote_with_its_rate_open(name):
    """docs/analysis.md §7: the strict limiter's boundary is 87.457 µs, simulated and confirmed;
    the file is regehr_avr_strict.toml but for the "?"."""
    path = EX / f"{name}.toml"
    open_, closed = (tomllib.loads(f.read_text()) for f in (path, EX / "regehr_avr_strict.toml"))
    assert open_["source"][0].pop("max_rate") == "?"
    closed["source"][0].pop("max_rate")
    assert {k: v for k, v in open_.items() if k != "system"} == {
        k: v for k, v in closed.items() if k != "system"}
    p = run("design", str(path), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["param"] == "source.ext.min_interarrival"
    assert out["value"] == pytest.approx(87.457)
    assert out["simulated"]["confirmed"] is True


def test_ethernut_misses_and_design_finds_one(tmp_path):
    p = run("analyze", str(EX / "ethernut.toml"), "--json")
    assert p.returncode == 1
    speaker = next(t for t in json.loads(p.stdout)["tasks"] if t["name"] == "speaker")
    assert not speaker["schedulable"] and speaker["wcrt_us"] is None and speaker["reason"]
    f = tmp_path / "eth.toml"
    f.write_text((EX / "ethernut.toml").read_text().replace("burst = 15 ", 'burst = "?" '))
    p = run("design", str(f), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["value"] == 1 and d["unsafe_value"] == 2 and "speaker" in d["unsafe_reason"]


def test_multisource_timer_design(tmp_path):
    text = (EX / "multisource.toml").read_text()
    text = text.replace('rate = "200Hz"', 'rate = "?"')
    text = text.replace("burst = 5 ", 'max_rate = "1kHz" ').replace("burst = 7 ",
                                                                    'max_rate = "1.4kHz" ')
    f = tmp_path / "m.toml"
    f.write_text(text)
    p = run("design", str(f))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("timer.shared_timer.rate = ") and " Hz (period " in p.stdout


def test_a_busy_window_past_the_limit_exits_3(tmp_path):
    """The issue's case (issue 26): a deadline beyond the period and a busy period of
    about 10^9 jobs. `analyze` finishes, says in one line that the task was not
    analysed, and exits 3; the JSON names it."""
    f = tmp_path / "long.toml"
    f.write_text(
        '[system]\nname = "long"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "999999999ns"\nperiod = "1s"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1s"\nperiod = "2000000000s"\ndeadline = "1000000000s"\n'
        "priority = 1\n"
    )
    p = run("analyze", str(f))
    assert p.returncode == 3, p.stderr
    b = [line for line in p.stdout.splitlines() if line.startswith(" b ")]
    assert len(b) == 1 and "NOT ANALYSED: busy window beyond 100000 jobs" in b[0]
    assert "schedulable: not analysed (b: busy window beyond 100000 jobs)" in p.stdout
    j = run("analyze", str(f), "--json")
    assert j.returncode == 3 and json.loads(j.stdout)["not_analysed"] == ["b"]


def test_a_huge_blocking_term_exits_1_at_once(tmp_path):
    f = tmp_path / "block.toml"
    f.write_text(
        '[system]\nname = "block"\ntick = false\n'
        '[[task]]\nname = "a"\nwcet = "1us"\nperiod = "10us"\npriority = 2\n'
        '[[task]]\nname = "b"\nwcet = "1us"\nperiod = "10ms"\nblocking = "1000000s"\n'
        "priority = 1\n"
    )
    p = run("analyze", str(f))
    assert p.returncode == 1
    assert "passed the deadline" in p.stdout and "at job 1" in p.stdout


def test_an_unprotected_line_names_what_bounds_it(tmp_path):
    f = tmp_path / "pure.toml"
    f.write_text(
        '[system]\nname = "pure"\nplatform = "atmega103-tinyos"\ntick = false\n'
        '[[source]]\nname = "ext"\nmodel = "pure"\npriority = 1\n'
        '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 0\n'
    )
    p = run("analyze", str(f))
    assert p.returncode == 1
    irq = next(line for line in p.stdout.splitlines() if line.startswith(" ext.irq"))
    assert "UNBOUNDED" in irq and "max_rate" in irq and "strict" in irq
