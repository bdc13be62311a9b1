"""The rig's boards' presets (``BOARD_PRESETS``): each loads and validates, each number a
board's preset marks "measured: RUN KEY" is what that run measured, rounded to the digits
written (its ``device.json`` and ``cycles.bin`` kept in tests/data/rig/board/), each
number the lwIP board's marks "configured" is the build's, and a run of the lwIP target
gets ``twin.json`` on it (docs/decisions/twin.md, "The lwIP target's model")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_rig_freertos import SCEN, _fake_run

from rtshield import scenario as scenario_mod
from rtshield.rig import freertos
from rtshield.rig.freertos.fit import (
    BOARD_DROPS,
    BOARD_PRESETS,
    EMULATED_NIC,
    board_measurements,
    board_stack_costs,
)
from rtshield.rig.freertos.summary import IP_QUEUE_FULL
from rtshield.scenario import load_platform, loads_scenario

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "rig" / "board"
LWIP = "posix-freertos-lwip"
#: The Plus-TCP runs that counted the IP task's drains (its stack's split).
DRAINS = DATA / "posix-freertos-tcp-drains"
#: "measured: RUN KEY" after a value: RUN a run of the preset's data (or "all-runs", the
#: least-squares split of the stack's costs over every run), KEY its measurement.
_MEASURED = re.compile(
    r'^(\w+)\s*=\s*"([0-9.]+)(us|ms)"\s*#\s*measured: (all-runs|(?:un)?protected-\w+) (\w+)'
)


def _preset_text(name: str) -> str:
    return (scenario_mod.platforms_dir() / f"{name}.toml").read_text()


def _runs(data: Path) -> dict[str, dict[str, float]]:
    return {d.name: board_measurements(d) for d in sorted(data.iterdir()) if d.is_dir()}


def provenance_mismatches(text: str, data: Path, stack: Path | None = None) -> list[str]:
    """Each value marked measured that is not its run's measurement rounded to the digits
    written (half a unit of its last digit), as ``key: preset vs measured``; "all-runs"
    the split of the stack's costs over the runs of ``stack`` (else of ``data``)."""
    runs = _runs(data)
    split = board_stack_costs(list(_runs(stack or data).values()))
    bad = []
    for line in text.splitlines():
        m = _MEASURED.match(line)
        if not m:
            continue
        key, value, unit, run, what = m.groups()
        scale = 1000.0 if unit == "ms" else 1.0  # µs
        digits = len(value.partition(".")[2])
        half = 0.5 * 10.0**-digits * scale + 1e-9
        got = split.get(what) if run == "all-runs" else runs[run].get(what)
        if got is None or abs(float(value) * scale - got) > half:
            bad.append(f"{key}: {float(value) * scale} us vs {got} us measured ({run} {what})")
    return bad


@pytest.mark.parametrize("name", sorted(set(BOARD_PRESETS.values())))
def test_every_board_preset_loads_and_carries_the_rig_device(name):
    plat, costs, defaults = load_platform(name)
    # the POSIX board's tick comes late and its RX interrupt is the tick hook; the MPS2
    # board's NIC (emulated) interrupts per frame and its guest clock keeps the tick
    emulated = name in EMULATED_NIC
    assert plat.name == name and plat.tick_real_ns >= plat.tick_ns > 0
    assert (plat.tick_real_ns == plat.tick_ns) == emulated
    assert defaults["nic"]["interrupt"] == ("frame" if emulated else "tick")
    assert defaults["driver"]["queue"] > 0
    # the rig's device scenario runs on it, its driver queue the board's
    text = (ROOT / "rig" / "freertos" / "device.toml").read_text()
    sc = loads_scenario(
        re.sub(r'platform = "[^"]+"', f'platform = "{name}"', text), "device.toml"
    )
    assert sc.platform.name == name and sc.driver.queue == defaults["driver"]["queue"]
    assert name in BOARD_DROPS


_PATHS = ("rx_path_regular", "rx_path_prio_raise", "rx_path_rejected")


