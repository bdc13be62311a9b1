"""What the command line needs before it knows the verb: the settings every typer app
(or group) of ``rtshield`` shares (:func:`typer_app`), start-up without the cyclic
garbage collector (:func:`no_cyclic_gc`) and a closed standard output
(:func:`silence_stdout`).

A module of its own, importing typer alone, so that ``rtshield --help`` (which
lists the verbs from :data:`rtshield.commands.VERBS`) builds its app without the
verbs' shared options, logging and exit-code rules (:mod:`rtshield.clitools`).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

import typer

#: A group's own ``-h``/``--help`` flag reads ``False`` when it is not given (click's
#: ``default_map``): typer converts a value that is not a boolean already (an absent
#: flag's ``None``) through a pydantic adapter, which would import pydantic for every
#: ``rtshield VERB --help`` (the top group's flag is absent) and cost more than the
#: rest of the help.
_ABSENT_HELP_FLAG = {"help": False}


def typer_app(**kw: Any) -> typer.Typer:
    """A typer app or group of ``rtshield`` (``kw``: its name, help, ...) with the settings
    every one shares: plain click help, since scenario keys are written in brackets
    (``[critical] period``) which rich markup would swallow; ``-h`` as well as ``--help``;
    no usage page instead of an error when a verb or target is missing (the callback
    says what is missing, exit 2)."""
    return typer.Typer(
        rich_markup_mode=None,
        no_args_is_help=False,
        context_settings={
            "help_option_names": ["-h", "--help"],
            "default_map": dict(_ABSENT_HELP_FLAG),
        },
        **kw,
    )


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """Run the block without the cyclic garbage collector (reference counting still
    frees everything else), then put it back as it was.

    For the stretches of a command that allocate many objects that live to its
    end and little cyclic garbage: importing libraries and building models
    (each collection would walk every object imported so far), and ``rtshield
    run``'s one run (its figures leave a few MB of cycles). At the end the
    block's objects join the oldest generation unexamined (``gc.freeze`` then
    ``gc.unfreeze``), so the first collection after it does not walk them all;
    a later full collection still frees their cycles. A command that runs long
    (a sweep, a calibration) keeps the collector on.
    """
    was = gc.isenabled()
    mine = gc.get_freeze_count() == 0  # nobody else's frozen objects to thaw
    gc.disable()
    try:
        yield
    finally:
        if mine:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


def silence_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
