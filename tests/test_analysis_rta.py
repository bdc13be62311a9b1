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


# ------------------------------------------------------------- bounded analysis (issue 26)

S = 10**9


def test_a_busy_period_of_a_billion_jobs_is_not_analysed():
    """D > T with a busy period of about 10^9 jobs of the interferer: the analysis
    stops at its limit and says so, instead of walking the busy period."""
    from rtshield.analysis.rta import MAX_BUSY_JOBS

    res = analyze([T("A", S - 1, S, 2), T("B", S, 2 * 10**18, 1, D=10**18)])
    r = res.by_name("B")
    assert not r.analysed and not r.schedulable and r.wcrt is None
    assert r.reason == f"busy window beyond {MAX_BUSY_JOBS} jobs: not analysed"
    assert [x.task.name for x in res.not_analysed] == ["B"]


def test_own_jobs_past_the_limit_are_not_analysed():
    """A task whose own busy period holds more of its jobs than the limit (a release
    jitter of a million periods), at a utilization of 0.2: not analysed."""
    res = analyze([T("A", 1, 10, 2), T("B", 1, 10, 1, J=10**7, D=10**9)])
    r = res.by_name("B")
    assert not r.analysed and "not analysed" in r.reason


def test_utilization_one_past_the_limit_is_unschedulable():
    """Utilization exactly 1 and a busy window that does not end within the limit:
    unschedulable, said in one line."""
    # every step of the iteration adds one job of A: 200 000 steps to the end
    res = analyze([T("A", 10**6 - 1, 10**6, 2), T("C", 200_000, 2 * 10**11, 1, D=10**18)])
    assert res.utilization == 1.0
    r = res.by_name("C")
    assert r.analysed and not r.schedulable and ">= 1" in r.reason


def test_a_huge_blocking_term_misses_at_once():
    """The start value is checked against the deadline before the first step: a
    blocking term of 10^15 ns is a miss at job 1, not 10^12 jobs walked."""
    r = analyze([T("A", 1, 10, 2), T("B", 1, 10 * MS, 1, B=10**15)]).by_name("B")
    assert not r.schedulable and r.jobs == 1 and "at job 1" in r.reason
    assert r.lower_bound >= 10**15


def test_utilization_one_synchronous_is_analysed():
    """Utilization exactly 1 with a busy period that ends (the hyperperiod): analysed."""
    res = analyze([T("A", 1, 2, 2), T("B", 1, 2, 1)])
    assert res.schedulable and res.by_name("B").wcrt == 2


def test_a_once_task_counts_its_curve_below_its_bound():
    """Found by the falsification search (a flood behind Queue Mitigation on the AVR,
    the driver at the critical task's priority): a handler that runs once per busy
    window only for tasks above the driver is, for the tasks at or below it, its
    arrival curve — here a load of 4 — so their utilization is above 1 and they are
    unschedulable at once, not iterated until the window overflows."""
    from fractions import Fraction

    from rtshield.analysis.curves import Periodic, demand

    cap = demand(Periodic(Fraction(10**6, 4)), 10**6)  # 4 activations per ms of 1 ms each
    irq = Task("irq", 5 * 10**6, None, priority=1, level="isr", once=True,
               bounded_above=3, best_effort=True, cap=cap)
    res = analyze([irq, T("above", 1000, 10**7, 4), T("below", 10**6, 10**7, 3, D=10**15)])
    assert res.by_name("above").schedulable
    r = res.by_name("below")
    assert not r.schedulable and r.reason.startswith("utilization at or above this priority is 4.")


def test_a_periodic_task_under_its_curve_counts_its_curve_for_its_own_jobs():
    """Found by the falsification search (a silent flow behind a strict limiter whose
    ISR costs more than its interval): the task's (C, T) model alone has a load above
    1, its arrival curve a small one; its own jobs in its busy window are the smaller
    of the two counts too, so the window ends after the first job."""
    from fractions import Fraction

    from rtshield.analysis.curves import Periodic, demand

    cap = demand(Periodic(Fraction(1000)), 16)  # one activation per µs at most
    irq = Task("irq", 16, 15, priority=1, level="isr", best_effort=True, cap=cap)
    res = analyze([irq, T("below", 100, 10**6, 1)])
    r = res.by_name("irq")
    assert r.analysed and r.wcrt == 16 and r.jobs == 1
    assert res.by_name("below").wcrt == 116


def test_a_window_past_the_time_limit_is_not_analysed():
    """A blocking term of 2^62 ns with a deadline beyond it: the window passes the
    analysis' time limit on its first step and is reported, not iterated."""
    from rtshield.analysis.rta import MAX_WINDOW_NS

    res = analyze([T("A", 1, 2, 2), T("B", 1, 10, 1, B=MAX_WINDOW_NS, D=1 << 64)])
    r = res.by_name("B")
    assert not r.analysed and r.reason == "busy window beyond 2^62 ns: not analysed"


def _late_clearing(timer_prio: int, nesting: bool = False):
    """A bursty limiter, N = 2 interrupts of 10 per period 100 (C = 20, J = T - C),
    its timer (C = 3) at ``timer_prio`` against the line's priority 1, a thread below."""
    burst = T("burst", 20, 100, 1, J=80, level="isr", chunk=10, after="timer", after_max=100)
    timer = T("timer", 3, 100, timer_prio, level="isr")
    return [burst, timer, T("thread", 50, 1000, 0)]


def test_a_task_released_by_a_handler_inherits_its_response_jitter():
    # the timer above the line waits for one running interrupt (10): its completion
    # comes up to 10 late, so the bursts after it up to 10 less than a period apart
    res = analyze(_late_clearing(timer_prio=2))
    assert res.by_name("timer").wcrt == 10 + 3
    assert res.by_name("burst").task.J == 80 + 10
    # the thread's window: 50 + bursts at 0, 20 - 10, 110 - 10 (four: 80) + timers (2: 6)
    assert res.by_name("thread").wcrt == analyze(
        [T("burst", 20, 100, 1, J=90, level="isr"), T("timer", 3, 100, 2, level="isr"),
         T("thread", 50, 1000, 0)]).by_name("thread").wcrt


def test_a_timer_below_the_line_waits_for_a_whole_burst():
    # below the line the timer meets the whole burst (and the burst's jitter depends
    # on the timer's response: iterated to a fixed point)
    res = analyze(_late_clearing(timer_prio=0))
    late = res.by_name("timer").wcrt - 3
    assert late >= 20
    assert res.by_name("burst").task.J == 80 + late


def test_inherited_jitter_is_capped_by_its_bound():
    # a timer that can be delayed without end (an unbounded handler above it) still
    # clears once per tick it sees: no more than after_max late
    tasks = _late_clearing(timer_prio=2) + [Task("storm", 1, None, priority=5, level="isr")]
    res = analyze(tasks)
    assert res.by_name("timer").wcrt is None
    assert res.by_name("burst").task.J == 80 + 100


def test_released_after_a_missing_task_is_refused():
    with pytest.raises(ValueError, match="released after 'nope'"):
        analyze([T("x", 1, 10, 1, after="nope", after_max=5)])
