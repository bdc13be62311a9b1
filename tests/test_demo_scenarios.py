"""``rtshield demo --study NAME --scenarios DIR``: a study on the user's own (edited) scenarios.

The folder is checked before anything runs or is written: every mistake is one
line naming the folder or the file, exit 2, and no output folder.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.commands import demo
from rtshield.studies import STUDIES

REPO = Path(__file__).resolve().parent.parent
DANICKI = REPO / "scenarios" / "danicki2021"


def rtshield(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rtshield", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def one_line_error(res, *needles):
    assert res.returncode == 2, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), res.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    assert "Traceback" not in res.stderr


@pytest.fixture
def mine(tmp_path):
    d = tmp_path / "mine"
    shutil.copytree(DANICKI, d)
    return d


@pytest.mark.parametrize("study", list(STUDIES))
def test_each_study_needs_the_files_its_shipped_folder_has(study):
    need = demo.required_files(study)
    assert need and all(n.endswith(".toml") for n in need)
    shipped = {
        "danicki": DANICKI,
        "behnke-software": REPO / "scenarios" / "behnke_software",
        "behnke-hardware": REPO / "scenarios" / "behnke_hardware",
        "regehr": REPO / "scenarios" / "regehr2005",
    }[study]
    assert all((shipped / n).is_file() for n in need)
    assert demo.check_scenarios(study, shipped) == shipped  # the shipped folder passes


def test_a_missing_file_is_named(tmp_path, mine):
    (mine / "queue_500.toml").unlink()
    out = tmp_path / "o"
    one_line_error(rtshield("demo", "--study", "danicki", "--scenarios", mine, "--out", out),
                   "--scenarios", str(mine / "queue_500.toml"), "missing", "burst.toml")
    assert not out.exists()


def test_a_bad_file_is_named_with_its_key(tmp_path, mine):
    f = mine / "hysteresis.toml"
    f.write_text(re.sub(r"(?m)^queue = .*$", 'queue = "lots"', f.read_text()))
    out = tmp_path / "o"
    one_line_error(rtshield("demo", "--study", "danicki", "--scenarios", mine, "--out", out),
                   str(f), "[driver] queue")
    assert not out.exists()


def test_no_such_folder(tmp_path):
    out = tmp_path / "o"
    one_line_error(rtshield("demo", "--study", "regehr", "--scenarios", tmp_path / "nope",
                            "--out", out), str(tmp_path / "nope"), "no such folder")
    assert not out.exists()


def test_without_a_study_dir_holds_one_folder_per_study(tmp_path, mine):
    """Without --study, DIR is a copy of scenarios/: each study's folder under its
    shipped name; a missing one is named before anything runs."""
    import argparse

    tree = tmp_path / "tree"
    for name in ("danicki2021", "behnke_software", "behnke_hardware", "regehr2005"):
        shutil.copytree(REPO / "scenarios" / name, tree / name)
    args = argparse.Namespace(study=None, scenarios=str(tree))
    folders = demo._folders(args)
    assert {n: p.name for n, p in folders.items()} == {
        "danicki": "danicki2021", "behnke-software": "behnke_software",
        "behnke-hardware": "behnke_hardware", "regehr": "regehr2005"}
    args.folders = folders
    assert demo._folder(args, "regehr") == tree / "regehr2005"
    shutil.rmtree(tree / "regehr2005")
    out = tmp_path / "o"
    one_line_error(rtshield("demo", "--scenarios", tree, "--out", out),
                   str(tree / "regehr2005"), "no such folder", "fig_strict.toml")
    assert not out.exists()
    one_line_error(rtshield("demo", "--scenarios", mine, "--out", out),
                   str(mine / "danicki2021"), "no such folder")


def test_queue500_claim_on_a_run_shorter_than_the_flood_is_a_verdict():
    """--set scenario.duration=1s: no second reaches 1 000 packets; the claim does
    not hold (it is not a crash)."""
    import numpy as np

    from rtshield.studies import danicki2021

    quiet = {k: np.array([10.0, 20.0]) for k in ("received", "processed")}
    run = type("Run", (), {"timeseries": quiet, "critical": {"lateness_sum_pct": 0.0}})()
    ok, value = danicki2021.queue500({"queue_500": run})
    assert ok is False and "no second" in value


def test_hardware_study_names_a_missing_capture(tmp_path):
    d = tmp_path / "hw"
    d.mkdir()
    shutil.copy(REPO / "scenarios" / "behnke_hardware" / "device.toml", d)
    one_line_error(rtshield("demo", "--study", "behnke-hardware", "--scenarios", d, "--out",
                            tmp_path / "o"), str(d / "device.toml"), ".pcap")
    assert not (tmp_path / "o").exists()


def test_a_plan_study_without_a_section_it_edits_is_one_line(tmp_path):
    d = tmp_path / "hw"
    shutil.copytree(REPO / "scenarios" / "behnke_hardware", d)
    dev = d / "device.toml"
    # the study edits the NIC's queues: an edit that removes the NIC
    text = dev.read_text()
    start = text.index("[nic]")
    end = text.index("[[flows]]")
    cut = text[:start] + text[end:]
    dev.write_text(cut)
    res = rtshield("demo", "--study", "behnke-hardware", "--scenarios", d, "--out",
                   tmp_path / "o")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr and str(d) in res.stderr
    assert not (tmp_path / "o").exists()


def test_danicki_runs_on_an_edited_shortened_copy(tmp_path, mine):
    """The edited copy is what runs: queue_750 edited to a queue of 100 gives exactly
    queue_100's packet counts (same flood, seed and settings otherwise), which the
    shipped queue_750 does not."""
    q750 = mine / "queue_750.toml"
    text = q750.read_text()
    assert re.search(r"(?m)^queue = 750\b", text)
    q750.write_text(re.sub(r"(?m)^queue = 750\b", "queue = 100", text))
    out = tmp_path / "o"
    res = rtshield("demo", "--study", "danicki", "--scenarios", mine, "--out", out,
                   "--set", "scenario.duration=4s", "--jobs", "2")
    assert res.returncode == 0, res.stderr
    runs = {p.name: json.loads((p / "summary.json").read_text())
            for p in (out / "runs").iterdir()}
    assert set(runs) == {Path(n).stem for n in demo.required_files("danicki")}
    assert runs["queue_750"]["duration_s"] == 4
    assert runs["queue_750"]["totals"] == runs["queue_100"]["totals"]
    assert runs["queue_500"]["totals"] != runs["queue_100"]["totals"]
    report = (out / "report.html").read_text()
    assert str(mine) in report  # the report says whose scenarios ran
    assert "claims of Danicki et al." in res.stdout


def test_behnke_hardware_runs_on_an_edited_copy_and_its_report_names_it(tmp_path):
    """The device's edited file is what runs: the critical task's work raised from
    10 µs to 40 µs makes every run's worst response at least 40 µs (the shipped
    file's runs stay far below)."""
    d = tmp_path / "hw"
    shutil.copytree(REPO / "scenarios" / "behnke_hardware", d)
    dev = d / "device.toml"
    text = dev.read_text()
    assert re.search(r'(?m)^work = "10us"', text)
    dev.write_text(re.sub(r'(?m)^work = "10us"', 'work = "40us"', text, count=1))
    out = tmp_path / "o"
    res = rtshield("demo", "--study", "behnke-hardware", "--scenarios", d, "--out", out,
                   "--set", "scenario.duration=1s")
    assert res.returncode == 0, res.stderr
    points = json.loads((out / "points.json").read_text())
    assert points and all(p["critical"]["max_response_us"] >= 40 for p in points.values())
    page = (out / "report.html").read_text()
    assert f"<code>{d}/device.toml</code>" in page
    assert "<code>scenarios/behnke_hardware/" not in page
    assert "claims of Behnke et al. §8 hold" in res.stdout
