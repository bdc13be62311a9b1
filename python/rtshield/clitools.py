"""What every ``rtshield`` verb shares: its common options and how a verb runs.

The common options (``--out``, ``--quiet``, ``--verbose``, ``--jobs``,
``--seed``) are defined once here, with one name and one help text, and each
verb's typer command reuses them (docs/cli.md); :func:`verb` registers a verb (its
own options, then ``--quiet`` and ``--verbose``) and :func:`opt` makes its own options
alike. :func:`dispatch` runs a verb's ``handle(args)`` with those options applied and
turns the project's errors into exit codes: :class:`~rtshield.errors.UsageError` → one line, 2;
:class:`~rtshield.errors.OutputError` and :class:`~rtshield.errors.WorkError` → one
line, 1; Ctrl-C → "interrupted",
130; SIGTERM → unwinds like Ctrl-C (outputs recorded, the progress bar says
"interrupted"), 143; a closed pipe → 0.

:func:`mount_argparse` mounts a verb still defined with argparse
(``register(subparsers)``) as a typer command that hands its arguments to
argparse, so such a verb keeps working under the typer app until it is converted.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import inspect
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType, SimpleNamespace
from typing import Annotated, Any

import typer

from rtshield.cliapp import no_cyclic_gc, silence_stdout
from rtshield.errors import OutputError, UsageError, WorkError, one_line
from rtshield.inputs import describe_os_error

__all__ = [
    "Jobs",
    "Out",
    "Quiet",
    "ScenarioFile",
    "Seed",
    "Terminated",
    "Verbose",
    "arg",
    "check_choice",
    "mount_argparse",
    "no_cyclic_gc",
    "opt",
    "set_option",
    "dispatch",
    "seed_overrides",
    "verb",
    "verb_module",
]

log = logging.getLogger("rtshield")

#: The help texts of the common options: one definition, reused by every verb.
QUIET_HELP = "print nothing on success: no progress bar and no terminal summary"
#: ``--help`` text of every verb's ``--out`` (what :mod:`rtshield.outputs` does with it;
#: that module is imported by the verbs that write, not by ``rtshield --help``).
OUT_HELP = (
    "output directory: created if missing; an existing one must be empty or hold "
    "earlier rtshield results, which are replaced only when the command succeeds "
    "(written beside it, then moved into place; one writer at a time; docs/outputs.md)"
)
VERBOSE_HELP = "log diagnostics (what is read, run and written) on stderr"
JOBS_HELP = "simulations run at the same time (worker processes)"
SEED_HELP = (
    "override the scenario's seed ([scenario] seed) in every run; the same scenario "
    "and seed give the same bytes"
)

#: The largest seed a scenario accepts (an unsigned 63-bit value, docs/scenarios.md).
SEED_MAX = 2**63 - 1

Out = Annotated[str, typer.Option("--out", metavar="DIR", help=OUT_HELP, show_default=False)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help=QUIET_HELP)]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help=VERBOSE_HELP)]
Jobs = Annotated[int | None, typer.Option("--jobs", "-j", metavar="N", help=JOBS_HELP)]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed", metavar="N", help=SEED_HELP, min=0, max=SEED_MAX, show_default=False
    ),
]


def arg(metavar: str, help: str) -> Any:
    """A verb's positional ``typer.Argument``: its metavar and help."""
    return typer.Argument(metavar=metavar, help=help)


#: The scenario file a verb runs (run, sweep).
ScenarioFile = Annotated[str, arg("SCENARIO", "scenario file (.toml)")]


def opt(flag: str, help: str, metavar: str | None = None, **kw: Any) -> Any:
    """A verb's own ``typer.Option``: its flag, help and metavar, no default shown (the
    help text says the default where it matters)."""
    return typer.Option(flag, help=help, metavar=metavar, show_default=False, **kw)


