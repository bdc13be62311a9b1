"""The resident server (`rtshield server`, docs/server.md): a served command gives the
same outputs, errors, exit status and signal behaviour as one run in its own process;
the server declines what it cannot serve as the client's process would run it, ends
when its files change or it is idle, and refuses a folder that is not private.

Every server here runs in a runtime folder of the test's own (``XDG_RUNTIME_DIR``) and
is stopped, its process killed if need be, also when a test fails. Times (how much a
server saves) are measured in bench/, never here.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

import rtshield
from rtshield.commands.server import wait_gone

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(rtshield.__file__).resolve().parent
FLOOD = ROOT / "scenarios" / "examples" / "constant_flood.toml"
SHORT = ["--set", "scenario.duration=2s"]


def _env(runtime: Path, pythonpath: Path = PACKAGE.parent, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RTSHIELD_SERVER"}
    env.update(XDG_RUNTIME_DIR=str(runtime), PYTHONPATH=str(pythonpath),
               RTSHIELD_PROGRESS="0", **extra)
    return env


def _rtshield(env, *args, cwd=None, timeout=120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rtshield", *map(str, args)], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw)


def _status(env) -> dict | None:
    """The server's status as the client library reads it (None: none answers)."""
    code = ("import json\nfrom rtshield import serverlink\n"
            "try:\n    print(json.dumps(serverlink.ask({'op': 'status'})['status']))\n"
            "except serverlink.Declined:\n    print('null')\n")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    import json

    return json.loads(p.stdout)


def _gone(pid: int, within: float = 10.0) -> bool:
    return wait_gone(pid, within)


def _log(runtime: Path, socket: str) -> str:
    return (runtime / "rtshield" / (Path(socket).stem + ".log")).read_text()


def _spare(env, within: float = 10.0) -> int:
    """The pid of the server's spare child (forked ahead while no command runs)."""
    end = time.monotonic() + within
    while (spare := _status(env)["spare"]) is None:
        assert time.monotonic() < end, "the server has no spare child"
        time.sleep(0.02)
    return spare


class Server:
    """A server started with ``server start ARGS``, always ended by :meth:`end`."""

    def __init__(self, env, *args: str) -> None:
        self.env = env
        p = _rtshield(env, "server", "start", *args)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "started (pid" in p.stdout and "listening on" in p.stdout, p.stdout
        status = _status(env)
        assert status is not None
        self.pid = status["pid"]
        self.socket = status["socket"]

    def end(self) -> None:
        try:
            _rtshield(self.env, "server", "stop", timeout=60)
        finally:
            if not _gone(self.pid, 5.0):
                os.kill(self.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    # short: a Unix socket's path has at most 107 bytes
    d = Path(tmp_path_factory.mktemp("rt"))
    d.chmod(0o700)
    return d


@pytest.fixture(scope="module")
def server(runtime):
    """One warmed-up server for the module's tests of served commands."""
    s = Server(_env(runtime), "--idle", "10")
    try:
        yield s
    finally:
        s.end()


def _wall(text: str) -> str:
    return re.sub(r"\d+\.\d s wall", "T s wall", text)


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file()}


def test_a_served_run_writes_and_prints_what_its_own_process_does(server, runtime, tmp_path):
    served_dir, own_dir = tmp_path / "served", tmp_path / "own"
    served_dir.mkdir()
    own_dir.mkdir()
    before = _status(server.env)["served"]
    served = _rtshield(_env(runtime, RTSHIELD_SERVER="require"), "run", FLOOD, *SHORT,
                       "--out", "o", cwd=served_dir)
    own = _rtshield(_env(runtime, RTSHIELD_SERVER="off"), "run", FLOOD, *SHORT, "--out", "o",
                    cwd=own_dir)
    assert served.returncode == own.returncode == 0, served.stderr + own.stderr
    assert _status(server.env)["served"] == before + 1  # served, not run by the client
    assert _wall(served.stdout) == _wall(own.stdout) and "results: o/" in own.stdout
    assert served.stderr == own.stderr == ""
    got, want = _files(served_dir / "o"), _files(own_dir / "o")
    assert sorted(got) == sorted(want) and "packets.png" in want and "report.html" in want
    for name in want:
        assert got[name] == want[name], f"{name} differs when served"


