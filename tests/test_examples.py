"""The C examples in the docs are files ctest compiles and runs.

Every ```c block in docs/ (the FreeRTOS-Plus-TCP guide excepted: its code
is the FreeRTOS port's self-test, compiled and run by ctest) must follow a
marker ``<!-- example: FILE.c [REGION] -->`` and equal the part of that
file between ``/* [REGION] */`` and ``/* [REGION end] */``. FILE is under
examples/, which ctest (``examples.check``, CMakeLists.txt) compiles with
warnings as errors, links against libshield and runs (this test also
compiles them when a C compiler is at hand), or a source of another ctest
entry: named in CMakeLists.txt, or in a tools/ script CMakeLists.txt runs
(the lwIP guide quotes the adapter and its tests, libshield/port/lwip/).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
#: Documents whose C code is compiled elsewhere (said in the document itself).
COMPILED_ELSEWHERE = {DOCS / "porting" / "freertos-plus-tcp.md"}
BLOCK = re.compile(r"(?:<!-- example: (\S+) \[([^\]]+)\] -->\n)?```c\n(.*?)```", re.S)


def region(path: Path, name: str) -> str:
    text = path.read_text()
    m = re.search(rf"/\* \[{re.escape(name)}\] \*/\n(.*?)/\* \[{re.escape(name)} end\] \*/\n",
                  text, re.S)
    assert m, f"{path}: no region [{name}]"
    return m.group(1)


def doc_blocks():
    for doc in sorted(DOCS.rglob("*.md")):
        if doc in COMPILED_ELSEWHERE:
            continue
        for m in BLOCK.finditer(doc.read_text()):
            yield doc.relative_to(REPO), m.group(1), m.group(2), m.group(3)


BLOCKS = list(doc_blocks())


def test_the_docs_have_c_examples():
    assert len(BLOCKS) >= 6
    assert {f for _, f, _, _ in BLOCKS} >= {
        "examples/strict_limiter.c", "examples/danicki_hooks.c", "examples/rx_path.c",
        "examples/shield_driver.c", "libshield/port/lwip/rts_lwip.c",
        "libshield/port/lwip/test/test_lwip_nosys.c",
        "libshield/port/lwip/test/test_lwip_freertos.c",
    }


@pytest.mark.parametrize("doc,file,name,code", BLOCKS,
                         ids=[f"{d}:{n}" for d, _, n, _ in BLOCKS])
def test_every_c_block_quotes_a_compiled_example(doc, file, name, code):
    assert file is not None, f"{doc}: a C block without an <!-- example: --> marker"
    assert code == region(REPO / file, name), f"{doc} differs from {file} [{name}]"


def test_every_quoted_file_outside_examples_is_built_by_ctest():
    """A quoted file outside examples/ is a source of a ctest entry: its path
    is in CMakeLists.txt or in a tools/ script that CMakeLists.txt runs."""
    cmake = (REPO / "CMakeLists.txt").read_text()
    scripts = [p.read_text() for p in sorted((REPO / "tools").glob("*.sh"))
               if f"tools/{p.name}" in cmake]
    outside = {f for _, f, _, _ in BLOCKS if f is not None and not f.startswith("examples/")}
    assert outside, "the lwIP guide quotes its compiled sources"
    for f in sorted(outside):
        rel = f.removeprefix("libshield/port/lwip/")
        assert f in cmake or any(rel in text or f in text for text in scripts), (
            f"{f} is quoted in docs/ but no ctest entry builds it")


def test_every_example_is_built_and_run_by_ctest():
    cmake = (REPO / "CMakeLists.txt").read_text()
    assert "examples/*.c" in cmake and "add_test(NAME examples.check" in cmake
    calls = (REPO / "examples" / "check_examples.c").read_text()
    for f in (REPO / "examples").glob("*.c"):
        if f.name in ("check_examples.c", "platform_host.c"):
            continue
        entry = f"example_{f.stem}"
        assert entry in calls, f"{f.name}: {entry}() is not run by check_examples.c"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on PATH")
def test_examples_compile_link_and_run(tmp_path):
    src = sorted((REPO / "libshield" / "src").glob("*.c"))
    exe = tmp_path / "examples"
    res = subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes",
         "-DRTS_CONFIG_ASSERT=1",
         "-I", str(REPO / "libshield" / "include"), "-I", str(REPO / "libshield" / "src"),
         *map(str, sorted((REPO / "examples").glob("*.c"))), *map(str, src), "-o", str(exe)],
        capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(" ok") == 4, run.stdout


BROKEN_INVARIANT = r"""
#include <stdio.h>
#include <stdlib.h>
#include "rtshield/rts_flow_queue.h"
void rts_port_assert_failed(const char *msg, const char *file, int line)
{
    fprintf(stderr, "libshield assert: %s (%s:%d)\n", msg, file, line);
    exit(3);
}
int main(void)
{
    static rts_flow_queue fq;
    uint16_t buf;
    if (rts_flow_queue_init(&fq, 8, 4, 2) != RTS_OK) return 1;
    fq.level_mask = 1u;          /* says level 0 has a flow waiting: it has none */
    fq.level_flows[0] = 1u;
    rts_flow_queue_pop_highest(&fq, &buf, NULL, NULL);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on PATH")
@pytest.mark.parametrize("asserts", [1, 0])
def test_rts_assert_guards_the_flow_queue_invariant(tmp_path, asserts):
    """With RTS_CONFIG_ASSERT=1 a broken flow-queue invariant stops at the assert
    (the port's rts_port_assert_failed()); by default the check compiles to nothing."""
    src = tmp_path / "broken.c"
    src.write_text(BROKEN_INVARIANT)
    exe = tmp_path / "broken"
    res = subprocess.run(
        ["cc", "-std=c11", f"-DRTS_CONFIG_ASSERT={asserts}", "-I",
         str(REPO / "libshield" / "include"), "-I", str(REPO / "libshield" / "src"), str(src),
         str(REPO / "libshield" / "src" / "flow_queue.c"), "-o", str(exe)],
        capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    message = "the level masks name a flow whose queue is empty"
    if asserts:
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
        assert run.returncode == 3 and message in run.stderr
    else:  # not run: without the assert the broken structure is read out of bounds
        assert message.encode() not in exe.read_bytes()
