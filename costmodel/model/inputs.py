"""Validated scenario inputs (pydantic), with every quantity converted to canonical units.

A quantity field accepts ``"700 W"``, ``{"value": 700, "unit": "W"}`` or (for dimensionless
fractions and token counts) a plain number; booleans are never numbers. After validation each
field holds a float magnitude in the unit named by its :class:`QuantityField` metadata, and
:meth:`Scenario.to_inputs` hands the declared calculation its inputs.

Defaults are illustrative assumptions unless a source is named; :meth:`Scenario.defaults_used`
lists every default a scenario relied on, and the disclosure repeats it.
"""
from __future__ import annotations

import marshal
import math
import re
import types
import typing
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Annotated, Any, Literal, get_origin

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictInt,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from .calendar import DAYS_A_YEAR, HOURS_A_DAY, MONTH_DAYS, MONTHS, WEEKDAY_SHARE
from .errors import MAX_ERRORS, UNKNOWN_KEY, Bound, InputError, more_errors
from .rates import (
    ACCELERATOR_PATTERN,
    DATE_PATTERN,
    RATE_KINDS,
    RateError,
    parse_rate_date,
    rate_key,
)
from .steps import BASES, BOUNDARIES, MODEL, TOKEN_KINDS
from .units import (
    BARE_NUMBER_UNITS,
    CURRENCIES,
    UnitInputError,
    exchange_rates,
    parse_quantity,
    unit_text,
)

__all__ = ["default_source", "CITED_BY", "replace_citations", "InputError", "QuantityField",
           "Scenario", "validate_scenario", "cross_checks", "quantity_field", "quantity_meta",
           "NORMALISED_BY_DEFAULT", "MIN_UTILISATION", "MIN_THROUGHPUT", "MIN_THROUGHPUT_PER_KW",
           "MAX_LIFE", "MIN_FX_RATE", "MAX_FX_RATE", "TYPICAL", "trim_unknown", "fewer_errors",
           "Accelerator", "Node", "Rack", "Facility", "Financing", "Electricity",
           "OperatingPoint", "Workload", "Power", "Pricing", "RateEntry", "ReferenceRate",
           "Money", "validate_money", "Tariff", "Load", "profile_inputs", "shape_of",
           "GridFactor", "INSTRUMENTS"]


@dataclass(frozen=True)
class QuantityField:
    """Metadata of a quantity field: its canonical unit and bounds (in that unit)."""
    unit: str
    positive: bool = False
    minimum: float | None = None
    maximum: float | None = None
    below_maximum: bool = False  # strict upper bound
    per: tuple[str, ...] = ()  # dimensions the unit must divide by, see parse_quantity

    @property
    def lowest(self) -> float:
        """The least valid value [unit]: ``minimum``, and never below 0 (no quantity is
        negative)."""
        return max(0.0, self.minimum) if self.minimum is not None else 0.0

    @property
    def lowest_excluded(self) -> bool:
        """Whether :attr:`lowest` is itself invalid (0 for a ``positive`` field)."""
        return self.positive and self.lowest == 0

    def parse(self, raw: Any) -> float:
        value = parse_quantity(raw, self.unit, allow_zero=not self.positive, per=self.per)
        if self.minimum is not None and value < self.minimum:
            raise UnitInputError(Bound("at least", self.minimum, value))
        if self.maximum is not None:
            too_big = value >= self.maximum if self.below_maximum else value > self.maximum
            if too_big:
                bound = "below" if self.below_maximum else "at most"
                raise UnitInputError(Bound(bound, self.maximum, value))
        return value


_QUANTITY_SCHEMA = {"oneOf": [
    {"type": "string", "minLength": 1},
    {"type": "object", "required": ["value", "unit"], "additionalProperties": False,
     "properties": {"value": {"type": "number"}, "unit": {"type": "string"}}},
]}
# a typical magnitude [unit] for each canonical unit: the schema's example ("700 W"); the
# TBT's and the interactivity's agree (5.9 ms is 169 token/s/user)
_EXAMPLE = {"W": 700, "TB/s": 8, "GB": 192, "USD": 30000, "USD/h": 2.5, "USD/kWh": 0.08,
            "USD/kW/month": 150, "gCO2e/kWh": 380, "year": 5, "month": 12, "ms": 5.9, "s": 2,
            "token": 1024, "token/s": 5000, "token/s/kW": 4000, "token/s/user": 169,
            "USD/Mtok": 2, "USD/month": 1500, "Mtok/month": 500, "dimensionless": 0.5}
TYPICAL = _EXAMPLE  # (read by results.check_finite: which input drove a figure out of bounds)


def _quantity_schema(meta: QuantityField, description: str) -> dict[str, Any]:
    """A quantity as JSON Schema: text (``"700 W"``) or ``{"value", "unit"}``, and a bare
    number (within the field's bounds) for the units in BARE_NUMBER_UNITS. Which units have
    the field's dimension is the grammar's business
    (docs/architecture.md#quantities-typed-by-people), not the schema's."""
    low = {"exclusiveMinimum": 0} if meta.lowest_excluded else {"minimum": 0}
    value = {"type": "number", **low}  # no quantity is negative, whatever its unit
    text, obj = (dict(s) for s in _QUANTITY_SCHEMA["oneOf"])
    obj["properties"] = {**obj["properties"], "value": value}
    example = _EXAMPLE.get(meta.unit, 1)
    if meta.minimum is not None and example < meta.minimum:
        example = meta.minimum + 0.3  # e.g. a PUE of 1.3
    branches = [text, obj]
    if meta.unit in BARE_NUMBER_UNITS:
        bare: dict[str, Any] = {"type": "number", **low}
        if meta.minimum is not None and meta.minimum > 0:
            bare = {"type": "number", "minimum": meta.minimum}
        if meta.maximum is not None:
            bare["exclusiveMaximum" if meta.below_maximum else "maximum"] = meta.maximum
        branches.insert(0, bare)
    shown = example if meta.unit == "dimensionless" else f"{example:g} {meta.unit}"
    return {"oneOf": branches, "examples": [shown],
            "description": f"{description} [{meta.unit}]".strip()}


def Qty(unit: str, *, positive: bool = False, minimum: float | None = None,
        maximum: float | None = None, below_maximum: bool = False,
        per: tuple[str, ...] = (), description: str = ""):
    """An annotated float field holding a magnitude in ``unit`` [unit]."""
    meta = QuantityField(unit, positive, minimum, maximum, below_maximum, per)
    schema = _quantity_schema(meta, description)
    return Annotated[float, BeforeValidator(meta.parse), meta, WithJsonSchema(schema)]


def Fraction(*, positive: bool = False, minimum: float | None = None, maximum: float = 1.0,
             below_maximum: bool = False, description: str = ""):
    """A dimensionless fraction: a number or a string such as ``"94 %"``."""
    return Qty("dimensionless", positive=positive, minimum=minimum, maximum=maximum,
               below_maximum=below_maximum, description=description)


# Plausible bounds, where physics or finance gives one: past them is no operating point, and
# the costs priced from it (1e-300 utilisation: 4e298 USD/Mtok) would be answered and saved.
# Each is part of its field's definition (so every face, the batch rows and the workbook
# refuse it with the field's path); results are bounded too (results.MAX_COST_PER_MTOK).
MIN_UTILISATION = 1e-6  # of the hours serving (about 30 s a year)
MIN_THROUGHPUT = 1e-6  # token/s per accelerator (one token in 11.6 days)
MIN_THROUGHPUT_PER_KW = 1e-6  # token/s/kW
MAX_LIFE = 50.0  # years of depreciation: no accelerator is financed over longer
# an exchange rate [units of a currency per USD]: every ISO 4217 currency in use lies between
# (the Kuwaiti dinar 0.3, the Iranian rial's market rate about 1e6)
MIN_FX_RATE, MAX_FX_RATE = 1e-4, 1e7


Count = Annotated[StrictInt, Field(ge=1)]
MS_PER_S = 1000.0  # interactivity [token/s/user] = 1000 / TBT [ms]
# A per-kW throughput without operating_point.normalised_by was divided by this power (the
# published convention: per kW of rated package TDP). See Scenario.normalising_power.
NORMALISED_BY_DEFAULT = "accelerator.rated_power"