@pytest.mark.parametrize(
    ("name", "marked"),
    [
        (LWIP, {"tick_real", "isr_per_packet", "driver_per_packet", "driver_wake", *_PATHS}),
        ("mps2-an385-freertos-tcp",
         {"tick_real", "isr_entry_exit", "isr_per_packet", "driver_per_packet", *_PATHS}),
        ("mps2-an385-freertos-lwip",
         {"tick_real", "isr_entry_exit", "isr_per_packet", "driver_per_packet", *_PATHS}),
    ],
)  # fmt: skip
def test_each_presets_measured_numbers_are_its_runs(name, marked):
    """Every number a board's preset marks measured is its run's, and the expected ones
    are marked (tests/data/rig/board/<preset>/ holds the runs; Plus-TCP's on the POSIX
    board: below, its stack's split from other runs)."""
    text = _preset_text(name)
    assert {m.group(1) for m in map(_MEASURED.match, text.splitlines()) if m} == marked
    assert provenance_mismatches(text, DATA / name) == []


def test_the_plustcp_presets_measured_numbers_are_its_runs():
    text = _preset_text("posix-freertos-tcp")
    marked = {m.group(1) for m in map(_MEASURED.match, text.splitlines()) if m}
    assert marked == {
        "tick_real", "isr_per_packet", "driver_per_packet", "driver_wake_input",
        "rx_path_regular", "rx_path_prio_raise", "rx_path_rejected",
    }  # fmt: skip
    assert provenance_mismatches(text, DATA / "posix-freertos-tcp", DRAINS) == []
    # the stack's split is the drain-counted runs', not the 16:46 runs' (RX interrupts
    # for the drains, SYN and ARP frames together: 6.16 and 35.4 us)
    assert provenance_mismatches(text, DATA / "posix-freertos-tcp") != []


def test_the_plustcp_stack_split_counts_the_ip_tasks_drains():
    """The two kept SYN runs with the IP task's drains counted hand it ~16 and 1 frames a
    drain (--stock-priority 6 and 5); the split reproduces each within 1 %, and a drain
    costs less than the frame's own work (a host-thread switch of the port)."""
    runs = list(_runs(DRAINS).values())
    assert all("stack_wakes" in r for r in runs)
    per = sorted(r["to_stack"] / r["stack_wakes"] for r in runs)
    assert per[0] == pytest.approx(1.0, abs=0.01) and per[1] > 10
    c = board_stack_costs(runs)
    assert 0 < c["driver_wake"] < c["driver_per_packet"]
    for r in runs:
        model = r["to_stack"] * c["driver_per_packet"] + r["stack_wakes"] * c["driver_wake"]
        assert model == pytest.approx(r["stack_cpu"], rel=0.01)


def test_a_number_that_drifts_from_its_run_is_caught():
    text = _preset_text(LWIP)
    drifted = text.replace('isr_per_packet = "6.97us"', 'isr_per_packet = "6.99us"')
    assert drifted != text
    assert [b.split(":")[0] for b in provenance_mismatches(drifted, DATA / LWIP)] == [
        "isr_per_packet"
    ]
    drifted = text.replace('driver_wake = "31.2us"', 'driver_wake = "19.3us"')
    assert [b.split(":")[0] for b in provenance_mismatches(drifted, DATA / LWIP)] == [
        "driver_wake"
    ]


def test_the_stack_costs_split_reproduces_every_run():
    """The least-squares split of the stack's CPU time into a cost per frame and per
    wake-up reproduces each calibration run's stack CPU time within 10 %."""
    runs = [board_measurements(d) for d in sorted((DATA / LWIP).iterdir()) if d.is_dir()]
    c = board_stack_costs(runs)
    assert 0 < c["driver_per_packet"] < c["driver_wake"]
    for r in runs:
        model = r["to_stack"] * c["driver_per_packet"] + r["rx_irqs"] * c["driver_wake"]
        assert model == pytest.approx(r["stack_cpu"], rel=0.10)


def _define(path: Path, name: str) -> int:
    m = re.search(rf"#define {name}\s+(\d+)", path.read_text())
    assert m, f"{name} not in {path}"
    return int(m.group(1))


