"""Dask for sweeps and calibrations: a local cluster of single-threaded worker
processes, or a user's cluster by its scheduler address, and a stream of tasks
run with a bounded number in flight, each result handed back as it finishes.

A stream never holds more than its window of tasks (submitted, running or
finished and not yet taken), so a sweep of millions of points costs the
client the same memory as one of a hundred. Workers send results back; they
need rtshield installed, not the client's folders.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rtshield.errors import UsageError, WorkError

__all__ = ["LOCAL_SETTINGS", "Cluster", "stream"]

_END = object()

#: Dask's settings for a local cluster: no statistical profiler (it samples every
#: worker's stack every 10 ms; on a busy machine that alone doubles a point's CPU
#: time), and Dask's own housekeeping less often: the event loops' health tick
#: every second (not every 20 ms), the system monitor's samples every 5 s (not
#: every 0.5 s: they feed the dashboard, which a local cluster has not) and the
#: workers' memory checked every second (not every 0.1 s). An idle local cluster
#: of two workers took 13 % of a core, 2 % with these (bench/RESULTS.md, issue
#: 28). A user's workers take them from the environment:
#: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker …``.
LOCAL_SETTINGS = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


class Cluster:
    """A Dask client made on first use: on the user's scheduler (``scheduler``),
    else on a local cluster of ``workers`` single-threaded worker processes.

    Use as a context manager; leaving it closes the client and the local
    cluster (also on an error or Ctrl-C). Nothing starts until :meth:`client`
    is called, so work that needs no worker (a sweep resumed whole) starts no
    cluster.
    """

    def __init__(self, scheduler: str | None, workers: int, option: str = "--scheduler") -> None:
        self.scheduler = scheduler
        self.workers = max(1, int(workers))
        self.option = option
        self._client: Any = None
        self._cluster: Any = None

    def client(self) -> Any:
        if self._client is None:
            self._client, self._cluster = _connect(self.scheduler, self.workers, self.option)
        return self._client

    def threads(self) -> int:
        """The worker threads of the cluster (at least 1)."""
        try:
            return max(1, sum(self.client().nthreads().values()))
        except (OSError, TimeoutError):
            return self.workers

    def close(self) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        with contextlib.suppress(Exception):  # closing: a dead scheduler is no new error
            if client is not None:
                client.close()
        with contextlib.suppress(Exception):
            if cluster is not None:
                cluster.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def _starting(workers: int) -> Iterator[None]:
    """A local cluster that cannot start (a worker process that died while starting, no
    free port) is one line, exit 1 (:class:`~rtshield.errors.WorkError`), not Dask's
    traceback."""
    try:
        yield
    except (RuntimeError, TimeoutError, OSError) as e:
        raise WorkError(
            f"a local Dask cluster of {workers} worker(s) did not start "
            f"({type(e).__name__}: {e})"
        ) from None


def _connect(scheduler: str | None, workers: int, option: str) -> tuple[Any, Any]:
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # an incomplete install: one line, not a traceback
        raise UsageError(
            f"Dask is not installed ({e}); pip install 'dask[distributed]'"
        ) from None
    if scheduler:
        try:
            return Client(scheduler, timeout="5s"), None
        except (OSError, TimeoutError, ValueError) as e:
            raise UsageError(
                f"{option}: cannot reach a Dask scheduler at {scheduler!r} ({e})"
            ) from None
    import dask

    with dask.config.set(LOCAL_SETTINGS), _starting(workers):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # the scheduler's HTTP server on a free port: on 8787, taken by another
            # cluster on the machine, Dask would warn on stderr
            scheduler_kwargs={"dashboard_address": ":0"},
            # Dask's own records, up to ERROR, stay off stderr: a task's failure reaches
            # the command as that task's error (one line), and a worker whose heartbeat
            # races the scheduler's closing at the end of a sweep logs a traceback at
            # ERROR on a busy machine (a known noise of Dask's shutdown)
            silence_logs=logging.CRITICAL,
        )
    return Client(cluster), cluster


def stream(
    cluster: Cluster,
    fn: Callable[..., Any],
    jobs: Iterable[tuple[Any, tuple[Any, ...]]],
    *,
    window: int | None = None,
    batch: int = 1,
) -> Iterator[tuple[Any, Any, Exception | None]]:
    """Run ``fn(*args)`` on the cluster for each ``(tag, args)`` of ``jobs``;
    yield ``(tag, result, None)`` or ``(tag, None, error)`` as each finishes.

    Up to ``batch`` consecutive jobs go to a worker as one task (:func:`_batch`):
    a task costs Dask's scheduler, client and worker a few milliseconds, which
    a batch pays once; its jobs' results come back together, each its own, in
    the order of ``jobs``. ``jobs`` is read lazily: at most ``window`` tasks
    (default: twice the cluster's threads) are in flight. A job ``None`` means
    "no more for now" (the caller's own buffer is full): the batch being made
    is sent as it is, and reading resumes after the next result. The cluster
    starts at the first job. Leaving the loop early (an error, Ctrl-C) cancels
    what has not finished.
    """
    it = iter(jobs)
    first = next(it, _END)
    if first is _END:
        return
    from distributed import as_completed

    client = cluster.client()
    limit = max(2, window or 2 * cluster.threads())
    size = max(1, int(batch))
    pending: dict[str, tuple[list[Any], Any]] = {}
    done = as_completed()
    queued = [first]

    def fill() -> None:
        while len(pending) < limit:
            tags: list[Any] = []
            argss: list[tuple[Any, ...]] = []
            job: Any = None
            while len(tags) < size:
                job = queued.pop() if queued else next(it, _END)
                if job is _END or job is None:
                    break
                tags.append(job[0])
                argss.append(job[1])
            if tags:
                fut = client.submit(_batch, fn, argss, pure=False)
                pending[fut.key] = (tags, fut)
                done.add(fut)
            if job is _END:
                queued.append(_END)  # the jobs are over: every later fill stops here
                return
            if job is None:
                if not pending:
                    raise RuntimeError("stream: the jobs wait for a result with none in flight")
                return

    try:
        fill()
        while pending:
            fut = next(done)
            tags, _ = pending.pop(fut.key)
            try:
                results = fut.result()
            except Exception as e:  # noqa: BLE001 — the task failed whole: each job gets it
                results = [(None, e)] * len(tags)
            fut.release()
            for tag, (res, err) in zip(tags, results, strict=True):
                yield tag, res, err
            fill()
    finally:
        if pending:
            with contextlib.suppress(Exception):
                client.cancel([f for _, f in pending.values()])


def _batch(fn: Callable[..., Any], argss: list[tuple[Any, ...]]) -> list[tuple[Any, Any]]:
    """One task on a worker: ``fn(*args)`` for each ``args``, in turn; a job that
    fails is ``(None, its error)`` and the others still run."""
    out: list[tuple[Any, Any]] = []
    for args in argss:
        try:
            out.append((fn(*args), None))
        except Exception as e:  # noqa: BLE001 — handed to the caller, job by job, as Dask would
            out.append((None, e))
    return out
