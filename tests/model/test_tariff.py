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


# ---- time-of-use demand charges: a demand period billed on its own busiest hour --------------

ON_PEAK = list(range(12, 18))  # 12:00-18:00


def two_charges(load: dict, **period) -> dict:
    """3 kW at the facility meter (the rate's 2,000 W x PUE 1.5), no energy charge: an
    all-hours demand charge of 10 USD/kW-month, and 20 on the weekday busiest hour within
    12:00-18:00 (none at weekends)."""
    on_peak = {"name": "on-peak", "demand_charge": "20 USD/kW/month", "hours": ON_PEAK,
               "weekend_hours": [], **period}
    return facility_3kw(load=load, electricity={"tariff": {
        "hourly": [_q(0)] * 24, "demand_charge": "10 USD/kW/month",
        "demand_periods": [on_peak]}})


# the same mean (0.6: (18 x 0.5 + 6 x 0.9) / 24), the busiest hours in or out of 12:00-18:00
BUSY_ON_PEAK = [0.5] * 12 + [0.9] * 6 + [0.5] * 6
BUSY_AT_NIGHT = [0.9] * 6 + [0.5] * 18


def test_a_demand_period_bills_the_busiest_hour_within_its_hours():
    busy = priced(two_charges({"hourly": BUSY_ON_PEAK}))
    night = priced(two_charges({"hourly": BUSY_AT_NIGHT}))
    # busiest 12:00-18:00: 3 kW x (10 x 0.9 + 20 x 0.9) = 81 USD a month, x 12 / 8,760 h
    assert busy["demand_charge_per_hour"] == pytest.approx(81 * 12 / HOURS_A_YEAR, rel=1e-12)
    assert busy["demand_charge_per_hour"] == pytest.approx(0.110958904109589, rel=1e-12)
    # busiest at night: the all-hours charge still bills 0.9, the on-peak one 0.5:
    # 3 x (10 x 0.9 + 20 x 0.5) = 57 USD a month
    assert night["demand_charge_per_hour"] == pytest.approx(57 * 12 / HOURS_A_YEAR, rel=1e-12)
    assert night["demand_charge_per_hour"] == pytest.approx(0.0780821917808219, rel=1e-12)
    # the same tokens: 0.6 x 1,000 token/s x 3,600 s = 2.16 Mtok an hour; per Mtok the
    # on-peak hour costs 3 x 20 x (0.9 - 0.5) x 12 / 8,760 / 2.16 = 0.0152207 USD more
    for v in (busy, night):
        assert v["tokens_per_hour"] == pytest.approx(2.16e6, rel=1e-12)
    assert busy["cost_per_mtok_energy"] == pytest.approx(81 * 12 / HOURS_A_YEAR / 2.16,
                                                         rel=1e-12)
    assert busy["cost_per_mtok_energy"] - night["cost_per_mtok_energy"] == pytest.approx(
        3 * 20 * 0.4 * 12 / HOURS_A_YEAR / 2.16, rel=1e-9)
    assert busy["cost_per_mtok_energy"] - night["cost_per_mtok_energy"] == pytest.approx(
        0.0152207001522070, rel=1e-9)
    assert busy["cost_per_mtok_total"] - night["cost_per_mtok_total"] == pytest.approx(
        0.0152207001522070, rel=1e-9)


def test_weekend_hours_outside_the_period_are_not_billed_on_it():
    # flat 0.5 on weekdays, 0.9 from 12:00 to 18:00 at weekends: the all-hours charge bills
    # 0.9, the weekday on-peak charge 0.5: 3 x (10 x 0.9 + 20 x 0.5) = 57 USD a month
    load = {"hourly": [0.5] * 24, "weekend": [0.5] * 12 + [0.9] * 6 + [0.5] * 6}
    v = priced(two_charges(load))
    assert v["demand_charge_per_hour"] == pytest.approx(57 * 12 / HOURS_A_YEAR, rel=1e-12)
    # weekend hours as the weekdays' (no weekend_hours): the weekend's 0.9 is billed too
    every_day = two_charges(load)
    del every_day["electricity"]["tariff"]["demand_periods"][0]["weekend_hours"]
    v = priced(every_day)
    assert v["demand_charge_per_hour"] == pytest.approx(81 * 12 / HOURS_A_YEAR, rel=1e-12)


def test_a_demand_period_bills_its_months_only_and_idle_power_counts():
    # idle at 20% outside serving: the on-peak hour draws 0.9 + 0.1 x 0.2 = 0.92, billed in
    # the four months Jun-Sep: 3 x (10 x 0.92 x 12 + 20 x 0.92 x 4) = 552 USD a year
    v = priced({**two_charges({"hourly": BUSY_ON_PEAK}, months=[6, 7, 8, 9]),
                "idle_power": 0.2})
    assert v["demand_charge_per_hour"] == pytest.approx(3 * 0.92 * (10 * 12 + 20 * 4)
                                                        / HOURS_A_YEAR, rel=1e-12)
    assert v["demand_charge_per_hour"] == pytest.approx(552 / HOURS_A_YEAR, rel=1e-12)