def test_the_lwip_presets_configured_numbers_are_the_builds():
    """The driver queue is lwIP's input messages to tcpip_thread, its priority the stock
    build's tcpip_thread's, the tick the kernel's; the mailbox and the pbuf pool hold more
    than the messages (they never fill first)."""
    _, _, defaults = load_platform(LWIP)
    opts = ROOT / "libshield" / "port" / "lwip" / "lwipopts.h"
    rig_opts = ROOT / "rig" / "freertos" / "lwip" / "lwipopts.h"
    msgs = _define(opts, "MEMP_NUM_TCPIP_MSG_INPKT")
    assert defaults["driver"]["queue"] == msgs
    assert _define(opts, "TCPIP_MBOX_SIZE") >= msgs
    assert _define(rig_opts, "PBUF_POOL_SIZE") >= msgs
    build = (ROOT / "tools" / "freertos_build.sh").read_text()
    stock = re.search(r"-DTCPIP_THREAD_PRIO=(\d+)", build)
    assert stock and defaults["driver"]["priority"] == int(stock.group(1))
    hz = _define(ROOT / "libshield" / "port" / "freertos" / "config" / "common.h",
                 "configTICK_RATE_HZ")  # fmt: skip
    plat, _, _ = load_platform(LWIP)
    assert plat.tick_ns == 1_000_000_000 // hz


def _lwip_folder(tmp_path: Path) -> Path:
    """A finished `rig lwip` folder on the POSIX board: the fake target's runs as lwIP's,
    the unprotected one's input messages running out (``ip_queue_full``)."""
    out = tmp_path / "out"
    dev = freertos.load_device(SCEN, 6, phase_s=1.0)
    runs = []
    for protect in (False, True):
        raw, _, rd = _fake_run(out, protect)
        raw["target"] = {"stack": "lwip", "board": "posix"}
        d = raw["device"]
        if not protect:
            d["netif"] |= {"stack_exhausted": 0, "ip_queue_full": 30}
            for i, s in enumerate(d["snapshots"]):
                s |= {"stack_exhausted": 0, "ip_queue_full": i}
        d["threads_cpu_ns"] = {"tcpip_threa#7": 20_000_000, "ethif#8": 9_000_000,
                               "critical#9": 600_000_000}  # fmt: skip
        s = freertos.summarize(raw, dev, rd)
        (rd / "summary.json").write_text(json.dumps(s))
        (rd / "device.json").write_text(json.dumps(d))
        runs.append(s)
    sim = freertos.simulate_variants(dev, out)
    own = freertos.simulate_own_rates(out)
    pps = freertos.measured_syn_rate(runs)
    sim_syn = freertos.simulate_variants(dev.at_flood_rate(pps), out, "-rig-rate")
    (out / "comparison.json").write_text(
        json.dumps(freertos.comparison(runs, sim, dev, sim_syn, pps, own))
    )
    return out


def test_an_lwip_run_gets_twin_json_on_its_boards_model(tmp_path):
    out = _lwip_folder(tmp_path)
    twin = json.loads(freertos.write_twin(out).read_text())
    assert twin["target"]["stack"] == "lwip" and twin["board_preset"] == LWIP
    assert {(r["run"], r["model"]) for r in twin["runs"]} == {
        (v, m) for v in ("protected-syn", "unprotected-syn") for m in ("preset", "board")
    }
    board = (out / "sim" / "unprotected-syn-own-rate-board" / "scenario.toml").read_text()
    assert f'platform = "{LWIP}"' in board
    for q in twin["quantities"]:
        assert {"name", "sim", "real", "tolerance", "agrees"} <= set(q)
        assert isinstance(q["agrees"], bool) and q["tolerance"]
    q = {x["name"]: x for x in twin["quantities"]
         if x["run"] == "unprotected-syn" and x["model"] == "board"}  # fmt: skip
    # the model's driver queue is lwIP's input messages: its drops are the same reason
    assert "drops: queue_full" not in q
    drops = q[f"drops: {IP_QUEUE_FULL}"]
    assert drops["real"] == 30 and drops["sim"] is not None
    # the network work: ethif and tcpip_thread, 29 ms, and the fake run's 15 ms of
    # libshield in the RX interrupt (shield_ns), over 30 000 frames at the NIC
    cpu = q["network work: CPU per frame at the NIC"]
    assert cpu["real"] == pytest.approx(44e3 / 30e3, abs=1e-3)
    # on the scenario's preset the same drop has no simulated value, and says why
    p = {x["name"]: x for x in twin["quantities"]
         if x["run"] == "unprotected-syn" and x["model"] == "preset"}  # fmt: skip
    assert p[f"drops: {IP_QUEUE_FULL}"]["sim"] is None
    assert "input queue" in p[f"drops: {IP_QUEUE_FULL}"]["why"]


