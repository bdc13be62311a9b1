"""The rig's network: the names and addresses of its two namespaces.

Layout (docs/rig.md, "The network")::

    namespace rtsrig-<tag>-atk                 namespace rtsrig-<tag>-dev
    attacker  198.18.0.2/24  rtsrig<tag>a <==veth==> rtsrig<tag>d  198.18.0.1/24  device
                                                        TCP listener on port 502

The addresses come from 198.18.0.0/15, the range RFC 2544 reserves for
benchmarking network devices; they exist only inside the two namespaces, which
have no other interface and no route, so rig traffic cannot reach any other
host. Every name the rig creates starts with :data:`PREFIX`; :func:`.harness.clean`
removes those and nothing else.
"""

from __future__ import annotations

__all__ = [
    "ATTACKER_ADDR",
    "DEVICE_ADDR",
    "LISTEN_PORT",
    "NFT_TABLE",
    "PREFIX",
    "PREFIX_LEN",
    "TAG_ENV",
]

#: Every namespace, interface and nftables table the rig creates starts with this.
PREFIX = "rtsrig"
#: The device's address (RFC 2544 benchmarking range, inside the rig's namespaces only).
DEVICE_ADDR = "198.18.0.1"
#: The attacker's address.
ATTACKER_ADDR = "198.18.0.2"
PREFIX_LEN = 24
#: The device's TCP listener (MODBUS/TCP's port, as on a PLC); SYN floods and scans hit it.
LISTEN_PORT = 502
#: The nftables table (netdev family, in the device namespace) with the rig's counters.
NFT_TABLE = "rtsrig"

#: Every process the rig starts carries its run's tag in this environment variable.
TAG_ENV = "RTSRIG_TAG"
