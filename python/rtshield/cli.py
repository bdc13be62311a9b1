"""The ``rtshield`` command line: one typer app, one command per verb.

Each verb lives in its own module under :mod:`rtshield.commands`, named after
it, with its one-line help in :data:`rtshield.commands.VERBS`. A module that
declares ``options`` (the typer parameters), ``handle(args)``, ``HELP`` and
``EPILOG`` is registered through :func:`rtshield.clitools.verb_module`; one
that builds its command itself (a group of subcommands) defines
``add_to(app)``; one that still defines only ``register(subparsers)``
(argparse) is mounted as it is through :func:`rtshield.clitools.mount_argparse`.
Modules are discovered, so adding a verb does not touch this file.

A command starts at once: ``rtshield VERB …`` imports that verb's module
alone (which imports what it uses), and ``rtshield --help`` lists the verbs
from :data:`~rtshield.commands.VERBS` without importing any of them.

Every mistake is one line on stderr, ``rtshield: error: …``: click's own usage
errors (unknown option, missing option, bad number) with exit status 2, like
the verbs' :class:`~rtshield.errors.UsageError`.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import typer

try:  # typer >= 0.29 carries its own click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer on the user's click
    from click import exceptions as click_errors

from rtshield import commands
from rtshield._version import __version__
from rtshield.cliapp import no_cyclic_gc, silence_stdout, typer_app
from rtshield.errors import UsageError, one_line
from rtshield.serverlink import PROCESS_DEFAULTS

HELP = (
    "Keep the critical task of a real-time device on time under network floods: "
    "simulate a device with libshield's protections, compare and sweep "
    "configurations, analyse worst cases, and write reports."
)

EPILOG = (
    "\b\n"
    "examples:\n"
    "  rtshield run scenarios/danicki2021/queue_500.toml --out out/q500\n"
    "  rtshield demo --out demo-report\n"
    "  rtshield COMMAND --help     explains one command"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rtshield {__version__}")
        raise typer.Exit(0)


def build_app(only: str | None = None, *, listing: bool = False) -> typer.Typer:
    """The app with every verb of :mod:`rtshield.commands`; with ``only``, that verb
    alone; with ``listing``, every verb as its name and one-line help (what
    ``rtshield --help`` shows), no verb's module imported."""
    app = typer_app(
        name="rtshield", help=HELP, epilog=EPILOG, add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback(invoke_without_command=True)
    def _top(
        ctx: typer.Context,
        version: bool = typer.Option(
            False,
            "--version",
            callback=_version,
            is_eager=True,
            help="print rtshield's version and exit",
        ),
    ) -> None:
        if ctx.invoked_subcommand is None:
            raise UsageError(
                "a command is required; 'rtshield --help' lists them and "
                "'rtshield COMMAND --help' explains one"
            )

    if listing:
        for name, short in sorted(commands.VERBS.items()):
            app.command(name, short_help=short, add_help_option=False)(_listed)
        return app
    # the verbs' shared options and rules: imported by a verb, not by the listing
    from rtshield.clitools import mount_argparse, verb_module

    for name in sorted(commands.VERBS):
        if only is not None and name != only:
            continue
        mod = importlib.import_module(f"rtshield.commands.{name}")
        if hasattr(mod, "options"):
            verb_module(app, mod, commands.VERBS[name])
        elif hasattr(mod, "add_to"):
            mod.add_to(app)
        elif hasattr(mod, "register"):
            mount_argparse(app, mod)
    return app


def _listed() -> None:  # pragma: no cover - a listed verb is never run
    raise UsageError("internal: a verb of the listing was run")


def _app_for(args: list[str]) -> typer.Typer:
    """The app ``args`` need: the verb they name alone, or the listing of every verb
    (``--help``, ``--version``, no verb, or one that does not exist)."""
    first = args[0] if args else ""
    if first in commands.VERBS:
        return build_app(first)
    return build_app(listing=True)


#: The click commands built so far, by verb ("": the listing); None (the default):
#: each call of :func:`main` builds its own. A resident server (:mod:`rtshield.daemon`)
#: keeps the ones its warm-up built (:func:`keep_commands`): its children parse with
#: them, their options' converters made already.
_kept: dict[str, typer.core.TyperGroup] | None = None


def keep_commands() -> None:
    """From now on, build each verb's command once in this process."""
    global _kept
    _kept = {} if _kept is None else _kept


def _command_for(args: list[str]):
    """The click command of :func:`_app_for`'s app (kept, after :func:`keep_commands`)."""
    if _kept is None:
        return typer.main.get_command(_app_for(args))
    key = args[0] if args and args[0] in commands.VERBS else ""
    if key not in _kept:
        _kept[key] = typer.main.get_command(_app_for(args))
    return _kept[key]


def _error_line(e: click_errors.ClickException) -> str:
    """A click error as one line naming the verb and the problem."""
    msg = one_line(e.format_message()).rstrip(".")
    if msg[:1].isupper() and not msg[1:2].isupper():
        msg = msg[0].lower() + msg[1:]
    ctx = getattr(e, "ctx", None)
    path = ctx.command_path.split()[1:] if ctx is not None else []
    where = " ".join(path)
    hint = f" (see 'rtshield {where + ' ' if where else ''}--help')"
    return f"rtshield: error: {where + ': ' if where else ''}{msg}{hint}"


def single_threaded_blas() -> None:
    """Have numpy's OpenBLAS start without helper threads, unless the user chose a count.

    At import, OpenBLAS starts one thread per further CPU, which polls for work for
    about a tenth of a CPU-second before it sleeps: in every rtshield process that
    imports numpy (a run, its figure worker, each sweep worker), beside the process's
    own work on a machine of few CPUs. rtshield's numbers use no threaded BLAS call
    (histograms, sums and integer products; the least-squares fits are a few rows),
    so its results are the same either way. Set before numpy is first imported; the
    processes a command starts inherit it.
    """
    for name, value in PROCESS_DEFAULTS.items():  # OPENBLAS_NUM_THREADS=1
        os.environ.setdefault(name, value)


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    single_threaded_blas()
    if argv is None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started as a background job of a script (SIGINT ignored there): Ctrl-C,
        # or a SIGINT sent to this process, still stops a command cleanly
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with no_cyclic_gc():  # start-up: the verb's module and what it imports
            cmd = _command_for(args)
        # click's parsing and the command, without typer's main(), which would turn a
        # Ctrl-C while it parses into exit status 130 without a word
        with cmd.make_context("rtshield", args) as ctx:
            rv = cmd.invoke(ctx)
    except typer.Exit as e:
        return int(e.exit_code)
    except typer.Abort:
        print("rtshield: interrupted", file=sys.stderr)
        return 130
    except click_errors.ClickException as e:
        print(_error_line(e), file=sys.stderr)
        return e.exit_code if e.exit_code != 1 else 2
    except UsageError as e:
        print(f"rtshield: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rtshield: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        silence_stdout()
        return 0
    return int(rv or 0)
