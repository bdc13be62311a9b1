"""``rtshield rig freertos-tcp`` and ``rtshield rig lwip``: a real embedded IP stack under
real floods.

The target is ``rig/freertos/app/rts_device.c``: the FreeRTOS kernel with
FreeRTOS-Plus-TCP or lwIP, on the POSIX board (its network interface on the
device-side veth of the rig's harness) or the MPS2 board (Cortex-M3 in QEMU,
its LAN9118 on a TAP bridged to that veth), libshield in the interface's
receive path (protected) or the stack's usual path (unprotected), a critical
task, worker tasks and a TCP listener (:class:`.target.Target`).
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
(the same scenario simulated), ``comparison.json``, ``twin.json`` and ``report.html``.

The target's modules, bottom up: :mod:`.target` (a stack on a board);
:mod:`.build` (the third-party trees, the build and its cache), :mod:`.phases`
(a run in time) and :mod:`.console` (the device's console, and the phases on
its clock); :mod:`.device` (the scenario's two variants, the target's config,
the flows the rig drives) and :mod:`.board` (a board on the rig's network);
:mod:`.run` (the device process and the traffic processes of one run) and
:mod:`.summary` (a run's ``summary.json``); :mod:`.fit` (the simulations a run is held against,
its ``counters.csv`` and the fit of a target's model); :mod:`.compare`
(simulation against the real stack: the claims) and :mod:`.twin` (quantity
by quantity, ``twin.json``); :mod:`.report` (``report.html``). This package
gives the names ``rtshield rig freertos-tcp``, ``rtshield rig lwip`` and the
tests use.
"""

from __future__ import annotations

from rtshield.rig.attacks import ATTACK_TOOL, ATTACKS, parse_rates

from .board import Bench, device_argv, wire
from .build import TREE_ENV, build_images, build_target, default_scenario, find_tree
from .compare import (
    HP_KEPT,
    claims,
    comparison,
    measured_syn_rate,
    simulate_variants,
)
from .compare import _hp_flow as _hp_flow  # this and the other two "as": the tests check them
from .compare import _sim_table as _sim_table
from .console import Console
from .device import (
    VARIANTS,
    Device,
    load_device,
    modbus_flows,
    pcap_flows,
    target_config,
    udp_flows,
)
from .fit import (
    BOARD_PRESETS,
    CALIBRATE_RATES,
    EMULATED_NIC,
    board_from_runs,
    counters_csv,
    simulate_board,
    simulate_fitted,
    simulate_own_rates,
)
from .phases import ATTACK_LABEL, LEAD_S, MODBUS_TIMEOUT_S, PHASES, run_name
from .report import _flow_table as _flow_table
from .report import response_figure, write_report
from .run import READY_S, Options, run_variant
from .summary import (
    IP_TASK_NAME,
    LWIP_MAILBOX_FULL,
    MAILBOX_FULL,
    NIC_FIFO_FULL,
    STACK_EXHAUSTED,
    summarize,
)
from .target import BOARDS, STACKS, Target
from .twin import TOLERANCES, build_twin, write_twin

__all__ = [
    "ATTACKS",
    "ATTACK_LABEL",
    "ATTACK_TOOL",
    "BOARDS",
    "BOARD_PRESETS",
    "CALIBRATE_RATES",
    "EMULATED_NIC",
    "HP_KEPT",
    "IP_TASK_NAME",
    "LEAD_S",
    "LWIP_MAILBOX_FULL",
    "MAILBOX_FULL",
    "MODBUS_TIMEOUT_S",
    "NIC_FIFO_FULL",
    "PHASES",
    "READY_S",
    "STACKS",
    "STACK_EXHAUSTED",
    "TOLERANCES",
    "TREE_ENV",
    "VARIANTS",
    "Bench",
    "Console",
    "Device",
    "Options",
    "Target",
    "board_from_runs",
    "build_images",
    "build_target",
    "build_twin",
    "claims",
    "comparison",
    "counters_csv",
    "default_scenario",
    "device_argv",
    "find_tree",
    "load_device",
    "measured_syn_rate",
    "modbus_flows",
    "parse_rates",
    "pcap_flows",
    "response_figure",
    "run_name",
    "run_variant",
    "simulate_board",
    "simulate_fitted",
    "simulate_own_rates",
    "simulate_variants",
    "summarize",
    "target_config",
    "udp_flows",
    "wire",
    "write_report",
    "write_twin",
]
