"""The runnable code blocks of README.md and docs/ run as written (CONTRIBUTING.md, "Docs
that run").

A block is runnable when its fence says so after the language: ```` ```sh run ```` or
```` ```python run ````. Each runs on its own in a fresh temporary folder holding a copy of
the checkout's ``scenarios/``: a shell block in ``bash -e`` with ``rtshield`` on the PATH (this
interpreter's rtshield), a Python block in a fresh interpreter. It must exit 0, and every
``--out DIR`` it names must then hold results.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```([\w-]+)[ \t]+run[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
RUNNERS = {"sh": "shell", "bash": "shell", "python": "python"}


def runnable_blocks() -> list[tuple[str, int, str, str]]:
    """(document, line, language, code) of every block marked ``run``."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append((str(doc.relative_to(REPO)), line, m.group(1), m.group(2)))
    return found


BLOCKS = runnable_blocks()


def test_the_docs_mark_their_examples_runnable():
    docs = {d for d, _, _, _ in BLOCKS}
    assert {"README.md", "docs/python-api.md", "docs/analysis.md", "docs/cli.md",
            "docs/scenarios.md", "docs/outputs.md"} <= docs
    assert sum(lang == "python" for _, _, lang, _ in BLOCKS) >= 3


@pytest.mark.parametrize("doc,line,lang,code", BLOCKS, ids=[f"{d}:{n}" for d, n, _, _ in BLOCKS])
def test_the_block_runs_as_written(doc, line, lang, code, tmp_path):
    assert lang in RUNNERS, f"{doc}:{line}: a block marked run must be sh or python, not {lang}"
    work = tmp_path / "work"
    shutil.copytree(REPO / "scenarios", work / "scenarios", symlinks=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "rtshield"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m rtshield "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "MPLBACKEND": "Agg"}
    if RUNNERS[lang] == "shell":
        cmd = ["bash", "-e", "-o", "pipefail", "-c", code, f"{doc}:{line}"]
    else:
        script = tmp_path / "block.py"
        script.write_text(code)
        cmd = [sys.executable, str(script)]
    res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, (
        f"{doc}:{line}: exit {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    for out in re.findall(r"--out[ =](\S+)", code):
        d = work / out
        assert d.is_dir() and any(d.iterdir()), f"{doc}:{line}: --out {out} holds nothing"
