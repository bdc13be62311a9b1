"""Regehr & Duongsaa §7 (the Ethernut) as objectives of ``rtshield calibrate``.

The calibration tool checks a study's claims on the runs of one point
(:data:`RUNS`, :data:`CLAIMS`, :func:`evaluate`: docs/calibrate.md). The
Regehr study's own checks (``rtshield.studies.regehr2005``: ``eth_overload``,
``eth_600``, ``eth_tone``) are the one home of the three §7 claims; this
module runs them on the two Ethernut scenarios of one calibration point, and
adds the strict reading of the third that docs/decisions/regehr.md examines:
an *undistorted* tone, every 2 ms flip on time, under a flood above
10 000 pps (``eth_tone_clean``). ``scenarios/calibration/regehr2005_ethernut.toml``
searches the model choices §7 leaves open against these four.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rtshield.outputs import normalize
from rtshield.studies import regehr2005 as rg

__all__ = ["RUNS", "CLAIMS", "evaluate", "tone_clean"]

#: ``{run: (scenario stem in scenarios/regehr2005/, overrides)}``: the board
#: unprotected and under the bursty scheduler, one second per flood level.
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "eth/none": ("ethernut_none", {}),
    "eth/bursty": ("ethernut_bursty", {}),
}


@dataclass(frozen=True)
class Claim:
    key: str
    text: str
    check: Callable[[rg.Results], tuple[bool, str]]


@dataclass(frozen=True)
class Verdict:
    claim: Claim
    holds: bool | None
    value: str


def tone_clean(r: rg.Results) -> tuple[bool, str]:
    """Every flip on time (no missed 2 ms period) in every second above 10 000 pps."""
    prot = [x for x in r.eth if x["system"] == "bursty" and x["offered_pps"] > 10_000]
    if not prot:
        raise KeyError("eth/bursty above 10 000 pps")
    low = min(x["speaker_cycles"] for x in prot)
    late = max(x["speaker_misses"] for x in prot)
    return low >= rg.SPEAKER_HZ and late == 0, (
        f"{low} of {rg.SPEAKER_HZ} flips per second at least, {late} late")


CLAIMS: tuple[Claim, ...] = (
    Claim("eth_overload", "§7: unprotected, silence between 1500 and 1600 pps", rg.eth_overload),
    Claim("eth_600", "§7: 15 interrupts per 25 ms, at most 600 pps", rg.eth_600),
    Claim("eth_tone", "§7: with the scheduler, a tone above 10 000 pps", rg.eth_tone),
    Claim("eth_tone_clean", "§7 read strictly: an undistorted tone above 10 000 pps",
          tone_clean),
)


def _summary(r: Any) -> dict[str, Any]:
    """A run's summary with its per-second series, as the study keeps it."""

    s = normalize(r.summary())
    s["series"] = {k: [int(v) for v in r.timeseries[k]] for k in rg.SERIES}
    return s


def evaluate(results: Mapping[str, Any]) -> list[Verdict]:
    """Check every claim on ``{run: simulated result}`` of :data:`RUNS`."""
    res = rg.Results.of({run: _summary(r) for run, r in results.items()})
    out = []
    for c in CLAIMS:
        ok, value = c.check(res)
        out.append(Verdict(c, bool(ok), value))
    return out
