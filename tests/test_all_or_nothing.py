"""Nothing lost, nothing hangs (issue 27), by class, across the verbs:

1. all-or-nothing outputs under real file-system faults: a full tmpfs (ENOSPC),
   the same tmpfs remounted read-only (EROFS), a folder the process may not
   write (EACCES, root's override dropped), an I/O error at the one write
   helper (EIO, injected: no real disk fails on demand) — each one line naming
   the file and the error, the earlier results exactly as they were;
2. one writer per ``--out``: a second one refused naming the holder, the lock
   gone with a killed holder;
3. every input path through one door, each failure with its true reason;
4. numbers checked before work;
5. no NaN results, CSVs read with or without a byte-order mark.

The faults are real where the machine allows (root mounts a small tmpfs and
unmounts it, also on failure); tests that need root skip elsewhere.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_checks import error_line, tree
from os_faults import GUARD_S, fill, remount, rtshield_without_dac, run_guarded, small_tmpfs

from rtshield import cli, figures, outputs

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "scenarios" / "examples" / "constant_flood.toml"
SHORT = ["--set", "scenario.duration=2s"]


def rtshield(*argv) -> int:
    return cli.main([str(a) for a in argv])


def other_scenario(tmp: Path) -> Path:
    f = tmp / "other.toml"
    f.write_text(SCENARIO.read_text().replace('name = "constant_flood"', 'name = "other"'))
    return f


def verb_argv(verb: str, out: Path, tmp: Path) -> list:
    """A short command of ``verb`` writing into ``out``."""
    if verb == "run":
        return ["run", SCENARIO, "--out", out, "--quiet", "--no-figures", *SHORT]
    if verb == "compare":
        return ["compare", SCENARIO, other_scenario(tmp), "--out", out, "--jobs", "1", *SHORT]
    if verb == "sweep":
        return ["sweep", SCENARIO, "--set", "driver.queue=100,200", "--out", out, "--jobs", "1",
                *SHORT]
    raise AssertionError(verb)


VERBS = ["run", "compare", "sweep"]


@pytest.fixture(autouse=True)
def cheap_figures(request, monkeypatch):
    """Figures drawn but not rendered (the tests are about files), except where the
    rendering is the point."""
    if "unrenderable" not in request.node.name:
        monkeypatch.setattr(figures, "png_bytes", lambda *_a, **_k: b"\x89PNG\r\n\x1a\n")


# ------------------------------------------------------------------ 1. all or nothing


def _first_run(mnt: Path, verb: str, tmp: Path, capsys) -> tuple[Path, dict]:
    """A successful ``verb`` into ``mnt/o``: that folder and its tree."""
    out = mnt / "o"
    assert rtshield(*verb_argv(verb, out, tmp)) == 0
    capsys.readouterr()
    return out, tree(out)


@pytest.mark.parametrize("verb", VERBS)
def test_full_disk_leaves_the_earlier_results(tmp_path, capsys, verb):
    """ENOSPC for real: a tmpfs filled up between two runs."""
    with small_tmpfs(tmp_path / "mnt", "8m") as mnt:
        out, before = _first_run(mnt, verb, tmp_path, capsys)
        fill(mnt, leave=0)
        rc = rtshield(*verb_argv(verb, out, tmp_path))
        err = capsys.readouterr().err
        assert rc in (1, 2), err
        line = err.strip().splitlines()
        assert len(line) == 1 and line[0].startswith("rtshield: error: "), err
        assert "No space left on device (ENOSPC)" in line[0], line[0]
        assert ".rtshield-staging" not in line[0] and "Traceback" not in err
        assert tree(out) == before
        left = sorted(p.name for p in mnt.iterdir())
        if verb == "sweep":  # the finished points are kept beside, to resume
            assert left in (["filler", "o"], [".o.rtshield-staging", "filler", "o"]), left
        else:
            assert left == ["filler", "o"], left


@pytest.mark.parametrize("verb", VERBS)
def test_read_only_file_system_is_one_line(tmp_path, capsys, verb):
    """EROFS for real: the tmpfs remounted read-only after the first run."""
    with small_tmpfs(tmp_path / "mnt", "8m") as mnt:
        out, before = _first_run(mnt, verb, tmp_path, capsys)
        remount(mnt, "ro")
        try:
            rc = rtshield(*verb_argv(verb, out, tmp_path))
            err = capsys.readouterr().err
        finally:
            remount(mnt, "rw")
        line = error_line(rc, err, "Read-only file system (EROFS)", str(mnt))
        assert "lock" in line
        assert tree(out) == before


@pytest.mark.parametrize("verb", VERBS)
def test_folder_without_write_permission_is_one_line(tmp_path, verb):
    """EACCES for real: the folder holding --out made read-only; rtshield runs in a
    process that file permissions apply to (root's override dropped)."""
    parent = tmp_path / "p"
    parent.mkdir()
    out = parent / "o"
    assert rtshield(*verb_argv(verb, out, tmp_path)) == 0
    before = tree(out)
    parent.chmod(0o555)
    try:
        r = rtshield_without_dac(verb_argv(verb, out, tmp_path), tmp_path)
    finally:
        parent.chmod(0o755)
    error_line(r.returncode, r.stderr, "(EACCES)", str(parent))
    assert tree(out) == before
    assert sorted(p.name for p in parent.iterdir()) == ["o"]


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("when", ["first file", "report"])
def test_io_error_at_the_write_helper(tmp_path, capsys, monkeypatch, verb, when):
    """EIO, injected at the one write helper (outputs.atomic_write's rename): no real
    disk fails on demand. The first file written, or the report (the last)."""
    out = tmp_path / "o"
    assert rtshield(*verb_argv(verb, out, tmp_path)) == 0
    capsys.readouterr()
    before = tree(out)
    real = os.replace

    def failing(src, dst, *a, **k):
        name = Path(dst).name
        if when == "first file" or name == "report.html":
            raise OSError(5, "Input/output error", str(dst))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(outputs.os, "replace", failing)
    rc = rtshield(*verb_argv(verb, out, tmp_path))
    err = capsys.readouterr().err
    assert rc == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Input/output error (EIO)" in lines[0], err
    assert str(out) in lines[0] and ".rtshield-staging" not in lines[0], lines[0]
    assert tree(out) == before


def test_interrupted_sweep_resumes_from_its_staging_folder(tmp_path, capsys, monkeypatch):
    """A sweep that fails after its points (the report) keeps them beside --out,
    claims nothing in --out, and the next sweep runs no point again."""
    out = tmp_path / "o"
    argv = ["sweep", SCENARIO, "--set", "driver.queue=100,200,300", "--out", out,
            "--jobs", "1", *SHORT]
    from rtshield import report

    real = report.compare_report

    def boom(*a, **k):
        raise RuntimeError("report failed")

    monkeypatch.setattr(report, "compare_report", boom)
    monkeypatch.setattr("rtshield.runner.compare_report", boom)
    assert rtshield(*argv) == 1
    capsys.readouterr()
    assert not out.exists()
    staging = tmp_path / ".o.rtshield-staging"
    assert len(list((staging / "runs").iterdir())) == 3
    monkeypatch.setattr("rtshield.runner.compare_report", real)
    assert rtshield(*argv) == 0
    assert "3 of 3 points were already in" in capsys.readouterr().out
    assert (out / "sweep.csv").is_file() and not staging.exists()


# ------------------------------------------------------------------ 2. one writer


def _hold_lock(out: Path, text: str) -> int:
    lock = out.parent / f".{out.name}.rtshield-lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, text.encode())
    return fd


@pytest.mark.parametrize("verb", [*VERBS, "calibrate", "demo"])
def test_second_writer_is_refused_naming_the_holder(tmp_path, capsys, verb):
    out = tmp_path / "o"
    fd = _hold_lock(out, "pid 4242: rtshield run busy.toml --out o\n")
    try:
        argv = (
            verb_argv(verb, out, tmp_path) if verb in VERBS
            else ["demo", "--study", "danicki", "--out", out, *SHORT] if verb == "demo"
            else ["calibrate", REPO / "scenarios" / "calibration" / "danicki2021.toml",
                  "--budget", "1", "--out", out]
        )
        rc = rtshield(*argv)
        line = error_line(rc, capsys.readouterr().err, "being written by another rtshield",
                          "pid 4242: rtshield run busy.toml --out o")
        assert str(out) in line
    finally:
        os.close(fd)
    assert not out.exists()


def test_two_runs_at_once_one_wins_the_other_is_refused(tmp_path):
    """Real concurrency: a long run holds --out; a second command is refused naming it;
    killing the holder (SIGKILL: no clean-up of its own) releases the lock."""
    flood = SCENARIO.read_text()
    f = tmp_path / "long.toml"
    f.write_text(flood)
    out = tmp_path / "o"
    first = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "run", str(f), "--out", str(out),
         "--set", "scenario.duration=3600s"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + GUARD_S
        staging = tmp_path / ".o.rtshield-staging"
        while not staging.exists() and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.05)
        assert staging.exists(), first.stderr.read() if first.poll() is not None else "no start"
        second = run_guarded([sys.executable, "-m", "rtshield", "run", SCENARIO, "--out", out,
                              *SHORT], tmp_path)
        error_line(second.returncode, second.stderr, f"pid {first.pid}: rtshield run",
                   "being written by another rtshield command")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=GUARD_S)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    third = run_guarded([sys.executable, "-m", "rtshield", "run", SCENARIO, "--out", out,
                         "--no-figures", *SHORT], tmp_path)
    assert third.returncode == 0, third.stderr
    assert third.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml", "o"]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a run draws its figures in a "
                    "helper process only with a second CPU")
