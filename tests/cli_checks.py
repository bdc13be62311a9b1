"""How the tests check a refusal of the command line (``rtshield: error: ...``) and
the output folder a failed command must leave exactly as it was."""

from __future__ import annotations

from pathlib import Path

from rtshield import cli


def error_line(rc: int, err: str, *needles: str) -> str:
    """The command exited with 2 and printed one line ``rtshield: error: ...`` that names
    each of ``needles``; returns that line."""
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def one_line(capsys, argv, *needles: str) -> str:
    """``rtshield ARGV`` in this process is refused with one line naming ``needles``."""
    rc = cli.main([str(a) for a in argv])
    return error_line(rc, capsys.readouterr().err, *needles)


def tree(d: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every entry under ``d``: its bytes (folders: none), inode and mtime."""
    if not d.exists():
        return {}
    return {
        str(p.relative_to(d)): (
            p.read_bytes() if p.is_file() else b"", p.lstat().st_ino, p.lstat().st_mtime_ns
        )
        for p in sorted(d.rglob("*"))
    }