CEILING = DATA / "posix-freertos-tcp-ceiling"
PTCP_CFG = ROOT / "rig" / "freertos" / "plustcp" / "FreeRTOSIPConfig.h"


def _ceiling_snapshots(run: Path) -> list[dict]:
    """Per 100 ms snapshot of a kept ceiling run in which the stack refused frames for
    want of a buffer: each count's growth since the previous snapshot, each level
    ("_now") as it was, by the stack counters' names."""
    d = json.loads((run / "device.json").read_text())
    names = d["stack"]["names"]
    out = []
    for a, b in zip(d["snapshots"], d["snapshots"][1:], strict=False):
        if b["stack_exhausted"] == a["stack_exhausted"]:
            continue
        pairs = zip(names, a["stack"], b["stack"], strict=True)
        s = {n: (y if n.endswith("_now") else y - x) for n, x, y in pairs}
        s["handed"] = b["to_ip_task"] - a["to_ip_task"]
        s["seconds"] = (b["t_ns"] - a["t_ns"]) / 1e9
        out.append(s)
    return out


def test_the_plustcp_presets_driver_task_is_the_ip_task():
    """The driver task is FreeRTOS-Plus-TCP's IP task at its priority, and the driver
    queue (the frames it takes a tick) fewer than its network buffers."""
    _, _, defaults = load_platform("posix-freertos-tcp")
    prios = _define(ROOT / "libshield" / "port" / "freertos" / "config" / "common.h",
                    "configMAX_PRIORITIES")  # fmt: skip
    assert "(configMAX_PRIORITIES - 2)" in PTCP_CFG.read_text()
    assert defaults["driver"]["priority"] == prios - 2
    assert defaults["driver"]["queue"] < _define(PTCP_CFG, "ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS")


@pytest.mark.parametrize("run", ["unprotected-syn", "unprotected-arp"])
def test_the_plustcp_presets_queue_is_its_ceiling_a_tick(run):
    """What the preset's queue stands on (docs/decisions/twin.md): while the stack ran out
    of buffers it handed the IP task the queue's frames a tick (within one; a snapshot is
    100 ticks), in at most one drain a tick, each drain at most the 64 buffers on average,
    with all 64 in use; its network task, at the IP task's priority, hardly ever blocked."""
    _, _, defaults = load_platform("posix-freertos-tcp")
    queue = defaults["driver"]["queue"]
    bufs = _define(PTCP_CFG, "ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS")
    ticks = _define(ROOT / "rig" / "freertos" / "app" / "rts_device.c", "SNAP_MS")
    snaps = _ceiling_snapshots(CEILING / run)
    assert len(snaps) >= 25  # the attack phase: 3 s
    handed = sum(s["handed"] for s in snaps)
    assert abs(handed / (ticks * len(snaps)) - queue) <= 1.0
    drains = sum(s["ip_drains"] for s in snaps)
    assert all(s["ip_drains"] <= ticks for s in snaps)
    assert 0.85 * ticks * len(snaps) <= drains
    assert sum(s["ip_rx_events"] for s in snaps) / drains < bufs
    assert sorted(s["buffers_used_max_now"] for s in snaps)[1] == bufs
    assert sum(s["net_wakes"] for s in snaps) < drains / 4


