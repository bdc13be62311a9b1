#!/usr/bin/env python3
"""Regenerate the key references of docs/scenarios.md, docs/analysis.md and
docs/rig.md from the schemas of scenario, system and storm-profile files.

Every ``<!-- schema: NAME -->`` … ``<!-- /schema -->`` block of the pages is
replaced by the table the pydantic models make (:func:`rtshield.schema.docs.markdown_blocks`,
:func:`rtshield.schema.system.markdown_blocks`,
:func:`rtshield.schema.profile.markdown_blocks`); the prose around the blocks
is left as written. ``--check`` changes nothing and exits 1 when a page is
out of date (tests/test_schema.py checks the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The checkout's package when its native library is built (tools/dev.sh);
# otherwise the installed one (tools/install.sh), which carries its own.
if (REPO / "python" / "rtshield" / "librtshield_native.so").exists():
    sys.path.insert(0, str(REPO / "python"))

from rtshield.schema import docs, profile, system  # noqa: E402

#: Each generated page and the blocks it holds.
PAGES = {
    "docs/scenarios.md": docs.markdown_blocks,
    "docs/analysis.md": system.markdown_blocks,
    "docs/rig.md": profile.markdown_blocks,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether the pages are current")
    args = ap.parse_args()
    stale = 0
    for rel, blocks in PAGES.items():
        doc = REPO / rel
        text = doc.read_text(encoding="utf-8")
        new = docs.render_docs(text, blocks())
        if new == text:
            continue
        if args.check:
            print(f"{doc}: out of date; run tools/gen_schema_docs.py", file=sys.stderr)
            stale += 1
        else:
            doc.write_text(new, encoding="utf-8")
            print(f"{doc}: updated")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
