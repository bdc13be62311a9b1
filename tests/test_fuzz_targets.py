"""The front door's fuzz targets (tests/fuzz/, atheris) run and hold on their
seeds: a few hundred executions each, from the seeds, as CI's smoke. The long
campaigns are recorded in docs/fuzzing.md ("The front end's front door")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from os_faults import run_guarded

pytest.importorskip("atheris")

FUZZ = Path(__file__).resolve().parent / "fuzz"


@pytest.mark.parametrize("target, seeds", [("fuzz_pcap", "pcap"), ("fuzz_scenario", "scenario")])
def test_target_runs_clean_from_its_seeds(tmp_path, target, seeds):
    r = run_guarded([sys.executable, FUZZ / f"{target}.py", "-runs=300", "-seed=1",
                     tmp_path, FUZZ / "seeds" / seeds], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Done 300 runs" in r.stderr, r.stderr[-2000:]
