"""third_party/: the pinned upstream trees are in the repository, unmodified, and nothing
in the repository reaches outside it for them."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TP = ROOT / "third_party"


def _manifest() -> dict[str, str]:
    rows = {}
    for line in (TP / "MANIFEST.sha256").read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        rows[path] = digest
    return rows


def _trees() -> list[str]:
    return [
        ln.split()[0]
        for ln in (TP / "VERSIONS").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]


def test_every_pinned_tree_has_a_commit_and_its_licence():
    rows = [
        ln.split()
        for ln in (TP / "VERSIONS").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert {r[0] for r in rows} == {"FreeRTOS-Kernel", "FreeRTOS-Plus-TCP", "lwip"}
    for tree, repo, commit in rows:
        assert repo.startswith("https://"), tree
        assert len(commit) == 40 and int(commit, 16) >= 0, tree
    for licence in ("FreeRTOS-Kernel/LICENSE.md", "FreeRTOS-Plus-TCP/LICENSE.md", "lwip/COPYING"):
        assert (TP / licence).is_file(), licence


def test_the_trees_are_exactly_the_manifest_unmodified():
    manifest = _manifest()
    on_disk = {
        str(p.relative_to(TP)) for tree in _trees() for p in (TP / tree).rglob("*") if p.is_file()
    }
    unlisted = sorted(on_disk - manifest.keys())
    assert unlisted == [], "files in third_party/ the manifest does not list"
    assert sorted(manifest.keys() - on_disk) == [], "files the manifest lists that are missing"
    changed = [
        path
        for path, digest in manifest.items()
        if hashlib.sha256((TP / path).read_bytes()).hexdigest() != digest
    ]
    assert changed == [], "upstream files edited inside third_party/ (use a patch file)"


def test_nothing_in_the_repository_refers_to_a_tree_outside_it():
    try:
        files = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an installed copy): the file list comes from git")
    needle = "../" + "shared"
    hits = [
        f
        for f in files
        if not f.startswith("third_party/")
        and (ROOT / f).is_file()
        and needle in (ROOT / f).read_text(errors="replace")
    ]
    assert hits == []
