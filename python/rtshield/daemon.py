"""The resident server (``rtshield server start``): rtshield's libraries imported
once, a child forked for each command it serves.

``python -m rtshield.daemon --socket PATH --key KEY --idle MINUTES`` is what
``rtshield server start`` (:mod:`rtshield.commands.server`) starts, detached, with
its output in a log beside the socket. The server

1. takes this installation's lock (``KEY.lock``: one server per installation),
2. notes the fingerprint of rtshield's package (every file's size and time),
3. imports what the served commands use and runs one short scenario with its
   figures (:func:`warm`), in this process: typer and the command line, pydantic
   and the scenario schema, numpy, pyarrow, jinja2 and the report's compiled
   templates, matplotlib and its fonts, the native library,
4. checks that nothing changed meanwhile, that no library left a thread running
   (a fork copies only the thread that forks: the server never forks with a
   second one), and listens.

For each request (:mod:`rtshield.serverlink`) it checks the client's installation,
the environment variables read at import, a ``matplotlibrc`` in the client's folder
and the fingerprints (of the package and of the libraries it imported, and their
rc file); any difference declines the request (the client then runs the command
itself), a changed file also ends the server. Otherwise it forks a child, which
takes the client's standard streams, folder, umask, environment and arguments and
runs :func:`rtshield.cli.main`, as the client's process would; the server passes
the client's signals on to it, sends its exit status back, and ends it (with its
process group) when the client disappears. It ends after ``--idle`` minutes
without a command (0: never), on ``rtshield server stop`` or on SIGTERM, SIGINT or
SIGHUP, after the commands it runs have ended; a child ends with it.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import fcntl
import hashlib
import io
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback

from rtshield import serverlink
from rtshield.serverlink import LinkError, receive, send

#: Seconds the server waits for a request once a client connected.
REQUEST_TIMEOUT_S = 5.0

#: The libraries the server imports for its commands: a changed file of one (an
#: upgrade) makes the server stale like a changed file of rtshield.
LIBRARIES = (
    "typer", "click", "rich", "pydantic", "pydantic_core", "numpy", "pyarrow", "jinja2",
    "markupsafe", "matplotlib", "cffi", "tomli_w",
)

#: Every file descriptor a child closes before it reports its exit status.
MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536

#: The scenario the server runs at start (its figures too), two seconds of it, so
#: that everything a run imports, builds and compiles is in the server.
WARM_SCENARIO = "scenarios/examples/constant_flood.toml"
#: the system the warm-up analyses (a schedulable one: its analyze ends with 0)
WARM_SYSTEM = "scenarios/analysis/multisource.toml"


def log(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} rtshield server[{os.getpid()}]: {message}",
          file=sys.stderr, flush=True)


# ------------------------------------------------------------------ fingerprints

def package_fingerprint(package: str) -> str:
    """Every file of rtshield's package folder (not ``__pycache__``, not a linked
    folder such as the scenarios of a development checkout): name, size, time and
    inode, the native library's too (it may be a link). Costs about a millisecond."""
    h = hashlib.sha256()
    folders = [package]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for e in sorted(entries, key=lambda e: e.name):
                if e.name == "__pycache__":
                    continue
                if e.is_dir(follow_symlinks=False):
                    folders.append(e.path)
                    continue
                try:
                    st = e.stat()
                except FileNotFoundError:  # a dangling link
                    h.update(f"{e.path}\0missing\n".encode())
                    continue
                if st.st_mode & 0o170000 == 0o040000:  # a linked folder: data, not code
                    continue
                h.update(f"{e.path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode())
    return h.hexdigest()


def libraries_fingerprint() -> str:
    """The interpreter, the ``__init__`` of every library of :data:`LIBRARIES` this
    process imported (an upgrade rewrites it), and matplotlib's rc file."""
    files = [sys.executable]
    for name in LIBRARIES:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            files.append(mod.__file__)
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        files.append(mpl.matplotlib_fname())
    h = hashlib.sha256()
    for f in files:
        try:
            st = os.stat(f)
            h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\n".encode())
        except OSError:
            h.update(f"{f}\0missing\n".encode())
    return h.hexdigest()


def threads() -> list[str]:
    """The names of this process's threads (the kernel's list: native ones too)."""
    names = []
    for tid in sorted(os.listdir("/proc/self/task")):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:  # it ended meanwhile
            pass
    return names


# ------------------------------------------------------------------ start

def warm(package: str, full: bool = True) -> None:
    """Import what the served commands use and (``full``) run one short scenario with
    its figures, drawn here, its output thrown away, in this process; without
    ``full`` the libraries a command uses are imported by each command."""
    # pyarrow's jemalloc starts a background thread at import unless told not to;
    # its default pool is another one, so this changes no result
    conf = os.environ.get("JE_ARROW_MALLOC_CONF", "")
    os.environ["JE_ARROW_MALLOC_CONF"] = (conf + "," if conf else "") + "background_thread:false"
    from rtshield import cli

    cli.single_threaded_blas()
    cli.keep_commands()  # the commands the warm-up builds serve the children
    if not full:
        return
    t0 = time.monotonic()
    import matplotlib.backends.backend_agg  # noqa: F401 - the server's children draw

    from rtshield.runner import run_one
    from rtshield.scenario import load_scenario, parse_overrides

    scenario = os.path.join(package, WARM_SCENARIO)
    out = tempfile.mkdtemp(prefix="rtshield-server-warm-")
    quiet = open(os.devnull, "w")  # noqa: SIM115 - closed below
    saved = sys.stdout
    sys.stdout = quiet
    try:
        short = ["--set", "scenario.duration=2s"]
        commands = [
            ["run", scenario, *short, "--no-figures", "--out", f"{out}/run"],
            # the analysis is imported by the verbs that use it, no longer by their help
            ["analyze", os.path.join(package, WARM_SYSTEM)],
            ["design", scenario, "--scenario", "--no-simulate"],
            *([verb, "--help"] for verb in sorted(serverlink.SERVED)),
            ["--help"],
        ]
        for argv in commands:
            code = cli.main(argv)
            if code != 0:
                raise LinkError(f"warming up: 'rtshield {' '.join(argv)}' ended with {code}")
        t1 = time.monotonic()
        # the figures drawn here: what drawing loads (fonts, glyphs, modules) is then
        # loaded in every child and its figure workers
        run_one(load_scenario(scenario, parse_overrides(short[1:])), f"{out}/figures",
                figures=True)
    finally:
        sys.stdout = saved
        quiet.close()
        shutil.rmtree(out, ignore_errors=True)
    # the figures every run draws, made ahead: each child (and its figure workers)
    # has its own copy by the fork and skips making their axes and ticks
    from rtshield.figures import stock_run_figures

    stock_run_figures()
    log(f"warmed up: imports and a run {t1 - t0:.1f} s, figures {time.monotonic() - t1:.1f} s")


def start(args: argparse.Namespace) -> int:
    """Take the lock, warm up, listen, serve until the end; the exit status."""
    env = dict(os.environ)  # the clients' environments are compared with this one
    ident = serverlink.identity()
    if serverlink.server_key(ident) != args.key:
        raise LinkError(f"this is another installation than the one asked for ({ident})")
    directory = serverlink.private_dir()
    if os.path.dirname(args.socket) != directory:
        raise LinkError(f"{args.socket}: not in the server's folder {directory}")
    if args.lock_fd is not None:  # taken by the launcher, so no second one starts meanwhile
        lock = args.lock_fd
        os.set_inheritable(lock, False)
    else:
        lock = os.open(os.path.join(directory, f"{args.key}.lock"),
                       os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held already: a no-op
    except BlockingIOError:
        raise LinkError("a server of this installation is running already") from None
    before = package_fingerprint(ident["package"])
    t0 = time.monotonic()
    warm(ident["package"], full=args.warm_up)
    if package_fingerprint(ident["package"]) != before:
        raise LinkError("rtshield's files changed while the server started")
    running = threads()
    if len(running) != 1:
        raise LinkError(f"a library left threads running ({', '.join(running[1:])}): "
                        "the server cannot fork safely")
    server = Server(args.socket, args.idle * 60.0, ident, env, before, lock)
    log(f"ready in {time.monotonic() - t0:.1f} s, listening on {args.socket}")
    server.serve()
    log(f"ended after {server.served} commands")
    return 0


# ------------------------------------------------------------------ serving

class Server:
    """The server's loop: one process, no thread; the children do the commands."""

    def __init__(self, path: str, idle_s: float, ident: dict[str, str], env: dict[str, str],
                 fingerprint: str, lock: int) -> None:
        self.path, self.idle_s, self.ident, self.env = path, idle_s, ident, env
        self.fingerprints = (fingerprint, libraries_fingerprint())
        self.lock = lock
        self.pid = os.getpid()
        self.started = time.time()
        self.last = time.monotonic()
        self.served = 0
        self.stopping = False
        self.children: dict[int, socket.socket | None] = {}  # pid → its client (None: gone)
        self.clients: dict[int, tuple[socket.socket, int]] = {}  # fd → (client, pid)
        # each child's end of the server: the request goes down it, the exit status
        # comes up it (before the child's own teardown)
        self.links: dict[int, tuple[socket.socket, int]] = {}  # fd → (link, pid)
        self.reported: set[int] = set()  # children whose exit status went to the client
        self.spare: tuple[int, socket.socket] | None = None  # (pid, link): forked ahead
        self.spare_ok = True  # False after a spare could not be made, until a request
        self.waiting: list[socket.socket] = []  # `server stop`: answered when this ends
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.listener = self._listen()
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.poll = select.poll()
        self.poll.register(self.listener, select.POLLIN)
        self.poll.register(self.wake_r, select.POLLIN)

    def _listen(self) -> socket.socket:
        try:  # an earlier server's socket (it died): this one holds the lock now
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old)
        self.inode = os.stat(self.path).st_ino
        listener.listen(16)
        listener.setblocking(False)
        return listener

    # --- the loop

    def serve(self) -> None:
        signal.set_wakeup_fd(self.wake_w)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, _noted)  # the wakeup pipe says which arrived
        while not (self.stopping and not self.children):
            if self.spare is None and self.spare_ok and not self.stopping \
                    and not self._running():
                try:
                    self._make_spare()
                except (OSError, LinkError) as e:  # a request then forks its own
                    log(f"no spare child: {e}")
                    self.spare_ok = False
            timeout = None
            if not self.children and not self.stopping and self.idle_s > 0:
                left = self.last + self.idle_s - time.monotonic()
                if left <= 0:
                    log(f"idle for {self.idle_s / 60:g} min: ending")
                    break
                timeout = left * 1000.0
            for fd, _ in self.poll.poll(timeout):
                if fd == self.wake_r:
                    self._signals()
                elif self.listener is not None and fd == self.listener.fileno():
                    self._accept()
                elif fd in self.clients:
                    self._from_client(fd)
                elif fd in self.links:
                    self._from_child(fd)
        self._stop_listening()

    def _signals(self) -> None:
        try:
            got = os.read(self.wake_r, 512)
        except BlockingIOError:
            got = b""
        for signum in set(got):
            if signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                log(f"signal {signal.Signals(signum).name}: ending after the "
                    f"{len(self.children)} commands it runs")
                self._stop_listening()
        self._reap()

    def _stop_listening(self) -> None:
        self.stopping = True
        self._end_spare()
        if self.listener is None:
            return
        self.poll.unregister(self.listener)
        self.listener.close()
        self.listener = None
        try:  # only this server's socket: a newer server may listen there already
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            code = os.waitstatus_to_exitcode(status)
            ended = f"signal {-code}" if code < 0 else f"exit {code}"
            if self.spare is not None and pid == self.spare[0]:  # never: it waits
                log(f"the spare child {pid} ended ({ended})")
                self._close_link(self.spare[1])
                self.spare = None
                continue
            if pid not in self.children:  # a spare ended by _end_spare
                continue
            client = self.children.pop(pid)
            self.last = time.monotonic()
            for link, owner in list(self.links.values()):
                if owner == pid:
                    self._close_link(link)
            if pid in self.reported:
                self.reported.discard(pid)
                log(f"command {pid} ended: {ended} (reported before its teardown)")
                continue
            log(f"command {pid} ended: {ended}"
                f"{'' if client is not None else ' (its client had gone)'}")
            if client is None:
                continue
            try:
                send(client, {"killed": -code} if code < 0 else {"exit": code})
            except OSError:  # it is gone
                pass
            self._drop(client)

    def _running(self) -> int:
        """The commands that run (not counting those whose status went out already)."""
        return len(self.children) - len(self.reported)

    def _from_child(self, fd: int) -> None:
        """A child's exit status, sent once its command ended (its files complete and
        closed, its output folder's lock released, its output flushed) and before its
        own teardown: passed on to its client at once."""
        link, pid = self.links[fd]
        try:
            message, _ = receive(link)
        except (OSError, LinkError):
            message = None
        self._close_link(link)
        if message is None or pid not in self.children:  # it died: _reap says how
            return
        code = message.get("exit")
        if not isinstance(code, int):
            return
        client = self.children[pid]
        self.reported.add(pid)
        self.children[pid] = None
        self.last = time.monotonic()
        if client is None:
            return
        try:
            send(client, {"exit": code})
        except OSError:  # it is gone
            pass
        self._drop(client)

    def _close_link(self, link: socket.socket) -> None:
        self._forget(link, self.links)

    def _drop(self, client: socket.socket) -> None:
        self._forget(client, self.clients)

    def _forget(self, sock: socket.socket, watched: dict) -> None:
        """Close ``sock``, first no longer polled nor in ``watched`` (by its fd)."""
        fd = sock.fileno()
        if fd in watched:
            self.poll.unregister(fd)
            del watched[fd]
        sock.close()

    def _from_client(self, fd: int) -> None:
        client, pid = self.clients[fd]
        try:
            message, _ = receive(client)
        except (OSError, LinkError):
            message = None
        if message is None:  # the client is gone: its command goes with it
            log(f"command {pid}: its client is gone, killing it")
            self._drop(client)
            if pid in self.children:
                self.children[pid] = None
                _kill_group(pid, signal.SIGKILL)
            return
        signum = message.get("signal")
        if message.get("op") == "signal" and signum in serverlink.FORWARDED:
            if pid in self.children:
                log(f"command {pid}: signal {signum} from its client")
                os.kill(pid, signum)

    # --- a request

    def _accept(self) -> None:
        try:
            client, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        client.settimeout(REQUEST_TIMEOUT_S)
        fds: list[int] = []
        try:
            if serverlink.peer_uid(client) != os.getuid():
                raise LinkError("a client of another user")
            message, fds = receive(client, max_fds=3)
            if message is None:
                raise LinkError("a client left without a request")
            self._answer(client, message, fds)
        except (OSError, LinkError) as e:
            log(f"a request failed: {e}")
            client.close()
        finally:
            for fd in fds:
                os.close(fd)

    def _answer(self, client: socket.socket, message: dict, fds: list[int]) -> None:
        op = message.get("op")
        self.last = time.monotonic()
        if op == "status":
            status = self.status()
            send(client, {"status": status})
            client.close()
            if not status["current"]:
                log("rtshield's files or its libraries changed since the start: ending")
                self._stop_listening()
        elif op == "stop":
            log("asked to stop: ending after the "
                f"{len(self.children)} commands it runs")
            send(client, {"stopping": os.getpid()})
            self.waiting.append(client)
            self._stop_listening()
        elif op == "run":
            why = self._declines(message, fds)
            if why:
                send(client, {"declined": why})
                client.close()
                return
            self._fork(client, message, fds)
        else:
            raise LinkError(f"an unknown request {op!r}")

    def status(self) -> dict:
        return {
            "pid": os.getpid(), "socket": self.path, "identity": self.ident,
            "started": self.started, "uptime_s": time.time() - self.started,
            "idle_minutes": self.idle_s / 60.0, "served": self.served,
            "running": self._running(),
            "children": sorted(set(self.children) - self.reported),
            "spare": self.spare[0] if self.spare is not None else None,
            "current": not self._stale(),
        }

    def _stale(self) -> bool:
        return (package_fingerprint(self.ident["package"]), libraries_fingerprint()) \
            != self.fingerprints

    def _declines(self, message: dict, fds: list[int]) -> str | None:
        """Why the request ``message`` is not served here (None: it is)."""
        if message.get("identity") != self.ident:
            return "the client is another installation of rtshield"
        if len(fds) != 3:
            return "the client did not pass its standard input, output and error"
        if self._stale():
            log("rtshield's files or its libraries changed since the start: ending")
            self._stop_listening()
            return "rtshield's files changed since the server started (the server ends)"
        env = message.get("env")
        if not isinstance(env, dict):
            return "the request has no environment"
        name = serverlink.import_time_difference(env, self.env)
        if name:
            return (f"{name} differs from the server's (read when Python starts or a "
                    "library is imported)")
        if os.path.exists(os.path.join(str(message.get("cwd", "")), "matplotlibrc")):
            return "matplotlib would read the matplotlibrc of the working folder"
        running = threads()
        if len(running) != 1:  # never: start() checked, and the loop starts none
            return f"the server has threads ({', '.join(running[1:])}) and cannot fork"
        return None

    def _fork(self, client: socket.socket, message: dict, fds: list[int]) -> None:
        """Hand the request to the spare child (forked ahead, while no command ran) or,
        when there is none, to a child forked now; tell the client its pid."""
        if self.spare is None:
            self._make_spare()
        pid, link = self.spare
        self.spare = None
        self.spare_ok = True
        try:
            send(link, message, fds=tuple(fds))
        except OSError as e:  # it died (never: it waits): the next request gets a new one
            self._close_link(link)
            _kill_group(pid, signal.SIGKILL)
            raise LinkError(f"the child {pid} did not take the request ({e})") from None
        self.links[link.fileno()] = (link, pid)
        self.poll.register(link, select.POLLIN)
        self.served += 1
        log(f"command {pid}: rtshield {' '.join(message['argv'])}")
        self.children[pid] = client
        self.clients[client.fileno()] = (client, pid)
        self.poll.register(client, select.POLLIN)
        try:
            send(client, {"started": pid})
        except OSError:  # gone already: its command goes with it
            self._drop(client)
            self.children[pid] = None
            _kill_group(pid, signal.SIGKILL)

    def _make_spare(self) -> None:
        """Fork the child that serves the next request (:attr:`spare`): it does what does
        not depend on the request now, then waits for one on its link. It is the
        server's image as of now, so it serves only after the request's checks
        (:meth:`_declines`: the fingerprints, the environment) passed, as a child
        forked then would; a stale server ends it with itself."""
        running = threads()
        if len(running) != 1:  # never: start() checked, and the loop starts none
            raise LinkError(f"the server has threads ({', '.join(running[1:])}) "
                            "and cannot fork")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sys.stdout.flush()
        sys.stderr.flush()
        # the child starts with the client's signals held, and takes them once its own
        # handlers are set and it has a request (the server's would note them and do
        # nothing)
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, serverlink.FORWARDED)
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            ours.close()
            theirs.close()
            raise
        if pid == 0:  # the child: never returns
            code = 70  # EX_SOFTWARE: the child failed before the command ran
            try:
                ours.close()
                ran, code = self._child(theirs, mask)
                if ran:
                    _report(theirs, code)
            except BaseException:  # noqa: BLE001 - shown, never hidden: on the client's stderr
                traceback.print_exc()  # (or the server's log, before the child took it)
                _flush()
            finally:
                os._exit(code)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        theirs.close()
        try:  # also here, so that a kill of the group cannot come before the child's
            os.setpgid(pid, pid)
        except OSError:  # it did it itself, or ended already
            pass
        self.spare = (pid, ours)

    def _end_spare(self) -> None:
        if self.spare is None:
            return
        pid, link = self.spare
        self.spare = None
        link.close()  # it reads the end and leaves; killed too, in case it cannot
        _kill_group(pid, signal.SIGKILL)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    # --- the child

    def _child(self, link: socket.socket, mask) -> tuple[bool, int]:
        """Wait for a request on ``link``, then become the client's process and run its
        command: (whether a request came, the exit status)."""
        os.setpgid(0, 0)
        # PR_SET_PDEATHSIG: end with the server (SIGKILL while it waits: its signals
        # are held until a command runs)
        self.libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if os.getppid() != self.pid:  # the server ended before the line above
            return False, 1
        for sock in (*(c for c, _ in self.clients.values()), *self.waiting,
                     *(ln for ln, _ in self.links.values())):
            sock.close()
        if self.listener is not None:
            self.listener.close()
        for fd in (self.wake_r, self.wake_w, self.lock):
            os.close(fd)
        message, fds = receive(link, max_fds=3)  # as a spare: until a request comes
        if message is None:  # the server ended it
            return False, 0
        self.libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != self.pid:  # the server ended before the line above
            return False, 1
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        fds.clear()
        os.chdir(message["cwd"])
        os.umask(int(message["umask"]))
        os.environ.clear()
        os.environ.update(message["env"])
        sys.argv = [str(message.get("argv0", "rtshield")), *message["argv"]]
        _standard_streams()
        random = sys.modules.get("numpy.random")
        if random is not None:  # numpy's global generator: seeded afresh, as in a new process
            random.seed()
        return True, _run_command(list(message["argv"]))