MAX_TEXT = 2000  # characters of any text field (names, labels, notes, sources)
# control characters (C0 except tab, newline and carriage return, DEL and C1): a workbook
# cannot hold them, PostgreSQL refuses NUL, and no name needs them
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def check_text(value: str) -> str:
    """Text as a person writes it: no control characters, at most :data:`MAX_TEXT`
    characters. Raises ValueError with the reason."""
    if len(value) > MAX_TEXT:
        raise ValueError(f"must be at most {MAX_TEXT} characters, got {len(value)}")
    bad = _CONTROL.search(value)
    if bad is not None:
        raise ValueError(f"must not contain control characters (U+{ord(bad.group()):04X} at "
                         f"position {bad.start()})")
    return value


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=False)

    @field_validator("*", mode="after")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return check_text(value) if isinstance(value, str) else value

    def to_data(self) -> dict[str, Any]:
        """This section as a plain mapping its validation accepts again: quantities as
        ``{"value", "unit"}`` in canonical units, absent optionals left out (null where the
        default is not: a cleared citation)."""
        def dump(model: BaseModel) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, info in type(model).model_fields.items():
                value = getattr(model, name)
                if value is None:
                    # a cleared field whose default is not None (a citation that did not
                    # apply) stays null: read back, it must not become the default again
                    if not info.is_required() and info.default_factory is None \
                            and info.default is not None:
                        out[name] = None
                    continue
                if isinstance(value, BaseModel):
                    out[name] = dump(value)
                    continue
                if isinstance(value, list) and value and isinstance(value[0], BaseModel):
                    out[name] = [dump(v) for v in value]  # a tariff's seasons
                    continue
                if isinstance(value, dict):  # exchange rates by currency
                    out[name] = {k: dump(v) for k, v in value.items()}
                    continue
                meta = _quantity_meta(info)
                if meta is None and isinstance(value, list):  # hourly quantities
                    meta = _item_meta(info)
                out[name] = {"value": value, "unit": meta.unit} if meta else value
            return out
        return dump(self)


class Accelerator(Section):
    """One accelerator package (a GPU, or one GPU of a superchip)."""
    name: str = "accelerator"
    vendor: str | None = None
    rated_power: Qty("W", positive=True, description="package TDP")
    measured_power: Qty("W", positive=True) | None = None
    memory_bandwidth: Qty("TB/s", positive=True) | None = None
    memory: Qty("GB", positive=True) | None = None
    price: Qty("USD", description="capex per accelerator") | None = None
    hourly_price: Qty("USD/h", description="all-in price per accelerator-hour") | None = None
    all_in_power: Qty("W", positive=True, description="all-in power per accelerator at the "
                                                       "rack boundary") | None = None
    embodied: Qty("gCO2e", description="product carbon footprint of one accelerator (cradle "
                                       "to gate), cited") | None = None
    note: str | None = None

    @property
    def cost_basis(self) -> str:
        return "rent" if self.hourly_price is not None else "own"

    @property
    def rack_power_basis(self) -> str:
        """``all_in`` when an all-in power replaces the node and rack build-up."""
        return "all_in" if self.all_in_power is not None else "built"


class Node(Section):
    """A server. Defaults: an 8-accelerator server (illustrative assumption)."""
    accelerators: Count = 8
    host_power: Qty("W") = 2400.0
    psu_efficiency: Fraction(positive=True) = 0.94
    price: Qty("USD") = 60000.0
    embodied: Qty("gCO2e", description="product carbon footprint of one node without its "
                                       "accelerators, cited") | None = None


class Rack(Section):
    """A rack of nodes. Defaults: illustrative assumptions."""
    nodes: Count = 4
    switch_power: Qty("W") = 1500.0
    other_power: Qty("W") = 500.0
    power_delivery_efficiency: Fraction(positive=True) = 0.97
    price: Qty("USD") = 100000.0


class Facility(Section):
    pue: Qty("dimensionless", minimum=1.0) = 1.3
    hosting: Qty("USD/kW/month", per=("[power]", "[time]")) = 150.0


class Financing(Section):
    life: Qty("year", positive=True, maximum=MAX_LIFE) = 5.0
    cost_of_capital: Fraction() = 0.10
    salvage: Fraction() = 0.10
    maintenance: Fraction() = 0.03


MAX_CURRENCIES = 20  # exchange rates one scenario may state


def _unwrap_profile(raw: Any) -> Any:
    """``{value = [...], unit = "USD/kWh"}`` -> one quantity per hour; a list as it is."""
    if isinstance(raw, dict) and set(raw) == {"value", "unit"} \
            and isinstance(raw["value"], list):
        return [{"value": v, "unit": raw["unit"]} for v in raw["value"][:HOURS_A_DAY + 1]]
    return raw


def Hourly(unit: str, *, per: tuple[str, ...] = (), maximum: float | None = None,
           description: str = ""):
    """24 quantities [unit], index 0 = 00:00-01:00 local time: a list of quantities, or
    ``{value = [24 numbers], unit = "..."}``."""
    meta = QuantityField(unit, maximum=maximum, per=per)
    item = Annotated[float, BeforeValidator(meta.parse), meta,
                     WithJsonSchema(_quantity_schema(meta, ""))]
    schema = {"description": f"{description} [{unit}]: 24 values, index 0 = 00:00-01:00 "
                             f"local time",
              "oneOf": [{"type": "array", "minItems": HOURS_A_DAY, "maxItems": HOURS_A_DAY,
                         "items": _quantity_schema(meta, "")},
                        {"type": "object", "required": ["value", "unit"],
                         "additionalProperties": False,
                         "properties": {"value": {"type": "array", "minItems": HOURS_A_DAY,
                                                  "maxItems": HOURS_A_DAY,
                                                  "items": {"type": "number", "minimum": 0}},
                                        "unit": {"type": "string"}}}]}
    return Annotated[list[item], BeforeValidator(_unwrap_profile),
                     Field(min_length=HOURS_A_DAY, max_length=HOURS_A_DAY),
                     WithJsonSchema(schema)]


_RATES = dict(per=("[energy]",), description="energy rate by hour")
_DEMAND = dict(per=("[power]", "[time]"))
_HOUR = Annotated[StrictInt, Field(ge=0, le=HOURS_A_DAY - 1)]
_MONTH = Annotated[StrictInt, Field(ge=1, le=MONTHS)]
MAX_DEMAND_PERIODS = 24  # demand periods of one tariff


def _distinct(values: list[int], what: str) -> list[int]:
    """``values`` (hours, months), each at most once; else ValueError ``months repeat: ...``."""
    if len(set(values)) != len(values):
        raise ValueError(f"{what} repeat: {values}")
    return values


class TariffSeason(Section):
    """Rates for some months of the year (the others keep the tariff's own)."""
    name: str | None = None
    months: list[_MONTH] = Field(min_length=1, max_length=MONTHS,
                                 description="months 1 (January) to 12")
    hourly: Hourly("USD/kWh", **_RATES)
    weekend: Hourly("USD/kWh", **_RATES) | None = None  # none: as the season's weekdays
    demand_charge: Qty("USD/kW/month", **_DEMAND) | None = None  # none: the tariff's

    @field_validator("months")
    @classmethod
    def _months_once(cls, months: list[int]) -> list[int]:
        return _distinct(months, "months")


