"""What the schema tells its readers: the JSON Schema of each file
(``rtshield schema``) and the key reference of ``docs/scenarios.md``
(:func:`markdown_blocks`, written by ``tools/gen_schema_docs.py``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rtshield.errors import UsageError
from rtshield.schema import profile, system
from rtshield.schema.base import (
    file_schema,
    key_table,
    kinds_table,
    only_keys,
)
from rtshield.schema.fields import (
    limits,
)
from rtshield.schema.flows import FLOW_COMMON
from rtshield.schema.preset import DEFAULTABLE, PresetFile
from rtshield.schema.scenario_file import ScenarioFile
from rtshield.schema.vocabulary import (
    MITIGATION_KINDS,
    PATTERNS,
    TASK_KEYS,
)

# --------------------------------------------------------------------------- JSON Schema

#: Per kind of task, what it is (the reference's table of kinds).
TASK_DOCS = {
    "background": "always ready; gets the capacity left over",
    "periodic": "a job of work every period",
    "worker": "receives the packets of one flow: work per message from its mailbox",
}
#: Per mitigation kind, what it is and where it comes from.
MITIGATION_DOCS = {
    "none": 'the plain FreeRTOS scheduler (Danicki et al. §3 "Scheduler")',
    "burst": "Danicki et al. §2.2 Burst Mitigation: at most `capacity` packets per `slice`",
    "hysteresis": "Danicki et al. §2.2 Hysteresis Mitigation: `block_below`, `unblock_above` "
    "are fractions of the period (the critical task's earliness at completion)",
    "budget": "Danicki et al. §2.2 Budget Mitigation: the critical task's earliness is the "
    "driver's budget; §4 names the uncharged ISR (`charge_isr`)",
    "queue": "Danicki et al. §2.2 Queue Mitigation (uses `[driver] queue`)",
    "strict": "Regehr & Duongsaa §3.2: at least `min_interarrival` between RX interrupts",
    "bursty": "Regehr & Duongsaa §3.3: `burst` interrupts per `period`",
    "countdown": "Regehr & Duongsaa §3.4",
    "polling": 'Regehr & Duongsaa §2 and §5.2 "pure polling": no interrupt; a timer every '
    "`period` checks the device and handles what waits",
}
#: Per traffic pattern, its rate over time.
PATTERN_DOCS = {
    "constant": "`rate`, arrivals evenly spaced",
    "poisson": "mean `rate`, exponential inter-arrival times drawn from the seed",
    "pyramid": "`start`, `start+step`, … (capped at `peak`), each level for `step_every`, then "
    "the same levels down to `start`, which then holds until the end",
    "steps": "each rate in turn for `step_every`, the last one until the end",
    "pcap": "the frames of a capture at their recorded times (below)",
}


def json_schema(which: str = "scenario") -> dict[str, Any]:
    """The JSON Schema of a scenario file (``which="scenario"``), a system file
    (``"system"``, :mod:`rtshield.schema.system`), a storm profile of ``rtshield rig
    device`` (``"profile"``, :mod:`rtshield.schema.profile`) or a platform preset
    (``"platform"``), with the limits of this build's libshield and simulator.

    A key a preset's ``[defaults]`` may give is not required here (the file
    alone need not set it); each kind of flow, task and mitigation allows
    only its own keys."""
    if which == "system":
        return system.json_schema()
    if which == "profile":
        return profile.json_schema()
    model = {"scenario": ScenarioFile, "platform": PresetFile}[which]
    schema = file_schema(model)
    lim = limits()
    props = schema.get("properties", {})
    defs = schema.get("$defs", {})
    if which == "scenario":
        for k, n in (
            ("flows", lim["flows"]),
            ("sources", lim["sources"]),
            ("tasks", lim["tasks"] - 2),
        ):
            props[k]["maxItems"] = n
        schema["required"] = ["scenario"]
        for name, section in (
            ("ScenarioTable", "scenario"),
            ("CriticalTable", "critical"),
            ("DriverTable", "driver"),
            ("NicTable", "nic"),
            ("RxTable", "rx"),
        ):
            d = defs[name]
            for k in d.get("required", []):
                if k in DEFAULTABLE[section]:
                    d["properties"][k].setdefault("x-default", "required (or preset)")
            d["required"] = [k for k in d.get("required", []) if k not in DEFAULTABLE[section]]
            if not d["required"]:
                del d["required"]
        defs["NicTable"]["properties"]["queues"]["maxItems"] = lim["nic_queues"]
        buffers = defs["RxTable"]["properties"]["buffers"]
        buffers.update(minimum=2, maximum=lim["pool_max"])
        defs["FlowTable"]["allOf"] = only_keys(
            "pattern", {p: FLOW_COMMON + ks for p, ks in PATTERNS.items()}
        )
        defs["TaskTable"]["allOf"] = only_keys("kind", TASK_KEYS)
        plain = {k: ("kind", "also", "enable_bits") + ks for k, ks in MITIGATION_KINDS.items()}
        rules = only_keys("kind", plain)
        for rule in rules:  # with `also`, the keys of those kinds are allowed too
            rule["if"]["not"] = {"required": ["also"]}
        defs["MitigationTable"]["allOf"] = rules
    return schema


# --------------------------------------------------------------------------- Markdown


def markdown_blocks() -> dict[str, str]:
    """The key reference of ``docs/scenarios.md``: one Markdown block per
    ``<!-- schema: NAME -->`` marker, generated from the models."""
    sc = json_schema("scenario")
    # the documented keys of a table are those of the file alone: preset defaults aside
    out = {
        "scenario": key_table(sc, "ScenarioTable"),
        "critical": key_table(sc, "CriticalTable"),
        "driver": key_table(sc, "DriverTable"),
        "nic": key_table(sc, "NicTable"),
        "nic.queues": key_table(sc, "NicQueueTable"),
        "rx": key_table(sc, "RxTable"),
        "detect": key_table(sc, "DetectTable"),
        "sources": key_table(sc, "SourceTable"),
        "flows": key_table(sc, "FlowTable", FLOW_COMMON),
        "flows.pcap": key_table(sc, "FlowTable", PATTERNS["pcap"]),
        "mitigation.keys": key_table(sc, "MitigationTable"),
        "tasks.keys": key_table(sc, "TaskTable"),
    }
    lim = limits()
    out["limits"] = (
        "Limits (the simulator's fixed arrays, `RTSIM_MAX_*` in "
        "`sim/include/rtsim/rtsim.h`, and libshield's build options in "
        "`libshield/include/rtshield/rts_opts.h`, read through the binding, so a rebuilt "
        f"library moves them): at most {lim['cores']} cores, {lim['flows']} flows, "
        f"{lim['tasks'] - 2} extra tasks ({lim['tasks']} with the critical task and the "
        f"driver; {lim['tasks'] - 3} when the global limit adds its polling task), "
        f"{lim['rates']} rates in a `steps` flow, {lim['sources']} RX interrupt sources, "
        f"{lim['nic_queues']} queues of the multiqueue NIC, {lim['pool_max']} `[rx] buffers` "
        f"(`RTS_POOL_MAX_BUFS`), flow priorities 0–{lim['prio_levels'] - 1} with `[rx]` "
        f"(`RTS_FLOW_PRIO_LEVELS`), {lim['flow_max'] - lim['flow_special']} bound flows "
        f"(`RTS_FLOW_MAX` = {lim['flow_max']} minus the {lim['flow_special']} special ARP, "
        "ICMP, background and default flows); "
        f"frames of at most {lim['frame_max']} bytes (`RTSIM_FRAME_MAX`)."
    )
    out["mitigation"] = kinds_table(
        ("kind", "parameters", "what it is"), MITIGATION_KINDS, MITIGATION_DOCS
    )
    out["flows.patterns"] = kinds_table(("pattern", "keys", "rate over time"), PATTERNS,
                                        PATTERN_DOCS)
    out["tasks"] = kinds_table(
        ("kind", "keys", "what it is"),
        {kind: [k for k in keys if k != "kind"] for kind, keys in TASK_KEYS.items()},
        TASK_DOCS,
    )
    return out


_BLOCK_RE = re.compile(r"(<!-- schema: ([a-z._]+) -->\n)(.*?)(<!-- /schema -->)", re.S)


def render_docs(text: str, blocks: Mapping[str, str] | None = None) -> str:
    """``text`` (docs/scenarios.md) with every generated block replaced by the
    models' current reference (``blocks``, default :func:`markdown_blocks`);
    an unknown block name is an error."""
    blocks = markdown_blocks() if blocks is None else blocks

    def put(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in blocks:
            raise UsageError(f"docs: no generated block named {name!r} ({', '.join(blocks)})")
        return f"{m.group(1)}{blocks[name]}\n{m.group(4)}"

    return _BLOCK_RE.sub(put, text)
