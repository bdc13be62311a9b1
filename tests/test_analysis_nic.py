"""NIC moderation rules (Behnke et al. §7.3.2, §7.3.4)."""

import pytest

from rtshield.analysis import analyze_system, load_system
from rtshield.analysis.nic_rules import check_nic
from rtshield.analysis.system import Nic, NicQueue

US = 1000


def nic(**kw):
    q = dict(name="q0", size=8, t_abs=2000 * US, t_pack=1000 * US, max_rate_hz=1000.0,
             max_delay=3000 * US, flow_period=None)
    q.update(kw.pop("q", {}))
    base = dict(t_netstack=10 * US, queues=[NicQueue(**q)], arp_queue=True, memory_bytes=None,
                min_slack=None, irq_cost=None, priority=0)
    base.update(kw)
    return Nic(**base)


def by_rule(checks):
    return {c.rule: c for c in checks}


def test_all_pass_and_values():
    checks, vals = check_nic(nic(memory_bytes=44), min_slack_ns=1000 * US)
    assert all(c.ok for c in checks), [c.inequality for c in checks if not c.ok]
    assert vals["wcpd_us"] == 80 and vals["memory_bytes"] == 44


def test_wcpd_exceeds_slack():
    c = by_rule(check_nic(nic(), min_slack_ns=79 * US)[0])["WCPD"]
    assert not c.ok and "80us" in c.inequality and "79us" in c.inequality


def test_t_abs_bound():
    # t_qf = 8 / 1000 Hz = 8 ms; max(3 ms, 8 ms) - 80 us = 7.92 ms
    ok = by_rule(check_nic(nic(q={"t_abs": 7920 * US, "t_pack": 1000 * US}), 10**9)[0])
    assert ok["t_abs(q0)"].ok
    bad = by_rule(check_nic(nic(q={"t_abs": 7921 * US, "t_pack": 1000 * US}), 10**9)[0])
    assert not bad["t_abs(q0)"].ok and "7.92ms" in bad["t_abs(q0)"].inequality


@pytest.mark.parametrize("t_pack, ok", [(999 * US, False), (1000 * US, True),
                                        (2000 * US, True), (2001 * US, False)])
def test_t_pack_between_flow_period_and_t_abs(t_pack, ok):
    c = by_rule(check_nic(nic(q={"t_pack": t_pack}), 10**9)[0])["t_pack(q0)"]
    assert c.ok == ok


def test_memory_rule():
    c = by_rule(check_nic(nic(memory_bytes=43), 10**9)[0])["memory"]
    assert not c.ok and "44 B" in c.inequality
    c = by_rule(check_nic(nic(memory_bytes=30, arp_queue=False), 10**9)[0])["memory"]
    assert c.ok


def test_slack_from_analysis(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[[task]]\nname = "c"\nwcet = "9.95ms"\nperiod = "10ms"\npriority = 1\n'
                 '[nic]\nt_netstack = "10us"\n[[nic.queue]]\nname = "q"\nsize = 8\n'
                 't_abs = "2ms"\nt_pack = "1ms"\nmax_rate = "1kHz"\nmax_delay = "3ms"\n')
    rep = analyze_system(load_system(p))
    assert not rep.schedulable  # slack 50 us < WCPD 80 us
    assert rep.to_json()["nic"]["min_slack_us"] == 50
    assert not by_rule(rep.nic_checks)["WCPD"].ok
