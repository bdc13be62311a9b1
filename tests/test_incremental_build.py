"""Compiles that skip what is up to date (``tools/cc.sh``): the scripts that call the
compiler directly (``tools/freertos_build.sh``, ``tools/lwip_build.sh``,
``tools/cortex_m3_build.sh``) compile an object again only when its source, a header
it read or its command changed, so a repeated ``tools/test.sh`` rebuilds nothing that
did not change. An object's age is its file time: these tests compare the times of
every object before and after a build."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CC_SH = ROOT / "tools" / "cc.sh"
KERNEL = ROOT / "third_party" / "FreeRTOS-Kernel"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH")


def cc_all(prefix: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``cc_all PREFIX ARGS...`` of tools/cc.sh (sourced), in ``cwd``."""
    return subprocess.run(
        ["bash", "-c", '. "$0" && cc_all "$@"', str(CC_SH), str(prefix), *args],
        cwd=cwd, capture_output=True, text=True, check=False,
    )


def times(d: Path) -> dict[str, int]:
    """Each object's file time in ``d``."""
    return {p.name: p.stat().st_mtime_ns for p in sorted(d.glob("*.o"))}


def compiled(before: dict[str, int], d: Path) -> set[str]:
    """The objects of ``d`` written since ``before`` (new ones too)."""
    return {n for n, t in times(d).items() if before.get(n) != t}


def later(path: Path, out: Path) -> None:
    """An edit of ``path``: its time 1 ms after the newest object's in ``out`` (not in the
    future: the objects compiled next start later than that)."""
    t = max(times(out).values()) + 1_000_000
    os.utime(path, ns=(t, t))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """a.c reads a.h and the system header sys/c.h, b.c reads sys/c.h, d.c reads none."""
    (tmp_path / "inc").mkdir()
    (tmp_path / "sys").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "inc" / "a.h").write_text("#define A 1\n")
    (tmp_path / "sys" / "c.h").write_text("#define C 2\n")
    (tmp_path / "a.c").write_text('#include "a.h"\n#include <c.h>\nint a(void) { return A + C; }\n')
    (tmp_path / "b.c").write_text("#include <c.h>\nint b(void) { return C; }\n")
    (tmp_path / "d.c").write_text("int d(void) { return 4; }\n")
    return tmp_path


def build(tree: Path, *flags: str) -> subprocess.CompletedProcess:
    return cc_all(tree / "out" / "o_", "gcc", "-O1", "-Iinc", "-isystem", "sys", *flags, "--",
                  "a.c", "b.c", "d.c", cwd=tree)


def test_second_build_compiles_nothing_and_a_header_recompiles_exactly_its_dependents(tree):
    out = tree / "out"
    assert build(tree).returncode == 0
    assert set(times(out)) == {"o_a.o", "o_b.o", "o_d.o"}
    first = times(out)
    assert build(tree).returncode == 0
    assert compiled(first, out) == set()
    later(tree / "inc" / "a.h", out)
    before = times(out)
    assert build(tree).returncode == 0
    assert compiled(before, out) == {"o_a.o"}
    later(tree / "sys" / "c.h", out)  # a system header (-isystem) counts too
    before = times(out)
    assert build(tree).returncode == 0
    assert compiled(before, out) == {"o_a.o", "o_b.o"}
    later(tree / "d.c", out)
    before = times(out)
    assert build(tree).returncode == 0
    assert compiled(before, out) == {"o_d.o"}
    before = times(out)
    assert build(tree).returncode == 0
    assert compiled(before, out) == set()


def test_a_changed_flag_recompiles_and_the_command_is_kept_beside_the_object(tree):
    out = tree / "out"
    assert build(tree, "-DX=1").returncode == 0
    assert "-DX=1" in (out / "o_a.o.cmd").read_text().splitlines()
    before = times(out)
    assert build(tree, "-DX=2").returncode == 0
    assert compiled(before, out) == {"o_a.o", "o_b.o", "o_d.o"}
    before = times(out)
    assert build(tree, "-DX=2").returncode == 0
    assert compiled(before, out) == set()