class DemandPeriod(Section):
    """A demand charge billed on the busiest hour within some hours of the day (the on-peak
    hours, say), each month it applies: besides the tariff's all-hours ``demand_charge``,
    as utilities bill them (an on-peak kW charge and an all-hours kW charge)."""
    name: str | None = None
    demand_charge: Qty("USD/kW/month", description="on the busiest hour within the period's "
                                                   "hours at the facility boundary",
                       **_DEMAND)
    hours: list[_HOUR] = Field(min_length=1, max_length=HOURS_A_DAY,
                               json_schema_extra={"uniqueItems": True},
                               description="the weekday hours in the period, 0 = "
                                           "00:00-01:00 local time",
                               examples=[[12, 13, 14, 15, 16, 17]])
    weekend_hours: Annotated[list[_HOUR], Field(
        max_length=HOURS_A_DAY, json_schema_extra={"uniqueItems": True})] | None = Field(
        None, description="the weekend days' hours in the period ([]: none); none given: as "
                          "the weekdays", examples=[[]])
    months: Annotated[list[_MONTH], Field(
        min_length=1, max_length=MONTHS, json_schema_extra={"uniqueItems": True})] | None = \
        Field(None, description="the months the period is billed in, 1 (January) to 12; none "
                                "given: every month", examples=[[6, 7, 8, 9]])

    @field_validator("hours", "weekend_hours")
    @classmethod
    def _hours_once(cls, hours: list[int] | None) -> list[int] | None:
        return hours if hours is None else _distinct(hours, "hours")

    @field_validator("months")
    @classmethod
    def _months_once(cls, months: list[int] | None) -> list[int] | None:
        return months if months is None else _distinct(months, "months")

    @property
    def billed_months(self) -> list[int]:
        """The months (1-12) the period is billed in."""
        return list(range(1, MONTHS + 1)) if self.months is None else sorted(self.months)


class Tariff(Section):
    """An electricity tariff: energy rates by hour of the day (weekdays, and weekend days
    where they differ), by month where seasons differ; a demand charge on the month's peak
    power at the facility boundary; fixed charges per site and month. Weekdays weigh 5/7 of
    the year and weekend days 2/7; months weigh their days in a 365-day year."""
    name: str = "tariff"
    utility: str | None = None
    effective: str | None = Field(None, pattern=f"^{DATE_PATTERN}$",
                                  description="effective date, YYYY-MM or YYYY-MM-DD")
    source: str | None = None
    hourly: Hourly("USD/kWh", **_RATES)
    weekend: Hourly("USD/kWh", **_RATES) | None = None  # none: as the weekdays
    seasons: list[TariffSeason] = Field(default_factory=list, max_length=MONTHS)
    demand_charge: Qty("USD/kW/month", description="on the month's peak power at the "
                                                   "facility boundary", **_DEMAND) = 0.0
    demand_periods: list[DemandPeriod] = Field(
        default_factory=list, max_length=MAX_DEMAND_PERIODS,
        description="time-of-use demand charges: each billed on the busiest hour within its "
                    "own hours, besides demand_charge")
    fixed_charge: Qty("USD/month", per=("[time]",), description="per site") = 0.0
    scale: Qty("dimensionless", description="factor on every energy rate") = 1.0
    shift: Qty("USD/kWh", per=("[energy]",), description="added to every energy "
                                                         "rate") = 0.0

    @model_validator(mode="after")
    def _months_once(self) -> Tariff:
        seen: dict[int, int] = {}
        for i, season in enumerate(self.seasons):
            for m in season.months:
                if m in seen:
                    raise ValueError(f"month {m} is in seasons[{seen[m]}] and seasons[{i}]")
                seen[m] = i
        return self

    @property
    def weekend_rates(self) -> bool:
        """Whether weekend days have energy rates of their own."""
        return self.weekend is not None or any(s.weekend is not None for s in self.seasons)

    @property
    def has_weekend(self) -> bool:
        """Whether the tariff tells weekend days apart: their own energy rates, or demand
        periods with weekend hours of their own."""
        return self.weekend_rates or any(p.weekend_hours is not None
                                         for p in self.demand_periods)


class FxRate(Section):
    """An exchange rate against USD (the catalog's currency), dated and sourced: ``rate =
    "0.92 EUR/USD"`` (0.92 EUR buy one USD)."""
    currency: str = Field(pattern="^[A-Z]{3}$", description="the ISO 4217 code the rate "
                                                            "prices (from the rate's unit)")
    rate: float = Field(gt=0, description="units of the currency per USD")
    date: str = Field(pattern=f"^{DATE_PATTERN}$", description="YYYY-MM or YYYY-MM-DD")
    source: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _read_rate(cls, data: Any) -> Any:
        """``rate = "0.92 EUR/USD"`` (or ``{value, unit}``) -> currency and rate."""
        if not isinstance(data, dict) or "rate" not in data or "currency" in data:
            return data
        raw = data["rate"]
        unit = unit_text(raw)  # "0.92 EUR/USD", "0.92EUR / USD" or {value, unit}
        code = unit.partition("/")[0].strip() if unit is not None else ""
        if code not in CURRENCIES:
            raise ValueError(f"rate: write it as units of a currency per USD, e.g. "
                             f"\"0.92 EUR/USD\", got {raw!r}")
        try:
            value = parse_quantity(raw, f"{code}/USD", allow_zero=False)
        except UnitInputError as exc:
            raise ValueError(f"rate: {exc}") from None
        if not MIN_FX_RATE <= value <= MAX_FX_RATE:  # 1e308 EUR/USD gave null figures
            bound = f"at least {MIN_FX_RATE:g}" if value < MIN_FX_RATE else \
                f"at most {MAX_FX_RATE:g}"
            raise ValueError(f"rate: must be {bound}, got {value:g} ({code}/USD)")
        return {**data, "currency": code, "rate": value}


class Money(Section):
    """The currency results are shown in, and the exchange rates that convert amounts given
    in other currencies (none is ever applied unless stated here)."""
    currency: str = Field("USD", pattern="^[A-Z]{3}$",
                          description="ISO 4217 code of the currency results are shown in")
    fx: dict[Annotated[str, Field(pattern="^[A-Z]{3}$")], FxRate] = Field(
        default_factory=dict, max_length=MAX_CURRENCIES)
    _converted: list[str] = PrivateAttr(default_factory=list)  # currencies of amounts given

    @property
    def converted(self) -> list[str]:
        """The currencies (codes) of amounts that were given in them and converted to USD."""
        return self._converted

    @property
    def rates(self) -> dict[str, float]:
        """Currency code -> units of it per USD, as stated."""
        return {code: fx.rate for code, fx in self.fx.items()}

    @property
    def rate(self) -> float:
        """Units of the result currency per USD (1 for USD)."""
        return 1.0 if self.currency == "USD" else self.fx[self.currency].rate


class Load(Section):
    """The load shape: the fraction of each hour spent serving at the operating point (idle
    power the rest of the hour); ``utilisation`` is its mean."""
    hourly: Hourly("dimensionless", maximum=1.0, description="fraction of the hour serving")
    weekend: Hourly("dimensionless", maximum=1.0,
                    description="fraction of the hour serving, weekend days") | None = None


_YEAR = r"[0-9]{4}"
INSTRUMENTS = ("supplier", "contract", "residual_mix")


class GridFactor(Section):
    """A grid emission factor of the catalog (fixtures/catalog/grid_factors.toml): where the
    power is drawn (location-based) or what the buyer's instruments say (market-based), with
    the year it describes, its publication and date."""
    basis: Literal["location", "market"]
    # what a market-based factor comes from (read only where the entry is named as the
    # market-based factor; a location-based entry states none)
    instrument: Literal[INSTRUMENTS] | None = None  # type: ignore[valid-type]
    factor: Qty("gCO2e/kWh", per=("[energy]",), description="the annual average")
    hourly: Hourly("gCO2e/kWh", per=("[energy]",), description="the factor by hour") | None = None
    year: str = Field(pattern=f"^{_YEAR}$", description="the year the factor describes")
    source: str = Field(min_length=1)
    date: str = Field(pattern=f"^{_YEAR}(?:-[0-9]{{2}}(?:-[0-9]{{2}})?)?$",
                      description="publication date, YYYY, YYYY-MM or YYYY-MM-DD")
    region: str | None = None
    area: str | None = None
    note: str | None = None


