"""The monitors of ``rtshield rig device``: one process per monitor, samples streamed to a file.

Runs as a script of its own (standard library only): ``python3 probes.py SPEC_JSON``,
where ``SPEC["kind"]`` is one of

* ``icmp`` -- an ICMP echo request (raw socket) every ``1/rate`` s; a sample is
  answered by the echo reply with its identifier and sequence number;
* ``udp`` -- a datagram to ``port`` every ``1/rate`` s carrying a sequence number
  and its send time, padded to ``size`` bytes; answered when the device sends it
  back (an echo service); an ICMP port unreachable is an error;
* ``tcp`` -- a new connection to ``port`` every ``1/rate`` s, reset once
  established (:func:`_abort`: the device keeps nothing of it); answered by the
  handshake, an error when refused;
* ``heartbeat`` -- listens on UDP ``port`` for the datagrams the device sends on
  its own; every arrival is a sample.

(MODBUS/TCP is :mod:`rtshield.rig.modbus_client`'s, which streams the same
records.) Every socket is bound to ``SPEC["iface"]`` when given, so the samples
go through the interface the storms use.

Records, ``CLOCK_MONOTONIC`` ns, three little-endian u64 each, appended to
``SPEC["out"]`` as soon as they are final (answered, or ``timeout_ns`` passed):
for a request ``(sent, answered, status)`` -- ``answered`` 0 without an answer;
status 0 no answer, 1 answered, 2 an error reply (refused, unreachable); for a
heartbeat ``(arrival, device_time, 1)`` with the first 16 bytes of the datagram
read as ``<u64 sequence, u64 device time>`` (0 when shorter). The probe runs
until ``SPEC["end_ns"]`` or SIGTERM/SIGINT, then writes what is pending and
prints a JSON line of counts.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

STATUS_NONE, STATUS_OK, STATUS_ERROR = 0, 1, 2
RECORD = struct.Struct("<QQQ")
ICMP_ECHO, ICMP_ECHO_REPLY = 8, 0

_stop = False


def _on_stop(signum, frame):  # noqa: ARG001
    global _stop
    _stop = True


def mono() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Recorder:
    """Samples in send order; each is appended to the file once final."""

    def __init__(self, path: str, timeout_ns: int):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.timeout_ns = timeout_ns
        self.samples: list[list[int]] = []  # [sent, answered, status]
        self.done = 0  # samples written
        self.counts = {"sent": 0, "answered": 0, "errors": 0}

    def add(self, sent: int) -> int:
        self.samples.append([sent, 0, STATUS_NONE])
        self.counts["sent"] += 1
        return len(self.samples) - 1

    def answer(self, k: int, at: int, status: int = STATUS_OK) -> None:
        s = self.samples[k]
        if s[2] == STATUS_NONE and k >= self.done:
            s[1], s[2] = at, status
            self.counts["answered" if status == STATUS_OK else "errors"] += 1

    def flush(self, now: int, final: bool = False) -> None:
        out = []
        while self.done < len(self.samples):
            s = self.samples[self.done]
            if not (final or s[2] != STATUS_NONE or now - s[0] > self.timeout_ns):
                break
            out.append(RECORD.pack(*s))
            self.done += 1
        if out:
            os.write(self.fd, b"".join(out))

    def close(self) -> None:
        self.flush(mono(), final=True)
        os.close(self.fd)


def _bind_iface(sock: socket.socket, iface: str | None) -> None:
    if iface:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def echo_request(ident: int, seq: int, payload: bytes) -> bytes:
    """An ICMP echo request with its checksum."""
    head = struct.pack("!BBHHH", ICMP_ECHO, 0, 0, ident, seq)
    c = checksum(head + payload)
    return struct.pack("!BBHHH", ICMP_ECHO, 0, c, ident, seq) + payload


def echo_reply_of(packet: bytes, ident: int) -> int | None:
    """The sequence number of an IPv4 packet that is an echo reply to ``ident``."""
    if len(packet) < 20:
        return None
    ihl = (packet[0] & 0x0F) * 4
    if len(packet) < ihl + 8:
        return None
    typ, _code, _c, rid, seq = struct.unpack_from("!BBHHH", packet, ihl)
    return seq if typ == ICMP_ECHO_REPLY and rid == ident else None


def _paced(
    spec: dict[str, Any],
    rec: Recorder,
    sock: socket.socket | None,
    send: Callable[[int], None],
    on_readable: Callable[[socket.socket, int], None],
    extra: Callable[[], list[socket.socket]] = lambda: [],
    on_extra: Callable[[socket.socket, int], None] = lambda s, now: None,
) -> None:
    """Send a sample every ``1/rate`` s until the end; read answers in between."""
    period = int(1e9 / float(spec["rate"]))
    end = int(spec["end_ns"])
    slot = max(mono(), int(spec.get("t0_ns", 0)))
    while not _stop:
        now = mono()
        if now >= end:
            break
        if now >= slot:
            send(now)
            slot += period
            if slot < now:  # this process was held up: skip the slots that passed
                slot = now + period
            continue
        socks = ([sock] if sock else []) + extra()
        wait = min(slot - now, end - now) / 1e9
        if socks:
            try:
                r, w, _ = select.select(socks, [s for s in extra()], [], max(0.0, wait))
            except InterruptedError:
                continue
            now = mono()
            for s in r:
                if s is sock:
                    on_readable(s, now)
            for s in set(w) | {s for s in r if s is not sock}:
                on_extra(s, now)
        else:
            time.sleep(max(0.0, wait))
        rec.flush(mono())


def run_icmp(spec: dict[str, Any], rec: Recorder) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    _bind_iface(sock, spec.get("iface"))
    ident = (os.getpid() ^ int(spec.get("ident", 0))) & 0xFFFF
    index: dict[int, int] = {}
    seq = 0

    def send(now: int) -> None:
        nonlocal seq
        k = rec.add(now)
        index[seq & 0xFFFF] = k
        try:
            sock.sendto(echo_request(ident, seq & 0xFFFF, struct.pack("<Q", now)), (spec["dst"], 0))
        except OSError:
            pass
        seq += 1

    def readable(s: socket.socket, now: int) -> None:
        try:
            data, (src, _) = s.recvfrom(65535)
        except OSError:
            return
        n = echo_reply_of(data, ident)
        if src == spec["dst"] and n is not None and n in index:
            rec.answer(index.pop(n), now)

    _paced(spec, rec, sock, send, readable)


def run_udp(spec: dict[str, Any], rec: Recorder) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    _bind_iface(sock, spec.get("iface"))
    sock.connect((spec["dst"], int(spec["port"])))
    sock.setblocking(False)
    size = max(16, int(spec.get("size", 16)))
    index: dict[int, int] = {}
    seq = 0

    def send(now: int) -> None:
        nonlocal seq
        k = rec.add(now)
        index[seq] = k
        try:
            sock.send(struct.pack("<QQ", seq, now).ljust(size, b"\0"))
        except OSError as e:
            if e.errno == errno.ECONNREFUSED:  # an earlier datagram was refused
                rec.answer(k, now, STATUS_ERROR)
        seq += 1

    def readable(s: socket.socket, now: int) -> None:
        while True:
            try:
                data = s.recv(65535)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.ECONNREFUSED and index:  # port unreachable
                    k = index.pop(max(index))
                    rec.answer(k, now, STATUS_ERROR)
                    continue
                return
            if len(data) >= 16:
                n = struct.unpack_from("<Q", data)[0]
                if n in index:
                    rec.answer(index.pop(n), now)

    _paced(spec, rec, sock, send, readable)


#: ``SO_LINGER`` on, 0 s: ``close()`` sends a RST instead of a FIN.
_LINGER_RESET = struct.pack("ii", 1, 0)


def _abort(s: socket.socket) -> None:
    """Close a connection with a RST: the device frees it at once, also while it is still
    in a listener's accept queue. Closed with a FIN, a connection a server has not
    accepted yet (a server busy with another client, as the FreeRTOS devices' MODBUS
    server) stays there, half closed, holding the device's connection memory: 20 a
    second of them would be the monitor loading the device, not measuring it."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
    except OSError:
        pass
    s.close()


