"""The target: one IP stack on one board.

The device application (``rig/freertos/app/``) runs on FreeRTOS with one of two
IP stacks — FreeRTOS-Plus-TCP (``rtshield rig freertos-tcp``) or lwIP
(``rtshield rig lwip``) — on one of two boards: ``posix`` (the FreeRTOS POSIX
port on this host; its NIC an AF_PACKET socket on the device-side veth, host
time) and ``mps2-an385`` (a Cortex-M3 image in QEMU; its LAN9118 on a TAP
device, guest time). A :class:`Target` names the pair and holds the facts that
differ between them: the build and its images per variant, the trees it needs,
the clock every time in its records counts, and what the rig says about it.
How a board is wired into the rig's network is :mod:`.board`'s; ``rtshield rig
serve`` can take the same pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from rtshield.errors import UsageError

__all__ = ["BOARDS", "STACKS", "Target"]

#: The IP stacks: the rig verb that runs each, and its name in reports.
STACKS = {"plustcp": ("freertos-tcp", "FreeRTOS-Plus-TCP"), "lwip": ("lwip", "lwIP")}
#: The boards: what runs the image, and its clock (what every ``*_ns`` of its records counts).
BOARDS = {
    "posix": ("the FreeRTOS POSIX port on this host", "host"),
    "mps2-an385": ("Cortex-M3 (MPS2 AN385) in QEMU, -icount shift=5", "guest"),
}


@dataclass(frozen=True)
class Target:
    """One IP stack (:data:`STACKS`) on one board (:data:`BOARDS`)."""

    stack: str = "plustcp"
    board: str = "posix"

    def __post_init__(self) -> None:
        if self.stack not in STACKS:
            raise UsageError(f"rig: unknown stack {self.stack!r} (choose from {', '.join(STACKS)})")
        if self.board not in BOARDS:
            raise UsageError(
                f"rig {self.verb}: --board {self.board}: unknown board "
                f"(choose from {', '.join(BOARDS)})"
            )

    @property
    def verb(self) -> str:
        """The rig verb that runs this stack (``freertos-tcp``, ``lwip``)."""
        return STACKS[self.stack][0]

    @property
    def stack_name(self) -> str:
        return STACKS[self.stack][1]

    @property
    def board_name(self) -> str:
        return BOARDS[self.board][0]

    @property
    def clock(self) -> str:
        """``host`` (CLOCK_MONOTONIC, the rig's own clock) or ``guest`` (the emulated
        board's timer, which falls behind the host's when QEMU cannot keep up)."""
        return BOARDS[self.board][1]

    @property
    def emulated(self) -> bool:
        return self.board == "mps2-an385"

    @property
    def build_mode(self) -> tuple[str, str]:
        """The build script (under ``tools/``) and its mode."""
        if self.stack == "plustcp":
            return "freertos_build.sh", ("tcp-build" if self.board == "posix" else "mps2-build")
        return "freertos_build.sh", ("lwip-build" if self.board == "posix" else "mps2-lwip-build")

    def image(self, variant: str) -> str:
        """The file name of the image the build makes for ``variant``. Plus-TCP: one
        image runs both (its config's ``protect``); lwIP: two builds, as lwIP's usual
        driver needs ``LWIP_TCPIP_CORE_LOCKING_INPUT 0`` and the adapter 1."""
        if self.stack == "plustcp":
            return "rts_freertos_device" if self.board == "posix" else "rts_mps2_device.elf"
        kind = "device" if variant == "protected" else "stock"
        return f"rts_lwip_{kind}" if self.board == "posix" else f"rts_mps2_lwip_{kind}.elf"

    @property
    def trees(self) -> tuple[str, ...]:
        """A file of each third-party tree this target's build needs (the MPS2 board's
        LAN9118 driver comes from FreeRTOS-Plus-TCP's tree, whichever the stack)."""
        kernel = "FreeRTOS-Kernel/tasks.c"
        tcp = "FreeRTOS-Plus-TCP/source/FreeRTOS_IP.c"
        if self.stack == "plustcp":
            return (kernel, tcp)
        return (kernel, "lwip/src/core/init.c") + ((tcp,) if self.emulated else ())

    @property
    def build_tools(self) -> list[str]:
        """The programs its build runs (``patch``: the project's patches to FreeRTOS-Plus-TCP,
        whose tree also gives the MPS2 board's LAN9118 driver)."""
        cc = ["gcc"] if self.board == "posix" else ["arm-none-eabi-gcc"]
        return cc + (["patch"] if self.stack == "plustcp" or self.emulated else [])

    @property
    def run_tools(self) -> list[str]:
        """The programs its runs need beside the attack tools."""
        return ["ethtool"] + (["qemu-system-arm"] if self.emulated else [])

    @property
    def cache_name(self) -> str:
        """The build cache's folder prefix (the POSIX Plus-TCP one as before)."""
        if (self.stack, self.board) == ("plustcp", "posix"):
            return "freertos"
        return f"{self.verb}-{self.board}"

    @property
    def platform(self) -> str:
        """What ran, for ``summary.json``."""
        tick = "1 kHz tick"
        if self.emulated:
            return (
                f"{self.stack_name} on FreeRTOS, {self.board_name} (guest time; {tick}; "
                "the LAN9118 on a TAP)"
            )
        return f"{self.stack_name} on FreeRTOS, {self.board_name} (host time; {tick})"