class Electricity(Section):
    """Defaults to the EIA May 2026 US industrial average as cited by the source articles.

    The default source and date cite the default price and nothing else: a price given
    without a source (or date) of its own has none. A tariff replaces the flat price."""
    price: Qty("USD/kWh", per=("[energy]",)) | None = 0.0871
    source: str | None = ("EIA, average US industrial electricity price, May 2026 (8.71 "
                             "cents/kWh), as cited in \"OpenAI's Jalapeño Turns Latency Into a "
                             "Power Bill\", The Weighted Average, Aug 2026")
    date: str | None = "2026-05"
    # the location-based emission factor (annual average; by hour where carbon_hourly is
    # given) and the market-based one (a supplier's, a contract's, or the residual mix)
    carbon_intensity: Qty("gCO2e/kWh", per=("[energy]",),
                          description="location-based emission factor") | None = None
    carbon_hourly: Hourly("gCO2e/kWh", per=("[energy]",),
                          description="location-based emission factor by hour") | None = None
    carbon_source: str | None = None  # where the carbon intensity comes from
    carbon_year: str | None = Field(None, pattern=f"^{_YEAR}$",
                                    description="the year the factor describes")
    market_carbon_intensity: Qty("gCO2e/kWh", per=("[energy]",),
                                 description="market-based emission factor") | None = None
    market_carbon_hourly: Hourly("gCO2e/kWh", per=("[energy]",),
                                 description="market-based emission factor by hour") | None = None
    market_carbon_source: str | None = None
    market_carbon_year: str | None = Field(None, pattern=f"^{_YEAR}$",
                                           description="the year the factor describes")
    market_carbon_instrument: Literal[INSTRUMENTS] | None = None  # type: ignore[valid-type]
    region: str | None = None  # e.g. "US-TX", "DE": where the price applies
    sector: str | None = None  # e.g. "industrial", "commercial", "non-household"
    period: str | None = None  # the period an average price describes, e.g. "2025"
    tariff: Tariff | None = None
    site_accelerators: Count | None = None  # sharing the fixed charges; none: one rack

    @model_validator(mode="after")
    def _citation_follows_price(self) -> Electricity:
        given = self.model_fields_set
        # a factor by hour without its annual average: the hours' plain mean stands as it
        for hourly, annual in (("carbon_hourly", "carbon_intensity"),
                               ("market_carbon_hourly", "market_carbon_intensity")):
            values = getattr(self, hourly)
            if values is not None and getattr(self, annual) is None:
                self.__dict__[annual] = sum(values) / len(values)
                given.add(annual)
        if self.tariff is not None:
            if "price" not in given:  # the default price and its citation do not apply,
                # and were not given (so not reported as defaults used either)
                self.__dict__.update(price=None, source=None, date=None)
        elif "price" in given:  # (a price and a tariff: refused by the cross checks)
            # cleared, and set (so not reported as defaults used): what setattr would do,
            # without its per-call dispatch (every priced request with a price passes here)
            cleared = {"source", "date"} - given
            if cleared:
                self.__dict__.update(dict.fromkeys(cleared))
                given.update(cleared)
        return self

    @property
    def pricing(self) -> str:
        return "flat" if self.tariff is None else "tariff"

    @property
    def carbon_basis(self) -> str:
        return "flat" if self.carbon_hourly is None else "hourly"

    @property
    def market_carbon_basis(self) -> str:
        return "flat" if self.market_carbon_hourly is None else "hourly"

    @property
    def site_basis(self) -> str:
        return "rack" if self.site_accelerators is None else "given"


class OperatingPoint(Section):
    throughput: Qty("token/s", positive=True, minimum=MIN_THROUGHPUT,
                    description="per accelerator") | None = None
    throughput_per_kw: Qty("token/s/kW", positive=True,
                           minimum=MIN_THROUGHPUT_PER_KW) | None = None
    normalised_by: Qty("W", positive=True) | None = None
    interactivity: Qty("token/s/user", positive=True) | None = None
    tbt: Qty("ms", positive=True, description="time between tokens") | None = None
    ttft: Qty("s", positive=True, description="time to first token") | None = None
    e2e_latency: Qty("s", positive=True, description="end-to-end latency") | None = None
    token_kind: Literal[TOKEN_KINDS] = "mixed"  # type: ignore[valid-type]
    label: str | None = None
    chosen: str = "given"
    curve: str | None = None  # id of the curve the point was read from
    read_status: str | None = None  # exact | interpolated | clamped | measured
    source: str | None = None
    note: str | None = None

    @property
    def throughput_basis(self) -> str:
        return "per_kw" if self.throughput_per_kw is not None else "per_accelerator"

    @property
    def effective_interactivity(self) -> float | None:
        """Interactivity as given, or implied by the TBT [token/s/user]."""
        if self.interactivity is not None:
            return self.interactivity
        return None if self.tbt is None else MS_PER_S / self.tbt

    @property
    def effective_tbt(self) -> float | None:
        """Time between tokens as given, or implied by the interactivity [ms]."""
        if self.tbt is not None:
            return self.tbt
        return None if self.interactivity is None else MS_PER_S / self.interactivity


class Workload(Section):
    model: str | None = None
    isl: Qty("token", positive=True) = 8192.0
    osl: Qty("token", positive=True) = 1024.0
    precision: str | None = None
    framework: str | None = None
    speculative_decoding: str | None = None
    disaggregated: bool | None = None


class Power(Section):
    boundary: Literal[BOUNDARIES] = "chip"  # type: ignore[valid-type]
    basis: Literal[BASES] = "rated"  # type: ignore[valid-type]


class Pricing(Section):
    gross_margin: Fraction(below_maximum=True) = 0.5
    output_weight: Qty("dimensionless", positive=True) = 4.0


class RateEntry(Section):
    """A public reference rate: one dated version of one kind of rate for one accelerator,
    per accelerator-hour ALL IN (energy, hosting and the accelerator's share of host and
    network inside it), with the all-in power it assumes. A catalog ``rate`` entry
    (:mod:`costmodel.model.rates`); the figures are the publisher's assumptions, not quotes."""
    accelerator: str = Field(pattern=f"^{ACCELERATOR_PATTERN}$",
                             description="the accelerator's catalog key")
    kind: Literal[RATE_KINDS]  # type: ignore[valid-type]
    date: str = Field(pattern=f"^{DATE_PATTERN}$",
                      description="the version: YYYY-MM or YYYY-MM-DD")
    hourly_price: Qty("USD/h", description="the rate per accelerator-hour, all in")
    all_in_power: Qty("W", positive=True, description="all-in power per accelerator (the "
                                                       "chip and its share of host, NICs "
                                                       "and network)")
    source: str | None = None
    note: str | None = None

    @field_validator("date")
    @classmethod
    def _date(cls, value: str) -> str:
        try:
            parse_rate_date(value)
        except RateError as exc:
            raise ValueError(str(exc)) from None
        return value

    def catalog_key(self) -> str:
        """The key of this version in the catalog: ``gb300/rental@2026-09``."""
        return rate_key(self.accelerator, self.kind, self.date)


class ReferenceRate(RateEntry):
    """The reference rate a scenario was priced from (its catalog key and the entry), for
    the disclosure; the inputs it set (hourly price, all-in power, electricity price and
    hosting at zero, the rack boundary) are ordinary inputs with their own sources."""
    key: str

    @model_validator(mode="after")
    def _key_names_the_entry(self) -> ReferenceRate:
        if self.key != self.catalog_key():
            raise ValueError(f"key {self.key!r}: accelerator, kind and date imply "
                             f"{self.catalog_key()!r}")
        return self


# the name of a scenario given none that names neither its operating point nor its accelerator
UNNAMED = "Unnamed scenario"


