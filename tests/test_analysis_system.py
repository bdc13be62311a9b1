"""SYSTEM.toml loader: every bad file gets one line naming the key."""

import pytest

from rtshield import cli
from rtshield.analysis.system import load_system
from rtshield.errors import UsageError

GOOD_TASK = '[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 1\n'


def write(tmp_path, text):
    p = tmp_path / "sys.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, key",
    [
        ("[system]\nname = 1\n" + GOOD_TASK, "system.name"),
        ("[system]\nfoo = 1\n" + GOOD_TASK, "system.foo: unknown key (allowed: clock_hz, name,"),
        ("system = 3\n" + GOOD_TASK, "system: expected a table, got 3"),
        # the keys a source takes are its model's
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "strict"\n'
         'min_interarrival = "1ms"\nburst = 3\n',
         "source.s.burst: unknown key (allowed: max_rate, min_interarrival, model, name,"),
        ("[sytem]\n" + GOOD_TASK, "sytem: unknown section"),
        ('[system]\nplatform = "nope"\n' + GOOD_TASK, "system.platform: unknown preset"),
        ("[system]\nnesting = 1\n" + GOOD_TASK, "system.nesting"),
        ('[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\n', "task.t.priority: missing"),
        ('[[task]]\nname = "t"\nwcet = 3\nperiod = "10ms"\npriority = 1\n', "task.t.wcet"),
        ('[[task]]\nname = "t"\nwcet = "3 parsecs"\nperiod = "10ms"\npriority = 1\n',
         "task.t.wcet"),
        ('[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "0ms"\npriority = 1\n',
         "task.t.period: must be positive"),
        ('[[task]]\nname = "t"\nwcet = "10cyc"\nperiod = "1ms"\npriority = 1\n', "task.t.wcet"),
        ('[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "1ms"\npriority = 1\nlevel = "x"\n',
         "task.t.level"),
        ('[[task]]\nwcet = "1ms"\n', "task[0].name: missing"),
        (GOOD_TASK + GOOD_TASK, "task.t.name: the name 't' is used twice"),
        (GOOD_TASK + '[[server]]\nname = "t"\nbudget = "1ms"\nperiod = "10ms"\npriority = 1\n',
         "server.t.name: the name 't' is used twice"),
        ('[nic]\nt_netstack = "10us"\n' + 2 * ('[[nic.queue]]\nname = "q"\nsize = 4\n'
         't_abs = "1ms"\nt_pack = "1ms"\nmax_rate = "1kHz"\n'),
         "nic.queue.q.name: the name 'q' is used twice"),
        ('[[task]]\nname = "t"\nwcet = "1ms"\nperiod = "10ms"\npriority = 1\ncolour = 2\n',
         "task.t.colour: unknown key"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "magic"\n',
         "source.s.model"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "strict"\n',
         "source.s: missing min_interarrival"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "bursty"\n'
         'burst = 0\nburst_rate = "1kHz"\n', "source.s.burst: must be at least 1"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "bursty"\n'
         'timer = "nope"\nburst = 2\n', "source.s.timer: no [[timer]] named 'nope'"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "strict"\n'
         'max_rate = "fast"\n', "source.s.max_rate"),
        ('[system]\nplatform = "atmega103-tinyos"\n[[source]]\nname = "s"\nmodel = "strict"\n'
         'max_rate = "1kHz"\nmin_interarrival = "1ms"\n', "give either min_interarrival"),
        ('[[server]]\nname = "v"\nbudget = "11ms"\nperiod = "10ms"\npriority = 1\n',
         "server.v.budget: larger than its period"),
        ('[[server]]\nname = "v"\nbudget = "?"\nperiod = "10ms"\npriority = 1\n'
         '[[server]]\nname = "w"\nbudget = "?"\nperiod = "10ms"\npriority = 1\n',
         "server.w.budget: only one parameter may be open"),
        ('[nic]\nt_netstack = "10us"\n', "nic.queue: at least one"),
        ('[nic]\nt_netstack = "10us"\n[[nic.queue]]\nname = "q"\nsize = 4\nt_abs = "1ms"\n'
         't_pack = "1ms"\n', "nic.queue.q.max_rate"),
        ("[system]\n", "has no task"),
        ("task = 3\n", "task: expected an array of tables"),
        ("[[task]\n", "not valid TOML"),
    ],
)
def test_bad_files_name_the_key(tmp_path, text, key):
    with pytest.raises(UsageError) as e:
        load_system(write(tmp_path, text))
    msg = str(e.value)
    assert key in msg
    assert "\n" not in msg


def test_missing_file():
    with pytest.raises(UsageError, match="no such file"):
        load_system("/nonexistent/sys.toml")


def test_unknown_cost_name_is_named(tmp_path):
    p = write(tmp_path, '[[source]]\nname = "s"\nmodel = "hardware"\nmax_rate = "1kHz"\n')
    with pytest.raises(UsageError, match=r"source\.s: needs platform cost 't_int'"):
        from rtshield.analysis import analyze_system

        analyze_system(load_system(p))


@pytest.mark.parametrize("verb", ["analyze", "design"])
def test_cli_one_line_exit_2(tmp_path, capsys, verb):
    p = write(tmp_path, '[[task]]\nname = "t"\nwcet = "1 ms"\nperiod = 5\npriority = 1\n')
    assert cli.main([verb, str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "task.t.period" in err and "Traceback" not in err


def test_costs_section_overrides_platform(tmp_path):
    p = write(tmp_path, '[system]\nplatform = "atmega103-tinyos"\n[costs]\nt_int = "100cyc"\n'
                        + GOOD_TASK)
    assert load_system(p).costs["t_int"] == 25_000
