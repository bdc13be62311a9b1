"""The analysis examples' results are unchanged by the arrival curves (issue 26):
`rtshield analyze` on every system file of scenarios/analysis/ prints, as text
and as JSON, the same bytes as before them (tests/data/golden/analysis/, made at
commit cce3a41, the analysis before arrival curves and bounded busy windows).
A system file states no traffic, so its sources keep their models (Regehr &
Duongsaa §5.2, pyCPA's periodic-with-jitter streams) and every number stays.
The four bursty examples (regehr_avr_bursty*, ethernut, multisource) were made
again on purpose when the analysis began to charge the bursty limiter's late
clearing (docs/analysis.md §2, "Late clearing"): their timers now stated above
the line, the bursts' jitter grown by the timer's lateness."""

import os
from pathlib import Path

import pytest

from rtshield import cli

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden" / "analysis"
EXAMPLES = sorted((ROOT / "scenarios" / "analysis").glob("*.toml"))


def _analyze(capsys, path: Path, *extra: str) -> str:
    """``rtshield analyze`` run from the repository root (as the goldens were made)."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        cli.main(["analyze", str(path.relative_to(ROOT)), *extra])
    finally:
        os.chdir(here)
    out = capsys.readouterr()
    return out.out + out.err


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_output_is_byte_identical(capsys, path):
    assert {p.stem for p in GOLDEN.glob("*.txt")} == {p.stem for p in EXAMPLES}
    assert _analyze(capsys, path) == (GOLDEN / f"{path.stem}.txt").read_text()
    assert _analyze(capsys, path, "--json") == (GOLDEN / f"{path.stem}.json").read_text()
