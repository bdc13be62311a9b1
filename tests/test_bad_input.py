"""Adversarial input to every verb: one line naming the file and the key, exit 2.

Each case here produced a traceback or a message without the file before the
front-end review; they stay as regression tests.
"""

import os
from pathlib import Path

import pytest
from cli_checks import one_line, tree
from os_faults import GUARD_S

from rtshield import cli
from rtshield.errors import UsageError
from rtshield.scenario import MAX_BINS, loads_scenario
from rtshield.units import MAX_DURATION_NS, duration_ns, rate_hz

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "examples" / "constant_flood.toml"
SYSTEM = REPO / "scenarios" / "analysis" / "textbook_three_tasks.toml"


def verbs_reading(path, out):
    """argv of every verb that reads ``path`` as its main input."""
    return [
        ["run", path, "--out", out],
        ["compare", SCENARIO, path, "--out", out],
        ["sweep", path, "--set", "driver.queue=100,200", "--out", out],
        ["analyze", path],
        ["design", path],
    ]


@pytest.mark.parametrize("content, needle", [
    (b"\xff\xfe\x00binary", "not UTF-8 text (byte 0xff on line 1)"),
    (b'name = "caf\xe9"\n', "not UTF-8 text (byte 0xe9 on line 1)"),
    (b"x = [\n", "not valid TOML"),
])
@pytest.mark.parametrize("verb", range(5))
def test_unreadable_content_is_one_line(tmp_path, capsys, content, needle, verb):
    f = tmp_path / "bad.toml"
    f.write_bytes(content)
    one_line(capsys, verbs_reading(f, tmp_path / "o")[verb], "bad.toml", needle)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", range(5))
def test_permission_denied_is_one_line(tmp_path, verb):
    """A real file of mode 000, read by a process that file permissions apply to."""
    from cli_checks import error_line
    from os_faults import rtshield_without_dac

    f = tmp_path / "locked.toml"
    f.write_text(SCENARIO.read_text())
    f.chmod(0)
    r = rtshield_without_dac(verbs_reading(f, tmp_path / "o")[verb], tmp_path)
    error_line(r.returncode, r.stderr, "locked.toml", "cannot read: permission denied (EACCES)")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("verb", ["analyze", "design"])
def test_system_errors_name_the_file(tmp_path, capsys, verb):
    f = tmp_path / "sys.toml"
    f.write_text('[sytem]\nname = "x"\n')
    one_line(capsys, [verb, f], f"{f}: sytem: unknown section")


@pytest.mark.parametrize("verb", ["analyze", "design"])
def test_scenario_given_to_analysis_says_so(capsys, verb):
    one_line(capsys, [verb, SCENARIO], str(SCENARIO), "scenario file for 'rtshield run'")


def test_system_given_to_run_says_so(tmp_path, capsys):
    one_line(capsys, ["run", SYSTEM, "--out", tmp_path / "o"], str(SYSTEM),
             "system description for 'rtshield analyze'")


@pytest.mark.parametrize("value", ["1e12s", "1e400s", "9223372036854775808ns", "1e308cyc"])
def test_duration_beyond_64_bit_ns_is_rejected(value):
    with pytest.raises(UsageError, match="k: .* is too long"):
        duration_ns(value, "k", clock_hz=1e6)


def test_longest_duration_is_accepted():
    assert duration_ns("9e18ns", "k") == 9 * 10**18 < MAX_DURATION_NS


@pytest.mark.parametrize("value", ["1e400Hz", "2e9pps", "1e300/1s"])
def test_rate_beyond_limit_is_rejected(value):
    with pytest.raises(UsageError, match="k: .* is too high"):
        rate_hz(value, "k")


@pytest.mark.parametrize("key, value", [
    ("scenario.duration", "1e12s"),
    ("scenario.duration", "1e400s"),
    ("critical.period", "1e15s"),
])
def test_huge_durations_from_set_are_one_line(tmp_path, capsys, key, value):
    one_line(capsys, ["run", SCENARIO, "--out", tmp_path / "o", "--set", f"{key}={value}"],
             "--set", key.split(".")[1], "too long")
    assert not (tmp_path / "o").exists()


def test_too_many_bins_is_rejected_before_running():
    text = SCENARIO.read_text()
    with pytest.raises(UsageError, match=f"at most {MAX_BINS}"):
        loads_scenario(text, "s.toml", {"scenario": {"duration": f"{MAX_BINS + 1}s"}})
    loads_scenario(text, "s.toml", {"scenario": {"duration": f"{MAX_BINS}s"}})


