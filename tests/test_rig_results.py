"""Unit tests of the rig's result side: cycle files, phases, statistics, tables, report.

No root and no network: everything works from cycle files written here (with
exactly known timestamps) or recorded by a real run (tests/data/rig/).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rtshield import cli
from rtshield.rig import cycles, linux, results
from rtshield.rig.harness import RigError

MS = 1_000_000
DATA = Path(__file__).parent / "data" / "rig"


def _file(tmp_path, starts, t0=0, period=MS, name="c.rtscyc", **kw):
    return cycles.write_cycles(tmp_path / name, starts, period_ns=period, t0_ns=t0, **kw)


def test_round_trip(tmp_path):
    starts = [1 * MS + 5, 2 * MS + 7, 3 * MS + 1]
    p = _file(tmp_path, starts, t0=0, policy="rr", cpu=1, prio=80, overruns=2)
    cf = cycles.read_cycles(p)
    assert (cf.policy, cf.cpu, cf.prio, cf.period_ns, cf.overruns) == ("rr", 1, 80, MS, 2)
    assert cf.start_ns.tolist() == starts
    assert cf.cycle_times_ns().tolist() == [MS + 5, MS + 2, MS - 6]
    assert cf.latencies_ns().tolist() == [5, 7, 1]


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.rtscyc"
    bad.write_bytes(b"not a cycle file at all" * 4)
    with pytest.raises(ValueError, match="bad.rtscyc: not an rtshield cycle file"):
        cycles.read_cycles(bad)
    p = _file(tmp_path, [MS, 2 * MS, 3 * MS])
    p.write_bytes(p.read_bytes()[:-8])
    with pytest.raises(ValueError, match="truncated: 3 cycles"):
        cycles.read_cycles(p)


def test_late_cycle_and_catch_up():
    """An absolute schedule: a 2.5 ms late toggle is followed by short cycles, mean stays 1 ms."""
    planned = np.arange(1, 11, dtype=np.int64) * MS
    starts = planned.copy()
    starts[4] += 2_500_000  # cycle 5 starts 2.5 ms late
    starts[5] = starts[4] + 10_000  # the missed wake-ups fire at once
    starts[6] = starts[5] + 10_000
    cf = cycles.CycleFile("fifo", 1, 99, MS, 0, 0, starts, starts)
    ct = cf.cycle_times_ns()
    st = cycles.cycle_stats(ct, cf.latencies_ns(), MS)
    assert st["cycles"] == 10
    assert st["cycle_ms"]["max"] == pytest.approx(3.5)
    assert st["cycle_ms"]["min"] == pytest.approx(0.01)
    assert st["cycle_ms"]["mean"] == pytest.approx(1.0)  # same end point, same mean
    assert st["late"] == 2  # cycles 5 and 6 toggled after the next planned toggle


def test_split_phases_by_start_time():
    starts = np.arange(1, 31, dtype=np.int64) * MS
    cf = cycles.CycleFile("fifo", 1, 99, MS, 0, 0, starts, starts)
    split = cycles.split_phases(
        cf,
        {
            "idle_before": (0, 10 * MS),
            "attack": (12 * MS, 22 * MS),
            "idle_after": (25 * MS, 40 * MS),
        },
    )
    assert split["idle_before"]["cycle_ns"].size == 9  # starts 1..9 ms
    assert split["attack"]["cycle_ns"].size == 10  # 12..21 ms
    assert split["idle_after"]["cycle_ns"].size == 6  # 25..30 ms


def test_percentiles_and_empty_phase():
    ct = np.full(1000, MS, dtype=np.int64)
    ct[-10:] = 2 * MS  # 1 % of the cycles take 2 ms
    st = cycles.cycle_stats(ct, np.zeros(1000, dtype=np.int64), MS)
    assert st["cycle_ms"]["p50"] == pytest.approx(1.0)
    assert st["cycle_ms"]["p99_9"] == pytest.approx(2.0)
    assert st["cycle_ms"]["p99"] < 2.0
    assert cycles.cycle_stats(ct[:0], ct[:0], MS) == {"cycles": 0}


def test_histogram_counts_every_cycle():
    ct = np.array([MS, MS, MS + 4_000, MS + 15_000, 3 * MS], dtype=np.int64)
    edges, counts = cycles.histogram(ct, bin_us=10.0)
    assert counts.sum() == 5
    assert np.allclose(np.diff(edges), 0.01)
    i = int(np.searchsorted(edges, 1.0, side="right")) - 1
    assert counts[i] == 3  # 1.000, 1.000 and 1.004 ms share the first 10 us bin


def _cell(config, attack, load, idle=(1.01, 1.02), attack_max=3.0, status="ok"):
    cfg = linux.Config.parse(config)
    c = {
        "cell": linux.cell_name(cfg, attack, load),
        "config": config,
        "attack": attack,
        "load": load,
        "status": status,
    }
    if status != "ok":
        c["reason"] = "deadline: refused"
        return c

    def ph(mx):
        return {
            "cycles": 100,
            "late": 0,
            "cycle_ms": {
                "max": mx,
                "p99": mx / 2,
                "mean": 1.0,
                "p99_9": mx,
                "min": 0.5,
                "p50": 1.0,
                "std": 0.1,
            },
        }

    c["phases"] = {"idle_before": ph(idle[0]), "attack": ph(attack_max), "idle_after": ph(idle[1])}
    c["idle_max_ms"] = max(idle)
    c["attack_max_ms"] = attack_max
    c["traffic"] = {"offered_pps": 1000.0, "flood_in_pps": 900.0}
    return c


def test_paper_table_layout():
    cells = [
        _cell("DF", "syn", False, attack_max=1.1),
        _cell("SF", "syn", False, idle=(1.05, 1.2), attack_max=3.4),
        _cell("SF", "arp", False, idle=(1.3, 1.0), attack_max=3.3),
        _cell("SD", "syn", False, status="refused"),
        _cell("SF", "syn", True, attack_max=4.2),
    ]
    header, rows = results.paper_table(cells, load=False)
    assert header == ["", "Idle", "SYN flooding", "ARP flooding", "Nmap"]
    assert [r[0] for r in rows] == ["SD", "SF", "DF"]  # the paper's row order
    assert rows[0] == ["SD", "refused", "refused", "refused", "refused"]
    assert rows[1] == ["SF", "1.300 ms", "3.400 ms", "3.300 ms", ""]  # idle: max over both
    _, rows2 = results.paper_table(cells, load=True)
    assert rows2 == [["SF", "1.020 ms", "4.200 ms", "", ""]]
    _, p99 = results.paper_table(cells, load=False, stat="p99")
    assert p99[1][2] == "1.700 ms"


def test_paper_tables_are_read_from_the_package():
    """paper_tables.csv: the paper's six configurations in its row order, idle and each attack."""
    tables = results.paper_tables()
    for load in (False, True):
        assert list(tables[load]) == list(linux.BASE_CONFIGS)
        assert all(len(v) == 1 + len(linux.ATTACKS) for v in tables[load].values())
    assert tables[False]["SR"] == (1.008, 4.213, 3.200, 2.603)  # Table 1, row SR
    assert tables[True]["DD"] == (2.043, 2.016, 2.022, 2.027)  # Table 2, row DD
    header, rows = results.paper_reference(True)
    assert header == ["paper (RPi 4, PREEMPT_RT)", "Idle", "SYN flooding", "ARP flooding", "Nmap"]
    assert rows[0] == ["SD", "1.018 ms", "30.681 ms", "69.619 ms", "22.143 ms"]


