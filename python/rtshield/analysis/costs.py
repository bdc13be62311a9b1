"""What each analysed interrupt costs: the simulator's charges in Regehr & Duongsaa's symbols.

The analysis charges every interrupt exactly what the engine charges for it
(docs/model.md):

* an RX interrupt: ``isr_entry_exit + isr_per_packet`` plus
  ``mitigation_isr`` when the protection has a per-frame hook in the RX ISR
  (libshield's ``rts_shield_hooks()`` says which, :func:`.native.shield_hooked`),
  and ``isr_rx_batch`` (the ISR's body once per interrupt) when the preset sets
  it; ``isr_queue_full`` instead of ``isr_per_packet`` when it is dearer (a
  packet that finds the driver's queue full): :func:`rx_isr_work`;
* a limiter timer interrupt: ``isr_entry_exit + timer_isr``;
* the RTOS tick: ``isr_entry_exit + tick_isr``.

In Regehr & Duongsaa's terms (:func:`platform_costs`): ``t_int`` =
``isr_entry_exit``, ``t_expire`` = ``isr_entry_exit + timer_isr``,
``t_count`` = ``mitigation_isr``; the engine folds the enable-bit flip, the
timer set-up and the counter clear into those, so ``t_flip``, ``t_setup`` and
``t_clear`` are 0. A preset that states Table 2's constants itself
(``atmega103-tinyos``, ``ethernut-avr``) keeps them for system files; a
scenario always uses the engine's charges (:func:`engine_costs`).

A system file's platform (:func:`.system.load_platform`) and a scenario's
model (:func:`.model.system_from_scenario`) both read their cost tables here.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import native

__all__ = ["FOLDED", "engine_costs", "platform_costs", "rx_isr_hooked", "rx_isr_work"]

#: Regehr & Duongsaa's constants that the engine folds into other charges.
FOLDED = ("t_flip", "t_setup", "t_clear")


def rx_isr_hooked(kind: str) -> bool:
    """Does protection ``kind`` do per-frame work in the RX ISR (``mitigation_isr``)?"""
    return native.shield_hooked(kind, "RX_ISR")


def rx_isr_work(costs: Mapping[str, int], per_packet: int | None = None) -> int:
    """The RX handler's work per interrupt (one packet) beyond entry/exit and the
    protection's hook, as the engine charges it at its dearest: the packet's work
    (``per_packet``, default ``isr_per_packet``; ``isr_queue_full`` when the queue is
    full and that costs more) plus ``isr_rx_batch``."""
    work = costs["isr_per_packet"] if per_packet is None else per_packet
    return max(work, costs.get("isr_queue_full", 0)) + costs.get("isr_rx_batch", 0)


def platform_costs(costs: Mapping[str, int], tick_ns: int, tick_isr_ns: int) -> dict[str, int]:
    """The analysis' cost table from a preset's (or a scenario's) simulator costs.

    Keys the table already has (a preset stating Regehr's Table 2) are kept;
    the missing ones are derived from the engine's charges as the module doc
    says. ``tick`` is the tick period, ``tick_isr`` the whole tick interrupt.
    """
    out = dict(costs)
    ee = costs.get("isr_entry_exit")
    if ee is not None:
        out.setdefault("t_int", ee)
        if "timer_isr" in costs:
            out.setdefault("t_expire", ee + costs["timer_isr"])
        if "mitigation_isr" in costs:
            out.setdefault("t_count", costs["mitigation_isr"])
        for k in FOLDED:
            out.setdefault(k, 0)
    out["tick"] = tick_ns
    out["tick_isr"] = (ee or 0) + tick_isr_ns
    return out


def engine_costs(sc) -> dict[str, int]:
    """Costs of a scenario, mapped so each analysed interrupt costs what the engine charges."""
    k = sc.costs
    ee = k["isr_entry_exit"]
    out = dict(k)
    out.update(
        t_int=ee,
        t_expire=ee + k["timer_isr"],
        t_count=k["mitigation_isr"] if rx_isr_hooked(sc.mitigation.kind) else 0,
        tick=sc.platform.tick_ns,
        tick_isr=ee + sc.platform.tick_isr_ns,
    )
    for f in FOLDED:
        out[f] = 0
    out["t_poll"] = 0  # polling: the engine charges the timer interrupt and the handler only
    if sc.mitigation.kind == "strict":
        # the strict limiter's per-frame hook (disable, arm the one-shot timer)
        out["t_setup"], out["t_count"] = out["t_count"], 0
    return out
