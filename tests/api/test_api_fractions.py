"""Every fraction an API body asks for reads a percentage as the web form does ("10 %" is
0.1; costmodel.model.inputs.Fraction, one parser for both), and is refused beyond its bounds
at its field, in the bound's words (issue 38, item 8b)."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from costmodel.api import schemas

GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
PRICE = {"scenario": GB300}


@pytest.mark.parametrize("model,body,field,typed,value", [
    (schemas.PlanRequest, {**PRICE, "power_budget": "1 MW"}, "headroom", "10 %", 0.1),
    (schemas.PlanRequest, {**PRICE, "demand": "1 token/s"}, "availability", "99 %", 0.99),
    (schemas.TornadoRequest, {"scenario": PRICE}, "swing", "20 %", 0.2),
    (schemas.PriceWhatIfRequest, PRICE, "flexible_share", "30 %", 0.3),
    (schemas.QuoteTermRequest, {"quote": schemas.EXAMPLE_QUOTE, "scenario": PRICE},
     "improvement", "30 %", 0.3),
])
def test_a_fraction_reads_a_percentage(model, body, field, typed, value):
    assert getattr(model.model_validate({**body, field: typed}), field) == pytest.approx(value)
    assert getattr(model.model_validate({**body, field: value}), field) == value


@pytest.mark.parametrize("model,body,field,typed,said", [
    (schemas.PlanRequest, {**PRICE, "power_budget": "1 MW"}, "headroom", "100 %",
     "must be below 1, got 1"),
    (schemas.PlanRequest, {**PRICE, "demand": "1 token/s"}, "availability", "0 %",
     "must be greater than zero"),
    (schemas.TornadoRequest, {"scenario": PRICE}, "swing", "5 W", "dimensionless"),
])
def test_a_fraction_out_of_bounds_is_refused_at_its_field(model, body, field, typed, said):
    with pytest.raises(ValidationError) as exc:
        model.model_validate({**body, field: typed})
    error = exc.value.errors()[0]
    assert error["loc"] == (field,) and said in error["msg"]
