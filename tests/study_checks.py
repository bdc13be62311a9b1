"""Checks the study tests share (``tests/test_study_*.py``): a claim against a run, every
claim checked and explained, and ``rtshield demo --study NAME`` writing its files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from rtshield.studies.common import run_study


def check_claim(claim: Any, results: Any, does_not_hold: Mapping[str, str]) -> None:
    """The claim holds on ``results``; one of ``does_not_hold`` must not hold (when it
    starts to, docs/validation.md and the study's reason need updating)."""
    ok, value = claim.check(results)
    if claim.key in does_not_hold:
        assert not ok, (f"{claim.text} now holds (simulated {value}), but is recorded as not "
                        f"holding ({does_not_hold[claim.key]}): update docs/validation.md")
    else:
        assert ok, f"{claim.text}: simulated {value}"


def check_every_claim_explained(study: ModuleType, results: Any,
                                does_not_hold: Mapping[str, str]) -> None:
    """Every claim of ``study`` is checked on ``results``; exactly ``does_not_hold`` fail,
    each with the report's reason, and the claims table has a row per claim."""
    verdicts = study.evaluate(results)
    assert all(v.holds is not None for v in verdicts), [v.value for v in verdicts]
    failing = {v.claim.key for v in verdicts if v.holds is False}
    assert failing == set(does_not_hold)
    # the report says why for each
    assert all(v.claim.why_not for v in verdicts if v.holds is False)
    table = study.verdicts_html(verdicts)
    assert table.count("<tr>") == len(study.CLAIMS) + 1 and "does not hold" in table


def results_fixture(study: ModuleType, plan: Any, folder: Path | None = None, jobs: int = 2):
    """The module-scoped ``results`` fixture of a study's test module: ``study``'s points
    of ``plan`` (scenarios from ``folder``, default the shipped ones) run on ``jobs``
    processes, as ``study.Results``. Assign it to ``results`` in the module."""

    @pytest.fixture(scope="module")
    def results():
        return run_study(study, plan, jobs=jobs, folder=folder)

    return results


def claim_tests(study: ModuleType, does_not_hold: Mapping[str, str]):
    """The two claim tests of a study's test module, on its ``results`` fixture:
    ``test_claim`` (one per claim of ``study.CLAIMS``) and
    ``test_every_claim_is_checked_and_explained``. Assign them to those names in the
    module for pytest to collect them."""

    @pytest.mark.parametrize("claim", study.CLAIMS, ids=[c.key for c in study.CLAIMS])
    def test_claim(claim, results):
        check_claim(claim, results, does_not_hold)

    def test_every_claim_is_checked_and_explained(results):
        check_every_claim_explained(study, results, does_not_hold)

    return test_claim, test_every_claim_is_checked_and_explained


def run_demo_study(tmp_path: Path, name: str, study: ModuleType, files: Sequence[str],
                   claims_of: str) -> tuple[Path, list[dict[str, Any]], str]:
    """``rtshield demo --study NAME`` on 300 ms runs: it succeeds, says how many claims of
    ``claims_of`` hold, writes ``files`` and a claims.json with every claim of ``study`` in
    order. Returns (output folder, claims.json, report.html)."""
    out = tmp_path / name
    res = subprocess.run(
        [sys.executable, "-m", "rtshield", "demo", "--study", name, "--out", str(out),
         "--set", "scenario.duration=300ms"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert f"claims of {claims_of} hold" in res.stdout
    for f in files:
        assert (out / f).is_file(), f
    claims = json.loads((out / "claims.json").read_text())
    assert [c["key"] for c in claims] == [c.key for c in study.CLAIMS]
    return out, claims, (out / "report.html").read_text()
