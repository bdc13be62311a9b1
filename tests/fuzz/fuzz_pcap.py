"""Coverage-guided fuzz target (atheris) of the capture reader, the front door of
``pattern = "pcap"`` flows: :func:`rtshield.pcap.read_pcap` on arbitrary file
bytes, then :func:`rtshield.pcap.replay` of what it accepts.

A finding: any exception but :class:`~rtshield.errors.UsageError` (a traceback
for the user), a refusal that is not one line starting with the file's path,
or an accepted capture that breaks the reader's promises (frames within the
simulator's limits, at least an Ethernet header each, times from 0 never
going backwards), or a replay with times beyond the 64-bit clock.

    nice -n 19 python tests/fuzz/fuzz_pcap.py -runs=1000000 -seed=1 \
        build/fuzz-py/corpus-pcap tests/fuzz/seeds/pcap

docs/fuzzing.md, "The front end's front door", records the campaigns.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["rtshield"]):
    from rtshield import pcap
    from rtshield.errors import UsageError

_DIR = tempfile.mkdtemp(prefix="rtshield-fuzz-pcap-")
_PATH = os.path.join(_DIR, "c.pcap")
MAX_FRAMES, MAX_BYTES, FRAME_MAX = pcap.trace_limits()
ETH = pcap.ethernet_header_bytes()


def _read(data: bytes) -> pcap.Capture:
    """The reader on ``data``: one input in 64 through a file and the input door
    (:func:`rtshield.pcap.read_pcap`), the others straight into its parser (the
    same code after the read, without the file's system calls)."""
    if len(data) % 64 == 0:
        with open(_PATH, "wb") as f:
            f.write(data)
        pcap._read_cached.cache_clear()  # every input read afresh
        return pcap.read_pcap(_PATH)
    return pcap._parse(_PATH, data, MAX_FRAMES, MAX_BYTES, FRAME_MAX)


def TestOneInput(data: bytes) -> None:  # noqa: N802 - atheris' name
    try:
        cap = _read(data)
    except UsageError as e:
        msg = str(e)
        if not msg.startswith(_PATH) or "\n" in msg or len(msg) > 1000:
            raise AssertionError(f"not one line naming the file: {msg!r}") from None
        return
    n = len(cap.frames)
    assert 1 <= n <= MAX_FRAMES and cap.n_bytes <= MAX_BYTES, (n, cap.n_bytes)
    assert all(ETH <= len(fr) <= FRAME_MAX for fr in cap.frames)
    assert cap.times_ns[0] == 0 and all(
        b >= a for a, b in zip(cap.times_ns, cap.times_ns[1:], strict=False)
    )
    scale = 1.0 + (data[-1] if data else 0) / 16.0 if len(data) % 3 else 1e-9
    try:
        rp = pcap.replay(cap, scale=scale, loop=len(data) % 2 == 1)
    except UsageError as e:
        assert "\n" not in str(e)
        return
    assert all(0 <= t <= pcap.MAX_TIME_NS for t in rp.times_ns)
    assert 0 <= rp.period_ns <= pcap.MAX_TIME_NS
    assert sum(rp.lengths) == len(rp.data)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
