"""Behnke et al.'s receive path and multiqueue NIC in scenario files.

Schema tests (loading, defaults, refusals: one line naming the file and the
key, exit 2, nothing written) need only the binding's declarations. The
tests after "the engine's receive path" below run the simulator's receive
path (sim/src/rx.c) and fail with a clear message until it is built.
"""

import json
import re
from pathlib import Path

import pytest
from cli_checks import one_line
from scenario_texts import HP_LP_FLOWS, cases, edited, refused

from rtshield import cli
from rtshield.scenario import (
    DEFAULT_SRC,
    MAX_NIC_QUEUES,
    RX_COST_KEYS,
    load_platform,
    load_scenario,
    loads_scenario,
    native_limits,
)

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "scenarios" / "examples"
HP = EXAMPLES / "behnke_hp_with_flood.toml"
HP_OPEN = EXAMPLES / "behnke_hp_with_flood_unprotected.toml"
MQ = EXAMPLES / "multiqueue_table2.toml"

BASE = (
    """
[scenario]
name = "rx"
platform = "zynq7000-freertos-tcp"
duration = "2s"

[rx]
cache = "lazy"
"""
    # the hp flow with its deferrable server: one packet per millisecond
    + HP_LP_FLOWS.replace("priority = 5\n", 'priority = 5\ncapacity = 1\nserver_period = "1ms"\n')
    + """
[[tasks]]
name = "hp_rx"
kind = "worker"
flow = "hp"
priority = 5
work = "20us"
"""
)

MQ_BASE = """
[scenario]
name = "mq"
platform = "esp32-multiqueue-nic"
duration = "2s"

[[flows]]
name = "m0"
protocol = "tcp"
dst_port = 502
size = 66
nic_queue = "q0"
pattern = "poisson"
rate = "200pps"

[[flows]]
name = "flood"
protocol = "udp"
dst_port = 9999
bind = false
pattern = "constant"
rate = "5000pps"
"""


def load(text, origin="x.toml", overrides=None):
    return loads_scenario(text, origin, overrides)


def flow_edit(text, flow, old, new):
    """Replace ``old`` by ``new`` within the [[flows]] table named ``flow``."""
    start = text.index(f'name = "{flow}"')
    end = text.find("[[", start)
    end = len(text) if end < 0 else end
    seg = text[start:end]
    assert old in seg, (old, seg)
    return text[:start] + seg.replace(old, new, 1) + text[end:]


# ---------------------------------------------------------------- binding limits


def test_native_limits_come_from_the_binding():
    lim = native_limits()
    assert lim["prio_levels"] == 32  # RTS_FLOW_PRIO_LEVELS default
    assert lim["pool_max"] == 256  # RTS_POOL_MAX_BUFS default
    assert lim["flow_max"] == 16  # RTS_FLOW_MAX default
    assert lim["frame_max"] == 1522
    assert lim["nic_queues"] == MAX_NIC_QUEUES


# ---------------------------------------------------------------- loading


def test_hp_example_loads_with_preset_defaults():
    s = load_scenario(HP)
    assert s.rx is not None
    assert s.rx.buffers == 128 and s.nic.kind == "dma_ring" and s.nic.ring == 64
    assert s.rx.cache == "lazy" and s.rx.short_circuit and s.rx.recycle_below is None
    assert s.rx.global_capacity == 0 and s.rx.poll_priority is None
    hp, lp = s.flows
    assert (hp.protocol, hp.dst_port, hp.priority, hp.capacity, hp.server_period_ns) == (
        "udp", 5000, 5, 1, 1_000_000)
    assert hp.bind and lp.bind and hp.src == DEFAULT_SRC and hp.src_port == 40000
    assert hp.vlan_pcp is None and hp.queue is None and lp.capacity is None
    assert all(k in s.costs for k in RX_COST_KEYS)


def test_unprotected_example_has_no_rx_even_though_the_preset_has_rx_defaults():
    s = load_scenario(HP_OPEN)
    assert s.rx is None
    assert s.nic.kind == "dma_ring" and s.nic.ring == 64


def test_multiqueue_example_loads():
    s = load_scenario(MQ)
    assert s.rx is None and s.nic.kind == "multiqueue"
    assert [(q.name, q.size, q.absolute_ns, q.packet_ns) for q in s.nic.queues] == [
        ("q0", 128, None, None),
        ("q1", 128, 30_000_000, 20_000_000),
        ("q2", 128, 40_000_000, 30_000_000),
        ("q3", 128, 80_000_000, 70_000_000),
    ]
    assert [f.nic_queue for f in s.flows] == ["q0", "q1", "q2", "q3", None]
    assert not s.flows[-1].bind
    assert [t.flow for t in s.tasks] == ["modbus0", "modbus1", "modbus2", "modbus3"]


