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


def test_errors_after_a_storm_count_until_the_recovery():
    """A TCP monitor refused (status 2) from 1.0 s to 2.2 s after a storm that ended at 1 s,
    a timeout among them, then good: 11 refusals until its recovery at 1.2 s; none counted
    before the storm's end, all of them when it never recovered."""
    recs = requests(50, lambda i: None if i == 15 else 5 * MS,
                    status=lambda i: 2 if 5 <= i < 22 else 1)
    ss = verdict.samples(recs, REQ)
    assert verdict.recovery(ss, 1 * S, 5 * S, REQ) == 1.2
    assert verdict.errors_after(ss, 1 * S, 1.2) == 11
    assert verdict.errors_after(ss, 1 * S, None) == 11
    assert verdict.errors_after(ss, 1 * S, 0.5) == 5
    assert verdict.errors_after(ss, 3 * S, 0.0) == 0


def test_the_report_says_a_tcp_monitors_refusals_after_a_storm():
    from rtshield.rig.device import report

    assert report._errors_after({"errors_after": 400}, "tcp") == " (400 refused after the storm)"
    assert report._errors_after({"errors_after": 2}, "udp") == " (2 error answers after)"
    assert report._errors_after({"errors_after": 0}, "tcp") == ""
    assert report._errors_after({}, "tcp") == ""  # a summary from before the count


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


def test_an_optional_monitor_without_a_good_sample_is_skipped(tmp_path):
    """The baseline's skip (run._skip_optional): an optional monitor with no good sample
    goes, with the reason; an optional one that answered stays, and so does a required
    one without a sample (it fails the baseline: the target does not answer)."""
    from rtshield.rig.device.monitors import Monitor
    from rtshield.rig.device.run import _skip_optional

    p = ProfileFile.model_validate({
        "storm": [{"name": "s", "kind": "icmp_echo"}],
        "monitor": [
            {"name": "beat", "kind": "heartbeat", "period": "10ms", "optional": True},
            {"name": "late", "kind": "icmp", "timeout": "1s", "optional": True},
            {"name": "ping", "kind": "icmp", "optional": True},
            {"name": "echo", "kind": "udp"},
        ],
    })
    mons = [Monitor(m, verdict.Criteria.of(m), tmp_path / f"{m.name}.bin") for m in p.monitor]
    crit = {m.name: m.criteria for m in mons}
    slow = verdict.samples(requests(10, latency_ns=lambda i: 500 * MS), crit["late"])
    base = {
        "beat": verdict.window([], 0, S, crit["beat"]),
        "late": verdict.window(slow, 0, S, crit["late"]),
        "ping": verdict.window(verdict.samples(requests(10), crit["ping"]), 0, S, crit["ping"]),
        "echo": verdict.window([], 0, S, crit["echo"]),
    }
    skipped = _skip_optional(None, mons, base)
    assert skipped == {
        "beat": "no sample in the baseline: the device does not offer it (optional = true)",
        "late": "none of its 10 samples was good in the baseline: the device does not "
        "offer it (optional = true)",
    }
    assert [m.name for m in mons] == ["ping", "echo"] and list(base) == ["ping", "echo"]
    assert base["echo"]["verdict"] == "fail"


# --------------------------------------------------------------------------- the step rule
# (docs/rig.md, "The verdict"): a step runs up to `repeat` times and fails a monitor that
# failed `fail_runs` of its runs; the runs stop once no further run can change a verdict.


def _rule(**profile) -> verdict.Rule:
    p = ProfileFile.model_validate({
        "profile": profile,
        "storm": [{"name": "s", "kind": "icmp_echo"}],
        "monitor": [{"name": "m", "kind": "icmp"}],
    })
    return verdict.Rule.of(p.profile)


