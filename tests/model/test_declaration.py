"""The declared calculation: the unit check catches mistakes; the evaluator is one code path
for a scenario and a batch."""
from __future__ import annotations

import numpy as np
import pytest

from costmodel.model.declaration import (
    Constant,
    Declaration,
    DeclarationError,
    Enum,
    Input,
    Step,
)
from costmodel.model.evaluate import Evaluator
from costmodel.model.steps import MODEL
from costmodel.model.units import ureg

POWER = Input("power", "W", "", "power")
PRICE = Input("price", "USD/kWh", "", "price")
RATE = Input("rate", "token/s", "", "rate")
KW = Constant("watts_per_kilowatt", 1000.0, "W/kW", "")
SPH = Constant("seconds_per_hour", 3600.0, "s/h", "")


def declare(*steps, enums=()):
    return Declaration([POWER, PRICE, RATE], list(enums), [KW, SPH], list(steps))


def test_a_correct_declaration_passes():
    d = declare(Step("cost", "USD/h", "power * price / watts_per_kilowatt", ""))
    assert Evaluator(d)({"power": 700.0, "price": 0.0871})["cost"] == pytest.approx(0.06097)


def test_wrong_dimension_is_caught():
    with pytest.raises(DeclarationError, match="step cost: gives"):
        declare(Step("cost", "USD/h", "power / price", ""))


def test_hidden_conversion_factor_is_caught():
    # W x USD/kWh is USD/h only after dividing by 1,000: the check demands a named constant
    with pytest.raises(DeclarationError, match=r"hidden factor 0\.001"):
        declare(Step("cost", "USD/h", "power * price", ""))


def test_literal_numbers_are_refused():
    with pytest.raises(DeclarationError, match="literal 3600"):
        Step("x", "token/h", "rate * 3600", "")


def test_empty_is_no_value_in_the_engine_and_an_empty_cell_in_a_workbook():
    """The literal empty: an option that states nothing. The engine gives NaN (scalar, batch
    and fused paths alike), the unit check passes it (its dimension is the step's), a step
    reading it outside a switch is empty too, and the workbook writes "" for it."""
    import math

    from costmodel.render.workbook.excel_formula import to_formula
    e = Enum("stated", ("none", "given"), "", "stated")
    d = declare(Step("energy", "W", "choose(stated, empty, power)", ""),
                Step("doubled", "W", "energy + energy", ""), enums=[e])
    for fused in (True, False):
        out = Evaluator(d, fused=fused)({"power": np.array([700.0, 700.0]),
                                         "stated": np.array([0, 1])})
        assert math.isnan(out["doubled"][0]) and out["doubled"][1] == 1400.0
    one = Evaluator(d)({"power": 700.0, "stated": 0})
    assert math.isnan(one["energy"])
    assert to_formula(d.steps["energy"].tree) == \
        'CHOOSE(MATCH(stated,stated_levels,0),"",power)'
    # a literal beside it is still refused, and empty keeps the choose's scale check
    with pytest.raises(DeclarationError, match="differ"):
        declare(Step("x", "W", "choose(stated, empty, power / watts_per_kilowatt, power)", ""),
                enums=[Enum("stated", ("none", "a", "b"), "", "stated")])


def test_unknown_names_are_refused():
    with pytest.raises(DeclarationError, match="reads 'powr'"):
        declare(Step("x", "W", "powr", ""))


def test_choose_needs_one_option_per_level():
    e = Enum("basis", ("a", "b"), "", "basis")
    with pytest.raises(DeclarationError, match="needs 2 options"):
        declare(Step("x", "W", "choose(basis, power)", ""), enums=[e])


def test_choose_branches_must_share_a_scale():
    e = Enum("basis", ("a", "b"), "", "basis")
    with pytest.raises(DeclarationError, match="differ"):
        declare(Step("x", "W", "choose(basis, power, power / watts_per_kilowatt)", ""),
                enums=[e])


# ---- profiles: vectors along the month and hour axes, and their reductions -------------------

HOURLY = Input("rates", "USD/kWh", "", "rates", True, ("hour",))
WEIGHT = Input("weight", "dimensionless", "", "weight", True, ("hour",))
MONTHLY = Input("monthly", "USD/kWh", "", "monthly", True, ("month", "hour"))
MONTH_WEIGHT = Input("month_weight", "dimensionless", "", "month_weight", True, ("month",))


def declare_profiles(*steps):
    return Declaration([POWER, PRICE, RATE, HOURLY, WEIGHT, MONTHLY, MONTH_WEIGHT], [],
                       [KW, SPH], list(steps))


def test_a_sum_over_the_hours_is_a_weighted_price():
    d = declare_profiles(
        Step("paid", "USD/kWh", "sum_hour(weight * rates)", ""),
        Step("cost", "USD/h", "power * paid / watts_per_kilowatt", ""))
    assert d.steps["paid"].axes == ()
    rates = np.array([[0.20] * 8 + [0.08] * 16])
    got = Evaluator(d)({"power": 1000.0, "price": 0.0, "rate": 1.0, "rates": rates,
                        "weight": np.full((1, 24), 1 / 24), "monthly": np.nan,
                        "month_weight": np.nan})
    assert got["paid"] == pytest.approx(0.12) and got["cost"] == pytest.approx(0.12)