def test_the_plustcp_ceiling_is_the_same_whatever_the_frame():
    """A SYN costs the IP task 1.7 times an ARP request's CPU, yet both floods were handed
    over at the same rate (within 10 %): the ceiling is not the IP task's CPU."""
    rate = {}
    cpu = {}
    for run in ("unprotected-syn", "unprotected-arp"):
        snaps = _ceiling_snapshots(CEILING / run)
        rate[run] = sum(s["handed"] for s in snaps) / sum(s["seconds"] for s in snaps)
        d = json.loads((CEILING / run / "device.json").read_text())
        ip = next(v for k, v in d["threads_cpu_ns"].items() if k.startswith("IP-Task"))
        cpu[run] = ip / d["netif"]["to_ip_task"]
    assert rate["unprotected-syn"] == pytest.approx(rate["unprotected-arp"], rel=0.10)
    assert cpu["unprotected-syn"] > 1.5 * cpu["unprotected-arp"]


RATES = DATA / "posix-freertos-tcp-rates"


@pytest.mark.parametrize("run", sorted(p.name for p in RATES.iterdir() if p.is_dir()))
def test_below_the_plustcp_ceiling_the_stack_still_runs_out_of_buffers(run):
    """Held out at 20 000 and 35 000 pkt/s, evenly spaced (docs/decisions/twin-rates.md):
    while the stack refused frames for want of a buffer, with all 64 in use, it took
    fewer frames a tick than the preset's queue (the modelled ceiling); the IP task
    drained in fewer than nine ticks of ten, and the network task blocked between frames
    (it woke more than half as often as the IP task drained; at the ceiling, fewer than a
    quarter): a model that drains its queue every tick refuses none of these frames."""
    _, _, defaults = load_platform("posix-freertos-tcp")
    queue = defaults["driver"]["queue"]
    bufs = _define(PTCP_CFG, "ipconfigNUM_NETWORK_BUFFER_DESCRIPTORS")
    ticks = _define(ROOT / "rig" / "freertos" / "app" / "rts_device.c", "SNAP_MS")
    flood = json.loads((RATES / run / "summary.json").read_text())["flood"]
    assert flood["rate_asked_pps"] in (20_000, 35_000) and flood["achieved"] > 0.9
    snaps = _ceiling_snapshots(RATES / run)
    assert len(snaps) >= 15  # the attack phase: 3 s
    assert sum(s["handed"] for s in snaps) / (ticks * len(snaps)) < queue - 1
    drains = sum(s["ip_drains"] for s in snaps)
    assert drains < 0.9 * ticks * len(snaps)
    assert sorted(s["buffers_used_max_now"] for s in snaps)[len(snaps) // 2] == bufs
    assert sum(s["net_wakes"] for s in snaps) > drains / 2


LWIP_RATES = DATA / "posix-freertos-lwip-rates"


@pytest.mark.parametrize("attack", ["syn", "arp"])
def test_below_lwips_limit_the_stack_still_refuses_frames(attack):
    """lwIP at 5 000 pkt/s, evenly spaced (docs/decisions/twin-rates.md): fewer frames a
    tick at the NIC than tcpip_thread's input messages (the preset's queue), spread over
    every snapshot of the attack (none with more than a quarter above their mean), yet
    lwIP refused frames in every snapshot: a model that takes the queue's frames every
    tick refuses none of them."""
    _, _, defaults = load_platform(LWIP)
    queue = defaults["driver"]["queue"]
    run = LWIP_RATES / f"unprotected-{attack}-5000pps"
    snaps = json.loads((run / "device.json").read_text())["snapshots"]
    lo, hi = json.loads((run / "summary.json").read_text())["device_bounds_ns"][1]
    pairs = [(a, b) for a, b in zip(snaps[:-1], snaps[1:], strict=True)
             if lo <= a["t_ns"] and b["t_ns"] <= hi]  # fmt: skip
    assert len(pairs) >= 20  # the attack phase: 3 s of 100-tick snapshots
    frames = [b["nic_frames"] - a["nic_frames"] for a, b in pairs]
    refused = [b["ip_queue_full"] - a["ip_queue_full"] for a, b in pairs]
    mean = sum(frames) / len(frames)
    assert mean / 100 < queue and max(frames) < 1.25 * mean
    assert min(refused) > 0
