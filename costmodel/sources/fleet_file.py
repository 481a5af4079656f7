"""A fleet file (TOML or JSON; docs: chargeback): the pools a chargeback charges for.

::

    name = "Inference fleet"
    period = "2026-11"          # a month, or "2026-11-01..2026-11-15" (the CLI's --period wins)
    cached_weight = 1           # a cached input token in input tokens (default 1)
    market = "illustrative/reasoning-model-api"   # list prices: a catalog entry or a table

    [[pools]]
    name = "gb300"
    scenario = "sample-tco.toml"  # beside this file; or an inline [pools.scenario] table
    accelerators = 72             # or nodes = 18, or size = "demand"
    models = ["deepseek-r1"]      # the records' models it serves (one pool: every record)
    reserved = { research = { share = 0.25 }, search = { accelerators = 8 } }

:func:`validate_fleet` checks the structure (InputError with field paths); the app layer
loads each pool's scenario and prices it.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..model.errors import InputError
from ..model.inputs import error_message, error_path
from .scenario_file import read_scenario_file

__all__ = ["Fleet", "Pool", "Reservation", "validate_fleet", "read_fleet_file", "MAX_POOLS"]

MAX_POOLS = 12  # pools of one fleet: each is a scenario priced
_NAME = r"^[A-Za-z0-9][A-Za-z0-9 ._+:/-]{0,59}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reservation(_Strict):
    """A tenant's reserved part of a pool: a ``share`` of it [fraction, above 0 to 1] or
    whole ``accelerators``."""
    share: float | None = Field(None, gt=0, le=1)
    accelerators: int | None = Field(None, ge=1, le=10_000_000)

    @model_validator(mode="after")
    def _one(self):
        if (self.share is None) == (self.accelerators is None):
            raise ValueError("give a share (0 to 1) or accelerators, one of them")
        return self


class Pool(_Strict):
    """One pool: its scenario (a path beside the fleet file, or an inline table), its size
    (``accelerators``, ``nodes`` or ``size = "demand"``), the models it serves, its
    reservations by tenant and its market (list prices) when not the fleet's."""
    name: str = Field(pattern=_NAME)
    scenario: str | dict[str, Any]
    accelerators: int | None = Field(None, ge=1, le=10_000_000)
    nodes: int | None = Field(None, ge=1, le=10_000_000)
    size: Literal["demand"] | None = None
    models: list[str] = Field(default_factory=list, max_length=200)
    reserved: dict[str, Reservation] = Field(default_factory=dict, max_length=1000)
    market: str | dict[str, Any] | None = None

    @model_validator(mode="after")
    def _sized(self):
        given = [k for k in ("accelerators", "nodes", "size") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("size the pool one way: accelerators, nodes or size = \"demand\""
                             + (f" (got {', '.join(given)})" if given else ""))
        return self


class Fleet(_Strict):
    """A fleet: its pools over a period, the weight of a cached input token and the market
    whose list prices the month is compared with (none: no comparison)."""
    name: str = Field("fleet", min_length=1, max_length=200)
    period: str | None = None
    cached_weight: float = Field(1.0, ge=0, le=1000)
    market: str | dict[str, Any] | None = None
    pools: list[Pool] = Field(min_length=1, max_length=MAX_POOLS)

    @model_validator(mode="after")
    def _unique(self):
        names = [p.name for p in self.pools]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"pool names must differ: {', '.join(twice)} given twice")
        return self


def validate_fleet(data: Any, where: str = "fleet") -> Fleet:
    """A fleet from plain data; InputError with field paths under ``where`` otherwise."""
    if not isinstance(data, Mapping):
        raise InputError([(where, "a fleet must be a table/object")])
    try:
        return Fleet.model_validate(dict(data))
    except ValidationError as exc:
        raise InputError([(f"{where}.{error_path(e['loc'])}".rstrip("."), error_message(e))
                          for e in exc.errors()]) from None


def read_fleet_file(path: str | Path) -> tuple[Fleet, Path]:
    """A fleet file read and validated, and the folder its scenario paths are beside."""
    p = Path(path)
    return validate_fleet(read_scenario_file(p), str(p)), p.resolve().parent
