"""Packet captures (pcap files) as traffic sources.

A ``[[flows]]`` entry with ``pattern = "pcap"`` replays a capture: every
frame's bytes enter the simulated NIC at its time relative to the first
frame (``skip``, ``scale``, ``loop`` shape the replay), and libshield
classifies the real bytes there (the multiqueue NIC's distribution map, the
receive path's early demultiplexing).

The file format is the classic libpcap one (microsecond or nanosecond
timestamps, either byte order) with Ethernet link type; its header layouts
and magic numbers are dpkt's (``dpkt.pcap``). Records are read here rather
than through ``dpkt.pcap.Reader`` because that reader turns timestamps into
floats and passes a record cut short by a truncated file on silently: a
replay needs exact integer times and must refuse a truncated capture.

Memory is bounded: all captures of one scenario together hold at most
``RTSIM_TRACE_MAX_FRAMES`` frames and ``RTSIM_TRACE_MAX_BYTES`` bytes (the
simulator's limits, read through the binding); a bigger capture is refused
with one line before it is read to its end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

import dpkt.pcap as _pc

from ._native import load
from .errors import UsageError
from .inputs import read_input, resolve_input

__all__ = ["Capture", "Replay", "read_pcap", "replay", "trace_limits"]

#: Magic numbers of the classic pcap format whose timestamps count nanoseconds.
_NANO = (_pc.TCPDUMP_MAGIC_NANO, _pc.PMUDPCT_MAGIC_NANO)
#: Little-endian magic numbers (as dpkt reads them big-endian first).
_LITTLE = (_pc.PMUDPCT_MAGIC, _pc.PMUDPCT_MAGIC_NANO)
#: The pcapng section header block type: a different format.
_PCAPNG = 0x0A0D0D0A


def trace_limits() -> tuple[int, int, int]:
    """(most frames, most bytes, largest frame) the simulator takes: its
    RTSIM_TRACE_MAX_FRAMES, RTSIM_TRACE_MAX_BYTES and RTSIM_FRAME_MAX."""
    _, lib = load()
    return (
        int(lib.RTSIM_TRACE_MAX_FRAMES),
        int(lib.RTSIM_TRACE_MAX_BYTES),
        int(lib.RTSIM_FRAME_MAX),
    )


def ethernet_header_bytes() -> int:
    """The smallest frame the simulator takes, an Ethernet header alone: the
    headers of its raw frame (``rtsim_frame_min(RTSIM_PROTO_RAW, 0)``)."""
    _, lib = load()
    return int(lib.rtsim_frame_min(lib.RTSIM_PROTO_RAW, 0))


@dataclass(frozen=True)
class Capture:
    """The frames of one capture: times in ns from its first frame, bytes."""

    path: str
    times_ns: tuple[int, ...]
    frames: tuple[bytes, ...]

    @property
    def span_ns(self) -> int:
        """Time from the first frame to the last."""
        return self.times_ns[-1] - self.times_ns[0] if self.times_ns else 0

    @property
    def n_bytes(self) -> int:
        return sum(len(f) for f in self.frames)


def read_pcap(path: str | Path) -> Capture:
    """Read the capture at ``path`` (cached by path, size and modification time).

    Raises :class:`UsageError` with one line naming the file for a path that is
    not a readable regular file (the input door, :mod:`rtshield.inputs`: each
    reason its own), a file that is not a classic pcap, a link type other
    than Ethernet, a truncated file, a frame shorter than an Ethernet header or longer
    than RTSIM_FRAME_MAX bytes, a frame cut by the capture's snap length, timestamps that go
    backwards, an empty capture, or one beyond the simulator's limits.
    """
    p, st = resolve_input(path, "pcap file")
    return _read_cached(str(p), st.st_size, st.st_mtime_ns)


def max_capture_bytes() -> int:
    """The largest capture file read: a header and the most frames and bytes the
    simulator's trace limits allow (a bigger file is refused unread)."""
    max_frames, max_bytes, _ = trace_limits()
    return 24 + max_frames * 16 + max_bytes