@pytest.mark.parametrize(
    "damage",
    ["no .d", "empty .d", ".d cut short", ".d of another object", "a header gone", "no .cmd"],
)
def test_missing_or_damaged_bookkeeping_means_a_rebuild(tree, damage):
    out = tree / "out"
    assert build(tree).returncode == 0
    dep = out / "o_a.o.d"
    text = dep.read_text()
    assert text.startswith(f"{out / 'o_a.o'}:") and "inc/a.h" in text and text.endswith("\n")
    if damage == "no .d":
        dep.unlink()
    elif damage == "empty .d":
        dep.write_text("")
    elif damage == ".d cut short":
        dep.write_text(text[: text.index("inc/a.h") + 3])
    elif damage == ".d of another object":
        dep.write_text((out / "o_b.o.d").read_text())
    elif damage == "a header gone":
        dep.write_text(text.rstrip("\n") + " inc/gone.h\n")
    else:
        (out / "o_a.o.cmd").unlink()
    before = times(out)
    assert build(tree).returncode == 0
    assert compiled(before, out) == {"o_a.o"}


def test_a_failed_compile_is_never_taken_for_up_to_date(tree):
    out = tree / "out"
    assert build(tree).returncode == 0
    good = (tree / "a.c").read_text()
    st = (tree / "a.c").stat()
    (tree / "a.c").write_text(good + "this is not C\n")
    r = build(tree)
    assert r.returncode != 0 and "a.c" in r.stderr
    assert not (out / "o_a.o.cmd").exists()
    # the source back as it was, with its old time: compiled again all the same
    (tree / "a.c").write_text(good)
    os.utime(tree / "a.c", ns=(st.st_atime_ns, st.st_mtime_ns))
    before = times(out)
    assert build(tree).returncode == 0
    assert "o_a.o" in compiled(before, out)
    assert (out / "o_a.o.cmd").exists()


def test_sync_tree_writes_only_what_differs(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    (src / "same.c").write_text("same\n")
    (src / "sub" / "changed.h").write_text("old\n")
    (src / "gone.c").write_text("gone\n")
    sync = ["bash", "-c", '. "$0" && sync_tree "$1" "$2"', str(CC_SH), str(src), str(dst)]
    subprocess.run(sync, check=True)
    t_same = (dst / "same.c").stat().st_mtime_ns
    (src / "sub" / "changed.h").write_text("new\n")
    (src / "gone.c").unlink()
    (src / "new.c").write_text("new\n")
    subprocess.run(sync, check=True)
    assert (dst / "same.c").stat().st_mtime_ns == t_same
    assert (dst / "sub" / "changed.h").read_text() == "new\n"
    assert (dst / "new.c").read_text() == "new\n"
    assert not (dst / "gone.c").exists()
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*")) == [
        "new.c", "same.c", "sub", "sub/changed.h"]


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not found (tools/install.sh --test installs it)")
@pytest.mark.skipif(not (KERNEL / "tasks.c").is_file(), reason=f"no FreeRTOS kernel at {KERNEL}")
def test_freertos_build_twice_then_a_posix_port_header(tmp_path):
    """``freertos_build.sh build``: the second run compiles nothing; a header of the POSIX
    port (read by the POSIX objects only) recompiles the POSIX objects, not the Cortex-M3
    ones."""
    kernel = tmp_path / "FreeRTOS-Kernel"
    shutil.copytree(KERNEL, kernel)
    out = tmp_path / "out"
    env = {**os.environ, "RTS_FREERTOS_KERNEL": str(kernel)}
    script = [str(ROOT / "tools" / "freertos_build.sh"), "build", str(out)]
    r = subprocess.run(script, env=env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    objects = set(times(out))
    assert objects == {"posix_rts_port_freertos.o", "posix_rts_shield_freertos.o",
                       "cm3_rts_port_freertos.o", "cm3_rts_shield_freertos.o"}
    before = times(out)
    r = subprocess.run(script, env=env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert compiled(before, out) == set()
    later(kernel / "portable" / "ThirdParty" / "GCC" / "Posix" / "portmacro.h", out)
    before = times(out)
    r = subprocess.run(script, env=env, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert compiled(before, out) == {"posix_rts_port_freertos.o", "posix_rts_shield_freertos.o"}
