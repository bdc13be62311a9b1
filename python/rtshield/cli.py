"""The ``rtshield`` command line.

Each verb lives in its own module under :mod:`rtshield.commands` and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` to a
function ``(args) -> int``. Modules are discovered, so adding a verb does not
touch this file.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import pkgutil
import sys

from rtshield import __version__, commands
from rtshield.errors import OutputError, UsageError, one_line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rtshield",
        description=(
            "Keep the critical task of a real-time device on time under network floods: "
            "simulate a device with libshield's protections, compare and sweep "
            "configurations, analyse worst cases, and write reports."
        ),
    )
    p.add_argument("--version", action="version", version=f"rtshield {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"rtshield.commands.{info.name}")
        mod.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:  # nothing to do is a usage error, not a success
            parser.print_usage(sys.stderr)
            raise UsageError(
                "a command is required; 'rtshield --help' lists them and "
                "'rtshield COMMAND --help' explains one"
            )
        return int(args.handler(args) or 0)
    except UsageError as e:
        print(f"rtshield: error: {one_line(e)}", file=sys.stderr)
        return 2
    except OutputError as e:
        print(f"rtshield: error: {one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rtshield: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`rtshield analyze x.toml | head`): not an error
        # of ours. Point stdout at devnull so the interpreter's final flush
        # does not raise again.
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