def test_a_served_run_is_complete_when_its_client_exits(server, runtime, tmp_path):
    """The spare child (forked ahead) serves the command in the client's folder; its exit
    status reaches the client before the child's own teardown, but only once every file
    is written and the output folder's lock released: read right after the client
    exits, the files are the in-process run's, and the same --out is free again."""
    (tmp_path / "own").mkdir()
    args = ("run", FLOOD, *SHORT, "--no-figures", "--out", "o")
    own = _rtshield(_env(runtime, RTSHIELD_SERVER="off"), *args, cwd=tmp_path / "own")
    assert own.returncode == 0, own.stderr
    want = _files(tmp_path / "own" / "o")
    for again in (False, True):  # the second into the folder the first just wrote
        spare = _spare(server.env)
        served = _rtshield(_env(runtime, RTSHIELD_SERVER="require"), *args, cwd=tmp_path)
        lock = tmp_path / ".o.rtshield-lock"
        assert served.returncode == 0 and not lock.exists(), (again, served.stderr)
        assert _files(tmp_path / "o") == want, again
        assert _wall(served.stdout) == _wall(own.stdout)
        assert f"command {spare}: rtshield run" in _log(runtime, server.socket)


@pytest.mark.parametrize("args", [
    ("run", "bad.toml", "--out", "o"),  # the scenario's schema
    ("run", FLOOD, "--bogus"),  # the command line
])
def test_errors_are_the_same_line_and_status_when_served(server, runtime, tmp_path, args):
    (tmp_path / "bad.toml").write_text("[scenario]\nname = 3\n")
    served = _rtshield(_env(runtime, RTSHIELD_SERVER="require"), *args, cwd=tmp_path)
    own = _rtshield(_env(runtime, RTSHIELD_SERVER="off"), *args, cwd=tmp_path)
    assert served.returncode == own.returncode == 2
    assert served.stderr == own.stderr and served.stdout == own.stdout == ""
    assert len(own.stderr.splitlines()) == 1 and own.stderr.startswith("rtshield: error: ")
    assert not (tmp_path / "o").exists()


def _long_scenario(tmp_path: Path) -> Path:
    """A run of several seconds: the flood of constant_flood.toml for 600 s."""
    text = FLOOD.read_text().replace('step_every = "10s"', 'step_every = "600s"')
    text = text.replace('duration = "12s"', 'duration = "600s"')
    assert 'duration = "600s"' in text and 'step_every = "600s"' in text
    path = tmp_path / "long.toml"
    path.write_text(text)
    return path


