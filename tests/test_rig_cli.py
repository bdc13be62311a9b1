"""`rtshield rig`: honest one-line errors (exit 2) and the control program itself.

No root needed: the checks that refuse to run are exercised by pretending not
to be root or not to have a tool; the C program is run under SCHED_OTHER.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from rig_checks import rig_error

from rtshield.rig import cycles, harness, linux


def test_not_root_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    msg = rig_error(capsys, ["rig", "linux", "--out", str(tmp_path / "o")])
    assert "needs root" in msg
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_missing_tool_names_tool_and_package(capsys, monkeypatch, tmp_path):
    real = shutil.which
    monkeypatch.setattr(harness.os, "geteuid", lambda: 0)
    monkeypatch.setattr(
        harness.shutil, "which", lambda n: None if n in ("hping3", "nmap") else real(n)
    )
    msg = rig_error(capsys, ["rig", "linux", "--out", str(tmp_path / "o")])
    assert "missing tools: hping3, nmap" in msg and "apt-get install hping3 nmap" in msg


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--attacks", "syn,smurf"], "unknown smurf"),
        (["--select", "QQ"], "matches no configuration"),
        (["--protect", "magic"], "--protect: unknown magic"),
        (["--phase-seconds", "0"], "--phase-seconds"),
        (["--dl", "5,4,3"], "--dl"),
        (["--control-cpu", "4096"], "not an available CPU"),
    ],
)
def test_bad_options_are_one_line(capsys, tmp_path, extra, needle):
    msg = rig_error(capsys, ["rig", "linux", "--out", str(tmp_path / "o"), *extra])
    assert needle in msg


def test_rig_without_target(capsys):
    assert "a target is required" in rig_error(capsys, ["rig"])


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler 'cc'")
def test_control_program_records_every_cycle(tmp_path):
    exe = linux.build_program(cache_dir=tmp_path / "cache")
    assert linux.build_program(cache_dir=tmp_path / "cache") == exe  # cached by hash
    out = tmp_path / "c.rtscyc"
    p = subprocess.run(
        [
            str(exe),
            "--policy",
            "other",
            "--cycle-us",
            "500",
            "--max-cycles",
            "40",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("ready policy=other")
    assert lines[-1].startswith("done cycles=40")
    cf = cycles.read_cycles(out)
    assert (cf.count, cf.period_ns, cf.policy) == (40, 500_000, "other")
    assert (cf.end_ns >= cf.start_ns).all()
    assert (cf.cycle_times_ns() > 0).all()
    assert (cf.latencies_ns() >= 0).all()  # never toggles before its planned time


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler 'cc'")
def test_control_program_usage_errors(tmp_path):
    exe = linux.build_program(cache_dir=tmp_path / "cache")
    for argv in (["--policy", "edf"], ["--cycle-us", "x"], ["--bogus", "1"], []):
        p = subprocess.run(
            [str(exe), "--out", str(tmp_path / "x"), "--max-cycles", "5", *argv],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if not argv:
            assert p.returncode == 0
            continue
        assert p.returncode == 2, argv
        assert len(p.stderr.strip().splitlines()) == 1


def test_help_of_rig_linux():
    import subprocess as sp
    import sys

    out = sp.run(
        [sys.executable, "-m", "rtshield", "rig", "linux", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0
    for opt in ("--out", "--phase-seconds", "--select", "--protect", "examples:"):
        assert opt in out.stdout


def test_sysctl_override_is_restored_also_by_clean(tmp_path, monkeypatch):
    """--dl-admission off: the old value comes back at the end, or from `rig clean` after a
    kill (once the process that changed it has ended)."""
    monkeypatch.setattr(harness, "STATE_DIR", tmp_path / "run")
    monkeypatch.setattr(harness, "SYSCTL_DIR", tmp_path / "sys")
    for name, empty in (("_netns_list", []), ("_root_links", []), ("_records", []),
                        ("_tagged", {})):  # fmt: skip
        monkeypatch.setattr(harness, name, lambda empty=empty: empty)
    (tmp_path / "run").mkdir()
    knob = tmp_path / "sys" / "kernel" / "sched_rt_runtime_us"
    knob.parent.mkdir(parents=True)
    knob.write_text("950000\n")
    with harness.SysctlOverride("kernel.sched_rt_runtime_us", "-1"):
        assert knob.read_text().strip() == "-1"
    assert knob.read_text().strip() == "950000"
    assert list((tmp_path / "run").iterdir()) == []
    # A killed run: the override was entered but never left, by a process now ended.
    harness.SysctlOverride("kernel.sched_rt_runtime_us", "-1").__enter__()
    assert knob.read_text().strip() == "-1"
    ended = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True)
    state = next((tmp_path / "run").iterdir())
    old = state.read_text().splitlines()[0]
    state.write_text(f"{old}\nowner {int(ended.stdout)} 1\n")
    removed = harness.clean()
    assert removed["sysctl"] == ["kernel.sched_rt_runtime_us=950000"]
    assert knob.read_text().strip() == "950000"


@pytest.mark.parametrize("target", ["linux", "freertos-tcp"])
def test_attacks_option_names_the_rigs_attacks_and_tools(target):
    """Both targets take one ``--attacks``: every attack of the harness and its tool,
    all of them by default."""
    import typer.main

    from rtshield.cli import build_app

    rig = typer.main.get_command(build_app()).commands["rig"]
    opt = next(p for p in rig.commands[target].params if p.name == "attacks")
    assert opt.default.split(",") == list(harness.ATTACKS)
    for attack in harness.ATTACKS:
        assert attack in opt.help and harness.ATTACK_TOOL[attack] in opt.help