class Scenario(Section):
    """Everything needed to price one system at one operating point."""
    name: str = "scenario"
    description: str | None = None
    system: str | None = None  # the system preset node and rack came from, if any
    accelerator: Accelerator
    node: Node = Field(default_factory=Node)
    rack: Rack = Field(default_factory=Rack)
    facility: Facility = Field(default_factory=Facility)
    financing: Financing = Field(default_factory=Financing)
    electricity: Electricity = Field(default_factory=Electricity)
    utilisation: Fraction(positive=True, minimum=MIN_UTILISATION) = 1.0
    idle_power: Fraction() = 0.3
    operating_point: OperatingPoint
    workload: Workload = Field(default_factory=Workload)
    power: Power = Field(default_factory=Power)
    pricing: Pricing = Field(default_factory=Pricing)
    load: Load | None = None  # a load shape by hour; none: utilisation in every hour
    money: Money = Field(default_factory=Money)
    reference_rate: ReferenceRate | None = None  # the rate it was priced from, if any

    @model_validator(mode="after")
    def _named(self) -> Scenario:
        # Unnamed (an API body, a file without `name`), it is called after what it runs, not
        # "scenario": a decision would otherwise say "Take scenario (own build)".
        if "name" not in self.model_fields_set:
            op, accelerator = self.operating_point, self.accelerator.name
            known = accelerator if "name" in self.accelerator.model_fields_set else None
            self.name = (op.label or (f"{known or 'accelerator'}, curve {op.curve}"
                                      if op.curve else known) or UNNAMED)[:200]
        return self

    @property
    def load_basis(self) -> str:
        return "utilisation" if self.load is None else "hourly"

    @property
    def embodied_basis(self) -> str:
        """Which product carbon footprints are given: none, accelerator, node or both."""
        a, n = self.accelerator.embodied is not None, self.node.embodied is not None
        return ("both" if n else "accelerator") if a else ("node" if n else "none")

    # -- what the declared calculation reads -------------------------------------------
    @property
    def normalising_power(self) -> float:
        """The power per accelerator a per-kW throughput is normalised by [W]:
        ``operating_point.normalised_by`` if given, else :data:`NORMALISED_BY_DEFAULT` (the
        accelerator's rated power)."""
        given = self.operating_point.normalised_by
        return _DEFAULT_NORMALISING_POWER(self) if given is None else given

    @property
    def normalised_by_defaulted(self) -> bool:
        """A per-kW throughput whose normalising power was not given: it is
        :data:`NORMALISED_BY_DEFAULT`, so it moves whenever that input does."""
        op = self.operating_point
        return op.throughput_per_kw is not None and op.normalised_by is None

    def to_inputs(self) -> dict[str, float | int]:
        """Canonical magnitudes for every declared input [declared units]; enums as indices.

        Absent optional inputs are NaN: steps that read them give no value. Profiles are
        read-only numpy arrays (:func:`profile_inputs`).
        """
        out = _TO_INPUTS(self)
        out.update(profile_inputs(self))
        return out

    def defaults_used(self) -> list[str]:
        """Dotted keys whose value came from a default rather than from the input."""
        used: list[str] = []
        given = self.model_fields_set
        for name, is_section in _FIELDS[Scenario]:
            if not is_section:
                if name not in given and getattr(self, name) is not None:
                    used.append(name)
                continue
            model = getattr(self, name)
            if name not in given and name in _LEFT_OUT:  # left out: its defaults, always
                used.extend(_LEFT_OUT[name])  # the same names
                continue
            used.extend(_section_defaults(name, model, name in given))
        return used


@lru_cache(maxsize=1024)
def default_source(key: str) -> str:
    """Where a defaulted value comes from, for the disclosure's sources."""
    if key.startswith("electricity."):
        return "default: EIA May 2026 US industrial average (see electricity.source)"
    if key.startswith("power."):
        return "default: chip boundary, rated basis (how the published figures are normalised)"
    if key.startswith("workload."):
        return "default: InferenceX 8k/1k workload (ISL 8192, OSL 1024)"
    if key == "operating_point.token_kind":
        return "default: mixed tokens (input + output), as InferenceX counts them"
    return "default: illustrative assumption (docs/scenarios.md#defaults)"


# The fields that say where a value came from (a citation, its date, a label naming what was
# measured), by the value they describe. They hold only while the value is the one they
# describe: a value set by anyone else (an override, an edited workbook cell) replaces those
# naming a source with where the new value came from and clears the others
# (:func:`replace_citations`). An accelerator keeps its name when its figures are overridden
# (a power-capped or discounted GB300 is still a GB300): each figure's own source says where
# it came from.
_POINT_LABELS = ("operating_point.chosen", "operating_point.label", "operating_point.source",
                 "operating_point.curve", "operating_point.read_status")
CITED_BY: dict[str, tuple[str, ...]] = {
    # the sector and period describe a published average, not a price set by hand
    "electricity.price": ("electricity.source", "electricity.date", "electricity.sector",
                          "electricity.period"),
    "operating_point.throughput": _POINT_LABELS,
    "operating_point.throughput_per_kw": _POINT_LABELS,
    # an emission factor set by hand: its source names the hand, its year is unknown
    "electricity.carbon_intensity": ("electricity.carbon_source", "electricity.carbon_year"),
    "electricity.market_carbon_intensity": ("electricity.market_carbon_source",
                                            "electricity.market_carbon_year"),
    "electricity.carbon_hourly": ("electricity.carbon_source", "electricity.carbon_year"),
    "electricity.market_carbon_hourly": ("electricity.market_carbon_source",
                                         "electricity.market_carbon_year"),
}
_NAMES_WHERE = {"electricity.source": "{}", "electricity.carbon_source": "{}",
                "electricity.market_carbon_source": "{}", "operating_point.source": "{}",
                "operating_point.chosen": "given: {}"}