NIC = REPO / "scenarios" / "analysis" / "behnke_multiqueue.toml"


@pytest.mark.parametrize("size", [2**32, 2**62, 2**64])
def test_nic_queue_size_beyond_uint32_is_one_line(tmp_path, capsys, size):
    f = tmp_path / "nic.toml"
    f.write_text(NIC.read_text().replace("size = 128", f"size = {size}", 1))
    one_line(capsys, ["analyze", f], "nic.toml: nic.queue.q1.size: must be at most 4294967295")


def test_nic_products_beyond_64_bits_saturate(tmp_path, capsys):
    f = tmp_path / "nic.toml"
    text = NIC.read_text().replace("size = 128", f"size = {2**32 - 1}", 1)
    text = text.replace('t_netstack = "12.1us"', 't_netstack = "9e18ns"')
    f.write_text(text.replace('max_rate = "200pps"', 'max_rate = "1e-9pps"', 1))
    rc = cli.main(["analyze", str(f)])
    out = capsys.readouterr()
    assert rc == 1 and "Traceback" not in out.err, out.err


# ---------------------------------------------------------------- never lost results
# A figure or report that fails after the numbers is a failed command: one line,
# exit 1, and --out exactly as it was (all or nothing, docs/outputs.md).

SHORT = ["--set", "scenario.duration=2s"]


def boom(*_a, **_k):
    raise RuntimeError("matplotlib exploded\nsecond line")


def _figure_workers():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: a run draws its figures in its own process")


def _run_fails_in_helper(tmp_path, capsys, monkeypatch, figure, fn, needle):
    """``run`` succeeds into ``out``; with its figure ``figure`` drawn by ``fn`` in the
    helper process it fails with one line naming ``needle``, exit 1, and leaves
    ``out`` exactly as it was (all or nothing)."""
    from rtshield.figures import run as run_figures

    _figure_workers()
    out = tmp_path / "o"
    argv = ["run", str(SCENARIO), "--out", str(out), "--quiet", *SHORT]
    assert cli.main(argv) == 0
    capsys.readouterr()
    before = tree(out)
    monkeypatch.setitem(run_figures._RUN_FIGURES, figure, fn)  # the workers fork later
    rc = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 1, err
    assert err.count("\n") == 0 and "Traceback" not in err, err
    assert needle.format(out=out) in err, err
    assert ".rtshield-staging" not in err
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # no staging folder left


def test_run_figure_failing_in_its_worker_is_one_line(tmp_path, capsys, monkeypatch):
    _run_fails_in_helper(
        tmp_path, capsys, monkeypatch, "critical", boom,
        "{out}: writing the figures failed (RuntimeError: matplotlib exploded")


def test_run_figure_worker_that_dies_is_one_line(tmp_path, capsys, monkeypatch):
    _run_fails_in_helper(
        tmp_path, capsys, monkeypatch, "cycle_time", lambda *_a: os._exit(3),
        "{out}: writing the figures failed (BrokenProcessPool")


def _other(tmp_path):
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.read_text().replace('name = "constant_flood"', 'name = "other"'))
    return other


def _fails_leaving_earlier(capsys, monkeypatch, argv, out, target, name, needle):
    """``argv`` succeeds into ``out``; with ``target.name`` broken it fails with one
    line naming ``needle``, exit 1, and leaves ``out`` as it was."""
    argv = [str(a) for a in argv]
    assert cli.main(argv) == 0
    capsys.readouterr()
    before = tree(out)
    monkeypatch.setattr(target, name, boom)
    rc = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 1, err
    assert err.count("\n") == 0 and "Traceback" not in err and needle in err, err
    assert ".rtshield-staging" not in err
    assert tree(out) == before


def test_run_figure_failure_is_one_line_and_keeps_the_earlier_results(
    tmp_path, capsys, monkeypatch
):
    import rtshield.figures

    out = tmp_path / "o"
    _fails_leaving_earlier(
        capsys, monkeypatch, ["run", SCENARIO, "--out", out, "--quiet", *SHORT], out,
        rtshield.figures, "run_figures",
        f"{out}: writing the figures failed (RuntimeError: matplotlib exploded")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # no staging folder left


def test_run_report_failure_keeps_the_earlier_results(tmp_path, capsys, monkeypatch):
    import rtshield.runner

    out = tmp_path / "o"
    _fails_leaving_earlier(
        capsys, monkeypatch, ["run", SCENARIO, "--out", out, "--quiet", *SHORT], out,
        rtshield.runner, "run_report", "writing the report failed")
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()


