"""NIC moderation parameter rules (Behnke et al. §7.3.2, §7.3.4, Table 1).

For queues ``q`` of size ``n_q`` with absolute timer ``t_abs(q)``, packet
timer ``t_pack(q)``, maximum expected rate ``R_max(q)``, allowed added delay
``t_d(q)`` and expected packet period ``t_P(f)``:

* ``WCPD = t_netstack · Σ n_q`` must not exceed the smallest slack of the
  real-time tasks (all queues deliver a full burst at once);
* ``t_abs(q) ≤ max(t_d(q), t_qf(q)) − WCPD`` with ``t_qf(q) = n_q / R_max(q)``;
* ``t_P(f) ≤ t_pack(q) ≤ t_abs(q)``;
* on-NIC memory ``m · 30 B + 14 B`` (the 14 B ARP queue is optional; the
  numbers are libshield's ``rts_nic_moderation_memory_bytes()``) must fit the register
  memory when a budget is given.

Each rule is reported as pass/fail with the inequality and its numbers. The
verdicts come from libshield's ``rts_nic_params_check()`` (through
:mod:`.native`), the check a device runs on its own configuration; this module
only formats them.
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
    total = sum(sizes)
    for q in nic.queues:
        # t_P of the rate bound (1/R_max) fixes t_qf; the flow's expected period
        # (flow_period, default 1/R_max) bounds the packet timer from below.
        t_rmax = round(1e9 / q.max_rate_hz) if q.max_rate_hz > 0 else 0
        t_p = q.flow_period if q.flow_period is not None else t_rmax
        t_qf = native.nic_t_qf(q.size, t_rmax)
        bound = native.nic_t_abs_max(q.max_delay, t_qf, wcpd)  # 0: no window at all
        # the verdicts are libshield's rts_nic_params_check(), the runtime's own check
        v_abs = native.nic_violations(
            native.nic_check(nic.t_netstack, total, q.size, t_rmax, q.max_delay, q.t_abs, q.t_pack)
        )
        v_pack = native.nic_violations(
            native.nic_check(nic.t_netstack, total, q.size, t_p, q.max_delay, q.t_abs, q.t_pack)
        )
        checks.append(
            Check(
                f"t_abs({q.name})",
                not v_abs & {"size", "no_window", "tabs"},
                f"t_abs = {format_ns(q.t_abs)} ≤ max(t_d = {format_ns(q.max_delay)}, "
                f"t_qf = n_q/R_max = {format_ns(t_qf)}) − WCPD = {format_ns(bound)}",
            )
        )
        checks.append(
            Check(
                f"t_pack({q.name})",
                not v_pack & {"tpack_low", "tpack_high"},
                f"t_P = {format_ns(t_p)} ≤ t_pack = {format_ns(q.t_pack)} ≤ "
                f"t_abs = {format_ns(q.t_abs)}",
            )
        )
    mem = native.nic_memory_bytes(len(nic.queues), nic.arp_queue)
    # the terms of libshield's memory function, for the message
    per_queue = native.nic_memory_bytes(1, arp_queue=False)
    arp = native.nic_memory_bytes(0, arp_queue=True)
    if nic.memory_bytes is not None:
        checks.append(
            Check(
                "memory",
                mem <= nic.memory_bytes,
                f"m·{per_queue} B{f' + {arp} B' if nic.arp_queue else ''} = {mem} B "
                f"≤ {nic.memory_bytes} B",
                "Behnke et al. §7.3.4, Table 1",
            )
        )
    derived = {
        "wcpd_us": wcpd / 1000,
        "memory_bytes": mem,
        "min_slack_us": None if slack is None else slack / 1000,
    }
    return checks, derived
