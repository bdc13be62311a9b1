"""A rig campaign keeps each finished run when a later one dies or the user presses
Ctrl-C, says it is incomplete, and the same command into the same --out resumes it:
runs finished with the same parameters (checked, from each run's record) are not run
again.

The first test interrupts a real two-cell `rig linux` campaign (root and the tools; the
shortest phases the rig takes) and resumes it, the second kills one; the others check the
records on folders the test writes (no root)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys

import pytest
from rig_checks import links_left, needs_root_and, procs_of, rig, run_tag

from rtshield.outputs import abort_out_dir, prepare_out_dir
from rtshield.rig.campaign import CAMPAIGN_FILE, RUN_RECORD, Campaign

SHORT = ["--select", "SF,DF", "--attacks", "syn", "--load", "off", "--phase-seconds", "0.5",
         "--break-seconds", "0", "--no-figures"]


def _as_root(test):
    """The skip marks of a test of the Linux target (root and its tools)."""
    for mark in needs_root_and(["ip", "nft", "taskset", "timeout", "cc", "hping3"]):
        test = mark(test)
    return test


@_as_root
def test_an_interrupted_campaign_keeps_its_finished_run_and_resumes(tmp_path):
    out = tmp_path / "camp"
    staged = tmp_path / ".camp.rtshield-staging"
    p = rig("linux", *SHORT, "--out", str(out))
    assert p.stdout is not None
    for line in p.stdout:  # the first cell is finished: its line says what reached it
        if line.startswith("[1/2] SF-syn-noload:") and "flood pkt/s" in line:
            break
    else:
        pytest.fail(f"the first cell never finished: {p.communicate()}")
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert "rig linux: the campaign is incomplete: 1 of 2 runs finished (interrupted)" in err
    assert f"same command into {out}" in err
    assert not out.exists()  # all or nothing for DIR: the finished run waits beside it
    camp = json.loads((staged / CAMPAIGN_FILE).read_text())
    assert camp["complete"] is False and camp["stopped"] == "interrupted"
    assert [(r["run"], r["state"]) for r in camp["runs"]] == [
        ("SF-syn-noload", "finished"), ("DF-syn-noload", "to run")]
    kept = (staged / "runs" / "SF-syn-noload" / "summary.json").read_bytes()
    record = json.loads((staged / "runs" / "SF-syn-noload" / RUN_RECORD).read_text())
    assert record["params"]["phase_s"] == 0.5 and record["params"]["cell"] == "SF-syn-noload"

    again = subprocess.run(p.args, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "[1/2] SF-syn-noload: finished by an earlier attempt" in again.stdout
    assert "1 of 2 runs were finished by an earlier attempt" in again.stdout
    assert "[2/2] DF-syn-noload: idle max" in again.stdout  # the other one ran
    summary = json.loads((out / "summary.json").read_text())
    assert [c["cell"] for c in summary["cells"]] == ["SF-syn-noload", "DF-syn-noload"]
    assert (out / "runs" / "SF-syn-noload" / "summary.json").read_bytes() == kept
    assert json.loads((out / CAMPAIGN_FILE).read_text())["complete"] is True
    assert not staged.exists()


@_as_root
def test_a_killed_campaign_keeps_its_finished_run_for_the_next(tmp_path):
    """SIGKILL gives the command no time to say anything: the finished cell and a
    campaign.json saying what remains are there all the same, and `rig clean` removes
    what the killed run left (its owner has ended)."""
    out = tmp_path / "camp"
    staged = tmp_path / ".camp.rtshield-staging"
    p = rig("linux", *SHORT, "--out", str(out))
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("[1/2] SF-syn-noload:") and "flood pkt/s" in line:
            break
    else:
        pytest.fail(f"the first cell never finished: {p.communicate()}")
    p.kill()
    p.communicate(timeout=60)
    try:
        camp = json.loads((staged / CAMPAIGN_FILE).read_text())
        assert camp["complete"] is False and "stopped" not in camp
        assert [r["state"] for r in camp["runs"]] == ["finished", "to run"]
        assert (staged / "runs" / "SF-syn-noload" / RUN_RECORD).is_file()
        assert not out.exists()
    finally:
        c = subprocess.run([sys.executable, "-m", "rtshield", "rig", "clean"],
                           capture_output=True, text=True, timeout=120)
    assert f"rtsrig-{run_tag(p.pid)}-dev" in c.stdout
    assert links_left(run_tag(p.pid)) == [] and procs_of(run_tag(p.pid)) == []


def _run(camp: Campaign, name: str, params: dict, text: str = '{"x": 1}\n') -> None:
    d = camp.out / "runs" / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "summary.json").write_text(text)
    camp.finished(name, params)


def test_a_run_is_resumed_only_with_the_same_parameters_and_summary(tmp_path):
    said: list[str] = []
    out = prepare_out_dir(tmp_path / "o", resumable=True, kind="rig test")
    try:
        camp = Campaign(out, "rig test", ["a", "b", "c"], ["rig", "test"], said.append)
        _run(camp, "a", {"phase_s": 2.0})
        _run(camp, "b", {"phase_s": 2.0})
        _run(camp, "c", {"phase_s": 2.0})
        (out / "runs" / "b" / "summary.json").write_text('{"x": 2}\n')  # changed since
        (out / "runs" / "old").mkdir()  # a run of an earlier plan
        line = camp.stopped("interrupted", "o")
        assert "3 of 3 runs finished (interrupted)" in line
        again = Campaign(out, "rig test", ["a", "b", "c"], ["rig", "test"], said.append)
        assert said == ["rig test: removed 1 runs an interrupted campaign into this folder "
                        "left that this one does not plan: old"]
        assert again.resume("a", {"phase_s": 2.0}) == {"x": 1}
        assert again.resume("b", {"phase_s": 2.0}) is None  # its summary was changed
        assert again.resume("c", {"phase_s": 3.0}) is None  # other parameters
        assert not (out / "runs" / "c" / RUN_RECORD).exists()  # made again, recorded anew
        assert again.resumed == ["a"]
        state = json.loads((out / CAMPAIGN_FILE).read_text())
        assert [r["state"] for r in state["runs"]] == ["resumed", "to run", "to run"]
    finally:
        abort_out_dir(tmp_path / "o")


def test_another_kind_of_command_does_not_resume_a_staging_folder(tmp_path):
    out = prepare_out_dir(tmp_path / "o", resumable=True, kind="rig linux")
    (out / "runs").mkdir()
    abort_out_dir(tmp_path / "o")  # a failed campaign: its staging folder is kept
    assert (out / "runs").is_dir()
    again = prepare_out_dir(tmp_path / "o", resumable=True, kind="rig linux")
    assert (again / "runs").is_dir()
    abort_out_dir(tmp_path / "o")
    other = prepare_out_dir(tmp_path / "o", resumable=True, kind="rig lwip")
    assert not (other / "runs").exists()  # replaced, not resumed
    abort_out_dir(tmp_path / "o")


def test_a_stop_whose_record_cannot_be_written_says_so_and_keeps_the_error(tmp_path, capsys):
    """The campaign's record cannot be written (its folder is gone): one line says the
    campaign is incomplete and why its record is missing, and the error that stopped
    the campaign is still the one raised."""
    from rtshield.commands.rig import _kept_if_stopped

    out = prepare_out_dir(tmp_path / "o", resumable=True, kind="rig test")
    camp = Campaign(out, "rig test", ["a"], ["rig", "test"], lambda _line: None)
    shutil.rmtree(out)  # campaign.json's folder is now a file: its record cannot be written
    out.write_text("")
    with pytest.raises(RuntimeError, match="the device died"), _kept_if_stopped(camp, "o"):
        raise RuntimeError("the device died")
    err = capsys.readouterr().err
    assert err.startswith("rig test: the campaign is incomplete and its record could not be "
                          "written: ")
    assert err.count("\n") == 1
    out.unlink()
    abort_out_dir(tmp_path / "o")
