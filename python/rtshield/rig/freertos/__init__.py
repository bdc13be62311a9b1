"""``rtshield rig freertos-tcp``: the real FreeRTOS-Plus-TCP stack under real floods.

The target is ``rig/freertos/app/rts_device.c``: the FreeRTOS kernel (POSIX port)
with FreeRTOS-Plus-TCP, its network interface on the device-side veth of the
rig's harness, libshield in that interface's receive path (protected) or the
stock path (unprotected), a critical task, worker tasks and a TCP listener.
The device is described by a scenario file, the simulator's vocabulary;
:func:`.device.target_config` is the one mapping from a scenario to the target's
config file. Every run goes through idle / attack / idle phases while the
rig sends the scenario's UDP flows (paced, timestamped) and polls its MODBUS/TCP
flows (a TCP flow at a constant rate: the device serves MODBUS/TCP on its port,
:mod:`rtshield.rig.modbus_client` is the controller) from the attacker
namespace and, in the attack phase, one flood tool.

Layout of ``--out DIR``: ``runs/<protected|unprotected>-<attack>/`` (the
target's config, ``device.json``, ``cycles.bin``, latency records, tool logs
and ``summary.json`` in the simulator's vocabulary), ``sim/<variant>/summary.json``
(the same scenario simulated), ``comparison.json`` and ``report.html``.

The target's modules, bottom up: :mod:`.build` (the FreeRTOS trees, the build
and its cache) and :mod:`.phases` (a run in time); :mod:`.device` (the
scenario's two variants, the target's config, the flows the rig drives);
:mod:`.run` (the device process and the traffic processes of one run) and
:mod:`.summary` (a run's ``summary.json``); :mod:`.compare` (simulation
against the real stack) and :mod:`.report` (``report.html``). This package
gives the names ``rtshield rig freertos-tcp`` and the tests use.
"""

from __future__ import annotations

from rtshield.rig.attacks import ATTACK_TOOL, ATTACKS

from .build import TREE_ENV, build_target, default_scenario, find_tree
from .compare import (
    HP_KEPT,
    claims,
    comparison,
    measured_syn_rate,
    simulate_variants,
)
from .compare import _hp_flow as _hp_flow  # this and the other two "as": the tests check them
from .compare import _sim_table as _sim_table
from .device import (
    VARIANTS,
    Device,
    load_device,
    modbus_flows,
    pcap_flows,
    target_config,
    udp_flows,
)
from .phases import ATTACK_LABEL, LEAD_S, MODBUS_TIMEOUT_S, PHASES
from .report import _flow_table as _flow_table
from .report import response_figure, write_report
from .run import Options, prepare_attacker, run_variant
from .summary import IP_TASK_NAME, STACK_EXHAUSTED, summarize

__all__ = [
    "ATTACKS",
    "ATTACK_LABEL",
    "ATTACK_TOOL",
    "HP_KEPT",
    "IP_TASK_NAME",
    "LEAD_S",
    "MODBUS_TIMEOUT_S",
    "PHASES",
    "STACK_EXHAUSTED",
    "TREE_ENV",
    "VARIANTS",
    "Device",
    "Options",
    "build_target",
    "claims",
    "comparison",
    "default_scenario",
    "find_tree",
    "load_device",
    "measured_syn_rate",
    "modbus_flows",
    "pcap_flows",
    "prepare_attacker",
    "response_figure",
    "run_variant",
    "simulate_variants",
    "summarize",
    "target_config",
    "udp_flows",
    "write_report",
]
