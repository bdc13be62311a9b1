"""Errors shown to the user as one line (never a traceback)."""


class UsageError(Exception):
    """Bad input from the user: a malformed file, an unknown key, a missing file.

    The message names what is wrong (file, key or line) and is printed by the
    CLI as ``rtshield: error: <message>`` with exit status 2.
    """


class OutputError(Exception):
    """A figure or a report could not be written after the numbers were saved.

    ``summary.json`` and the time series of every finished run are on disk
    when this is raised. The CLI prints ``rtshield: error: <message>`` (one
    line) and exits with status 1.
    """


class WorkError(Exception):
    """The work of a sweep or a calibration failed where it ran: a point's simulation,
    the Dask worker that ran it (:func:`point_failure`), or the local cluster that
    could not start.

    The points that finished are kept beside ``--out`` for the same command to
    resume. The CLI prints ``rtshield: error: <message>`` (one line) and exits with
    status 1.
    """


def point_failure(command: str, index: int, error: BaseException) -> BaseException:
    """What ``command`` raises when its point ``index`` failed with ``error`` where it
    ran: ``error`` itself when the CLI already says it in one line (the project's
    errors, an OS error, an interruption), else a :class:`WorkError` naming the point
    and the error (a Dask ``KilledWorker``, an internal error of the simulator)."""
    if isinstance(error, (UsageError, OutputError, WorkError, OSError, KeyboardInterrupt)):
        return error
    return WorkError(
        f"{command}: point {index} failed where it ran ({type(error).__name__}: {error}); "
        "the points that finished are kept: the same command resumes from them"
    )


#: The longest error line printed; a longer message (a huge value quoted
#: back) is cut with "…".
MAX_MESSAGE_CHARS = 1000


def one_line(message: object) -> str:
    """``message`` as one printable line of at most :data:`MAX_MESSAGE_CHARS`."""
    text = " ".join(str(message).split())
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1] + "…"
    return text