@lru_cache(maxsize=16)
def _read_cached(path: str, size: int, mtime_ns: int) -> Capture:
    max_frames, max_bytes, frame_max = trace_limits()
    limit = max_capture_bytes()
    if size > limit:
        raise UsageError(
            f"{path}: {size} bytes; a capture holds at most {max_frames} frames and "
            f"{max_bytes >> 20} MiB of frames (the simulator's trace limits)"
        )
    raw = read_input(path, limit=limit, what="pcap file")
    return _parse(path, raw, max_frames, max_bytes, frame_max)


def _parse(path: str, raw: bytes, max_frames: int, max_bytes: int, frame_max: int) -> Capture:
    eth_header = ethernet_header_bytes()
    hlen = _pc.FileHdr.__hdr_len__
    if len(raw) < 4:
        raise UsageError(f"{path}: not a pcap file (too short for a pcap header)")
    fh = _pc.FileHdr(raw[:hlen]) if len(raw) >= hlen else None
    magic = int.from_bytes(raw[:4], "big")
    if magic == _PCAPNG:
        raise UsageError(
            f"{path}: a pcapng file; only the classic pcap format is read "
            "(convert it: editcap -F pcap IN OUT)"
        )
    if magic not in _pc.MAGIC_TO_PKT_HDR or magic in (_pc.MODPCAP_MAGIC, _pc.PACPDOM_MAGIC):
        raise UsageError(f"{path}: not a pcap file (unknown magic number 0x{magic:08x})")
    if fh is None:
        raise UsageError(f"{path}: truncated: the pcap file header is cut short")
    if magic in _LITTLE:
        fh = _pc.LEFileHdr(raw[:hlen])
    if fh.linktype != _pc.DLT_EN10MB:
        raise UsageError(
            f"{path}: link type {fh.linktype}, not Ethernet ({_pc.DLT_EN10MB}); "
            "only Ethernet captures can be replayed into the NIC"
        )
    ph = _pc.MAGIC_TO_PKT_HDR[magic]
    per_s = 1_000_000_000 if magic in _NANO else 1_000_000
    scale = 1 if magic in _NANO else 1000
    plen = ph.__hdr_len__
    times: list[int] = []
    frames: list[bytes] = []
    total = 0
    off = hlen
    while off < len(raw):
        k = len(frames) + 1
        if off + plen > len(raw):
            raise UsageError(f"{path}: truncated: the record header of frame {k} is cut short")
        h = ph(raw[off : off + plen])
        off += plen
        if h.tv_usec >= per_s:
            raise UsageError(f"{path}: frame {k}: timestamp fraction {h.tv_usec} out of range")
        if h.caplen > frame_max or h.len > frame_max:
            raise UsageError(
                f"{path}: frame {k} is {max(h.caplen, h.len)} bytes; the NIC takes "
                f"Ethernet frames of at most {frame_max} bytes"
            )
        if off + h.caplen > len(raw):
            raise UsageError(
                f"{path}: truncated: frame {k} has {len(raw) - off} of its {h.caplen} bytes"
            )
        if h.caplen < h.len:
            raise UsageError(
                f"{path}: frame {k} was captured with {h.caplen} of its {h.len} bytes "
                "(snap length); capture whole frames"
            )
        if h.caplen < eth_header:
            raise UsageError(
                f"{path}: frame {k} is {h.caplen} bytes, shorter than an Ethernet header"
            )
        t = h.tv_sec * 1_000_000_000 + h.tv_usec * scale
        if times and t < times[-1]:
            raise UsageError(f"{path}: frame {k}: its timestamp is before frame {k - 1}'s")
        if k > max_frames:
            raise UsageError(f"{path}: more than {max_frames} frames (the simulator's trace limit)")
        total += h.caplen
        if total > max_bytes:
            raise UsageError(
                f"{path}: more than {max_bytes >> 20} MiB of frames (the simulator's trace limit)"
            )
        times.append(t)
        frames.append(raw[off : off + h.caplen])
        off += h.caplen
    if not frames:
        raise UsageError(f"{path}: the capture holds no frame")
    t0 = times[0]
    return Capture(path, tuple(t - t0 for t in times), tuple(frames))


