"""Response-time analysis: hand-checked cases and a brute-force schedule."""

import random
from math import gcd

import pytest

from rtshield.analysis.rta import Task, analyze

MS = 1_000_000


def T(name, C, Tp, prio, **kw):
    return Task(name, C, Tp, priority=prio, **kw)


def test_textbook_three_tasks():
    res = analyze([T("t1", 3, 7, 3), T("t2", 3, 12, 2), T("t3", 5, 20, 1)])
    assert [r.wcrt for r in res.tasks] == [3, 6, 20]
    assert res.schedulable
    assert res.utilization == pytest.approx(3 / 7 + 3 / 12 + 5 / 20)


@pytest.mark.parametrize(
    "name, tasks, target, wcrt",
    [
        # jitter: A released at J=2 and again at T=4 -> two runs in B's window
        ("jitter", [T("A", 1, 4, 2, J=2), T("B", 2, 10, 1)], "B", 4),
        # the analysed task's own jitter adds to its response
        ("own jitter", [T("A", 1, 4, 2), T("B", 2, 10, 1, J=3)], "B", 3 + 3),
        # blocking opens a longer window: 2 + 2 + two runs of A
        ("blocking", [T("A", 1, 4, 2), T("B", 2, 10, 1, B=2)], "B", 6),
        # arbitrary deadlines (Lehoczky's example as used by Tindell et al.):
        # the first job responds in 114, the worst job in the busy period in 118
        ("D > T", [T("A", 26, 70, 2), T("B", 62, 100, 1, D=200)], "B", 118),
    ],
)
def test_hand_checked(name, tasks, target, wcrt):
    assert analyze(tasks).by_name(target).wcrt == wcrt, name


def test_arbitrary_deadline_example_matches_schedule():
    tasks = [T("A", 26, 70, 2), T("B", 62, 100, 1, D=200)]
    res = analyze(tasks)
    assert res.by_name("B").jobs > 1
    assert _simulate(tasks)["B"] == res.by_name("B").wcrt


def test_nonpreemptive_handlers_block_each_other():
    isrs = [T("hi", 2, 10, 2, level="isr"), T("lo", 3, 10, 1, level="isr")]
    off = analyze(isrs, nesting=False)
    assert off.by_name("hi").wcrt == 3 + 2  # blocked by one lower handler
    assert off.by_name("lo").wcrt == 2 + 3  # waits for hi, then runs unpreempted
    on = analyze(isrs, nesting=True)
    assert on.by_name("hi").wcrt == 2
    assert on.by_name("lo").wcrt == 5


def test_handlers_above_every_thread():
    res = analyze([T("thread", 1, 10, 100), T("irq", 2, 10, 0, level="isr")])
    assert res.tasks[0].task.name == "irq"
    assert res.by_name("thread").wcrt == 3


def test_unbounded_interferer_named():
    res = analyze([Task("flood", 1, None, priority=1, level="isr"), T("t", 1, 10, 1)])
    r = res.by_name("t")
    assert not r.schedulable and r.wcrt is None
    assert "unbounded flood" in r.reason
    assert res.utilization == float("inf")


def test_overload_reports_utilization():
    r = analyze([T("a", 6, 10, 2), T("b", 5, 10, 1)]).by_name("b")
    assert not r.schedulable and "utilization" in r.reason and "> 1" in r.reason


def test_divergence_past_deadline_reported():
    r = analyze([T("a", 5, 10, 2), T("b", 4, 10, 1, D=8)]).by_name("b")
    assert not r.schedulable and r.wcrt is None
    assert "passed the deadline" in r.reason and r.lower_bound > 8


def test_once_interferer_counts_once_and_bounded_above():
    q = Task("q", 3, None, priority=5, level="isr", once=True, bounded_above=2)
    res = analyze([q, T("above", 1, 5, 3), T("below", 1, 100, 1)])
    assert res.by_name("above").wcrt == 1 + 3  # once, though the busy period spans jobs
    assert not res.by_name("below").schedulable


def _lcm(a, b):
    return a * b // gcd(a, b)


def _simulate(tasks):
    """Preemptive fixed priority, synchronous release, no jitter: max response per task.

    Unit-time steps over one hyperperiod plus the longest deadline (exact for
    integer parameters; used as an independent check of the analysis).
    """
    hyper = 1
    for t in tasks:
        hyper = _lcm(hyper, t.T)
    horizon = hyper + max(t.deadline for t in tasks)
    order = sorted(tasks, key=lambda t: t.priority, reverse=True)
    pending = {t.name: [] for t in tasks}  # [release, remaining]
    worst = {t.name: 0 for t in tasks}
    for now in range(horizon):
        for t in tasks:
            if now % t.T == 0 and now < hyper:
                pending[t.name].append([now, t.C])
        for t in order:
            if pending[t.name]:
                job = pending[t.name][0]
                job[1] -= 1
                if job[1] == 0:
                    worst[t.name] = max(worst[t.name], now + 1 - job[0])
                    pending[t.name].pop(0)
                break
    return worst


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force_schedule(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 4)
    periods = [rng.choice([4, 5, 6, 8, 10, 12, 15, 20]) for _ in range(n)]
    tasks = []
    for i, p in enumerate(periods):
        tasks.append(T(f"t{i}", rng.randint(1, max(1, p // n)), p, n - i, D=3 * p))
    res = analyze(tasks)
    if not res.schedulable:
        pytest.skip("random set over the utilization bound")
    sim = _simulate(tasks)
    for r in res.tasks:
        assert r.wcrt == sim[r.task.name], r.task.name


def test_best_effort_task_without_bound_does_not_fail_the_system():
    flood = Task("flood", 1, None, priority=1, level="isr", best_effort=True)
    res = analyze([flood])
    r = res.by_name("flood")
    assert r.schedulable and r.wcrt is None and "no finite bound" in r.reason
    res = analyze([flood, T("t", 1, 10, 1)])
    assert not res.schedulable  # the thread below it has a deadline and no bound