def test_compare_figure_failure_keeps_the_earlier_results(tmp_path, capsys, monkeypatch):
    import rtshield.figures

    out = tmp_path / "o"
    _fails_leaving_earlier(
        capsys, monkeypatch,
        ["compare", SCENARIO, _other(tmp_path), "--out", out, "--jobs", "1", *SHORT], out,
        rtshield.figures, "compare_figures", "comparison figures failed")
    assert (out / "comparison.json").is_file()


def test_a_failing_run_lets_the_others_finish(tmp_path, capsys, monkeypatch):
    import rtshield.runner

    real = rtshield.runner.write_run
    written = []

    def first_fails(scenario, result, out_dir, **kw):
        if scenario.name == "constant_flood":
            raise rtshield.runner.OutputError(f"{out_dir}: figures broke")
        written.append(scenario.name)
        return real(scenario, result, out_dir, **kw)

    monkeypatch.setattr(rtshield.runner, "write_run", first_fails)
    out = tmp_path / "o"
    rc = cli.main(["compare", str(SCENARIO), str(_other(tmp_path)), "--out", str(out),
                   "--jobs", "1", *SHORT])
    assert rc == 1 and "figures broke" in capsys.readouterr().err
    assert written == ["other"]  # written after the first one failed
    assert not out.exists()  # and, all or nothing, not moved into place


def test_sweep_figure_failure_keeps_its_points_to_resume(tmp_path, capsys, monkeypatch):
    from rtshield import sweep

    monkeypatch.setattr(sweep, "write_figure", boom)
    out = tmp_path / "o"
    rc = cli.main(["sweep", str(SCENARIO), "--set", "driver.queue=100,200", "--out", str(out),
                   "--jobs", "1", *SHORT])
    assert rc == 1 and "writing the sweep figure failed" in capsys.readouterr().err
    assert not out.exists()
    points = sorted((tmp_path / ".o.rtshield-staging" / "runs").glob("*/summary.json"))
    assert len(points) == 2, points  # the finished points, for the next sweep
    table = (tmp_path / ".o.rtshield-staging" / "sweep.csv").read_text().splitlines()
    assert len(table) == 3, table  # and their rows


# ---------------------------------------------------------------- --out that is not ours


