"""A sweep and a calibration on a real Dask cluster: a scheduler and two workers
started as separate processes with the `dask scheduler` and `dask worker`
commands of docs/outputs.md, on this machine's loopback; their results are
byte for byte those of a local run, and the processes are always stopped."""

import contextlib
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_calibrate import _board, _cal

import rtshield
from rtshield import cli

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parent.parent
FLOOD = ROOT / "scenarios" / "examples" / "constant_flood.toml"


def _dask() -> str:
    exe = shutil.which("dask") or str(Path(sys.executable).with_name("dask"))
    if not Path(exe).exists():
        pytest.skip("the dask command is not installed")
    return exe


def _stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM to each process group (a worker's nanny and its worker), then SIGKILL."""
    for p in reversed(procs):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
    for p in reversed(procs):
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)


@contextlib.contextmanager
def dask_cluster(folder: Path, workers: int = 2):
    """A scheduler and ``workers`` single-threaded workers on 127.0.0.1, each its own
    process (group); yields ``(address, processes)``; stops them all on leaving,
    also when the block fails."""
    dask = _dask()
    env = dict(os.environ)  # the workers import the same rtshield as this process
    env["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"  # as docs/outputs.md says
    pkg = str(Path(rtshield.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg, env.get("PYTHONPATH", "")) if p)
    info = folder / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def start(*args: str, log: str) -> None:
        with open(folder / log, "wb") as f:
            procs.append(subprocess.Popen([dask, *args], env=env, stdout=f,
                                          stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(info), log="scheduler.log")
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            assert procs[0].poll() is None, (folder / "scheduler.log").read_text()
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for i in range(workers):
            start("worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                  "--nworkers", "1", "--no-dashboard", "--name", f"w{i}",
                  "--local-directory", str(folder / f"w{i}"), log=f"worker{i}.log")
        with distributed.Client(address, timeout="30s") as c:
            c.wait_for_workers(workers, timeout=120)
            assert len(c.scheduler_info()["workers"]) == workers
        yield address, procs
    finally:
        _stop(procs)


def _gone(procs) -> bool:
    return all(p.poll() is not None for p in procs)


SWEEP = ["--set", "driver.queue=5,200", "--set", "critical.work=3ms,6ms,9ms",
         "--set", "scenario.duration=3s", "--quiet"]


def test_a_sweep_and_a_calibration_on_a_scheduler_and_two_workers(tmp_path):
    _board(tmp_path)
    cal = _cal(tmp_path, budget=8)
    with dask_cluster(tmp_path) as (address, procs):
        assert cli.main(["sweep", str(FLOOD), "--out", str(tmp_path / "remote"),
                         "--scheduler", address, *SWEEP]) == 0
        for search in ("lhs", "tpe"):
            assert cli.main(["calibrate", str(cal), "--out", str(tmp_path / f"cal-{search}"),
                             "--scheduler", address, "--search", search, "--quiet"]) == 0
        with distributed.Client(address, timeout="10s") as c:  # the points ran there
            assert len(c.scheduler_info()["workers"]) == 2
    assert _gone(procs)

    assert cli.main(["sweep", str(FLOOD), "--out", str(tmp_path / "local"), "--jobs", "2",
                     *SWEEP]) == 0
    for name in ("sweep.csv", "sweep.parquet", "safe_region.json"):
        assert (tmp_path / "remote" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    rows = list(csv.DictReader((tmp_path / "remote" / "sweep.csv").open()))
    assert len(rows) == 6 and {r["safe"] for r in rows} == {"True", "False"}
    for search in ("lhs", "tpe"):
        local = tmp_path / f"local-{search}"
        assert cli.main(["calibrate", str(cal), "--out", str(local), "--jobs", "1",
                         "--search", search, "--quiet"]) == 0
        for name in ("points.csv", "best.toml"):
            assert (tmp_path / f"cal-{search}" / name).read_bytes() == (local / name).read_bytes()


def test_the_cluster_is_stopped_when_the_work_fails(tmp_path):
    with pytest.raises(RuntimeError, match="on purpose"):
        with dask_cluster(tmp_path, workers=1) as (_, procs):
            assert not _gone(procs)
            raise RuntimeError("on purpose")
    assert _gone(procs)


def _dask_error_record() -> str:
    import logging

    logging.getLogger("distributed.worker").error("a record of Dask's own, at ERROR")
    return "logged"


def test_a_local_workers_dask_records_stay_off_stderr(capfd):
    """A local cluster's workers keep Dask's own records (up to ERROR) off stderr: at the
    end of a sweep on a busy machine a worker whose heartbeat races the scheduler's
    closing logs such a traceback, and a command that succeeded prints nothing there."""
    from rtshield.cluster import Cluster

    with Cluster(None, 1) as cluster:
        assert cluster.client().submit(_dask_error_record).result() == "logged"
    assert "a record of Dask's own" not in capfd.readouterr().err
