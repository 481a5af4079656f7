"""Electricity as it is billed: hourly rates, seasons, weekend days, demand and fixed charges,
and the load shape, checked against hand arithmetic.

The base system makes the arithmetic short: 1,000 W at the chip boundary, 1,000 token/s, so
one accelerator-hour draws 1 kWh and serves 3.6 million tokens at full load; energy per
million tokens is then (USD/kWh) / 3.6.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from costmodel.decisions.sensitivity.base import Base
from costmodel.model.chain import price
from costmodel.model.inputs import InputError, validate_scenario

MTOK_PER_HOUR = 3.6  # 1,000 token/s x 3,600 s/h / 10^6
HOURS_A_YEAR = 8760


def _q(value: float, unit: str = "USD/kWh") -> str:
    return f"{value} {unit}"


def base(**more) -> dict:
    return {"name": "tou", "accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
            "operating_point": {"throughput": "1000 token/s"}, "idle_power": 0, **more}


def priced(data: dict):
    return price(validate_scenario(data)).values


def eight_dear_sixteen_cheap() -> dict:
    return {"hourly": [_q(0.20)] * 8 + [_q(0.08)] * 16}


# ---- energy by the hour ---------------------------------------------------------------------

@pytest.mark.parametrize("utilisation,idle", [(1.0, 0.0), (0.5, 0.3)])
def test_a_flat_load_on_eight_dear_and_sixteen_cheap_hours_pays_the_day_average(utilisation,
                                                                                idle):
    # (8 x 0.20 + 16 x 0.08) / 24 = 2.88 / 24 = 0.12 USD/kWh, whatever the flat utilisation
    tariff = priced(base(electricity={"tariff": eight_dear_sixteen_cheap()},
                         utilisation=utilisation, idle_power=idle))
    flat = priced(base(electricity={"price": "0.12 USD/kWh"}, utilisation=utilisation,
                       idle_power=idle))
    assert tariff["electricity_effective_price"] == pytest.approx(0.12, rel=1e-12)
    assert tariff["cost_per_mtok_energy"] == pytest.approx(flat["cost_per_mtok_energy"],
                                                           rel=1e-12)
    load_factor = utilisation + (1 - utilisation) * idle
    assert tariff["cost_per_mtok_energy"] == pytest.approx(
        0.12 * load_factor / (utilisation * MTOK_PER_HOUR), rel=1e-12)


def test_serving_only_the_sixteen_cheap_hours_with_no_idle_power_pays_the_cheap_rate():
    v = priced(base(electricity={"tariff": eight_dear_sixteen_cheap()},
                    load={"hourly": [0] * 8 + [1] * 16}))
    assert v["utilisation_served"] == pytest.approx(16 / 24, rel=1e-12)
    assert v["electricity_effective_price"] == pytest.approx(0.08, rel=1e-12)
    # 1 kWh each serving hour over 3.6 Mtok: 0.08 / 3.6 per Mtok
    assert v["cost_per_mtok_energy"] == pytest.approx(0.08 / MTOK_PER_HOUR, rel=1e-12)
    assert v["tokens_per_hour"] == pytest.approx(16 / 24 * 3.6e6, rel=1e-12)


def test_idle_power_in_the_dear_hours_is_paid_at_the_dear_rate():
    # serving the 16 cheap hours, idling at 25% in the 8 dear ones: per day 16 kWh x 0.08 +
    # 8 x 0.25 kWh x 0.20 = 1.28 + 0.40 = 1.68 USD for 16 x 3.6 Mtok
    v = priced(base(electricity={"tariff": eight_dear_sixteen_cheap()},
                    load={"hourly": [0] * 8 + [1] * 16}, idle_power=0.25))
    assert v["cost_per_mtok_energy"] == pytest.approx(1.68 / (16 * MTOK_PER_HOUR), rel=1e-12)
    assert v["electricity_effective_price"] == pytest.approx(1.68 / 18, rel=1e-12)


def test_weekend_days_weigh_two_sevenths():
    # weekdays 0.10 all day, weekend days 0.03: 5/7 x 0.10 + 2/7 x 0.03 = 0.08 USD/kWh
    v = priced(base(electricity={"tariff": {"hourly": [_q(0.10)] * 24,
                                            "weekend": [_q(0.03)] * 24}}))
    assert v["electricity_effective_price"] == pytest.approx(5 / 7 * 0.10 + 2 / 7 * 0.03,
                                                             rel=1e-12)
    assert v["electricity_effective_price"] == pytest.approx(0.08, rel=1e-12)


def test_a_load_that_rests_at_weekends():
    # weekdays at full load, weekends idle (idle power 0): utilisation 5/7, and only weekday
    # rates are paid
    v = priced(base(electricity={"tariff": {"hourly": [_q(0.10)] * 24,
                                            "weekend": [_q(0.03)] * 24}},
                    load={"hourly": [1] * 24, "weekend": [0] * 24}))
    assert v["utilisation_served"] == pytest.approx(5 / 7, rel=1e-12)
    assert v["electricity_effective_price"] == pytest.approx(0.10, rel=1e-12)


def test_seasons_weigh_their_days():
    # 0.30 in June, July and August (92 days), 0.10 the other 273 days
    v = priced(base(electricity={"tariff": {
        "hourly": {"value": [0.10] * 24, "unit": "USD/kWh"},
        "seasons": [{"name": "summer", "months": [6, 7, 8],
                     "hourly": {"value": [0.30] * 24, "unit": "USD/kWh"}}]}}))
    assert v["electricity_effective_price"] == pytest.approx((92 * 0.30 + 273 * 0.10) / 365,
                                                             rel=1e-12)


def test_a_tariff_flat_at_the_default_price_gives_the_default_figures():
    flat = priced(base())  # EIA May 2026 US industrial average, 8.71 cents/kWh
    tariff = priced(base(electricity={"tariff": {"hourly": [_q(0.0871)] * 24}}))
    for name in ("cost_per_mtok_energy", "cost_per_mtok_total", "price_per_mtok_output",
                 "cost_per_hour"):
        assert tariff[name] == pytest.approx(flat[name], rel=1e-12), name


# ---- demand and fixed charges ---------------------------------------------------------------

def facility_3kw(**more) -> dict:
    # an all-in power of 2,000 W at the rack boundary x PUE 1.5 = 3 kW at the facility meter
    data = base(**more)
    data["accelerator"] = {**data["accelerator"], "all_in_power": "2000 W"}
    data["facility"] = {"pue": 1.5}
    return data


def test_a_demand_charge_bills_the_monthly_peak_at_the_facility_meter():
    # 10 USD/kW-month x 3 kW x 12 months / 8,760 h, whatever boundary energy is counted at
    v = priced(facility_3kw(electricity={"tariff": {"hourly": [_q(0)] * 24,
                                                    "demand_charge": "10 USD/kW/month"}}))
    assert v["power_facility"] == pytest.approx(3000, rel=1e-12)
    assert v["demand_charge_per_hour"] == pytest.approx(10 * 3 * 12 / HOURS_A_YEAR, rel=1e-12)
    assert v["cost_per_mtok_energy"] == pytest.approx(10 * 3 * 12 / HOURS_A_YEAR
                                                      / MTOK_PER_HOUR, rel=1e-12)


def test_the_demand_peak_is_the_busiest_hour_and_seasons_bill_their_own_rate():
    # busiest hour serves 90% and idles at 20% the rest: 0.9 + 0.1 x 0.2 = 0.92 of 3 kW;
    # 12 USD/kW-month in the four months Jun-Sep, 10 in the other eight: 128 USD/kW-year
    load = [0.5] * 12 + [0.9] * 12
    v = priced(facility_3kw(
        idle_power=0.2, load={"hourly": load},
        electricity={"tariff": {"hourly": [_q(0)] * 24, "demand_charge": "10 USD/kW/month",
                                "seasons": [{"months": [6, 7, 8, 9],
                                             "hourly": [_q(0)] * 24,
                                             "demand_charge": "12 USD/kW/month"}]}}))
    assert v["peak_load_factor"] == pytest.approx(0.92, rel=1e-12)
    assert v["demand_charge_per_hour"] == pytest.approx(0.92 * 3 * 128 / HOURS_A_YEAR,
                                                        rel=1e-12)


def test_fixed_charges_are_spread_over_the_site():
    # 876 USD/month x 12 / 8,760 h = 1.2 USD/h for the site: one rack of 4 nodes x 8
    # accelerators (the defaults) by default, or the accelerators given
    tariff = {"hourly": [_q(0)] * 24, "fixed_charge": "876 USD/month"}
    rack = priced(base(electricity={"tariff": tariff}))
    assert rack["fixed_charge_per_hour"] == pytest.approx(1.2 / 32, rel=1e-12)
    assert rack["cost_per_mtok_energy"] == pytest.approx(1.2 / 32 / MTOK_PER_HOUR, rel=1e-12)
    site = priced(base(electricity={"tariff": tariff, "site_accelerators": 100}))
    assert site["fixed_charge_per_hour"] == pytest.approx(1.2 / 100, rel=1e-12)


def test_the_bill_per_kwh_counts_every_charge():
    # energy 0.12 USD/kWh on 1 kWh/h, plus 1.2 / 32 USD/h fixed: per kWh drawn
    v = priced(base(electricity={"tariff": {**eight_dear_sixteen_cheap(),
                                            "fixed_charge": "876 USD/month"}}))
    assert v["electricity_price_all_in"] == pytest.approx(0.12 + 1.2 / 32, rel=1e-12)


# ---- an OpenEI tariff ---------------------------------------------------------------------

def test_an_openei_tariff_with_weekday_and_weekend_schedules():
    from sources.test_openei import sample

    from costmodel.sources.openei import read_openei
    table = read_openei(sample())
    v = priced(base(electricity={"tariff": table}))
    # by hand from the sample's schedules: winter (243 days) weekdays 0.08, 16:00-21:00
    # 0.16, weekends 0.08; summer Jun-Sep (122 days) weekdays 0.10, 16:00-21:00 0.28,
    # weekends 0.10
    winter = 5 / 7 * (19 * 0.08 + 5 * 0.16) / 24 + 2 / 7 * 0.08
    summer = 5 / 7 * (19 * 0.10 + 5 * 0.28) / 24 + 2 / 7 * 0.10
    assert v["electricity_effective_price"] == pytest.approx(
        (243 * winter + 122 * summer) / 365, rel=1e-12)
    # demand 4 USD/kW-month in 8 months and 10 in 4: 72 USD/kW-year on the facility power
    assert v["demand_charge_per_hour"] == pytest.approx(
        v["power_facility"] / 1000 * 72 / HOURS_A_YEAR, rel=1e-12)
    # 1.5 USD/day x 365/12 = 45.625 USD/month over the 32 accelerators of a rack
    assert v["fixed_charge_per_hour"] == pytest.approx(45.625 * 12 / HOURS_A_YEAR / 32,
                                                       rel=1e-12)


# ---- the tariff's knobs, for sensitivity and Monte Carlo ------------------------------------

def test_scale_and_shift_move_every_rate():
    # x1.5 then + 0.01: (0.12 x 1.5 + 0.01) on a flat load
    v = priced(base(electricity={"tariff": {**eight_dear_sixteen_cheap(), "scale": 1.5,
                                            "shift": "1 cent/kWh"}}))
    assert v["electricity_effective_price"] == pytest.approx(0.12 * 1.5 + 0.01, rel=1e-12)


def test_an_analysis_varies_the_tariffs_scale_in_one_batch():
    scenario = validate_scenario(base(electricity={"tariff": eight_dear_sixteen_cheap()},
                                      load={"hourly": [0] * 8 + [1] * 16}))
    b = Base(scenario, "cost_per_mtok_energy")
    out = b.evaluate({"electricity_tariff_scale": np.array([1.0, 2.0, 0.5])}, 3)
    assert out == pytest.approx([0.08 / 3.6, 0.16 / 3.6, 0.04 / 3.6], rel=1e-12)


# ---- refusals, each naming its field ----------------------------------------------------------

@pytest.mark.parametrize("change,path,fragment", [
    ({"electricity": {"price": "0.1 USD/kWh", "tariff": eight_dear_sixteen_cheap()}},
     "electricity.price", "not both"),
    ({"electricity": {"tariff": {"hourly": [_q(0.1)] * 23}}}, "electricity.tariff.hourly",
     "must have at least 24 items, got 23"),
    ({"electricity": {"tariff": {"hourly": [_q(0.1)] * 3 + ["-0.1 USD/kWh"] + [_q(0.1)] * 20}}},
     "electricity.tariff.hourly[3]", "negative"),
    ({"electricity": {"tariff": {"hourly": ["0.1 USD/kW/month"] * 24}}},
     "electricity.tariff.hourly[0]", ""),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "seasons": [
        {"months": [1, 2], "hourly": [_q(0.1)] * 24},
        {"months": [2], "hourly": [_q(0.1)] * 24}]}}},
     "electricity.tariff", "month 2 is in seasons[0] and seasons[1]"),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "seasons": [
        {"months": [13], "hourly": [_q(0.1)] * 24}]}}},
     "electricity.tariff.seasons[0].months[0]", ""),
    ({"electricity": {"price": "0.1 USD/kWh", "site_accelerators": 10}},
     "electricity.site_accelerators", "tariff"),
    ({"load": {"hourly": [0.5] * 23 + [1.5]}}, "load.hourly[23]", "at most 1"),
    ({"load": {"hourly": [0] * 24}}, "load.hourly", "no hour"),
    ({"load": {"hourly": [0.5] * 24}, "utilisation": 0.7}, "utilisation",
     "differs from the mean of load.hourly (0.5"),
])
def test_refusals_name_the_field(change, path, fragment):
    with pytest.raises(InputError) as info:
        validate_scenario(base(**change))
    paths = {p: m for p, m in info.value.errors}
    assert path in paths, info.value.errors
    assert fragment in paths[path]


def test_utilisation_and_load_may_both_be_given_when_they_agree():
    v = priced(base(load={"hourly": [0.5] * 24}, utilisation=0.5))
    assert v["utilisation_served"] == pytest.approx(0.5, rel=1e-12)


def test_the_tariff_round_trips_through_its_mapping():
    from sources.test_openei import sample

    from costmodel.sources.openei import read_openei
    s = validate_scenario(base(electricity={"tariff": read_openei(sample())},
                               load={"hourly": [0.4] * 24, "weekend": [0.9] * 24}))
    again = validate_scenario(s.to_data())
    a, b = s.to_inputs(), again.to_inputs()
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, b[name]), name
        else:
            assert value == b[name] or (math.isnan(value) and math.isnan(b[name])), name


# ---- what if the flexible share of the load moved to the cheapest hours ---------------------

def _shift(share: float, **more):
    from costmodel import app
    from costmodel.app.pricing import price_loaded
    from costmodel.sources.scenario_file import build_scenario
    loaded = build_scenario(base(electricity={"tariff": eight_dear_sixteen_cheap()}, **more))
    return app.shift_flexible(price_loaded(loaded), share)


def test_moving_all_of_a_flat_half_load_into_the_cheap_hours():
    # 12 serving hours a day fill the cheapest hours first, earliest first: 08:00-20:00
    shift = _shift(1.0, load={"hourly": [0.5] * 24})
    assert shift.after.scenario.load.hourly == [0.0] * 8 + [1.0] * 12 + [0.0] * 4
    assert shift.after.values["cost_per_mtok_energy"] == pytest.approx(0.08 / MTOK_PER_HOUR,
                                                                       rel=1e-12)
    assert shift.before.values["cost_per_mtok_energy"] == pytest.approx(0.12 / MTOK_PER_HOUR,
                                                                        rel=1e-12)
    assert shift.after.values["tokens_per_hour"] == pytest.approx(
        shift.before.values["tokens_per_hour"], rel=1e-12)  # the same tokens


def test_moving_half_of_a_flat_half_load():
    # 0.25 stays in every hour; 6 hours move, filling 08:00-16:00 (0.75 of room each) to 1:
    # a day pays 8 x 0.25 x 0.20 + 8 x 1 x 0.08 + 8 x 0.25 x 0.08 = 1.2 USD for 12 kWh
    shift = _shift(0.5, load={"hourly": [0.5] * 24})
    assert shift.after.scenario.load.hourly == pytest.approx([0.25] * 8 + [1.0] * 8
                                                             + [0.25] * 8)
    assert shift.after.values["electricity_effective_price"] == pytest.approx(0.1, rel=1e-12)
    assert shift.to_json()["change"]["value"] == pytest.approx((0.1 - 0.12) / MTOK_PER_HOUR,
                                                               rel=1e-9)


def test_the_what_if_needs_a_tariff():
    from costmodel import app
    from costmodel.app.pricing import price_loaded
    from costmodel.sources.scenario_file import build_scenario
    priced = price_loaded(build_scenario(base()))
    with pytest.raises(InputError, match="needs a tariff"):
        app.shift_flexible(priced, 0.3)


def test_a_batch_on_a_tariff_equals_the_rows_priced_one_by_one():
    # numeric rows in the fast path (the tariff's scale and shift, idle power), a row that
    # changes the load shape (a group of its own), and two that fail
    from costmodel.app import price as price_one
    from costmodel.app.batch import price_batch
    from costmodel.app.context import LocalContext
    from costmodel.app.specs import InlineScenario, ScenarioSpec, overrides_from_mapping
    data = base(electricity={"tariff": {**eight_dear_sixteen_cheap(),
                                        "demand_charge": "10 USD/kW/month"}},
                load={"hourly": [0] * 8 + [1] * 16})
    rows = [{"electricity.tariff.scale": 2}, {"electricity.tariff.shift": "1 cent/kWh"},
            {"idle_power": 0.2}, {"load.hourly": [0.5] * 24},
            {"electricity.tariff.scale": -1}, {}, {"electricity.price": "0.1 USD/kWh"}]
    ctx = LocalContext()
    batch = price_batch(ctx, ScenarioSpec(InlineScenario(data)), rows,
                        ["cost_per_mtok_energy", "cost_per_mtok_total"])
    got = batch.to_json()["columns"]
    assert [e.row for e in batch.errors] == [4, 6]
    for i, row in enumerate(rows):
        if i in (4, 6):
            assert math.isnan(got["cost_per_mtok_total"]["values"][i])  # null in JSON
            continue
        one = price_one(ctx, ScenarioSpec(InlineScenario(data), overrides_from_mapping(row)))
        for name in ("cost_per_mtok_energy", "cost_per_mtok_total"):
            assert got[name]["values"][i] == pytest.approx(one.result.values[name],
                                                           rel=1e-12), (i, name)
    # by hand, row 0: twice the cheap rate, plus the demand charge on the facility power at
    # full load (the default node and rack: ((4 x (8 x 1000 + 2400) / 0.94 + 1500 + 500)
    # / 0.97 / 32 W) x PUE 1.3) x 10 USD/kW-month x 12 / 8,760 h, over 16/24 of 3.6 Mtok an hour
    facility_kw = (4 * (8 * 1000 + 2400) / 0.94 + 1500 + 500) / 0.97 / 32 * 1.3 / 1000
    demand = facility_kw * 10 * 12 / HOURS_A_YEAR
    assert got["cost_per_mtok_energy"]["values"][0] == pytest.approx(
        (2 * 0.08 * 16 / 24 + demand) / (16 / 24 * MTOK_PER_HOUR), rel=1e-12)


def test_an_overflow_with_a_tariff_names_its_input():
    from costmodel.model.errors import NonFiniteResult
    from costmodel.model.results import check_finite
    # (1e-308 token/s is below the throughput's bound, 1e-6: set past validation, as a
    # calculation could reach it)
    scenario = validate_scenario(base(operating_point={"throughput": "1000 token/s"},
                                      electricity={"tariff": eight_dear_sixteen_cheap()}))
    # (on a copy: validated sections are shared between scenarios of equal content and never
    # changed, see costmodel.model.inputs._SECTION_CACHE; changed in place, the next test
    # to validate this operating point would be priced at 1e-308 token/s)
    scenario.operating_point = scenario.operating_point.model_copy(
        update={"throughput": 1e-308})
    r = price(scenario)
    with pytest.raises(NonFiniteResult) as info:
        check_finite(r)
    assert [p for p, _ in info.value.errors] == ["operating_point.throughput"]


def test_a_catalog_tariff_named_in_an_override_is_the_files_own():
    """`--set electricity.tariff=<key>` (an API override) reads the catalog tariff as the
    scenario's own `electricity = { tariff = "<key>" }` does: the same figures, cited."""
    from costmodel import app
    base = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
    inline = app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(
        {**base, "electricity": {"tariff": "illustrative-tou-peak-16-21"}}))).result
    overridden = app.price(app.LocalContext(), app.ScenarioSpec(
        app.InlineScenario(base),
        app.overrides_from_mapping({"electricity.tariff": "illustrative-tou-peak-16-21"}))).result
    for name in inline.values:  # (NaN where no emissions are given: None)
        assert overridden.value(name) == inline.value(name), name
    assert overridden.provenance["electricity.tariff"].startswith(
        "catalog tariff 'illustrative-tou-peak-16-21'")
