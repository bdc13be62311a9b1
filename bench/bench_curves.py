#!/usr/bin/env python3
"""The steps curve's evaluation (issue 26): η⁺ of the Danicki pyramid (0 → 150 000
→ 0 pkt/s in 10 000 pkt/s steps: 31 rate steps) and what it costs a design.

    PYTHONPATH=python python bench/bench_curves.py [--repeat 3]

Rows, best of ``--repeat`` (CPU time of this process, so that other jobs on the
machine weigh less than in wall time):

* ``eta``: ``Steps.eta`` on 2 000 windows drawn with a fixed seed (1 ns to 50 ms),
  a fresh curve each repeat (nothing kept between repeats), per call;
* ``delta_min``: ``Steps.delta_min`` for 2 … 59 arrivals, per call;
* ``design``: ``design_knob(sc, "mitigation.burst")`` on ``queue_500.toml`` with the
  bursty limiter of 100 per 5 ms, as tests/test_design_knobs.py
  (``test_limiter_knobs_confirmed[bursty-mitigation.burst]``) runs it, the
  boundary simulated.

A digest of the values evaluated is printed too: two trees (before and after a
change) must print the same one. Run it with PYTHONPATH naming the tree to
measure; the results are recorded by hand in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import random
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _cpu(f) -> tuple[float, object]:
    t0 = time.process_time()
    v = f()
    return time.process_time() - t0, v


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-design", action="store_true", help="the curve rows only")
    args = ap.parse_args()

    from rtshield.analysis.curves import flow_curve
    from rtshield.analysis.knobs import design_knob
    from rtshield.scenario import Mitigation, load_scenario

    sc = load_scenario(REPO / "scenarios" / "danicki2021" / "queue_500.toml")
    rng = random.Random(1)
    deltas = [rng.randrange(1, 50_000_000) for _ in range(2000)]
    ns = range(2, 60)
    best: dict[str, float] = {}
    digest = answer = None

    def keep(key: str, t: float) -> None:
        best[key] = min(best.get(key, t), t)

    for _ in range(args.repeat):
        curve = flow_curve(sc.flows[0], sc.duration_ns)
        t, etas = _cpu(lambda c=curve: [c.eta(d) for d in deltas])
        keep("eta", t)
        curve = flow_curve(sc.flows[0], sc.duration_ns)
        t, dms = _cpu(lambda c=curve: [c.delta_min(n) for n in ns])
        keep("delta_min", t)
        digest = hashlib.sha256(repr((etas, dms)).encode()).hexdigest()[:16]
        if not args.no_design:
            at = dataclasses.replace(sc, mitigation=Mitigation("bursty", burst=100,
                                                               period_ns=5_000_000))
            t, d = _cpu(lambda at=at: design_knob(at, "mitigation.burst"))
            keep("design", t)
            answer = d.value
    print(f"curve: {len(curve._b)} rate steps; values digest {digest}")
    print(f"eta: {best['eta'] / len(deltas) * 1e6:.1f} us per call (CPU)")
    print(f"delta_min: {best['delta_min'] / len(ns) * 1e3:.2f} ms per call (CPU)")
    if "design" in best:
        print(f"design mitigation.burst: {best['design']:.2f} s CPU, answer N = {answer}")


if __name__ == "__main__":
    main()
