"""Scenario texts the tests share, and how they vary a text one ``key = value`` line
at a time."""

from __future__ import annotations

import json
import math
import re
from typing import Any


def danicki_device(queue: int) -> str:
    """Danicki et al.'s device (§3) as ``[critical]`` and ``[driver]`` tables: the
    critical task, 4 ms of work every 10 ms, above the network driver and its RX queue."""
    return f"""
[critical]
period = "10ms"
work = "4ms"
priority = 3

[driver]
priority = 2
queue = {queue}
"""


#: Behnke et al.'s two UDP flows (§6): a high-priority flow of 500 packets per second,
#: "hp", and a low-priority flood, "lp", each with its socket.
HP_LP_FLOWS = """
[[flows]]
name = "hp"
protocol = "udp"
dst_port = 5000
priority = 5
pattern = "constant"
rate = "500pps"

[[flows]]
name = "lp"
protocol = "udp"
dst_port = 6000
pattern = "constant"
rate = "20000pps"
"""


def key_lines(text: str) -> list[int]:
    """The indices of the lines of ``text`` that set a key (``key = value``)."""
    return [i for i, ln in enumerate(text.splitlines()) if re.match(r"^[a-z_]+ = ", ln)]


def toml_value(v: Any) -> str:
    """``v`` (a bool, number, string or list of them) written as a TOML value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def with_value(text: str, line: int, value: Any) -> str:
    """``text`` with the key of line ``line`` (one of :func:`key_lines`) set to ``value``."""
    lines = text.splitlines()
    key = lines[line].split(" = ", 1)[0]
    lines[line] = f"{key} = {toml_value(value)}"
    return "\n".join(lines) + "\n"
