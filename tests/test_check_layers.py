"""tools/check_layers.py: libshield and the simulator's rooms are layered, and
the check fails on each kind of breach (a copy of the sources with one
injected), naming the files."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHECK = REPO / "tools" / "check_layers.py"
_spec = importlib.util.spec_from_file_location("check_layers", CHECK)
assert _spec is not None and _spec.loader is not None
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def run(root: Path) -> Outcome:
    """The check on `root`, in this process (the command itself: test below)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = check_layers.main(["--root", str(root)])
    return Outcome(rc, out.getvalue(), err.getvalue())


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of what the check reads: sim/ and libshield/'s code."""
    for sub in ("sim/src", "sim/include", "libshield/include", "libshield/src", "libshield/port"):
        shutil.copytree(REPO / sub, tmp_path / sub)
    (tmp_path / "python").mkdir()
    return tmp_path


def inject(path: Path, text: str, after: str | None = None) -> None:
    """Append `text` to `path`, or insert it after the first line holding `after`."""
    src = path.read_text()
    if after is None:
        path.write_text(src + text)
        return
    i = src.index(after)
    j = src.index("\n", i) + 1
    path.write_text(src[:j] + text + src[j:])


def test_the_repository_is_layered():
    """The command tools/test.sh runs."""
    r = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert "layered" in r.stdout


def test_the_copy_is_layered(tree: Path):
    """The fixture itself passes: each failure below is the injection's."""
    r = run(tree)
    assert r.returncode == 0, r.stderr


def test_a_back_call_between_two_rooms_fails(tree: Path):
    # nic.c (below rx.c, which calls nic.c's dma_write) calls back into rx.c.
    inject(tree / "sim/src/nic.c", '#include "rx.h"\n', after='#include "measure.h"')
    inject(
        tree / "sim/src/nic.c",
        "\nvoid nic_poke(rtsim *s) { (void)rx_poll_harvest(s, 0); }\n",
    )
    r = run(tree)
    assert r.returncode == 1
    assert "sim/src/nic.c and sim/src/rx.c call each other" in r.stderr
    assert "nic.c uses nic_poke" not in r.stderr  # names what each uses of the other
    assert "rx.c uses dma_write" in r.stderr and "nic.c uses rx_poll_harvest" in r.stderr
    assert "nic.c (NICs) includes rx.h of a room above it" in r.stderr


def test_two_files_of_one_room_calling_each_other_fail(tree: Path):
    # The traffic room's two files: a cycle the room order alone cannot see.
    inject(tree / "sim/src/traffic.c", '#include "trace_source.h"\n', after='#include "traffic.h"')
    inject(
        tree / "sim/src/traffic.c",
        "\nuint64_t poke_a(const sim_trace *t) { return trace_due(t); }\n",
    )
    inject(
        tree / "sim/src/trace_source.c", '#include "traffic.h"\n', after='#include "trace_source.h"'
    )
    inject(tree / "sim/src/trace_source.c", "\ndouble poke_b(void) { return det_log(2.0); }\n")
    r = run(tree)
    assert r.returncode == 1
    assert "sim/src/trace_source.c and sim/src/traffic.c call each other" in r.stderr
    assert "room above" not in r.stderr


def test_a_call_up_the_rooms_fails_without_an_include(tree: Path):
    # A prototype written locally instead of including the header.
    inject(
        tree / "sim/src/measure.c",
        "\nvoid kick(rtsim *s, sim_core *c, uint64_t now);\n"
        "void measure_poke(rtsim *s) { kick(s, &s->core[0], 0); }\n",
    )
    r = run(tree)
    assert r.returncode == 1
    assert "sim/src/measure.c (measurements) uses kick of sim/src/sched.c" in r.stderr


def test_the_hooks_reaching_into_the_engine_fail(tree: Path):
    inject(tree / "sim/src/hooks.c", '#include "sim.h"\n', after='#include "hooks.h"')
    r = run(tree)
    assert r.returncode == 1
    assert "sim/src/hooks.c (hooks into libshield) includes sim.h of a room above it" in r.stderr


@pytest.mark.parametrize(
    ("include", "says"),
    [
        ('"rtsim/rtsim.h"', "a header of the simulator"),
        ('"sim.h"', "a header of the simulator"),
        ('"rts_port_posix.h"', "a port header"),
        ("<FreeRTOS.h>", "C standard headers only"),
    ],
)
def test_libshield_core_including_the_simulator_or_a_platform_fails(
    tree: Path, include: str, says: str
):
    inject(tree / "libshield/src/strict.c", f"#include {include}\n", after='#include "rts_time.h"')
    r = run(tree)
    assert r.returncode == 1
    assert f"libshield/src/strict.c: includes {include}" in r.stderr
    assert says in r.stderr


def test_a_port_including_the_simulator_fails(tree: Path):
    inject(
        tree / "libshield/port/posix/rts_port_posix.c",
        '#include "rtsim/rtsim.h"\n',
        after='#include "rts_port_posix.h"',
    )
    r = run(tree)
    assert r.returncode == 1
    assert 'libshield/port/posix/rts_port_posix.c: includes "rtsim/rtsim.h"' in r.stderr


def test_a_file_in_no_room_fails(tree: Path):
    (tree / "sim/src/extra.c").write_text('#include "sim.h"\n')
    r = run(tree)
    assert r.returncode == 1
    assert "sim/src/extra.c: in no room" in r.stderr


def test_a_tree_without_the_sources_is_refused(tmp_path: Path):
    r = run(tmp_path)
    assert r.returncode == 2
    assert "holds no sim/src and libshield/" in r.stderr


def test_the_architecture_doc_names_every_file_of_every_room():
    """docs/architecture.md's table of rooms and ROOMS name the same files of sim/src."""
    doc = (REPO / "docs" / "architecture.md").read_text()
    table = doc.split("### Its rooms", 1)[1].split("\n### ", 1)[0]
    in_doc = {
        Path(name).stem
        for row in table.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`([\w.]+\.[ch])`", row.split("|")[1])
    }
    in_rooms = {stem for _, stems in check_layers.ROOMS for stem in stems}
    assert in_doc == in_rooms
    on_disk = {p.stem for p in (REPO / "sim" / "src").iterdir() if p.suffix in (".c", ".h")}
    assert in_rooms == on_disk
