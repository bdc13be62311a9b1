"""The resident server's link: where a server of this installation listens, who may
use it, what its requests and answers are, and the client's side of a served command.

A resident server (``rtshield server start``, :mod:`rtshield.daemon`) keeps
rtshield's libraries imported and forks a child for each command it serves; this
module is what the server, the ``server`` verb and the console entry point
(:mod:`rtshield.entry`) share. It imports only modules that are built into the
interpreter (``_socket``, ``_signal``, ``marshal``, ``zlib``): the entry point
imports it before it knows whether a server answers, and ``import socket`` alone
(its enums and selectors) would cost a served command about a third of what its
client costs.

The rules (docs/decisions/run-start.md, "The resident server"):

- **One server per user and installation.** It listens on a Unix socket in a
  folder of this user's alone (:func:`runtime_dir`: mode 0700, owned by the user,
  never a symbolic link; anything else is refused), named after the installation
  (:func:`identity`: the interpreter, its prefix and version, rtshield's version
  and package folder). Both ends check the other's user id (``SO_PEERCRED``).
- **Never old code.** The server declines a request, and ends, once a file of
  the package or of a library it imported changed after it started (the
  server's fingerprint, :mod:`rtshield.daemon`).
- **The client's environment or nothing.** A request carries the client's
  arguments, working folder, umask, environment and its standard input, output
  and error (passed as file descriptors, so output, ``isatty`` and progress bars
  go to the client's terminal). Variables read when Python starts or a library is
  imported (:func:`import_time_difference`) must equal the server's: otherwise
  the request is declined and the client runs the command itself.
- **Signals and exit.** Ctrl-C, SIGTERM, SIGHUP and SIGQUIT that reach the client
  are sent on to the command's process; its exit status comes back (a command
  killed by a signal kills the client with the same signal); a client that
  disappears takes its command with it.

Declined for any reason, a command runs in the client's process exactly as
without a server. ``RTSHIELD_SERVER=off`` never asks a server;
``RTSHIELD_SERVER=require`` fails (one line, exit 2) instead of running the
command itself, naming why no server served it; ``RTSHIELD_SERVER=start`` runs it
itself and then starts a server for the commands after it when none runs.
"""

from __future__ import annotations

import _signal
import _socket
import marshal
import os
import sys
import zlib

from rtshield._version import __version__

#: The variable that chooses whether a server is asked (:data:`MODES`).
ENV = "RTSHIELD_SERVER"
#: Its values: ``auto`` (the default: a server of this installation serves the
#: commands of :data:`SERVED` while it runs), ``off``, ``require``, ``start`` (as
#: ``auto``, and a command of :data:`SERVED` that found no server starts one after it
#: ran: :func:`rtshield.entry.main`).
MODES = ("auto", "off", "require", "start")

#: The verbs a server serves: the short compute commands. ``sweep``, ``calibrate``
#: and ``demo`` start Dask clusters or process pools of their own and run for
#: minutes, ``rig`` drives real networks as root, ``server`` is the server's own
#: verb: those always run in the client's process.
SERVED = frozenset({"analyze", "compare", "design", "run", "schema"})

#: Environment variables that Python or a library reads once, when it starts or is
#: imported (names, and prefixes ending in ``_`` or a letter): a server imported
#: its libraries under its own values, so a request whose values differ is
#: declined. Variables read while a command runs (``TERM``, ``COLUMNS``,
#: ``RTSHIELD_PROGRESS``, ``PATH``, ...) are the client's in the served command.
IMPORT_TIME_NAMES = frozenset({
    "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_DATA_DIRS",
    "FONTCONFIG_FILE", "FONTCONFIG_PATH",
})
IMPORT_TIME_PREFIXES = (
    "PYTHON",       # the interpreter: paths, hash seed, warnings, encodings, -u, -O ...
    "LC_",          # the locale: sys.stdout's encoding
    "LD_",          # the dynamic loader
    "MPL", "MATPLOTLIB",  # matplotlib: backend, config and cache folders, rc file
    "OPENBLAS_", "GOTO", "OMP_", "MKL_", "BLIS_", "NUMEXPR_", "NPY_", "NUMPY_",
    "ARROW_", "PYARROW_", "JE_",  # pyarrow, its memory pools
    "MALLOC_",      # glibc's allocator
    "PYDANTIC", "TYPER", "_TYPER", "CLICK", "JINJA", "RICH_",
    "CFFI",
)

#: What rtshield's command line sets in its own environment before it imports a
#: library (:func:`rtshield.cli.single_threaded_blas`), unless the user set it: the
#: process the client would be then has these values too.
PROCESS_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1"}

#: Seconds a client waits for a server to take its request (connect and the
#: first answer); a command that then runs is waited for as long as it runs.
ANSWER_TIMEOUT_S = 10.0

_INT_BYTES = 4  # a C int, SCM_RIGHTS's and SO_PEERCRED's unit on Linux


