"""NIC moderation parameter rules (Behnke et al. §7.3.2, §7.3.4, Table 1).

For queues ``q`` of size ``n_q`` with absolute timer ``t_abs(q)``, packet
timer ``t_pack(q)``, maximum expected rate ``R_max(q)``, allowed added delay
``t_d(q)`` and expected packet period ``t_P(f)``:

* ``WCPD = t_netstack · Σ n_q`` must not exceed the smallest slack of the
  real-time tasks (all queues deliver a full burst at once);
* ``t_abs(q) ≤ max(t_d(q), t_qf(q)) − WCPD`` with ``t_qf(q) = n_q / R_max(q)``;
* ``t_P(f) ≤ t_pack(q) ≤ t_abs(q)``;
* on-NIC memory ``m · 30 B + 14 B`` (the 14 B ARP queue is optional) must fit
  the register memory when a budget is given.

Each rule is reported as pass/fail with the inequality and its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtshield.units import format_ns

from . import native
from .system import Nic

__all__ = ["Check", "check_nic"]


@dataclass
class Check:
    rule: str  # short name, e.g. "t_abs(q0)"
    ok: bool
    inequality: str  # the inequality with numbers filled in
    source: str = "Behnke et al. §7.3.2"

    def as_dict(self) -> dict:
        return {
            "rule": self.rule,
            "ok": self.ok,
            "inequality": self.inequality,
            "source": self.source,
        }


def check_nic(nic: Nic, min_slack_ns: int | None) -> tuple[list[Check], dict]:
    """Evaluate the rules; returns the checks and derived values (µs, bytes)."""
    checks: list[Check] = []
    sizes = [q.size for q in nic.queues]
    wcpd = native.nic_wcpd(nic.t_netstack, sizes)
    slack = nic.min_slack if nic.min_slack is not None else min_slack_ns
    if slack is None:
        checks.append(
            Check(
                "WCPD",
                False,
                f"WCPD = {format_ns(wcpd)} ≤ min slack: no finite slack "
                "(a task is unschedulable or unbounded)",
            )
        )
    else:
        checks.append(
            Check(
                "WCPD",
                wcpd <= slack,
                f"WCPD = t_netstack·Σn_q = {format_ns(nic.t_netstack)}·{sum(sizes)} "
                f"= {format_ns(wcpd)} ≤ min slack {format_ns(slack)}",
            )
        )
    for q in nic.queues:
        t_qf = round(q.size * 1e9 / q.max_rate_hz) if q.max_rate_hz > 0 else 0
        bound = native.nic_t_abs_max(q.max_delay, t_qf, wcpd)  # 0: no window at all
        checks.append(
            Check(
                f"t_abs({q.name})",
                0 < bound and q.t_abs <= bound,
                f"t_abs = {format_ns(q.t_abs)} ≤ max(t_d = {format_ns(q.max_delay)}, "
                f"t_qf = n_q/R_max = {format_ns(t_qf)}) − WCPD = {format_ns(bound)}",
            )
        )
        t_p = (
            q.flow_period
            if q.flow_period is not None
            else (round(1e9 / q.max_rate_hz) if q.max_rate_hz > 0 else 0)
        )
        checks.append(
            Check(
                f"t_pack({q.name})",
                t_p <= q.t_pack <= q.t_abs,
                f"t_P = {format_ns(t_p)} ≤ t_pack = {format_ns(q.t_pack)} ≤ "
                f"t_abs = {format_ns(q.t_abs)}",
            )
        )
    mem = native.nic_memory_bytes(len(nic.queues), nic.arp_queue)
    if nic.memory_bytes is not None:
        checks.append(
            Check(
                "memory",
                mem <= nic.memory_bytes,
                f"m·30 B{' + 14 B' if nic.arp_queue else ''} = {mem} B ≤ {nic.memory_bytes} B",
                "Behnke et al. §7.3.4, Table 1",
            )
        )
    derived = {
        "wcpd_us": wcpd / 1000,
        "memory_bytes": mem,
        "min_slack_us": None if slack is None else slack / 1000,
    }
    return checks, derived
