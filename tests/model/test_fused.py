"""The fused batch evaluator (costmodel.model.fused) gives the plain evaluator's figures: on
random batches of every categorical level, with optional inputs absent (NaN: batch-wide, by
row, or in some rows), tariffs by month and hour with demand periods, load shapes, values
batch-wide or by row, in blocks that do not divide the batch."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costmodel.model import fused
from costmodel.model.declaration import Constant, Declaration, Enum, Input, Step
from costmodel.model.evaluate import Evaluator
from costmodel.model.steps import MODEL

FRACTIONS = {"utilisation", "idle_power", "financing_salvage", "pricing_gross_margin",
             "node_psu_efficiency", "rack_power_delivery_efficiency",
             "financing_maintenance"}
PROFILES = set(MODEL.profile_inputs)
PRUNED = ["cost_per_mtok_total", "price_per_mtok_output", "electricity_price_all_in",
          "emissions_per_mtok"]


def _values(name: str, size: int | None, rng: np.random.Generator):
    """Plausible magnitudes [declared units] of one scalar input: ``size`` rows, or one."""
    if name in FRACTIONS:
        v = rng.uniform(0.05, 0.95, size)
    elif name == "financing_cost_of_capital":
        v = rng.uniform(0.0, 0.2, size)
        if size:
            v[::3] = 0.0  # straight-line rows: where()'s other branch, in the same batch
    elif name == "money_rate":
        v = rng.choice([1.0, 0.92], size)
    else:
        v = rng.uniform(0.5, 2.0, size)
    return v if size else float(v)


def _profiles(rng: np.random.Generator, tariff: bool, load: bool, months: int, hours: int,
              periods: int) -> dict:
    """The profile inputs as costmodel.model.inputs.profile_inputs shapes them; NaN where
    the scenario has no tariff or no load shape."""
    out: dict = {n: np.nan for n in PROFILES}
    if not (tariff or load):
        return out
    out["hour_weight"] = np.full((1, hours), 1 / hours)
    if load:
        out["load_hourly"] = rng.uniform(0.0, 1.0, (1, hours))
    if tariff:
        out["electricity_tariff_rates"] = rng.uniform(0.05, 0.3, (months, hours))
        out["electricity_tariff_demand_charge"] = rng.uniform(0, 20, (months, 1))
        out["tariff_month_weight"] = np.full((months, 1), 1 / months)
        out["tariff_months_billed"] = np.full((months, 1), 12.0 / months)
        out["electricity_tariff_demand_period_hours"] = (
            rng.uniform(size=(periods, hours)) < 0.3).astype(float)
        out["electricity_tariff_demand_period_charge"] = rng.uniform(0, 10, (periods, 1))
        out["electricity_tariff_demand_period_months"] = rng.integers(
            1, 13, (periods, 1)).astype(float)
    return out


@st.composite
def batches(draw, one: bool = False) -> dict:
    """A batch of ``n`` scenarios: every categorical input at one drawn level, each scalar
    input by row or batch-wide, optional ones absent in any of three ways. ``one``: one
    scenario (plain floats) with a tariff or a load shape, or both (profiles)."""
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x: dict = {e.name: draw(st.integers(0, len(e.levels) - 1)) for e in MODEL.enums.values()}
    tariff, load = draw(st.booleans()), draw(st.booleans())
    if one:  # a profile each scenario reads: the tariff's, the load shape's, or both
        tariff = tariff or not load
        x.update(electricity_pricing=int(tariff), load_basis=int(load))
    x.update(_profiles(rng, tariff, load, draw(st.sampled_from([1, 12])),
                       draw(st.sampled_from([24, 48])), draw(st.integers(1, 3))))
    for name, i in MODEL.inputs.items():
        if name in PROFILES:
            continue
        modes = ["row", "scalar"] + (["nan", "nan rows", "some nan"] if i.optional else [])
        if one:
            modes = ["scalar", "nan"] if i.optional else ["scalar"]
        mode = "row" if name == "rack_nodes" and not one else draw(st.sampled_from(modes))
        if mode == "nan":
            x[name] = np.nan
        elif mode == "nan rows":
            x[name] = np.full(n, np.nan)
        else:
            x[name] = _values(name, None if mode == "scalar" else n, rng)
            if mode == "some nan":
                x[name][rng.uniform(size=n) < 0.5] = np.nan
    return x


FULL, FULL_PLAIN = Evaluator(MODEL), Evaluator(MODEL, fused=False)


def _same(got: dict, expected: dict) -> None:
    assert list(got) == list(expected)
    for name, value in expected.items():
        a, b = np.asarray(got[name]), np.asarray(value)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(), st.integers(1, 9))
def test_fused_equals_the_plain_evaluator(x, block):
    # blocks of a few rows, so a batch of up to 40 runs as several, the last shorter
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused, "MIN_BLOCK", block)
        mp.setattr(fused, "BLOCK_BYTES", 0)
        full = Evaluator(MODEL)
        pruned = Evaluator(MODEL, outputs=PRUNED)
        assert full._fused.plan(x) is not None and pruned._fused.plan(x) is not None
        assert full._fused.plan(x)[0].block == block
        _same(full(x), FULL_PLAIN(x))
        _same(pruned(x), Evaluator(MODEL, outputs=PRUNED, fused=False)(x))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches(one=True))
def test_one_scenario_with_a_profile_is_the_plain_evaluators_bits(x):
    # plain floats beside the tariff's and the load's arrays: no rows, the same operations as
    # one generated function; each answer the same value of the same type
    for outputs in (None, PRUNED):
        ev, plain = Evaluator(MODEL, outputs=outputs), Evaluator(MODEL, outputs=outputs,
                                                                 fused=False)
        assert ev._fused.plan(x)[1] == 0
        got, expected = ev(x), plain(x)
        assert list(got) == list(expected)
        for name, value in expected.items():
            assert type(got[name]) is type(value), name
            assert np.array_equal(got[name], value, equal_nan=True), name


def test_every_level_of_every_categorical_input():
    # each level of each enum in turn (the others at their first), by row, with a tariff
    rng = np.random.default_rng(3)
    base = {name: _values(name, 25, rng) for name in MODEL.inputs if name not in PROFILES}
    base.update(_profiles(rng, True, True, 12, 48, 2))
    for e in MODEL.enums.values():
        for level in range(len(e.levels)):
            x = {**base, **{f.name: 0 for f in MODEL.enums.values()}, e.name: level}
            assert FULL._fused.plan(x) is not None
            _same(FULL(x), FULL_PLAIN(x))


def test_a_sweep_in_several_blocks_gives_the_same_bits():
    # a batch longer than a block: the default blocks, the last one shorter
    rng = np.random.default_rng(9)
    n = fused.MAX_BLOCK + 4321
    x = {name: _values(name, n, rng) for name in MODEL.inputs if name not in PROFILES}
    x.update({e.name: 0 for e in MODEL.enums.values()})
    for tariff in (False, True):
        x.update(_profiles(rng, tariff, tariff, 1, 24, 1), electricity_pricing=int(tariff),
                 load_basis=int(tariff))
        ev = Evaluator(MODEL, outputs=["cost_per_mtok_total"])
        plan, rows = ev._fused.plan(x)
        assert rows == n and plan.block < n
        got = ev(x)["cost_per_mtok_total"]
        expected = ev.reference(x)["cost_per_mtok_total"]
        assert np.array_equal(got, expected, equal_nan=True)
        assert np.isfinite(got).all() and (got > 0).all()


def test_what_it_does_not_cover_goes_to_the_plain_evaluator():
    rng = np.random.default_rng(4)
    x = {name: _values(name, 12, rng) for name in MODEL.inputs if name not in PROFILES}
    x.update({e.name: 0 for e in MODEL.enums.values()}, **_profiles(rng, False, False, 1, 24, 1))
    by_row = {**x, "power_boundary": np.array([0, 1, 2, 3] * 3)}  # a level by row
    assert FULL._fused.plan(by_row) is None
    _same(FULL(by_row), FULL_PLAIN(by_row))
    unequal = {**x, "utilisation": np.full(1, 0.5)}  # a row of one beside rows of twelve
    assert FULL._fused.plan(unequal) is None
    _same(FULL(unequal), FULL_PLAIN(unequal))
    with pytest.raises(IndexError):  # a level out of range: the plain evaluator's error
        FULL({**x, "power_boundary": 7})


def test_answers_are_fresh_arrays():
    # an answer that is an input's value (a choose of an input) is a copy, never the input
    rng = np.random.default_rng(5)
    x = {name: _values(name, 6, rng) for name in MODEL.inputs if name not in PROFILES}
    x.update({e.name: 0 for e in MODEL.enums.values()}, **_profiles(rng, False, False, 1, 24, 1))
    got = Evaluator(MODEL, outputs=["power_chip", "load_by_hour", "utilisation_served"])(x)
    assert np.array_equal(got["power_chip"], x["accelerator_rated_power"])
    assert got["power_chip"] is not x["accelerator_rated_power"]
    assert got["load_by_hour"] is not got["utilisation_served"]


def test_shared_subexpressions_are_computed_once():
    # two steps with the same expression are one operation; x * one and x - zero none
    decl = Declaration(
        [Input("a", "W", "", "a"), Input("b", "W", "", "b")], [Enum("e", ("p", "q"), "", "e")],
        [Constant("one", 1.0, "dimensionless", "")],
        [Step("s", "W", "(a + b) * one", ""), Step("t", "W", "choose(e, a + b, a - 0)", ""),
         Step("u", "W", "s + t", "")])
    a, b = np.array([1.0, 2.0, -0.0]), np.array([3.0, np.nan, -0.0])
    ev = Evaluator(decl, outputs=["u", "s", "t"])
    got = ev({"a": a, "b": b, "e": 0})
    plan, _ = ev._fused.plan({"a": a, "b": b, "e": 0})
    assert plan.operations == 2  # a + b (s and t), then u
    np.testing.assert_array_equal(got["u"], [8.0, np.nan, 0.0])
    assert got["s"] is not got["t"]
    np.testing.assert_array_equal(got["t"], [4.0, np.nan, 0.0])
    got = ev({"a": a, "b": b, "e": 1})  # t = a - 0 is a, bit for bit (-0 stays -0)
    assert np.signbit(got["t"][2]) and got["t"] is not a


# ---- every construct of the language, on a declaration of its own --------------------------
# (the model uses no unary minus and few comparisons; steps added later may use any of them)

def _dimensionless(name: str, axes: tuple[str, ...] = ()) -> Input:
    return Input(name, "dimensionless", "", name, True, axes)


EVERYTHING = Declaration(
    [_dimensionless("a"), _dimensionless("b"), _dimensionless("c"),
     _dimensionless("load", ("hour",)), _dimensionless("weight", ("hour",)),
     _dimensionless("rates", ("month", "hour")), _dimensionless("month_weight", ("month",)),
     _dimensionless("period_hours", ("period", "hour")),
     _dimensionless("period_charge", ("period",))],
    [Enum("e", ("x", "y", "z"), "", "e")],
    [Constant("one", 1.0, "dimensionless", ""), Constant("two", 2.0, "dimensionless", "")],
    [Step("neg", "dimensionless", "-a", ""),
     Step("lt", "dimensionless", "where(a < b, a, b - c)", ""),
     Step("le", "dimensionless", "where(a <= c, neg, 1)", ""),
     Step("eq", "dimensionless", "where(c == 0, 1 / b, a / c)", ""),
     Step("ne", "dimensionless", "where(b != a, a ** c, 0)", ""),
     Step("gt", "dimensionless", "where(a > one, a - 0, b * one)", ""),
     Step("ge", "dimensionless", "where(b >= two, lt, -le)", ""),
     Step("pick", "dimensionless", "choose(e, a + b, neg, ge * one)", ""),
     Step("hourly", "dimensionless", "(1 - c) * load + c", ""),
     Step("by_month", "dimensionless", "sum_month(month_weight * rates)", ""),
     Step("shaped", "dimensionless", "sum_hour(weight * hourly * by_month)", ""),
     Step("peak", "dimensionless", "max_hour(hourly)", ""),
     Step("period_load", "dimensionless", "period_hours * hourly", ""),
     Step("period_peak", "dimensionless", "max_hour(period_load)", ""),
     Step("billed", "dimensionless", "sum_period(period_charge * period_peak)", ""),
     Step("total", "dimensionless",
          "pick + shaped + peak + billed + eq + ne + gt + choose(e, two, a, 0)", "")])
SPECIAL = np.array([0.0, -0.0, 1.0, 2.0, -1.0, np.nan, np.inf, -np.inf])


def _column(rng: np.random.Generator, mode: str, n: int):
    v = rng.uniform(-2.5, 2.5, n)
    special = rng.uniform(size=n) < 0.3
    v[special] = rng.choice(SPECIAL, special.sum())
    if mode == "int rows":
        return rng.integers(-2, 3, n)
    return v if mode == "rows" else float(v[0]) if mode == "scalar" else np.nan


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 30), st.integers(0, 2**32 - 1), st.integers(-3, 2),
       st.lists(st.sampled_from(["rows", "int rows", "scalar", "nan"]), min_size=3, max_size=3),
       st.booleans(), st.integers(1, 3), st.integers(1, 4), st.integers(1, 2),
       st.integers(1, 7), st.sampled_from([None, ["total"], ["ge", "shaped", "pick"],
                                            ["hourly", "period_load", "by_month", "peak"]]))
def test_every_construct(n, seed, level, modes, profiled, months, hours, periods, block,
                         outputs):
    rng = np.random.default_rng(seed)
    x: dict = {name: _column(rng, mode, n) for name, mode in zip("abc", modes, strict=True)}
    if "rows" not in modes and "int rows" not in modes:
        x["a"] = _column(rng, "rows", n)  # one input by row at least
    if outputs and "hourly" in outputs:  # the profile steps read c, not a or b
        x["c"] = _column(rng, "rows", n)
    x["e"] = level
    profiles = {"load": (1, hours), "weight": (1, hours), "rates": (months, hours),
                "month_weight": (months, 1), "period_hours": (periods, hours),
                "period_charge": (periods, 1)}
    for name, shape in profiles.items():
        x[name] = rng.uniform(0, 1, shape) if profiled else np.nan
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused, "MIN_BLOCK", block)
        mp.setattr(fused, "BLOCK_BYTES", 0)
        ev = Evaluator(EVERYTHING, outputs=outputs)
        try:
            expected = Evaluator(EVERYTHING, outputs=outputs, fused=False)(x)
        except ValueError as exc:  # integers to a negative integer power: numpy refuses both
            with pytest.raises(type(exc), match=str(exc)):
                ev(x)
            return
        assert ev._fused.plan(x) is not None
        _same(ev(x), expected)


def test_the_buffers_kept_between_calls_are_bounded():
    rng = np.random.default_rng(6)
    x = {name: _values(name, 3000, rng) for name in MODEL.inputs if name not in PROFILES}
    x.update({e.name: 0 for e in MODEL.enums.values()}, **_profiles(rng, False, False, 1, 24, 1))
    ev = Evaluator(MODEL, outputs=["cost_per_mtok_total"])
    expected = ev.reference(x)["cost_per_mtok_total"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused, "POOL_BYTES", 10_000)  # less than one set (3,000 rows x 8 bytes)
        for _ in range(3):
            np.testing.assert_array_equal(ev(x)["cost_per_mtok_total"], expected)
            assert 0 <= fused._POOL._bytes <= 10_000
    for _ in range(3):  # kept now, and reused: one set for this plan
        np.testing.assert_array_equal(ev(x)["cost_per_mtok_total"], expected)
    plan, _ = ev._fused.plan(x)
    assert len(fused._POOL._sets[plan]) == 1 and fused._POOL._bytes >= 3000 * 8


def test_threads_sharing_an_evaluator_each_get_their_own_buffers():
    # the service prices in threads: one evaluator, one plan, calls at once on other data
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(8)
    batches = []
    for _ in range(8):
        x = {name: _values(name, 500, rng) for name in MODEL.inputs if name not in PROFILES}
        x.update({e.name: 0 for e in MODEL.enums.values()},
                 **_profiles(rng, True, True, 12, 48, 2), electricity_pricing=1, load_basis=1)
        batches.append(x)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fused, "MIN_BLOCK", 7)  # many blocks a call: threads switch inside one
        mp.setattr(fused, "BLOCK_BYTES", 0)
        ev = Evaluator(MODEL, outputs=PRUNED)
        expected = [Evaluator(MODEL, outputs=PRUNED, fused=False)(x) for x in batches]
        with ThreadPoolExecutor(4) as pool:
            for _ in range(3):
                for got, want in zip(pool.map(ev, batches), expected, strict=True):
                    _same(got, want)
        assert len({id(ev._fused.plan(x)[0]) for x in batches}) == 1  # one plan for all
