"""The controller's side of a MODBUS/TCP flow on the rig: a paced poll client.

Runs in the rig's attacker (peer) namespace as a script of its own (standard
library only): ``python3 modbus_client.py SPEC_JSON``. Like a PLC's poll
cycle it keeps one connection to the device and sends a request every
``1/rate`` s — Read Holding Registers (10 registers from 0), and every tenth
poll Write Single Register — with MODBUS/TCP's transaction identifier, so a
request does not wait for the previous answer (requests are pipelined, as
the MBAP header allows). Each request has a response timeout; an answer
after it, no answer, or a poll that could not be sent (connection lost,
reconnecting) counts as a timeout. A lost connection is re-opened at the
next poll.

Records ``(sent_ns, answered_ns, status)`` per poll (``CLOCK_MONOTONIC``,
the clock of the rig's phase bounds; ``answered_ns`` 0: no answer; status
1 normal response, 2 exception response) go to ``spec["out"]`` as
little-endian u64 triples; :func:`account` turns them into the flow's
summary in the simulator's vocabulary (offered, delivered, latency), whole
and per phase. The last line on stdout is a JSON object of counts.

``rtshield rig device`` runs it as its MODBUS monitor with more of the spec:
``address``, ``count`` and ``unit`` (the registers read, default 0, 10, 1),
``write_every`` (0: never write -- a robustness test only reads), ``iface``
(the socket bound to that interface) and ``live``: a file to which each
record is appended as soon as it is final (answered, or its timeout passed;
an answer after the timeout is not in it), as :mod:`rtshield.rig.probes`
streams its samples. SIGTERM or SIGINT ends the polling early; the records
are written as at the end.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

READ_HOLDING = 0x03
WRITE_SINGLE = 0x06
UNIT = 1
READ_COUNT = 10  # registers read per poll
WRITE_EVERY = 10  # every tenth poll writes a register
MAX_LENGTH = 254  # the MBAP length field's largest value (unit id + 253-byte PDU)

STATUS_NONE, STATUS_OK, STATUS_EXCEPTION = 0, 1, 2


def request(
    tid: int,
    seq: int,
    address: int = 0,
    count: int = READ_COUNT,
    unit: int = UNIT,
    write_every: int = WRITE_EVERY,
) -> bytes:
    """Poll ``seq``'s request ADU with transaction id ``tid``: read ``count`` holding
    registers from ``address``, and every ``write_every``-th poll (0: never) write
    register 1."""
    if write_every and seq % write_every == write_every - 1:
        pdu = struct.pack(">BHH", WRITE_SINGLE, 1, seq & 0xFFFF)
    else:
        pdu = struct.pack(">BHH", READ_HOLDING, address, count)
    return struct.pack(">HHHB", tid & 0xFFFF, 0, len(pdu) + 1, unit) + pdu


def split(buf: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole response ADUs at the start of ``buf`` as ``(tid, pdu)``, and the rest.

    Raises ``ValueError`` when the stream is not MODBUS/TCP (protocol id not 0,
    length field outside 2..254): the connection cannot be re-synchronised.
    """
    out: list[tuple[int, bytes]] = []
    off = 0
    while len(buf) - off >= 6:
        tid, proto, length = struct.unpack_from(">HHH", buf, off)
        if proto != 0 or not 2 <= length <= MAX_LENGTH:
            raise ValueError(f"not a MODBUS/TCP response (protocol {proto}, length {length})")
        end = off + 6 + length
        if len(buf) < end:
            break
        out.append((tid, bytes(buf[off + 7 : end])))
        off = end
    return out, bytes(buf[off:])


def _status(pdu: bytes) -> int:
    return STATUS_EXCEPTION if not pdu or pdu[0] & 0x80 else STATUS_OK


def _q(sorted_us: Sequence[float], q: float) -> float | None:
    if not sorted_us:
        return None
    return round(sorted_us[min(len(sorted_us) - 1, int(q * len(sorted_us)))], 1)


def _part(recs: Sequence[tuple[int, int, int]], timeout_ns: int) -> dict[str, Any]:
    ok = [a - s for s, a, st in recs if st == STATUS_OK and a and a - s <= timeout_ns]
    lat = sorted(x / 1e3 for x in ok)
    late = sum(1 for s, a, st in recs if a and a - s > timeout_ns)
    exc = sum(1 for s, a, st in recs if st == STATUS_EXCEPTION and a - s <= timeout_ns)
    offered = len(recs)
    return {
        "offered": offered,
        "delivered": len(ok),
        "timeouts": offered - len(ok) - exc,
        "late": late,
        "exceptions": exc,
        "delivered_ratio": round(len(ok) / offered, 4) if offered else None,
        "latency_us": {"p50": _q(lat, 0.5), "p99": _q(lat, 0.99), "max": _q(lat, 1.0)},
    }


