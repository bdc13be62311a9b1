"""The search: one point's runs and score, evaluated on Dask; a Latin
hypercube over the box and coordinate refinement around the best point, or
optuna's tree-structured Parzen estimator (TPE)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from rtshield.calibrate.file import Calibration, Param, scenarios, study_module
from rtshield.cluster import Cluster, stream
from rtshield.errors import UsageError, point_failure
from rtshield.runner import simulate

__all__ = [
    "BUDGET_PREFIX",
    "MIN_STEP",
    "SEARCHES",
    "TPE_BATCH",
    "PointResult",
    "Record",
    "best_of",
    "evaluate_point",
    "score",
    "search",
]

#: Smallest coordinate step, as a fraction of a parameter's range.
MIN_STEP = 1.0 / 256


@dataclass(frozen=True)
class PointResult:
    """One evaluated point: its values, its score (higher is better) and every objective."""

    index: int
    phase: str  #: "start", "lhs", "refine" or "tpe"
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


def score(cal: Calibration, scs: Mapping[str, Any]) -> tuple[float, dict[str, Any]]:
    """Simulate the scenarios of one point (``{run: Scenario}``); ``(score, objectives)``."""
    if cal.objective == "counters":
        errs = _score_counters(cal, simulate(scs["board"]))
        return -float(np.mean(list(errs.values()))), errs
    mod = study_module(cal.path, cal.study)
    results = {run: simulate(sc) for run, sc in scs.items()}
    verdicts = {v.claim.key: v for v in mod.evaluate(results)}
    obj = {k: (verdicts[k].holds is True, verdicts[k].value) for k in cal.claims}
    return float(sum(h for h, _ in obj.values())), obj


def evaluate_point(cal: Calibration, values: Sequence[Any]) -> tuple[float, dict[str, Any]]:
    """Run every scenario of one point; return ``(score, objectives)``."""
    return score(cal, scenarios(cal, values))


def _worker(cal: Calibration, scs: Mapping[str, Any]) -> tuple[float, dict[str, Any], float]:
    """One point on a worker: its scenarios are made (and validated) by the client,
    so workers need none of the calibration's files."""
    t0 = time.perf_counter()
    sc, obj = score(cal, scs)
    return sc, obj, time.perf_counter() - t0


class Record(Protocol):
    """Where the search's points are recorded as they finish and read back from
    (:class:`rtshield.calibrate.record.PointRecord`)."""

    def recall(
        self, index: int, values: Sequence[Any], scs: Mapping[str, Any]
    ) -> tuple[float, dict[str, Any], float] | None:
        """Point ``index``'s recorded ``(score, objectives, 0.0)``, or ``None``."""
        ...

    def keep(self, index: int, result: tuple[float, Mapping[str, Any], float]) -> None:
        """Record point ``index`` (not recalled) as it finishes."""
        ...


class _Points:
    """Evaluates batches of points: in this process (one job, no scheduler) or on
    Dask (:class:`rtshield.cluster.Cluster`), results in input order. A point the
    ``record`` holds is read back, not simulated; every other one is recorded as
    it finishes."""

    def __init__(self, cal: Calibration, jobs: int, scheduler: str | None,
                 on_done: Callable[[], None] | None, record: Record | None = None) -> None:
        self.cal = cal
        self.local = jobs <= 1 and not scheduler
        self.cluster = Cluster(scheduler, jobs)
        self.on_done = on_done
        self.record = record

    def __call__(
        self, points: Sequence[tuple[Any, ...]], first: int
    ) -> list[tuple[float, dict, float]]:
        """Evaluate ``points``, the search's points ``first``, ``first + 1``, …"""
        scs = [scenarios(self.cal, p) for p in points]  # a bad point fails before any runs
        res: list[Any] = [None] * len(scs)
        todo = []
        for k, (p, s) in enumerate(zip(points, scs, strict=True)):
            res[k] = self.record.recall(first + k, p, s) if self.record else None
            if res[k] is None:
                todo.append(k)
            else:
                self._done(k, None, first)
        if self.local:
            for k in todo:
                res[k] = _worker(self.cal, scs[k])
                self._done(k, res[k], first)
            return res
        for k, r, err in stream(self.cluster, _worker, ((k, (self.cal, scs[k])) for k in todo)):
            if err is not None:
                raise point_failure("calibrate", first + k, err)
            res[k] = r
            self._done(k, r, first)
        return res

    def _done(self, k: int, result: Any, first: int) -> None:
        if result is not None and self.record is not None:
            self.record.keep(first + k, result)
        if self.on_done:
            self.on_done()

    def close(self) -> None:
        self.cluster.close()


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


#: The searches ``--search`` names: a Latin hypercube with coordinate
#: refinement, or optuna's tree-structured Parzen estimator.
SEARCHES = ("lhs", "tpe")