def replace_citations(data: dict[str, Any], key: str, where: str,
                      keep: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """In a scenario mapping whose ``key`` was just set by ``where`` (``--set
    electricity.price=...``, ``edited in workbook ...``), replace what cited the value it
    replaced (:data:`CITED_BY`), except the keys in ``keep`` (set by the same hand): a source
    or the chosen point names ``where``, a date or label is cleared. Answers the dotted keys
    now set (to ``where``, or null where a default would cite), whose source is ``where``,
    and those removed, which have none."""
    where = _CONTROL.sub(" ", where)[:MAX_TEXT - 10]
    named: list[str] = []
    removed: list[str] = []
    for tied in CITED_BY.get(key, ()):
        if tied in keep:
            continue
        section, name = tied.split(".")
        table = data.setdefault(section, {})
        if not isinstance(table, dict):  # not a table: validation says so
            continue
        shown = _NAMES_WHERE.get(tied)
        if shown:
            table[name] = shown.format(where)
        elif _SECTIONS[section].model_fields[name].default is not None:
            table[name] = None  # null: the default would cite the value replaced
        else:
            table.pop(name, None)
            removed.append(tied)
            continue
        named.append(tied)
    return named, removed


# Descriptive fields whose defaults are labels, not assumptions about cost.
_NOT_INPUTS = {"name", "description", "chosen", "label", "vendor", "note", "curve",
               "read_status", "system", "reference_rate", "money",
               # labels of a price, and tables without a default (never a default used)
               "carbon_source", "region", "sector", "period", "tariff", "site_accelerators",
               "carbon_year", "market_carbon_source", "market_carbon_year",
               "market_carbon_instrument"}


_SECTIONS = {n: f.annotation for n, f in Scenario.model_fields.items()
             if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}
# the profile and tariff inputs come from profile_inputs
_INPUT_GETTERS = [(i.name, attrgetter(i.key)) for i in MODEL.inputs.values()
                  if not i.axes and not i.key.startswith("electricity.tariff.")]
_NORMALISED_BY = "operating_point_normalised_by"  # the input Scenario.normalising_power feeds
_DEFAULT_NORMALISING_POWER = attrgetter(NORMALISED_BY_DEFAULT)
_ENUM_GETTERS = [(e.name, attrgetter(e.key), e.levels) for e in MODEL.enums.values()]


# categorical inputs whose level says whether a table is given: key -> (the table, the level
# without it); the properties that name the level (Electricity.pricing...) say the same
_BY_PRESENCE = {"electricity.pricing": ("electricity.tariff", "flat"),
                "load_basis": ("load", "utilisation"),
                "electricity.site_basis": ("electricity.site_accelerators", "rack")}


def _compile_to_inputs() -> Any:
    """Scenario.to_inputs as one function: each input read by its attribute path (a None is
    NaN, a number a float), then each enum's level index, in the declaration's order."""
    lines = ["def to_inputs(s):", "    out = {}"]
    for name, get in _INPUT_GETTERS:
        path = "s.normalising_power" if name == _NORMALISED_BY else f"s.{get.__reduce__()[1][0]}"
        assert all(p.isidentifier() for p in path.split("."))
        if name == "money_rate":  # 1 for USD without the property's lookups
            path = "(1.0 if s.money.currency == 'USD' else s.money.rate)"
        lines += [f"    x = {path}", f"    out[{name!r}] = nan if x is None else float(x)"]
    for i, (name, get, levels) in enumerate(_ENUM_GETTERS):
        key = get.__reduce__()[1][0]
        if key in _BY_PRESENCE:  # the level of a table's presence, read directly
            table, absent = _BY_PRESENCE[key]
            assert levels[0] == absent and len(levels) == 2
            lines.append(f"    out[{name!r}] = 0 if s.{table} is None else 1")
            continue
        path = f"s.{key}"
        assert all(p.isidentifier() for p in path.split("."))
        lines.append(f"    out[{name!r}] = levels{i}.index({path})")
    lines.append("    return out")
    namespace: dict[str, Any] = {"nan": math.nan, **{f"levels{i}": levels for i, (_, _, levels)
                                                     in enumerate(_ENUM_GETTERS)}}
    exec(compile("\n".join(lines), "<Scenario.to_inputs>", "exec"), namespace)
    return namespace["to_inputs"]


_TO_INPUTS = _compile_to_inputs()
# per model: (field, is a section) for the fields defaults_used() reports on
_FIELDS = {m: [(n, (isinstance(f.default_factory, type) and issubclass(f.default_factory,
                                                                       BaseModel))
                or n in ("accelerator", "operating_point"))
               for n, f in m.model_fields.items() if n not in _NOT_INPUTS]
           for m in (Scenario, Accelerator, Node, Rack, Facility, Financing, Electricity,
                     OperatingPoint, Workload, Power, Pricing)}


assert not any(is_section for m, fields in _FIELDS.items() if m is not Scenario
               for _, is_section in fields)  # defaults_used() walks one level down
# what defaults_used() reports of a section left out of a scenario (its default factory's
# instance, never changed): its fields whose default is not None, dotted
_LEFT_OUT = {n: [f"{n}.{k}" for k, _ in _FIELDS[f.default_factory]
                 if getattr(f.default_factory(), k) is not None]
             for n, f in Scenario.model_fields.items() if n not in _NOT_INPUTS
             and isinstance(f.default_factory, type) and issubclass(f.default_factory, BaseModel)}
_DOTTED = {n: {k: f"{n}.{k}" for k, _ in _FIELDS.get(m, ())} for n, m in _SECTIONS.items()}


# a section's defaulted fields, by the section (validated sections are shared and never
# changed: see _SECTION_CACHE); the model is held with them, so its id is not reused
_SECTION_DEFAULTS: dict[tuple[int, str, bool], tuple[BaseModel, tuple[str, ...]]] = {}


def _section_defaults(name: str, model: BaseModel, given: bool) -> tuple[str, ...]:
    """The dotted keys of section ``name`` (``model``) that hold a default: every field not
    set (all of them when the scenario did not give the section) whose value is not None."""
    key = (id(model), name, given)
    hit = _SECTION_DEFAULTS.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    # a section has no sections inside (checked above, where _FIELDS is made)
    inside = model.model_fields_set if given else ()
    dotted = _DOTTED[name]
    used = tuple(dotted.get(field) or f"{name}.{field}" for field, _ in _FIELDS[type(model)]
                 if field not in inside and getattr(model, field) is not None)
    if len(_SECTION_DEFAULTS) >= 4096:
        _SECTION_DEFAULTS.clear()
    _SECTION_DEFAULTS[key] = (model, used)
    return used


def _quantity_meta(info) -> QuantityField | None:
    """The unit and bounds of a quantity field (not of a list of them: see _item_meta)."""
    found = list(info.metadata)
    if get_origin(info.annotation) is not list:
        for arg in getattr(info.annotation, "__args__", ()) or ():  # Optional[Annotated[...]]
            found.extend(getattr(arg, "__metadata__", ()))
    return next((m for m in found if isinstance(m, QuantityField)), None)


def _item_meta(info) -> QuantityField | None:
    """The unit of the items of a list of quantities (an hourly profile), if it is one."""
    def find(t: Any, depth: int) -> QuantityField | None:
        found = next((m for m in getattr(t, "__metadata__", ())
                      if isinstance(m, QuantityField)), None)
        if found is not None or depth == 0:
            return found
        return next((f for a in getattr(t, "__args__", ()) or ()
                     if (f := find(a, depth - 1)) is not None), None)
    # list[item] or Optional[Annotated[list[item], ...]]: the item is at most 3 levels down
    return next(
        (f for a in getattr(info.annotation, "__args__", ()) or ()
         if (f := find(a, 2)) is not None), None)


def quantity_meta(model: type[BaseModel], name: str) -> QuantityField | None:
    """The unit and bounds of quantity field ``name`` of ``model`` (a quote, a demand, a
    tier: any section), or None if it is not a quantity."""
    info = model.model_fields.get(name)
    return None if info is None else _quantity_meta(info)


def quantity_field(key: str) -> QuantityField | None:
    """The unit and bounds of a dotted scenario key, or None if it is not a quantity."""
    model: Any = Scenario
    parts = key.split(".")
    for part in parts[:-1]:
        info = getattr(model, "model_fields", {}).get(part)
        if info is None:
            return None
        model = info.annotation
        for arg in getattr(model, "__args__", ()) or ():  # an optional section
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                model = arg
    info = model.model_fields.get(parts[-1])
    return _quantity_meta(info) if info is not None else None


def _money_checks(money: Money) -> list[tuple[str, str]]:
    """A money table's rules across its fields: each rate in its own currency, and the
    currency results are shown in with its rate."""
    errors = []
    for code, fx in money.fx.items():
        if fx.currency != code:
            errors.append((f"money.fx.{code}.rate", f"a rate for {code} is in {code}/USD, "
                                                     f"got {fx.currency}/USD"))
    if money.currency != "USD" and money.currency not in money.fx:
        errors.append(("money.currency", f"{money.currency} needs its exchange rate: give "
                                         f"[money.fx.{money.currency}] rate = \"... "
                                         f"{money.currency}/USD\", with its date and source"))
    return errors


def validate_money(data: Any) -> Money:
    """A scenario's ``money`` table alone, validated as the scenario's would be: InputError
    at each field's path (``money.fx.EUR.date``)."""
    try:
        money = Money.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, ("money",)) from None
    errors = _money_checks(money)
    if errors:
        raise InputError(errors)
    return money


def cross_checks(s: Scenario) -> list[tuple[str, str]]:
    """The checks a scenario passes beyond its fields' own, each failure as (field path,
    message); the checks read a validated scenario and set nothing but a utilisation given by
    a load shape."""
    errors: list[tuple[str, str]] = []
    a, op, e = s.accelerator, s.operating_point, s.electricity
    if e.tariff is not None and e.price is not None:
        errors.append(("electricity.price", "give electricity.price (a flat price) or "
                                            "electricity.tariff, not both: a tariff "
                                            "replaces the flat price"))
    elif e.tariff is None and e.price is None:
        errors.append(("electricity.price", "required (or give electricity.tariff)"))
    if e.tariff is None and e.site_accelerators is not None:
        errors.append(("electricity.site_accelerators",
                       "only applies to a tariff's fixed charges (electricity.tariff)"))
    errors += _money_checks(s.money)
    if s.load is not None:
        mean = load_mean(s.load)
        if mean <= 0:
            errors.append(("load.hourly", "serves in no hour: the load shape's mean "
                                          "(the utilisation) must be above 0"))
        elif mean < MIN_UTILISATION:
            errors.append(("load.hourly", f"the load shape's mean (the utilisation, "
                                          f"{mean:.3g}) must be at least {MIN_UTILISATION:g}"))
        elif "utilisation" in s.model_fields_set:
            if not math.isclose(mean, s.utilisation, rel_tol=1e-6, abs_tol=1e-9):
                errors.append(("utilisation", f"{s.utilisation:g} differs from the mean of "
                                              f"load.hourly ({mean:.6g}, weekdays 5/7 and "
                                              f"weekend days 2/7): give one or the other, or "
                                              f"both consistent"))
        else:  # the shape's mean is the utilisation, as if it had been given
            s.utilisation = mean
            s.model_fields_set.add("utilisation")
    if s.power.basis == "measured" and a.measured_power is None:
        errors.append(("accelerator.measured_power", "required when power.basis = measured"))
    if a.price is None and a.hourly_price is None:
        errors.append(("accelerator.price",
                       "required (or give accelerator.hourly_price for a rented accelerator)"))
    if (op.throughput is None) == (op.throughput_per_kw is None):
        errors.append(("operating_point.throughput",
                       "give exactly one of operating_point.throughput (per accelerator) or "
                       "operating_point.throughput_per_kw"))
    if op.normalised_by is not None and op.throughput_per_kw is None:
        errors.append(("operating_point.normalised_by",
                       "only applies to operating_point.throughput_per_kw"))
    if op.interactivity is not None and op.tbt is not None:
        implied = MS_PER_S / op.tbt  # token/s/user from ms per token
        if not math.isclose(implied, op.interactivity, rel_tol=0.01):
            errors.append(("operating_point.tbt",
                           f"{op.tbt:g} ms implies {implied:.4g} token/s/user, but "
                           f"operating_point.interactivity is {op.interactivity:.4g}"))
    return errors