def test_a_killed_run_leaves_no_figure_helper(tmp_path):
    """SIGKILL of a run with figures: its figure helper (forked at the start) ends too,
    instead of waiting on its pipe for ever."""
    f = tmp_path / "long.toml"
    f.write_text(SCENARIO.read_text())
    run = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "run", str(f), "--out", str(tmp_path / "o"),
         "--set", "scenario.duration=3600s"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + GUARD_S
        while not (kids := _children(run.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kids, "the run started no figure helper"
    finally:
        run.kill()
        run.wait(timeout=GUARD_S)
    deadline = time.monotonic() + 30.0  # a helper that outlives its run waits for ever
    alive = kids
    while alive and time.monotonic() < deadline:
        alive = [k for k in kids if Path(f"/proc/{k}").exists()
                 and Path(f"/proc/{k}/stat").read_text().split()[2] != "Z"]
        time.sleep(0.05)
    for k in alive:  # do not leave them to the next test
        os.kill(k, signal.SIGKILL)
    assert not alive, f"figure helpers outlived their killed run: {alive}"


# ------------------------------------------------------------------ 3. one door for inputs


def _make(kind: str, p: Path) -> Path:
    """An input path at ``p`` that fails as ``kind``."""
    if kind == "missing":
        return p
    if kind == "dangling-link":
        p.symlink_to(p.parent / "gone")
        return p
    if kind == "link-loop":
        a = p.parent / f"{p.name}.loop"
        p.symlink_to(a)
        a.symlink_to(p)
        return p
    if kind == "fifo":
        os.mkfifo(p)
        return p
    if kind == "device":
        p.symlink_to("/dev/zero")
        return p
    if kind == "directory":
        p.mkdir()
        return p
    if kind == "too-big":
        with open(p, "wb") as f:
            f.truncate(3 << 30)  # sparse: nothing is read
        return p
    raise AssertionError(kind)


KINDS = {
    "missing": "no such file",
    "dangling-link": "a symbolic link to a missing file",
    "link-loop": "a symbolic link loop",
    "fifo": "is a FIFO",
    "device": "is a device",
    "directory": "is a directory",
    "too-big": "larger than the limit",
}


def _argv_for(role: str, bad: Path, tmp: Path, out: Path) -> list:
    """A command reading ``bad`` as its ``role`` input."""
    if role == "scenario":
        return ["run", bad, "--out", out]
    if role == "system":
        return ["analyze", bad]
    if role == "calibration":
        return ["calibrate", bad, "--out", out]
    if role == "capture":
        sc = tmp / "cap.toml"
        sc.write_text(
            '[scenario]\nname = "c"\nplatform = "esp32-multiqueue-nic"\nduration = "1s"\n'
            '[nic]\nkind = "multiqueue"\n[[nic.queues]]\nname = "q0"\nsize = 128\n'
            '[[flows]]\nname = "cap"\nprotocol = "udp"\ndst_port = 502\nnic_queue = "q0"\n'
            f'pattern = "pcap"\nfile = "{bad.name}"\n')
        return ["run", sc, "--out", out]
    if role == "counters":
        (tmp / "model.toml").write_text(SCENARIO.read_text())
        cal = tmp / "cal.toml"
        cal.write_text(
            '[calibration]\nname = "b"\nbudget = 1\n[objective]\nkind = "counters"\n'
            f'scenario = "model.toml"\ncsv = "{bad.name}"\n[[parameter]]\n'
            'key = "costs.driver_per_packet"\nlow = "5us"\nhigh = "30us"\n')
        return ["calibrate", cal, "--out", out]
    raise AssertionError(role)


ROLES = ["scenario", "system", "calibration", "capture", "counters"]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_input_gets_its_true_reason(tmp_path, capsys, role, kind):
    if kind == "too-big" and role == "capture":
        pytest.skip("a capture's limit is the simulator's trace limits: tests/test_bad_pcap.py")
    bad = _make(kind, tmp_path / f"bad.{role}")
    out = tmp_path / "o"
    rc = rtshield(*_argv_for(role, bad, tmp_path, out))
    line = error_line(rc, capsys.readouterr().err, "bad." + role, KINDS[kind])
    assert "Traceback" not in line
    assert not out.exists() and not (tmp_path / ".o.rtshield-staging").exists()


@pytest.mark.parametrize("role", ROLES)
def test_unreadable_input_says_permission_denied(tmp_path, role):
    bad = tmp_path / f"bad.{role}"
    bad.write_text("x = 1\n")
    bad.chmod(0)
    r = rtshield_without_dac(_argv_for(role, bad, tmp_path, tmp_path / "o"), tmp_path)
    error_line(r.returncode, r.stderr, f"bad.{role}", "permission denied (EACCES)")


def test_scenarios_folder_gets_its_true_reason(tmp_path, capsys):
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    rc = rtshield("demo", "--study", "danicki", "--scenarios", loop, "--out", tmp_path / "o")
    error_line(rc, capsys.readouterr().err, "--scenarios", "a symbolic link loop")
    f = tmp_path / "file"
    f.write_text("")
    rc = rtshield("demo", "--study", "danicki", "--scenarios", f, "--out", tmp_path / "o")
    error_line(rc, capsys.readouterr().err, "--scenarios", "is a file, expected a folder")


# ------------------------------------------------------------------ 4. numbers before work


@pytest.mark.parametrize("value, ok", [
    ("9223372036854775807ns", True),
    ("9223372036.854775807s", True),
    ("9223372036854775808ns", False),
    ("9.3e18ns", False),
    ("1e999999999s", False),
    ("0.0000000000000000000000000000000000000000000001s", True),  # 0 ns
])
def test_durations_are_read_exactly(value, ok):
    from rtshield.errors import UsageError
    from rtshield.units import MAX_DURATION_NS, duration_ns

    if ok:
        assert duration_ns(value, "k") in (MAX_DURATION_NS, 0)
    else:
        with pytest.raises(UsageError, match="too long"):
            duration_ns(value, "k")


@pytest.mark.parametrize("scale, loop, needle", [
    ("1e-300", "false", "stretches the replay"),
    ("5e-324", "true", "stretches its loop period"),
    ("1e-12", "false", "beyond the 64-bit clock"),
])
def test_capture_scale_beyond_the_clock_is_refused_at_load(tmp_path, capsys, scale, loop, needle):
    import dpkt

    frame = b"\x02\0\0\0\0\x0a\x02\0\0\0\0\x01\x08\x00" + b"\0" * 46
    with open(tmp_path / "c.pcap", "wb") as fh:
        w = dpkt.pcap.Writer(fh)
        for i in range(3):
            w.writepkt(frame, ts=1.0 + i * 1000)  # 2000 s apart
    sc = _argv_for("capture", tmp_path / "c.pcap", tmp_path, tmp_path / "o")[1]
    sc.write_text(sc.read_text() + f"scale = {scale}\nloop = {loop}\n")
    rc = rtshield("run", sc, "--out", tmp_path / "o")
    error_line(rc, capsys.readouterr().err, "c.pcap", needle)
    assert not (tmp_path / "o").exists()


def test_grid_is_counted_before_a_point_is_built(tmp_path, capsys, monkeypatch):
    from rtshield.sweep import grid

    built = {"n": 0}
    real = grid.itertools.product

    def counting(*a, **k):
        built["n"] += 1
        return real(*a, **k)

    monkeypatch.setattr(grid.itertools, "product", counting)
    v = ",".join(str(i) for i in range(1, 1001))
    rc = rtshield("sweep", SCENARIO, "--set", f"driver.queue={v}", "--set",
                  f"critical.priority={v}", "--set", f"driver.priority={v}",
                  "--out", tmp_path / "o")
    from rtshield.sweep import MAX_POINTS

    assert 1000**3 > MAX_POINTS
    error_line(rc, capsys.readouterr().err, "the grid has 1000000000 points",
               "1000 × 1000 × 1000", f"at most {MAX_POINTS}")
    assert built["n"] == 0


def test_sweep_help_states_the_limit(capsys):
    from rtshield.sweep import MAX_POINTS

    assert cli.main(["sweep", "--help"]) == 0
    assert f"At most {MAX_POINTS} points" in " ".join(capsys.readouterr().out.split())


# ------------------------------------------------------------------ 5. no NaN, BOM-tolerant CSVs


BOARD = SCENARIO.read_text().replace('duration = "12s"', 'duration = "3s"')


def _counters(tmp: Path, rows: list[str], bom: bool = False) -> Path:
    (tmp / "model.toml").write_text(BOARD)
    text = "t_s,processed\n" + "\n".join(rows) + "\n"
    (tmp / "board.csv").write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    cal = tmp / "cal.toml"
    cal.write_text(
        '[calibration]\nname = "b"\nbudget = 2\nseed = 1\n[objective]\nkind = "counters"\n'
        'scenario = "model.toml"\ncsv = "board.csv"\n[[parameter]]\n'
        'key = "costs.driver_per_packet"\nlow = "5us"\nhigh = "30us"\n')
    return cal


def test_counters_csv_with_a_byte_order_mark_is_read(tmp_path):
    from rtshield import calibrate

    cal = calibrate.load_calibration(_counters(tmp_path, ["0,100", "1,100", "2,100"], bom=True))
    assert cal.counters_t == (0.0, 1.0, 2.0) and "processed" in cal.counters


@pytest.mark.parametrize("search", ["lhs", "tpe"])
def test_calibrate_with_no_finite_point_exits_nonzero_and_writes_nothing(
    tmp_path, capsys, search
):
    huge = "1.7e308"
    cal = _counters(tmp_path, [f"0,{huge}", f"1,{huge}", f"2,{huge}"])
    out = tmp_path / "o"
    rc = rtshield("calibrate", cal, "--out", out, "--jobs", "1", "--search", search)
    error_line(rc, capsys.readouterr().err, "none of the 2 points has a finite score",
               "non-finite error of processed")
    assert not out.exists()
    # beside it only the record of the evaluated points, as a calibration that stops early
    staged = tmp_path / ".o.rtshield-staging"
    assert sorted(p.name for p in staged.iterdir()) == [
        ".calibrate-points.csv", ".rtshield-out", ".rtshield-staging"]


# ------------------------------------------------------------------ 7. clean stderr


EMOJI = "flood 🚀 测试 ∑ 𝄞 ☃"


def _clean_argv(verb: str, tmp: Path) -> list:
    sc = tmp / "emoji.toml"
    sc.write_text(SCENARIO.read_text().replace('name = "constant_flood"', f'name = "{EMOJI}"')
                  .replace('name = "flood"', 'name = "syn"'))
    out = tmp / "o"
    system = REPO / "scenarios" / "analysis" / "textbook_three_tasks.toml"
    return {
        "run": ["run", sc, "--out", out, *SHORT],
        "compare": ["compare", sc, SCENARIO, "--out", out, *SHORT],
        "sweep": ["sweep", sc, "--set", "driver.queue=100,200", "--out", out, "--jobs", "1",
                  *SHORT],
        "analyze": ["analyze", system],
        "design": ["design", REPO / "scenarios" / "analysis" / "regehr_avr_strict_design.toml"],
        "schema": ["schema", "--out", tmp / "schema.json"],
        "calibrate": ["calibrate", _counters(tmp, ["0,29000", "1,29000", "2,29000"]),
                      "--out", out, "--jobs", "1"],
    }[verb]


@pytest.mark.parametrize("verb", ["run", "compare", "sweep", "analyze", "design", "schema",
                                  "calibrate"])
def test_a_successful_command_prints_nothing_on_stderr(tmp_path, verb):
    """Real processes, real figures (any Unicode name drawn, no "Glyph missing"), no
    library warning: stderr stays empty."""
    r = run_guarded([sys.executable, "-m", "rtshield", *_clean_argv(verb, tmp_path)], tmp_path,
                    env={"RTSHIELD_PROGRESS": "0"})
    assert r.returncode in (0, 1) if verb in ("analyze", "design") else r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr


def test_unrenderable_characters_are_replaced_not_warned():
    import warnings

    from matplotlib.figure import Figure

    from rtshield.figures import layout

    fig = Figure()
    fig.suptitle("x \U000F0000 \U0010FFFD 🚀")  # private use planes: no font has them
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = layout.png_bytes(fig)
    assert png.startswith(b"\x89PNG")
    assert layout.MISSING_GLYPH in fig._suptitle.get_text()
    assert layout.drawable("plain") == "plain"


def test_tick_labels_given_as_text_are_drawable_and_numbers_make_no_ticks_early():
    """A flow named with characters no font has, as a tick label (``set_xticks(x,
    names)``, as the rx drops figure does): drawn with the replacement, without a
    warning; and making the texts drawable creates no tick for a number."""
    import warnings

    from matplotlib.figure import Figure

    from rtshield.figures import layout

    fig = Figure()
    ax = fig.add_subplot()
    ax.set_xticks([0, 1], ["plain", "x \U000F0000"])
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1e6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        png = layout.png_bytes(fig)
    assert png.startswith(b"\x89PNG")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["plain", f"x {layout.MISSING_GLYPH}"]
    fresh = Figure()
    log_ax = fresh.add_subplot()
    log_ax.set_yscale("log")
    log_ax.set_ylim(1e-3, 1e6)
    texts = layout._texts(fresh)
    assert 0 < len(texts) < 10  # titles, axis labels, offset texts: no tick label among them