def _served_child(env, client: subprocess.Popen) -> int:
    """The pid of the child that serves ``client`` (it is the server's only command)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        assert client.poll() is None, client.communicate()
        children = _status(env)["children"]
        if children:
            assert len(children) == 1
            return children[0]
        time.sleep(0.05)
    raise AssertionError("the command was never served")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signal_to_the_client_ends_its_command(server, runtime, tmp_path, signum):
    """Ctrl-C (SIGINT) and SIGTERM reach the command: `rtshield: interrupted`, status 130
    or 143, as in its own process; a client killed outright takes its command with it."""
    client = subprocess.Popen(
        [sys.executable, "-m", "rtshield", "run", _long_scenario(tmp_path), "--no-figures",
         "--out", tmp_path / "o"],
        env=_env(runtime, RTSHIELD_SERVER="require"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        child = _served_child(server.env, client)
        staging = tmp_path / ".o.rtshield-staging"  # made once the scenario is valid
        end = time.monotonic() + 30
        while not staging.exists() and time.monotonic() < end:
            time.sleep(0.02)
        assert staging.exists() and client.poll() is None
        client.send_signal(signum)
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
    assert _gone(child), f"the served command {child} outlived its client"
    if signum != signal.SIGKILL:  # as in the command's own process: 130, 143
        assert client.returncode == 128 + signum and err == "rtshield: interrupted\n", (out, err)
    else:
        assert client.returncode == -signal.SIGKILL
    assert not (tmp_path / "o").exists()  # an interrupted run leaves no output folder
    assert _status(server.env)["running"] == 0


def test_two_clients_at_once_each_get_their_own_command(server, runtime, tmp_path):
    env = _env(runtime, RTSHIELD_SERVER="require")
    clients = [subprocess.Popen(
        [sys.executable, "-m", "rtshield", "run", FLOOD, *SHORT, "--seed", str(seed),
         "--no-figures", "--quiet", "--out", tmp_path / f"o{seed}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    for c in clients:
        out, err = c.communicate(timeout=120)
        assert c.returncode == 0 and out == err == "", err
    one, two = ((tmp_path / f"o{s}" / "summary.json").read_text() for s in (1, 2))
    assert one != two  # each its own seed


def test_off_and_what_the_server_declines_run_in_the_clients_process(server, runtime, tmp_path):
    before = _status(server.env)["served"]
    off = _rtshield(_env(runtime, RTSHIELD_SERVER="off"), "--version")
    assert off.returncode == 0 and off.stdout == f"rtshield {rtshield.__version__}\n"
    # a variable read when a library is imported, unlike the server's: declined
    mpl = _rtshield(_env(runtime, MPLBACKEND="svg"), "--version")
    assert mpl.returncode == 0 and mpl.stdout == off.stdout and mpl.stderr == ""
    (tmp_path / "matplotlibrc").write_text("lines.linewidth: 3\n")
    rc_here = _rtshield(_env(runtime), "--version", cwd=tmp_path)
    assert rc_here.returncode == 0 and rc_here.stdout == off.stdout
    assert _status(server.env)["served"] == before  # none of the three was served
    required = _rtshield(_env(runtime, MPLBACKEND="svg", RTSHIELD_SERVER="require"), "--version")
    assert required.returncode == 2 and required.stdout == ""
    assert required.stderr.count("\n") == 1 and "MPLBACKEND differs" in required.stderr
    spare = _spare(server.env)  # waited through the declined requests
    served = _rtshield(_env(runtime), "--version")
    assert served.stdout == off.stdout and _status(server.env)["served"] == before + 1
    assert f"command {spare}: rtshield --version" in _log(runtime, server.socket)
    bogus = _rtshield(_env(runtime, RTSHIELD_SERVER="yes"), "--version")
    assert bogus.returncode == 2 and bogus.stdout == "" and bogus.stderr == (
        "rtshield: error: server: RTSHIELD_SERVER=yes: expected one of auto, off, require, "
        "start\n")


def _answering(env, within: float = 120.0) -> dict:
    """The status of the server that comes up in ``env``'s folder within ``within`` s."""
    end = time.monotonic() + within
    while (status := _status(env)) is None:
        assert time.monotonic() < end, "no server came up"
        time.sleep(0.1)
    return status


def test_start_mode_starts_a_server_for_the_commands_after(tmp_path):
    """RTSHIELD_SERVER=start: a served verb that found no server runs in its own process,
    as ever, and leaves a server behind (detached, with its warm-up) that serves the
    next; --help, an unserved verb and the default mode start none."""
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = _env(runtime, RTSHIELD_SERVER="start")
    assert _rtshield(env, "--help").returncode == 0
    assert _rtshield(env, "--version").returncode == 0
    assert _rtshield(env, "sweep", "--help").returncode == 0
    assert _rtshield(_env(runtime), "schema").returncode == 0  # auto: none starts
    # stopped with Ctrl-C (once it simulates: its progress bar is drawn): none starts
    p = subprocess.Popen([sys.executable, "-m", "rtshield", "run", str(FLOOD), "--set",
                          "scenario.duration=3600s", "--out", str(tmp_path / "o")],
                         env={**env, "RTSHIELD_PROGRESS": "1"}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    assert p.stderr is not None and (first := p.stderr.read(1))
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    said = (first + err).decode(errors="replace")[-1500:]
    assert p.returncode == 130, f"exit {p.returncode}; its standard error ended: {said}"
    # the launcher writes the server's log before the server starts: none, none started
    assert _status(env) is None and not list((runtime / "rtshield").glob("*.log"))
    # a folder open to others holds no server: none starts there either
    (open_rt := tmp_path / "open").mkdir()
    (open_rt / "rtshield").mkdir(mode=0o755)
    (open_rt / "rtshield").chmod(0o755)
    assert _rtshield(_env(open_rt, RTSHIELD_SERVER="start"), "schema").returncode == 0
    assert not list((open_rt / "rtshield").iterdir())
    first = _rtshield(env, "schema")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    # at once again: the server is warming up (it holds the lock its launcher took), so
    # this one runs in its own process (or is served, on a fast machine) and starts none
    assert _rtshield(env, "schema").stdout == first.stdout
    status = _answering(env)
    try:
        assert status["served"] <= 1 and status["idle_minutes"] == 30
        assert "running already" not in _log(runtime, status["socket"])
        served = status["served"]
        assert "warmed up: imports and a run" in _log(runtime, status["socket"])
        again = _rtshield(env, "schema")
        assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, "")
        now = _status(env)
        assert (now["pid"], now["served"]) == (status["pid"], served + 1)  # served by it
    finally:
        _rtshield(env, "server", "stop", timeout=60)
        if not _gone(status["pid"], 5.0):
            os.kill(status["pid"], signal.SIGKILL)