def test_a_hidden_factor_inside_a_reduction_is_caught():
    with pytest.raises(DeclarationError, match=r"hidden factor 0\.001"):
        declare_profiles(Step("cost", "USD/h", "sum_hour(weight * rates) * power", ""))


def test_a_reduction_of_the_wrong_shape_is_refused():
    with pytest.raises(DeclarationError, match="without the hour axis"):
        declare_profiles(Step("x", "USD/kWh", "max_hour(price)", ""))
    with pytest.raises(DeclarationError, match="still runs by month"):
        declare_profiles(Step("x", "USD/kWh", "sum_hour(monthly)", ""))
    with pytest.raises(DeclarationError, match="a product of names"):
        declare_profiles(Step("x", "USD/kWh", "sum_hour(weight * rates + rates)", ""))
    with pytest.raises(DeclarationError, match="one name"):
        declare_profiles(Step("x", "USD/kWh", "max_hour(weight * rates)", ""))
    # a month reduction keeps the hours: a profile by hour, which is not a result
    d = declare_profiles(Step("x", "USD/kWh", "sum_month(month_weight * monthly)", ""))
    assert d.steps["x"].axes == ("hour",) and d.scalar_steps == []


PERIOD_HOURS = Input("period_hours", "dimensionless", "", "period_hours", True,
                     ("period", "hour"))
PERIOD_RATE = Input("period_rate", "USD/kWh", "", "period_rate", True, ("period",))


def declare_periods(*steps):
    return Declaration([POWER, PRICE, RATE, HOURLY, WEIGHT, MONTHLY, MONTH_WEIGHT,
                        PERIOD_HOURS, PERIOD_RATE], [], [KW, SPH], list(steps))


def test_a_maximum_by_period_keeps_the_periods_and_their_sum_is_a_scalar():
    d = declare_periods(
        Step("in_period", "USD/kWh", "period_hours * rates", ""),
        Step("peak", "USD/kWh", "max_hour(in_period)", ""),
        Step("billed", "USD/kWh", "sum_period(period_rate * peak) / price", ""))
    assert (d.steps["in_period"].axes, d.steps["peak"].axes, d.steps["billed"].axes) == \
        (("period", "hour"), ("period",), ())
    # two periods: hours 0-11 (rates 0.1 ... 0.2 at hour 5) and 12-23 (0.3 at hour 20);
    # weighted 1 and 2: 1 x 0.2 + 2 x 0.3 = 0.8
    rates = np.full((1, 24), 0.1)
    rates[0, 5], rates[0, 20] = 0.2, 0.3
    hours = np.zeros((2, 24))
    hours[0, :12], hours[1, 12:] = 1, 1
    inputs = {"power": 1.0, "price": 1.0, "rate": 1.0, "rates": rates, "weight": np.nan,
              "monthly": np.nan, "month_weight": np.nan, "period_hours": hours,
              "period_rate": np.array([[1.0], [2.0]])}
    got = Evaluator(d, outputs=["peak", "billed"])(inputs)
    assert got["peak"] == pytest.approx(np.array([[0.2], [0.3]]))
    assert got["billed"] == pytest.approx(0.8)
    # a batch of three prices: one profile, the figures of each
    batch = Evaluator(d, outputs=["billed"])({**inputs, "price": np.array([1.0, 2.0, 4.0])})
    assert batch["billed"] == pytest.approx([0.8, 0.4, 0.2])
    # one period: its maximum, as a scalar
    one = Evaluator(d, outputs=["billed"])({**inputs, "period_hours": hours[:1],
                                            "period_rate": np.array([[1.0]])})
    assert one["billed"] == pytest.approx(0.2)


def test_periods_and_months_are_both_rows_and_never_meet():
    with pytest.raises(DeclarationError, match="by month and by period"):
        declare_periods(Step("x", "USD/kWh", "monthly * period_hours", ""))
    with pytest.raises(DeclarationError, match="sum_hour\\(\\) of a value that still runs by "
                                               "period"):
        declare_periods(Step("x", "USD/kWh", "sum_hour(period_hours * rates)", ""))
    with pytest.raises(DeclarationError, match="sum_period\\(\\) of a value that still runs "
                                               "by hour"):
        declare_periods(Step("x", "USD/kWh", "sum_period(period_hours * rates)", ""))
    with pytest.raises(DeclarationError, match="without the period axis"):
        declare_periods(Step("x", "USD/kWh", "sum_period(rates)", ""))


def test_a_batch_shares_its_profile():
    d = declare_profiles(Step("paid", "USD/kWh", "sum_hour(weight * rates) + price", ""))
    rates = np.array([[0.20] * 8 + [0.08] * 16])
    got = Evaluator(d)({"power": 1.0, "price": np.array([0.0, 0.01, 0.02]), "rate": 1.0,
                        "rates": rates, "weight": np.full((1, 24), 1 / 24),
                        "monthly": np.nan, "month_weight": np.nan})["paid"]
    assert got == pytest.approx([0.12, 0.13, 0.14])