def run_tcp(spec: dict[str, Any], rec: Recorder) -> None:
    dst = (spec["dst"], int(spec["port"]))
    timeout_ns = int(spec["timeout_ns"])
    pending: dict[socket.socket, tuple[int, int]] = {}  # socket -> (sample, sent)

    def send(now: int) -> None:
        k = rec.add(now)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        _bind_iface(s, spec.get("iface"))
        s.setblocking(False)
        rc = s.connect_ex(dst)
        if rc in (0, errno.EINPROGRESS):
            pending[s] = (k, now)
        else:
            rec.answer(k, now, STATUS_ERROR)
            s.close()
        # connections past their timeout are given up
        for old, (_k, sent) in list(pending.items()):
            if now - sent > timeout_ns:
                old.close()
                del pending[old]

    def done(s: socket.socket, now: int) -> None:
        if s not in pending:
            return
        k, _ = pending.pop(s)
        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        rec.answer(k, now, STATUS_OK if err == 0 else STATUS_ERROR)
        _abort(s)

    _paced(spec, rec, None, send, lambda s, now: None, lambda: list(pending), done)
    for s in pending:
        s.close()


def run_heartbeat(spec: dict[str, Any], rec: Recorder) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _bind_iface(sock, spec.get("iface"))
    sock.bind((spec.get("bind", "0.0.0.0"), int(spec["port"])))
    src = spec.get("dst")
    end = int(spec["end_ns"])
    print(json.dumps({"listening": int(spec["port"])}), flush=True)
    while not _stop and (now := mono()) < end:
        try:
            r, _, _ = select.select([sock], [], [], min(0.2, (end - now) / 1e9))
        except InterruptedError:
            continue
        if not r:
            continue
        data, (addr, _) = sock.recvfrom(65535)
        at = mono()
        if src and addr != src:
            continue
        dev_t = struct.unpack_from("<QQ", data)[1] if len(data) >= 16 else 0
        k = rec.add(at)
        rec.answer(k, dev_t or at)
        rec.flush(at)


RUNNERS = {"icmp": run_icmp, "udp": run_udp, "tcp": run_tcp, "heartbeat": run_heartbeat}


def read_records(path: str) -> list[tuple[int, int, int]]:
    """The whole records of a probe's (or the MODBUS client's live) file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    n = len(data) // RECORD.size
    return [RECORD.unpack_from(data, RECORD.size * k) for k in range(n)]


def main(argv: Sequence[str]) -> int:
    spec = json.loads(argv[1])
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    rec = Recorder(spec["out"], int(spec.get("timeout_ns", 10**9)))
    try:
        RUNNERS[spec["kind"]](spec, rec)
    except OSError as e:
        print(json.dumps({"error": f"{spec['kind']}: {e.strerror or e}"}), flush=True)
        rec.close()
        return 3
    rec.close()
    print(json.dumps(rec.counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