def test_plan_select_and_protect():
    opts = linux.Options(select=["SF", "D*"], attacks=["syn"], loads=[False])
    names = linux.selftest_order(linux.plan(opts))
    assert names == ["SF-syn-noload", "DD-syn-noload", "DF-syn-noload", "DR-syn-noload"]
    opts = linux.Options(select=["SF*"], attacks=["syn", "arp"], loads=[True], protect=["limit"])
    assert linux.selftest_order(linux.plan(opts)) == [
        "SF-syn-load",
        "SF-arp-load",
        "SF+limit-syn-load",
        "SF+limit-arp-load",
    ]
    opts = linux.Options(select=["SR+steer"], attacks=["nmap"], loads=[False])
    assert linux.selftest_order(linux.plan(opts)) == ["SR+steer-nmap-noload"]
    full = linux.plan(linux.Options())
    assert len(full) == 36
    with pytest.raises(RigError, match="matches no configuration"):
        linux.plan(linux.Options(select=["XX"]))
    with pytest.raises(RigError, match="unknown configuration"):
        linux.Config.parse("SX")


def test_options_record_sched_deadline_flat():
    """summary.json's options keep the SCHED_DEADLINE triple as dl_*_ns, not nested."""
    o = linux.Options(dl=linux.SchedDeadline.parse("2000,500000,1000000")).as_dict()
    assert "dl" not in o
    assert (o["dl_runtime_ns"], o["dl_deadline_ns"], o["dl_period_ns"]) == (2000, 500000, 1000000)
    assert linux.Options().as_dict()["dl_runtime_ns"] == 100_000  # the paper's 100 µs
    with pytest.raises(RigError, match="1024 <= runtime"):
        linux.SchedDeadline.parse("1000,1000,1000")