def test_the_default_rule_is_two_of_three_runs():
    assert _rule().as_dict() == {"repeat": 3, "fail_runs": 2}
    assert _rule(repeat=5).fail_runs == 3 and _rule(repeat=4).fail_runs == 3
    assert _rule(repeat=1).as_dict() == {"repeat": 1, "fail_runs": 1}
    assert _rule(repeat=3, fail_runs=1).fail_runs == 1


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n), st.lists(st.booleans(), min_size=n, max_size=n))))
def test_stopping_when_decided_gives_the_verdict_of_every_run(case):
    """The runs stop at the first decided prefix; the verdict there is the verdict all
    ``repeat`` runs would give."""
    repeat, fail_runs, failed_runs = case
    rule = verdict.Rule(repeat, fail_runs)
    full = rule.fails(sum(failed_runs))
    for k in range(1, repeat + 1):
        if rule.decided(k, sum(failed_runs[:k])):
            assert rule.fails(sum(failed_runs[:k])) == full
            break
    else:
        pytest.fail("never decided")
    assert rule.decided(repeat, sum(failed_runs))


def test_two_runs_decide_a_step_both_pass_or_both_fail():
    rule = verdict.Rule(3, 2)
    assert rule.decided(2, 0) and not rule.fails(0)
    assert rule.decided(2, 2) and rule.fails(2)
    assert not rule.decided(2, 1)  # split: a third run decides
    assert rule.decided(3, 1) and not rule.fails(1)


def _stalled_runs(stalled: set[int], runs: int = 3, rate_hz: int = 20, step_s: int = 3):
    """Records of a 20 Hz monitor over ``runs`` runs of ``step_s`` seconds, one every
    10 s; in the runs of ``stalled`` the device stalls for 300 ms (6 polls of 60 time
    out: 90 % good)."""
    period = S // rate_hz
    spans = [(10 * S * k, 10 * S * k + step_s * S) for k in range(runs)]
    recs = []
    for i in range(runs * 10 * rate_hz):
        t = i * period
        k = t // (10 * S)
        stall = k in stalled and spans[k][0] + S <= t < spans[k][0] + S + 300 * MS
        recs.append((t, 0, 0) if stall else (t, t + 5 * MS, 1))
    return recs, spans


C20 = _criteria(kind="modbus", rate="20Hz", latency="100ms", timeout="1s")


@pytest.mark.parametrize("stalled, fail_runs, verdict_, why", [
    (set(), 2, "pass", ""),
    ({1}, 2, "pass", "1 of 3 runs failed, the step fails at 2: run 2: 90 % good < 95 %"),
    ({0, 2}, 2, "fail", "2 of 3 runs failed: run 1: 90 % good < 95 %; run 3: 90 % good < 95 %"),
    ({1}, 1, "fail", "1 of 3 runs failed: run 2: 90 % good < 95 %"),
])
def test_a_step_from_its_runs_on_samples(stalled, fail_runs, verdict_, why):
    """One stall of 300 ms in one run of three -- a noise the test host makes -- does not
    fail the step under the majority rule; the same stall in two runs does; with
    ``fail_runs = 1`` one run is enough. The statistics are every run's pooled."""
    recs, spans = _stalled_runs(stalled)
    ss = verdict.samples(recs, C20)
    runs = [verdict.window(ss, lo, hi, C20) for lo, hi in spans]
    assert [w["verdict"] for w in runs] == ["fail" if k in stalled else "pass" for k in range(3)]
    pooled = verdict.pooled([(ss, lo, hi) for lo, hi in spans], C20)
    res = verdict.step_result(runs, pooled, verdict.Rule(3, fail_runs))
    assert (res["verdict"], res["why"]) == (verdict_, why)
    assert (res["runs"], res["runs_failed"], res["counted"]) == (3, len(stalled), True)
    assert res["samples"] == 180 and res["good"] == 180 - 6 * len(stalled)
    assert res["timeouts"] == 6 * len(stalled)


def test_pooled_windows_leave_out_the_time_between_runs():
    """Samples between the runs (the pause, the recovery wait) are in no run's window;
    the gap is the longest of any run's, not the time between runs."""
    recs, spans = _stalled_runs(set())
    recs = [r for r in recs if any(lo <= r[0] < hi for lo, hi in spans)]  # nothing between
    ss = verdict.samples(recs, C20)
    w = verdict.pooled([(ss, lo, hi) for lo, hi in spans], C20)
    assert w["verdict"] == "pass" and w["samples"] == 180 and w["max_gap_s"] == 0.05
    bad = [(t, 0, 0) if 20 * S + S <= t < 20 * S + 2 * S else (t, a, s) for t, a, s in recs]
    bad_ss = verdict.samples(bad, C20)
    w = verdict.pooled([(bad_ss, lo, hi) for lo, hi in spans], C20)
    assert w["max_gap_s"] == 1.05 and "gap 1.05 s > 1 s" in w["why"]


