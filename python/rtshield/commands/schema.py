"""``rtshield schema [scenario|system|platform|profile] [--out FILE] [--markdown]``: the
file formats.

Prints the JSON Schema of a scenario file (or of a system file for
``analyze``/``design``, of a platform preset, or of a storm profile for ``rig
device``), made from the pydantic models that validate them (:mod:`rtshield.schema`,
:mod:`rtshield.schema.system`, :mod:`rtshield.schema.profile`), with
the limits of the installed libshield. An editor given it (e.g. the
Even Better TOML extension, ``#:schema ./scenario.schema.json`` at the top
of a file) completes keys and flags mistakes as one types. ``--markdown``
prints the key reference of docs/scenarios.md instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rtshield.clitools import Verbose, dispatch
from rtshield.commands import VERBS

KINDS = ("scenario", "system", "platform", "profile")


def add_to(app: typer.Typer) -> None:
    @app.command(
        "schema",
        help="Print the JSON Schema of a scenario file (or of a system file for analyze and "
        "design, of a platform preset, or of a storm profile for rig device): the keys, "
        "their types, units, ranges, defaults and meaning, as rtshield checks them. Editors "
        "that read JSON Schema complete and check TOML with it. --markdown prints the key "
        "reference of docs/scenarios.md instead.",
        short_help=VERBS["schema"],
        epilog="\b\nexamples:\n  rtshield schema --out scenario.schema.json\n"
        "  rtshield schema system\n  rtshield schema --markdown",
    )
    def schema_(
        which: Annotated[
            str,
            typer.Argument(
                metavar="[scenario|system|platform|profile]", help="which file format"
            ),
        ] = "scenario",
        out: Annotated[
            str | None,
            typer.Option(
                "--out",
                metavar="FILE",
                help="write it to FILE instead of standard output",
                show_default=False,
            ),
        ] = None,
        markdown: Annotated[
            bool, typer.Option("--markdown", help="the Markdown key reference (scenario only)")
        ] = False,
        verbose: Verbose = False,
    ) -> int:
        return dispatch("schema", run, which=which, out=out, markdown=markdown, verbose=verbose)


def run(args) -> int:
    from rtshield import schema
    from rtshield.errors import UsageError

    if args.which not in KINDS:
        raise UsageError(f"schema: {args.which!r} is not one of: {', '.join(KINDS)}")
    if args.markdown:
        if args.which != "scenario":
            raise UsageError("schema: --markdown gives the scenario key reference only")
        text = "\n\n".join(
            f"<!-- {name} -->\n{block}" for name, block in schema.markdown_blocks().items()
        )
    else:
        text = json.dumps(schema.json_schema(args.which), indent=2, ensure_ascii=False)
    if args.out is None:
        print(text)
        return 0
    path = Path(args.out)
    if path.is_dir():
        raise UsageError(f"--out: {path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise UsageError(f"--out: cannot create {path}: no folder {path.parent}")
    try:
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        raise UsageError(f"--out: cannot write {path}: {e.strerror or e}") from None
    return 0
