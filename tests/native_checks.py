"""Flow tables through the binding, as the binding tests build them (``test_frames``,
``test_rxpath_binding``)."""

from __future__ import annotations

from typing import Any


def flow_table(ffi: Any, lib: Any) -> Any:
    """A new, initialised ``rts_flow_table``."""
    table = ffi.new("rts_flow_table *")
    lib.rts_flow_table_init(table, 0)
    return table


def bind(ffi: Any, lib: Any, table: Any, proto: int, port: int) -> int:
    """Bind ``proto``/``port`` in ``table`` (it must succeed); returns the flow's id."""
    fid = ffi.new("uint8_t *")
    assert lib.rts_flow_table_bind(table, proto, port, 0, fid) == lib.RTS_OK
    return fid[0]
