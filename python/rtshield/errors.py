"""Errors shown to the user as one line (never a traceback)."""


class UsageError(Exception):
    """Bad input from the user: a malformed file, an unknown key, a missing file.

    The message names what is wrong (file, key or line) and is printed by the
    CLI as ``rtshield: error: <message>`` with exit status 2.
    """