@pytest.mark.parametrize("step,unit", [
    ("power_per_accelerator", "W"), ("throughput_per_kw", "token/s/kW"),
    ("tokens_per_kwh", "token/kWh"), ("joules_per_token", "J/token"),
    ("energy_cost_per_hour", "USD/h"), ("capital_recovery_factor", "1/year"),
    ("amortised_capex_per_year", "USD/year"), ("opex_per_hour", "USD/h"),
    ("cost_per_hour", "USD/h"), ("cost_per_mtok_energy", "USD/Mtok"),
    ("cost_per_mtok_capex", "USD/Mtok"), ("cost_per_mtok_opex", "USD/Mtok"),
    ("cost_per_mtok_total", "USD/Mtok"), ("bandwidth_per_watt", "TB/s/kW"),
    ("price_per_mtok_total", "USD/Mtok"), ("price_per_mtok_input", "USD/Mtok"),
    ("price_per_mtok_output", "USD/Mtok")])
def test_model_steps_are_declared_in_the_units_they_are_published_in(step, unit):
    # the declared unit is this exact unit (a factor of 1), not merely the same dimension:
    # W and kW would both pass a dimension check and print 1000x apart
    declared = ureg.Quantity(1, MODEL.steps[step].unit)
    assert declared.to(unit).magnitude == pytest.approx(1.0, rel=1e-12)


def _inputs(n: int, rng: np.random.Generator) -> dict:
    inputs = {i.name: rng.uniform(0.5, 2.0, n) for i in MODEL.inputs.values()}
    inputs["financing_cost_of_capital"] = rng.uniform(0.0, 0.2, n)
    inputs["financing_cost_of_capital"][::7] = 0.0  # straight-line rows inside the batch
    for f in ("utilisation", "idle_power", "financing_salvage", "pricing_gross_margin",
              "node_psu_efficiency", "rack_power_delivery_efficiency"):
        inputs[f] = rng.uniform(0.1, 0.9, n)
    for e in MODEL.enums.values():
        inputs[e.name] = rng.integers(0, len(e.levels), n)
    return inputs


def test_batch_equals_one_at_a_time():
    rng = np.random.default_rng(7)
    inputs = _inputs(200, rng)
    batch = Evaluator(MODEL)(inputs)
    for k in range(0, 200, 17):
        one = Evaluator(MODEL)({name: v[k] for name, v in inputs.items()})
        for step in MODEL.scalar_steps:
            assert float(one[step]) == pytest.approx(float(batch[step][k]), rel=1e-12,
                                                     nan_ok=True), step


def test_pruned_evaluator_matches_full():
    rng = np.random.default_rng(11)
    inputs = _inputs(50, rng)
    pruned = Evaluator(MODEL, outputs=["cost_per_mtok_total"])
    assert "bandwidth_per_watt" not in pruned.steps
    assert list(pruned(inputs)) == ["cost_per_mtok_total"]
    np.testing.assert_allclose(pruned(inputs)["cost_per_mtok_total"],
                               Evaluator(MODEL)(inputs)["cost_per_mtok_total"], rtol=1e-15)


def test_missing_input_is_named():
    with pytest.raises(KeyError, match="electricity_price"):
        Evaluator(MODEL, outputs=["cost_per_mtok_energy"])({"utilisation": 1.0})


def test_scalar_and_numpy_interpreters_agree():
    # the batch of one runs on plain floats; it must give numpy's answer to the last bit
    from costmodel.model.evaluate import NUMPY, SCALAR, compile_node
    rng = np.random.default_rng(5)
    inputs = _inputs(300, rng)
    constants = {c.name: c.value for c in MODEL.constants.values()}
    for k in range(0, 300, 7):
        env_s = {**constants, **{n: float(v[k]) for n, v in inputs.items()}}
        env_n = {**constants, **{n: np.float64(v[k]) for n, v in inputs.items()}}
        for name, step in MODEL.steps.items():
            s = compile_node(step.tree, SCALAR)(env_s)
            with np.errstate(divide="ignore", invalid="ignore"):  # numpy computes both branches
                n = compile_node(step.tree, NUMPY)(env_n)
            env_s[name], env_n[name] = s, n
            assert s == pytest.approx(float(n), rel=1e-15, nan_ok=True), name


def test_the_function_specialised_to_the_levels_gives_the_general_ones_bits():
    # each combination of categorical levels compiles its own function (only the options
    # chosen): the same IEEE results as the general function, which tests every level
    rng = np.random.default_rng(13)
    batch = _inputs(60, rng)
    ev = Evaluator(MODEL)
    for k in range(60):
        one = {n: (int(v[k]) if n in MODEL.enums else float(v[k])) for n, v in batch.items()}
        special, general = ev(one), ev._scalar(one)
        assert special.keys() == general.keys()
        for name, value in general.items():
            assert special[name] == value or (value != value and special[name] != special[name])
    assert len(ev._by_levels) > 1  # several combinations met, each compiled once