def test_longest_recovery():
    assert verdict.longest([0.0, 2.5, 1.0]) == 2.5
    assert verdict.longest([0.0, None]) is None
    assert verdict.longest([]) == 0.0


# ------------------------------------------------ a storm's ramp by the rule (run.run_storm)
# The test's loop on synthetic monitor files: the storm's tool and the clock are replaced
# (no root, no network); the monitors' records are written as the probes write them.

RUN_EVERY = 10 * S  # run k sends from k * RUN_EVERY for 3 s


def _ramp_profile(kind: str) -> ProfileFile:
    storm = {"name": "st", "kind": kind, "rates": ["1000pps", "10000pps", "50000pps"],
             "step": "3s", "pause": "1s"}
    if kind == "tcp_syn":
        storm["port"] = 502
    return ProfileFile.model_validate({
        "storm": [storm],
        "monitor": [
            {"name": "modbus", "kind": "modbus", "rate": "20Hz", "timeout": "500ms"},
            {"name": "ping", "kind": "icmp", "rate": "20Hz", "timeout": "500ms",
             "informational_in": ["icmp_echo"]},
        ],
    })


def _write(path, bad) -> None:
    """A 20 Hz monitor's records for 10 runs; ``bad(t)``: the poll sent at ``t`` is lost."""
    from rtshield.rig.probes import RECORD

    with open(path, "wb") as f:
        for i in range(10 * RUN_EVERY // (S // 20)):
            t = i * (S // 20)
            f.write(RECORD.pack(t, 0, 0) if bad(t) else RECORD.pack(t, t + 5 * MS, 1))


def _in_run(t: int, runs: set[int], lo_s: float = 1.0, hi_s: float = 1.5) -> bool:
    k, off = divmod(t, RUN_EVERY)
    return k in runs and lo_s * S <= off < hi_s * S


@pytest.mark.parametrize("kind, breaking, ping_counted", [
    ("icmp_echo", 50000.0, False),   # ping informational: the modbus monitor decides
    ("tcp_syn", 10000.0, True),      # ping counted: it fails the second step
])
def test_a_storm_ramp_by_the_rule(tmp_path, monkeypatch, kind, breaking, ping_counted):
    """Runs 0-1 (1 000 pkt/s) pass: two runs decide. Runs 2-4 (10 000): modbus stalls in
    run 2 only (1 of 3: pass), ping loses half its polls in every run. Runs 5-6 (50 000):
    modbus stalls in both (2 of 2: fail, decided), in run 6 until 2 s after its end."""
    from rtshield.rig.device import run
    from rtshield.rig.device.monitors import Monitor

    prof = _ramp_profile(kind)
    mons = [Monitor(m, verdict.Criteria.of(m), tmp_path / f"{m.name}.bin") for m in prof.monitor]
    _write(mons[0].records, lambda t: _in_run(t, {2, 5}) or _in_run(t, {6}, 1.0, 5.0))
    _write(mons[1].records, lambda t: t >= 2 * RUN_EVERY and _in_run(t, set(range(2, 10)),
                                                                     0.0, 1.5))
    sent = []

    def run_once(procs, storm, step, name, ep, step_ns, base, loan):
        k = len(sent)
        sent.append((name, step.rate))
        lo = k * RUN_EVERY
        return lo, lo + step_ns, {"rate_achieved": step.rate, "tx_pps": step.rate,
                                  "host_rst_pps": 0.0, "seconds": 3.0, "tool_exit": 0}

    now = {"t": 0}
    monkeypatch.setattr(run, "run_once", run_once)
    monkeypatch.setattr(run, "sleep_until", lambda t: now.update(t=max(now["t"], t)))
    monkeypatch.setattr(run, "mono_ns", lambda: now["t"] + S)  # 1 s after each sleep
    said = []
    opts = run.Options("198.18.0.1", "x", None, tmp_path, said.append)
    def trial(storm, step, i, k):
        return run.measure_run(None, prof, storm, step, i, k, mons, None, 0.0, None, 0, 1)

    s = run.run_storm(prof, prof.storm[0], mons, opts, trial)

    per_step = [len(x["runs"]) for x in s["steps"]]
    stop = 2 if ping_counted else 3
    assert per_step == [2, 3, 2][:stop]
    assert [r for _, r in sent] == [1000.0] * 2 + [10000.0] * 3 + [50000.0] * 2 * (stop == 3)
    step2 = s["steps"][1]
    assert step2["monitors"]["modbus"]["verdict"] == "pass"
    assert step2["monitors"]["modbus"]["runs_failed"] == 1
    assert step2["monitors"]["ping"]["verdict"] == "fail"
    assert step2["monitors"]["ping"]["runs_failed"] == 3
    assert step2["monitors"]["ping"]["counted"] is ping_counted
    assert step2["verdict"] == ("fail" if ping_counted else "pass")
    assert s["breaking_rate"] == breaking
    assert s["monitors"]["ping"]["failed_at"] == 10000.0
    assert s["monitors"]["ping"]["verdict"] == ("fail" if ping_counted else "pass"), (
        s["monitors"])
    assert s["informational"] == ([] if ping_counted else ["ping"])
    if not ping_counted:
        last = s["steps"][2]
        assert last["failed"] == ["modbus"] and last["monitors"]["modbus"]["runs_failed"] == 2
        # modbus good again 2 s after the last run ended (the first good poll of the 3 in a
        # row), the longest recovery of the storm's runs
        assert s["monitors"]["modbus"]["recovery_s"] == 2.0 and s["recovery_s"] == 2.0
        # its polls were lost, not refused: no error answers after the storm
        assert s["monitors"]["modbus"]["errors_after"] == 0
        assert [r["errors_after"]["modbus"] for r in last["runs"]] == [0, 0]
        assert s["verdict"] == "fail" and s["monitors"]["modbus"]["recovered"]
        _summary_and_report(tmp_path, prof, mons, s)


def _summary_and_report(tmp_path, prof, mons, storm) -> None:
    """summary.json's rule and runs, and the report saying plainly which monitor is
    informational, what it would have said and what the rule is."""
    from pathlib import Path

    from rtshield.rig.device import latency_figure, summarize, write_report

    base = {m.name: verdict.window(m.samples(), 0, S, m.criteria) for m in mons}
    raw = {"system": {}, "target": "198.18.0.1", "iface": "x", "source": "198.18.0.2",
           "target_mac": "02:00:00:00:00:01", "storms": [storm], "not_run": [], "skipped": {},
           "baseline": {"window_ns": [0, S], "tx_pps": 0.0, "host_rst_pps": 0.0,
                        "monitors": base}, "t0_ns": 0, "started": 1}
    s = summarize(raw, prof, Path("p.toml"), {"max_rate": None})
    assert s["rule"] == {"repeat": 3, "fail_runs": 2}
    assert s["criteria"]["ping"]["informational_in"] == ["icmp_echo"]
    run7 = s["storms"][0]["steps"][2]["runs"][1]
    assert run7["window_s"] == [60.0, 63.0] and run7["verdict"] == "fail"
    assert run7["attempt"] == 1 and s["attempts"] == 1
    assert s["storms"][0]["steps"][2]["monitors"]["modbus"]["why"].startswith(
        "2 of 2 runs failed: run 1: ")
    html = write_report(tmp_path, s, "", latency_figure(tmp_path, s)).read_text()
    assert "the step fails a monitor that failed 2 of its 3 runs" in html
    assert "Informational monitors:</b> ping in icmp_echo storms" in html
    assert "50,000 (informational: ping failed from 10,000)" in html
    assert ("ping is informational in this storm (icmp_echo): its verdicts are shown but "
            "decide neither a step nor the breaking rate") in html
