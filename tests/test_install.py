"""tools/install.sh installs what each use needs, and a repeated run rebuilds nothing unchanged.

The package lists come from the script itself (``--packages``); the stamp logic runs the real
script in a scratch checkout whose ``.venv/bin/python`` only records how it was called and
whose ``dpkg-query`` reports every package installed, so nothing is installed here.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from rtshield.rig import harness

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "install.sh"


def packages(*flags: str) -> list[str]:
    res = subprocess.run([SCRIPT, *flags, "--packages"], capture_output=True, text=True,
                         check=True)
    return res.stdout.split()


def test_the_demo_gets_only_build_tools_and_venv():
    assert sorted(packages()) == ["build-essential", "cmake", "ninja-build", "python3-venv"]


def test_the_rig_gets_every_tool_it_checks_for():
    demo, rig = set(packages()), set(packages("--rig"))
    assert demo < rig
    # coreutils and util-linux (timeout, taskset) are Essential on Debian: always there.
    needed = set(harness.TOOLS.values()) - {"coreutils", "util-linux"} | {"ethtool"}
    assert needed <= rig, needed - rig
    # the MPS2 board of rig freertos-tcp/lwip runs in QEMU: the rig needs it; the
    # headless browser and clang are the tests' own
    assert "qemu-system-arm" in rig
    assert not {"chromium", "clang"} & rig


def test_the_tests_get_the_rig_the_cross_compiler_qemu_clang_and_chromium():
    rig, test = set(packages("--rig")), set(packages("--test"))
    assert rig < test
    # the packages the skipped-test messages name (freertos_build.sh, fuzz_smoke.sh,
    # test_browser_report.py)
    assert {"gcc-arm-none-eabi", "libnewlib-arm-none-eabi", "qemu-system-arm", "clang",
            "libclang-rt-14-dev", "chromium"} <= test


def test_an_unknown_option_is_one_line_and_exit_2():
    res = subprocess.run([SCRIPT, "--tset"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "--tset" in res.stderr


def _fake_checkout(tmp: Path, git: bool) -> tuple[Path, Path]:
    root = tmp / "checkout"
    (root / "tools").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "tools" / "install.sh")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "python").mkdir()
    (root / "python" / "m.py").write_text("x = 1\n")
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("# a\n")
    log = tmp / "pip.log"
    bins = tmp / "bin"
    bins.mkdir()
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    for path, text in (
        (venv_bin / "python",
         f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "Python 3.x"; exit 0; }}\n'
         f'echo "$*" >> {log}\n'),
        (venv_bin / "rtshield", "#!/bin/sh\n"),
        (bins / "dpkg-query", "#!/bin/sh\nprintf 'install ok installed'\n"),
    ):
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    if git:
        (root / ".gitignore").write_text(".venv/\n")
        for cmd in (["init", "-q"], ["add", "-A"]):
            subprocess.run(["git", *cmd], cwd=root, check=True, capture_output=True)
    return root, log


@pytest.mark.parametrize("git", [True, False], ids=["git checkout", "plain folder"])
def test_a_repeated_run_reinstalls_only_after_a_source_changed(tmp_path, git):
    if git and shutil.which("git") is None:
        pytest.skip("git not on PATH")
    root, log = _fake_checkout(tmp_path, git)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}

    def run(*flags: str) -> tuple[str, list[str]]:
        res = subprocess.run([root / "tools" / "install.sh", *flags], capture_output=True,
                             text=True, env=env, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        calls = log.read_text().splitlines() if log.exists() else []
        return res.stdout, calls

    out, calls = run()
    assert len(calls) == 1 and calls[0].startswith("-m pip install") and calls[0].endswith(
        str(root)), calls
    out, calls = run()
    assert len(calls) == 1 and "up to date" in out
    (root / "docs" / "a.md").write_text("# b\n")  # not something the package is built from
    assert len(run()[1]) == 1
    (root / "python" / "m.py").write_text("x = 2\n")
    out, calls = run()
    assert len(calls) == 2 and "into" in out
    out, calls = run("--test")  # the test extras need a pip run of their own ...
    assert len(calls) == 3 and calls[2].endswith(f"{root}[test]")
    assert len(run()[1]) == 3  # ... and cover the plain install
    assert len(run("--test")[1]) == 3
    check = subprocess.run([root / "tools" / "install.sh", "--check"], capture_output=True,
                           text=True, env=env)
    assert check.returncode == 0, check.stdout
    (root / "python" / "m.py").write_text("x = 3\n")
    check = subprocess.run([root / "tools" / "install.sh", "--check"], capture_output=True,
                           text=True, env=env)
    assert check.returncode == 1 and "sources changed" in check.stdout
    assert len(log.read_text().splitlines()) == 3  # --check installs nothing


def test_debian_installs_only_the_debian_packages(tmp_path):
    """``--debian`` (tools/test.sh's first step, before the C tests): no pip run, no
    virtual environment touched."""
    root, log = _fake_checkout(tmp_path, git=False)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    res = subprocess.run([root / "tools" / "install.sh", "--test", "--debian"],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Debian packages done" in res.stdout and "Python package" not in res.stdout
    assert not log.exists() and not (root / ".venv" / ".rtshield-installed").exists()


def test_the_package_under_test_is_the_checkouts_sources():
    """Under tools/test.sh the tests import rtshield from the checkout's .venv: install.sh
    must then find it up to date, or the tests ran an older build than the sources."""
    import rtshield

    venv = REPO / ".venv"
    if not Path(rtshield.__file__).resolve().is_relative_to(venv.resolve()):
        pytest.skip("rtshield is not imported from this checkout's .venv (a dev loop run)")
    res = subprocess.run([SCRIPT, "--test", "--check"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
