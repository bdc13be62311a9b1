"""The search: one point's runs and score, worker processes, then a Latin
hypercube over the box and coordinate refinement around the best point."""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rtshield.calibrate.file import Calibration, Param, scenarios, study_module
from rtshield.errors import UsageError
from rtshield.runner import _ignore_sigint, _stop_workers, simulate

__all__ = ["MIN_STEP", "PointResult", "best_of", "evaluate_point", "search"]

#: Smallest coordinate step, as a fraction of a parameter's range.
MIN_STEP = 1.0 / 256


@dataclass(frozen=True)
class PointResult:
    """One evaluated point: its values, its score (higher is better) and every objective."""

    index: int
    phase: str  #: "start", "lhs" or "refine"
    values: tuple[Any, ...]
    score: float
    #: claims: ``{key: (holds, simulated value as text)}``; counters: ``{column: rel. RMS error}``
    objectives: Mapping[str, Any]
    wall_s: float
    #: Why this point has no score (a non-finite error or score: the point is an
    #: error, left out of the best point, the figure and the refinement); "" if scored.
    error: str = ""

    @property
    def ok(self) -> bool:
        """The point has a finite score."""
        return not self.error


def _score_counters(cal: Calibration, res: Any) -> dict[str, float]:
    ts = res.timeseries
    t_sim = np.asarray(ts["t_s"], dtype=float)
    errs = {}
    for col, meas in cal.counters.items():
        sim = np.asarray(ts[col], dtype=float)
        idx = np.searchsorted(t_sim, np.asarray(cal.counters_t) - 1e-9)
        if (
            len(t_sim) == 0
            or idx.max() >= len(t_sim)
            or np.any(np.abs(t_sim[idx] - cal.counters_t) > 1e-6)
        ):
            raise UsageError(
                f"{cal.path}: the board's t_s values ({cal.counters_t[0]:g} … "
                f"{cal.counters_t[-1]:g} s) are not bin starts of the simulated run "
                f"(0 … {t_sim[-1] if len(t_sim) else 0:g} s): "
                "match the scenario's duration and bin to the CSV"
            )
        m = np.asarray(meas)
        # counters beyond what floats can square give inf or NaN here: that point is
        # then an error (its score not finite), not a warning on stderr
        with np.errstate(over="ignore", invalid="ignore"):
            scale = max(float(np.mean(np.abs(m))), 1.0)
            errs[col] = float(np.sqrt(np.mean((sim[idx] - m) ** 2)) / scale)
    return errs


def evaluate_point(cal: Calibration, values: Sequence[Any]) -> tuple[float, dict[str, Any]]:
    """Run every scenario of one point; return ``(score, objectives)``."""
    scs = scenarios(cal, values)
    if cal.objective == "counters":
        errs = _score_counters(cal, simulate(scs["board"]))
        return -float(np.mean(list(errs.values()))), errs
    mod = study_module(cal.path, cal.study)
    results = {run: simulate(sc) for run, sc in scs.items()}
    verdicts = {v.claim.key: v for v in mod.evaluate(results)}
    obj = {k: (verdicts[k].holds is True, verdicts[k].value) for k in cal.claims}
    return float(sum(h for h, _ in obj.values())), obj


def _worker(job: tuple[Calibration, tuple[Any, ...]]) -> tuple[float, dict[str, Any], float]:
    t0 = time.perf_counter()
    score, obj = evaluate_point(*job)
    return score, obj, time.perf_counter() - t0


def _run_points(
    cal: Calibration,
    points: Sequence[tuple[Any, ...]],
    jobs: int,
    on_done: Callable[[], None] | None = None,
) -> list[tuple[float, dict[str, Any], float]]:
    """Evaluate points, ``jobs`` at a time in worker processes; results in input order.

    The one place the search meets the runner: each worker calls the
    runner's engine entry (:func:`rtshield.runner.simulate`) per run.
    """
    work = [(cal, tuple(p)) for p in points]
    if jobs <= 1 or len(work) <= 1:
        out = []
        for w in work:
            out.append(_worker(w))
            if on_done:
                on_done()
        return out
    res: list[Any] = [None] * len(work)
    pool = cf.ProcessPoolExecutor(max_workers=min(jobs, len(work)), initializer=_ignore_sigint)
    try:
        futs = {pool.submit(_worker, w): i for i, w in enumerate(work)}
        for fut in cf.as_completed(futs):
            res[futs[fut]] = fut.result()
            if on_done:
                on_done()
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    return res