@dataclass(frozen=True)
class Replay:
    """What a flow hands the simulator: frame times from its start (ns),
    lengths, the bytes back to back, and the loop period (0: one pass)."""

    times_ns: tuple[int, ...]
    lengths: tuple[int, ...]
    data: bytes
    period_ns: int

    @property
    def mean_pps(self) -> float:
        """Mean rate of a pass (looping: over the period)."""
        if self.period_ns > 0:
            return len(self.times_ns) * 1e9 / self.period_ns
        span = self.times_ns[-1] - self.times_ns[0]
        return (len(self.times_ns) - 1) * 1e9 / span if span > 0 else 0.0


#: The latest time a replayed frame or a loop period may have: the 64-bit
#: nanosecond clock's end (2^63 - 1 ns, about 292 years).
MAX_TIME_NS = 2**63 - 1


def _div_round(n: int, num: int, den: int) -> int:
    """``n * den / num`` rounded to the nearest integer (ties to even), exactly."""
    q, r = divmod(n * den, num)
    return q + 1 if 2 * r > num or (2 * r == num and q % 2 == 1) else q


def replay(cap: Capture, *, scale: float = 1.0, skip_ns: int = 0, loop: bool = False) -> Replay:
    """The replay of ``cap``: frames from ``skip_ns`` into the capture on, at
    ``scale`` times their rate (gaps divided by ``scale``), their times
    counted from the skip point. Looping repeats them every period: the
    replayed span plus one mean gap, so that an evenly spaced capture loops
    evenly.

    Exact: ``scale`` is taken at its exact (binary) value and every time is
    ``(t - skip) / scale`` rounded to the nearest nanosecond in integer
    arithmetic. Raises :class:`UsageError`, before any time is built, when
    nothing is left after ``skip``, a looped replay has a single frame (no
    period), or the replay (or its loop period) would end beyond the 64-bit
    clock (:data:`MAX_TIME_NS`; a tiny ``scale`` stretches a capture)."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise UsageError(f"{cap.path}: scale must be a positive number, got {scale!r}")
    keep = [i for i, t in enumerate(cap.times_ns) if t >= skip_ns]
    if not keep:
        raise UsageError(
            f"{cap.path}: skip {skip_ns / 1e9:g}s passes the last frame "
            f"(the capture spans {cap.span_ns / 1e9:g}s)"
        )
    num, den = Fraction(scale).as_integer_ratio()
    last = _div_round(cap.times_ns[keep[-1]] - skip_ns, num, den)
    period = 0
    if loop:
        if len(keep) < 2 or last == 0:
            raise UsageError(
                f"{cap.path}: loop needs at least two frames at different times to set its period"
            )
        period = last + -(-last // (len(keep) - 1))
    end = max(last, period)
    if end > MAX_TIME_NS:
        what = "its loop period" if period > last else "the replay"
        shown = f"{end} ns" if end < 10**24 else f"about 10^{len(str(end)) - 1} ns"
        raise UsageError(
            f"{cap.path}: scale {scale:g} stretches {what} to {shown}, beyond the 64-bit "
            f"clock ({MAX_TIME_NS} ns, about 292 years); use a larger scale"
        )
    times = tuple(_div_round(cap.times_ns[i] - skip_ns, num, den) for i in keep)
    data = b"".join(cap.frames[i] for i in keep)
    return Replay(times, tuple(len(cap.frames[i]) for i in keep), data, period)