def test_cpu_mapping():
    o = linux.Options(control_cpu=1, network_cpu=0)
    assert linux.rx_cpu(linux.Config.parse("SF"), o) == 1  # shares the control CPU
    assert linux.rx_cpu(linux.Config.parse("DF"), o) == 0
    assert linux.rx_cpu(linux.Config.parse("SF+steer"), o) == 0
    assert linux.rx_cpu(linux.Config.parse("SF+limit"), o) == 1
    assert linux.load_cpus(linux.Config.parse("SR"), o) == [1]
    assert linux.load_cpus(linux.Config.parse("DR"), o) == [0, 1]


def test_recorded_run_rebuilds_its_report(tmp_path):
    """A real recorded run (tests/data/rig): `rig report` re-reads it and writes everything."""
    run = tmp_path / "run"
    shutil.copytree(DATA / "recorded", run)
    for f in ("report.html", "tables.txt"):
        (run / f).unlink(missing_ok=True)
    assert cli.main(["rig", "report", str(run)]) == 0
    html = (run / "report.html").read_text()
    assert "Table 1 layout" in html and "SF" in html and "DF" in html
    assert "<td>27.852 ms</td>" in html  # the paper's Table 1 (SD under SYN flooding) beside it
    summary = json.loads((run / "summary.json").read_text())
    for c in summary["cells"]:
        assert c["status"] == "ok"
        for ph in ("idle_before", "attack", "idle_after"):
            assert c["phases"][ph]["cycles"] > 0
        assert (run / f"hist_{c['cell']}.png").stat().st_size > 1000
        cf = cycles.read_cycles(run / "runs" / c["cell"] / "cycles.rtscyc")
        assert cf.count == c["cycles_total"]
        assert cf.period_ns == 1_000_000
    assert "SYN flooding" in (run / "tables.txt").read_text()


def test_report_of_a_non_run_is_one_line(tmp_path, capsys):
    assert cli.main(["rig", "report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rtshield: error: rig report:") and "\n" not in err


def test_protection_table_side_by_side():
    base = _cell("SF", "syn", False, attack_max=3.0)
    lim = _cell("SF+limit", "syn", False, attack_max=1.2)
    lim["traffic"]["syn_dropped_pps"] = 99000.0
    header, rows = results.protection_table([base, lim, _cell("DF", "syn", False)], load=False)
    assert header == ["configuration", "attack", "unprotected p99 / max", "+limit"]
    assert rows == [
        ["SF", "SYN flooding", "1.500 / 3.000 ms", "0.600 / 1.200 ms (99000 pkt/s dropped)"]
    ]
    assert results.protection_table([base], load=False) is None
