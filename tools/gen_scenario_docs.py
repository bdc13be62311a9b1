#!/usr/bin/env python3
"""Regenerate the key reference of docs/scenarios.md from the scenario schema.

Every ``<!-- schema: NAME -->`` … ``<!-- /schema -->`` block of the page is
replaced by the table :func:`rtshield.schema.markdown_blocks` makes from the
pydantic models; the prose around the blocks is left as written.
``--check`` changes nothing and exits 1 when the page is out of date
(tests/test_schema.py checks the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from rtshield.schema import render_docs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether the page is current")
    args = ap.parse_args()
    doc = REPO / "docs" / "scenarios.md"
    text = doc.read_text(encoding="utf-8")
    new = render_docs(text)
    if args.check:
        if new != text:
            print(f"{doc}: out of date; run tools/gen_scenario_docs.py", file=sys.stderr)
            return 1
        return 0
    if new != text:
        doc.write_text(new, encoding="utf-8")
        print(f"{doc}: updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
