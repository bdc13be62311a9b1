"""Reading a storm profile: the file, its checks (:mod:`rtshield.schema.profile`), the
shipped default, and the storms and monitors a run selects from it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from rtshield.errors import UsageError
from rtshield.schema.profile import ProfileFile, usage_error
from rtshield.tomlfile import read_toml_text

__all__ = ["default_profile", "load_profile", "select"]


def default_profile() -> Path:
    """The profile ``rtshield rig device`` runs without ``--profile`` (in the package)."""
    return Path(__file__).resolve().with_name("default_profile.toml")


def load_profile(path: str | Path) -> tuple[ProfileFile, str]:
    """The validated profile at ``path`` and its text; a bad file is one line naming
    the path and the key."""
    doc, text = read_toml_text(path)
    try:
        return ProfileFile.model_validate(doc), text
    except ValidationError as e:
        raise UsageError(f"{path}: {usage_error(e, doc)}") from None


def select(
    prof: ProfileFile, storms: Sequence[str] | None, monitors: Sequence[str] | None
) -> ProfileFile:
    """``prof`` with only the storms and monitors named (``None``: all of them), in the
    profile's order; a name the profile does not have is refused."""
    update = {}
    for key, names, entries in (("storm", storms, prof.storm), ("monitor", monitors, prof.monitor)):
        if names is None:
            continue
        have = [e.name for e in entries]
        unknown = [n for n in names if n not in have]
        if unknown or not names:
            raise UsageError(
                f"rig device: --{key}s: "
                + (f"no {key} named {', '.join(unknown)} in the profile" if unknown else "empty")
                + f" (it has {', '.join(have)})"
            )
        update[key] = [e for e in entries if e.name in names]
    return prof.model_copy(update=update)
