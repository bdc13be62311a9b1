"""Output-folder safety (issue 12): every command re-run into a folder keeps
every byte of the user's files and folders in it, removes only what rtshield
wrote itself (its manifest, ``.rtshield-out``), and never follows a link or
enters a folder it did not make.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtshield import cli, figures, outputs
from rtshield.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "examples" / "constant_flood.toml"
MODBUS = REPO / "scenarios" / "examples" / "modbus_with_flood.toml"
SHORT = ["--set", "scenario.duration=2s"]

#: The user's files, by path relative to the output folder: names and
#: suffixes rtshield writes too (.json, .csv, .png, .html, .parquet), in the
#: folder, in a folder of their own, and inside rtshield's runs/ folders.
USER_FILES = {
    "notes.txt": b"my notes\n",
    "results.json": b'{"mine": 1}\n',
    "measurements.csv": b"t,x\n0,1\n",
    "plot.png": b"\x89PNG not really",
    "index.html": b"<p>mine</p>",
    "data.parquet": b"PAR1 mine",
    "mine/summary.json": b'{"the user": "wrote this"}\n',
    "mine/deep/report.html": b"<p>deep</p>",
    "mine/deep/timeseries.csv": b"a,b\n",
    "runs/my_experiment/summary.json": b'{"by hand": true}\n',
    "runs/my_experiment/figure.png": b"png",
}


@pytest.fixture(autouse=True)
def cheap_figures(monkeypatch):
    """Figures are drawn but not rendered: these tests are about files, not pixels
    (forked workers inherit the patch)."""
    monkeypatch.setattr(figures, "png_bytes", lambda *_a, **_k: b"\x89PNG\r\n\x1a\n")


def put_user_files(out: Path) -> None:
    for rel, data in USER_FILES.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def assert_user_files_intact(out: Path) -> None:
    for rel, data in USER_FILES.items():
        assert (out / rel).read_bytes() == data, rel


def rtshield(*argv) -> int:
    return cli.main([str(a) for a in argv])


def test_every_command_keeps_the_users_files(tmp_path, capsys):
    out = tmp_path / "o"
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.read_text().replace('name = "constant_flood"', 'name = "other"'))

    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    put_user_files(out)
    assert rtshield("run", MODBUS, "--out", out, "--quiet", *SHORT) == 0
    assert_user_files_intact(out)
    assert (out / "summary.json").is_file()

    assert rtshield("compare", SCENARIO, other, "--out", out, "--jobs", "2", *SHORT) == 0
    assert_user_files_intact(out)
    assert not (out / "summary.json").exists()  # the run's results: rtshield's, replaced
    assert (out / "runs" / "other" / "report.html").is_file()
    (out / "runs" / "other" / "my_note.txt").write_text("inside a run folder")

    assert rtshield("sweep", SCENARIO, "--set", "driver.queue=101,201", "--out", out,
                    "--jobs", "1", *SHORT) == 0
    assert_user_files_intact(out)
    assert not (out / "runs" / "constant_flood").exists()  # pruned: only rtshield's files
    assert (out / "runs" / "other" / "my_note.txt").read_text() == "inside a run folder"
    assert not (out / "runs" / "other" / "summary.json").exists()
    assert (out / "sweep.csv").is_file()

    assert rtshield("demo", "--out", out, "--set", "scenario.duration=2s", "--jobs", "2") == 0
    assert_user_files_intact(out)
    assert not (out / "sweep.csv").exists() and not (out / "runs" / "queue_101").exists()
    assert (out / "runs" / "burst" / "summary.json").is_file()

    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    capsys.readouterr()
    assert_user_files_intact(out)
    assert not (out / "comparison.json").exists() and not (out / "runs" / "burst").exists()
    assert (out / "runs" / "other" / "my_note.txt").is_file()
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["my_experiment", "other"]


def test_a_result_the_user_edited_is_kept(tmp_path, capsys):
    out = tmp_path / "o"
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.read_text().replace('name = "constant_flood"', 'name = "other"'))
    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    (out / "summary.json").write_text('{"annotated": "by the user"}\n')
    assert rtshield("compare", SCENARIO, other, "--out", out, "--jobs", "1", *SHORT) == 0
    capsys.readouterr()
    assert (out / "summary.json").read_text() == '{"annotated": "by the user"}\n'
    assert not (out / "timeseries.csv").exists()


def test_the_manifest_never_points_outside(tmp_path, capsys):
    out = tmp_path / "o"
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    inside = tmp_path / "elsewhere"
    inside.mkdir()
    (inside / "summary.json").write_text("precious too")
    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    digest = outputs._digest(victim)
    marker = out / outputs.MARKER
    marker.write_text(marker.read_text() + f"file {digest} ../victim.json\n"
                      f"file {digest} {victim}\ndir ../elsewhere\ndir {inside}\ndir runs/../..\n")
    (out / "runs").mkdir()
    (out / "runs" / "link").symlink_to(inside)
    marker.write_text(marker.read_text() + "dir runs/link\n")
    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    capsys.readouterr()
    assert victim.read_text() == "precious"
    assert (inside / "summary.json").read_text() == "precious too"
    assert (out / "runs" / "link").is_symlink()


def tree(d: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every entry under ``d``: its bytes (folders: none), inode and mtime."""
    return {
        str(p.relative_to(d)): (
            p.read_bytes() if p.is_file() else b"", p.lstat().st_ino, p.lstat().st_mtime_ns
        )
        for p in sorted(d.rglob("*"))
    }