def test_a_demand_period_at_a_utilisation_bills_its_load_in_every_hour():
    # no load shape: 60% serving and no idle power in every hour, 3 x (10 + 20) x 0.6 = 54
    data = two_charges({"hourly": BUSY_ON_PEAK})
    del data["load"]
    v = priced({**data, "utilisation": 0.6})
    assert v["demand_charge_per_hour"] == pytest.approx(54 * 12 / HOURS_A_YEAR, rel=1e-12)


def test_a_period_that_charges_nothing_changes_no_bit():
    without = facility_3kw(load={"hourly": BUSY_ON_PEAK}, electricity={"tariff": {
        "hourly": [_q(0.1)] * 24, "demand_charge": "10 USD/kW/month"}})
    free = facility_3kw(load={"hourly": BUSY_ON_PEAK}, electricity={"tariff": {
        "hourly": [_q(0.1)] * 24, "demand_charge": "10 USD/kW/month", "demand_periods": [
            {"demand_charge": "0 USD/kW/month", "hours": ON_PEAK}]}})
    a, b = priced(without), priced(free)
    assert a["demand_charge_per_hour"] == pytest.approx(3 * 10 * 0.9 * 12 / HOURS_A_YEAR,
                                                        rel=1e-12)
    for name in a:
        assert a[name] == b[name] or (math.isnan(a[name]) and math.isnan(b[name])), name


def test_the_disclosure_names_each_period_and_its_busiest_hour():
    r = price(validate_scenario(two_charges({"hourly": BUSY_AT_NIGHT}, months=[6, 7, 8, 9])))
    t = r.disclosure()["electricity"]["tariff"]
    assert t["demand_periods"] == [{
        "name": "on-peak", "demand_charge": {"value": 20.0, "unit": "USD/kW/month"},
        "hours": ON_PEAK, "weekend_hours": [], "months": [6, 7, 8, 9],
        "peak_load_factor": pytest.approx(0.5, rel=1e-12)}]
    assert t["weekend_rates"] is False  # weekend hours of a period are not weekend rates
    from costmodel.render.report import electricity_text
    said = electricity_text(r.disclosure()["electricity"])
    assert ("demand charge 10.00 USD per kW per month on the month's busiest hour, on-peak "
            "demand charge 20.00 USD per kW per month on the busiest hour of weekdays "
            "12:00-18:00 in Jun-Sep") in said


def test_an_analysis_of_a_tariff_with_periods_in_one_batch():
    # idle power moves the on-peak hour's power: 0.9 + 0.1 x idle, a batch of three
    scenario = validate_scenario(two_charges({"hourly": BUSY_ON_PEAK}))
    b = Base(scenario, "demand_charge_per_hour")
    idle = np.array([0.0, 0.5, 1.0])
    out = b.evaluate({"idle_power": idle}, 3)
    assert out == pytest.approx(3 * 30 * (0.9 + 0.1 * idle) * 12 / HOURS_A_YEAR, rel=1e-12)


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