# Validated sections by their content: a section is validated on its own content alone, so
# equal tables (a catalog entry's, the same in every request that names it) validate to equal
# models, and one model serves them all (nothing changes a validated scenario). A table is
# keyed by its marshal (format 2: no references, so equal tables give equal bytes), which
# tells apart what equality would not (1, 1.0 and True; a tuple and a list; NaN) and takes
# plain data only (exact dicts, lists, text, numbers...; anything else, a TOML date or a
# subclass, is validated every time); a table that fails is never stored, so errors always
# come from validating the whole scenario.
_SECTION_CACHE: dict[tuple[str, bytes], BaseModel] = {}
_SECTION_CACHE_SIZE = 2048
_SECTION_KEY_BYTES = 4096  # larger tables are validated every time


# the sections a scenario may leave out, at their defaults (what their default factories
# make; shared, as a cached section is)
_DEFAULT_SECTIONS = {n: f.default_factory() for n, f in Scenario.model_fields.items()
                     if isinstance(f.default_factory, type)
                     and issubclass(f.default_factory, BaseModel)}


def _section_key(name: str, table: Any) -> tuple[str, bytes] | None:
    if type(table) is not dict:
        return None
    try:
        key = marshal.dumps(table, 2)  # (about a third cheaper than a pickle)
    except Exception:  # not plain data (or too deep): validated every time
        return None
    return (name, key) if len(key) <= _SECTION_KEY_BYTES else None


def load_mean(load: Load) -> float:
    """The mean of a load shape over the year [fraction of hours]: weekdays weigh 5/7,
    weekend days 2/7 (a shape without weekend days serves every day alike)."""
    weekday = sum(load.hourly) / HOURS_A_DAY
    if load.weekend is None:
        return weekday
    return WEEKDAY_SHARE * weekday + (1 - WEEKDAY_SHARE) * sum(load.weekend) / HOURS_A_DAY


# a scenario with more keys than this in its top table and sections holds more than
# MAX_ERRORS unknown keys
_WIDE = len(Scenario.model_fields) + sum(len(m.model_fields) for m in _SECTIONS.values()) \
    + MAX_ERRORS


def validate_scenario(data: Any) -> Scenario:
    """Validate a plain mapping (parsed TOML/JSON) into a :class:`Scenario`.

    Raises :class:`InputError` listing every problem with its field path.
    """
    if not isinstance(data, dict):
        raise InputError([("", "a scenario must be a table/object")])
    dropped = 0
    if len(data) + sum(len(t) for t in data.values() if type(t) is dict) > _WIDE:
        # more keys than every field of every section: unknown keys past the first few are
        # only counted, not validated one by one
        data, dropped = trim_unknown(data, Scenario)
    try:
        # amounts in other currencies, at the scenario's own rates
        scenario = _validate_with_rates(data) if "money" in data else _validate_shared(data)
    except InputError as exc:
        if dropped:
            raise InputError([*exc.errors, ("", more_errors(dropped))]) from None
        raise
    errors = cross_checks(scenario)
    if errors:
        raise InputError(errors)
    return scenario


def _validate_shared(data: dict) -> Scenario:
    """A scenario whose sections are validated once for all scenarios that give the same
    table (see _SECTION_CACHE)."""
    given, missed, taken = dict(data), [], False
    for name in _SECTIONS.keys() & data.keys():
        key = _section_key(name, data[name])
        if key is not None:
            hit = _SECTION_CACHE.get(key)
            if hit is not None:
                given[name], taken = hit, True  # a model instance is taken as it is
            else:
                missed.append(key)
    left_out = [n for n in _DEFAULT_SECTIONS if n not in data]
    for name in left_out:  # a section left out: its default model, taken as it is
        given[name] = _DEFAULT_SECTIONS[name]
    try:
        scenario = Scenario.model_validate(given)
    except ValidationError as exc:
        if not taken:
            raise _invalid(exc, data=data) from None
        try:  # the errors of the scenario as given, with every path
            Scenario.model_validate(data)
        except ValidationError as full:
            raise _invalid(full, data=data) from None
        raise _invalid(exc) from None
    scenario.model_fields_set.difference_update(left_out)  # ... and not given, as before
    if missed:
        if len(_SECTION_CACHE) + len(missed) > _SECTION_CACHE_SIZE:
            _SECTION_CACHE.clear()
        for key in missed:
            _SECTION_CACHE[key] = getattr(scenario, key[0])
    return scenario


def _validate_with_rates(data: dict) -> Scenario:
    """A scenario with a ``money`` table: its exchange rates read first, then every amount in
    another currency converted to USD at them as it is parsed (no section is shared: the same
    table in EUR is another amount under other rates)."""
    try:
        money = Money.model_validate(data["money"])
    except ValidationError as exc:
        raise _invalid(exc, ("money",)) from None
    with exchange_rates(money.rates) as used:
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as exc:
            raise _invalid(exc, data=data) from None
    scenario.money._converted = sorted(used)
    return scenario


def _invalid(exc: ValidationError, prefix: tuple = (), *, data: Any = None) -> InputError:
    """pydantic's errors as an InputError, each at its field path (under ``prefix``). With
    more errors than an InputError lists and ``data`` (validated as the Scenario), the
    unknown keys past the first few are only counted (:func:`fewer_errors`)."""
    exc, dropped = fewer_errors(exc, Scenario, data)
    return InputError([*((error_path((*prefix, *e["loc"])), error_message(e))
                         for e in exc.errors(include_url=False)),
                       *([("", more_errors(dropped))] if dropped else [])])


def fewer_errors(exc: ValidationError, model: type[BaseModel],
                 data: Any) -> tuple[ValidationError, int]:
    """``exc`` (``data`` failing as ``model``) with at most MAX_ERRORS unknown keys, and the
    count of those left out: when it holds more errors than an InputError lists, ``data``
    is validated again without the unknown keys past the first MAX_ERRORS, so that no
    error (nor "did you mean") is made for each of 150,000 unknown keys."""
    if data is None or exc.error_count() <= MAX_ERRORS:
        return exc, 0
    trimmed, dropped = trim_unknown(data, model)
    if dropped:
        try:
            model.model_validate(trimmed)
        except ValidationError as fewer:
            return fewer, dropped
    return exc, 0


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model a field holds (``Accelerator``, ``Accelerator | str``, ``list[Season]``):
    (the model, whether a list of them); (None, False) for anything else."""
    while get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if get_origin(annotation) is list:
        found, _ = _model_in(typing.get_args(annotation)[0])
        return found, found is not None
    if get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found[0] is not None:
                return found
    return None, False


def trim_unknown(data: Any, model: type[BaseModel],
                 keep: int = MAX_ERRORS) -> tuple[Any, int]:
    """``data`` without the unknown keys (keys that are no field of ``model``'s tables, at
    any depth) past the first ``keep``, and how many were left out; the tables on the way
    are copies, ``data`` itself is never changed (nor copied when none is left out).
    Iterative: it visits only the tables that are models' (bounded by the models)."""
    if not isinstance(data, dict):
        return data, 0
    root = dict(data)
    stack: list[tuple[dict, type[BaseModel]]] = [(root, model)]
    kept = dropped = 0
    while stack:
        node, current = stack.pop()
        fields = current.model_fields
        for key in list(node):
            info = fields.get(key) if isinstance(key, str) else None
            if info is None:
                if kept < keep:
                    kept += 1
                else:
                    del node[key]
                    dropped += 1
                continue
            sub, many = _model_in(info.annotation)
            value = node[key]
            if sub is None:
                continue
            if not many and isinstance(value, dict):
                node[key] = table = dict(value)
                stack.append((table, sub))
            elif many and isinstance(value, list):
                node[key] = items = list(value)
                for i, item in enumerate(items):
                    if isinstance(item, dict):
                        items[i] = table = dict(item)
                        stack.append((table, sub))
    return (root, dropped) if dropped else (data, 0)


