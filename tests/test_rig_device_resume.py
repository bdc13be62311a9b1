"""An interrupted `rig device` test resumed (python/rtshield/rig/device/record.py,
docs/decisions/rig-device-resume.md), without the rig: the test's loop
(`run.run_recorded`) is given what each run measured — samples, rates, recovery
times, made up deterministically — instead of the rig's measurement; every decision
is the real code's. The smoke profile's two storms, its five monitors and its rule
(up to 3 runs, 2 failed fail the step)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rtshield.outputs import format_summary_json
from rtshield.rig.device import record, run, summarize
from rtshield.rig.device.monitors import Monitor
from rtshield.rig.device.profile import load_profile
from rtshield.rig.device.verdict import Criteria, Sample

PROFILE = Path(__file__).resolve().parent / "data" / "rig" / "device_smoke.toml"
PROF, _ = load_profile(PROFILE)
MONS = [Monitor(m, Criteria.of(m), Path("unused.bin")) for m in PROF.monitor]
MS = 1_000_000
#: (storm, step, try) whose modbus monitor fails (no answer to most of its polls):
#: bcast step 2 fails 2 of 3 runs (the step fails, the ramp ends there); syn step 2
#: fails 1 of 3 (it passes).
FAILING = {("bcast", 2, 1), ("bcast", 2, 3), ("syn", 2, 2)}
#: Every run the uninterrupted test measures, in order.
ORDER = [("bcast", 1, 1), ("bcast", 1, 2), ("bcast", 2, 1), ("bcast", 2, 2), ("bcast", 2, 3),
         ("syn", 1, 1), ("syn", 1, 2), ("syn", 2, 1), ("syn", 2, 2), ("syn", 2, 3)]
PARTS = {"rtshield": "1", "profile": "p", "target": "198.18.0.1", "iface": "dut0",
         "max_rate": 50000.0, "target_mac": "02:00:00:00:00:01", "monitors": ["modbus"]}


def _samples(m: Monitor, lo: int, bad: bool, seed: int) -> list[Sample]:
    """One second of a monitor's samples from ``lo``: polls every 50 ms answered in
    1–3 ms (``bad``: 80 % unanswered), a heartbeat every 10 ms."""
    if m.criteria.kind == "heartbeat":
        return [Sample(lo + i * 10 * MS, True, 10 * MS + (i * seed) % 3 * MS, 1)
                for i in range(100)]
    out = []
    for i in range(20):
        answered = not (bad and i % 5)
        v = (1 + (i * seed) % 3) * MS if answered else None
        out.append(Sample(lo + i * 50 * MS, answered, v, 1 if answered else 0))
    return out


class Device:
    """Measures the runs asked of it (recording which), deterministically; ``stop_at``:
    the run during which the test is interrupted (Ctrl-C: nothing of it is kept)."""

    def __init__(self, started: int, stop_at: int | None = None) -> None:
        self.started, self.stop_at, self.asked = started, stop_at, []

    def __call__(self, storm, step, i, k) -> record.Measured:
        self.asked.append((storm.name, i, k))
        if len(self.asked) == self.stop_at:
            raise KeyboardInterrupt
        key = (storm.name, i, k)
        seed = ORDER.index(key) + 2
        lo = (10 + 30 * ORDER.index(key)) * 10**9  # each run on the attempt's clock
        bad = key in FAILING
        samples = {m.name: _samples(m, lo, bad and m.name == "modbus", seed) for m in MONS}
        rates = {"rate_achieved": step.rate * 0.99, "tx_pps": step.rate * 0.99,
                 "host_rst_pps": 0.0, "seconds": 1.0, "tool_exit": 0}
        rec_s = {m.name: (1.25 if bad else 0.0) for m in MONS}
        errors = {m.name: (seed if bad and m.name == "modbus" else 0) for m in MONS}
        return record.Measured(rates, samples, (lo, lo + 10**9), rec_s, 0, self.started,
                               errors_after=errors)


def _test(out: Path, dev: Device, parts=PARTS) -> tuple[dict, record.RunRecord]:
    """One attempt of the test into ``out``: its summary (as summary.json says it)."""
    rec = record.RunRecord(out, parts)
    opts = run.Options("198.18.0.1", "dut0", None, out, say=lambda m: None)
    storms, not_run = run.run_recorded(PROF, MONS, opts, rec, dev)
    raw = {
        "system": {}, "target": "198.18.0.1", "iface": "dut0", "source": "198.18.0.2",
        "target_mac": parts["target_mac"], "storms": storms, "not_run": not_run,
        "baseline": {"window_ns": [1, 2], "tx_pps": 0.0, "host_rst_pps": 0.0,
                     "monitors": {}},
        "skipped": {}, "t0_ns": 0, "started": dev.started, "resumed": rec.resumed,
    }
    return json.loads(format_summary_json(summarize(raw, PROF, PROFILE, {}))), rec


def _attempts(s: dict) -> list[int]:
    """Each run's attempt, in order; removed from ``s`` (with the count)."""
    del s["attempts"]
    return [r.pop("attempt") for st in s["storms"] for p in st["steps"] for r in p["runs"]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    """The summary of the test run through without an interruption (its runs' attempts
    checked and removed)."""
    dev = Device(started=100)
    s, _ = _test(tmp_path_factory.mktemp("whole"), dev)
    assert dev.asked == ORDER
    assert s["attempts"] == 1 and _attempts(s) == [1] * len(ORDER)
    # what the runs decide: bcast breaks at its second step, syn passes
    assert [(st["name"], st["breaking_step"]) for st in s["storms"]] == [("bcast", 2),
                                                                       ("syn", None)]
    # the error answers after the failing runs (read back too, when resumed)
    assert s["storms"][0]["monitors"]["modbus"]["errors_after"] > 0
    return s


@pytest.mark.parametrize("how", ["ctrl-c", "killed", "a samples' file lost"])
def test_a_resumed_test_reads_its_runs_back_and_ends_as_the_uninterrupted_one(
    tmp_path, uninterrupted, how, caplog
):
    first = Device(started=100, stop_at=5)  # interrupted during bcast's step 2, try 3
    rec = record.RunRecord(tmp_path, PARTS)
    opts = run.Options("198.18.0.1", "dut0", None, tmp_path, say=lambda m: None)
    with pytest.raises(KeyboardInterrupt):
        if how == "killed":  # the record is not closed: what a crash leaves
            run.run_storms(PROF, MONS, opts, rec.trial(first))
        else:
            run.run_recorded(PROF, MONS, opts, rec, first)
    said = [r.getMessage() for r in caplog.records]
    assert said == ([] if how == "killed" else [  # a crash has no time to say anything
        f"rig device: the test is incomplete: 4 runs are recorded, kept for the same command "
        f"into {tmp_path}, which resumes it ({tmp_path} keeps its earlier results until then)"
    ])
    rows = (tmp_path / record.RECORD).read_text().splitlines()[1:]
    assert [r.split(",")[:4] for r in rows] == [
        [str(n), s, str(i), str(k)] for n, (s, i, k) in enumerate(ORDER[:4])
    ]  # the runs that finished, not the one in progress
    lost = ORDER.index(("bcast", 2, 1))
    if how == "a samples' file lost":
        (tmp_path / record.SAMPLES / f"{lost:05d}.json").unlink()

    again = Device(started=200)
    s, rec = _test(tmp_path, again)
    measured = ORDER[4:] if how != "a samples' file lost" else [ORDER[lost], *ORDER[4:]]
    assert again.asked == measured
    assert rec.resuming and rec.resumed == len(ORDER) - len(measured)
    assert s["attempts"] == 2
    assert _attempts(s) == [1 if r not in measured else 2 for r in ORDER]
    assert s == uninterrupted  # every statistic, verdict, rate and recovery time


def test_another_test_starts_afresh_saying_what_differs(tmp_path, caplog):
    with pytest.raises(KeyboardInterrupt):
        _test(tmp_path, Device(started=100, stop_at=3))
    caplog.clear()
    dev = Device(started=200)
    with caplog.at_level(logging.WARNING, logger="rtshield"):
        s, rec = _test(tmp_path, dev, {**PARTS, "max_rate": None})
    assert dev.asked == ORDER and rec.resumed == 0 and not rec.resuming
    assert rec.changed == ["max_rate"]
    [line] = [r.getMessage() for r in caplog.records]
    assert "differs in --max-rate: starting afresh" in line
    assert s["attempts"] == 1


def test_a_finished_test_leaves_no_record_and_is_measured_again(tmp_path):
    _test(tmp_path, Device(started=100))
    record.discard(tmp_path)
    assert not (tmp_path / record.RECORD).exists() and not (tmp_path / record.SAMPLES).exists()
    dev = Device(started=200)
    _, rec = _test(tmp_path, dev)
    assert dev.asked == ORDER and not rec.resuming


def test_the_test_key_changes_with_what_is_measured():
    base = record.test_parts(PROF, "198.18.0.1", "dut0", 50000.0, "02:00:00:00:00:01",
                             ["modbus"])
    renamed = PROF.model_copy(update={"profile": PROF.profile.model_copy(
        update={"description": "another text"})})
    assert record.test_parts(renamed, "198.18.0.1", "dut0", 50000.0, "02:00:00:00:00:01",
                             ["modbus"]) == base  # words only: the same test
    fewer = PROF.model_copy(update={"storm": PROF.storm[:1]})
    ramp = PROF.model_copy(update={"profile": PROF.profile.model_copy(update={"repeat": 5})})
    for prof in (fewer, ramp):
        other = record.test_parts(prof, "198.18.0.1", "dut0", 50000.0, "02:00:00:00:00:01",
                                  ["modbus"])
        assert record.test_key(other) != record.test_key(base)
        assert [k for k in base if base[k] != other[k]] == ["profile"]