class Declined(Exception):
    """No server served the request; the message says why (one line). ``absent``: no
    server of this installation runs (no socket, or nothing answers at it), as opposed
    to one that runs and declined."""

    def __init__(self, why: str, absent: bool = False) -> None:
        super().__init__(why)
        self.absent = absent


class LinkError(Exception):
    """The server or its folder cannot be used as it should (one line)."""


# ------------------------------------------------------------------ where, who

def mode() -> str:
    """The value of :data:`ENV` (``auto`` when unset or empty); LinkError when it is
    none of :data:`MODES`."""
    value = os.environ.get(ENV, "") or "auto"
    if value not in MODES:
        raise LinkError(f"{ENV}={value}: expected one of {', '.join(MODES)}")
    return value


def served(args: list[str]) -> bool:
    """Whether a server may serve ``rtshield ARGS``: a verb of :data:`SERVED`, or
    ``rtshield`` itself with options only (``--help``, ``--version``)."""
    first = args[0] if args else ""
    return first in SERVED or first.startswith("-")


def runtime_dir() -> str:
    """The folder of this user's servers: ``$XDG_RUNTIME_DIR/rtshield`` (an absolute
    ``XDG_RUNTIME_DIR``), else ``rtshield-UID`` in ``$TMPDIR`` or ``/tmp``."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "rtshield")
    tmp = os.environ.get("TMPDIR", "")
    return os.path.join(tmp if os.path.isabs(tmp) else "/tmp", f"rtshield-{os.getuid()}")


def not_private(path: str) -> str | None:
    """Why the folder ``path`` may not hold a server's socket (None: it may): it must
    be a folder, not a symbolic link, owned by this user, with no access for others."""
    st = os.lstat(path)
    if st.st_mode & 0o170000 != 0o040000:
        return f"{path} is not a folder"
    if st.st_uid != os.getuid():
        return f"{path} belongs to user id {st.st_uid}, not to this user ({os.getuid()})"
    if st.st_mode & 0o077:
        return f"{path} is open to other users (mode {st.st_mode & 0o777:04o}; rtshield needs 0700)"
    return None


def private_dir(create: bool = False) -> str:
    """:func:`runtime_dir`, made (mode 0700) if ``create`` and missing; LinkError when
    it is missing (not ``create``) or :func:`not_private`."""
    path = runtime_dir()
    if create:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise LinkError(f"{path}: cannot make the server's folder ({e.strerror})") from None
    try:
        why = not_private(path)
    except FileNotFoundError:
        raise LinkError(f"{path}: no such folder (no server was started)") from None
    except OSError as e:
        raise LinkError(f"{path}: {e.strerror}") from None
    if why:
        raise LinkError(f"{why}: refusing to use it for rtshield's server")
    return path


def identity() -> dict[str, str]:
    """What a server must share with its client: the interpreter (its path, prefix
    and version: a virtual environment is an installation of its own) and
    rtshield's version and package folder."""
    return {
        "python": sys.executable,
        "prefix": sys.prefix,
        "python_version": sys.version,
        "rtshield": __version__,
        "package": os.path.dirname(os.path.realpath(__file__)),
    }


def server_key(ident: dict[str, str] | None = None) -> str:
    """The name of this installation's server files in :func:`runtime_dir` (a hash of
    :func:`identity`; the server compares the whole identity on each request)."""
    data = "\0".join(f"{k}={v}" for k, v in sorted((ident or identity()).items())).encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def socket_path(directory: str | None = None, key: str | None = None) -> str:
    """The socket this installation's server listens on."""
    return os.path.join(directory or runtime_dir(), f"{key or server_key()}.sock")


