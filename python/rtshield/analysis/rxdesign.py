"""Design for the receive path (Behnke et al. §2.4, §5.5, §5.6, §7.3.2), each
answer checked by simulating it.

``rtshield design --scenario FILE --knob KEY`` on a scenario with ``[rx]`` or
a multiqueue NIC answers:

* ``flow.NAME.server`` with ``--rate R``: the per-flow deferrable server that
  serves R packets/s — the longest server period p whose budget
  ⌈R · p⌉ (libshield ``rts_bursty_burst_for_period()``) keeps the critical
  task schedulable. Simulated twice: the flow at exactly R must get every
  packet through its server, and the flow flooding at 20 R must not make the
  critical task miss;
* ``rx.global_capacity``: the largest global limit (packets per global
  period) that keeps the critical task schedulable, simulated under a
  low-priority flood, at the answer and one packet beyond;
* ``nic.queue.NAME`` with ``--rate R`` and ``--max-delay T``: the absolute
  and packet timers of a multiqueue NIC queue by Behnke §7.3.2's rules,
  evaluated by libshield (``rts_nic_params_t_abs_max()``, ``rts_nic_params_t_qf()``,
  ``rts_nic_params_check()``): t_abs = min(t_d, t_qf) − WCPD — as large as
  possible ("to minimize the number of interrupts, this parameter needs to
  be maximized") but neither beyond the delay the process allows nor beyond
  the time the queue takes to fill (the paper's two reasons for the bound;
  its formula's max(t_d, t_qf) − WCPD allows more, and the answer satisfies
  it, docs/decisions/analysis-model.md) — and t_pack = t_abs, the largest in
  t_P ≤ t_pack ≤ t_abs ("increasing this value generally decreases the
  number of interrupts"). Simulated with the flow at R: nothing lost to a
  full queue, and its largest latency within t_d.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from rtshield.errors import UsageError
from rtshield.units import format_ns

from . import native
from .model import rx_packet_task_ns, system_from_scenario
from .report import Report, analyze_system
from .search import analyse_scenario, boundary, safe

__all__ = ["RxDesign", "design_server", "design_global_limit", "design_nic_queue"]

#: How long each checking simulation runs (simulated time).
CHECK_NS = 500_000_000
#: A flow's flood in the server design: this many times its required rate.
FLOOD_FACTOR = 20


@dataclass
class RxDesign:
    question: str
    answer: dict  # the proposed values (ns for times)
    report: Report | None  # the analysis at the answer
    checks: list[tuple[str, bool]] = field(default_factory=list)  # simulated checks
    notes: list[str] = field(default_factory=list)

    @property
    def confirmed(self) -> bool:
        return bool(self.checks) and all(ok for _, ok in self.checks)

    def margin_ns(self) -> int | None:
        return None if self.report is None else self.report.result.min_slack()

    def to_json(self) -> dict:
        m = self.margin_ns()
        out = {
            "question": self.question,
            "answer": self.answer,
            "margin_us": None if m is None else m / 1000,
            "notes": self.notes,
            "simulated": [{"check": c, "ok": ok} for c, ok in self.checks],
            "confirmed": self.confirmed,
        }
        if self.report is not None:
            out["analysis"] = self.report.to_json()
        return out

    def text(self) -> str:
        lines = [self.question]
        for k, v in self.answer.items():
            shown = format_ns(v) if k.endswith("_ns") and isinstance(v, int) else v
            lines.append(f"  {k.removesuffix('_ns')} = {shown}")
        m = self.margin_ns()
        if self.report is not None:
            lines.append(
                f"  analysis: margin (smallest D - WCRT) = {'-' if m is None else format_ns(m)}"
            )
        lines += [f"  {n}" for n in self.notes]
        for c, ok in self.checks:
            lines.append(f"  simulated: {c} - {'ok' if ok else 'FAILED'}")
        if self.checks:
            lines.append(f"  confirmed: {'yes' if self.confirmed else 'NO'}")
        if self.report is not None:
            lines += ["", self.report.table()]
        return "\n".join(lines)


def _flow_named(sc, name: str):
    for f in sc.flows:
        if f.name == name:
            return f
    raise UsageError(f"--knob flow.{name}.server: no flow {name!r} in the scenario")


def _replace_flow(sc, name: str, **kw):
    return dataclasses.replace(
        sc, flows=tuple(dataclasses.replace(f, **kw) if f.name == name else f for f in sc.flows)
    )


def _at_constant_rate(sc, name: str, rate_pps: float):
    """``sc`` with its flow ``name`` sent evenly at ``rate_pps`` from time 0."""
    return dataclasses.replace(
        sc,
        flows=tuple(f.at_constant_rate(rate_pps) if f.name == name else f for f in sc.flows),
    )


def _run(sc, duration_ns: int = CHECK_NS):
    from rtshield.engine import simulate

    n = -(-duration_ns // sc.critical.period_ns)
    d = n * sc.critical.period_ns
    return simulate(dataclasses.replace(sc, duration_ns=d, bin_ns=d))


def design_server(sc, flow_name: str, rate_pps: float) -> RxDesign:
    """The longest server period (and its budget for ``rate_pps``) that keeps
    the critical task schedulable; simulated at the rate and under a flood."""
    if sc.rx is None:
        raise UsageError("--knob flow.NAME.server: the scenario has no [rx] (the receive path)")
    _flow_named(sc, flow_name)  # a flow the scenario lacks is a usage error
    system_from_scenario(sc)  # names what the mapping cannot express

    def with_budget(k: int):
        p = int(k * 1e9 // rate_pps)  # p = k / R: the server's rate c / p is R, not more
        c = native.ds_budget_for_rate(rate_pps, p)
        return _replace_flow(sc, flow_name, capacity=c, server_period_ns=p), c, p

    # analysed with the flow flooding as it is simulated (20 R): the traffic's arrival
    # curve caps the receive interrupt, so the scenario's gentler rate would not do
    def ok(k: int) -> bool:
        return safe(analyse_scenario(_at_constant_rate(with_budget(k)[0], flow_name,
                                                       FLOOD_FACTOR * rate_pps)))

    good, bad = boundary(ok, 1, 1_000_000, largest=True)
    q = f"flow.{flow_name}.server for {rate_pps:g} pkt/s"
    if good is None:
        return RxDesign(
            q,
            {},
            None,
            notes=[
                "even one packet per 1/R leaves the critical task unschedulable "
                f"at {rate_pps:g} pkt/s"
            ],
        )
    best, c, p = with_budget(good)
    d = RxDesign(
        q,
        {"capacity": c, "server_period_ns": p, "rate_pps": c * 1e9 / p},
        analyze_system(system_from_scenario(_at_constant_rate(best, flow_name,
                                                              FLOOD_FACTOR * rate_pps))),
        notes=[
            "the longest server period p = c / R whose budget c = ceil(R * p) (libshield "
            "rts_bursty_burst_for_period) keeps the critical task schedulable",
            f"per packet of the flow: {format_ns(rx_packet_task_ns(sc))} in the network task",
        ],
    )
    if bad is not None:
        _, c2, p2 = with_budget(bad)
        d.notes.append(f"one step beyond (budget {c2} per {format_ns(p2)}): not schedulable")
    else:
        d.notes.append(
            "no budget up to the search's end (10^6 packets) makes the critical task "
            "unschedulable: the flow does not run above it; choose the period by the flow's "
            "latency instead"
        )
    # (i) the flow at exactly its rate: the server lets every packet through
    at_rate = _at_constant_rate(best, flow_name, rate_pps)
    res = _run(at_rate)
    st = res.flows[flow_name]
    refused = st["dropped_by"].get("flow_server", 0)
    in_flight = st["offered"] - st["delivered"] - st["dropped"]
    # at most the packets of the last critical period may still be on their way
    late = 1 + rate_pps * sc.critical.period_ns / 1e9
    d.checks.append(
        (
            f"flow at {rate_pps:g} pkt/s: {st['delivered']} of {st['offered']} delivered, "
            f"{refused} refused by its server, {st['dropped']} lost, {in_flight} in flight "
            f"at the end (at most {late:g} allowed)",
            st["dropped"] == 0 and in_flight <= late,
        )
    )
    d.checks.append(
        (
            f"critical task at that rate: {res.critical['misses']} missed deadlines",
            res.critical["misses"] == 0,
        )
    )
    # (ii) the flow flooding at 20x its rate: the server protects the critical task
    flood = _at_constant_rate(best, flow_name, FLOOD_FACTOR * rate_pps)
    res = _run(flood)
    d.checks.append(
        (
            f"flow flooding at {FLOOD_FACTOR * rate_pps:g} pkt/s: critical task max response "
            f"{format_ns(round(res.critical['max_response_us'] * 1000))}, "
            f"{res.critical['misses']} missed deadlines",
            res.critical["misses"] == 0,
        )
    )
    return d


def design_global_limit(sc) -> RxDesign:
    """The largest global capacity per global period that keeps the critical task schedulable."""
    rx = sc.rx
    if rx is None or not rx.global_capacity:
        raise UsageError(
            "--knob rx.global_capacity: the scenario sets no global limit ([rx] global_capacity "
            "and global_period)"
        )
    system_from_scenario(sc)

    def with_g(g: int):
        return dataclasses.replace(sc, rx=dataclasses.replace(rx, global_capacity=g))

    def against_any_traffic(g: int):
        # the limit must hold whatever arrives: with an unbounded flood beside the
        # scenario's flows the receive interrupt is bounded by the limit alone
        from rtshield.scenario import Flow

        s = with_g(g)
        flood = Flow("any_traffic", "udp", 6999, 60, 0, "poisson", 0, rate_pps=1.0)
        return dataclasses.replace(s, flows=s.flows + (flood,))

    good, bad = boundary(
        lambda g: safe(analyse_scenario(against_any_traffic(g))), 1, 1_000_000, largest=True
    )
    q = f"rx.global_capacity per {format_ns(rx.global_period_ns)}"
    if good is None:
        return RxDesign(q, {}, None, notes=["even one packet per global period is unsafe"])
    d = RxDesign(
        q,
        {
            "global_capacity": good,
            "global_period_ns": rx.global_period_ns,
            "rate_pps": good * 1e9 / rx.global_period_ns,
        },
        analyze_system(system_from_scenario(against_any_traffic(good))),
        notes=[
            "the largest global limit: G frames per period through the ISR and G per "
            "period harvested by the polling task keep the critical task schedulable"
        ],
    )
    # a low-priority flood far above the limit
    from rtshield.scenario import Flow

    lp = Flow(
        "lp_flood_check",
        "udp",
        6999,
        60,
        0,
        "constant",
        0,
        rate_pps=min(500_000.0, 50 * good * 1e9 / rx.global_period_ns),
    )
    for g, label in ((good, "at the answer"), (bad, "one packet beyond")):
        if g is None:
            continue
        s = with_g(g)
        res = _run(dataclasses.replace(s, flows=s.flows + (lp,)))
        line = (
            f"{label} (G = {g}) under a {lp.rate_pps:g} pkt/s flood: critical task max response "
            f"{format_ns(round(res.critical['max_response_us'] * 1000))}, "
            f"{res.critical['misses']} missed deadlines"
        )
        if g == good:
            d.checks.append((line, res.critical["misses"] == 0))
        else:
            d.notes.append("simulated " + line)
    return d


def design_nic_queue(sc, queue: str, rate_pps: float, max_delay_ns: int) -> RxDesign:
    """Behnke §7.3.2: the absolute and packet timers of one multiqueue NIC queue."""
    if sc.nic.kind != "multiqueue":
        raise UsageError("--knob nic.queue.NAME: the scenario's [nic] kind is not multiqueue")
    qs = {q.name: q for q in sc.nic.queues}
    if queue not in qs:
        raise UsageError(f"--knob nic.queue.{queue}: no [[nic.queues]] named {queue!r}")
    if rate_pps <= 0:
        raise UsageError("--rate: must be positive")
    nq = qs[queue]
    # the stack's time per packet (t_netstack): a registered flow's packet is handed over
    t_net = sc.costs["driver_per_packet"] + sc.costs.get("driver_handover", 0)
    sizes = [q.size for q in sc.nic.queues]
    wcpd = native.nic_wcpd(t_net, sizes)
    t_p = round(1e9 / rate_pps)
    from rtshield.engine import WORKER_MAILBOX_DEFAULT

    # the receiving worker's mailbox is a queue too: a batch larger than it is lost
    # (docs/decisions/analysis-model.md), so the queue fills at the smaller of the two
    box = min(
        (
            t.queue or WORKER_MAILBOX_DEFAULT
            for t in sc.tasks
            if t.kind == "worker" and t.flow in {f.name for f in sc.flows if f.nic_queue == queue}
        ),
        default=nq.size,
    )
    n_eff = min(nq.size, box)
    t_qf = native.nic_t_qf(n_eff, t_p)
    rule = native.nic_t_abs_max(max_delay_ns, t_qf, wcpd)  # the paper's bound, max(t_d, t_qf)
    # the design's choice: within the rule, neither longer than the process allows
    # (t_d) nor longer than the queue takes to fill (t_qf) - see the module doc
    t_abs = native.nic_t_abs_max(min(max_delay_ns, t_qf), 0, wcpd)
    q = f"nic.queue.{queue} for {rate_pps:g} pkt/s within {format_ns(max_delay_ns)}"
    if t_abs == 0:
        return RxDesign(
            q,
            {},
            None,
            notes=[
                f"no absolute timer fits: min(t_d, t_qf) = {format_ns(min(max_delay_ns, t_qf))} "
                f"is not above WCPD = {format_ns(wcpd)} (Behnke §7.3.2)"
            ],
        )
    if t_abs < t_p:
        return RxDesign(
            q,
            {},
            None,
            notes=[
                f"t_P = {format_ns(t_p)} > t_abs = {format_ns(t_abs)}: no packet timer satisfies "
                "t_P <= t_pack <= t_abs (Behnke §7.3.2); allow more delay or a larger queue"
            ],
        )
    t_pack = t_abs
    bits = native.nic_check(t_net, sum(sizes), nq.size, t_p, max_delay_ns, t_abs, t_pack)
    viol = native.nic_violations(bits)
    d = RxDesign(
        q,
        {"absolute_ns": t_abs, "packet_ns": t_pack, "wcpd_ns": wcpd, "t_qf_ns": t_qf},
        None,
        notes=[
            f"t_qf = min(n_q = {nq.size}, the worker's mailbox = {box}) / R = {format_ns(t_qf)}; "
            f"t_abs = min(t_d, t_qf) - WCPD = min({format_ns(max_delay_ns)}, {format_ns(t_qf)}) "
            f"- {format_ns(wcpd)} (WCPD = t_netstack {format_ns(t_net)} x {sum(sizes)} "
            f"descriptors); the paper's rule allows up to max(t_d, t_qf) - WCPD = "
            f"{format_ns(rule)}; t_pack = t_abs, the largest of t_P <= t_pack <= t_abs",
            "libshield rts_nic_params_check: "
            + ("every rule holds" if not viol else "violates " + ", ".join(sorted(viol))),
        ],
    )
    d.checks.append(("rts_nic_params_check accepts the timers", not viol))
    # WCPD against the critical task's slack (Behnke §7.3.2: "smaller than the minimum slack")
    base = dataclasses.replace(
        sc, flows=(), nic=dataclasses.replace(sc.nic, kind="edge", queues=())
    )
    slack = analyze_system(system_from_scenario(base)).result.min_slack()
    d.checks.append(
        (
            f"WCPD {format_ns(wcpd)} <= the critical task's slack "
            f"{'-' if slack is None else format_ns(slack)} (analysis)",
            slack is not None and wcpd <= slack,
        )
    )
    nqs = tuple(
        dataclasses.replace(x, absolute_ns=t_abs, packet_ns=t_pack) if x.name == queue else x
        for x in sc.nic.queues
    )
    flows = [f for f in sc.flows if f.nic_queue == queue]
    if not flows:
        d.notes.append(f"no flow of the scenario uses queue {queue}: nothing to simulate")
        return d
    f0 = flows[0]
    s = dataclasses.replace(sc, nic=dataclasses.replace(sc.nic, queues=nqs))
    s = _at_constant_rate(s, f0.name, rate_pps)
    res = _run(s, max(CHECK_NS, 10 * t_abs))
    st = res.flows[f0.name]
    lat = round(st["latency_us"]["max"] * 1000)
    lost = st["dropped"]
    in_flight = st["offered"] - st["delivered"] - lost
    d.checks.append(
        (
            f"flow {f0.name} at {rate_pps:g} pkt/s: {st['delivered']} of {st['offered']} "
            f"delivered, {lost} lost, {in_flight} in flight at the end, largest latency "
            f"{format_ns(lat)} <= t_d = {format_ns(max_delay_ns)}",
            st["delivered"] > 0
            and lost == 0
            and in_flight <= rate_pps * t_abs / 1e9 + 1
            and lat <= max_delay_ns,
        )
    )
    return d
