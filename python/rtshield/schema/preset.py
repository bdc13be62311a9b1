"""A platform preset (``rtshield/platforms/NAME.toml``): its ``[platform]``, its
``[costs]`` and the ``[defaults]`` it gives a scenario's sections."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    Field,
    WithJsonSchema,
    model_validator,
)

from rtshield.schema.base import (
    FileModel,
    fail,
)
from rtshield.schema.fields import (
    Duration,
    Span,
    Table,
    limits,
)
from rtshield.schema.tables import CriticalTable, DriverTable, NicTable, RxTable


class PlatformTable(Table):
    """A preset's ``[platform]``: the processor and its RTOS."""

    name: str = Field(description="the preset's name (its file name)")
    description: str = ""
    source: str = Field("", description="where its numbers come from")
    clock_hz: float = Field(gt=0, description="CPU clock, Hz (cycle durations convert with it)")
    cores: int = Field(description="number of cores")
    tick: Duration = Field(description="RTOS tick period")
    tick_real: Duration | None = Field(
        None,
        description="the tick interrupt's real period where the board's timer does not keep "
        "`tick` (a host-timed port: the FreeRTOS POSIX port's timer thread sleeps a tick, "
        "then signals, so every tick comes late by the host's wake-up latency); what the RTOS "
        "counts in ticks (a periodic task's period and deadline, libshield's periods on the "
        "tick count) stretches by tick_real / tick. Default: `tick`",
    )
    tick_isr: Span = Field(description="CPU cost of one tick interrupt")
    time_slicing: bool = Field(True, description="round robin among equal priorities on the tick")

    @model_validator(mode="before")
    @classmethod
    def _clock(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "clock_hz" in data:
            v = data["clock_hz"]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise fail(f"expected a positive number of Hz, got {v!r}", "clock_hz")
        return data

    @model_validator(mode="after")
    def _check(self) -> PlatformTable:
        n = limits()["cores"]
        if not 1 <= self.cores <= n:
            raise fail(f"must lie in 1-{n}, got {self.cores}", "cores")
        if self.tick_real is not None and not (self.tick > 0 and self.tick_real > 0):
            raise fail("needs a tick: both tick and tick_real positive", "tick_real")
        return self


#: Keys of the sections a preset's ``[defaults]`` may fill.
DEFAULTABLE: dict[str, tuple[str, ...]] = {
    "scenario": ("bin", "seed", "duration"),
    "critical": tuple(CriticalTable.model_fields),
    "driver": tuple(DriverTable.model_fields),
    "nic": tuple(NicTable.model_fields),
    "rx": tuple(k for k in RxTable.model_fields if k != "enabled"),
}


def _defaults_table(section: str):
    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise fail("expected a table")
        for k in value:
            if k not in DEFAULTABLE[section]:
                raise fail(
                    "unknown key (allowed: " + ", ".join(sorted(DEFAULTABLE[section])) + ")", k
                )
        return value

    return Annotated[
        dict,
        BeforeValidator(check),
        WithJsonSchema(
            {
                "type": "object",
                "propertyNames": {"enum": list(DEFAULTABLE[section])},
                "description": f"defaults of the scenario's [{section}] (same keys and values)",
            }
        ),
    ]


class DefaultsTable(Table):
    """A preset's ``[defaults]``: values a scenario's sections take when they do not set them."""

    scenario: _defaults_table("scenario") = Field(default_factory=dict)
    critical: _defaults_table("critical") = Field(default_factory=dict)
    driver: _defaults_table("driver") = Field(default_factory=dict)
    nic: _defaults_table("nic") = Field(default_factory=dict)
    rx: _defaults_table("rx") = Field(default_factory=dict)

    @classmethod
    def unknown_key(cls, key: str, data: Mapping[str, Any]) -> str:
        return f"unknown section (allowed: {', '.join(DEFAULTABLE)})"


class PresetFile(FileModel, strict=True, title="rtshield platform"):
    """A platform preset (``rtshield/platforms/NAME.toml``)."""

    platform: PlatformTable
    costs: dict[str, Span] = Field(default_factory=dict, description="per-activity CPU costs")
    defaults: DefaultsTable = Field(default_factory=DefaultsTable)
