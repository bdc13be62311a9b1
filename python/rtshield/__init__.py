"""rtshield: keep the critical task of a real-time device on time under network floods.

The native core (libshield and the simulator) is loaded on first use through
:mod:`rtshield._native`.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
