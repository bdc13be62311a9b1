"""The ``rtshield`` command line."""

from __future__ import annotations

import argparse
import sys

from rtshield import __version__


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


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
    p.add_subparsers(dest="command", metavar="COMMAND")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler = getattr(args, "handler", None)
    try:
        return int(handler(args) or 0)
    except UsageError as e:
        print(f"rtshield: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rtshield: interrupted", file=sys.stderr)
        return 130
