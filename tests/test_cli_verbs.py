"""CLI verbs run, compare, demo: help texts and one-line errors (exit 2, no traceback)."""

import subprocess
import sys
from pathlib import Path

import pytest

from rtshield.commands import demo

REPO = Path(__file__).resolve().parent.parent
Q500 = REPO / "scenarios" / "danicki2021" / "queue_500.toml"


def rtshield(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rtshield", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("verb", ["run", "compare", "demo"])
def test_help_explains_each_verb(verb):
    out = rtshield(verb, "--help")
    assert out.returncode == 0
    assert "--out" in out.stdout and "example:" in out.stdout


def one_line_error(out, *needles):
    assert out.returncode == 2, (out.stdout, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("rtshield: error: ")
    for n in needles:
        assert n in lines[0], lines[0]
    assert "Traceback" not in out.stderr


def test_run_missing_file(tmp_path):
    one_line_error(rtshield("run", tmp_path / "nope.toml", "--out", tmp_path / "o"),
                   "nope.toml", "no such file")


def test_run_out_dir_is_a_file(tmp_path):
    f = tmp_path / "f"
    f.write_text("")
    one_line_error(rtshield("run", Q500, "--out", f), "--out", "not a directory")


def test_run_out_dir_cannot_be_created(tmp_path):
    f = tmp_path / "f"
    f.write_text("")
    one_line_error(rtshield("run", Q500, "--out", f / "sub"), "--out", "cannot create")


def test_compare_needs_two_files(tmp_path):
    one_line_error(rtshield("compare", Q500, "--out", tmp_path / "o"), "at least two")


def test_compare_validates_every_file_before_running(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(Q500.read_text().replace("queue = 500", "queue = -3"))
    one_line_error(rtshield("compare", Q500, bad, "--out", tmp_path / "o"),
                   "bad.toml", "[driver] queue")
    assert not (tmp_path / "o").exists()


def test_compare_rejects_bad_jobs(tmp_path):
    one_line_error(rtshield("compare", Q500, Q500, "--jobs", "0", "--out", tmp_path / "o"),
                   "--jobs")


def test_demo_finds_the_study_in_paper_order():
    files = demo.study_files()
    assert [f.stem for f in files] == list(demo.DANICKI_ORDER)


def test_demo_study_is_installed_with_the_package(tmp_path):
    # From an unrelated directory, the installed package must find its study files.
    code = ("from rtshield.commands import demo; "
            "print(len(demo.study_files()), demo.study_dir())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, check=True)
    n, where = out.stdout.split()
    assert n == "8"
    import rtshield

    assert Path(where).is_relative_to(Path(rtshield.__file__).resolve().parent)
