"""End-to-end: the Behnke et al. software study (§6, Figures 9–11) on shortened runs.

Runs ``scenarios/behnke_software/`` with a reduced plan (fewer rates, shorter
runs, a smaller HP × LP grid than ``rtshield demo`` uses) and checks every
claim with the functions of ``rtshield.studies.behnke_software`` — the same
checks that fill the claims table of the report and ``docs/validation.md``.
Claims that do not hold in the model are asserted not to hold, each with
its reason: if one starts to hold, the test fails so that
``docs/validation.md`` gets updated.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from study_checks import claim_tests, results_fixture, run_demo_study

from rtshield.studies import behnke_software as bs

REPO = Path(__file__).resolve().parent.parent
STUDY = REPO / "scenarios" / "behnke_software"

#: A shortened plan: the per-packet values and the grid's shape survive it.
PLAN = bs.Plan(
    exp1_rates=(1_000, 10_000, 100_000, 1_000_000),
    exp1_duration="200ms",
    exp3_hp=(0, 500, 1_000, 2_000),
    exp3_lp=(0, 1_000, 1_500, 2_000, 7_000, 10_000),
    exp3_duration="1s",
)

#: Claims that do not hold in the model, and why (docs/validation.md).
DOES_NOT_HOLD = {
    "exp3_sevenfold": "the paper's own limits give 7000 / 1500 = 4.7x for any costs",
}


results = results_fixture(bs, PLAN, STUDY)
test_claim, test_every_claim_is_checked_and_explained = claim_tests(bs, DOES_NOT_HOLD)


def test_passive_measurement_recovers_the_preset_costs(results):
    # Unsaturated points give the decomposition of docs/model.md to 1 %, at every rate.
    expect = {"original": 12.1, "short_circuit": 1.62, "eager": 4.4}
    for key, us in expect.items():
        rows = [r for r in results.exp1[key] if not r["saturated"]]
        assert rows, key
        for r in rows:
            assert r["us_per_packet"] == pytest.approx(us, rel=0.01), (key, r)
    # The core is full at 10^6 pkt/s in every configuration: marked, not used.
    assert all(r["saturated"] for rows in results.exp1.values() for r in rows
               if r["rate_pps"] == 1_000_000)


def test_experiment2_takes_every_path(results):
    counts = {r["path"]: r["count"] for r in results.exp2}
    assert all(counts[p] > 0 for p, _ in bs.PATHS), counts
    assert sum(counts.values()) == 100_000  # 10^5 packets, each through one path


def test_experiment3_liveness_and_limits(results):
    g = {(r["system"], r["hp_pps"], r["lp_pps"]): r for r in results.exp3}
    # Below every limit every HP packet reaches its receiver, in both systems.
    assert g[("original", 500, 0)]["hp_liveness"] > 0.99
    assert g[("modified", 500, 2_000)]["hp_liveness"] > 0.99
    # The flow server caps HP at 1000 pkt/s: half of 2000 pkt/s gets through.
    assert g[("modified", 2_000, 0)]["hp_liveness"] == pytest.approx(0.5, abs=0.02)
    # Above its 1500 pkt/s the original stack polls, the modified one only above 7000.
    assert g[("original", 0, 2_000)]["polling_share"] > 0.9
    assert g[("modified", 0, 2_000)]["polling_share"] == 0.0
    assert g[("modified", 0, 10_000)]["polling_share"] > 0.9


def test_demo_study_writes_report_figures_and_claims(tmp_path):
    out, claims, html = run_demo_study(
        tmp_path, "behnke-software", bs,
        ("report.html", "fig9.png", "fig10.png", "fig11.png", "points.json",
         "exp1.csv", "exp2.csv", "exp3.csv", "claims.json"),
        "Behnke et al. §6")
    assert "Claims of Behnke et al. §6 against this run" in html
    assert html.count("data:image/png;base64,") == 3
    assert not (out / "comparison.json").exists()  # the Danicki study did not run


def test_worst_case_analysis_charges_every_packet_a_wake_up():
    # docs/model.md: the simulator charges driver_wake once per batch; the
    # analysis assumes the worst case, every packet waking the network task.
    from rtshield.analysis.model import rx_packet_task_ns
    from rtshield.scenario import load_scenario

    sc = load_scenario(STUDY / "exp3_modified.toml")
    k = sc.costs
    assert k["driver_wake"] == 2_000
    assert rx_packet_task_ns(sc) == k["driver_per_packet"] + k["driver_wake"] + k[
        "invalidate_deferred"]
