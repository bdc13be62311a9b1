"""A board on the rig's network: how its device is wired in, started and counted.

The rig's harness gives two namespaces joined by a veth pair
(:mod:`rtshield.rig.harness`). The POSIX board's device opens the device-side
veth end itself (AF_PACKET) and answers with its MAC. The MPS2 board's device
is QEMU: its LAN9118 sits on a TAP device inside the device namespace,
bridged there to the veth end, with a MAC of its own that the attacker's
neighbour entry names. The TAP and the bridge live in the device namespace,
so deleting the namespace (every exit of the harness, and ``rig clean``)
removes them; their names start with the rig's prefix, so one found outside a
rig namespace is a leftover ``rig clean`` removes too.

:func:`wire` prepares the network for a :class:`.target.Target` once per
harness and gives the :class:`Bench` (the target, its images, its wiring) a
run starts its device from; :func:`device_argv` is the device's command
line; :func:`tap_sample` reads the frames the host handed to the emulated NIC
(the TAP's ``tx_packets``), the reference for the frames that NIC dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rtshield.rig.harness import Harness
from rtshield.rig.host import RigError
from rtshield.rig.network import DEVICE_ADDR

from .build import _repo
from .target import Target

__all__ = ["GUEST_MAC", "Bench", "Wiring", "device_argv", "tap_sample", "wire"]

#: The MPS2 board's MAC (locally administered): the LAN9118 filters on it. Not the veth
#: end's: the bridge delivers its own ports' addresses to the namespace's stack.
GUEST_MAC = "02:00:00:77:00:01"


@dataclass(frozen=True)
class Wiring:
    """What the device's config and command line need from the network."""

    ifname: str  # the config's ifname (POSIX: the veth end it opens; MPS2: ignored)
    mac: str  # the device's MAC address
    tap: str | None = None  # MPS2: the TAP device QEMU opens
    bridge: str | None = None


@dataclass(frozen=True)
class Bench:
    """A target on the rig's network: what a run starts its device from."""

    target: Target
    images: dict[str, Path]  # variant -> image (build.build_images)
    wiring: Wiring


def wire(h: Harness, target: Target, images: dict[str, Path]) -> Bench:
    """Prepare the rig's network for ``target``'s device (once per harness)."""
    return Bench(target, images, _wire(h, target))


def _wire(h: Harness, target: Target) -> Wiring:
    # The attacker's veth computes its checksums (no offload), or the stack drops its frames.
    h.ns_exec_ok(h.ns_atk, ["ethtool", "-K", h.if_atk, "tx", "off"], "ethtool -K tx off")
    # The device's Linux side holds no address: the FreeRTOS stack is the device.
    h.ns_exec_ok(h.ns_dev, ["ip", "addr", "flush", "dev", h.if_dev], "removing the device address")
    if not target.emulated:
        return Wiring(ifname=h.if_dev, mac=h.mac(h.ns_dev, h.if_dev))
    tap, br = f"{h.if_dev[:-1]}t", f"{h.if_dev[:-1]}b"
    steps = [
        (["ip", "tuntap", "add", "dev", tap, "mode", "tap"], f"creating the TAP device {tap}"),
        (["ip", "link", "add", br, "type", "bridge"], f"creating the bridge {br}"),
        (["ip", "link", "set", h.if_dev, "master", br], "bridging the veth"),
        (["ip", "link", "set", tap, "master", br], "bridging the TAP device"),
        (["ip", "link", "set", tap, "up"], f"bringing up {tap}"),
        (["ip", "link", "set", br, "up"], f"bringing up {br}"),
    ]
    for argv, what in steps:
        h.ns_exec_ok(h.ns_dev, argv, what)
    # The attacker's frames go to the guest's MAC (no ARP before a flood).
    h.ns_exec_ok(
        h.ns_atk,
        ["ip", "neigh", "replace", DEVICE_ADDR, "lladdr", GUEST_MAC, "dev", h.if_atk,
         "nud", "permanent"],
        "neighbour entry of the guest",
    )  # fmt: skip
    return Wiring(ifname="lan9118", mac=GUEST_MAC, tap=tap, bridge=br)


def device_argv(target: Target, image: Path, conf: Path, wiring: Wiring) -> list[str]:
    """The device's command line: the POSIX program with its config, or QEMU through
    ``tools/mps2_run.sh`` on the TAP (its config path must not contain blanks)."""
    if not target.emulated:
        return [str(image), str(conf)]
    if any(c.isspace() for c in str(conf)):
        raise RigError(
            f"rig {target.verb}: the MPS2 board reads its config through QEMU's semihosting, "
            f"whose command line cannot hold a blank: --out {conf.parent.parent.parent} "
            "(choose a folder without blanks)"
        )
    nic = f"tap,ifname={wiring.tap},script=no,downscript=no"
    return [str(_repo() / "tools" / "mps2_run.sh"), str(image), str(conf), "-nic", nic]


def tap_sample(h: Harness, wiring: Wiring) -> dict[str, int] | None:
    """The TAP's ``tx_packets`` (frames the host handed to QEMU) and ``tx_dropped``
    (frames QEMU did not take in time: its queue full); None on the POSIX board."""
    if wiring.tap is None:
        return None
    argv = ["ip", "-s", "-j", "link", "show", "dev", wiring.tap]
    out = h.ns_exec_ok(h.ns_dev, argv, "TAP counters")
    tx = json.loads(out)[0]["stats64"]["tx"]
    return {"tx_packets": int(tx["packets"]), "tx_dropped": int(tx["dropped"])}
