"""Traffic at a chosen rate: how the rig holds a tool to it.

One home for the rig's pacing. A scan is held at its rate by nmap itself
(``--min-rate``/``--max-rate``: :func:`nmap_pace`, also the served-device rig's
storms'). A flood is held at its rate by the sending interface's queueing
discipline (:func:`shaper_commands`): the flood tool runs at full rate, and a token
bucket (tc ``tbf``) lets its frames out at the rate asked, evenly spaced (at most
two back to back), dropping the rest before the link; every other frame of that
interface (the wanted flows, the MODBUS polls) passes beside it unshaped in a class
of its own. The tools cannot do it themselves: hping3 ``-i u`` and mausezahn ``-d``
sleep between frames and send about half the rate asked, and trafgen's ``--rate``
sends each second's frames in one burst at the start of the second (measured on
the rig: 2 000 frames/s asked arrived as ~2 000 frames within 100 ms once a second).

The bucket counts every frame as :data:`FRAME_UNIT` bytes (``mpu``), or as the
flood's largest frame when that is larger (:func:`frame_unit`), so its byte rate is
a frame rate whatever the frame's size. The flood tool must send through the
queueing discipline: trafgen bypasses it unless told ``-q`` (``--qdisc-path``); held
there, it waits for room in its socket's send buffer (measured on two test namespaces:
a full-speed trafgen held to 1 000 and 20 000 frames/s, none dropped, about 100 and
2 000 frames in every 100 ms). On an interface that is not the rig's own the
discipline is lent and given back by :mod:`.shaper`.
"""

from __future__ import annotations

__all__ = [
    "FRAME_UNIT",
    "ROOT_HANDLE",
    "SHAPER_BURST_FRAMES",
    "SHAPER_QUEUE_FRAMES",
    "frame_unit",
    "nmap_pace",
    "pps",
    "shaper_commands",
    "unshape_command",
]

#: The bytes the token bucket counts for any frame (its ``mpu``): larger than the floods'
#: frames (54-byte SYNs, 42-byte ARP requests), so that each counts the same.
FRAME_UNIT = 1000
#: Frames the bucket may let out back to back (its burst): two, the least ``tbf`` takes
#: with a frame of :data:`FRAME_UNIT` (one would refuse a frame the size of the bucket).
SHAPER_BURST_FRAMES = 2
#: The flood class's queue (``tbf``'s limit) in units of :data:`FRAME_UNIT`; it counts the
#: frames' own bytes, not ``mpu``, so it holds ~370 SYNs of 54 bytes (a quarter of a second
#: at 1 500/s), which a flood tool that a loaded host runs late does not leave empty. The
#: FreeRTOS rig removes the shaper, and with it what the queue holds, when its tool stops.
SHAPER_QUEUE_FRAMES = 20
#: The handle of the shaper's root ``htb``: :mod:`.shaper` gives back only a root of it.
ROOT_HANDLE = "1:"
#: The classes of the sending interface's ``htb``: the rest of its traffic, the flood's.
_OTHER, _FLOOD = "1:1", "1:2"
#: What neither class limits (``htb`` shapes too: its rate is out of reach here).
_UNLIMITED = "10gbit"


def pps(rate: float) -> int:
    """The whole packets/s a tool is told for ``rate`` (at least 1)."""
    return max(1, round(rate))


def nmap_pace(rate: float) -> list[str]:
    """nmap's options that hold a scan at ``rate`` probes/s."""
    return ["--min-rate", str(pps(rate)), "--max-rate", str(pps(rate))]


def frame_unit(largest: int = 0) -> int:
    """The bytes the bucket counts for each frame of a flood whose largest frame is
    ``largest`` bytes: :data:`FRAME_UNIT`, or that frame when it is larger (a UDP storm's
    datagrams of up to 1 472 bytes: a 1 514-byte frame would count as 1.5)."""
    return max(FRAME_UNIT, largest)


def shaper_commands(
    dev: str, rate: float, match: list[str], largest: int = 0
) -> list[list[str]]:
    """``tc`` commands (without ``tc`` and its namespace) that hold the frames of ``dev``
    that ``match`` selects (a ``tc filter`` selector after ``protocol``, e.g. ``["arp",
    "u32", "match", "u32", "0", "0"]``; the largest of them ``largest`` bytes) to ``rate``
    frames/s, evenly spaced, and let every other frame out unshaped.
    :func:`unshape_command` removes them."""
    unit = frame_unit(largest)
    cls = ["htb", "rate", _UNLIMITED, "quantum", "1514"]
    return [
        ["qdisc", "replace", "dev", dev, "root", "handle", ROOT_HANDLE, "htb", "default",
         _OTHER.split(":")[1]],
        ["class", "add", "dev", dev, "parent", ROOT_HANDLE, "classid", _OTHER, *cls],
        ["class", "add", "dev", dev, "parent", ROOT_HANDLE, "classid", _FLOOD, *cls],
        ["qdisc", "add", "dev", dev, "parent", _FLOOD, "handle", "20:", "tbf",
         "rate", f"{pps(rate) * unit * 8}bit", "burst", str(SHAPER_BURST_FRAMES * unit),
         "mpu", str(unit), "limit", str(SHAPER_QUEUE_FRAMES * unit)],
        ["filter", "add", "dev", dev, "parent", ROOT_HANDLE, "protocol", *match, "flowid", _FLOOD],
    ]  # fmt: skip


def unshape_command(dev: str) -> list[str]:
    """The ``tc`` command that gives ``dev`` back its default queueing."""
    return ["qdisc", "del", "dev", dev, "root"]
