"""Time-of-use demand charges through POST /api/v1/price: a tariff's demand periods given
inline or by the catalog's SCE GS-2 TOU B key price what was derived by hand (the engine's
tests/model/test_tariff.py), the answer discloses each period with its busiest hour, and a
period's bad hours are refused with their path (RFC 9457, 422)."""
from __future__ import annotations

import pytest
from conftest import auth

API = "/api/v1"
HOURS_A_YEAR = 8760
# 3 kW at the facility meter (an all-in 2,000 W x PUE 1.5), 1,000 token/s, no idle power, no
# energy charge; 10 USD/kW-month on the month's busiest hour and 20 on the weekday busiest
# hour within 12:00-18:00
SYSTEM = {"accelerator": {"rated_power": "1000 W", "price": "30000 USD",
                          "all_in_power": "2000 W"},
          "operating_point": {"throughput": "1000 token/s"}, "idle_power": 0,
          "facility": {"pue": 1.5}}
ON_PEAK = {"name": "on-peak", "demand_charge": "20 USD/kW/month", "hours": list(range(12, 18)),
           "weekend_hours": []}


def two_charges(load: list[float]) -> dict:
    return {**SYSTEM, "name": "two demand charges", "load": {"hourly": load},
            "electricity": {"tariff": {"hourly": {"value": [0] * 24, "unit": "USD/kWh"},
                                       "demand_charge": "10 USD/kW/month",
                                       "demand_periods": [ON_PEAK]}}}


@pytest.fixture(scope="module")
def viewer(tokens) -> dict:
    return auth(tokens["viewer"])


def priced(client, viewer, scenario: dict) -> dict:
    resp = client.post(f"{API}/price", json={"scenario": scenario}, headers=viewer)
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def test_the_busiest_hour_in_and_out_of_the_on_peak_window(client, viewer):
    # the same mean (0.6), the busiest hours (0.9) in 12:00-18:00 or at night 00:00-06:00
    busy = priced(client, viewer, two_charges([0.5] * 12 + [0.9] * 6 + [0.5] * 6))
    night = priced(client, viewer, two_charges([0.9] * 6 + [0.5] * 18))
    # 3 kW x (10 x 0.9 + 20 x 0.9) = 81 USD a month; at night 3 x (10 x 0.9 + 20 x 0.5) = 57
    step = busy["steps"]["demand_charge_per_hour"]
    assert (step["value"], step["unit"]) == (pytest.approx(81 * 12 / HOURS_A_YEAR, rel=1e-12),
                                             "USD/h")
    assert "sum_period(electricity_tariff_demand_period_charge" in step["expression"]
    assert night["steps"]["demand_charge_per_hour"]["value"] == pytest.approx(
        57 * 12 / HOURS_A_YEAR, rel=1e-12)
    # per million tokens, over 0.6 x 3.6 Mtok an hour: the on-peak hour's 0.4 more of 3 kW
    # at 20 USD/kW-month costs 3 x 20 x 0.4 x 12 / 8,760 / 2.16 = 0.0152207 USD/Mtok
    more = busy["cost_per_mtok"]["energy"]["value"] - night["cost_per_mtok"]["energy"]["value"]
    assert more == pytest.approx(0.0152207001522070, rel=1e-9)
    (period,) = night["disclosure"]["electricity"]["tariff"]["demand_periods"]
    assert period == {"name": "on-peak",
                      "demand_charge": {"value": 20.0, "unit": "USD/kW/month"},
                      "hours": list(range(12, 18)), "weekend_hours": [],
                      "months": list(range(1, 13)),
                      "peak_load_factor": pytest.approx(0.5, rel=1e-12)}


def test_the_catalog_sce_tariff_prices_the_bill_derived_by_hand(client, viewer):
    # tests/model/test_tariff.py::test_sce_gs2_tou_b_bills_by_hand: the same system and load
    # on the record as imported, 2,212.69 USD a year an accelerator
    weekday = [1.0] * 8 + [0.6] * 4 + [0.3] * 6 + [0.6] * 5 + [1.0]
    answer = priced(client, viewer, {
        **SYSTEM, "power": {"boundary": "facility"},
        "load": {"hourly": weekday, "weekend": [1.0] * 24},
        "electricity": {"tariff": "urdb-2015-sce-gs2-tou-b"}})
    steps = answer["steps"]
    assert steps["electricity_cost_per_hour"]["value"] == pytest.approx(
        2212.68656571429 / HOURS_A_YEAR, rel=1e-12)
    # 12 x 13.2 x 3 x 1.0 + 4 x (5.3 x 3 x 0.6 + 18.11 x 3 x 0.3) = 578.556 USD a year
    assert steps["demand_charge_per_hour"]["value"] == pytest.approx(578.556 / HOURS_A_YEAR,
                                                                     rel=1e-12)
    periods = answer["disclosure"]["electricity"]["tariff"]["demand_periods"]
    assert [(p["name"], p["demand_charge"]["value"], p["months"], p["peak_load_factor"])
            for p in periods] == [("period 1", 5.3, [6, 7, 8, 9], pytest.approx(0.6)),
                                  ("period 2", 18.11, [6, 7, 8, 9], pytest.approx(0.3))]


@pytest.mark.parametrize("period,path,fragment", [
    ({**ON_PEAK, "hours": [12, 13, 12]}, "hours", "hours repeat: [12, 13, 12]"),
    ({**ON_PEAK, "hours": [12, True]}, "hours[1]", "whole number"),
    ({**ON_PEAK, "weekend_hours": [24]}, "weekend_hours[0]", "at most 23"),
    ({**ON_PEAK, "demand_charge": "20 USD/kWh"}, "demand_charge", "USD/kW/month"),
])
def test_bad_period_hours_are_refused_with_their_path(client, viewer, period, path, fragment):
    scenario = two_charges([0.5] * 24)
    scenario["electricity"]["tariff"]["demand_periods"] = [period]
    resp = client.post(f"{API}/price", json={"scenario": scenario}, headers=viewer)
    assert resp.status_code == 422 and resp.mimetype == "application/problem+json"
    errors = {e["path"]: e["message"] for e in resp.get_json()["errors"]}
    full = f"scenario.electricity.tariff.demand_periods[0].{path}"
    assert full in errors, errors
    assert fragment in errors[full]