# ------------------------------------------------------------------- the search


def _lhs(params: Sequence[Param], n: int, rng: np.random.Generator) -> list[tuple[Any, ...]]:
    cols = []
    for q in params:
        strata = (rng.permutation(n) + rng.random(n)) / n
        cols.append([q.at(float(u)) for u in strata])
    return [tuple(c[i] for c in cols) for i in range(n)]


def _neighbours(params: Sequence[Param], x: tuple[Any, ...], step: float) -> list[tuple[Any, ...]]:
    out = []
    for i, q in enumerate(params):
        if q.numeric:
            d = step * (q.high - q.low)
            cands = [q.snap(x[i] - d), q.snap(x[i] + d)]
        else:
            cands = [v for v in q.values if v != x[i]]
        for c in cands:
            if c != x[i]:
                out.append(x[:i] + (c,) + x[i + 1 :])
    return out


def search(
    cal: Calibration,
    *,
    budget: int | None = None,
    seed: int | None = None,
    jobs: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> list[PointResult]:
    """Run the bounded search; every evaluated point, in evaluation order."""
    budget = cal.budget if budget is None else budget
    seed = cal.seed if seed is None else seed
    rng = np.random.default_rng(seed)
    done: list[PointResult] = []
    seen: set[tuple[Any, ...]] = set()
    counter = [0]

    def tick() -> None:
        counter[0] += 1
        if progress:
            progress(counter[0], budget)

    def run(batch: list[tuple[Any, ...]], phase: str) -> None:
        batch = [b for b in dict.fromkeys(batch) if b not in seen][: budget - len(done)]
        for (score, obj, wall), x in zip(_run_points(cal, batch, jobs, tick), batch, strict=True):
            seen.add(x)
            done.append(PointResult(len(done), phase, x, score, obj, wall, _error(score, obj)))

    if all(q.start is not None for q in cal.params):
        run([tuple(q.start for q in cal.params)], "start")
    n_lhs = max(1, min(budget - len(done), max(2 * len(cal.params) + 2, (budget * 3) // 5)))
    run(_lhs(cal.params, n_lhs, rng), "lhs")
    step = 0.25
    while len(done) < budget and step >= MIN_STEP:
        scored = [r for r in done if r.ok]
        if not scored:  # nothing to refine around
            break
        best = max(scored, key=lambda r: (r.score, -r.index))
        cands = [c for c in _neighbours(cal.params, best.values, step) if c not in seen]
        if not cands:
            step /= 2
            continue
        before = best.score
        run(cands, "refine")
        if max(r.score for r in done if r.ok) <= before:
            step /= 2
    return done


def _error(score: float, objectives: Mapping[str, Any]) -> str:
    """Why a point has no score: a non-finite objective or score, named."""
    bad = [
        k for k, v in objectives.items()
        if isinstance(v, float) and not math.isfinite(v)
    ]
    if bad:
        return f"non-finite error of {', '.join(bad)}"
    if not math.isfinite(score):
        return f"non-finite score ({score})"
    return ""


def best_of(points: Sequence[PointResult]) -> PointResult:
    """The highest finite score; among equals the earliest (deterministic). Raises
    :class:`UsageError` when no point has one (every point an error)."""
    scored = [r for r in points if r.ok]
    if not scored:
        why = points[0].error if points else "no point was evaluated"
        raise UsageError(
            f"calibrate: none of the {len(points)} points has a finite score (point 0: "
            f"{why}); check the objective's data (counters beyond what can be scored?)"
        )
    return max(scored, key=lambda r: (r.score, -r.index))