def test_multiqueue_preset_gives_table2_queues_by_default():
    s = load(MQ_BASE)
    assert [q.name for q in s.nic.queues] == ["q0", "q1", "q2", "q3"]
    assert s.nic.queues[3].absolute_ns == 80_000_000


def test_rx_keys_and_global_limit():
    text = BASE.replace('cache = "lazy"', 'cache = "eager"\nshort_circuit = false\nbuffers = 96\n'
                        'recycle_below = 16\nglobal_capacity = 3\nglobal_period = "2ms"\n'
                        "poll_priority = 1")
    s = load(text)
    assert s.rx.cache == "eager" and not s.rx.short_circuit and s.rx.buffers == 96
    assert s.rx.recycle_below == 16
    assert (s.rx.global_capacity, s.rx.global_period_ns, s.rx.poll_priority) == (3, 2_000_000, 1)


def test_global_limit_keys_are_ignored_with_capacity_0():
    """A sweep over global_capacity = 0, 3, ... keeps one file valid."""
    text = BASE.replace('cache = "lazy"', 'global_period = "2ms"\npoll_priority = 1')
    s = load(text)
    assert (s.rx.global_capacity, s.rx.global_period_ns, s.rx.poll_priority) == (0, None, None)
    s = load(text, overrides={"rx": {"global_capacity": 3}})
    assert (s.rx.global_capacity, s.rx.global_period_ns, s.rx.poll_priority) == (3, 2_000_000, 1)


def test_empty_rx_table_enables_and_enabled_false_disables():
    s = load(BASE.replace('cache = "lazy"', ""))
    assert s.rx is not None and s.rx.cache == "lazy"
    plain = BASE.replace("capacity = 1\nserver_period = \"1ms\"\n", "")
    assert load(plain, overrides={"rx": {"enabled": False}}).rx is None


def test_flow_frame_keys():
    text = flow_edit(BASE, "lp", 'dst_port = 6000',
                     'dst_port = 6000\nsrc = "10.0.0.7"\nsrc_port = 1234\nvlan_pcp = 6\n'
                     "queue = 32")
    lp = load(text).flows[1]
    assert (lp.src, lp.src_port, lp.vlan_pcp, lp.queue) == ("10.0.0.7", 1234, 6, 32)


def test_icmp_and_arp_flows_have_no_socket():
    text = BASE + '\n[[flows]]\nname = "ping"\nprotocol = "icmp"\npattern = "constant"\n' \
        'rate = "10pps"\n'
    assert not load(text).flows[-1].bind


def test_two_flows_may_share_a_port_when_one_is_not_bound():
    text = flow_edit(BASE, "lp", "dst_port = 6000", "dst_port = 5000\nbind = false")
    assert [f.bind for f in load(text).flows] == [True, False]


def test_without_rx_a_shared_port_and_big_priorities_are_as_before():
    text = (REPO / "scenarios" / "examples" / "modbus_with_flood.toml").read_text()
    s = load(text.replace("dst_port = 9\n", "dst_port = 502\npriority = 200\n"))
    assert s.rx is None and s.flows[1].priority == 200 and s.flows[1].dst_port == 502


def test_mitigation_also_combines_danicki_protections():
    text = BASE + (
        '\n[mitigation]\nkind = "burst"\nalso = ["hysteresis", "queue"]\nslice = "20ms"\n'
        'capacity = 600\nblock_below = 0.1\nunblock_above = 0.5\n'
    )
    m = load(text).mitigation
    assert m.kind == "burst" and m.also == ("hysteresis", "queue")
    assert (m.capacity, m.block_below, m.unblock_above, m.sleep_ns) == (600, 0.1, 0.5, 1_000_000)
    p = m.parameters()
    assert p["also"] == ["hysteresis", "queue"] and p["slice"] == "20ms" and p["sleep"] == "1ms"