def _report(link: socket.socket, code: int) -> None:
    """Send the command's exit status to the server (which passes it to the client),
    after closing every other file of this process: the command's files, its output
    folder's lock and the client's standard streams (flushed by
    :func:`_run_command`) are closed, as they would be when this process ended, so a
    client that exits now leaves nothing half-written. What remains of this
    process's end (freeing its memory: several milliseconds) the client does not
    wait for."""
    fd = link.fileno()
    os.closerange(0, fd)
    os.closerange(fd + 1, MAX_FD)
    send(link, {"exit": code})


def _noted(signum, frame) -> None:  # noqa: ARG001 - the wakeup pipe carries it
    pass


def _kill_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the process group of the child ``pid`` (its figure workers,
    its pool's processes), or to the child alone if it has no group yet."""
    try:
        os.killpg(pid, signum)
    except ProcessLookupError:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


#: The server's own standard streams, kept: their objects own the descriptors 0-2,
#: which now are the client's; collected, they would close them.
_SERVERS_STREAMS: list[object] = []


def _standard_streams() -> None:
    """New ``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` on the client's descriptors,
    made as Python makes them at start (same encoding: the locale variables
    match; stdout line-buffered on a terminal, stderr always; PYTHONUNBUFFERED
    honoured)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        buffered = not old.write_through  # PYTHONUNBUFFERED: the client's and the server's
        _SERVERS_STREAMS.append(old)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        tty = raw.isatty()
        if fd == 0:
            binary: io.RawIOBase | io.BufferedIOBase = io.BufferedReader(raw)
        else:
            binary = io.BufferedWriter(raw) if buffered else raw
        stream = io.TextIOWrapper(
            binary, encoding=old.encoding, errors=old.errors, newline="\n",
            line_buffering=buffered and (tty or fd == 2), write_through=not buffered,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_command(argv: list[str]) -> int:
    """:func:`rtshield.cli.main` on ``argv``, ended as the interpreter ends a script:
    an uncaught exception printed (status 1), exit handlers run, streams flushed."""
    from rtshield import cli

    try:
        code = cli.main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int | None):
            print(e.code, file=sys.stderr)
    except KeyboardInterrupt:  # uncaught: the interpreter ends by SIGINT
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:  # noqa: BLE001 - printed with its traceback, as Python does
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    _flush()
    return int(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to write
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rtshield.daemon",
                                     description="rtshield's resident server "
                                     "(start it with 'rtshield server start')")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle", type=float, default=30.0, help="minutes; 0: never")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                        help="import only the command line ahead")
    parser.add_argument("--lock-fd", type=int, default=None,
                        help="the installation's lock, open and taken by the launcher")
    args = parser.parse_args(argv)
    os.chdir("/")  # the server holds no folder of the user's
    try:
        return start(args)
    except LinkError as e:
        print(f"rtshield: error: server: {e}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
