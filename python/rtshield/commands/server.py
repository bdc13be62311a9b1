"""``rtshield server start|stop|status``: a resident server that keeps rtshield's
libraries loaded, so that short commands (``run``, ``compare``, ``analyze``,
``design``, ``schema``) start at once (:mod:`rtshield.serverlink`,
:mod:`rtshield.daemon`)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from typing import Annotated

import typer

from rtshield import serverlink
from rtshield.cliapp import typer_app
from rtshield.clitools import opt, verb
from rtshield.commands import VERBS
from rtshield.errors import UsageError

HELP = (
    "Keep rtshield loaded in a server of this user and this installation, so that "
    "run, compare, analyze, design and schema start at once (each command still runs "
    "in a process of its own, with this terminal, folder and environment; outputs are "
    "the same bytes). While a server runs, 'rtshield COMMAND' is served by it; without "
    "one, commands run in their own process as always (RTSHIELD_SERVER=start: and then "
    "start one in the background for the next; RTSHIELD_SERVER=off: never served). A "
    "server whose rtshield or libraries changed on disk ends instead of serving old "
    "code. See docs/server.md."
)
EPILOG = (
    "\b\nexamples: rtshield server start            (ends after 30 min without a command)\n"
    "          rtshield run scenarios/danicki2021/queue_500.toml --out out/q500\n"
    "          rtshield server status\n"
    "          rtshield server stop"
)

START_HELP = (
    "Start this installation's server, detached, and wait until it answers (a few "
    "seconds: it imports the libraries and runs a short scenario once); print its "
    "process and socket. Nothing happens if one runs already. Its log is beside the "
    "socket, in $XDG_RUNTIME_DIR/rtshield (else /tmp/rtshield-UID), a folder of this "
    "user's alone (mode 0700; any other is refused)."
)
START_EPILOG = (
    "\b\nexamples: rtshield server start\n"
    "          rtshield server start --idle 120    (ends after 2 h without a command)\n"
    "          rtshield server start --idle 0      (runs until stopped)"
)
STOP_HELP = (
    "Stop this installation's server: it takes no new command and ends once the "
    "commands it runs have ended. Nothing happens if none runs."
)
STOP_EPILOG = "\b\nexample: rtshield server stop"
STATUS_HELP = (
    "Say whether this installation's server runs: its process, socket, uptime, the "
    "commands it served and its idle limit. Exit status 0 when it runs, 1 when not."
)
STATUS_EPILOG = "\b\nexample: rtshield server status"

#: Minutes without a command after which a server that ``RTSHIELD_SERVER=start``
#: started ends (``server start``'s default ``--idle``).
AUTO_IDLE_MIN = 30.0
#: Seconds ``server start`` waits for the new server to answer.
START_TIMEOUT_S = 120.0
#: Seconds ``server stop`` waits for the server to end.
STOP_TIMEOUT_S = 60.0


def add_to(app: typer.Typer) -> None:
    group = typer_app(
        name="server", help=HELP, short_help=VERBS["server"], epilog=EPILOG,
        invoke_without_command=True,
    )

    @group.callback()
    def _server(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None:
            raise UsageError(
                "server: start, stop or status is required ('rtshield server --help' "
                "explains them)"
            )

    @verb(group, "start", handle_start, group="server", help=START_HELP,
          short_help="start this installation's server", epilog=START_EPILOG)
    def start(
        idle: Annotated[float, opt(
            "--idle", "minutes without a command after which the server ends "
            "(default 30; 0: never)", "MINUTES", min=0.0)] = AUTO_IDLE_MIN,
        warm_up: Annotated[bool, opt(
            "--warm-up/--no-warm-up", "run one short scenario with its figures at start "
            "(the default), so that what every command loads is loaded once; without it the "
            "server starts in about a second and each command loads what it uses, as "
            "without a server")] = True,
    ) -> None:
        ...

    @verb(group, "stop", handle_stop, group="server", help=STOP_HELP,
          short_help="stop this installation's server", epilog=STOP_EPILOG)
    def stop() -> None:
        ...

    @verb(group, "status", handle_status, group="server", help=STATUS_HELP,
          short_help="say whether this installation's server runs", epilog=STATUS_EPILOG)
    def status() -> None:
        ...

    app.add_typer(group)


def _folder() -> str:
    try:
        return serverlink.private_dir(create=True)
    except serverlink.LinkError as e:
        raise UsageError(f"server: {e}") from None


def _status(path: str) -> dict | None:
    """The status of the server at ``path``, or None when none answers."""
    try:
        answer = serverlink.ask({"op": "status"}, path)
    except serverlink.Declined:
        return None
    return answer.get("status")


def handle_start(args) -> int:
    directory = _folder()
    key = serverlink.server_key()
    path = serverlink.socket_path(directory, key)
    running = _status(path)
    if running is not None and running.get("current"):
        if not args.quiet:
            print(f"rtshield server: running already (pid {running['pid']}), "
                  f"listening on {path}")
        return 0
    if running is not None:  # stale: it ends now; wait for its socket to go
        wait_gone(running["pid"])
    log_path = os.path.join(directory, f"{key}.log")
    t0 = time.monotonic()
    proc = _launch(path, key, log_path, args.idle, args.warm_up)
    while True:
        status = _status(path)
        if status is not None and status.get("pid") == proc.pid:
            break
        code = proc.poll()
        if code is not None:
            raise UsageError(f"server: it did not start ({_last_line(log_path, code)})")
        if time.monotonic() - t0 > START_TIMEOUT_S:
            proc.kill()
            raise UsageError(
                f"server: it did not answer within {START_TIMEOUT_S:g} s (its log: {log_path})"
            )
        time.sleep(0.05)
    if not args.quiet:
        idle = (f"it ends after {args.idle:g} min without a command" if args.idle > 0
                else "it runs until stopped")
        print(f"rtshield server: started (pid {proc.pid}) in "
              f"{time.monotonic() - t0:.1f} s, listening on {path}; {idle}")
    return 0


def _launch(path: str, key: str, log_path: str, idle: float, warm_up: bool,
            lock_fd: int | None = None) -> subprocess.Popen:
    """The server process, started detached (a session of its own, no terminal), its
    output in ``log_path``; ``lock_fd``: the installation's lock, taken here and
    handed to it, so that no other server starts while it imports."""
    lock = [] if lock_fd is None else ["--lock-fd", str(lock_fd)]
    with open(log_path, "w") as log:
        return subprocess.Popen(
            # -P (3.11 on): the server's folder is not on its import path
            [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []),
             "-m", "rtshield.daemon", "--socket", path, "--key", key,
             "--idle", f"{idle:g}", *([] if warm_up else ["--no-warm-up"]), *lock],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd="/",
            start_new_session=True, close_fds=True, pass_fds=() if lock_fd is None else (lock_fd,),
        )


def start_in_background() -> int | None:
    """Start this installation's server (with :data:`AUTO_IDLE_MIN` and its warm-up)
    without waiting for it, unless one runs or is starting (it holds the
    installation's lock, taken here first: :mod:`rtshield.daemon`); its pid, or None when
    none was started. For ``RTSHIELD_SERVER=start`` (:func:`rtshield.entry.main`),
    after a command that found no server: nothing is printed, and a folder that may
    not hold a server starts none."""
    try:
        directory = serverlink.private_dir(create=True)
    except (serverlink.LinkError, OSError):
        return None
    key = serverlink.server_key()
    lock_path = os.path.join(directory, f"{key}.lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a server runs, or is starting
            return None
        path = serverlink.socket_path(directory, key)
        log_path = os.path.join(directory, f"{key}.log")
        try:
            return _launch(path, key, log_path, AUTO_IDLE_MIN, True, lock_fd=fd).pid
        except OSError:  # its log not writable, no process to spare: the command is done
            return None
    finally:
        os.close(fd)  # the server holds the lock now (the same open file)


def _last_line(log_path: str, code: int) -> str:
    try:
        with open(log_path) as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        lines = []
    last = lines[-1] if lines else f"exit status {code}"
    return last.removeprefix("rtshield: error: server: ")


def wait_gone(pid: int, timeout: float = STOP_TIMEOUT_S) -> bool:
    """Wait until the process ``pid`` ended (at most ``timeout`` s); whether it did."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def _this_server() -> tuple[str, dict | None]:
    """This installation's socket and its server's status (None: none answers)."""
    path = serverlink.socket_path(_folder())
    return path, _status(path)


def handle_stop(args) -> int:
    path, status = _this_server()
    if status is None:
        if not args.quiet:
            print("rtshield server: none was running")
        return 0
    try:
        serverlink.ask({"op": "stop"}, path)
    except serverlink.Declined:  # it ended meanwhile
        pass
    if status["running"] and not args.quiet:
        print(f"rtshield server: stopping after the {status['running']} commands it runs")
    if not wait_gone(status["pid"]):
        raise UsageError(f"server: pid {status['pid']} did not end within "
                         f"{STOP_TIMEOUT_S:g} s (it still runs commands)")
    if not args.quiet:
        print(f"rtshield server: stopped (pid {status['pid']}, "
              f"{status['served']} commands served)")
    return 0


def handle_status(args) -> int:
    _, status = _this_server()
    if status is None:
        if not args.quiet:
            print("rtshield server: none is running for this installation "
                  "('rtshield server start' starts one)")
        return 1
    if not args.quiet:
        ident = status["identity"]
        idle = (f"ends after {status['idle_minutes']:g} min without a command"
                if status["idle_minutes"] > 0 else "runs until stopped")
        state = "running" if status["current"] else "ending (its files changed)"
        print(f"rtshield server: {state}, pid {status['pid']}, up {_duration(status['uptime_s'])}, "
              f"{status['served']} commands served, {status['running']} running now; {idle}")
        print(f"  socket:  {status['socket']}")
        print(f"  serves:  rtshield {ident['rtshield']} in {ident['package']}")
        print(f"  python:  {ident['python']} ({ident['python_version'].split()[0]})")
    return 0


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"
