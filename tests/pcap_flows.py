"""The capture-replay flow the pcap tests share (``tests/test_pcap.py``,
``tests/test_bad_pcap.py``)."""

from __future__ import annotations


def cap_flow(file: str, extra: str = "") -> str:
    """A ``[[flows]]`` entry named ``cap`` replaying ``file`` (UDP to port 502) into NIC
    queue ``q0``, with ``extra`` TOML lines appended."""
    return f"""
[[flows]]
name = "cap"
protocol = "udp"
dst_port = 502
nic_queue = "q0"
pattern = "pcap"
file = "{file}"
{extra}"""