#: Points a TPE search asks for at a time (then evaluated in parallel and told
#: in order): fixed, so the points do not depend on the number of workers.
TPE_BATCH = 4

#: The searches whose points for one budget are the first points of the same
#: search for any larger budget, so a calibration resumed with another
#: ``--budget`` may read its recorded points back
#: (docs/decisions/calibrate-resume.md): TPE asks for its points one at a time
#: and the budget only ends the loop. The Latin hypercube's size is a share of
#: the budget, so its points differ with it.
BUDGET_PREFIX = ("tpe",)


def search(
    cal: Calibration,
    *,
    budget: int | None = None,
    seed: int | None = None,
    jobs: int = 2,
    scheduler: str | None = None,
    method: str = "lhs",
    progress: Callable[[int, int], None] | None = None,
    record: Record | None = None,
) -> list[PointResult]:
    """Run the bounded search; every evaluated point, in evaluation order.

    ``method``: ``"lhs"`` (a Latin hypercube, then coordinate refinement) or
    ``"tpe"`` (:func:`_tpe`). Points run on Dask (``jobs`` local workers, or
    the cluster at ``scheduler``), or in this process with one job; the points
    and scores are the same either way. ``record``: each point is recorded
    there as it finishes, and a point it holds is read back instead of
    simulated (the search, told the same scores, goes on as it did).
    """
    if method not in SEARCHES:
        raise UsageError(f"--search: {method!r} is not one of {', '.join(SEARCHES)}")
    budget = cal.budget if budget is None else budget
    seed = cal.seed if seed is None else seed
    counter = [0]

    def tick() -> None:
        counter[0] += 1
        if progress:
            progress(counter[0], budget)

    points = _Points(cal, jobs, scheduler, tick, record)
    try:
        return (_tpe if method == "tpe" else _lhs_refine)(cal, budget, seed, points)
    finally:
        points.close()


def _lhs_refine(cal: Calibration, budget: int, seed: int, evaluate: _Points) -> list[PointResult]:
    rng = np.random.default_rng(seed)
    done: list[PointResult] = []
    seen: set[tuple[Any, ...]] = set()

    def run(batch: list[tuple[Any, ...]], phase: str) -> None:
        batch = [b for b in dict.fromkeys(batch) if b not in seen][: budget - len(done)]
        for (sc, obj, wall), x in zip(evaluate(batch, len(done)), batch, strict=True):
            seen.add(x)
            done.append(PointResult(len(done), phase, x, sc, obj, wall, _error(sc, obj)))

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


def _tpe(cal: Calibration, budget: int, seed: int, evaluate: _Points) -> list[PointResult]:
    """optuna's TPE sampler (seeded; a constant liar for the points still running),
    asked :data:`TPE_BATCH` points at a time. A point it asks for again after
    snapping to the parameters' resolution is told its known score without
    running; the search ends after ``budget`` distinct points, or when the
    sampler proposes no new point in a whole batch ten times running."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed, constant_liar=True)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    start = tuple(q.start for q in cal.params) if _starts(cal) else None
    if start is not None:
        study.enqueue_trial({q.key: _trial_value(q, q.start) for q in cal.params})
    done: list[PointResult] = []
    known: dict[tuple[Any, ...], float] = {}
    stale = 0
    while len(done) < budget and stale < 10:
        trials = [study.ask() for _ in range(min(TPE_BATCH, budget - len(done)))]
        xs = [tuple(_suggest(t, q) for q in cal.params) for t in trials]
        new = [x for x in dict.fromkeys(xs) if x not in known]
        for (sc, obj, wall), x in zip(evaluate(new, len(done)), new, strict=True):
            err = _error(sc, obj)
            known[x] = math.nan if err else sc  # an error is told as a failed trial
            phase = "start" if x == start and not done else "tpe"
            done.append(PointResult(len(done), phase, x, sc, obj, wall, err))
        for t, x in zip(trials, xs, strict=True):
            if math.isfinite(known[x]):
                study.tell(t, known[x])
            else:  # an error (its reason in points.csv): a failed trial, not a score
                study.tell(t, state=optuna.trial.TrialState.FAIL)
        stale = 0 if new else stale + 1
    return done


def _starts(cal: Calibration) -> bool:
    return all(q.start is not None for q in cal.params)


def _trial_value(q: Param, v: Any) -> Any:
    return v if q.numeric else q.values.index(v)


def _suggest(trial: Any, q: Param) -> Any:
    """The value of parameter ``q`` the trial asks for, snapped to its resolution."""
    if not q.numeric:
        return q.values[trial.suggest_int(q.key, 0, len(q.values) - 1)]
    if q.kind == "integer":
        return q.snap(trial.suggest_int(q.key, int(q.low), int(q.high)))
    return q.snap(trial.suggest_float(q.key, q.low, q.high))


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
