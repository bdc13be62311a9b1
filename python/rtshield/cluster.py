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

from rtshield.errors import UsageError

__all__ = ["NO_PROFILER", "Cluster", "stream"]

_END = object()

#: Dask's settings for the workers of a local cluster: no statistical profiler.
#: A user's workers take them from the environment:
#: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker …``.
NO_PROFILER = {"distributed.worker.profile.enabled": False}


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

    # Dask's statistical profiler samples every worker's stack every 10 ms; on a
    # busy machine that alone doubles a point's CPU time (bench/RESULTS.md, issue 28)
    with dask.config.set(NO_PROFILER):
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
) -> Iterator[tuple[Any, Any, Exception | None]]:
    """Run ``fn(*args)`` on the cluster for each ``(tag, args)`` of ``jobs``;
    yield ``(tag, result, None)`` or ``(tag, None, error)`` as each finishes.

    ``jobs`` is read lazily: at most ``window`` tasks (default: twice the
    cluster's threads) are in flight. A job ``None`` means "no more for now"
    (the caller's own buffer is full): reading resumes after the next result.
    The cluster starts at the first job. Leaving the loop early (an error,
    Ctrl-C) cancels what has not finished.
    """
    it = iter(jobs)
    first = next(it, _END)
    if first is _END:
        return
    from distributed import as_completed

    client = cluster.client()
    limit = max(2, window or 2 * cluster.threads())
    pending: dict[str, tuple[Any, Any]] = {}
    done = as_completed()
    queued = [first]

    def fill() -> None:
        while len(pending) < limit:
            job = queued.pop() if queued else next(it, _END)
            if job is _END:
                return
            if job is None:
                if not pending:
                    raise RuntimeError("stream: the jobs wait for a result with none in flight")
                return
            tag, args = job
            fut = client.submit(fn, *args, pure=False)
            pending[fut.key] = (tag, fut)
            done.add(fut)

    try:
        fill()
        while pending:
            fut = next(done)
            tag, _ = pending.pop(fut.key)
            try:
                res, err = fut.result(), None
            except Exception as e:  # noqa: BLE001 — the caller decides; the others go on
                res, err = None, e
            fut.release()
            yield tag, res, err
            fill()
    finally:
        if pending:
            with contextlib.suppress(Exception):
                client.cancel([f for _, f in pending.values()])