def effective_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` as rtshield's command line would have it (:data:`PROCESS_DEFAULTS`)."""
    return {**PROCESS_DEFAULTS, **env}


def import_time_difference(client: dict[str, str], server: dict[str, str]) -> str | None:
    """The first variable read at start or import whose value differs between the
    ``client``'s and the ``server``'s environment (both :func:`effective_env`); None
    when they agree."""
    client, server = effective_env(client), effective_env(server)
    for name in sorted(set(client) | set(server)):
        if name in IMPORT_TIME_NAMES or name.startswith(IMPORT_TIME_PREFIXES):
            if client.get(name) != server.get(name):
                return name
    return None


# ------------------------------------------------------------------ messages

def send(sock, message: dict, fds: tuple[int, ...] = ()) -> None:
    """Send ``message`` (a dict of plain values, length-prefixed ``marshal``: both
    ends are the same interpreter) with ``fds`` attached (SCM_RIGHTS)."""
    data = marshal.dumps(message)
    frame = len(data).to_bytes(4, "big") + data
    if not fds:
        sock.sendall(frame)
        return
    rights = b"".join(fd.to_bytes(_INT_BYTES, sys.byteorder) for fd in fds)
    sent = sock.sendmsg([frame], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
    if sent < len(frame):
        sock.sendall(frame[sent:])


def receive(sock, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """The next message and the file descriptors that came with it; ``(None, [])`` when
    the other end closed. LinkError on a malformed message."""
    fds: list[int] = []
    head = b""
    if max_fds:
        data, anc, _flags, _addr = sock.recvmsg(4, _socket.CMSG_SPACE(max_fds * _INT_BYTES))
        for level, kind, raw in anc:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                usable = len(raw) - len(raw) % _INT_BYTES
                fds += [int.from_bytes(raw[i:i + _INT_BYTES], sys.byteorder)
                        for i in range(0, usable, _INT_BYTES)]
        head = data
        if not head:
            return None, fds
    head += _exactly(sock, 4 - len(head), eof_ok=not head)
    if not head:
        return None, fds
    body = _exactly(sock, int.from_bytes(head, "big"))
    try:
        message = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        message = None
    if not isinstance(message, dict):
        for fd in fds:
            os.close(fd)
        raise LinkError("a malformed message on the server's socket")
    return message, fds


def _exactly(sock, n: int, eof_ok: bool = False) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            if eof_ok and got == 0:
                return b""
            raise LinkError("the other end closed the server's socket in mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def peer_uid(sock) -> int:
    """The user id of the process at the other end of the Unix socket ``sock``."""
    cred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 3 * _INT_BYTES)
    return int.from_bytes(cred[_INT_BYTES:2 * _INT_BYTES], sys.byteorder)


def connect(path: str, timeout: float = ANSWER_TIMEOUT_S):
    """A connection to the server at ``path``, its user checked; Declined when no
    server of this user answers there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise Declined(f"no server is running for this installation ({path} is missing)",
                       absent=True) from None
    if st.st_uid != os.getuid() or st.st_mode & 0o170000 != 0o140000:
        raise Declined(f"{path} is not a socket of this user's")
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
        if peer_uid(sock) != os.getuid():
            raise Declined(f"{path}: the server there runs as another user")
    except OSError as e:
        sock.close()
        raise Declined(f"no server answers at {path} ({e.strerror or e})", absent=True) from None
    except Declined:
        sock.close()
        raise
    return sock


def ask(message: dict, path: str | None = None, timeout: float = ANSWER_TIMEOUT_S) -> dict:
    """Send ``message`` to this installation's server and return its answer; Declined
    when no server answers."""
    sock = connect(path or socket_path(), timeout)
    try:
        send(sock, message)
        answer, _ = receive(sock)
    except (OSError, LinkError) as e:
        raise Declined(f"the server did not answer ({e})") from None
    finally:
        sock.close()
    if answer is None:
        raise Declined("the server closed the connection without an answer")
    return answer


# ------------------------------------------------------------------ the client

#: The signals a client passes on to its served command.
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT)


def run_served(args: list[str]) -> int:
    """Run ``rtshield ARGS`` in this installation's server, with this process's
    standard streams, folder, umask and environment; return its exit status (a
    command killed by a signal kills this process with it). Declined when no server
    takes it; LinkError when the server ends while it runs."""
    path = socket_path()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            raise Declined(f"file descriptor {fd} is closed") from None
    try:
        cwd = os.getcwd()
    except OSError as e:
        raise Declined(f"the working folder is gone ({e.strerror})") from None
    sock = connect(path)
    umask = os.umask(0o022)
    os.umask(umask)
    request = {
        "op": "run", "identity": identity(), "argv": list(args), "argv0": sys.argv[0],
        "cwd": cwd, "umask": umask, "env": dict(os.environ),
    }
    old: dict = {}
    caught: list[int] = []
    child = None

    def forward(signum, frame):  # noqa: ARG001 - a signal handler's arguments
        caught.append(signum)
        try:
            send(sock, {"op": "signal", "signal": signum})
        except OSError:  # the server is gone: the next receive says so
            pass

    try:
        # from now on a signal is the command's: sent as soon as it runs
        old = {sig: _signal.signal(sig, forward) for sig in FORWARDED}
        try:
            send(sock, request, fds=(0, 1, 2))
            answer, _ = receive(sock)
        except (OSError, LinkError) as e:
            raise Declined(f"the server did not take the request ({e})") from None
        if answer is None or "declined" in answer:
            why = answer["declined"] if answer else "it closed the connection"
            raise Declined(f"the server declined: {why}")
        child = answer.get("started")
        sock.settimeout(None)
        try:
            answer, _ = receive(sock)
        except (OSError, LinkError) as e:
            raise LinkError(f"lost the server while it ran the command ({e})") from None
        if answer is None:
            raise LinkError(
                f"the server ended while it ran the command (its process {child}); "
                "'rtshield server status' says whether a server runs"
            )
    finally:
        for sig, handler in old.items():
            _signal.signal(sig, handler)
        sock.close()
        if caught and child is None:  # not taken: the signal is this process's again
            os.kill(os.getpid(), caught[0])
    if "killed" in answer:  # end as the command ended
        signum = int(answer["killed"])
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        _signal.signal(signum, _signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    return int(answer.get("exit", 1))