def check_choice(value: str, flag: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else the usage error naming ``flag``."""
    if value not in choices:
        raise typer.BadParameter(
            f"{value!r} is not one of {', '.join(choices)}", param_hint=f"'{flag}'"
        )
    return value


def set_option(help: str, metavar: str = "SECTION.KEY=VALUE") -> Any:
    """The ``--set`` option (repeatable) of a verb that runs scenarios; ``help`` says what
    one assignment does for that verb."""
    return Annotated[list[str], opt("--set", help, metavar)]


def seed_overrides(sets: list[str], seed: int | None) -> list[str]:
    """``--set`` assignments with ``--seed`` appended as ``scenario.seed=N`` (it wins)."""
    sets = list(sets or [])
    if seed is not None:
        sets.append(f"scenario.seed={seed}")
    return sets


def verb(
    app: typer.Typer,
    name: str,
    handle: Callable[[Any], int | None],
    group: str = "",
    **command: Any,
) -> Callable[[Callable[..., None]], Callable[..., int]]:
    """Register the decorated function's parameters as the typer command ``name``
    (``command``: typer's help, short_help, epilog) with ``--quiet`` and ``--verbose``
    added, and run it through :func:`dispatch` with ``handle`` (``group``: the verb
    ``app`` is, for a subcommand such as ``rig linux``).

    The function's body runs first, on its own parameters (a check that is a usage
    error of typer's, e.g. :func:`check_choice`); it returns nothing. A verb with both
    ``--set`` and ``--seed`` hands ``handle`` the seed as ``scenario.seed=N`` appended
    to ``set`` (:func:`seed_overrides`), not as its own option.
    """

    def register(fn: Callable[..., None]) -> Callable[..., int]:
        sig = inspect.signature(fn, eval_str=True)
        own = list(sig.parameters)
        common = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False, annotation=a)
            for n, a in (("quiet", Quiet), ("verbose", Verbose))
        ]

        @functools.wraps(fn)
        def run(**options: Any) -> int:
            fn(**{k: options[k] for k in own})
            if "set" in options and "seed" in options:
                options["set"] = seed_overrides(options["set"], options.pop("seed"))
            return dispatch(f"{group} {name}".strip(), handle, **options)

        run.__signature__ = sig.replace(  # type: ignore[attr-defined]
            parameters=[*sig.parameters.values(), *common], return_annotation=int
        )
        run.__annotations__ = {**fn.__annotations__, "quiet": Quiet, "verbose": Verbose}
        app.command(name, **command)(run)
        return run

    return register


def verb_module(app: typer.Typer, module: ModuleType, short_help: str) -> None:
    """Register the verb that ``module`` declares: the command named after the module,
    with its options ``module.options`` (a function whose parameters typer reads),
    run through :func:`verb` with ``module.handle``, the help texts ``module.HELP`` and
    ``EPILOG`` and ``short_help`` (the verb's line of :data:`rtshield.commands.VERBS`)."""
    name = module.__name__.rpartition(".")[2]
    verb(app, name, module.handle, help=module.HELP, short_help=short_help,
         epilog=module.EPILOG)(module.options)


class _Handler(logging.Handler):
    """The ``rtshield`` logger's records on stderr, one line each, written above the
    progress bar when one is drawn (so that the bar stays whole)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record)
            from rtshield.progress import write_line

            if not write_line(msg):
                sys.stderr.write(msg + "\n")
                sys.stderr.flush()
        except Exception:  # noqa: BLE001 - logging's own contract: report, never raise
            self.handleError(record)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        from rtshield.outputs import shown_text

        return shown_text(f"rtshield: {record.levelname.lower()}: {record.getMessage()}")


def _setup_logging(verbose: bool) -> None:
    """Diagnostics go through :mod:`logging` (the ``rtshield`` logger): warnings always
    reach stderr, ``--verbose`` lowers the level to debug (what is read, run and
    written, and each phase of the progress bar with its time)."""
    handler = _Handler()
    handler.setFormatter(_Formatter())
    handler._rtshield_cli = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(logging.DEBUG if verbose else logging.WARNING)
    log.propagate = False


def _teardown_logging() -> None:
    for h in list(log.handlers):
        if getattr(h, "_rtshield_cli", False):
            log.removeHandler(h)
    log.setLevel(logging.NOTSET)
    log.propagate = True


@contextlib.contextmanager
def _quiet(quiet: bool) -> Iterator[None]:
    """``--quiet``: no progress bar (RTSHIELD_PROGRESS=0) and standard output discarded."""
    if not quiet:
        yield
        return
    old = os.environ.get("RTSHIELD_PROGRESS")
    os.environ["RTSHIELD_PROGRESS"] = "0"
    try:
        with open(os.devnull, "w", encoding="utf-8") as null, contextlib.redirect_stdout(null):
            yield
    finally:
        if old is None:
            os.environ.pop("RTSHIELD_PROGRESS", None)
        else:
            os.environ["RTSHIELD_PROGRESS"] = old


class Terminated(KeyboardInterrupt):
    """SIGTERM (or, for ``rig``, SIGHUP) arrived: unwind like Ctrl-C, so that every
    ``finally`` records and cleans up; the exit status is 128 + the signal's number."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise Terminated(signum)


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While a verb runs, SIGTERM raises :class:`Terminated` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


class _PathsAsGiven:
    """Standard output that names a command's staging folder as its ``--out``: while a
    command writes, its files are in the staging folder beside ``--out``
    (:mod:`rtshield.outputs`), and what it prints says where they will be."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from rtshield.outputs import shown_text

        self._stream.write(shown_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _error(message: object) -> None:
    from rtshield.outputs import shown_text

    print(f"rtshield: error: {shown_text(one_line(message))}", file=sys.stderr)


def dispatch(verb: str, handle: Callable[[Any], int | None], **options: Any) -> int:
    """Run ``handle`` on a namespace of ``options``; the project's errors become exit codes.

    ``quiet`` and ``verbose`` among ``options`` are applied here (and stay in
    the namespace for handlers that read them). Every output folder the verb
    opened and did not finish is abandoned at the end, keeping its earlier
    results (:func:`rtshield.outputs.abort_out_dirs`). An OS error no layer
    named (a full disk, an I/O error) is one line naming the file, exit 1.
    """
    args = SimpleNamespace(**options)
    quiet = bool(options.get("quiet", False))
    verbose = bool(options.get("verbose", False))
    _setup_logging(verbose)
    try:
        log.debug("%s: %s", verb, ", ".join(f"{k}={v!r}" for k, v in sorted(options.items())))
        with _sigterm_unwinds(), _quiet(quiet):
            with contextlib.redirect_stdout(_PathsAsGiven(sys.stdout)):
                return int(handle(args) or 0)
    except UsageError as e:
        _error(e)
        return 2
    except (OutputError, WorkError) as e:
        _error(e)
        return 1
    except KeyboardInterrupt as e:
        print("rtshield: interrupted", file=sys.stderr)
        return 128 + e.signum if isinstance(e, Terminated) else 130
    except BrokenPipeError:
        # The reader went away (`rtshield analyze x.toml | head`): not an error
        # of ours. Point stdout at devnull so the interpreter's final flush
        # does not raise again.
        silence_stdout()
        return 0
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        _error(f"{where}{describe_os_error(e)}")
        return 1
    finally:
        from rtshield.outputs import abort_out_dirs

        abort_out_dirs()
        _teardown_logging()


# --- verbs still defined with argparse ---------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An argparse parser whose mistakes are :class:`UsageError` (one line, exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog.removeprefix('rtshield ')}: {message}")


def _build_argparse(module: ModuleType) -> tuple[argparse.ArgumentParser, str]:
    """The verb parser of ``module.register`` and its one-line help."""
    top = _Parser(prog="rtshield")
    sub = top.add_subparsers(dest="command", parser_class=_Parser)
    module.register(sub)
    (name, parser), = sub.choices.items()
    short = next((a.help for a in sub._choices_actions if a.dest == name), None) or ""
    for leaf in _leaves(parser):
        _add_common(leaf)
    return parser, short


def _leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that end a command line: ``parser`` or, under subcommands, theirs."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [parser]
    return [leaf for a in subs for p in a.choices.values() for leaf in _leaves(p)]


def _add_common(parser: argparse.ArgumentParser) -> None:
    """The common options a verb does not define itself (same names, same help)."""
    have = {s for a in parser._actions for s in a.option_strings}
    if "--quiet" not in have:
        parser.add_argument("--quiet", "-q", action="store_true", help=QUIET_HELP)
    if "--verbose" not in have:
        parser.add_argument("--verbose", "-v", action="store_true", help=VERBOSE_HELP)
    if "--set" in have and "--seed" not in have:
        parser.add_argument("--seed", type=_seed, metavar="N", default=None, help=SEED_HELP)


def _seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"must be between 0 and {SEED_MAX}, got {v}")
    return v


def mount_argparse(app: typer.Typer, module: ModuleType) -> None:
    """Add ``module``'s argparse verb to ``app``: argparse parses the verb's arguments."""
    parser, short = _build_argparse(module)
    name = parser.prog.split()[-1]

    @app.command(
        name,
        help=parser.description,
        short_help=short,
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )
    def _verb(ctx: typer.Context) -> int:
        p, _ = _build_argparse(module)
        try:
            ns = p.parse_args(list(ctx.args))
        except UsageError as e:
            print(f"rtshield: error: {one_line(e)}", file=sys.stderr)
            return 2
        except SystemExit as e:  # --help
            return int(e.code or 0)
        opts = vars(ns)
        handler = opts.pop("handler")
        if "seed" in opts and "set" in opts:
            opts["set"] = seed_overrides(opts["set"], opts.pop("seed"))
        return dispatch(name, handler, **opts)