def test_start_again_and_status(server, runtime):
    again = _rtshield(server.env, "server", "start")
    assert again.returncode == 0 and f"running already (pid {server.pid})" in again.stdout
    status = _rtshield(server.env, "server", "status")
    assert status.returncode == 0, status.stderr
    assert f"running, pid {server.pid}" in status.stdout and server.socket in status.stdout
    assert str(PACKAGE) in status.stdout
    assert Path(server.socket).parent == runtime / "rtshield"
    assert (runtime / "rtshield").stat().st_mode & 0o777 == 0o700


def test_a_folder_open_to_others_is_refused(tmp_path):
    (tmp_path / "rtshield").mkdir(mode=0o755)
    (tmp_path / "rtshield").chmod(0o755)
    env = _env(tmp_path)
    start = _rtshield(env, "server", "start")
    assert start.returncode == 2 and start.stdout == ""
    assert start.stderr.count("\n") == 1
    assert "is open to other users (mode 0755" in start.stderr and "refusing" in start.stderr
    status = _rtshield(env, "server", "status")
    assert status.returncode == 2 and "open to other users" in status.stderr
    # a command is never sent there: it runs in its own process
    assert _rtshield(env, "--version").returncode == 0
    assert not list((tmp_path / "rtshield").iterdir())


def _package_copy(tmp_path: Path) -> Path:
    """rtshield's package copied (its native library linked): an installation of its own."""
    dst = tmp_path / "site" / "rtshield"
    shutil.copytree(PACKAGE, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", "scenarios"))
    for link in dst.iterdir():
        if link.is_symlink() and not link.exists():
            link.unlink()
            link.symlink_to((PACKAGE / link.name).resolve())
    return dst.parent


def test_a_changed_file_ends_the_server_and_its_client_runs_the_command(tmp_path):
    """An edited checkout or a reinstall is never served by old code; and a server ends
    after --idle minutes without a command."""
    site = _package_copy(tmp_path)
    runtime = tmp_path / "rt"
    runtime.mkdir(mode=0o700)
    env = _env(runtime, pythonpath=site)
    s = Server(env, "--no-warm-up", "--idle", "0")
    try:
        assert _status(env)["current"]
        assert _rtshield({**env, "RTSHIELD_SERVER": "require"}, "--version").returncode == 0
        spare = _spare(env)  # forked before the edit: it must never serve after it
        units = site / "rtshield" / "units.py"
        units.write_text(units.read_text() + "# edited\n")
        declined = _rtshield({**env, "RTSHIELD_SERVER": "require"}, "--version")
        assert declined.returncode == 2 and declined.stderr.count("\n") == 1
        assert "rtshield's files changed since the server started" in declined.stderr
        assert _gone(s.pid), "a stale server kept running"
        assert _gone(spare), "the spare child of a stale server kept running"
        assert f"command {spare}:" not in _log(runtime, s.socket)
        assert not Path(s.socket).exists()
        own = _rtshield(env, "--version")  # no server: the client's own process
        assert own.returncode == 0 and own.stdout == f"rtshield {rtshield.__version__}\n"
    finally:
        s.end()
    s = Server(env, "--no-warm-up", "--idle", "0.02")  # 1.2 s
    try:
        assert _gone(s.pid, 30.0), "the server did not end when idle"
        assert "idle for 0.02 min: ending" in _log(runtime, s.socket)
        assert _rtshield(env, "server", "status").returncode == 1
    finally:
        s.end()


def test_the_entry_point_is_the_small_client():
    """`rtshield` (the console script) starts with the standard library only; the command
    line's libraries are imported when the command runs in the client's process."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["rtshield"] == "rtshield.entry:main"
    code = ("import sys, rtshield.entry\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'typer', 'click', 'rich', 'numpy', 'pydantic', 'socket', 'json'}))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"})
    assert p.returncode == 0 and p.stdout == "[]\n", p.stdout + p.stderr