def error_path(loc: tuple) -> str:
    """``("node", "accelerators")`` -> ``node.accelerators``; list indices as ``[i]``."""
    path = ""
    for p in loc:
        path += f"[{p}]" if isinstance(p, int) else (f".{p}" if path else str(p))
    return path


def error_message(err: dict) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        return UNKNOWN_KEY
    if kind == "missing":
        return "required"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number, got {err['input']!r}"
    if kind in ("greater_than_equal", "less_than_equal"):
        relation, limit = ("at least", err["ctx"]["ge"]) if kind == "greater_than_equal" \
            else ("at most", err["ctx"]["le"])
        given = err["input"]
        text = f"must be {relation} {limit:,}, got {given!r}"
        number = isinstance(given, (int, float)) and not isinstance(given, bool)
        return Bound(relation, limit, given, text=text) if number else text
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        section = err["loc"][0] if err["loc"] else ""
        hint = " or a catalog key" if section in ("accelerator", "operating_point",
                                                   "electricity") and len(err["loc"]) == 1 else ""
        return f"must be a table{hint}, got {err['input']!r}"
    if kind in ("too_short", "too_long"):  # a list: 24 hourly values, 1 to 12 months...
        ctx = err.get("ctx", {})
        bound = ("at least", ctx.get("min_length")) if kind == "too_short" else \
            ("at most", ctx.get("max_length"))
        return f"must have {bound[0]} {bound[1]} items, got {ctx.get('actual_length')}"
    if kind == "string_type":
        return f"must be text, got {err['input']!r}"
    if kind == "bool_type":
        return f"must be true or false, got {err['input']!r}"
    if kind == "literal_error":
        return f"{msg[0].lower()}{msg[1:]}, got {err['input']!r}"
    if kind == "value_error":  # a field's own words (pydantic's message prefixes them)
        return str(err["ctx"]["error"])
    return msg


# ---- the profile inputs: a scenario's tariff, load shape and calendar as arrays --------------
# Shapes (see costmodel.model.evaluate): rates (months, hours), demand charges and month
# weights (months, 1), hour weights and the load (1, hours); a tariff's demand periods: their
# hours (periods, hours) and their charges and months billed (periods, 1). A tariff without
# demand periods has one period that bills nothing (no hour, no charge, every month), so the
# calculation and the workbook keep one shape. ``months`` is 12 when a tariff has seasons,
# else 1 (the whole year); ``hours`` is 48 (a weekday's 24, then a weekend day's) when the
# tariff or the load tells weekend days apart, else 24. Each month row bills its demand
# charge once a year (a tariff without seasons: 12 times).

_ABSENT: dict[str, Any] = {
    **{n: math.nan for n in MODEL.profile_inputs},
    **{i.name: math.nan for i in MODEL.inputs.values() if i.key.startswith("electricity.tariff.")}}


def shape_of(scenario: Scenario) -> tuple[int, int] | None:
    """(months, hours) of the scenario's profile, or None when it has neither a tariff, a
    load shape nor an emission factor by hour."""
    tariff, load, e = scenario.electricity.tariff, scenario.load, scenario.electricity
    if tariff is None and load is None and e.carbon_hourly is None \
            and e.market_carbon_hourly is None:
        return None
    months = MONTHS if tariff is not None and tariff.seasons else 1
    weekend = (tariff is not None and tariff.has_weekend) or \
        (load is not None and load.weekend is not None)
    return months, HOURS_A_DAY * (2 if weekend else 1)


def _tariff_arrays(tariff: Tariff, months: int, hours: int) -> tuple[np.ndarray, np.ndarray]:
    """Energy rates (months, hours) [USD/kWh] and demand charges (months, 1)
    [USD/kW/month]."""
    by_month = {m: season for season in tariff.seasons for m in season.months}
    rates = np.empty((months, hours))
    demand = np.empty((months, 1))
    for row in range(months):
        season = by_month.get(row + 1) if months == MONTHS else None
        source = season or tariff
        weekday = source.hourly
        weekend = source.weekend if source.weekend is not None else weekday
        rates[row] = weekday if hours == HOURS_A_DAY else [*weekday, *weekend]
        charge = season.demand_charge if season is not None else None
        demand[row, 0] = tariff.demand_charge if charge is None else charge
    return rates, demand


def _demand_period_arrays(tariff: Tariff, hours: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """Each demand period's hours (periods, hours) [1 in the period, else 0], charge
    (periods, 1) [USD/kW/month] and months billed a year (periods, 1) [month/year]; one
    period billing nothing when the tariff has none."""
    periods = tariff.demand_periods
    if not periods:
        return (np.zeros((1, hours)), np.zeros((1, 1)), np.full((1, 1), float(MONTHS)))
    mask = np.zeros((len(periods), hours))
    for row, p in enumerate(periods):
        mask[row, p.hours] = 1
        if hours != HOURS_A_DAY:
            weekend = p.hours if p.weekend_hours is None else p.weekend_hours
            mask[row, [HOURS_A_DAY + h for h in weekend]] = 1
    charge = np.array([[p.demand_charge] for p in periods], dtype=float)
    months = np.array([[len(p.billed_months)] for p in periods], dtype=float)
    return mask, charge, months


def profile_inputs(scenario: Scenario) -> dict[str, Any]:
    """The profile inputs and the tariff's scalar inputs by input name [declared units];
    NaN where the scenario has no tariff (or no load shape)."""
    shape = shape_of(scenario)
    if shape is None:
        return _ABSENT
    months, hours = shape
    out = dict(_ABSENT)
    if hours == HOURS_A_DAY:
        hour_weight = np.full((1, hours), 1 / HOURS_A_DAY)
    else:
        hour_weight = np.concatenate([np.full(HOURS_A_DAY, WEEKDAY_SHARE / HOURS_A_DAY),
                                      np.full(HOURS_A_DAY, (1 - WEEKDAY_SHARE) / HOURS_A_DAY)]
                                     ).reshape(1, hours)
    out["hour_weight"] = hour_weight
    load = scenario.load
    if load is not None:
        weekend = load.weekend if load.weekend is not None else load.hourly
        out["load_hourly"] = np.array(
            [load.hourly if hours == HOURS_A_DAY else [*load.hourly, *weekend]], dtype=float)
    e = scenario.electricity
    for name, values in (("electricity_carbon_hourly", e.carbon_hourly),
                         ("electricity_market_carbon_hourly", e.market_carbon_hourly)):
        if values is not None:  # (the same factors on weekdays and weekend days)
            out[name] = np.array([values * (hours // HOURS_A_DAY)], dtype=float)
    tariff = scenario.electricity.tariff
    if tariff is not None:
        rates, demand = _tariff_arrays(tariff, months, hours)
        out["electricity_tariff_rates"] = rates
        out["electricity_tariff_demand_charge"] = demand
        if months == MONTHS:
            out["tariff_month_weight"] = np.array(MONTH_DAYS, dtype=float).reshape(
                months, 1) / DAYS_A_YEAR
            out["tariff_months_billed"] = np.ones((months, 1))
        else:
            out["tariff_month_weight"] = np.ones((1, 1))
            out["tariff_months_billed"] = np.full((1, 1), float(MONTHS))
        (out["electricity_tariff_demand_period_hours"],
         out["electricity_tariff_demand_period_charge"],
         out["electricity_tariff_demand_period_months"]) = _demand_period_arrays(tariff, hours)
        out["electricity_tariff_fixed_charge"] = tariff.fixed_charge
        out["electricity_tariff_scale"] = tariff.scale
        out["electricity_tariff_shift"] = tariff.shift
    for name in MODEL.profile_inputs:
        if isinstance(out[name], np.ndarray):
            out[name].setflags(write=False)
    return out