def test_preset_costs_decompose_behnke_measurements():
    """Behnke §6.2's published per-packet totals, rebuilt from the preset's costs (ns)."""
    _, c, _ = load_platform("zynq7000-freertos-tcp")
    # at Figure 9's rates every frame wakes the network task: driver_wake once per frame
    assert (c["isr_entry_exit"] + c["isr_per_packet"] + c["driver_wake"]
            + c["driver_per_packet"]) == 12_100
    assert c["isr_entry_exit"] + c["rx_path_short_circuit"] == 1_620
    assert c["isr_entry_exit"] + c["rx_path_recycle"] == 1_750
    assert c["isr_entry_exit"] + c["rx_path_short_circuit"] + c["invalidate_eager"] == 4_400
    # an HP packet finds the network task at its own low priority: the prio+ ISR path
    assert (c["isr_entry_exit"] + c["rx_path_prio_raise"] + c["invalidate_deferred"]
            + c["driver_wake"] + c["driver_per_packet"]) == 12_300


def test_docs_list_the_nic_queue_keys():
    doc = (REPO / "docs" / "scenarios.md").read_text()
    start = doc.index("#### `[[nic.queues]]`")
    section = doc[start:doc.find("\n##", start + 4)]
    documented = {ln.split("|")[1].strip().strip("`") for ln in section.splitlines()
                  if ln.startswith("| `")}
    text = MQ_BASE.replace('[[flows]]', '[nic]\nkind = "multiqueue"\n[[nic.queues]]\n'
                           'name = "q0"\nsize = 1\nzzz_unknown = 1\n\n[[flows]]', 1)
    msg = refused(text, "[nic.queues #1] zzz_unknown: unknown key")
    allowed = set(re.search(r"allowed: ([^)]*)\)", msg).group(1).replace(" ", "").split(","))
    assert documented == allowed


# ---------------------------------------------------------------- refusals (loader)
# The cases and their one-line messages: tests/data/rx_refusals.toml.


@pytest.mark.parametrize("case", cases("rx_refusals.toml", "rx"))
def test_rx_refusal(case):
    refused(edited(BASE, case), *case["expect"])


#: BASE without [rx] and without the hp flow's server.
PLAIN = BASE.replace("[rx]\ncache = \"lazy\"\n", "").replace(
    "capacity = 1\nserver_period = \"1ms\"\n", "")


@pytest.mark.parametrize("case", cases("rx_refusals.toml", "plain"))
def test_refusal_without_rx(case):
    refused(edited(PLAIN, case), *case["expect"])


@pytest.mark.parametrize("case", cases("rx_refusals.toml", "multiqueue"))
def test_multiqueue_refusal(case):
    refused(edited(MQ_BASE, case), *case["expect"])


def test_more_bound_flows_than_the_flow_table_holds(monkeypatch):
    from rtshield import _native

    lim = dict(native_limits())
    lim["flow_max"] = 5  # room for one user flow besides the 4 special ones
    monkeypatch.setattr(_native, "native_limits", lambda: lim)
    refused(BASE, "[[flows]] bind: 2 bound flows; libshield's flow table holds 1")


# ---------------------------------------------------------------- refusals (command line)


#: The refusals that `rtshield run` is checked with too (cli = true), with their text.
CLI_CASES = [pytest.param(p.values[0], text, id=p.id)
             for table, text in (("rx", BASE), ("plain", PLAIN), ("multiqueue", MQ_BASE))
             for p in cases("rx_refusals.toml", table) if p.values[0].get("cli")]


@pytest.mark.parametrize("case, base", CLI_CASES)
def test_refusal_is_one_line_exit_2_nothing_written(tmp_path, capsys, case, base):
    f = tmp_path / "bad.toml"
    f.write_text(edited(base, case))
    one_line(capsys, ["run", f, "--out", tmp_path / "o"], str(f), *case["expect"])
    assert not (tmp_path / "o").exists()


def test_bound_flow_limit_from_the_cli(tmp_path, capsys, monkeypatch):
    from rtshield import _native

    lim = dict(native_limits())
    lim["flow_max"] = 5
    monkeypatch.setattr(_native, "native_limits", lambda: lim)
    f = tmp_path / "bad.toml"
    f.write_text(BASE)
    one_line(capsys, ["run", f, "--out", tmp_path / "o"], "bad.toml", "2 bound flows")
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------- the engine's receive path


def rx_engine():
    """``(ffi, lib)`` when the simulator has the receive path, else a clear failure."""
    from rtshield._native import load

    ffi, lib = load()
    for sym in ("rtsim_rx_stats_get", "rtsim_in_flight", "rtsim_frame_min"):
        try:
            getattr(lib, sym)
        except AttributeError:
            pytest.fail(f"the simulator has no {sym}: the engine's receive path "
                        "(sim/src/rx.c) is not built yet")
    return ffi, lib


