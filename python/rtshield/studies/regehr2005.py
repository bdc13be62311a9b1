"""Regehr & Duongsaa, *Preventing Interrupt Overload* (LCTES 2005), §§6–7, simulated and checked.

Three experiments, scenarios in ``scenarios/regehr2005/``:

* **Figures 1–2** (§6.2–6.3): one external interrupt on the ATmega103L mote
  (``atmega103-tinyos`` preset) at offered rates from 0.26 to 16 kHz, handled
  by pure interrupts, pure polling (§2, §5.2), the strict scheduler (§3.2),
  the bursty scheduler with N = 4 and N = 16 (§3.3) and the hardware
  scheduler (§3.4), all limited to 4 kHz; the handler does no work
  (Figure 1) or 250 cycles (Figure 2). CPU overhead is measured *passively*,
  as the paper does: the progress a lowest-priority background task loses
  against a run with no interrupts at all.
* **§6.4** (Figure 3): two sources behind bursty schedulers sharing one
  200 Hz timer (bursts 5 and 7), at 400 and 781 Hz, against the same
  sources unprotected; and one source at 1 kHz with N = 4 and N = 16.
* **§7**: the Ethernut board (``ethernut-avr`` preset) under a rising flood,
  unprotected and with a bursty scheduler of 15 interrupts per 25 ms, a
  speaker task at the highest thread priority every 2 ms.

The points run in worker processes like the other studies' points; the
claims are checked by :func:`evaluate`. ``docs/validation.md`` lists them
with the values of a full run, ``docs/decisions/regehr.md`` every reading
the paper leaves open.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtshield.analysis import analyze_system, load_system
from rtshield.outputs import normalize
from rtshield.runner import simulate
from rtshield.scenario import load_scenario
from rtshield.studies import common
from rtshield.studies.common import Claim, Point, Verdict
from rtshield.studies.common import merge as _merge
from rtshield.studies.common import table as _table
from rtshield.tomlfile import read_toml

#: Figures 1–2: (key, scenario file stem, label).
FIG_CONFIGS: tuple[tuple[str, str, str], ...] = (
    ("interrupts", "fig_interrupts", "pure interrupts"),
    ("polling", "fig_polling", "pure polling"),
    ("strict", "fig_strict", "strict software scheduler"),
    ("bursty4", "fig_bursty4", "bursty software scheduler, N = 4"),
    ("bursty16", "fig_bursty16", "bursty software scheduler, N = 16"),
    ("hardware", "fig_hardware", "hardware scheduler"),
)
#: The schedulers of the §6.2 bounds and the bound of each (lost CPU capacity
#: relative to the hardware scheduler, percentage points).
BOUNDS_PCT = {"strict": 10.0, "bursty4": 5.0, "bursty16": 2.2}
#: §6.1: periodic interrupts "between 0.26 kHz and 16 kHz" (Hz).
RATES: tuple[int, ...] = (260, 500, 1_000, 2_000, 3_000, 4_000, 6_000, 8_000, 12_000, 16_000)
#: The limit every scheduler enforces (§6.1), Hz.
LIMIT_HZ = 4_000
#: The handler's work per figure (§6.2: none; §6.3: 250 cycles).
FIG_WORK = {1: "0cyc", 2: "250cyc"}
#: §6.4's paper values (percent of the CPU).
PAPER_64 = {"two": 1.1, "bursty4": 4.1, "bursty16": 2.1}
#: Tolerance of §6.4's overheads (percentage points): Table 2's constants are
#: "approximate" instruction counts.
TOL_64_PP = 0.5
#: §6.4: the flood that checks the two sources' limits (chosen: 8× the limits, Hz).
FLOOD_64 = {"a": 8_000, "b": 11_200}
#: §6.4: "maximum average arrival rates of 1 kHz and 1.4 kHz" (5 and 7 per 5 ms).
LIMITS_64 = {"a": 1_000, "b": 1_400}
#: §7: the speaker's nominal cycles per second (one every 2 ms).
SPEAKER_HZ = 500


@dataclass(frozen=True)
class Plan:
    """What to run (the defaults are the study's; tests shorten them)."""

    rates: tuple[int, ...] = RATES
    figures: tuple[int, ...] = (1, 2)
    duration: str | None = None  #: Figures 1–2 and §6.4 runs (None: the files' 1 s)
    parts: tuple[str, ...] = ("fig", "s64", "s4", "eth")
    eth_duration: str | None = None  #: None: the Ethernut files' (one second per flood level)
    #: --set, merged into every point (a scenario duration or bin not into the Ethernut runs)
    overrides: Mapping[str, Any] = field(default_factory=dict)


def study_dir() -> Path:
    """``scenarios/regehr2005``: inside the installed package, else the source tree."""
    return common.study_dir("regehr2005")


# ------------------------------------------------------------------ points


def _doc(path: Path) -> dict[str, Any]:
    return read_toml(path)


def _rated(doc: Mapping[str, Any], rates: Mapping[str, float]) -> list[dict[str, Any]]:
    """The document's ``[[flows]]`` with the named flows' constant rates replaced."""
    flows = [dict(f) for f in doc.get("flows", [])]
    for f in flows:
        if f["name"] in rates:
            f["rate"] = f"{int(rates[f['name']])}pps"
    return flows


def points(plan: Plan, folder: Path | None = None) -> list[Point]:
    """Every run of the plan, in a stable order."""
    d = folder or study_dir()
    out: list[Point] = []

    def add(name: str, stem: str, ov: dict[str, Any], duration: str | None,
            series: bool = False) -> None:
        if duration:
            ov = _merge(ov, {"scenario": {"duration": duration}})
        extra = dict(plan.overrides)
        if series and isinstance(extra.get("scenario"), Mapping):
            # the Ethernut runs keep one second per flood level (eth_duration shortens them)
            extra["scenario"] = {k: v for k, v in extra["scenario"].items()
                                 if k not in ("duration", "bin")}
        ov = _merge(ov, extra)
        sc = ov.get("scenario", {})
        if "duration" in sc and "bin" not in plan.overrides.get("scenario", {}) and not series:
            sc["bin"] = sc["duration"]  # one bin per run: a shorter --set duration stays valid
        out.append(Point(name, str(d / f"{stem}.toml"), ov, series))

    if "fig" in plan.parts:
        for fig in plan.figures:
            for key, stem, _ in FIG_CONFIGS:
                doc = _doc(d / f"{stem}.toml")
                srcs = [{**s, "isr_work": FIG_WORK[fig]} for s in doc.get("sources", [])]
                for rate in (0, *plan.rates):
                    add(f"fig{fig}/{key}/{rate}", stem,
                        {"flows": _rated(doc, {"irq": rate}), "sources": srcs}, plan.duration)
    if "s64" in plan.parts:
        add("s64/two_none", "two_sources_none", {}, plan.duration)
        add("s64/two_bursty", "two_sources_bursty", {}, plan.duration)
        doc = _doc(d / "two_sources_bursty.toml")
        add("s64/two_flood", "two_sources_bursty",
            {"flows": _rated(doc, {"a": FLOOD_64["a"], "b": FLOOD_64["b"]})}, plan.duration)
        for key, stem in (("interrupts", "fig_interrupts"), ("bursty4", "fig_bursty4"),
                          ("bursty16", "fig_bursty16")):
            doc = _doc(d / f"{stem}.toml")
            ov: dict[str, Any] = {"flows": _rated(doc, {"irq": 1_000})}
            if key != "interrupts":
                ov["mitigation"] = {"timer": "periodic"}  # §6.4 amortises a periodic timer
            add(f"s64/single/{key}", stem, ov, plan.duration)
    if "s4" in plan.parts:
        for bits in (2, 1):
            add(f"s4/bits{bits}", "enable_bits", {"mitigation": {"enable_bits": bits}},
                plan.duration)
    if "eth" in plan.parts:
        for key in ("none", "bursty"):
            add(f"eth/{key}", f"ethernut_{key}", {}, plan.eth_duration, series=True)
    return out


#: Time-series columns kept for the Ethernut runs.
SERIES = ("offered", "processed", "cycles", "misses")


def _run_point(pt: Point) -> tuple[str, dict[str, Any]]:
    sc = load_scenario(pt.path, pt.overrides, overrides_origin="--set")
    r = simulate(sc)
    s = normalize(r.summary())
    if pt.series:
        s["series"] = {k: [int(v) for v in r.timeseries[k]] for k in SERIES}
    return pt.name, s


def run_points(pts: Sequence[Point], jobs: int = 2,
               on_done: Callable[[int, int], None] | None = None) -> dict[str, dict[str, Any]]:
    """Simulate every point, ``jobs`` at a time in worker processes; ``{name: summary}``
    (the Ethernut runs, the long ones, first)."""
    return common.run_points(pts, _run_point, jobs, on_done)


# ------------------------------------------------------------------ measures


def _bg(s: Mapping[str, Any]) -> float:
    return float(s["tasks"]["measure"]["cpu_s"])


def overhead_pct(s: Mapping[str, Any], ref: Mapping[str, Any]) -> float:
    """CPU overhead of run ``s``: the background task's lost progress against ``ref``, in %."""
    return (_bg(ref) - _bg(s)) / float(s["duration_s"]) * 100.0


def fig_table(res: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per figure, configuration and rate: overhead and admitted interrupts."""
    rows = []
    for fig in (1, 2):
        ref = res.get(f"fig{fig}/interrupts/0")
        if ref is None:
            continue
        for key, _, _ in FIG_CONFIGS:
            names = [n for n in res if n.startswith(f"fig{fig}/{key}/")]
            for rate in sorted(int(n.rsplit("/", 1)[1]) for n in names):
                s = res[f"fig{fig}/{key}/{rate}"]
                f = s["flows"]["irq"]
                rows.append({
                    "figure": fig,
                    "config": key,
                    "rate_hz": rate,
                    "overhead_pct": round(overhead_pct(s, ref), 4),
                    "admitted_hz": round(f["delivered"] / float(s["duration_s"]), 1),
                    "latency_p99_us": f.get("latency_us", {}).get("p99"),
                })
    return rows


def s64_table(res: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """§6.4's overheads (%): the two-source schedulers, and one source at 1 kHz with N = 4, 16."""
    out: dict[str, float] = {}
    if "s64/two_none" in res and "s64/two_bursty" in res:
        out["two"] = overhead_pct(res["s64/two_bursty"], res["s64/two_none"])
    base = res.get("s64/single/interrupts")
    for key in ("bursty4", "bursty16"):
        if base is not None and f"s64/single/{key}" in res:
            out[key] = overhead_pct(res[f"s64/single/{key}"], base)
    return out


def eth_table(res: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per Ethernut run and flood level (second): speaker cycles, packets processed."""
    rows = []
    for key in ("none", "bursty"):
        s = res.get(f"eth/{key}")
        if s is None:
            continue
        ser = s["series"]
        for i, off in enumerate(ser["offered"]):
            rows.append({"system": key, "second": i, "offered_pps": off,
                         "processed_pps": ser["processed"][i], "speaker_cycles": ser["cycles"][i],
                         "speaker_misses": ser["misses"][i]})
    return rows


@dataclass
class Results:
    """The study's numbers: the point summaries and the tables."""

    points: dict[str, dict[str, Any]]
    fig: list[dict[str, Any]]
    s64: dict[str, float]
    eth: list[dict[str, Any]]

    @classmethod
    def of(cls, res: dict[str, dict[str, Any]]) -> Results:
        return cls(res, fig_table(res), s64_table(res), eth_table(res))

    def curve(self, fig: int, key: str) -> dict[int, float]:
        """``{rate: overhead %}`` of one configuration (KeyError when not run)."""
        c = {r["rate_hz"]: r["overhead_pct"] for r in self.fig
             if r["figure"] == fig and r["config"] == key}
        if not c:
            raise KeyError(f"fig{fig}/{key}")
        return c


# ------------------------------------------------------------------ claims


def _bound(key: str) -> Callable[[Results], tuple[bool, str]]:
    def check(r: Results) -> tuple[bool, str]:
        c, hw = r.curve(1, key), r.curve(1, "hardware")
        diff = {rate: c[rate] - hw[rate] for rate in c if rate in hw and rate > 0}
        worst = max(diff, key=lambda k: diff[k])
        return diff[worst] <= BOUNDS_PCT[key], (
            f"at most {diff[worst]:.2f} % (at {worst / 1000:g} kHz)")

    return check


def strict_full_rate(r: Results) -> tuple[bool, str]:
    rows = [x for x in r.fig if x["figure"] == 1 and x["config"] == "strict"
            and x["rate_hz"] >= LIMIT_HZ]
    if not rows:
        raise KeyError("fig1/strict at or above 4 kHz")
    low = min(x["admitted_hz"] for x in rows)
    high = max(x["admitted_hz"] for x in rows)
    return low >= 0.998 * LIMIT_HZ and high <= LIMIT_HZ + 1, (
        f"{low:g}–{high:g} interrupts/s admitted at offered rates ≥ 4 kHz")


def flattens(r: Results) -> tuple[bool, str]:
    parts, ok = [], True
    for key in ("strict", "bursty4", "bursty16", "hardware"):
        c = r.curve(1, key)
        over = [c[x] for x in c if x >= LIMIT_HZ]
        if len(over) < 2:
            raise ValueError("needs two rates at or above 4 kHz")
        spread = max(over) - min(over)
        ok &= spread <= 0.5
        parts.append(f"{key} {spread:.2f}")
    return ok, "spread of the overhead at ≥ 4 kHz (pp): " + ", ".join(parts)


def interrupts_linear(r: Results) -> tuple[bool, str]:
    c = r.curve(1, "interrupts")
    per = [c[x] / x for x in c if x > 0]
    spread = (max(per) - min(per)) / (sum(per) / len(per))
    top = max(c)
    above = all(c[top] > r.curve(1, k)[top] for k in ("polling", "strict", "bursty4",
                                                       "bursty16", "hardware"))
    return spread <= 0.02 and above, (
        f"{sum(per) / len(per) * 1000:.3f} % per kHz (spread {spread * 100:.2f} %); "
        f"{c[top]:.1f} % at {top / 1000:g} kHz, above every scheduler: {'yes' if above else 'no'}")


def polling_constant(r: Results) -> tuple[bool, str]:
    c = r.curve(1, "polling")
    vals = [c[x] for x in c]
    return max(vals) - min(vals) <= 0.1, f"{min(vals):.2f}–{max(vals):.2f} %"


def approach_zero(r: Results) -> tuple[bool, str]:
    low = min(x for x in r.curve(1, "strict") if x > 0)
    vals = {k: r.curve(1, k)[low] for k in ("strict", "bursty4", "bursty16", "hardware")}
    poll = r.curve(1, "polling")[low]
    ok = all(v <= 1.5 and v < poll / 4 for v in vals.values())
    return ok, (f"at {low / 1000:g} kHz: " + ", ".join(f"{k} {v:.2f} %" for k, v in vals.items())
                + f" (polling {poll:.2f} %)")


def hardware_ideal(r: Results) -> tuple[bool, str]:
    hw, pi = r.curve(1, "hardware"), r.curve(1, "interrupts")
    under = max(abs(hw[x] - pi[x]) for x in hw if 0 < x <= LIMIT_HZ)
    over = [hw[x] for x in hw if x >= LIMIT_HZ]
    flat = max(over) - min(over)
    return under <= 0.05 and flat <= 0.05, (
        f"differs from pure interrupts by ≤ {under:.3f} pp up to 4 kHz; "
        f"flat within {flat:.3f} pp above")


def polling_rises(r: Results) -> tuple[bool, str]:
    c = r.curve(2, "polling")
    rates = sorted(x for x in c if x > 0)
    mono = all(c[a] <= c[b] + 1e-9 for a, b in zip(rates, rates[1:], strict=False))
    rise = c[rates[-1]] - c[rates[0]]
    return mono and rise >= 10.0, (
        f"{c[rates[0]]:.1f} % at {rates[0] / 1000:g} kHz → {c[rates[-1]]:.1f} % at "
        f"{rates[-1] / 1000:g} kHz")


def penalty_smaller(r: Results) -> tuple[bool, str]:
    parts, ok = [], True
    for key in ("strict", "bursty4", "bursty16"):
        rel = []
        for fig in (1, 2):
            c, hw = r.curve(fig, key), r.curve(fig, "hardware")
            top = max(c)
            rel.append((c[top] - hw[top]) / hw[top] * 100)
        ok &= rel[1] < rel[0]
        parts.append(f"{key} {rel[0]:.0f} % → {rel[1]:.0f} %")
    return ok, "overhead beyond the hardware scheduler's, relative to it, Fig. 1 → Fig. 2: " + (
        ", ".join(parts))


def _s64(r: Results, key: str) -> float:
    if key not in r.s64:
        raise KeyError(f"s64/{key}")
    return r.s64[key]


def _s64_claim(key: str) -> Callable[[Results], tuple[bool, str]]:
    def check(r: Results) -> tuple[bool, str]:
        v = _s64(r, key)
        return abs(v - PAPER_64[key]) <= TOL_64_PP, f"{v:.2f} %"

    return check


def two_limits(r: Results) -> tuple[bool, str]:
    s = r.points.get("s64/two_flood")
    if s is None:
        raise KeyError("s64/two_flood")
    dur = float(s["duration_s"])
    got = {k: s["flows"][k]["delivered"] / dur for k in LIMITS_64}
    ok = all(0.99 * LIMITS_64[k] <= got[k] <= LIMITS_64[k] * 1.001 + 1 / dur for k in got)
    return ok, (f"A {got['a']:g} /s, B {got['b']:g} /s admitted under floods of "
                f"{FLOOD_64['a'] / 1000:g} and {FLOOD_64['b'] / 1000:g} kHz")


def amortised(r: Results) -> tuple[bool, str]:
    two, b4, b16 = _s64(r, "two"), _s64(r, "bursty4"), _s64(r, "bursty16")
    return two < b4 and two < b16, f"{two:.3f} % vs {b4:.3f} % and {b16:.3f} %"


def enable_bits(r: Results) -> tuple[bool, str]:
    runs = {b: r.points.get(f"s4/bits{b}") for b in (2, 1)}
    if runs[2] is None or runs[1] is None:
        raise KeyError("s4/bits1, s4/bits2")
    c = {b: runs[b]["mitigation"]["counters"] for b in (2, 1)}
    ok = c[2]["mask_violations"] == 0 and c[2]["drops"] == 0 and c[1]["mask_violations"] > 0
    return ok, (f"handlers inside the task's critical section: {c[2]['mask_violations']} with "
                f"two bits, {c[1]['mask_violations']} with one (and {c[1]['drops']} interrupts "
                "the limiter had to refuse after the task's unmask)")


def _eth(r: Results, key: str) -> list[dict[str, Any]]:
    rows = [x for x in r.eth if x["system"] == key]
    if not rows:
        raise KeyError(f"eth/{key}")
    return rows


def eth_overload(r: Results) -> tuple[bool, str]:
    rows = _eth(r, "none")
    silent = [x["offered_pps"] for x in rows if x["speaker_cycles"] < 0.05 * SPEAKER_HZ]
    if not silent:
        return False, "the speaker never fell silent"
    first = min(silent)
    below = [x for x in rows if x["offered_pps"] < first]
    full = all(x["speaker_cycles"] >= 0.99 * SPEAKER_HZ for x in below)
    last_ok = max((x["offered_pps"] for x in below), default=0)
    return 1_500 <= first <= 1_600 and full and last_ok >= 1_400, (
        f"speaker silent from {first} pps (full tone up to {last_ok} pps)")


def eth_600(r: Results) -> tuple[bool, str]:
    rows = [x for x in _eth(r, "bursty") if x["offered_pps"] >= 1_000]
    vals = [x["processed_pps"] for x in rows]
    ok = all(0.98 * 600 <= v <= 600 * 1.02 for v in vals)
    return ok, f"{min(vals)}–{max(vals)} packets/s processed at floods ≥ 1000 pps"


def eth_tone(r: Results) -> tuple[bool, str]:
    prot = [x for x in _eth(r, "bursty") if x["offered_pps"] > 10_000]
    bare = [x for x in _eth(r, "none") if x["offered_pps"] > 10_000]
    if not prot:
        raise KeyError("eth/bursty above 10 000 pps")
    low = min(x["speaker_cycles"] for x in prot)
    bare_max = max((x["speaker_cycles"] for x in bare), default=0)
    worst = r.points["eth/bursty"]["tasks"]["critical"]["max_response_us"] / 1000
    return low >= SPEAKER_HZ / 2 and bare_max < 0.05 * SPEAKER_HZ, (
        f"{low} of {SPEAKER_HZ} flips per second at least (unprotected: {bare_max}); "
        f"longest wait {worst:.1f} ms")


CLAIMS: tuple[Claim, ...] = (
    Claim("fig1_strict", "§6.2: the strict software scheduler loses at most 10 % of the CPU "
          "relative to the hardware scheduler", "≤ 10 %", _bound("strict")),
    Claim("fig1_bursty4", "§6.2: the bursty scheduler with N = 4 loses at most 5.0 %",
          "≤ 5.0 %", _bound("bursty4")),
    Claim("fig1_bursty16", "§6.2: the bursty scheduler with N = 16 loses at most 2.2 %",
          "≤ 2.2 %", _bound("bursty16")),
    Claim("fig1_limit", "§6.1: the schedulers enforce a maximum arrival rate of 4 kHz (the "
          "strict one admits the full 4 kHz under a 16 kHz flood)", "4 000 /s", strict_full_rate),
    Claim("fig1_flat", "§6.2: the overhead of every scheduler flattens out even at very high "
          "interrupt rates", "flat above 4 kHz", flattens),
    Claim("fig1_interrupts", "§6.2: the overhead of pure interrupts is linear in the arrival "
          "rate (and the highest at 16 kHz)", "linear", interrupts_linear),
    Claim("fig1_polling", "§6.2: polling has constant overhead, independent of the arrival rate",
          "constant", polling_constant),
    Claim("fig1_zero", "§6.2: all scheduling techniques approach zero CPU overhead when "
          "interrupts are infrequent", "≈ 0 at 0.26 kHz", approach_zero),
    Claim("fig1_hardware", "§6.2: the hardware scheduler is indistinguishable from pure "
          "interrupts in underload and perfectly flat in overload", "ideal", hardware_ideal),
    Claim("fig2_polling", "§6.3: with 250 cycles of work, pure polling's CPU use increases with "
          "the offered load", "rises", polling_rises),
    Claim("fig2_penalty", "§6.3: the penalty of the software schedulers is relatively small when "
          "the handler does realistic work", "smaller than in Fig. 1", penalty_smaller),
    Claim("s64_two", "§6.4: two sources (400 and 781 Hz) on one 200 Hz timer cost 1.1 % more "
          "than unscheduled", "1.1 %", _s64_claim("two")),
    Claim("s64_bursty4", "§6.4: one source at 1 kHz, bursty N = 4: 4.1 % overhead", "4.1 %",
          _s64_claim("bursty4"),
          why_not="with Table 2's instruction counts a periodic 1 kHz tick costs t_expire + "
          "t_clear + t_flip = 89 cycles and each interrupt t_count = 12: 2.5 %; the measured 4.1 % "
          "implies about 150 cycles per tick, costs Table 2 does not list"),
    Claim("s64_bursty16", "§6.4: one source at 1 kHz, bursty N = 16: 2.1 % overhead", "2.1 %",
          _s64_claim("bursty16"),
          why_not="Table 2's costs give 250 ticks × 89 + 1000 × 12 cycles = 0.86 %; the "
          "measured 2.1 % would need about 290 cycles per tick, inconsistent with the 150 the "
          "N = 4 figure implies"),
    Claim("s64_limits", "§6.4: bursts of 5 and 7 on a 200 Hz timer give maximum average arrival "
          "rates of 1 kHz and 1.4 kHz", "1 kHz, 1.4 kHz", two_limits),
    Claim("s64_amortised", "§6.4: the two-source system is more efficient: the timer's overhead "
          "is amortised across the sources", "1.1 < 2.1, 4.1 %", amortised),
    Claim("s4_enable_bits", "§4: with two enable bits per line, one for the scheduler and one "
          "for the programmer, the scheduler no longer races the application's masking",
          "no race", enable_bits),
    Claim("eth_overload", "§7: unprotected, interrupt overload between 1500 and 1600 pps: the "
          "board stops producing sound", "1500–1600 pps", eth_overload),
    Claim("eth_600", "§7: a burst of 15 interrupts every 25 ms corresponds to at most 600 pps",
          "600 pps", eth_600),
    Claim("eth_tone", "§7: with the scheduler the board continues to produce a tone above "
          "10 000 pps", "a tone", eth_tone),
)


def evaluate(r: Results) -> list[Verdict]:
    return common.evaluate(CLAIMS, r)


def verdicts_html(verdicts: Sequence[Verdict]) -> str:
    return common.verdicts_html(verdicts, "Regehr & Duongsaa")


# ------------------------------------------------------------------ figures

#: Line styles in the manner of the paper's Figures 1–2 (black and grey, markers).
_STYLE = {
    "interrupts": dict(color="black", marker="s", ls="-"),
    "polling": dict(color="black", marker="x", ls="--"),
    "strict": dict(color="tab:red", marker="o", ls="-"),
    "bursty4": dict(color="tab:blue", marker="^", ls="-"),
    "bursty16": dict(color="tab:green", marker="v", ls="-"),
    "hardware": dict(color="grey", marker="D", ls=":"),
}


def _overhead_figure(r: Results, n: int):
    """Figure ``n`` (1 or 2): CPU overhead against the offered interrupt rate, one line
    per scheduler; the legend beside the axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.6, 4.2), layout="constrained")
    ax = fig.subplots()
    for key, _, label in FIG_CONFIGS:
        try:
            c = r.curve(n, key)
        except KeyError:
            continue
        xs = sorted(c)
        ax.plot([x / 1000 for x in xs], [c[x] for x in xs], lw=1.3, ms=5, label=label,
                **_STYLE[key])
    ax.axvline(LIMIT_HZ / 1000, color="grey", lw=0.8, ls="-.", label="the 4 kHz limit")
    ax.set_xlabel("offered interrupt rate [kHz]")
    ax.set_ylabel("CPU overhead [%]")
    work = "no work" if n == 1 else "250 cycles (62.5 µs) of work"
    ax.set_title(f"Figure {n}: handlers doing {work}", fontsize="medium")
    ax.grid(True, alpha=0.3)
    # matplotlib's margins keep the markers at 0 kHz and 0 % whole
    fig.legend(loc="outside right upper", fontsize="small")
    return fig


def fig1(r: Results):
    """Figure 1: the schedulers' CPU overhead when the handlers do no work."""
    return _overhead_figure(r, 1)


def fig2(r: Results):
    """Figure 2: the schedulers' CPU overhead when the handlers do 250 cycles of work."""
    return _overhead_figure(r, 2)


def sec6_4(r: Results):
    """§6.4 (the numbers beside Figure 3): the schedulers' overhead, simulated and
    paper, two sources on one timer vs one source."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6), layout="constrained")
    ax = fig.subplots()
    keys = [k for k in ("two", "bursty4", "bursty16") if k in r.s64]
    labels = {"two": "A + B (400 + 781 Hz),\nbursts 5, 7, one 200 Hz timer",
              "bursty4": "one source, 1 kHz,\nN = 4", "bursty16": "one source, 1 kHz,\nN = 16"}
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [r.s64[k] for k in keys], 0.4, label="simulated",
           color="tab:blue")
    ax.bar([x + 0.2 for x in xs], [PAPER_64[k] for k in keys], 0.4, label="paper",
           color="lightgrey", edgecolor="black")
    ax.set_xticks(list(xs), [labels[k] for k in keys], fontsize="small")
    ax.set_ylabel("scheduler overhead [% of the CPU]")
    ax.set_title("§6.4: overhead of bursty schedulers", fontsize="medium")
    fig.legend(loc="outside right upper", fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def sec7(r: Results):
    """§7: the speaker's flips and the packets processed per second against the flood."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 4.0), layout="constrained")
    ax, ax2 = fig.subplots(1, 2)
    for key, label, color in (("none", "unprotected", "black"),
                              ("bursty", "bursty, 15 per 25 ms", "tab:blue")):
        rows = [x for x in r.eth if x["system"] == key]
        if not rows:
            continue
        xs = [x["offered_pps"] for x in rows]
        ax.plot(xs, [x["speaker_cycles"] for x in rows], marker="o", color=color, label=label)
        ax2.plot(xs, [x["processed_pps"] for x in rows], marker="o", color=color, label=label)
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_xlabel("offered load [packets/s]")
        a.axvspan(1500, 1600, color="orange", alpha=0.2)
        a.grid(True, which="both", alpha=0.3)
    ax.set_ylabel("speaker flips per second (500 = clean tone)")
    ax2.set_ylabel("packets processed per second")
    ax.set_title("§7: the 250 Hz tone (shaded: paper's overload point)", fontsize="medium")
    ax2.set_title("§7: throughput", fontsize="medium")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2,
               fontsize="small")
    return fig


# ------------------------------------------------------------------ the study


INTRO = (
    "Regehr &amp; Duongsaa, <i>Preventing Interrupt Overload</i> (LCTES 2005), simulated: "
    "Figures 1–2 (§6.2–6.3: CPU overhead, measured passively by a background task, of pure "
    "interrupts, pure polling, the strict and the bursty software schedulers and the hardware "
    "scheduler, all limited to 4 kHz, on the <code>atmega103-tinyos</code> preset), §6.4 (two "
    "sources on one shared 200 Hz timer), §4 (two enable bits against one) and §7 (the "
    "Ethernut under a flood, on the "
    "<code>ethernut-avr</code> preset). Scenarios: <code>scenarios/regehr2005/</code>; choices "
    "the paper leaves open: <code>docs/decisions/regehr.md</code>."
)


def ethernut_analysis() -> str:
    """What the analysis (Regehr §5.2's model) says of the speaker on the same board.

    ``scenarios/analysis/ethernut.toml`` is the analysis' description of the
    §7 board; the text names its verdict for the speaker, for the report beside
    the simulated longest wait (docs/decisions/regehr.md, §7).
    """

    path = study_dir().parent / "analysis" / "ethernut.toml"
    if not path.is_file():
        return ""
    rep = analyze_system(load_system(path))
    for t in rep.result.tasks:
        if t.task.name == "speaker":
            if t.schedulable:
                return f"the analysis bounds the speaker's response by {t.wcrt / 1e6:.2f} ms"
            return f"the analysis finds the speaker unschedulable: {t.reason}"
    return ""


def _overhead_table(r: Results, n: int) -> list[str]:
    labels = {k: lab for k, _, lab in FIG_CONFIGS}
    rows = [[labels[x["config"]], f"{x['rate_hz'] / 1000:g}",
             f"{x['overhead_pct']:.2f}", f"{x['admitted_hz']:g}"] for x in r.fig
            if x["figure"] == n and x["rate_hz"] in (0, 260, 1_000, 4_000, 16_000)]
    return [_table(["configuration", "offered [kHz]", "overhead [%]", "admitted [/s]"], rows)]


def _eth_wait(r: Results) -> list[str]:
    s = r.points.get("eth/bursty")
    note = ethernut_analysis()
    if s is None or not note:
        return []
    worst = s["tasks"]["critical"]["max_response_us"] / 1000
    return [
        f'<p class="note">With the scheduler the simulated speaker waits at most '
        f"{worst:.1f} ms for its 2 ms slot; {html.escape(note)} "
        "(<code>scenarios/analysis/ethernut.toml</code>). Both say the tone is "
        "distorted; the paper says it continues, which it does "
        "(<code>docs/decisions/regehr.md</code>).</p>"]


#: The report's figures, each with its section.
FIGURES = (
    common.Figure(
        "fig1", fig1, lambda r: any(x["figure"] == 1 for x in r.fig),
        "Figure 1: CPU overhead against the offered interrupt rate, handlers doing no work",
        "Overhead = the background task's lost progress against a "
        "run with no interrupts. Dash-dotted: the 4 kHz limit. Numbers in "
        "<code>figures.csv</code>.", lambda r: _overhead_table(r, 1)),
    common.Figure(
        "fig2", fig2, lambda r: any(x["figure"] == 2 for x in r.fig),
        "Figure 2: CPU overhead against the offered interrupt rate, handlers doing 250 "
        "cycles of work", "As Figure 1, with 250 cycles (62.5 µs) of work per interrupt.",
        lambda r: _overhead_table(r, 2)),
    common.Figure("sec6_4", sec6_4, lambda r: bool(r.s64),
                  "§6.4 (the numbers beside Figure 3): two sources on one shared timer"),
    common.Figure(
        "sec7", sec7, lambda r: bool(r.eth), "§7: the Ethernut under a flood",
        "One second per flood level; the speaker flips its output "
        "once per completed 2 ms cycle. Numbers in <code>ethernut.csv</code>.", _eth_wait),
)


#: The report page's title, the heading of its body and whose claims its table lists
#: (the last two HTML).
TITLE = "Regehr & Duongsaa, reproduced"
HEADING = "Regehr &amp; Duongsaa (LCTES 2005)"
CLAIMS_OF = "Regehr &amp; Duongsaa"


def csv_tables(r: Results) -> dict[str, list[dict[str, Any]]]:
    """The CSV files of the results: file name -> rows."""
    return {"figures.csv": r.fig, "ethernut.csv": r.eth}