def account(
    records: Iterable[tuple[int, int, int]],
    bounds: Sequence[Sequence[int]],
    timeout_ns: int,
    phases: Sequence[str] = ("idle_before", "attack", "idle_after"),
) -> dict[str, Any]:
    """A MODBUS flow's summary from its poll records: whole run and per phase.

    A poll is *offered* when its slot came (sent or not); *delivered* when a
    normal response came within ``timeout_ns``; an exception response within
    the timeout counts in ``exceptions``; everything else is a ``timeout``
    (``late`` of them were answered after the timeout). A poll belongs to the
    phase its slot falls in (``bounds``: ``[lo, hi)`` ns per phase).
    """
    recs = [(int(s), int(a), int(st)) for s, a, st in records]
    whole = _part(recs, timeout_ns)
    whole["phases"] = {
        ph: _part([r for r in recs if lo <= r[0] < hi], timeout_ns)
        for ph, (lo, hi) in zip(phases, bounds, strict=True)
    }
    return whole


def read_records(path: str) -> list[tuple[int, int, int]]:
    with open(path, "rb") as f:
        data = f.read()
    n = len(data) // 24
    return [struct.unpack_from("<QQQ", data, 24 * k) for k in range(n)]


def _mono() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


_stop = False


def _on_stop(signum, frame):  # noqa: ARG001
    global _stop
    _stop = True


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Poll until ``spec["end_ns"]``, then wait out the last timeout; write the records."""
    dst, port = spec["dst"], int(spec["port"])
    period = int(1e9 / float(spec["rate"]))
    timeout_ns = int(spec["timeout_ns"])
    end = int(spec["end_ns"])
    records: list[list[int]] = []
    pending: dict[int, int] = {}  # tid -> index in records
    sock: socket.socket | None = None
    buf = b""
    counts = {"connects": 0, "connect_failures": 0, "resets": 0}
    ask = {k: int(spec[k]) for k in ("address", "count", "unit", "write_every") if k in spec}
    live = os.open(spec["live"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if (
        "live" in spec
    ) else None
    streamed = 0  # records appended to the live file

    def stream(now: int, final: bool = False) -> None:
        nonlocal streamed
        if live is None:
            return
        out = []
        while streamed < len(records):
            r = records[streamed]
            if not (final or r[2] != STATUS_NONE or now - r[0] > timeout_ns):
                break
            late = r[1] and r[1] - r[0] > timeout_ns
            out.append(struct.pack("<QQQ", r[0], 0 if late else r[1], 0 if late else r[2]))
            streamed += 1
        if out:
            os.write(live, b"".join(out))

    def close() -> None:
        nonlocal sock, buf
        if sock is not None:
            sock.close()
        sock, buf = None, b""
        pending.clear()

    def receive(wait_s: float) -> None:
        nonlocal buf
        if sock is None:
            time.sleep(max(0.0, wait_s))
            return
        r, _, _ = select.select([sock], [], [], max(0.0, wait_s))
        if not r:
            return
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        now = _mono()
        if not data:
            counts["resets"] += 1
            close()
            return
        try:
            answers, buf = split(buf + data)
        except ValueError:
            counts["resets"] += 1
            close()
            return
        for tid, pdu in answers:
            k = pending.pop(tid, None)
            if k is not None:
                records[k][1], records[k][2] = now, _status(pdu)

    slot = max(_mono(), int(spec.get("t0_ns", 0)))  # the first poll: at t0_ns, if given
    seq = 0
    while slot < end and not _stop:
        now = _mono()
        stream(now)
        if now < slot:
            receive((slot - now) / 1e9)
            continue
        if sock is None:
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                if spec.get("iface"):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, spec["iface"].encode())
                s.settimeout(min(1.0, timeout_ns / 1e9))
                try:
                    s.connect((dst, port))
                except OSError:
                    s.close()
                    raise
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock = s
                counts["connects"] += 1
            except OSError:
                counts["connect_failures"] += 1
        records.append([_mono(), 0, STATUS_NONE])  # the request's send time
        if sock is not None:
            tid = seq & 0xFFFF
            try:
                sock.sendall(request(tid, seq, **ask))
                pending[tid] = len(records) - 1
            except OSError:
                counts["resets"] += 1
                close()
        seq += 1
        slot += period
        # slots that passed while connecting: offered, not sent
        while slot + period <= _mono() and slot < end:
            records.append([slot, 0, STATUS_NONE])
            seq += 1
            slot += period
    drain = _mono() + timeout_ns
    while pending and (now := _mono()) < drain:
        receive((drain - now) / 1e9)
        stream(_mono())
    close()
    stream(_mono(), final=True)
    if live is not None:
        os.close(live)
    with open(spec["out"], "wb") as f:
        for r in records:
            f.write(struct.pack("<QQQ", *r))
    answered = sum(1 for r in records if r[1])
    return {"polls": len(records), "answered": answered, **counts}


def main(argv: Sequence[str]) -> int:
    spec = json.loads(argv[1])
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    if spec.get("go"):  # started ahead: say so, then take t0_ns/end_ns from the go line
        print("ready", flush=True)
        spec.update(json.loads(sys.stdin.readline() or "{}"))
    print(json.dumps(run(spec)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
