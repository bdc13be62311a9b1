"""rtshield's console entry point (``rtshield``, pyproject.toml's [project.scripts];
``python -m rtshield``).

A command that a resident server of this installation may serve
(:mod:`rtshield.serverlink`, ``rtshield server start``) is handed to the server when
one runs; every other command, and every command when no server runs or it declines,
runs in this process through :func:`rtshield.cli.main`, exactly as without a
server (with ``RTSHIELD_SERVER=start``, a served verb that found no server then
starts one for the commands after it). This module imports the standard library's
built-in modules only: the command line's libraries (typer and what a verb uses)
are imported by :mod:`rtshield.cli` when the command runs here.
"""

from __future__ import annotations

import sys

from rtshield import serverlink


def main(argv: list[str] | None = None) -> int:
    """Run ``rtshield`` on ``argv`` (default ``sys.argv[1:]``), served or here; returns
    the exit status.

    Without ``argv`` this process is the command (the console script, ``python -m
    rtshield``): a served command then ends it as soon as its status is known, with
    that status and without the interpreter's finalisation (a few milliseconds of a
    process that did nothing but ask the server)."""
    args = list(sys.argv[1:] if argv is None else argv)
    start = False  # RTSHIELD_SERVER=start, and no server ran for this command
    try:
        mode = serverlink.mode()
        if mode != "off" and serverlink.served(args):
            try:
                code = serverlink.run_served(args)
                if argv is None:
                    _end(code)
                return code
            except serverlink.Declined as e:
                if mode == "require":
                    raise serverlink.LinkError(f"{serverlink.ENV}=require: {e}") from None
                start = mode == "start" and e.absent and args[0] in serverlink.SERVED
    except serverlink.LinkError as e:
        print(f"rtshield: error: server: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rtshield: interrupted", file=sys.stderr)
        return 130
    try:
        from rtshield.cli import main as run_here
    except KeyboardInterrupt:  # Ctrl-C while the command line's libraries are imported
        print("rtshield: interrupted", file=sys.stderr)
        return 130
    code = run_here(argv)
    if start and code != 130:  # for the commands after this one (not after a Ctrl-C)
        from rtshield.commands.server import start_in_background

        start_in_background()
    return code


def _end(code: int) -> None:
    """End this process now with ``code``, its standard streams flushed."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed: nothing was written to it here
            pass
    os._exit(code)
