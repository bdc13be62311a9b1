"""Scenario texts the tests share; how they vary a text one ``key = value`` line at a
time; the tables of bad input in tests/data and the check that a text is refused."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from rtshield.errors import UsageError
from rtshield.scenario import loads_scenario
from rtshield.tomlfile import tomllib

#: Test data: the cases of tables of bad input (tests/data/*.toml).
DATA = Path(__file__).resolve().parent / "data"


def critical_and_driver(work: str, *, priority: int, queue: int) -> str:
    """``[critical]`` and ``[driver]`` tables: the critical task, ``work`` every 10 ms at
    ``priority``, one above the network driver and its RX queue of ``queue`` packets."""
    return f"""
[critical]
period = "10ms"
work = "{work}"
priority = {priority}

[driver]
priority = {priority - 1}
queue = {queue}
"""


def danicki_device(queue: int) -> str:
    """Danicki et al.'s device (§3) as ``[critical]`` and ``[driver]`` tables: the
    critical task, 4 ms of work every 10 ms, above the network driver and its RX queue."""
    return critical_and_driver("4ms", priority=3, queue=queue)


def mote(name: str, duration: str, work: str) -> str:
    """A scenario ``name`` of ``duration`` on Regehr & Duongsaa's mote (the
    atmega103-tinyos preset), its critical task ``work`` every 10 ms above the driver
    and its 16-packet queue: ``[scenario]``, ``[critical]`` and ``[driver]``."""
    return f"""
[scenario]
name = "{name}"
platform = "atmega103-tinyos"
duration = "{duration}"
""" + critical_and_driver(work, priority=2, queue=16)


def two_source_flows(rate_a: str, rate_b: str) -> str:
    """Two constant flows, one on each source: "a" on source "A" at ``rate_a`` and "b"
    on source "B" at ``rate_b``."""
    return "".join(f"""
[[flows]]
name = "{name}"
source = "{name.upper()}"
pattern = "constant"
rate = "{rate}"
""" for name, rate in (("a", rate_a), ("b", rate_b)))


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


def cases(file: str, table: str) -> list[Any]:
    """The ``[[TABLE]]`` entries of ``tests/data/FILE`` as pytest parameters, one dict each,
    named by its ``id`` or else by its ``expect``."""
    with open(DATA / file, "rb") as f:
        entries = tomllib.load(f)[table]
    return [pytest.param(c, id=c.get("id", c["expect"])) for c in entries]


def edited(text: str, case: dict[str, Any]) -> str:
    """``text`` with the edit of a case of :func:`cases`: the first ``old`` (which must be
    there) replaced by ``new``, then ``append`` added at the end."""
    if "old" in case:
        assert case["old"] in text, case["old"]
        text = text.replace(case["old"], case["new"], 1)
    return text + case.get("append", "")


def refused(text: str, *needles: str, overrides: dict[str, Any] | None = None) -> str:
    """Loading ``text`` as "bad.toml" is refused with one line that names the file (or the
    preset it reads, by its path) and contains each of ``needles``; returns that line."""
    with pytest.raises(UsageError) as ei:
        loads_scenario(text, "bad.toml", overrides)
    msg = str(ei.value)
    assert "\n" not in msg and (msg.startswith("bad.toml") or msg.startswith("/")), msg
    for n in needles:
        assert n in msg, msg
    return msg