def test_out_dir_with_foreign_files_is_refused(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    one_line(capsys, ["run", SCENARIO, "--out", out, *SHORT], f"--out: {out} is not empty")
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


def test_compare_into_earlier_results_leaves_no_stale_run(tmp_path, capsys):
    out = tmp_path / "o"
    a, b, c = (tmp_path / f"{n}.toml" for n in "abc")
    for f in (a, b, c):
        f.write_text(SCENARIO.read_text().replace('name = "constant_flood"',
                                                  f'name = "{f.stem}"'))
    assert cli.main(["compare", str(a), str(b), "--out", str(out), "--jobs", "1", *SHORT]) == 0
    assert (out / "runs" / "b" / "summary.json").is_file()
    assert cli.main(["compare", str(a), str(c), "--out", str(out), "--jobs", "1", *SHORT]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["a", "c"]
    assert (out / "runs" / "c" / "report.html").is_file()


def test_no_command_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [err.strip()] and "rtshield: error: a command is required" in err


def test_unknown_command_exits_2(capsys):
    one_line(capsys, ["bogus"], "no such command 'bogus'")


def test_sweep_error_names_the_point(tmp_path, capsys):
    one_line(capsys, ["sweep", SCENARIO, "--set", "mitigation.kind=queue,burst", "--out",
                      tmp_path / "o"], "[mitigation] slice: missing", "(in point", "burst")


def test_platform_from_set_is_blamed_on_set(tmp_path, capsys):
    one_line(capsys, ["run", SCENARIO, "--out", tmp_path / "o", "--set",
                      "scenario.platform=../etc/passwd"],
             "--set: [scenario] platform: unknown preset '../etc/passwd'")


def test_empty_out_is_refused(capsys):
    one_line(capsys, ["run", SCENARIO, "--out", ""], "--out: empty path")


# ---------------------------------------------------------------- SYSTEM.toml beyond the loader

TASK = '[[task]]\nname = "t"\nwcet = "10cyc"\nperiod = "10ms"\npriority = 1\n'


@pytest.mark.parametrize("clock", ["nan", "inf", "-inf", "0", "-1"])
def test_system_clock_must_be_finite_and_positive(tmp_path, capsys, clock):
    f = tmp_path / "s.toml"
    f.write_text(f"[system]\nclock_hz = {clock}\n" + TASK)
    one_line(capsys, ["analyze", f], "s.toml: system.clock_hz: expected a positive number")


@pytest.mark.parametrize("key, line", [
    ("task.t.wcet", 'wcet = "?"'),
    ("task.t.deadline", 'deadline = "?"'),
    ("task.t.priority", 'priority = "?"'),
])
def test_open_value_where_design_cannot_search(tmp_path, capsys, key, line):
    f = tmp_path / "s.toml"
    text = TASK.replace('wcet = "10cyc"', 'wcet = "1ms"')
    name = line.split(" =")[0]
    lines = [ln for ln in text.splitlines() if not ln.startswith(name + " ")] + [line]
    f.write_text("\n".join(lines) + "\n")
    one_line(capsys, ["design", f], f"s.toml: {key}: cannot be left open", "rtshield design")


def test_analysis_errors_after_loading_name_the_file(tmp_path, capsys):
    """An open parameter is valid for design but not for analyze: raised after loading."""
    strict = REPO / "scenarios" / "analysis" / "regehr_avr_strict.toml"
    f = tmp_path / "open.toml"
    f.write_text(strict.read_text().replace('max_rate = "4kHz"', 'max_rate = "?"'))
    one_line(capsys, ["analyze", f], f"{f}: source.ext.", "use `rtshield design`")


# ---------------------------------------------------------------- Ctrl-C


@pytest.mark.parametrize("group, ignored", [(True, False), (False, False), (True, True)],
                         ids=["terminal", "parent-only", "background-job"])
def test_ctrl_c_during_parallel_run_is_one_line(tmp_path, group, ignored):
    """Ctrl-C of a parallel compare: one line, exit 130, no process left; also when the
    command started with SIGINT ignored (a background job of a script)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "o"
    flood = SCENARIO.read_text().replace('rates = ["60000pps", "0pps"]', 'rates = ["60000pps"]')
    one, other = tmp_path / "one.toml", tmp_path / "other.toml"
    one.write_text(flood)
    other.write_text(flood.replace('name = "constant_flood"', 'name = "other"'))
    p = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "compare", str(one), str(other), "--out",
         str(out), "--jobs", "2", "--set", "scenario.duration=30000s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None)
    # the results are written beside --out (all or nothing): both runs' folders
    # there mean both workers are simulating
    staging = tmp_path / ".o.rtshield-staging" / "runs"
    deadline = time.monotonic() + GUARD_S
    while not ((staging / "constant_flood").is_dir() and (staging / "other").is_dir()):
        if p.poll() is not None or time.monotonic() > deadline:
            os.killpg(p.pid, signal.SIGKILL)
            pytest.fail(f"the runs never started: {p.communicate()[1]}")
        time.sleep(0.1)
    time.sleep(1.0)  # well into the simulation
    if group:
        os.killpg(p.pid, signal.SIGINT)
    else:
        os.kill(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang: compare did not end within {GUARD_S} s of Ctrl-C")
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 130, err
    assert err.strip() == "rtshield: interrupted", err
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout
    assert left.strip() == ""


def test_pyramid_with_a_tiny_step_is_one_line_not_out_of_memory(tmp_path, capsys):
    burst = REPO / "scenarios" / "danicki2021" / "burst.toml"
    text = burst.read_text()
    assert "step = " in text
    f = tmp_path / "tiny.toml"
    tiny = {"step = ": 'step = "1e-9pps"', "step_every = ": 'step_every = "1ms"'}
    f.write_text("\n".join(next((v for k, v in tiny.items() if ln.startswith(k)), ln)
                           for ln in text.splitlines()) + "\n")
    one_line(capsys, ["run", f, "--out", tmp_path / "o"], "tiny.toml", "changes rate",
             "at most 64")


def test_pyramid_schedule_cut_at_the_duration_is_unchanged():
    from rtshield.scenario import load_scenario

    sc = load_scenario(REPO / "scenarios" / "danicki2021" / "burst.toml")
    (flow,) = sc.flows
    full = flow.schedule(10**15)
    for d in (sc.duration_ns, sc.duration_ns // 3, 1, 0):
        assert flow.schedule(d) == tuple(p for p in full if p[0] <= d)
