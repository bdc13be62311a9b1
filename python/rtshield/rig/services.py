"""The network services of the Linux device ``rtshield rig serve linux`` starts.

Runs as a script of its own (standard library only) in the device's namespace:
``python3 services.py SPEC_JSON``, one thread, one ``selectors`` loop:

* a MODBUS/TCP server on ``modbus_port`` (any number of connections; Read
  Holding Registers and Write Single Register on 64 holding registers, register
  *i* holding *i* until written; any other function is answered with exception
  1, an address outside the table with exception 2; a stream that is not
  MODBUS/TCP closes the connection);
* a TCP listener on ``listen_port`` that accepts and closes (what SYN floods
  and scans hit, as on the rig's other devices);
* a UDP echo service (RFC 862) on ``echo_port``: each datagram is sent back;
* a UDP socket on ``sink_port`` that reads and drops what arrives (an open UDP
  port for the storms).

Prints ``ready`` once every socket listens, then serves until SIGTERM/SIGINT
and prints a JSON line of counts. The control task and its heartbeat are
``rig/linux/rts_cyclic.c``'s (``--heartbeat``).
"""

from __future__ import annotations

import json
import selectors
import signal
import socket
import struct
import sys
from collections.abc import Sequence
from typing import Any

READ_HOLDING, WRITE_SINGLE = 0x03, 0x06
REGISTERS = 64
MAX_LENGTH = 254  # the MBAP length field's largest value
ILLEGAL_FUNCTION, ILLEGAL_ADDRESS, ILLEGAL_VALUE = 1, 2, 3

_stop = False


def _on_stop(signum, frame):  # noqa: ARG001
    global _stop
    _stop = True


def serve_modbus(buf: bytes, regs: list[int]) -> tuple[list[bytes], bytes]:
    """Answer the whole requests at the start of ``buf``; return the answers and the rest.

    Raises ``ValueError`` when the stream is not MODBUS/TCP (protocol id not 0,
    length outside 2..254): the connection is closed.
    """
    answers: list[bytes] = []
    off = 0
    while len(buf) - off >= 7:
        tid, proto, length, unit = struct.unpack_from(">HHHB", buf, off)
        if proto != 0 or not 2 <= length <= MAX_LENGTH:
            raise ValueError("not MODBUS/TCP")
        end = off + 6 + length
        if len(buf) < end:
            break
        reply = _answer(bytes(buf[off + 7 : end]), regs)
        answers.append(struct.pack(">HHHB", tid, 0, len(reply) + 1, unit) + reply)
        off = end
    return answers, bytes(buf[off:])


def _answer(pdu: bytes, regs: list[int]) -> bytes:
    fc = pdu[0]
    if fc == READ_HOLDING and len(pdu) == 5:
        addr, count = struct.unpack_from(">HH", pdu, 1)
        if not 1 <= count <= 125:
            return bytes([fc | 0x80, ILLEGAL_VALUE])
        if addr + count > len(regs):
            return bytes([fc | 0x80, ILLEGAL_ADDRESS])
        return bytes([fc, 2 * count]) + struct.pack(f">{count}H", *regs[addr : addr + count])
    if fc == WRITE_SINGLE and len(pdu) == 5:
        addr, value = struct.unpack_from(">HH", pdu, 1)
        if addr >= len(regs):
            return bytes([fc | 0x80, ILLEGAL_ADDRESS])
        regs[addr] = value
        return pdu
    return bytes([fc | 0x80, ILLEGAL_FUNCTION])


def _listen(addr: str, port: int, kind: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    if kind == socket.SOCK_STREAM:
        s.listen(128)
    s.setblocking(False)
    return s


def run(spec: dict[str, Any]) -> dict[str, int]:
    addr = spec.get("addr", "0.0.0.0")
    sel = selectors.DefaultSelector()
    modbus = _listen(addr, int(spec["modbus_port"]), socket.SOCK_STREAM)
    listener = _listen(addr, int(spec["listen_port"]), socket.SOCK_STREAM)
    echo = _listen(addr, int(spec["echo_port"]), socket.SOCK_DGRAM)
    sink = _listen(addr, int(spec["sink_port"]), socket.SOCK_DGRAM)
    for s in (modbus, listener, echo, sink):
        sel.register(s, selectors.EVENT_READ)
    regs = list(range(REGISTERS))
    bufs: dict[socket.socket, bytes] = {}
    counts = {"modbus_requests": 0, "modbus_connections": 0, "accepted": 0, "echoed": 0,
              "sunk": 0}
    print("ready", flush=True)
    while not _stop:
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            if s is modbus or s is listener:
                try:
                    c, _ = s.accept()
                except OSError:
                    continue
                if s is listener:
                    counts["accepted"] += 1
                    c.close()
                    continue
                counts["modbus_connections"] += 1
                c.setblocking(False)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ)
            elif s is echo or s is sink:
                try:
                    data, peer = s.recvfrom(65535)
                except OSError:
                    continue
                if s is echo:
                    counts["echoed"] += 1
                    try:
                        s.sendto(data, peer)
                    except OSError:
                        pass
                else:
                    counts["sunk"] += 1
            else:
                try:
                    data = s.recv(65536)
                    answers, bufs[s] = serve_modbus(bufs[s] + data, regs) if data else ([], b"")
                    if not data:
                        raise ConnectionError
                    counts["modbus_requests"] += len(answers)
                    s.sendall(b"".join(answers))
                except (OSError, ValueError):
                    sel.unregister(s)
                    bufs.pop(s, None)
                    s.close()
    return counts


def main(argv: Sequence[str]) -> int:
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGINT, _on_stop)
    try:
        counts = run(json.loads(argv[1]))
    except OSError as e:
        print(f"error: {e.strerror or e}", flush=True)
        return 3
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