def test_sce_gs2_tou_b_bills_by_hand():
    """The real SCE GS-2 TOU B record (tests/data/openei/sce_gs2_tou_b.json): energy by
    season and hour, a flat demand charge of 13.2 USD/kW every month, and Jun-Sep weekday
    time-of-use demand charges of 5.3 USD/kW (08:00-12:00, 18:00-23:00) and 18.11 USD/kW
    (12:00-18:00); 259.2 USD/month fixed. One accelerator draws 3 kW at the facility meter
    (energy counted there too), no idle power; a night-heavy load on weekdays (1.0 at
    00:00-08:00 and 23:00, 0.6 08:00-12:00 and 18:00-23:00, 0.3 12:00-18:00) and full load
    at weekends; a rack of 32 accelerators shares the fixed charge (8.1 USD each)."""
    from sources.test_openei import SCE
    from sources.test_openei import load as load_json

    from costmodel.sources.openei import read_openei
    weekday = [1.0] * 8 + [0.6] * 4 + [0.3] * 6 + [0.6] * 5 + [1.0]
    data = facility_3kw(electricity={"tariff": read_openei(load_json(SCE))},
                        load={"hourly": weekday, "weekend": [1.0] * 24},
                        power={"boundary": "facility"})
    v = priced(data)
    # a day's energy [USD] at 3 kW: winter (Oct-May) weekday 0.0712 at 00-08 and 21-24,
    # 0.09368 at 08-21: 8 x 3 x 0.0712 + 4 x 1.8 x 0.09368 + 6 x 0.9 x 0.09368
    # + 3 x 1.8 x 0.09368 + 2 x 1.8 x 0.0712 + 3 x 0.0712 = 3.86496; weekend 72 x 0.0712 =
    # 5.1264. Summer (Jun-Sep) weekday 0.066, 0.08888 at 08-12 and 18-23, 0.1355 at 12-18:
    # 24 x 0.066 + 4 x 1.8 x 0.08888 + 6 x 0.9 x 0.1355 + 5 x 1.8 x 0.08888 + 3 x 0.066
    # = 3.953556; weekend 72 x 0.066 = 4.752
    winter_day = (5 * 3.86496 + 2 * 5.1264) / 7  # weekdays 5/7 of the days
    summer_day = (5 * 3.953556 + 2 * 4.752) / 7
    # demand [USD/month]: the busiest hour is 1.0 (at night): 13.2 x 3 x 1.0 = 39.6 every
    # month; Jun-Sep add 5.3 x 3 x 0.6 = 9.54 and 18.11 x 3 x 0.3 = 16.299 (weekday hours
    # only: the weekend's full load in those hours is not billed on them)
    january = 31 * winter_day + 39.6 + 8.1
    july = 31 * summer_day + 39.6 + 9.54 + 16.299 + 8.1
    assert january == pytest.approx(178.686514285714, rel=1e-12)
    assert july == pytest.approx(203.171168571429, rel=1e-12)
    assert 32 * july == pytest.approx(6501.47739428571, rel=1e-12)  # a rack's July bill
    # the year: 243 winter days and 122 summer days, 12 flat demand and fixed charges,
    # and 4 months of time-of-use demand
    year = (243 * winter_day + 122 * summer_day + 12 * (39.6 + 8.1)
            + 4 * (9.54 + 16.299))
    assert v["demand_charge_per_hour"] == pytest.approx((12 * 39.6 + 4 * 25.839)
                                                        / HOURS_A_YEAR, rel=1e-12)
    assert v["fixed_charge_per_hour"] == pytest.approx(8.1 * 12 / HOURS_A_YEAR, rel=1e-12)
    assert v["electricity_cost_per_hour"] == pytest.approx(year / HOURS_A_YEAR, rel=1e-12)
    assert year == pytest.approx(2212.68656571429, rel=1e-12)  # USD a year, an accelerator
    assert v["electricity_cost_per_hour"] == pytest.approx(0.252589790606654, rel=1e-12)
    # per million tokens: serving (16.2 / 24) of weekday hours and all weekend hours,
    # (5 x 0.675 + 2) / 7 of the year, at 3.6 Mtok an hour
    served = (5 * 16.2 / 24 + 2) / 7
    assert v["utilisation_served"] == pytest.approx(served, rel=1e-12)
    assert v["cost_per_mtok_energy"] == pytest.approx(year / HOURS_A_YEAR
                                                      / (served * MTOK_PER_HOUR), rel=1e-12)
    assert v["cost_per_mtok_energy"] == pytest.approx(0.0913761516406499, rel=1e-12)


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
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kW/month", "hours": [12, 13, 12]}]}}},
     "electricity.tariff.demand_periods[0].hours", "hours repeat: [12, 13, 12]"),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kW/month", "hours": [24]}]}}},
     "electricity.tariff.demand_periods[0].hours[0]", "at most 23"),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kW/month", "hours": []}]}}},
     "electricity.tariff.demand_periods[0].hours", "at least 1 item"),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kWh", "hours": [12]}]}}},
     "electricity.tariff.demand_periods[0].demand_charge", ""),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kW/month", "hours": [12], "months": [6, 6]}]}}},
     "electricity.tariff.demand_periods[0].months", "months repeat"),
    ({"electricity": {"tariff": {**eight_dear_sixteen_cheap(), "demand_periods": [
        {"demand_charge": "5 USD/kW/month", "hours": [True]}]}}},
     "electricity.tariff.demand_periods[0].hours[0]", "whole number"),
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


@pytest.mark.parametrize("record", ["sample", "sce"])
def test_the_tariff_round_trips_through_its_mapping(record):
    from sources.test_openei import SCE, sample
    from sources.test_openei import load as load_json

    from costmodel.sources.openei import read_openei
    data = sample() if record == "sample" else load_json(SCE)  # SCE: with demand periods
    s = validate_scenario(base(electricity={"tariff": read_openei(data)},
                               load={"hourly": [0.4] * 24, "weekend": [0.9] * 24}))
    assert len(s.electricity.tariff.demand_periods) == (0 if record == "sample" else 2)
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
    from costmodel.app.build import build_scenario
    from costmodel.app.pricing import price_loaded
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
    from costmodel.app.build import build_scenario
    from costmodel.app.pricing import price_loaded
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
