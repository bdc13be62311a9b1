"""``[[flows]]``: the model of one traffic flow of a scenario file, the keys every
flow takes (:data:`FLOW_COMMON`) and those of each pattern (``PATTERNS``)."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    ValidationInfo,
    model_validator,
)

from rtshield.schema.base import (
    context_of,
    fail,
    key,
)
from rtshield.schema.fields import (
    PROTOCOLS,
    U32,
    Duration,
    Int,
    Name,
    Priority,
    Rate,
    RateStep,
    Span,
    Table,
    at_most,
    choice_first,
    require,
)
from rtshield.schema.vocabulary import (
    DEFAULT_SRC,
    FLOW_RX_ONLY,
    MAX_PCAP_SCALE,
    PATTERN_OPTIONAL,
    PATTERNS,
    PCAP_FRAME_KEYS,
)

FLOW_COMMON = (
    "name",
    "protocol",
    "dst_port",
    "src",
    "src_port",
    "size",
    "vlan_pcp",
    "priority",
    "bind",
    "capacity",
    "server_period",
    "queue",
    "nic_queue",
    "pattern",
    "begin",
    "source",
)
_ALL_PATTERN_KEYS = tuple(sorted({k for ks in PATTERNS.values() for k in ks}))


class FlowTable(Table):
    """``[[flows]]``: one traffic flow: what its frames are and its rate over time.
    Each pattern takes its own keys (see ``PATTERNS``) beyond the common ones."""

    name: Name("flow") = key(doc="unique; an identifier (Names, above)")
    pattern: Literal[tuple(PATTERNS)] = key(  # type: ignore[valid-type]
        doc="how the rate varies (patterns below)", type="see below"
    )
    protocol: Literal[PROTOCOLS] = key(  # type: ignore[valid-type]
        "tcp",
        doc="TCP SYN segments, UDP datagrams, ICMP echo requests, ARP requests, or frames of "
        "an unknown EtherType",
    )
    dst_port: Int(0, 65535) = key(0, doc="the device's port (TCP, UDP)")
    src: str = key(
        DEFAULT_SRC,
        doc="source address of its frames (the device is 192.0.2.1)",
        type="IPv4 address",
    )
    src_port: Int(0, 65535) = key(40000, doc="source port (TCP, UDP)")
    size: Int(14, 65535) = key(
        60,
        doc="bytes on the wire; with `[rx]` or the multiqueue NIC from the protocol's headers "
        "to `RTSIM_FRAME_MAX` (Limits, above)",
    )
    vlan_pcp: Int(0, 7) | None = key(
        None,
        doc="present: the frames carry one 802.1Q tag with this priority code point",
        shown="untagged",
    )
    priority: Priority = key(
        0,
        doc="flow priority (for components that classify); with `[rx]` below "
        "`RTS_FLOW_PRIO_LEVELS`, the socket's priority the network task inherits (Behnke §5.4)",
    )
    bind: bool | None = key(
        None,
        doc="a socket is bound to (`protocol`, `dst_port`): with `[rx]` the flow is registered "
        "in libshield's flow table; `false`: no socket of its own — its frames are processed, "
        "then dropped as `no_socket`, unless another flow binds the same protocol and port "
        "(frames are classified by their bytes, so they then reach that socket). Only TCP and "
        "UDP flows have sockets",
        shown="`true` for TCP and UDP",
    )
    capacity: U32 | None = key(
        None,
        doc="`[rx]` only: the flow's deferrable server admits this many packets per "
        "`server_period` (Behnke §5.5); 0 = unlimited",
        shown="unlimited",
    )
    server_period: Duration | None = key(
        None, doc="`[rx]` only: the server's period", shown="required with `capacity` > 0"
    )
    queue: Int(1, 2**31 - 1) | None = key(
        None,
        doc="`[rx]` only: packets the flow's queue may hold",
        shown="the pool",
        type="integer 1–`buffers`",
    )
    nic_queue: str | None = key(
        None,
        doc="multiqueue NIC only: the `[[nic.queues]]` entry the NIC's map sends the flow to; "
        "without it the flow is dropped in the NIC",
        shown="unmapped",
    )
    begin: Span = key(
        0, doc="the flow is silent before; the pattern's clock starts here", toml="0s"
    )
    source: str | None = key(
        None,
        doc="the `[[sources]]` entry the flow arrives on (required with several sources)",
        shown="the only source",
    )
    rate: Rate | None = key(None, doc="`constant`, `poisson`: the rate")
    start: Rate | None = key(None, doc="`pyramid`: first and last level")
    peak: Rate | None = key(None, doc="`pyramid`: top level")
    step: RateStep | None = key(None, doc="`pyramid`: level increment")
    step_every: Duration | None = key(None, doc="`pyramid`, `steps`: how long each level lasts")
    rates: list[Rate] | None = key(None, doc="`steps`: the rates in turn")
    file: str | None = key(
        None,
        doc="the capture, relative to the scenario file's folder: classic pcap (microsecond "
        "or nanosecond timestamps, either byte order), Ethernet link type; pcapng is refused "
        "(convert it with `editcap -F pcap`)",
        shown="required",
    )
    scale: float = key(
        1.0,
        doc="the capture's rate times this: `2.0` halves every gap",
        type="number in (0, 1000]",
    )
    loop: bool = key(
        False,
        doc="replay the capture again and again; one pass lasts the replayed span plus one "
        "mean gap, so an evenly spaced capture loops evenly",
    )
    skip: Span = key(
        0,
        doc="start this far into the capture; frames before are not sent and the replay's "
        "clock starts there",
        toml="0s",
    )

    @classmethod
    def keys_for(cls, data: Mapping[str, Any]) -> tuple[str, ...]:
        pattern = data.get("pattern")
        return FLOW_COMMON + (PATTERNS.get(pattern, ()) if isinstance(pattern, str) else ())

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        pattern = data.get("pattern")
        if key in _ALL_PATTERN_KEYS and isinstance(pattern, str) and pattern in PATTERNS:
            owners = [p for p, ks in PATTERNS.items() if key in ks]
            return (
                f"belongs to pattern {' / '.join(owners)}, not {pattern!r} "
                f"(which takes: {', '.join(PATTERNS[pattern])})"
            )
        return "unknown key (allowed: " + ", ".join(cls.keys_for(data)) + ")"

    @model_validator(mode="before")
    @classmethod
    def _pattern_first(cls, data: Any) -> Any:
        # the pattern decides which keys are known: check it first
        choice_first(data, "pattern", PATTERNS)
        if isinstance(data, Mapping) and data["pattern"] == "pcap":
            for k in PCAP_FRAME_KEYS:
                if k in data:
                    raise fail("a pcap flow's frames are the capture's own (drop this key)", k)
        return data

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> FlowTable:
        ctx = context_of(info)
        if not ctx.get("rx_on", True):
            for k in FLOW_RX_ONLY:
                if self.given(k):
                    raise fail("only applies with the receive path ([rx])", k)
        nic_kind = ctx.get("nic_kind", "multiqueue")
        if self.nic_queue is not None and nic_kind != "multiqueue":
            raise fail(f'needs [nic] kind = "multiqueue" (kind is {nic_kind!r})', "nic_queue")
        optional = PATTERN_OPTIONAL.get(self.pattern, ())
        require(self, tuple(k for k in PATTERNS[self.pattern] if k not in optional))
        if self.pattern == "pyramid":
            if self.peak < self.start:
                raise fail("must not be below start", "peak")
            if self.step <= 0:
                raise fail("must be above 0pps", "step")
        if self.pattern == "steps":
            if not self.rates:
                raise fail(
                    'expected a non-empty list of rates such as ["1000pps", "5kHz"]', "rates"
                )
            at_most(self.rates, "rates", "rates", "rates")
        if self.pattern == "pcap":
            if not self.file:
                raise fail("expected the path of a pcap file", "file")
            if "\0" in self.file:
                raise fail("not a usable file name (it contains a NUL character)", "file")
            if not math.isfinite(self.scale):
                raise fail(f"expected a number such as 2.0, got {self.scale!r}", "scale")
            if not 0 < self.scale <= MAX_PCAP_SCALE:
                raise fail(f"must lie in (0, {MAX_PCAP_SCALE:g}], got {self.scale!r}", "scale")
        try:
            addr = ipaddress.IPv4Address(self.src)
        except ValueError:
            raise fail(
                f'expected an IPv4 address such as "192.0.2.100", got {self.src!r}', "src"
            ) from None
        if int(addr) == 0:
            raise fail("0.0.0.0 is not a source address", "src")
        socketed = self.protocol in ("tcp", "udp")
        if self.bind and not socketed:
            raise fail(
                f"only TCP and UDP flows have sockets (protocol is {self.protocol!r})", "bind"
            )
        return self

    @property
    def bound(self) -> bool:
        """Whether a socket is bound to the flow (``bind``, default: TCP and UDP)."""
        return self.bind if self.bind is not None else self.protocol in ("tcp", "udp")