def run(path, **over):
    from rtshield.engine import simulate

    rx_engine()
    sc = load_scenario(path, overrides={"scenario": {"duration": "8s", **over}})
    return simulate(sc)


def conserved(summary):
    t = summary["totals"]
    in_flight = summary.get("rx", {}).get("in_flight", 0)
    return t["offered"] == t["delivered"] + sum(t["dropped"].values()) + in_flight


def test_rx_run_has_the_receive_path_section():
    r = run(HP)
    s = r.summary()
    assert set(s["rx"]) >= {"paths", "polls", "poll_cpu_s", "prio_changes", "to_poll",
                            "in_flight", "polling_s"}
    assert set(s["rx"]["paths"]) == {"regular", "short_circuit", "prio_raise", "recycle",
                                     "rejected"}
    assert sum(p["count"] for p in s["rx"]["paths"].values()) > 0
    assert s["rx"]["prio_changes"] > 0  # HP packets raise the network task
    assert max(r.timeseries["net_prio_max"]) >= 5
    assert conserved(s)
    for name, f in s["flows"].items():
        assert set(f["dropped_by"]) == set(s["totals"]["dropped"]), name
        assert sum(f["dropped_by"].values()) == f["dropped"], name
        assert f["received"] >= f["processed"] >= f["delivered"] - 0, name


def test_rx_protects_the_hp_flow_and_the_critical_task():
    s = run(HP).summary()
    hp = s["flows"]["hp"]
    assert hp["delivered"] >= 0.99 * hp["offered"], hp
    assert s["critical"]["misses"] == 0, s["critical"]
    # LP frames that never get the CPU cost only the ISR: short circuit or regular path
    assert s["flows"]["lp_flood"]["processed"] < s["flows"]["lp_flood"]["received"]


def test_original_stack_misses_deadlines_under_the_same_flood():
    s = run(HP_OPEN, duration="20s").summary()  # the flood passes 83 000 pkt/s after 12 s
    assert "rx" not in s
    assert s["critical"]["misses"] > 0
    protected = run(HP, duration="20s").summary()
    assert protected["critical"]["misses"] == 0
    assert protected["flows"]["hp"]["delivered"] > s["flows"]["hp"]["delivered"]


def test_global_limit_polls():
    from rtshield.engine import simulate

    rx_engine()
    sc = load_scenario(HP, overrides={
        "scenario": {"duration": "8s"},
        # the polling task above the always-ready measuring task (priority 2)
        "rx": {"global_capacity": 3, "global_period": "2ms", "poll_priority": 4}})
    r = simulate(sc)
    s = r.summary()
    assert "polling" in s["tasks"] and s["rx"]["to_poll"] > 0 and s["rx"]["polls"] > 0
    assert s["rx"]["polling_s"] > 0 and float(r.timeseries["polling_s"].sum()) > 0
    assert conserved(s)


def test_multiqueue_drops_the_unregistered_flood_in_the_nic():
    s = run(MQ).summary()
    flood = s["flows"]["flood"]
    assert flood["dropped_by"]["nic_unregistered"] == flood["offered"] > 0
    assert flood["received"] == 0
    for k in range(4):
        m = s["flows"][f"modbus{k}"]
        assert m["delivered"] + m["dropped"] <= m["offered"]
    # moderation: fewer interrupts than packets
    assert 0 < s["totals"]["irq_per_packet"] < 1


def test_rx_run_writes_its_figures(tmp_path, capsys):
    rx_engine()
    out = tmp_path / "o"
    assert cli.main(["run", str(HP), "--out", str(out), "--quiet", "--set",
                     "scenario.duration=4s"]) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert "rx" in summary
    assert (out / "rx_priority.png").is_file()
    html = (out / "report.html").read_text()
    assert "Receive path" in html


def test_priority_changes_are_traced():
    from rtshield.engine import TRACE_KINDS, simulate

    rx_engine()
    sc = load_scenario(HP, overrides={"scenario": {"duration": "1s"}})
    tr = simulate(sc, trace=100_000).trace
    prio = tr[tr["kind"] == TRACE_KINDS.index("prio")]
    assert len(prio) > 0
    assert set(prio["value"].tolist()) <= {1, 5}  # the driver's own and the HP flow's
