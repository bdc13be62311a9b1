"""What a user sees in a terminal: `rtshield demo --study danicki` in a real
pseudo-terminal 100 columns wide, rendered by a terminal emulator (pyte).

The side-by-side table of eight runs is wider than 100 columns: it must come
as several tables that each fit (no line wraps, no number broken across two
lines), and its first line must start a line of its own, not continue the
progress bar's (the bar is still live while the study's table is printed).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import struct
import subprocess
import termios

import pytest

pyte = pytest.importorskip("pyte", reason="pyte (a terminal emulator) is a test dependency")

COLS = 100
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run_in_terminal(args: list[str], cwd, cols: int = COLS) -> bytes:
    """Run `args` with stdin, stdout and stderr on a pseudo-terminal `cols` wide;
    return everything it wrote."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 200, cols, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", RTSHIELD_PROGRESS="1")
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
                            start_new_session=True)
    os.close(slave)
    out = b""
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed: the program ended
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=600)
    assert proc.returncode == 0, out.decode(errors="replace")[-2000:]
    return out


def _physical_lines(raw: bytes) -> list[str]:
    """What each written line leaves on the screen: terminal codes removed, and of a
    line redrawn with carriage returns (the bar) its last state."""
    text = ANSI.sub("", raw.decode("utf-8", errors="replace"))
    return [ln.rstrip("\r").split("\r")[-1] for ln in text.split("\n")]


@pytest.mark.skipif(shutil.which("rtshield") is None, reason="rtshield is not on the PATH")
def test_demo_table_fits_a_100_column_terminal(tmp_path):
    raw = _run_in_terminal(
        ["rtshield", "demo", "--study", "danicki", "--set", "scenario.duration=1s",
         "--out", str(tmp_path / "out")],
        cwd=tmp_path,
    )
    from rich.cells import cell_len

    lines = _physical_lines(raw)
    assert max(cell_len(ln.rstrip()) for ln in lines) <= COLS

    screen = pyte.Screen(COLS, 400)
    pyte.ByteStream(screen).feed(raw)
    rows = [r.rstrip() for r in screen.display]
    table = [r for r in rows if "│" in r]
    assert table, "\n".join(rows)
    # the table's lines are its own: none carries the progress bar's text
    assert not any("━" in r or "demo:" in r for r in table), "\n".join(table[:3])

    # every run's numbers, whole, on the rows of their label (the runs' columns are
    # spread over several tables, each repeating the labels)
    comp = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert len(comp) == 8
    sent = [r for r in table if r.lstrip().startswith("packets sent ")]
    assert len(sent) >= 2  # more than one table
    cells = [c.strip() for r in sent for c in r.split("│")[1:]]
    assert sorted(cells) == sorted(f"{s['totals']['offered']:,}".replace(",", " ")
                                   for s in comp.values())
    heads = [c.strip() for r in table if r.startswith(" " * 10) and "│" in r
             for c in r.split("│")[1:]]
    assert set(comp) <= set(heads)
