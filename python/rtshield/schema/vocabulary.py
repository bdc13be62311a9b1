"""The words of rtshield's scenario files: kinds, patterns, keys, names and limits.

The schema (:mod:`rtshield.schema`) validates a file with these words, the
typed scenario (:mod:`rtshield.scenario_types`) and the engine binding read
them too, so they live here, below all three: plain Python, no pydantic, and
the binding only on first use of a word it gives. The simulator's limits
(``MAX_FLOWS``…) and enums (``PROTOCOLS``, ``NIC_KINDS``, ``BURSTY_TIMERS``)
are read through the binding (:mod:`rtshield._native`), never restated.
:mod:`rtshield.scenario` re-exports every word (its public import path).
"""

from __future__ import annotations

import re
from typing import Any

from rtshield import _native

__all__ = [
    "ALSO_KINDS",
    "DEFAULT_SRC",
    "FLOW_RX_ONLY",
    "FROM_BINDING",
    "MAX_BINS",
    "MAX_PCAP_SCALE",
    "MITIGATION_KINDS",
    "MULTI_SOURCE_KINDS",
    "NAME_RULE",
    "PATH_QUANTILE_COSTS",
    "PATH_QUANTILE_KEYS",
    "PATTERNS",
    "PATTERN_OPTIONAL",
    "PCAP_FRAME_KEYS",
    "RESERVED_NAMES",
    "RX_COST_KEYS",
    "TASK_KEYS",
    "TASK_KINDS",
    "WORKER_MAILBOX_DEFAULT",
    "reserved_name",
]

#: Mitigation kinds and, for each, the parameter keys it accepts.
MITIGATION_KINDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "burst": ("slice", "capacity"),
    "hysteresis": ("block_below", "unblock_above", "sleep"),
    "budget": ("charge_isr",),
    "queue": (),
    "strict": ("min_interarrival",),
    "bursty": ("burst", "period", "timer"),
    "countdown": ("window",),
    "polling": ("period",),
}
#: Danicki et al.'s protections that ``[mitigation] also`` may add to ``kind``.
ALSO_KINDS = ("burst", "hysteresis", "budget", "queue")
#: Mitigations that work with several RX sources (the engine's rule: the Danicki
#: mitigations and the countdown filter act on one RX line).
MULTI_SOURCE_KINDS = ("none", "strict", "bursty")

#: Traffic patterns and, for each, the keys it accepts (beyond the common ones).
PATTERNS: dict[str, tuple[str, ...]] = {
    "constant": ("rate",),
    "poisson": ("rate",),
    "pyramid": ("start", "peak", "step", "step_every"),
    "steps": ("rates", "step_every"),
    "pcap": ("file", "scale", "loop", "skip"),
}
#: Keys of ``PATTERNS`` a flow may leave out (every other one is required).
PATTERN_OPTIONAL: dict[str, tuple[str, ...]] = {"pcap": ("scale", "loop", "skip")}
#: Frame keys a ``pcap`` flow does not take: its frames are the capture's.
PCAP_FRAME_KEYS = ("size", "src", "src_port", "vlan_pcp")
#: Largest ``scale`` of a pcap replay (a thousandfold rate; gaps stay >= 1 ns).
MAX_PCAP_SCALE = 1000.0
TASK_KINDS = ("background", "periodic", "worker")
#: Keys of each task kind.
TASK_KEYS = {
    "background": ("name", "kind", "priority", "core"),
    "periodic": ("name", "kind", "priority", "core", "period", "work", "masks_rx"),
    "worker": ("name", "kind", "priority", "core", "flow", "work", "queue"),
}
#: A worker's mailbox capacity (messages) when its ``queue`` is not given
#: (docs/scenarios.md): the front end's default, read by the schema, the engine's
#: configuration and ``rtshield design``.
WORKER_MAILBOX_DEFAULT = 16
#: Flow keys that only apply with the receive path (``[rx]``).
FLOW_RX_ONLY = ("capacity", "server_period", "queue")
#: Default IPv4 source of a flow's frames (TEST-NET-1, as the simulator's frames).
DEFAULT_SRC = "192.0.2.100"
#: Rows of the time series at most (``duration / bin``): the outputs' memory.
MAX_BINS = 1_000_000
#: Preset cost keys the receive path needs (required only with ``[rx]``).
RX_COST_KEYS = (
    "rx_path_regular",
    "rx_path_short_circuit",
    "rx_path_prio_raise",
    "rx_path_recycle",
    "rx_path_rejected",
    "invalidate_eager",
    "invalidate_deferred",
    "poll_batch",
    "poll_per_packet",
)
#: Suffixes of a receive-path cost key giving its ISR duration at the 90, 99,
#: 99.9 and 99.99 % quantiles (Behnke Fig. 10), e.g. ``rx_path_prio_raise_p99``.
PATH_QUANTILE_KEYS = ("p90", "p99", "p999", "p9999")
PATH_QUANTILE_COSTS = tuple(
    f"{k}_{q}" for k in RX_COST_KEYS if k.startswith("rx_path_") for q in PATH_QUANTILE_KEYS
)

#: What a flow, task, source or NIC queue may be called (docs/scenarios.md,
#: "Names"): an identifier of 1-64 characters, so that it is safe in CSV
#: headers, file names, JSON keys and reports.
NAME_RULE = r"[A-Za-z_][A-Za-z0-9_-]{0,63}"
#: Names the outputs use for their own entries (``idle_coreN`` and every
#: ``isr_…`` name are reserved too, :func:`reserved_name`).
RESERVED_NAMES = ("critical", "driver", "polling", "idle", "isr_rx", "isr_tick", "isr_timer")


def reserved_name(name: str) -> bool:
    """Whether ``name`` is one of the outputs' own names (case-insensitive)."""
    low = name.lower()
    return (
        low in RESERVED_NAMES
        or low.startswith("isr_")
        or re.fullmatch(r"idle_core[0-9]+", low) is not None
    )


#: Module attributes read from the binding on first use (the simulator's and
#: libshield's limits; :func:`rtshield._native.native_limits`).
_LIMIT_NAMES = {
    "MAX_CORES": "cores",
    "MAX_TASKS": "tasks",
    "MAX_FLOWS": "flows",
    "MAX_RATES": "rates",
    "MAX_SOURCES": "sources",
    "MAX_NIC_QUEUES": "nic_queues",
}


#: Module attributes that are the simulator's enums, by name in value order
#: (``PROTOCOLS``: a flow's ``protocol``; ``NIC_KINDS``: ``[nic] kind``).
_ENUM_NAMES = {
    "PROTOCOLS": ("rtsim_proto", "RTSIM_PROTO_"),
    "NIC_KINDS": ("rtsim_nic_kind", "RTSIM_NIC_"),
    "SIM_MITIGATIONS": ("rtsim_mitigation_kind", "RTSIM_MIT_"),  # [mitigation] kind
    "BURSTY_TIMERS": ("rts_bursty_mode", "RTS_BURSTY_TIMER_"),  # [mitigation] timer
}


#: The words the binding gives, read on first use (importing this module loads
#: no native library).
FROM_BINDING = (*_LIMIT_NAMES, *_ENUM_NAMES)


def __getattr__(name: str) -> Any:
    if name in _LIMIT_NAMES:
        return _native.native_limits()[_LIMIT_NAMES[name]]
    if name in _ENUM_NAMES:
        return _native.enum_names(*_ENUM_NAMES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
