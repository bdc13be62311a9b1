"""The rig's FreeRTOS build cache is keyed by what the build reads, by content: the
project's build inputs and the third-party trees' sources (not the tree's path)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rtshield.rig.freertos.build import cache_key
from rtshield.rig.freertos.target import Target

REPO = Path(__file__).resolve().parent.parent
VENDORED = REPO / "third_party"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the kernel and Plus-TCP trees (what the POSIX Plus-TCP target reads)."""
    d = tmp_path_factory.mktemp("tree")
    for top in ("FreeRTOS-Kernel", "FreeRTOS-Plus-TCP"):
        shutil.copytree(VENDORED / top, d / top)
    return d


def test_same_sources_elsewhere_same_key(tree: Path) -> None:
    assert cache_key(Target(), tree) == cache_key(Target(), VENDORED)


def test_a_tree_changed_in_place_is_built_anew(tree: Path) -> None:
    before = cache_key(Target(), tree)
    f = tree / "FreeRTOS-Plus-TCP" / "source" / "FreeRTOS_IP.c"
    text = f.read_text()
    f.write_text(text + "\n/* a local change */\n")
    try:
        assert cache_key(Target(), tree) != before
    finally:
        f.write_text(text)
    assert cache_key(Target(), tree) == before


def test_files_the_build_does_not_read_do_not_change_the_key(tree: Path) -> None:
    before = cache_key(Target(), tree)
    (tree / "FreeRTOS-Kernel" / "NOTES.md").write_text("not a source\n")
    (tree / "FreeRTOS-Kernel" / ".git").mkdir(exist_ok=True)
    (tree / "FreeRTOS-Kernel" / ".git" / "x.c").write_text("int x;\n")
    assert cache_key(Target(), tree) == before


def test_the_stack_and_board_are_part_of_the_key() -> None:
    keys = {
        cache_key(t, VENDORED)
        for t in (
            Target(),
            Target(stack="lwip"),
            Target(board="mps2-an385"),
        )
    }
    assert len(keys) == 3