def test_a_failed_command_leaves_the_earlier_results_exactly(tmp_path, capsys, monkeypatch):
    """All or nothing: a compare that fails late (its figures) leaves the earlier run's
    folder as it was, byte for byte, file for file, and nothing beside it."""
    out = tmp_path / "o"
    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    put_user_files(out)
    before = tree(out)

    def boom(*_a, **_k):
        raise RuntimeError("figure failed")

    real = figures.compare_figures
    monkeypatch.setattr(figures, "compare_figures", boom)
    other = tmp_path / "other.toml"
    other.write_text(SCENARIO.read_text().replace('name = "constant_flood"', 'name = "other"'))
    assert rtshield("compare", SCENARIO, other, "--out", out, "--jobs", "1", *SHORT) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "figure failed" in err, err
    assert str(out) in err and ".rtshield-staging" not in err, err
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "other.toml"]  # no staging, no lock
    monkeypatch.setattr(figures, "compare_figures", real)
    assert rtshield("compare", SCENARIO, other, "--out", out, "--jobs", "1", *SHORT) == 0
    capsys.readouterr()
    assert not (out / "summary.json").exists() and (out / "comparison.json").is_file()
    assert_user_files_intact(out)


def test_foreign_folder_is_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "o"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "thesis.tex").write_text("mine")
    assert rtshield("run", SCENARIO, "--out", out, *SHORT) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out: {out} is not empty" in err
    assert [p.name for p in out.rglob("*")] == ["sub", "thesis.tex"]


def test_earlier_version_marker_removes_nothing(tmp_path, capsys):
    """A folder marked by an earlier version (no list of files): nothing is removed."""
    out = tmp_path / "o"
    out.mkdir()
    (out / outputs.MARKER).write_text("written by rtshield; its results are replaced\n")
    (out / "old.png").write_bytes(b"an old figure, or the user's")
    assert rtshield("run", SCENARIO, "--out", out, "--quiet", *SHORT) == 0
    capsys.readouterr()
    assert (out / "old.png").read_bytes() == b"an old figure, or the user's"
    assert "summary.json" in outputs.read_manifest(out)[0]


def test_run_figures_removes_only_figures_rtshield_wrote(tmp_path):
    from test_outputs import FakeResult

    (tmp_path / "latency.png").write_bytes(b"the user's own latency figure")
    r = FakeResult()
    r.flow_latency_hist = {}
    figures.run_figures(r, "fake", tmp_path)
    assert (tmp_path / "latency.png").read_bytes() == b"the user's own latency figure"


def test_check_out_dir_creates_nothing(tmp_path):
    target = tmp_path / "a" / "b"
    assert outputs.check_out_dir(target) == target
    assert not (tmp_path / "a").exists()
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        outputs.check_out_dir(tmp_path / "f" / "sub")
