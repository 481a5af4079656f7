"""The unit registry and the parsing of quantities at the edge."""
from __future__ import annotations

import math

import pytest

from costmodel.model.units import UnitInputError, parse_quantity, ureg


def test_year_is_8760_hours_and_twelve_months():
    assert ureg.Quantity(1, "year").to("hour").magnitude == 8760
    assert ureg.Quantity(1, "month").to("hour").magnitude == pytest.approx(730)
    assert ureg.Quantity(12, "month").to("year").magnitude == pytest.approx(1)


def test_money_and_token_units():
    assert ureg.Quantity(8.71, "cent/kWh").to("USD/kWh").magnitude == pytest.approx(0.0871)
    assert ureg.Quantity(1, "Mtok").to("token").magnitude == 1e6
    assert ureg.Quantity(1, "kgCO2e").to("gCO2e").magnitude == 1000
    q = ureg.Quantity(169, "token/s/user")
    assert q.dimensionality == ureg.Quantity(1, "token/s/user").dimensionality


@pytest.mark.parametrize("raw,unit,expected", [
    ("700 W", "W", 700.0),
    ("0.7 kW", "W", 700.0),
    ({"value": 700, "unit": "W"}, "W", 700.0),
    ("8.71 cent/kWh", "USD/kWh", 0.0871),
    ("19641 token/s/kW", "token/s/kW", 19641.0),
    ("150 USD/kW/month", "USD/kW/month", 150.0),
    ("1800 USD/kW/year", "USD/kW/month", 150.0),
    ("60 month", "year", 5.0),
    ("94 %", "dimensionless", 0.94),
    (0.94, "dimensionless", 0.94),
    (8192, "token", 8192.0),
    ("15.4 TB/s", "TB/s", 15.4),
])
def test_parse_forms(raw, unit, expected):
    assert parse_quantity(raw, unit) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("raw,unit,message", [
    ("5 kg", "W", "power expected (e.g. 'W'), got kilogram"),
    ({"value": 5, "unit": "kg"}, "W", "power expected"),
    ("700", "W", "has no unit"),
    (700, "W", "a unit is required"),
    (True, "dimensionless", "boolean"),
    ({"value": True, "unit": "W"}, "W", "must be a number"),
    ({"value": 1, "unit": "W", "extra": 2}, "W", 'exactly "value" and "unit"'),
    ("nan W", "W", "NaN"),
    ("inf W", "W", "infinity"),
    ("-700 W", "W", "must not be negative"),
    ("700 furlongs_per_fortnight", "W", "cannot read"),
    ("", "W", "empty"),
    ([700, "W"], "W", "expected a quantity"),
])
def test_parse_errors(raw, unit, message):
    with pytest.raises(UnitInputError) as info:
        parse_quantity(raw, unit)
    assert message in str(info.value)


def test_zero_may_be_refused():
    with pytest.raises(UnitInputError, match="greater than zero"):
        parse_quantity("0 token/s", "token/s", allow_zero=False)
    assert parse_quantity("0 W", "W") == 0.0
    assert not math.isnan(parse_quantity("0 USD", "USD"))
