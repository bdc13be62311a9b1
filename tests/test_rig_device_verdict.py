"""What a monitor's samples say (rtshield.rig.device.verdict): statistics, verdicts and
recovery, on records built here with known properties. No root, no network."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtshield.rig.device import verdict
from rtshield.schema.profile import ProfileFile

MS = 1_000_000
S = 1_000_000_000


def _criteria(**monitor) -> verdict.Criteria:
    p = ProfileFile.model_validate({
        "storm": [{"name": "s", "kind": "icmp_echo"}],
        "monitor": [{"name": "m", **monitor}],
    })
    return verdict.Criteria.of(p.monitor[0])


REQ = _criteria(kind="icmp", rate="10Hz", latency="100ms", timeout="1s", max_gap="1s")
BEAT = _criteria(kind="heartbeat", period="10ms", jitter="2ms", max_gap="100ms")


def requests(n: int, latency_ns=lambda i: 5 * MS, status=lambda i: 1, t0=0, period=100 * MS):
    """Records of ``n`` requests every ``period``: (sent, answered, status)."""
    out = []
    for i in range(n):
        sent = t0 + i * period
        lat = latency_ns(i)
        out.append((sent, sent + lat if lat is not None else 0, status(i) if lat else 0))
    return out


def test_a_window_of_good_answers_passes():
    ss = verdict.samples(requests(20), REQ)
    w = verdict.window(ss, 0, 2 * S, REQ)
    assert w["verdict"] == "pass" and w["why"] == ""
    assert (w["samples"], w["good"], w["timeouts"], w["errors"]) == (20, 20, 0, 0)
    assert w["latency_ms"]["p50"] == 5.0 and w["max_gap_s"] == 0.1


def test_too_few_good_samples_fail():
    # 2 of 20 answered after the latency limit (but within the timeout): 90 % good
    ss = verdict.samples(requests(20, lambda i: 300 * MS if i in (3, 4) else 5 * MS), REQ)
    w = verdict.window(ss, 0, 2 * S, REQ)
    assert w["verdict"] == "fail" and w["good_fraction"] == 0.9 and w["late"] == 2
    assert "90 % good < 95 %" in w["why"]
    # one of 20 bad is exactly 95 %: passes
    ss = verdict.samples(requests(20, lambda i: None if i == 7 else 5 * MS), REQ)
    w = verdict.window(ss, 0, 2 * S, REQ)
    assert w["verdict"] == "pass" and w["timeouts"] == 1


def test_a_long_gap_fails_even_with_enough_good_samples():
    c = _criteria(kind="icmp", rate="10Hz", within=0.5, max_gap="300ms")
    ss = verdict.samples(requests(20, lambda i: None if 5 <= i < 10 else 5 * MS), c)
    w = verdict.window(ss, 0, 2 * S, c)
    assert w["good_fraction"] == 0.75  # above within = 0.5
    assert w["verdict"] == "fail" and w["max_gap_s"] == 0.6 and "gap 0.60 s > 0.3 s" in w["why"]


def test_errors_are_counted_and_not_good():
    ss = verdict.samples(requests(10, status=lambda i: 2 if i % 2 else 1), REQ)
    w = verdict.window(ss, 0, S, REQ)
    assert w["errors"] == 5 and w["good"] == 5 and w["verdict"] == "fail"


def test_an_empty_window_fails():
    w = verdict.window([], 0, S, REQ)
    assert w["verdict"] == "fail" and "no sample" in w["why"] and w["max_gap_s"] == 1.0


def beats(times_ms):
    return [(int(t * MS), int(t * MS), 1) for t in times_ms]


def test_heartbeat_jitter_and_gaps():
    regular = beats([10 * i for i in range(101)])
    w = verdict.window(verdict.samples(regular, BEAT), 0, S + 1, BEAT)
    assert w["verdict"] == "pass" and w["samples"] == 100 and w["jitter_ms"]["max"] == 0.0
    # every fifth beat 5 ms late: its interval 15 ms, the next 5 ms -> 40 % of them bad
    late = beats([10 * i + (5 if i % 5 == 0 and i else 0) for i in range(101)])
    w = verdict.window(verdict.samples(late, BEAT), 0, S + 1, BEAT)
    assert w["good_fraction"] == pytest.approx(0.62, abs=0.02) and w["verdict"] == "fail"
    assert w["jitter_ms"]["max"] == 5.0
    # a silence of 300 ms
    silent = beats([10 * i for i in range(40)] + [10 * i for i in range(70, 101)])
    w = verdict.window(verdict.samples(silent, BEAT), 0, S + 1, BEAT)
    # the gap: from the last good interval (390 ms) to the first after the silence (710 ms)
    assert w["max_gap_s"] == 0.32 and w["verdict"] == "fail"


def test_recovery_after_a_storm():
    # bad for 1.2 s after the storm's end at t=1 s, then good
    recs = requests(50, lambda i: None if 10 <= i < 22 else 5 * MS)
    ss = verdict.samples(recs, REQ)
    assert verdict.recovery(ss, 1 * S, 5 * S, REQ) == 1.2
    # never bad after the end: 0
    assert verdict.recovery(ss, 3 * S, 5 * S, REQ) == 0.0
    # not yet recovered: too few good samples after the last bad one
    assert verdict.recovery(ss, 1 * S, 2.3 * S, REQ) is None


def test_recovery_needs_the_samples_to_keep_coming():
    # good until 2 s, then nothing: a monitor that went silent has not recovered
    ss = verdict.samples(requests(20), REQ)
    assert verdict.recovery(ss, 1 * S, 1.9 * S, REQ) == 0.0
    assert verdict.recovery(ss, 1 * S, 4 * S, REQ) is None


def test_heartbeat_recovery_counts_a_silence_as_bad():
    times = [10 * i for i in range(100)] + [1500 + 10 * i for i in range(50)]
    ss = verdict.samples(beats(times), BEAT)
    # the first interval after the silence (510 ms) is bad; the next one, at 1.51 s, good
    assert verdict.recovery(ss, 990 * MS, 2 * S, BEAT) == 0.52


@given(st.lists(st.booleans(), min_size=1, max_size=60))
def test_good_fraction_and_gap_agree_with_the_samples(flags):
    recs = requests(len(flags), lambda i: 5 * MS if flags[i] else None)
    ss = verdict.samples(recs, REQ)
    hi = len(flags) * 100 * MS
    w = verdict.window(ss, 0, hi, REQ)
    assert w["good"] == sum(flags) and w["timeouts"] == len(flags) - sum(flags)
    # the longest run without a good sample, from the window's edges
    goods = [i * 100 * MS for i, f in enumerate(flags) if f]
    edges = [0, *goods, hi]
    gap = max(b - a for a, b in zip(edges, edges[1:], strict=False))
    assert w["max_gap_s"] == round(gap / S, 3)
    assert (w["verdict"] == "pass") == (
        sum(flags) / len(flags) >= 0.95 and w["max_gap_s"] <= 1.0
    )
